"""``kind: arrays``: series from NumPy arrays, a ``.npz`` file or ``.npy`` files named by key.

Keys: ``values`` (N, L, C), NaN where unobserved or padded; ``times`` (L,) shared or (N, L) per
series (optional: steps 0, 1, …); ``lengths`` (N,) (optional: a series ends at its last step
with a value); ``labels`` (N,) / (N, K) per series or (N, L) / (N, L, K) per step; and a split
array of train/val/test when ``split.key`` names it. Steps past a series' length are ignored.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator

from ...errors import InputError
from ...series import DataBundle
from ...suggest import did_you_mean
from .assemble import SPLITS, Rows, bundle
from .cells import encode, label_texts, numbers, shown
from .options import OwnDataConfig, SplitOptions, existing


class ArraysSplit(SplitOptions):
    """``ratios`` (default) or ``key``: an array of train/val/test per series."""

    key: str | None = Field(None, description="array holding train, val or test per series")
    given: ClassVar[str] = "key"


class ArraysConfig(OwnDataConfig):
    """Your own series from NumPy arrays (.npz, or .npy files named values, labels, ...)."""

    kind: Literal["arrays"] = "arrays"
    path: str | list[str] = Field(description="a .npz file, a folder of .npy files or a list "
                                              "of .npy files; relative to the spec file")
    channel_names: list[str] | None = Field(
        None, min_length=1, description="names of the C channels (default: 0, 1, ...)")
    split: ArraysSplit = Field(default_factory=ArraysSplit, description="train/val/test split")

    @field_validator("channel_names")
    @classmethod
    def _distinct_names(cls, names: list[str] | None) -> list[str] | None:
        if names and len(set(names)) < len(names):
            raise ValueError(f"channel {next(n for n in names if names.count(n) > 1)!r} is "
                             f"named twice")
        return names

    def _option_problems(self) -> list[tuple[str, str]]:
        out = []
        if isinstance(self.path, list):
            out += [(f"data.path.{i}", f"'{p}' is not a .npy file")
                    for i, p in enumerate(self.path) if Path(p).suffix.lower() != ".npy"]
        elif Path(self.path).suffix.lower() not in (".npz", ""):
            out.append(("data.path", f"'{self.path}' is not a .npz file or a folder of .npy "
                                     f"files"))
        for c in self.forecast.channels if self.forecast else []:
            if isinstance(c, str) and c not in (self.channel_names or []):
                out.append(("data.forecast.channels",
                            f"'{c}' is not in data.channel_names"
                            f"{did_you_mean(c, self.channel_names or [])}; name the channels "
                            f"there or give 0-based indices"))
        return out

    def source_name(self) -> str:
        return self.path if isinstance(self.path, str) else ", ".join(self.path)

    def _labels_for_classes(self) -> list[str]:
        return list(_class_labels(_stamps(self.path), self.per_step))

    def _n_targets(self) -> int:
        shape = _store(_stamps(self.path)).array("labels").shape
        per_series = len(shape) <= (2 if self.per_step else 1)
        return 1 if per_series else shape[-1]

    def load(self, smoke: bool = False) -> DataBundle:
        self.raise_problems()
        task = self.task()
        rows, y_series, split = self.read_rows(_store(_stamps(self.path)), task)
        return bundle(rows, y_series, task, self, split)

    def read_rows(self, store: _Store, task, labels: bool = True, split: bool = True,
                  channels: list[str] | None = None) -> tuple[Rows, np.ndarray | None,
                                                              np.ndarray | None]:
        """Rows, per-series targets and split codes of ``store``; for new data (prediction)
        ``labels``/``split`` may be left out and ``channels`` names the channels expected."""
        values = store.numbers("values", ndim=(3,))
        n, length, c = values.shape
        names = channels or self.channel_names or [str(i) for i in range(c)]
        if len(names) != c:
            what = (f"the model reads {len(names)} ({', '.join(names)})" if channels
                    else f"data.channel_names names {len(names)}")
            raise InputError(f"{store.source}: values has {c} channels but {what}")
        steps = _lengths(store, values)
        series, step = np.nonzero(np.arange(length) < steps[:, None])
        rows = Rows(source=store.source, names=[str(i) for i in range(n)], series=series,
                    time=_times(store, n, length, series, step), values=values[series, step],
                    channels=names, where=lambda r: f"series {series[r]}, step {step[r]}")
        y_series = None
        if labels and self.task_kind != "forecast":
            raw = store.array("labels", n)
            base = 1 + self.per_step
            allowed = (base,) if self.task_kind == "classify" else (base, base + 1)
            if raw.ndim not in allowed or (self.per_step and raw.shape[1] != length):
                raise InputError(f"{store.source}: labels has shape {raw.shape}; expected "
                                 f"{_label_shapes(self.task_kind, self.per_step, n, length)}")
            if self.per_step:
                raw = raw[series, step]
            where = rows.where if self.per_step else (lambda i: f"series {i}")
            if self.task_kind == "classify":
                y = encode(label_texts(raw), list(task.class_names), where, store.source)
            else:
                y, bad = numbers(raw)
                if bad is not None:
                    at = where(int(np.unravel_index(bad, raw.shape)[0]))
                    raise InputError(f"{store.source}: labels holds {shown(raw, bad)} at "
                                     f"{at}, not a number float32 can hold")
                y = y.reshape(len(y), -1)
            if self.per_step:
                rows.y = y
            else:
                y_series = y
        codes = _split_codes(store, self.split.key, n) if split and self.split.key else None
        return rows, y_series, codes


def _label_shapes(task: str, per_step: bool, n: int, length: int) -> str:
    lead = f"({n}, {length}" if per_step else f"({n}"
    return f"{lead}) or {lead}, K)" if task == "regress" else f"{lead})"


def _lengths(store: _Store, values: np.ndarray) -> np.ndarray:
    n, length = values.shape[:2]
    observed = ~np.isnan(values).all(axis=2)
    if "lengths" in store.keys:
        steps = store.numbers("lengths", n, ndim=(1,))
        bad = np.flatnonzero((steps != np.round(steps)) | (steps < 1) | (steps > length))
        if bad.size:
            raise InputError(f"{store.source}: lengths[{bad[0]}] is {steps[bad[0]]:g}; a length "
                             f"is a whole number of steps from 1 to {length}")
        return steps.astype(np.int64)
    steps = np.where(observed.any(axis=1), length - np.argmax(observed[:, ::-1], axis=1), 0)
    empty = np.flatnonzero(steps == 0)
    if empty.size:
        raise InputError(f"{store.source}: series {empty[0]} has no value (all NaN)")
    return steps


def _times(store: _Store, n: int, length: int, series: np.ndarray, step: np.ndarray):
    if "times" not in store.keys:
        return step.astype(np.float64)
    times = store.numbers("times", ndim=(1, 2))
    if times.shape not in ((length,), (n, length)):
        raise InputError(f"{store.source}: times has shape {times.shape}; expected ({length},) "
                         f"shared or ({n}, {length}) per series, as values ({n}, {length}, C)")
    return times[step] if times.ndim == 1 else times[series, step]


def _split_codes(store: _Store, key: str, n: int) -> np.ndarray:
    texts = label_texts(store.array(key, n, ndim=(1,)))
    bad = np.flatnonzero(~np.isin(texts, SPLITS))
    if bad.size:
        value = texts[bad[0]]
        raise InputError(f"{store.source}: {key}[{bad[0]}] is {value!r}; use train, val or "
                         f"test{did_you_mean(value, SPLITS)}")
    return np.array([SPLITS.index(t) for t in texts])


class _Store:
    """Named arrays of a .npz file, a folder of .npy files or a list of .npy files."""

    def __init__(self, paths: list[Path], arrays: dict | None = None):
        if arrays is not None:  # arrays given in Python
            self.source, self._npz = "<arrays>", arrays
            self.files = {k: Path(k) for k in arrays}
            return
        self.source = ", ".join(map(str, paths))
        if len(paths) == 1 and paths[0].suffix.lower() == ".npz":
            self._npz = _open_npz(paths[0])
            self.files = {k: paths[0] for k in self._npz.files}
            return
        self._npz = None
        if len(paths) == 1 and paths[0].is_dir():
            paths = sorted(paths[0].glob("*.npy"))
        self.files = {p.stem: p for p in paths}

    @property
    def keys(self) -> list[str]:
        return list(self.files)

    def array(self, key: str, n: int | None = None, ndim: tuple[int, ...] = ()) -> np.ndarray:
        if key not in self.files:
            raise InputError(f"{self.source}: no array '{key}'{did_you_mean(key, self.keys)}; "
                             f"found: {', '.join(self.keys) or 'none'}")
        try:
            arr = self._npz[key] if self._npz is not None else np.load(self.files[key],
                                                                       allow_pickle=False)
        except ValueError as exc:
            pickled = "allow_pickle" in str(exc)
            raise InputError(
                f"{self.files[key]}: cannot read array '{key}': " +
                ("an object array (pickled), which is not loaded; save strings as a unicode "
                 "array, e.g. np.array(labels, dtype=str)" if pickled else str(exc))) from None
        if ndim and arr.ndim not in ndim:
            raise InputError(f"{self.source}: '{key}' has shape {arr.shape}; expected "
                             f"{' or '.join(f'{d} axes' for d in ndim)}")
        if n is not None and arr.shape[0] != n:
            raise InputError(f"{self.source}: '{key}' has {arr.shape[0]} series (first axis) "
                             f"but values has {n}")
        if key == "values" and arr.ndim and not arr.shape[0]:
            raise InputError(f"{self.source}: 'values' holds no series (its shape is "
                             f"{arr.shape})")
        return arr

    def numbers(self, key: str, n: int | None = None, ndim: tuple[int, ...] = ()) -> np.ndarray:
        arr = self.array(key, n, ndim)
        values, bad = numbers(arr)
        if bad is not None:
            where = np.unravel_index(bad, arr.shape)
            raise InputError(f"{self.source}: '{key}' holds {shown(arr, bad)} at index "
                             f"{tuple(int(i) for i in where)}, not a number float32 can "
                             f"hold")
        return values


def open_store(path: str | list[str] | None = None, arrays: dict | None = None) -> _Store:
    """The arrays of ``path`` (as data.path), or of a dict of arrays given in Python."""
    if arrays is not None:
        return _Store([], {str(k): np.asarray(v) for k, v in arrays.items()})
    return _store(_stamps(path))


def _open_npz(path: Path):
    import zipfile

    if path.is_file() and not zipfile.is_zipfile(path):  # np.load would try it as a pickle
        raise InputError(f"{path}: cannot read it as .npz: not a zip archive of arrays (save one "
                         f"with numpy.savez)")
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read it as .npz: {exc}") from None


def _stamps(path: str | list[str]) -> tuple:
    out = []
    for p in [path] if isinstance(path, str) else path:
        stat = existing(p).stat()
        inside = tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size)
                       for f in sorted(Path(p).glob("*.npy"))) if Path(p).is_dir() else ()
        out.append((str(p), stat.st_mtime_ns, stat.st_size, inside))
    return tuple(out)


@lru_cache(maxsize=4)
def _store(stamps: tuple) -> _Store:
    return _Store([Path(s[0]) for s in stamps])


@lru_cache(maxsize=4)
def _class_labels(stamps: tuple, per_step: bool) -> tuple[str, ...]:
    """Every label of the data (per step: only the steps within each series' length)."""
    store = _store(stamps)
    store.array("values", ndim=(3,))  # no series: said so, not "no label"
    labels = label_texts(store.array("labels"))
    if per_step and labels.ndim == 2:
        values = store.numbers("values", ndim=(3,))
        steps = _lengths(store, values)
        labels = labels[np.arange(labels.shape[1]) < steps[:, None]]
    return tuple(labels.ravel())
