"""Durations as a person reads them: ``45 s``, ``12 min``, ``3.4 h``."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """Seconds below 90 s, minutes below 90 min, else hours to one decimal."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"
