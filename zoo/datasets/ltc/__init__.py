"""The datasets of the LTC paper's experiments ([LTC] ``experiments_with_ltcs``;
docs/sources.md#ltc-datasets)."""
