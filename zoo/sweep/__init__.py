"""``zoo sweep``: run specs × seeds on local processes or a Ray cluster, skipping finished runs
and resuming interrupted ones.

:func:`sweep` and :class:`SweepOptions` are imported on first use, so that planning (``.plan``,
which validates the specs) does not import torch and MLflow: a bad spec is reported at once.
"""

from typing import Any

__all__ = ["SweepOptions", "sweep"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import driver

        return getattr(driver, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
