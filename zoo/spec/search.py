"""The ``search:`` section: a hyperparameter search over dotted spec keys (``zoo search``).

    search:
      trials: 20
      sampler: tpe                 # tpe, random or grid
      pruner: median               # median, halving or none: stop poor trials early
      metric: val/accuracy         # default: the run's selection metric (train.select)
      space:
        train.optimizer.lr: {low: 1.0e-4, high: 1.0e-2, log: true}
        model.field.hidden: {low: 16, high: 128, step: 16}
        model.solver.method: {choices: [rk4, dopri5]}

A range of integers (``low``/``high`` both integers) draws integers; ``step`` discretises, ``log``
draws on a log scale. The grid sampler needs every parameter discrete (choices, or a range with
``step``). A trial is the spec with the drawn values as overrides and without its ``search:``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from ..limits import NumpySeed

Number = int | float
#: grids larger than this are refused (a typo in a step, not a search)
MAX_GRID = 100_000


class Parameter(BaseModel):
    """One searched key: a range (``low``, ``high``, optional ``step``, ``log``) or ``choices``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: Number | None = None
    high: Number | None = None
    step: Number | None = Field(None, gt=0)
    log: bool = False
    choices: list[Any] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_kind(self) -> Parameter:
        ranged = self.low is not None or self.high is not None
        if self.choices is not None:
            if ranged or self.step is not None or self.log:
                raise ValueError("give either choices or a range (low, high), not both")
            return self
        if self.low is None or self.high is None:
            raise ValueError("give low and high (a range) or choices")
        if any(isinstance(v, bool) for v in (self.low, self.high, self.step)):
            raise ValueError("low, high and step are numbers, not booleans")
        if not all(math.isfinite(v) for v in (self.low, self.high, self.step or 1)):
            raise ValueError("low, high and step must be finite numbers")
        if not self.low < self.high:
            raise ValueError(f"low ({self.low}) must be below high ({self.high})")
        if self.log and self.low <= 0:
            raise ValueError(f"a log scale needs low > 0, not {self.low}")
        if self.log and self.step is not None:
            raise ValueError("give step or log, not both")
        if self.integer and self.step is not None and not float(self.step).is_integer():
            raise ValueError(f"an integer range needs an integer step, not {self.step}")
        return self

    @property
    def integer(self) -> bool:
        return isinstance(self.low, int) and isinstance(self.high, int)

    def grid_size(self) -> int | None:
        """How many values a discrete parameter has (None: continuous)."""
        if self.choices is not None:
            return len(self.choices)
        step = self.step if self.step is not None else (1 if self.integer else None)
        return None if step is None else math.floor((self.high - self.low) / step + 1e-9) + 1

    def grid(self) -> list[Any] | None:
        """Every value of a discrete parameter (None: continuous)."""
        if self.choices is not None:
            return list(self.choices)
        count = self.grid_size()
        if count is None:
            return None
        step = self.step if self.step is not None else 1
        values = [self.low + i * step for i in range(count)]
        return [int(v) for v in values] if self.integer else values


class SearchSpec(BaseModel):
    """``search:``: the space, objective, budget, sampler and pruner of a search."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    space: dict[str, Parameter] = Field(min_length=1, description="dotted spec key -> values")
    metric: str | None = Field(None, description="objective, a validation metric the run "
                               "records (default: train.select, else the readout's)")
    direction: Literal["maximize", "minimize"] | None = Field(
        None, description="default: the run's select_mode for its selection metric, else the "
                          "direction the metric improves in")
    trials: PositiveInt | None = Field(None, description="trials in all, across resumes and "
                                       "workers (default 20; the grid's size for grid)")
    sampler: Literal["tpe", "random", "grid"] = "tpe"
    pruner: Literal["median", "halving", "none"] = Field(
        "median", description="stop a trial whose validation metric falls behind the others' "
                              "at the same epoch (median) or by successive halving")
    seed: NumpySeed = Field(0, description="seed of the sampler (each trial trains with the "
                                           "spec's seed)")
    study: str | None = Field(None, description="study name (default: the spec's name)")
    storage: str | None = Field(None, description="SQLAlchemy URL of the Optuna database "
                                "(default: optuna.db beside a SQLite run store)")
    heartbeat: PositiveInt = Field(20, description="seconds between a running trial's "
                                   "signs of life; a trial silent for 3 times as long (its "
                                   "worker died) is failed and its values tried once more")

    @model_validator(mode="after")
    def _grid_is_discrete(self) -> SearchSpec:
        if self.sampler != "grid":
            return self
        sizes = {k: p.grid_size() for k, p in self.space.items()}
        continuous = [k for k, n in sizes.items() if n is None]
        if continuous:
            raise ValueError(f"the grid sampler needs discrete values: give choices or a "
                             f"step for {', '.join(continuous)}")
        points = math.prod(sizes.values())
        if points > MAX_GRID:
            shown = " × ".join(f"{n:,} ({k})" for k, n in sizes.items())
            raise ValueError(f"the grid has {shown} = {points:,} points, more than "
                             f"{MAX_GRID:,}: a larger step or fewer choices")
        if self.trials is not None and self.trials > points:
            raise ValueError(f"trials: {self.trials} is more than the grid's {points} points; "
                             f"leave trials out to take each point once")
        return self

    def total_trials(self) -> int:
        if self.trials is not None:
            return self.trials
        if self.sampler == "grid":
            return math.prod(p.grid_size() for p in self.space.values())
        return 20

    def problems(self, spec: Any, src: Any) -> list[tuple[tuple[str, ...], str]]:
        """``(path in the spec file, message)`` for keys the spec does not have, values the
        spec refuses and an objective the run does not record."""
        from ..suggest import did_you_mean
        from .validate import spec_value_problem

        resolved = spec.model_dump(mode="json")
        out = []
        for key, parameter in self.space.items():
            where = ("search", "space", key)
            if key.split(".")[0] in ("search", "seed", "name"):
                out.append((where, f"'{key}' cannot be searched"))
            elif not _has(resolved, key):
                out.append((where, f"'{key}' is not a key of this spec"
                                   f"{did_you_mean(key, _keys(resolved))}"))
            else:
                for value in parameter.choices or [parameter.low, parameter.high]:
                    if message := spec_value_problem(src, key, value):
                        out.append((where, f"{value!r}: {message}"))
                        break
        metric = self.objective(spec)[0]
        reported = getattr(spec.model.readout, "reported_metrics", lambda: None)()
        recorded = [m for m in spec.train.recorded_metrics(reported)
                    if m.startswith(("val/", "train_eval/"))]
        if not metric.startswith(("val/", "train_eval/")) or (reported and metric not in recorded):
            out.append((("search", "metric"), f"'{metric}' is not a validation metric the run "
                                         f"records{did_you_mean(metric, recorded)}"))
        return out

    def objective(self, spec: Any) -> tuple[str, str]:
        """The objective metric and ``maximize``/``minimize``: as the run selects its best
        epoch unless given."""
        selected = spec.train.select or f"val/{spec.model.readout.default_metric[0]}"
        metric = self.metric or selected
        if self.direction is not None:
            return metric, self.direction
        if metric == selected and spec.train.select_mode:
            mode = spec.train.select_mode
        else:
            mode = spec.model.readout.mode_of(metric)
        return metric, "maximize" if mode == "max" else "minimize"


def _has(data: Any, dotted: str) -> bool:
    for part in dotted.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return False
    return True


def _keys(data: Any, prefix: str = "") -> list[str]:
    if not isinstance(data, dict):
        return [prefix[:-1]]
    return [k for name, v in data.items() for k in _keys(v, f"{prefix}{name}.")]
