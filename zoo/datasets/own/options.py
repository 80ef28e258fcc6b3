"""Spec options shared by ``table`` and ``arrays``: task, classes, forecast, split, paths.

Constraints that need no data are spec errors (``FILE:LINE:COL``): Pydantic checks single
options, :meth:`OwnDataConfig.check` the combinations. ``task()`` is known without reading the
data, except the class list of ``task: classify`` without ``classes`` (read from the labels).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (BaseModel, ConfigDict, Field, PositiveInt, ValidationInfo, field_validator,
                      model_validator)

from ...components import DatasetConfig
from ...errors import InputError
from ...limits import NumpySeed
from ...series import DataBundle, TaskInfo
from .cells import label_text

DEFAULT_RATIOS = (0.7, 0.15, 0.15)


class SplitOptions(BaseModel):
    """Train/val/test: by ``ratios`` (default) or by a split column/array (subclasses)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    ratios: list[float] | None = Field(
        None, description="train, val, test shares summing to 1 (default 0.7, 0.15, 0.15); "
                          "stratified by class for per-series classification")
    seed: NumpySeed = Field(0, description="seed of the ratio split (independent of the run "
                                           "seed)")

    #: the field naming a split column / array
    given: ClassVar[str] = ""

    @field_validator("ratios")
    @classmethod
    def _shares(cls, ratios: list[float] | None) -> list[float] | None:
        if ratios is None:
            return None
        if len(ratios) != 3:
            raise ValueError(f"give 3 shares (train, val, test), not {len(ratios)}")
        if min(ratios) <= 0:
            raise ValueError("every share must be > 0 (an empty split is an error)")
        if not math.isclose(sum(ratios), 1.0, abs_tol=1e-6):
            raise ValueError(f"shares {', '.join(map(str, ratios))} sum to {sum(ratios):g}, "
                             f"not 1")
        return ratios

    @model_validator(mode="after")
    def _one_way(self) -> SplitOptions:
        if self.ratios is not None and self.named is not None:
            raise ValueError(f"give either ratios or {self.given}, not both")
        return self

    @property
    def named(self) -> str | None:
        """The split column / array, or ``None`` for a ratio split."""
        return getattr(self, self.given)

    @property
    def shares(self) -> tuple[float, float, float]:
        return tuple(self.ratios) if self.ratios else DEFAULT_RATIOS


class ForecastOptions(BaseModel):
    """Predict the next ``horizon`` observations of ``channels`` from the history before them."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    horizon: PositiveInt = Field(description="observations to predict at the end of each series")
    channels: list[str | int] = Field(min_length=1, description="channels to predict (names; "
                                      "for arrays also 0-based channel indices)")


class OwnDataConfig(DatasetConfig):
    """Options of both kinds; subclasses add ``path``, ``split`` and how the file is read."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    task_kind: Literal["classify", "regress", "forecast"] = Field(
        "classify", alias="task",
        description="classify (classes from the labels), regress (numeric targets) or forecast")
    per_step: bool = Field(False, description="classify/regress: a label at every observation "
                                              "instead of one per series")
    classes: list[str | int] | None = Field(
        None, min_length=1, description="classify: the class names in order (default: the "
                                        "sorted labels found in the data)")
    forecast: ForecastOptions | None = Field(None, description="task forecast: horizon, channels")
    normalise: bool = Field(True, description="z-score every channel with training statistics")
    time_channel: bool = Field(True, description="add the observation time as the first channel")

    def channel_0_is_time(self) -> bool:
        return self.time_channel

    @field_validator("path", check_fields=False)
    @classmethod
    def _relative_to_spec(cls, value: Any, info: ValidationInfo) -> Any:
        """A relative path is relative to the spec file that wrote it (else the working dir)."""
        source = (info.context or {}).get("source")
        if source is None:
            return value
        if isinstance(value, list):
            return [_resolve(v, source, ("data", "path", i)) for i, v in enumerate(value)]
        return _resolve(value, source, ("data", "path"))

    @field_validator("classes")
    @classmethod
    def _distinct(cls, classes: list | None) -> list[str] | None:
        if classes is None:
            return None
        names = [label_text(c) for c in classes]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"class {twice[0]!r} is listed twice")
        return names

    # ----- what the subclasses provide
    def _option_problems(self) -> list[tuple[str, str]]:
        """Problems of the kind's own options (columns, paths)."""
        return []

    def _labels_for_classes(self) -> list[str]:
        """Every label (as text, '' = missing) in the data, to derive the class list."""
        raise NotImplementedError

    def _n_targets(self) -> int:
        """Number of regression targets."""
        raise NotImplementedError

    # ----- shared
    def check(self, spec: Any) -> list[tuple[str, str]]:
        return self.problems()

    def problems(self) -> list[tuple[str, str]]:
        """Contradicting options as ``(dotted.path, message)``; empty when consistent."""
        out = []
        if self.task_kind == "forecast":
            if self.forecast is None:
                out.append(("data.task", "task 'forecast' needs forecast: {horizon: H, "
                                         "channels: [...]}"))
            if self.per_step:
                out.append(("data.per_step", "a forecast is one target per series (its next "
                                             "observations); per_step does not apply"))
        elif self.forecast is not None:
            out.append(("data.forecast", f"applies to task 'forecast' only (task is "
                                         f"'{self.task_kind}')"))
        if self.classes is not None and self.task_kind != "classify":
            out.append(("data.classes", f"applies to task 'classify' only (task is "
                                        f"'{self.task_kind}')"))
        return out + self._option_problems()

    def task(self) -> TaskInfo:
        if (stored := self.known_task()) is not None:  # a checkpoint's spec: no file read
            return stored
        if self.task_kind == "forecast":
            f = self.forecast
            return TaskInfo("regression", f.horizon * len(f.channels) if f else 1)
        if self.problems():  # reported by check(); nothing is read for a wrong spec
            n = len(self.classes or ()) or 1
            kind = "multiclass" if self.task_kind == "classify" else "regression"
            return TaskInfo(kind, n, self.per_step)
        if self.task_kind == "regress":
            return TaskInfo("regression", self._n_targets(), self.per_step)
        names = self.class_names()
        return TaskInfo("multiclass", len(names), self.per_step, tuple(names))

    def class_names(self) -> list[str]:
        from .cells import derive_classes

        return list(self.classes) if self.classes else derive_classes(
            self._labels_for_classes(), self.source_name())

    def forecast_channels(self) -> list[str | int]:
        """The forecast channels: names, or (arrays) 0-based indices."""
        return list(self.forecast.channels)

    def source_name(self) -> str:
        return str(self.path)

    def raise_problems(self) -> None:
        """For configs built in code (not validated as a spec): the same checks, as one error."""
        problems = self.problems()
        if problems:
            raise InputError("; ".join(f"{p}: {m}" for p, m in problems))

    def load(self, smoke: bool = False) -> DataBundle:
        raise NotImplementedError


def _resolve(value: Any, source: Any, key: tuple) -> Any:
    if not isinstance(value, str) or os.path.isabs(value):
        return value
    spec_file = Path(source.where(key).file)
    if not spec_file.is_file():  # an override on the command line: the working directory
        return value
    return os.path.abspath(spec_file.parent / value)


def existing(path: str | Path) -> Path:
    """``path`` as a Path, or one InputError naming it when it does not exist."""
    p = Path(path)
    if not p.exists():
        where = "" if p.is_absolute() else f" (looked in {Path.cwd()})"
        raise InputError(f"{p}: data file not found{where}")
    return p
