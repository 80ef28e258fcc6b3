"""The plugin API: what a third-party component imports from nde-zoo, and the contracts it meets.

A component is a Pydantic config class registered as an entry point of one of the ``zoo.*``
groups (see ``docs/plugins.md``): it subclasses the base config of its group below, declares
``kind: Literal["<entry-point name>"]`` and implements the base's abstract methods. What a
field's ``build()`` returns meets :class:`FieldBody`; the paths a control builds meet
:class:`ControlPath` for what its ``provides`` names. Anything else in ``zoo`` is internal and
may change.

Importing this module loads no torch: the names that need it (``BuildContext``, ``DataShape``,
``first_observation``, ``final_states``) are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .components import (BackpropConfig, ComponentConfig, ControlConfig, DatasetConfig,
                         FieldConfig, ReadoutConfig, SolverConfig, stored_task)
from .errors import InputError, ZooError
from .limits import BatchSize, Epochs, Layers, Seed, Width
from .series import DataBundle, SeriesSplit, TaskInfo

if TYPE_CHECKING:
    import torch

    from .build_context import BuildContext, DataShape
    from .fields.trajectory import final_states, first_observation
    from .series import Batch

__all__ = [
    "BackpropConfig", "BatchSize", "BuildContext", "ComponentConfig", "ControlConfig",
    "ControlPath", "DataBundle", "DataShape", "DatasetConfig", "Epochs", "FieldBody",
    "FieldConfig", "InputError", "Layers", "ReadoutConfig", "Seed", "SeriesSplit",
    "SolverConfig", "TaskInfo", "Width", "ZooError", "final_states", "first_observation",
    "stored_task",
]

_LAZY = {"BuildContext": "build_context", "DataShape": "build_context",
         "first_observation": "fields.trajectory", "final_states": "fields.trajectory"}


@runtime_checkable
class ControlPath(Protocol):
    """A batch's path X: ``grid_points`` are the observation times; ``evaluate`` (X(t)) and
    ``derivative`` (dX/dt) exist when the control ``provides`` them."""

    grid_points: torch.Tensor

    def evaluate(self, t: torch.Tensor) -> torch.Tensor: ...

    def derivative(self, t: torch.Tensor) -> torch.Tensor: ...


@runtime_checkable
class FieldBody(Protocol):
    """The module a field's ``build()`` returns: ``body(path, batch)`` gives the features the
    readout reads, ``features`` wide. Optional attributes the model uses when present:
    ``vector_field`` (the parameters of ``penalty_scope: field``), ``penalty()`` (a regulariser
    added to the training loss), ``constrain()`` (called after each optimiser step) and
    ``implementation_used`` (``"fast"`` or ``"generic ..."``, for a field that declares
    ``fast_path``)."""

    features: int

    def __call__(self, path: Any, batch: Batch) -> torch.Tensor: ...


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f"zoo.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'zoo.plugin' has no attribute {name!r}")
