"""Hyperparameter search over a spec's ``search:`` space with Optuna (``zoo search``).

:func:`search` and its option and result types are imported on first use (they load torch,
MLflow and Optuna)."""

from typing import Any

__all__ = ["SearchOptions", "SearchResult", "search"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import driver

        return getattr(driver, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
