"""Wirings of the ncps package as spec options (the ``wiring:`` of the ``cfc`` and ``ltc`` fields).

A wiring of N neurons read by C inputs is an adjacency matrix A (N, N) and a sensory adjacency
A^s (C, N) with entries in {−1, 0, +1} (no synapse, or its polarity: inhibitory / excitatory),
its output (motor) neurons and its layers. Each option below builds exactly what the ncps class of
the same name builds for the same seed, drawing the same random numbers in the same order:

* ``fully_connected`` (ncps ``FullyConnected``): every synapse, polarity drawn uniformly from
  {−1, +1, +1} by ``numpy.random.default_rng(seed)``, recurrent synapses source-major, then the
  sensory ones; one layer of all neurons, outputs the first ``output_dim``.
* ``ncp`` (ncps ``NCP``; Lechner et al., Nature Machine Intelligence 2020): neuron ids
  [motor, command, inter], layers [inter, command, motor]; with ``numpy.random.RandomState(seed)``
  each sensory input reaches ``sensory_fanout`` inter neurons, each inter neuron
  ``inter_fanout`` command neurons, ``recurrent_command_synapses`` random command → command
  synapses, each motor neuron is reached by ``motor_fanin`` command neurons; neurons left
  unconnected get a few random partners. Polarities uniform on {−1, +1}.
* ``auto_ncp`` (ncps ``AutoNCP``): an ``ncp`` sized from the neuron count, the outputs and a
  sparsity level.

NumPy is imported when a wiring is built, not when a spec is validated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, model_validator

from ..limits import NumpySeed, Width

if TYPE_CHECKING:
    import numpy as np



@dataclass(frozen=True)
class Wiring:
    """A built wiring: adjacency (N, N) and sensory adjacency (C, N) in {−1, 0, 1}, the number of
    output neurons (ids 0 … outputs − 1) and the neuron ids of each layer."""

    adjacency: np.ndarray
    sensory: np.ndarray
    outputs: int
    layers: tuple[tuple[int, ...], ...]

    @property
    def units(self) -> int:
        return self.adjacency.shape[0]


class _WiringOption(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    def neurons(self, units: int) -> int:
        """N for a field of ``units`` units (raises ValueError where they do not fit)."""
        return units

    def all_to_all(self, units: int) -> bool:
        """Whether every synapse exists and every neuron is an output."""
        return False

    def build(self, inputs: int, units: int) -> Wiring:
        raise NotImplementedError


class FullyConnectedWiring(_WiringOption):
    """All-to-all synapses with random polarities (ncps ``FullyConnected``)."""

    kind: Literal["fully_connected"] = "fully_connected"
    output_dim: Width | None = Field(None, description="output (motor) neurons, the first ones "
                                                       "(default: all)")
    self_connections: bool = Field(True, description="synapses from a neuron to itself")
    seed: NumpySeed = Field(1111, description="seed of the polarities (ncps erev_init_seed)")

    def neurons(self, units: int) -> int:
        if self.output_dim is not None and self.output_dim > units:
            raise ValueError(f"wiring output_dim {self.output_dim} is more than the {units} units")
        return units

    def all_to_all(self, units: int) -> bool:
        return self.self_connections and self.output_dim in (None, units)

    def build(self, inputs: int, units: int) -> Wiring:
        import numpy as np

        rng = np.random.default_rng(self.seed)
        keep = np.ones((units, units), dtype=bool)
        if not self.self_connections:
            np.fill_diagonal(keep, False)
        adjacency = np.zeros((units, units), dtype=np.int32)
        adjacency[keep] = rng.choice([-1, 1, 1], size=int(keep.sum()))  # row-major: by source
        sensory = rng.choice([-1, 1, 1], size=(inputs, units)).astype(np.int32)
        return Wiring(adjacency, sensory, self.output_dim or units, (tuple(range(units)),))


class NCPWiring(_WiringOption):
    """Neural Circuit Policy: sensory → inter → command (recurrent) → motor (ncps ``NCP``)."""

    kind: Literal["ncp"] = "ncp"
    inter_neurons: Width = Field(description="inter neurons (first layer)")
    command_neurons: Width = Field(description="command neurons (second layer)")
    motor_neurons: Width = Field(description="motor neurons (third layer, the outputs)")
    sensory_fanout: Width = Field(description="inter neurons each input reaches")
    inter_fanout: Width = Field(description="command neurons each inter neuron reaches")
    recurrent_command_synapses: NonNegativeInt = Field(
        description="random command → command synapses")
    motor_fanin: Width = Field(description="command neurons reaching each motor neuron")
    seed: NumpySeed = Field(22222, description="seed of the connections and polarities")

    @model_validator(mode="after")
    def _fan_sizes(self) -> NCPWiring:
        for fan, layer in [("sensory_fanout", "inter_neurons"), ("inter_fanout", "command_neurons"),
                           ("motor_fanin", "command_neurons")]:
            if getattr(self, fan) > getattr(self, layer):
                raise ValueError(f"{fan} {getattr(self, fan)} is more than the "
                                 f"{getattr(self, layer)} {layer}")
        return self

    @property
    def total(self) -> int:
        return self.inter_neurons + self.command_neurons + self.motor_neurons

    def neurons(self, units: int) -> int:
        return self.total

    def build(self, inputs: int, units: int | None = None) -> Wiring:
        import numpy as np

        rng = np.random.RandomState(self.seed)
        motor = list(range(self.motor_neurons))
        command = list(range(len(motor), len(motor) + self.command_neurons))
        inter = list(range(len(motor) + len(command), self.total))
        adjacency = np.zeros((self.total, self.total), dtype=np.int32)
        sensory = np.zeros((inputs, self.total), dtype=np.int32)

        def link(matrix: np.ndarray, transpose: bool = False):
            def add(hub: int, pick: int) -> None:
                matrix[(pick, hub) if transpose else (hub, pick)] = rng.choice([-1, 1])
            return add

        _fan(rng, list(range(inputs)), inter, self.sensory_fanout, link(sensory), inputs)
        # ncps caps the fallback fan-in of command neurons by their own count, not the inter one
        _fan(rng, inter, command, self.inter_fanout, link(adjacency), len(command))
        for _ in range(self.recurrent_command_synapses):
            src, dest = rng.choice(command), rng.choice(command)
            adjacency[src, dest] = rng.choice([-1, 1])
        _fan(rng, motor, command, self.motor_fanin, link(adjacency, transpose=True), len(motor))
        return Wiring(adjacency, sensory, len(motor), (tuple(inter), tuple(command), tuple(motor)))


def _fan(rng: np.random.RandomState, hubs: list[int], picks: list[int], count: int, add,
         cap: int) -> None:
    """Each hub links to ``count`` distinct random picks; each pick no hub reached then links to
    clip(⌊|hubs|·count/|picks|⌋, 1, cap) distinct random hubs (ncps's order of draws)."""
    import numpy as np

    unreached = list(picks)
    for hub in hubs:
        for pick in rng.choice(picks, size=count, replace=False):
            if pick in unreached:
                unreached.remove(pick)
            add(hub, pick)
    fallback = np.clip(int(len(hubs) * count / len(picks)), 1, cap)
    for pick in unreached:
        for hub in rng.choice(hubs, size=fallback, replace=False):
            add(hub, pick)


class AutoNCPWiring(_WiringOption):
    """An NCP sized from the neuron count, the outputs and a sparsity level (ncps ``AutoNCP``)."""

    kind: Literal["auto_ncp"] = "auto_ncp"
    output_size: Width = Field(description="motor neurons (outputs); less than units − 2")
    sparsity_level: float = Field(0.5, ge=0.1, le=1.0, description="0.1 (dense) … 1 (sparse)")
    seed: NumpySeed = Field(22222, description="seed of the connections and polarities")

    def ncp(self, units: int) -> NCPWiring:
        """The NCP that ncps's ``AutoNCP(units, output_size, sparsity_level, seed)`` builds."""
        if self.output_size >= units - 2:
            raise ValueError(f"wiring output_size {self.output_size} must be less than units − 2 "
                             f"= {units - 2}")
        density = 1.0 - self.sparsity_level
        command = max(int(0.4 * (units - self.output_size)), 1)
        inter = units - self.output_size - command
        return NCPWiring(inter_neurons=inter, command_neurons=command,
                         motor_neurons=self.output_size,
                         sensory_fanout=max(int(inter * density), 1),
                         inter_fanout=max(int(command * density), 1),
                         recurrent_command_synapses=max(int(command * density * 2), 1),
                         motor_fanin=max(int(command * density), 1), seed=self.seed)

    def neurons(self, units: int) -> int:
        return self.ncp(units).total

    def build(self, inputs: int, units: int) -> Wiring:
        return self.ncp(units).build(inputs)


#: the ``wiring:`` option of a field
WiringOption = Annotated[FullyConnectedWiring | NCPWiring | AutoNCPWiring,
                         Field(discriminator="kind")]


def settle_units(config: Any) -> None:
    """Set a field config's ``units`` to its neuron count: the count an ``ncp`` wiring brings
    when ``units`` was not set in the spec (a resolved spec then writes that count, and loads
    again). A ValueError where a ``units`` set in the spec does not fit the wiring. Called from
    the config's validator, as validation completes (the config is frozen afterwards)."""
    if config.wiring is None:
        return
    neurons = config.wiring.neurons(config.units)
    if "units" in config.model_fields_set and neurons != config.units:
        raise ValueError(f"the ncp wiring has {neurons} neurons (inter + command + motor); "
                         f"leave units out or set it to {neurons}")
    object.__setattr__(config, "units", neurons)
