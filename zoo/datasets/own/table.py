"""``kind: table``: series from a long CSV or Parquet table, one row per (series, time).

Columns: the series id, an optional time (numbers or ISO 8601 dates, then seconds since the
earliest; without one, a series' rows are its steps 0, 1, …), channels (default: every other
column holding numbers) and the label/target column(s), plus an optional split column. Empty
cells and NaN are missing values. docs/own-data.md documents every option.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field

from ...errors import InputError
from ...series import DataBundle
from ...suggest import did_you_mean
from .assemble import SPLITS, Rows, bundle
from .cells import encode, label_texts, numbers, shown
from .options import OwnDataConfig, SplitOptions, existing

READERS = {".csv": ",", ".tsv": "\t", ".parquet": None, ".pq": None}


class TableSplit(SplitOptions):
    """``ratios`` (default) or ``column``: a column of train/val/test per series."""

    column: str | None = Field(None, description="column holding train, val or test")
    given: ClassVar[str] = "column"


class TableConfig(OwnDataConfig):
    """Your own series from a long CSV/Parquet table (one row per series and time)."""

    kind: Literal["table"] = "table"
    path: str = Field(description=".csv, .tsv or .parquet file; relative to the spec file")
    id: str = Field(description="column naming the series of each row")
    time: str | None = Field(None, description="time column (default: row order in a series)")
    channels: list[str] | None = Field(
        None, min_length=1, description="channel columns (default: every other numeric column)")
    label: str | list[str] | None = Field(
        None, description="classify: the class column; regress: the target column(s)")
    split: TableSplit = Field(default_factory=TableSplit, description="train/val/test split")

    def _option_problems(self) -> list[tuple[str, str]]:
        out = []
        if Path(self.path).suffix.lower() not in READERS:
            out.append(("data.path", f"'{self.path}' is not a .csv, .tsv or .parquet file"))
        labels = self.labels
        if self.task_kind == "forecast":
            if labels:
                out.append(("data.label", "task 'forecast' predicts channels; leave label out"))
        elif not labels:
            out.append(("data.task", f"task '{self.task_kind}' needs label: the "
                                     f"{'class' if self.task_kind == 'classify' else 'target'} "
                                     f"column"))
        elif self.task_kind == "classify" and len(labels) > 1:
            out.append(("data.label", "task 'classify' reads one class column"))
        roles = [("data.id", [self.id]), ("data.time", [self.time] if self.time else []),
                 ("data.label", labels), ("data.split.column",
                                          [self.split.column] if self.split.column else [])]
        seen: dict[str, str] = {}
        for key, names in roles:
            for name in names:
                if name in seen:
                    out.append((key, f"column '{name}' is already {seen[name]}"))
                seen.setdefault(name, key)
        for name in self.channels or []:
            if name in seen:
                out.append(("data.channels", f"column '{name}' is already {seen[name]}"))
            seen.setdefault(name, "data.channels")
        if self.forecast and self.channels is not None:
            for c in self.forecast.channels:
                if str(c) not in self.channels:
                    out.append(("data.forecast.channels", f"'{c}' is not in data.channels"
                                f"{did_you_mean(str(c), self.channels)}"))
        return out

    @property
    def labels(self) -> list[str]:
        return [] if self.label is None else [self.label] if isinstance(self.label, str) \
            else list(self.label)

    def forecast_channels(self) -> list[str | int]:
        return [str(c) for c in self.forecast.channels]

    def _labels_for_classes(self) -> list[str]:
        return list(_label_column(*_stamp(self.path), self.label))

    def _n_targets(self) -> int:
        return len(self.labels)

    def load(self, smoke: bool = False) -> DataBundle:
        self.raise_problems()
        task = self.task()
        path = existing(self.path)
        rows, y_series, split = self.read_rows(_read(path), path, task)
        return bundle(rows, y_series, task, self, split)

    def read_rows(self, frame: pd.DataFrame, path: Path | str, task, labels: bool = True,
                  split: bool = True, channels: list[str] | None = None,
                  times: TimeKind | None = None) -> tuple[Rows, np.ndarray | None,
                                                          np.ndarray | None]:
        """Rows, per-series targets and split codes of ``frame`` (read from ``path``).

        For new data (prediction) ``labels``/``split`` may be left out, ``channels`` fixes the
        channel columns and ``times`` the kind of time the model was trained on.
        """
        columns = list(frame.columns)
        channels = channels or self.channels
        named = [self.id, *([self.time] if self.time else []), *(self.labels if labels else []),
                 *([self.split.column] if split and self.split.column else []),
                 *(channels or [])]
        missing = [name for name in dict.fromkeys(named) if name not in columns]
        if missing:
            raise InputError(f"{path}: " + "; ".join(
                f"no column '{name}'{did_you_mean(name, columns)}" for name in missing) +
                f"; columns: {', '.join(map(str, columns))}")
        if frame.empty:
            raise InputError(f"{path}: the table has no rows")
        where = (lambda i: f"line {i + 2}") if READERS.get(Path(path).suffix.lower()) else \
            (lambda i: f"row {i + 1}")
        ids = label_texts(_cells(frame[self.id]))
        if (ids == "").any():
            raise InputError(f"{path}: the series id ('{self.id}') is empty at "
                             f"{where(int(np.flatnonzero(ids == '')[0]))}")
        series, names = pd.factorize(pd.Series(ids, dtype=object), sort=False)
        roles = {*named, *self.labels, *([self.split.column] if self.split.column else [])}
        channels = channels or _numeric_columns(frame, roles, path, where)
        time, origin = self._times(frame, series, path, where, times)
        rows = Rows(source=str(path), names=[str(n) for n in names], series=series, time=time,
                    values=np.column_stack([_numbers(frame, c, path, where) for c in channels]),
                    channels=[str(c) for c in channels], where=where, origin=origin)
        y_series = None
        if labels and self.task_kind == "classify":
            codes = encode(label_texts(_cells(frame[self.labels[0]])),
                           list(task.class_names), where, str(path))
            if self.per_step:
                rows.y = codes
            else:
                y_series = _per_series(rows, codes, codes < 0, f"label column '{self.labels[0]}'")
        elif labels and self.task_kind == "regress":
            y = np.column_stack([_numbers(frame, c, path, where) for c in self.labels])
            if self.per_step:
                rows.y = y
            else:
                y_series = _per_series(rows, y, np.isnan(y).any(axis=1),
                                       f"target column(s) {', '.join(self.labels)}")
        codes = None
        if split and self.split.column:
            codes = _split_codes(rows, label_texts(_cells(frame[self.split.column])),
                                 self.split.column)
        return rows, y_series, codes

    def _times(self, frame: pd.DataFrame, series: np.ndarray, path: Path, where,
               expected: TimeKind | None) -> tuple[np.ndarray, str | None]:
        """Times as numbers, and the origin (ISO 8601) of dates: seconds since the earliest
        date, or since ``expected.origin`` when the model was trained on dates."""
        if self.time is None:
            return pd.Series(series).groupby(series).cumcount().to_numpy(np.float64), None
        column = frame[self.time]
        if pd.api.types.is_datetime64_any_dtype(column):
            dates = pd.to_datetime(column, utc=True)
        else:
            cells = _cells(column)
            values, bad = numbers(cells)
            if bad is None:
                if expected is not None and expected.origin is not None:
                    raise InputError(f"{path}: time column '{self.time}' holds numbers, but the "
                                     f"model was trained on ISO 8601 dates")
                return values, None
            dates = pd.to_datetime(pd.Series(cells, dtype=object), format="ISO8601", utc=True,
                                   errors="coerce")
            if dates.isna().sum() > len(cells) // 2:  # mostly not dates: report the bad number
                raise InputError(f"{path}: time column '{self.time}' holds {shown(cells, bad)} "
                                 f"at {where(bad)}: times must be numbers or ISO 8601 dates")
            _check_dates(dates, cells, self.time, path, where)
        if expected is not None and expected.origin is None:
            raise InputError(f"{path}: time column '{self.time}' holds dates, but the model was "
                             f"trained on numeric times")
        origin = dates.min() if expected is None else pd.Timestamp(expected.origin)
        return (dates - origin).dt.total_seconds().to_numpy(np.float64), origin.isoformat()


@dataclass(frozen=True)
class TimeKind:
    """How a model's training data stated times: ``origin`` is the ISO 8601 date that times
    count seconds from, ``None`` for numeric times."""

    origin: str | None


def _check_dates(dates: pd.Series, cells, name: str, path: Path, where) -> None:
    """A cell that holds something but is not a date is an error."""
    missing = [i for i in np.flatnonzero(dates.isna().to_numpy())
               if str(cells[i]).strip() not in ("", "nan", "None")]
    if missing:
        raise InputError(f"{path}: time column '{name}' holds {shown(cells, missing[0])} at "
                         f"{where(missing[0])}: not an ISO 8601 date like the others")


def _stamp(path: str) -> tuple[str, int, int]:
    p = existing(path)
    stat = p.stat()
    return str(p), stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=8)
def _label_column(path: str, _mtime: int, _size: int, column: str) -> tuple[str, ...]:
    """Just the label column (for the class list), as label texts."""
    p = Path(path)
    header = list(_read(p, header_only=True).columns)
    if column not in header:
        raise InputError(f"{p}: no column '{column}'{did_you_mean(column, header)}; "
                         f"columns: {', '.join(map(str, header))}")
    return tuple(label_texts(_cells(_read(p, [column])[column])))


def _not_empty(frame: pd.DataFrame, source) -> pd.DataFrame:
    if frame.empty:
        raise InputError(f"{source}: the table has no rows (only a header)")
    return frame


def _read(path: Path, columns: list[str] | None = None, header_only: bool = False) -> pd.DataFrame:
    suffix = path.suffix.lower()
    sep = READERS.get(suffix)
    try:
        if sep is not None:
            frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False,
                                usecols=columns, nrows=0 if header_only else None,
                                encoding="utf-8-sig")
            return frame if header_only else _not_empty(frame, path)
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow); or "
                             f"save the table as CSV") from None
        if header_only:
            import pyarrow.parquet as pq

            return pd.DataFrame(columns=pq.read_schema(path).names)
        return _not_empty(pd.read_parquet(path, columns=columns), path)
    except InputError:
        raise
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(f"{path}: cannot read it as {'CSV' if sep else 'Parquet'}: "
                         f"{str(exc).strip().splitlines()[0]}") from None


def _cells(column: pd.Series) -> np.ndarray:
    if pd.api.types.is_bool_dtype(column) or not pd.api.types.is_numeric_dtype(column):
        return column.to_numpy(dtype=object, na_value=None)
    return column.to_numpy(dtype=np.float64, na_value=np.nan)


def _numbers(frame: pd.DataFrame, name: str, path: Path, where) -> np.ndarray:
    cells = _cells(frame[name])
    values, bad = numbers(cells)
    if bad is not None:
        raise InputError(f"{path}: column '{name}' holds {shown(cells, bad)} at {where(bad)}, "
                         f"not a number float32 can hold (a missing value is an empty cell or "
                         f"NaN)")
    return values


def _numeric_columns(frame: pd.DataFrame, named: set[str], path: Path, where) -> list[str]:
    """Default channels: columns not named otherwise whose cells are numbers (some at least)."""
    out = []
    for name in frame.columns:
        if name in named:
            continue
        cells = _cells(frame[name])
        values, bad = numbers(cells)
        seen = int((~np.isnan(values)).sum())
        if bad is None and seen:
            out.append(name)
        elif bad is not None and seen > len(cells) // 2:  # a number column with a typo
            raise InputError(f"{path}: column '{name}' holds {shown(cells, bad)} at "
                             f"{where(bad)}, not a number float32 can hold (a missing value is "
                             f"an empty cell or NaN); list data.channels to leave the column "
                             f"out")
    if not out:
        raise InputError(f"{path}: no column of numbers besides the id, time, label and split "
                         f"columns; name the channels with data.channels")
    return out


def _per_series(rows: Rows, values: np.ndarray, missing: np.ndarray, what: str) -> np.ndarray:
    """One value per series from its rows: the non-missing cells of a series must agree."""
    n = len(rows.names)
    present = np.flatnonzero(~missing)
    first_row = np.full(n, -1)
    order = present[::-1]
    first_row[rows.series[order]] = order  # the first present row of each series
    absent = np.flatnonzero(first_row < 0)
    if absent.size:
        s = int(absent[0])
        raise InputError(f"{rows.source}: {rows.series_name(s)} has no value in the {what}")
    out = values[first_row]
    differs = np.flatnonzero(
        (values[present] != out[rows.series[present]]).reshape(len(present), -1).any(axis=1))
    if differs.size:
        r = int(present[differs[0]])
        s = rows.series[r]
        raise InputError(f"{rows.source}: the {what} changes within {rows.series_name(s)} "
                         f"({rows.where(int(first_row[s]))}, {rows.where(r)}); a per-series "
                         f"label must be the same on all its rows (or set data.per_step: true)")
    return out


def _split_codes(rows: Rows, texts: np.ndarray, column: str) -> np.ndarray:
    bad = np.flatnonzero(~np.isin(texts, ("", *SPLITS)))
    if bad.size:
        value = texts[bad[0]]
        raise InputError(f"{rows.source}: split column '{column}' holds {value!r} at "
                         f"{rows.where(int(bad[0]))}; use train, val or test"
                         f"{did_you_mean(value, SPLITS)}")
    codes = np.array([SPLITS.index(t) if t else -1 for t in texts])
    return _per_series(rows, codes, codes < 0, f"split column '{column}'")
