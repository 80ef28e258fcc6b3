"""New series for a trained model (``zoo predict``, ``zoo evaluate``): read with the run's own
data options, every series (no split), labels only when evaluating.

They are read as the test split was in training: on the union of the training grid and their
own times, with the time channel counted from the same origin, and z-scored with the training
statistics, so that series of the training file give exactly the training pipeline's numbers.
A checkpoint without a grid (older zoo) reads a file on its own grid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...errors import InputError
from ...series import SeriesSplit, TaskInfo
from .arrays import open_store
from .assemble import (Rows, _check_series_targets, _check_times, _forecast_names, dense,
                       forecast_targets, per_step_targets)
from .options import existing
from .table import READERS, TimeKind, _read


@dataclass
class Stored:
    """What a model keeps of its training data: channel names (the time channel first when
    there is one), normalisation statistics, the grid in file units and the date origin."""

    channels: list[str] | None = None
    normalisation: dict | None = None
    grid: np.ndarray | None = None
    time_origin: str | None = None

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> Stored:
        grid = info.get("grid")
        return cls(channels=info.get("channels"), normalisation=info.get("normalisation"),
                   grid=None if grid is None else np.asarray(grid, dtype=np.float64),
                   time_origin=info.get("time_origin"))

    def data_channels(self, cfg) -> list[str] | None:
        """The channels read from a file (without the time channel)."""
        if self.channels is None:
            return None
        return list(self.channels[1:] if cfg.time_channel else self.channels)


@dataclass
class NewSeries:
    """Every series of a file: the split, its rows (forecast: without the target rows) and the
    grid position of each row."""

    split: SeriesSplit
    rows: Rows
    pos: np.ndarray

    @property
    def ids(self) -> list[str]:
        return self.rows.names


def read_new(cfg, data: Any, task: TaskInfo, stored: Stored, labelled: bool) -> NewSeries:
    """The series of ``data`` (a file path, a DataFrame for ``table``, arrays for ``arrays``);
    ``labelled``: with targets, as for evaluation (a file without labels is an error)."""
    channels = stored.data_channels(cfg)
    if cfg.kind == "table":
        frame, source = _table_input(data)
        if labelled:
            _require_labels(cfg, frame, source)
        times = None if stored.grid is None else TimeKind(stored.time_origin)
        rows, y, _ = cfg.read_rows(frame, source, task, labels=labelled, split=False,
                                   channels=channels, times=times)
    else:
        store = _arrays_input(data)
        if labelled and cfg.task_kind != "forecast" and "labels" not in store.keys:
            raise InputError(f"{store.source}: no labels to evaluate against (no array "
                             f"'labels'; found: {', '.join(store.keys)})")
        rows, y, _ = cfg.read_rows(store, task, labels=labelled, split=False, channels=channels)
    return assemble_new(rows, y, task, cfg, stored, labelled)


def _table_input(data: Any):
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        from .table import _not_empty

        return _not_empty(data, "<DataFrame>"), "<DataFrame>"
    if not isinstance(data, (str, Path)):
        raise InputError(f"a model trained on a table reads a .csv, .tsv or .parquet file or a "
                         f"pandas DataFrame, not {type(data).__name__}")
    path = Path(data)
    if path.suffix.lower() not in READERS:
        raise InputError(f"{path}: the model was trained on a table (data kind 'table'); give a "
                         f".csv, .tsv or .parquet file")
    return _read(existing(path)), path


def _arrays_input(data: Any):
    if isinstance(data, np.ndarray):
        return open_store(arrays={"values": data})
    if isinstance(data, Mapping):
        return open_store(arrays=dict(data))
    paths = [data] if isinstance(data, (str, Path)) else data
    if not (isinstance(paths, (list, tuple)) and paths
            and all(isinstance(p, (str, Path)) for p in paths)):
        raise InputError(f"a model trained on arrays reads a .npz file, a folder or list of "
                         f".npy files, a values array or a dict of arrays, not "
                         f"{type(data).__name__}")
    paths = [existing(p) for p in paths]
    if len(paths) == 1 and (paths[0].suffix.lower() == ".npz" or paths[0].is_dir()):
        return open_store(str(paths[0]))
    if all(p.suffix.lower() == ".npy" for p in paths):
        return open_store([str(p) for p in paths])
    raise InputError(f"{', '.join(map(str, paths))}: the model was trained on arrays (data kind "
                     f"'arrays'); give a .npz file, a folder of .npy files or .npy files")


def _require_labels(cfg, frame, source) -> None:
    from .cells import label_texts
    from .table import _cells

    for name in cfg.labels:
        if name not in frame.columns:
            raise InputError(f"{source}: no labels to evaluate against: no column '{name}' "
                             f"(data.label); columns: {', '.join(map(str, frame.columns))}")
        if (label_texts(_cells(frame[name])) == "").all():
            raise InputError(f"{source}: no labels to evaluate against: column '{name}' "
                             f"(data.label) is empty")


def assemble_new(rows: Rows, y_series: np.ndarray | None, task: TaskInfo, cfg, stored: Stored,
                 labelled: bool) -> NewSeries:
    """Grid, time channel, normalisation and targets of new rows, as :func:`.assemble.bundle`
    does for the training file but with the stored grid and statistics."""
    _check_times(rows)
    if labelled:
        _check_series_targets(rows, y_series, task)
        if cfg.task_kind == "forecast":
            rows, y_series = forecast_targets(rows, cfg.forecast_channels(),
                                              cfg.forecast.horizon)
    grid = np.unique(rows.time) if stored.grid is None else np.union1d(stored.grid, rows.time)
    matrix = np.column_stack([rows.time - grid[0], rows.values]) if cfg.time_channel \
        else rows.values
    if cfg.normalise:
        mean, std = statistics(stored, matrix.shape[1], rows.source)
        matrix = (matrix - mean) / std
        if labelled and cfg.task_kind == "forecast":
            _, f_mean, f_std = forecast_units(rows, cfg, stored)
            y_series = (y_series - f_mean.ravel()) / f_std.ravel()
    times, values, final_index, pos = dense(rows, grid, matrix)
    n = len(rows.names)
    if not labelled:
        y = np.zeros(n, dtype=np.int64)
    elif task.per_step:
        y = per_step_targets(rows, pos, len(grid))
    else:
        y = y_series
    y = torch.from_numpy(y if task.kind == "multiclass" or not labelled else
                         y.astype(np.float32))
    split = SeriesSplit(times=times, values=values, final_index=final_index, y=y)
    return NewSeries(split, rows, pos)


def statistics(stored: Stored, width: int, source: str) -> tuple[np.ndarray, np.ndarray]:
    """The stored mean and std, one per channel of the matrix."""
    if stored.normalisation is None:
        raise InputError(f"{source}: the model's checkpoint has no normalisation statistics "
                         f"(it was written by an older zoo and its training data is not there "
                         f"to recompute them); retrain the model to predict with it")
    mean = np.asarray(stored.normalisation["mean"], dtype=np.float64)
    std = np.asarray(stored.normalisation["std"], dtype=np.float64)
    if len(mean) != width:
        raise InputError(f"{source}: {width} channels read but the model was trained on "
                         f"{len(mean)} ({', '.join(stored.normalisation['channels'])})")
    return mean, std


def forecast_units(rows: Rows, cfg, stored: Stored) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Forecast channel names and their mean and std, (H, K) each (mean 0, std 1 when the
    channels were not normalised): a prediction × std + mean is in the file's units."""
    names = _forecast_names(rows, cfg.forecast_channels())
    h = cfg.forecast.horizon
    if not cfg.normalise:
        return names, np.zeros((h, len(names))), np.ones((h, len(names)))
    channels = list(stored.normalisation["channels"])
    cols = [channels.index(c) for c in names]  # as in training
    mean, std = statistics(stored, len(channels), rows.source)
    return names, np.tile(mean[cols], (h, 1)), np.tile(std[cols], (h, 1))
