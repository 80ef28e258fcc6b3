"""From observations in long form to a :class:`DataBundle` (both own-data kinds).

The shared time grid is the union of every observed time (minus the earliest, so it starts at
0); a series is NaN at grid times it has no observation at, and ``final_index`` is its last
observation. The optional time channel (first) holds each observation's grid time. Splits come
from the data or by ratio (stratified by class for per-series classification); every channel,
the time channel included, is z-scored with statistics of the training series only (NaN
ignored); the statistics are ``bundle.info["normalisation"]``, the grid (in the file's units:
seconds since ``info["time_origin"]`` for dates) ``info["grid"]``, so that new series can be
read as these were (:mod:`.new_data`).

Targets: per-series classes (N,) and values (N, K); per-step classes (N, T), :data:`IGNORE`
where a series has no label, and values (N, T, K), NaN there; a forecast is a per-series target
(N, H·K): the last H observations of each series, step-major (step 1's K channels, then step
2's, ...), removed from its input and z-scored like their channels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...errors import InputError
from ...series import DataBundle, SeriesSplit, TaskInfo
from ...suggest import did_you_mean
from .cells import IGNORE

SPLITS = ("train", "val", "test")
#: the most values a dense (N, T, C) array may hold (4 GiB of float32)
MAX_VALUES = 2 ** 30


@dataclass
class Rows:
    """Observations, one row per (series, time); a series' rows in file order.

    ``y`` is a per-step target per row: class indices (R,) or values (R, K); else ``None``.
    """

    source: str
    names: list[str]
    series: np.ndarray
    time: np.ndarray
    values: np.ndarray
    channels: list[str]
    where: Callable[[int], str]
    y: np.ndarray | None = None
    #: ``time`` counts seconds from this ISO 8601 date (a time column of dates); else ``None``
    origin: str | None = None

    def series_name(self, s: int) -> str:
        return f"series {self.names[s]!r}"


def bundle(rows: Rows, y_series: np.ndarray | None, task: TaskInfo, cfg,
           split: np.ndarray | None) -> DataBundle:
    """Check, cut forecast targets, grid, split and normalise; ``split`` (N,) codes 0/1/2."""
    import torch

    _check_times(rows)
    _check_channels(rows)
    _check_series_targets(rows, y_series, task)
    if cfg.task_kind == "forecast":
        rows, y_series = forecast_targets(rows, cfg.forecast_channels(), cfg.forecast.horizon)
    if split is None:
        strata = y_series if task.kind == "multiclass" and not task.per_step else None
        split = ratio_split(len(rows.names), strata, cfg.split.shares, cfg.split.seed)
    _check_splits(rows, split, cfg.split.named)
    channels = (["time"] if cfg.time_channel else []) + rows.channels
    grid = np.unique(rows.time)
    matrix = np.column_stack([rows.time - grid[0], rows.values]) if cfg.time_channel \
        else rows.values
    info = {"source": rows.source, "channels": channels, "grid": grid,
            "series": {name: [rows.names[i] for i in np.flatnonzero(split == k)]
                       for k, name in enumerate(SPLITS)}}
    if rows.origin is not None:
        info["time_origin"] = rows.origin
    if task.kind == "multiclass":
        info["classes"] = list(task.class_names)
    if cfg.normalise:
        mean, std = train_statistics(matrix, split[rows.series] == 0, channels, rows.source)
        matrix = (matrix - mean) / std
        info["normalisation"] = {"mean": mean.tolist(), "std": std.tolist(),
                                 "channels": channels}
        if cfg.task_kind == "forecast":
            cols = [channels.index(c) for c in _forecast_names(rows, cfg.forecast_channels())]
            h = cfg.forecast.horizon
            y_series = (y_series - np.tile(mean[cols], h)) / np.tile(std[cols], h)
    times, values, final_index, pos = dense(rows, grid, matrix)
    y = per_step_targets(rows, pos, len(grid)) if task.per_step else y_series
    whole = SeriesSplit(times=times, values=values, final_index=final_index,
                        y=torch.from_numpy(y if task.kind == "multiclass"
                                           else y.astype(np.float32)))
    parts = [whole.subset(torch.from_numpy(np.flatnonzero(split == k))) for k in range(3)]
    return DataBundle(*parts, task=task, info=info)


def _check_times(rows: Rows) -> None:
    missing = np.flatnonzero(np.isnan(rows.time))
    if missing.size:
        raise InputError(f"{rows.source}: the time is missing at {rows.where(int(missing[0]))}")
    order = np.argsort(rows.series, kind="stable")
    s, t = rows.series[order], rows.time[order]
    bad = np.flatnonzero((s[1:] == s[:-1]) & (t[1:] <= t[:-1]))
    if bad.size:
        a, b = int(order[bad[0]]), int(order[bad[0] + 1])
        what = (f"time {rows.time[a]:g} appears twice" if rows.time[a] == rows.time[b]
                else f"time {rows.time[b]:g} comes after {rows.time[a]:g}")
        raise InputError(f"{rows.source}: {rows.series_name(rows.series[a])}: {what} "
                         f"({rows.where(a)}, {rows.where(b)}); the times of a series must "
                         f"increase strictly, in file order")


def _check_channels(rows: Rows) -> None:
    if not rows.channels:
        raise InputError(f"{rows.source}: no channel to read")
    empty = np.flatnonzero(np.isnan(rows.values).all(axis=0))
    if empty.size:
        raise InputError(f"{rows.source}: channel {rows.channels[empty[0]]!r} has no value "
                         f"(every cell is empty or NaN)")


def _check_series_targets(rows: Rows, y: np.ndarray | None, task: TaskInfo) -> None:
    if y is None:
        return
    missing = (y == IGNORE) if task.kind == "multiclass" else np.isnan(y.reshape(len(y), -1)) \
        .any(axis=1)
    hit = np.flatnonzero(missing)
    if hit.size:
        raise InputError(f"{rows.source}: {rows.series_name(int(hit[0]))} has no "
                         f"{'label' if task.kind == 'multiclass' else 'target value'}")


def _forecast_names(rows: Rows, wanted: list[str | int]) -> list[str]:
    names = []
    for c in wanted:
        if isinstance(c, int):
            if not 0 <= c < len(rows.channels):
                raise InputError(f"{rows.source}: forecast channel {c} is out of range: the "
                                 f"data has {len(rows.channels)} channels (0-based)")
            names.append(rows.channels[c])
        elif c not in rows.channels:
            raise InputError(f"{rows.source}: forecast channel {c!r} is not a channel"
                             f"{did_you_mean(c, rows.channels)}; channels: "
                             f"{', '.join(rows.channels)}")
        else:
            names.append(c)
    return names


def forecast_targets(rows: Rows, wanted: list[str | int], h: int) -> tuple[Rows, np.ndarray]:
    """The last ``h`` rows of every series become its target (N, h·K); the rest stays."""
    cols = [rows.channels.index(c) for c in _forecast_names(rows, wanted)]
    n = len(rows.names)
    counts = np.bincount(rows.series, minlength=n)
    short = np.flatnonzero(counts <= h)
    if short.size:
        s = int(short[0])
        raise InputError(f"{rows.source}: {rows.series_name(s)} has {counts[s]} observations; "
                         f"forecast.horizon {h} needs at least {h + 1} (a history to read)")
    order = np.argsort(rows.series, kind="stable")
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(start, counts)  # position in its series
    step = rank - (counts[rows.series] - h)  # 0 … h-1 for the target rows
    target = step >= 0
    y = np.full((n, h, len(cols)), np.nan)
    y[rows.series[target], step[target]] = rows.values[np.ix_(target, cols)]
    keep = ~target
    kept = replace(rows, series=rows.series[keep], time=rows.time[keep],
                   values=rows.values[keep], where=_subset_where(rows.where, keep))
    return kept, y.reshape(n, -1)


def _subset_where(where: Callable[[int], str], keep: np.ndarray) -> Callable[[int], str]:
    index = np.flatnonzero(keep)
    return lambda i: where(int(index[i]))


def ratio_split(n: int, strata: np.ndarray | None, shares, seed: int) -> np.ndarray:
    """Split codes (n,): cut at round(n·cumulative share), each stratum spread evenly.

    Each stratum is shuffled (seeded) and its members get evenly spaced positions in (0, 1);
    all series ordered by position (random ties) are cut at the cumulative shares.
    """
    rng = np.random.default_rng(seed)
    strata = np.zeros(n, dtype=np.int64) if strata is None else strata
    position = np.empty(n)
    for value in np.unique(strata):
        members = rng.permutation(np.flatnonzero(strata == value))
        position[members] = (np.arange(len(members)) + 0.5) / len(members)
    order = np.lexsort((rng.random(n), position))
    cuts = np.floor(n * np.cumsum(shares)[:2] + 0.5).astype(np.int64)
    codes = np.empty(n, dtype=np.int64)
    for k, part in enumerate(np.split(order, cuts)):
        codes[part] = k
    return codes


def _check_splits(rows: Rows, split: np.ndarray, named: str | None) -> None:
    for k, name in enumerate(SPLITS):
        if not (split == k).any():
            how = (f"no series has split {name!r} in {named!r}" if named else
                   f"{len(rows.names)} series split by data.split.ratios leave none for "
                   f"{name!r}; use more series or a larger share")
            raise InputError(f"{rows.source}: the {name} split is empty: {how}")


def train_statistics(matrix: np.ndarray, train: np.ndarray, channels: list[str],
                     source: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and (population) std of the training rows, NaN ignored; std 0 → 1."""
    seen = matrix[train]
    counts = (~np.isnan(seen)).sum(axis=0)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise InputError(f"{source}: channel {channels[empty[0]]!r} has no value in the "
                         f"training split, so it cannot be normalised")
    mean = np.nanmean(seen, axis=0)
    std = np.nanstd(seen, axis=0)
    return mean, np.where(std > 0, std, 1.0)


def dense(rows: Rows, grid: np.ndarray, matrix: np.ndarray):
    """Values (N, T, C) on the grid, final indices (N,) and each row's grid position."""
    import torch

    n, t, c = len(rows.names), len(grid), matrix.shape[1]
    if n * t * c > MAX_VALUES:
        raise InputError(f"{rows.source}: the union of all observation times has {t:,} times; "
                         f"{n:,} series × {t:,} times × {c} channels is too large to hold; "
                         f"round the times to a coarser resolution")
    times = (grid - grid[0]).astype(np.float32)
    close = np.flatnonzero(np.diff(times) <= 0)
    if close.size:
        a, b = float(grid[close[0]]), float(grid[close[0] + 1])
        hit = np.flatnonzero((rows.time == a) | (rows.time == b))
        at = f" ({rows.where(int(hit[0]))})" if hit.size else ""
        raise InputError(f"{rows.source}: times {a!r} and {b!r}{at} cannot be told apart in "
                         f"float32 over a span of {grid[-1] - grid[0]:g}; rescale or round the "
                         f"times")
    pos = np.searchsorted(grid, rows.time)
    values = np.full((n, t, c), np.nan, dtype=np.float32)
    values[rows.series, pos] = matrix
    final = np.zeros(n, dtype=np.int64)
    np.maximum.at(final, rows.series, pos)
    return (torch.from_numpy(times), torch.from_numpy(values), torch.from_numpy(final), pos)


def per_step_targets(rows: Rows, pos: np.ndarray, steps: int) -> np.ndarray:
    """Per-row targets on the grid: (N, T) classes or (N, T, K) values; unlabelled steps
    :data:`IGNORE` / NaN."""
    n = len(rows.names)
    if rows.y.ndim == 1:
        y = np.full((n, steps), IGNORE, dtype=np.int64)
    else:
        y = np.full((n, steps, rows.y.shape[1]), np.nan)
    y[rows.series, pos] = rows.y
    return y
