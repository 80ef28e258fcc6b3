"""``zoo sweep``: run specs × seeds on local processes or a Ray cluster, skipping finished runs."""

from .driver import SweepOptions, sweep

__all__ = ["SweepOptions", "sweep"]
