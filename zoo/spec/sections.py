"""The spec sections that are not plugins: initial state, training recipe, tracking.

Every option the papers' code used (learning-rate scaling, output-layer gradient scale, weight
penalty, selection metric, schedule, stopping) is a named field here, so a recipe is data.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator, model_validator

from ..limits import BatchSize, Epochs, Seed, Width


#: metric prefix of the training split evaluated like val (``evaluate_train``)
TRAIN_EVAL = "train_eval"
#: evaluated metric loss + weight penalty (recorded when ``weight_penalty`` > 0)
OBJECTIVE = "objective"
#: metrics recorded after every epoch (zoo/training/loop.py ``_train_epoch``)
EPOCH_METRICS = ("train/loss", "time/epoch_seconds", "solver/nfe", "lr")

Mode = Literal["min", "max"]
DeltaMode = Literal["abs", "rel"]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class InitialSpec(Section):
    """Where the initial state comes from (``auto``: the field family's default)."""

    kind: Literal["auto", "first_observation", "static", "zeros", "first_update"] = "auto"
    hidden: Width = Field(256, description="width of the static-feature network")


class OptimizerSpec(Section):
    kind: Literal["adam", "adamw", "sgd"] = "adam"
    lr: float = Field(1e-3, gt=0)
    lr_batch_scaling: bool = Field(
        False, description="multiply lr by batch_size/32, as the FWP/NCDE authors' code does")
    weight_decay: float = Field(0.0, ge=0)
    betas: tuple[float, float] = Field(
        (0.9, 0.999), description="Adam's (β1, β2): decay rates of the moment estimates")
    eps: float = Field(1e-8, gt=0)

    @field_validator("betas", mode="before")
    @classmethod
    def _two_betas(cls, value):
        if isinstance(value, (list, tuple)) and len(value) != 2:
            raise ValueError(f"expects 2 values (β1, β2), got {len(value)}")
        return value

    @model_validator(mode="after")
    def _adam_options(self) -> OptimizerSpec:
        """SGD has no moment estimates: ``betas`` or ``eps`` set away from their defaults with
        it would be ignored, so they are refused (the defaults, as a resolved spec writes them,
        pass)."""
        defaults = type(self).model_fields
        changed = [name for name in ("betas", "eps")
                   if getattr(self, name) != defaults[name].default]
        if self.kind == "sgd" and changed:
            raise ValueError(f"sgd takes lr, lr_batch_scaling and weight_decay, not "
                             f"{' or '.join(changed)} (Adam's and AdamW's)")
        return self


class ScheduleSpec(Section):
    """Learning-rate schedule: ``plateau`` is ReduceLROnPlateau on ``monitor``."""

    kind: Literal["none", "plateau"] = "none"
    monitor: str = "train/loss"
    mode: Mode = "min"
    patience: int = Field(2, ge=0)
    factor: float = Field(0.1, gt=0, lt=1)
    threshold: float = Field(1e-4, ge=0)
    min_lr: float = Field(0.0, ge=0)


class StopMonitor(Section):
    """One metric watched by early stopping; unset options take the ``stopping`` defaults."""

    metric: str = Field(description="recorded metric, e.g. train_eval/loss or val/accuracy")
    mode: Mode | None = Field(None, description="min or max (default: stopping.mode)")
    min_delta: float | None = Field(
        None, ge=0, description="least improvement that counts (default: stopping.min_delta)")
    delta_mode: DeltaMode | None = Field(
        None, description="abs or rel (default: stopping.delta_mode)")


class StoppingSpec(Section):
    """Early stopping on one metric (``monitor``) or several (``monitors``).

    A recorded value makes progress when it beats the monitor's best by more than
    ``min_delta``: absolute (``abs``: value > best + d, or value + d < best for ``min``) or
    relative (``rel``: value > best·(1 + d), or value·(1 + d) < best for ``min``). Training stops
    once ``patience`` evaluations (or epochs) have passed without progress, counted per monitor,
    on ``any`` monitor or on ``all`` of them.
    """

    monitor: str | None = Field(None, description="the one metric to watch")
    monitors: list[StopMonitor] | None = Field(
        None, min_length=1, description="several metrics to watch, instead of monitor")
    mode: Mode = Field("max", description="min or max, for monitor and for monitors entries "
                                           "that set none")
    min_delta: float = Field(0.0, ge=0, description="least improvement that counts, for "
                                                    "monitor and entries that set none")
    delta_mode: DeltaMode = Field("abs", description="abs or rel (a fraction of the best), for "
                                                     "monitor and entries that set none")
    patience: int | None = Field(None, ge=1, description="stale evaluations (or epochs) "
                                                         "that stop training")
    patience_unit: Literal["evaluations", "epochs"] = Field(
        "evaluations", description="evaluations: values recorded without progress; epochs: "
                                   "epochs since the last progress, checked when recorded")
    stop_on: Literal["any", "all"] = Field(
        "any", description="stop when any monitor is stale, or only when all are")

    @model_validator(mode="after")
    def _consistent(self) -> StoppingSpec:
        if self.monitor is not None and self.monitors is not None:
            raise ValueError("give monitor or monitors, not both (set the inherited one to null)")
        if bool(self.criteria()) != (self.patience is not None):
            raise ValueError("stopping needs both a monitor (or monitors) and patience "
                             "(or neither)")
        names = [m.metric for m in self.criteria()]
        if len(set(names)) < len(names):
            raise ValueError(f"monitors lists a metric twice: {', '.join(names)}")
        return self

    def criteria(self) -> list[StopMonitor]:
        """The watched metrics, every option resolved."""
        entries = self.monitors or (
            [StopMonitor(metric=self.monitor)] if self.monitor is not None else [])
        defaults = {"mode": self.mode, "min_delta": self.min_delta, "delta_mode": self.delta_mode}
        return [m.model_copy(update={k: v for k, v in defaults.items() if getattr(m, k) is None})
                for m in entries]


class TrainSpec(Section):
    epochs: Epochs = 10
    batch_size: BatchSize = 32
    eval_batch_size: BatchSize | None = None
    eval_every: PositiveInt = Field(1, description="evaluate every N epochs (and at the last)")
    eval_first: PositiveInt | None = Field(
        None, description="epoch of the first evaluation, then every eval_every epochs (and at "
                          "the last; default eval_every). 1 evaluates after epochs 1, 1 + N, "
                          "1 + 2N, ... as the FWP/NCDE authors' 0-based epoch % N == 0")
    eval_shuffle_drop_last: bool = Field(
        False, description="evaluate on shuffled full batches only (the FWP authors' loaders)")
    drop_last: bool = Field(
        False, description="drop the last incomplete training batch of every epoch, as the "
                           "FWP/NCDE authors' loaders (drop_last=True)")
    evaluate_train: bool = Field(
        False, description="at each evaluation also evaluate the training split like val, "
                           "recorded as train_eval/<metric>")
    optimizer: OptimizerSpec = OptimizerSpec()
    schedule: ScheduleSpec = ScheduleSpec()
    stopping: StoppingSpec = StoppingSpec()
    select: str | None = Field(
        None, description="metric that selects the best checkpoint, e.g. val/accuracy "
                          "(default: the readout's)")
    select_mode: Mode | None = None
    output_grad_scale: float = Field(1.0, gt=0, description="gradient multiplier on the readout")
    output_lr_scale: float = Field(1.0, gt=0, description="learning-rate multiplier on the readout")
    weight_penalty: float = Field(0.0, ge=0, description="loss += c * sum of per-tensor L2 norms")
    penalty_scope: Literal["model", "field", "without_static"] = Field(
        "model", description="parameters the weight penalty covers: model (all), field (the "
        "vector field's), without_static (all but the static-feature initial-state network's)")
    grad_clip: float | None = Field(None, gt=0)
    dtype: Literal["float32", "float64"] = "float32"
    seeds: list[Seed] = Field([0], min_length=1, description="seeds a sweep runs by default")

    def evaluates(self, epoch: int) -> bool:
        """Whether validation (and ``evaluate_train``) is evaluated after ``epoch`` (1-based):
        at ``eval_first``, every ``eval_every`` epochs after it, and at the last epoch."""
        first = self.eval_every if self.eval_first is None else self.eval_first
        return (epoch >= first and (epoch - first) % self.eval_every == 0) or epoch == self.epochs

    def watched_metrics(self) -> list[tuple[str, str]]:
        """``(dotted spec path, metric)`` of every metric the recipe watches: ``select``, the
        stopping monitor(s) and the plateau schedule's monitor."""
        watched = [("train.select", self.select)] if self.select is not None else []
        if self.stopping.monitors is not None:
            watched += [(f"train.stopping.monitors.{i}.metric", m.metric)
                        for i, m in enumerate(self.stopping.monitors)]
        elif self.stopping.monitor is not None:
            watched.append(("train.stopping.monitor", self.stopping.monitor))
        if self.schedule.kind != "none":
            watched.append(("train.schedule.monitor", self.schedule.monitor))
        return watched

    def recorded_metrics(self, evaluated: tuple[str, ...] | None) -> list[str]:
        """Every metric a run records, given the names the readout reports (``evaluated``;
        ``None``: unknown, only the per-epoch metrics are listed)."""
        names = list(evaluated or ())
        if names and self.weight_penalty:
            names.append(OBJECTIVE)
        prefixes = ["val"] + ([TRAIN_EVAL] if self.evaluate_train else [])
        return list(EPOCH_METRICS) + [f"{p}/{n}" for p in prefixes for n in names]

    @model_validator(mode="after")
    def _watched_metrics_recorded(self) -> TrainSpec:
        watched = [("select", self.select or "")]
        watched += [("stopping", m.metric) for m in self.stopping.criteria()]
        if self.schedule.kind != "none":
            watched.append(("schedule", self.schedule.monitor))
        for option, metric in watched:
            if metric.startswith(f"{TRAIN_EVAL}/") and not self.evaluate_train:
                needs = "evaluate_train: true"
            elif metric.endswith(f"/{OBJECTIVE}") and not self.weight_penalty:
                needs = "weight_penalty > 0"
            else:
                continue
            raise ValueError(f"{option} watches '{metric}', which is recorded only with {needs}")
        return self


class TrackingSpec(Section):
    experiment: str | None = Field(None, description="MLflow experiment (default: spec name)")
    uri: str | None = Field(None, description="tracking URI (default: MLFLOW_TRACKING_URI or "
                                              "sqlite:///mlruns.db in the working directory)")
    run_name: str | None = None
    plots: bool = True
    log_model: bool = Field(True, description="log the run's MLflow pyfunc model, named "
                                              "`model` (table and arrays data)")
    register_model: str | None = Field(None, description="register the logged model under "
                                                         "this name in the model registry")

    @field_validator("uri")
    @classmethod
    def _store_is_usable(cls, uri: str | None) -> str | None:
        """The checks of the store that need no network (scheme, an SQLite path that is a
        folder or not an MLflow store), at validation rather than when the run starts."""
        from ..errors import InputError
        from ..tracking.mlflow_run import check_local

        if uri is not None:
            try:
                check_local(uri)
            except InputError as exc:
                raise ValueError(str(exc).removeprefix(f"tracking store {uri}: ")) from None
        return uri
