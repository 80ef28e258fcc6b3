"""The spec sections that are not plugins: initial state, training recipe, tracking.

Every option the papers' code used (learning-rate scaling, output-layer gradient scale, weight
penalty, selection metric, schedule, stopping) is a named field here, so a recipe is data.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InitialSpec(Section):
    """Where the initial state comes from (``auto``: the field family's default)."""

    kind: Literal["auto", "first_observation", "static", "zeros", "first_update"] = "auto"
    hidden: PositiveInt = Field(256, description="width of the static-feature network")


class OptimizerSpec(Section):
    kind: Literal["adam", "adamw", "sgd"] = "adam"
    lr: float = Field(1e-3, gt=0)
    lr_batch_scaling: bool = Field(
        False, description="multiply lr by batch_size/32, as the FWP/NCDE authors' code does")
    weight_decay: float = Field(0.0, ge=0)
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = Field(1e-8, gt=0)


class ScheduleSpec(Section):
    """Learning-rate schedule: ``plateau`` is ReduceLROnPlateau on ``monitor``."""

    kind: Literal["none", "plateau"] = "none"
    monitor: str = "train/loss"
    mode: Literal["min", "max"] = "min"
    patience: int = Field(2, ge=0)
    factor: float = Field(0.1, gt=0, lt=1)
    threshold: float = Field(1e-4, ge=0)
    min_lr: float = Field(0.0, ge=0)


class StoppingSpec(Section):
    """Early stopping: stop when ``monitor`` has not improved for ``patience`` evaluations."""

    monitor: str | None = None
    mode: Literal["min", "max"] = "max"
    patience: int | None = Field(None, ge=1)
    min_delta: float = Field(0.0, ge=0)


class TrainSpec(Section):
    epochs: PositiveInt = 10
    batch_size: PositiveInt = 32
    eval_batch_size: PositiveInt | None = None
    eval_every: PositiveInt = 1
    eval_shuffle_drop_last: bool = Field(
        False, description="evaluate on shuffled full batches only (the FWP authors' loaders)")
    optimizer: OptimizerSpec = OptimizerSpec()
    schedule: ScheduleSpec = ScheduleSpec()
    stopping: StoppingSpec = StoppingSpec()
    select: str | None = Field(
        None, description="metric that selects the best checkpoint, e.g. val/accuracy "
                          "(default: the readout's)")
    select_mode: Literal["min", "max"] | None = None
    output_grad_scale: float = Field(1.0, gt=0, description="gradient multiplier on the readout")
    output_lr_scale: float = Field(1.0, gt=0, description="learning-rate multiplier on the readout")
    weight_penalty: float = Field(0.0, ge=0, description="loss += c * sum of per-tensor L2 norms")
    penalty_scope: Literal["model", "field"] = "model"
    grad_clip: float | None = Field(None, gt=0)
    dtype: Literal["float32", "float64"] = "float32"
    seeds: list[int] = Field([0], min_length=1, description="seeds a sweep runs by default")

    @model_validator(mode="after")
    def _stopping_complete(self) -> TrainSpec:
        if (self.stopping.monitor is None) != (self.stopping.patience is None):
            raise ValueError("stopping needs both monitor and patience (or neither)")
        return self


class TrackingSpec(Section):
    experiment: str | None = Field(None, description="MLflow experiment (default: spec name)")
    uri: str | None = Field(None, description="tracking URI (default: MLFLOW_TRACKING_URI or "
                                              "sqlite:///mlruns.db in the working directory)")
    run_name: str | None = None
    plots: bool = True
