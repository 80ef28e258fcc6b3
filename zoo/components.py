"""Extension contracts: the base config class of every kind of component.

A plugin is a Pydantic config class with a literal ``kind`` (its entry-point name) whose methods
build the component; the methods each kind must implement are abstract, so a class that lacks one
cannot be instantiated. Options are validated by Pydantic before anything is built; :meth:`check`
adds constraints that span several sections of the spec (it returns located messages).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .limits import BatchSize, Epochs, Layers, Seed, Width  # noqa: F401  (for plugins' options)

if TYPE_CHECKING:
    import torch
    from torch import nn

    from .build_context import BuildContext
    from .series import DataBundle, TaskInfo


class ComponentConfig(BaseModel):
    """Options of one component; subclasses declare ``kind: Literal["name"] = "name"``."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    def check(self, spec: Any) -> list[tuple[str, str]]:
        """Cross-section constraints as ``(dotted.path, message)`` pairs; empty when compatible."""
        return []


#: the task a stored model was trained on, while its spec is validated (:func:`stored_task`)
_STORED_TASK: ContextVar[TaskInfo | None] = ContextVar("stored_task", default=None)


@contextmanager
def stored_task(task: TaskInfo) -> Iterator[None]:
    """Within the block, datasets whose :meth:`DatasetConfig.task` reads their files answer
    ``task`` instead: a checkpoint's spec validates without its training data."""
    token = _STORED_TASK.set(task)
    try:
        yield
    finally:
        _STORED_TASK.reset(token)


class DatasetConfig(ComponentConfig):
    """A dataset: how to obtain, verify, preprocess and split it."""

    #: whether channel 0 of the loaded values is the observation time (a field that reads the
    #: time from it, such as ``gru_ode``, is refused where it is not); ``None``: not declared
    time_first: ClassVar[bool | None] = None

    def channel_0_is_time(self) -> bool | None:
        """:attr:`time_first`, for a dataset whose options decide it (own data, ``drop``)."""
        return self.time_first

    @abstractmethod
    def task(self) -> TaskInfo:
        """What is predicted (known without loading the data, for validation; a dataset that
        reads its files for it answers :func:`stored_task`'s task when one is set)."""

    @staticmethod
    def known_task() -> TaskInfo | None:
        """The task set by :func:`stored_task`, else ``None``."""
        return _STORED_TASK.get()

    @abstractmethod
    def load(self, smoke: bool = False) -> DataBundle:
        """Train/val/test splits as tensors on a common time grid (NaN = not observed)."""


class ControlConfig(ComponentConfig):
    """How discrete observations become a path the vector field can read.

    ``provides`` names what the path offers: ``"evaluate"`` (X(t)), ``"derivative"`` (dX/dt),
    ``"steps"`` (the raw observations with their elapsed times, for discrete-update models).
    """

    provides: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def prepare(self, times: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Precompute per-series coefficients once per split: ``values`` is (N, T, C)."""

    @abstractmethod
    def path(self, times: torch.Tensor, coeffs: torch.Tensor) -> Any:
        """The path object for one batch of coefficients."""

    def channels(self, input_channels: int) -> int:
        """Number of channels of the path built from ``input_channels`` observed channels."""
        return input_channels


#: a body's ``implementation_used`` when its field has no fast path
NO_FAST_PATH = "generic (no fast path)"


class FieldConfig(ComponentConfig):
    """A vector-field family together with its initial state and feature map.

    ``requires`` lists what it reads from the control (see :class:`ControlConfig`); ``initials``
    the ``model.initial.kind`` values it supports, the first being its default.
    """

    requires: ClassVar[frozenset[str]] = frozenset({"evaluate"})
    initials: ClassVar[tuple[str, ...]] = ("first_observation",)
    #: solver kinds it can be integrated with
    solvers: ClassVar[tuple[str, ...]] = ("torchdiffeq",)
    #: a solver section that suits the family when nothing else is known (examples, tests)
    example_solver: ClassVar[dict] = {"kind": "torchdiffeq", "method": "rk4"}
    #: False for discrete updates that no solver enters (the LTC suite's LSTM, CT-GRU): the
    #: spec may then leave ``model.solver`` out, and ``example_solver`` stands in for it
    needs_solver: ClassVar[bool] = True
    #: whether its body has a fast path (``model.implementation: fast``) that computes what
    #: the generic path does; ``tests/fast/test_every_fast_path.py`` holds both to it
    fast_path: ClassVar[bool] = False

    @abstractmethod
    def build(self, ctx: BuildContext) -> nn.Module:
        """The model body: ``forward(path, batch) -> features`` with attribute ``features``."""


class SolverConfig(ComponentConfig):
    """A numerical method for the initial value problem dy/dt = f(t, y)."""

    #: whether the continuous adjoint can be used with it
    supports_adjoint: ClassVar[bool] = True

    @abstractmethod
    def odeint_kwargs(self, t: torch.Tensor) -> dict[str, Any]:
        """The keyword arguments of a torchdiffeq ``odeint`` over the times ``t`` (``method``,
        ``options``, ``rtol``, ``atol``), which the backprop mode passes on."""


class BackpropConfig(ComponentConfig):
    """How gradients flow through the solve (through the solver steps, or a continuous adjoint)."""

    @abstractmethod
    def odeint(self, func: nn.Module, y0: torch.Tensor, t: torch.Tensor, **solver_kwargs: Any):
        """y(t) of dy/dt = func(t, y), y(t[0]) = y0, with gradients as this mode computes them."""


class ReadoutConfig(ComponentConfig):
    """The task head: output layer, loss and metrics."""

    init: Literal["torch", "glorot_uniform", "truncated_normal"] = Field(
        "torch", description="initial output layer: torch's nn.Linear default; TensorFlow's Dense "
                             "(Glorot-uniform weights, zero bias: the LTC authors' readout); or "
                             "TF's TruncatedNormal() weights and zero bias (their traffic, power)")

    #: task kinds (``TaskInfo.kind``) it can serve
    tasks: ClassVar[tuple[str, ...]] = ()

    def linear(self, features: int, outputs: int) -> nn.Module:
        """The output layer y = x W + b, initialised as ``init`` says."""
        from torch import nn

        from .dense import glorot_linear, truncated_normal_linear

        make = {"torch": nn.Linear, "glorot_uniform": glorot_linear,
                "truncated_normal": truncated_normal_linear}[self.init]
        return make(features, outputs)

    @abstractmethod
    def build(self, features: int, task: TaskInfo) -> nn.Module:
        """The head from the body's ``features`` to the task's outputs."""

    @abstractmethod
    def loss(self, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The training loss of a batch's outputs against its targets."""

    @abstractmethod
    def metrics(self, outputs: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
        """Metrics on a whole split (outputs concatenated over batches)."""

    #: the names of the metrics :meth:`metrics` reports (``None``: not declared, and then the
    #: metrics that ``train.select``, the stopping monitors and the schedule watch are checked
    #: only for their prefix)
    metric_names: ClassVar[tuple[str, ...] | None] = None

    def reported_metrics(self) -> tuple[str, ...] | None:
        """The names :meth:`metrics` reports with these options (default: ``metric_names``);
        validation checks every watched ``val/<name>`` and ``train_eval/<name>`` against them."""
        return self.metric_names

    #: metric that selects the checkpoint when ``train.select`` is not given, and its direction
    default_metric: ClassVar[tuple[str, str]] = ("loss", "min")

    #: the names of its metrics that improve downwards (the others improve upwards)
    minimised: ClassVar[frozenset[str]] = frozenset({"loss", "objective"})

    def mode_of(self, metric: str) -> str:
        """``min`` or ``max``: the direction in which ``metric`` (``val/mae``,
        ``train_eval/loss``, ...) improves: :attr:`default_metric`'s for that metric, downwards
        for the names in :attr:`minimised` and any other loss, else upwards."""
        name = metric.rpartition("/")[2]
        if name == self.default_metric[0]:
            return self.default_metric[1]
        return "min" if name in self.minimised or "loss" in name else "max"
