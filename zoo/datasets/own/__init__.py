"""Your own series from YAML, no plugin needed: ``kind: table`` (a long CSV/Parquet table) and
``kind: arrays`` (``.npz`` / ``.npy``). Both share :mod:`.options` (spec options and the task),
:mod:`.cells` (cell conversion, class lists) and :mod:`.assemble` (union time grid, targets,
split, normalisation); docs/own-data.md documents every option.
"""
