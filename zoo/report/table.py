"""Compare reproduced numbers with published ones, row by row.

*Within the paper's spread* means ``|ours - paper| <= 2 x paper std``: our mean lies within two
of the paper's seed standard deviations of its mean. Where the paper prints only a bound
(``< 65``) our mean must satisfy it; where it prints no std there is no verdict. Our std is the
population standard deviation over seeds (``ddof=0``), the convention that reproduces paper
(a)'s published per-seed figures (e.g. EigenWorms 91.8 (3.4)).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..results.registry import Entry
from .collect import Measurement

SPREAD = 2.0


@dataclass(frozen=True)
class Stats:
    mean: float
    std: float
    n: int


@dataclass(frozen=True)
class Row:
    entry: Entry
    ours: Stats | None
    partial: str | None
    runs: tuple[str, ...]

    @property
    def diff(self) -> float | None:
        return None if self.ours is None else self.ours.mean - self.entry.mean

    @property
    def within(self) -> bool | None:
        """Whether our mean is within the paper's spread (None: not run, or no spread given)."""
        if self.ours is None:
            return None
        if self.entry.bound == "<":
            return self.ours.mean < self.entry.mean
        if self.entry.bound == ">":
            return self.ours.mean > self.entry.mean
        if self.entry.std is None:
            return None
        return abs(self.diff) <= SPREAD * self.entry.std + 1e-12


def summarise(values: list[float]) -> Stats | None:
    if not values:
        return None
    return Stats(statistics.fmean(values), statistics.pstdev(values), len(values))


def compare(entries: list[Entry], found: dict[str, list[Measurement]]) -> list[Row]:
    """One row per entry, in registry order."""
    rows = []
    for entry in entries:
        runs = found.get(entry.id, [])
        partial = "; ".join(sorted({m.partial for m in runs if m.partial})) or None
        rows.append(Row(entry, summarise([m.value for m in runs]), partial,
                        tuple(m.run_id for m in runs)))
    return rows
