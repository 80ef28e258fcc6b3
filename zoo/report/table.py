"""Compare reproduced numbers with published ones, row by row.

Per entry, the runs whose spec is the shipped recipe form its row, and the runs of each shipped
variant of the recipe (another reading of the paper's protocol) a row of their own, compared with
the same published number; runs with any other spec are grouped by configuration into rows of their
own, labelled with what differs, and get neither a diff nor a verdict. Within a row each seed
counts once: its newest run (the one that started last); the others are counted as not used.
The row's runs that have not finished are named with it and count for nothing.

*Within the paper's spread* means ``|ours - paper| <= 2 x paper std``: our mean lies within two of
the paper's seed standard deviations of its mean. Where the paper prints only a bound (``< 65``)
our mean must satisfy it; where it prints no std there is no verdict. Our std is the population
standard deviation over seeds (``ddof=0``), the convention that reproduces paper (a)'s published
per-seed figures (e.g. EigenWorms 91.8 (3.4)); with one seed there is none.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, replace

from ..results.published import Entry
from .collect import Measurement, Unfinished
from .recipes import Recipe, recipe_key, variants

SPREAD = 2.0
PICK_RULE = "per seed, the newest finished run (latest start) counts"


@dataclass(frozen=True)
class Stats:
    mean: float
    std: float | None  # None for a single run
    n: int


@dataclass(frozen=True)
class Row:
    entry: Entry
    ours: Stats | None
    partial: str | None
    runs: tuple[str, ...]
    epochs: int | None = None  # train.epochs of the runs (of the recipe when not run)
    differs: str | None = None  # what the runs' spec changes from the recipe; None: the recipe
    unused: tuple[tuple[str | None, int], ...] = ()  # (seed, runs of it not used)
    variant: str | None = None  # the recipe's variant this row counts (None: the recipe)
    trained: tuple[int | None, ...] = ()  # epochs each run of ``runs`` trained (None: untrained)
    unfinished: tuple[Unfinished, ...] = ()  # its spec's runs not finished (not counted)

    @property
    def diff(self) -> float | None:
        """ours - paper, for recipe runs only."""
        if self.ours is None or self.differs is not None:
            return None
        return self.ours.mean - self.entry.mean

    @property
    def within(self) -> bool | None:
        """Whether our mean is within the paper's spread (None: not run, not the recipe, or no
        spread given)."""
        if self.diff is None:
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
    std = statistics.pstdev(values) if len(values) > 1 else None
    return Stats(statistics.fmean(values), std, len(values))


def newest_per_seed(runs: list[Measurement]) -> dict[str | None, Measurement]:
    """The run of each seed that counts: its newest (latest start)."""
    newest: dict[str | None, Measurement] = {}
    for m in sorted(runs, key=lambda m: m.start):
        newest[m.seed] = m
    return newest


def _row(entry: Entry, runs: list[Measurement], epochs: int | None,
         differs: str | None, variant: str | None = None) -> Row:
    newest = newest_per_seed(runs)
    used = list(newest.values())
    others = Counter(m.seed for m in runs) - Counter(newest.keys())
    partial = "; ".join(sorted({m.partial for m in used if m.partial})) or None
    return Row(entry, summarise([m.value for m in used]), partial,
               tuple(m.run_id for m in used), epochs, differs,
               tuple(sorted(others.items(), key=lambda item: str(item[0]).zfill(9))), variant,
               tuple(m.trained for m in used))


def compare(entries: list[Entry], found: dict[str, list[Measurement]],
            recipes: dict[str, Recipe],
            unfinished: dict[str, list[Unfinished]] | None = None) -> list[Row]:
    """Per entry in registry order: the recipe row, a row per shipped variant (each with its
    ``unfinished`` runs), then one row per other configuration."""
    rows = []
    for entry in entries:
        runs = found.get(entry.id, [])
        for variant in [None, *variants(entry.id, recipes)]:
            recipe = recipes.get(recipe_key(entry.id, variant))
            row = _row(entry, [m for m in runs if m.differs is None and m.variant == variant],
                       recipe and recipe.epochs, None, variant)
            rows.append(replace(row, unfinished=tuple(
                u for u in (unfinished or {}).get(entry.id, []) if u.variant == variant)))
        apart: dict[str, list[Measurement]] = {}
        for m in runs:
            if m.differs is not None:
                apart.setdefault(m.config, []).append(m)
        rows += [_row(entry, group, group[0].epochs, group[0].differs)
                 for group in apart.values()]
    return rows
