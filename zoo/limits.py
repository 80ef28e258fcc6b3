"""Bounds of sizes, counts and seeds in a spec, so that absurd values fail at validation.

A spec with ``hidden: 1000000000000`` would otherwise validate and die allocating terabytes,
and a seed beyond 64 bits would fail in ``torch.manual_seed`` once the run has started. The
types below carry the bounds (also shown in ``zoo schema`` as ``maximum``) and say why a value
is refused; plugins use them for their own size options. :data:`MAX_PARAMETERS` bounds the
parameter count that validation estimates by building the model without memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, Field

#: the widest layer, state or number of units/heads/time scales a spec may ask for
MAX_WIDTH = 2**16
#: the most layers (or stacked terms) of one network
MAX_LAYERS = 1024
#: the most training epochs
MAX_EPOCHS = 1_000_000
#: the largest batch
MAX_BATCH = 2**20
#: the most parameters a model may have (4 GiB of float32 weights, before gradients and the
#: optimiser's state); the estimate is made before anything is allocated
MAX_PARAMETERS = 2**30
#: the most CPU threads a run may be given (torch crashes on a hundred thousand)
MAX_THREADS = 1024
#: the most steps of one fixed-step solve (times span ÷ step size), checked when the data is
#: seen: each step keeps the state for the backward pass
MAX_SOLVER_STEPS = 1_000_000
#: the seeds ``torch.manual_seed`` accepts (a 64-bit integer, signed or unsigned)
SEED_MIN, SEED_MAX = -(2**63), 2**64 - 1
#: the seeds NumPy's generators take (``RandomState``; ``default_rng`` refuses negative ones)
NUMPY_SEED_MAX = 2**32 - 1


def _at_most(limit: int, what: str, why: str) -> Callable[[int], int]:
    def check(value: int) -> int:
        if value > limit:
            raise ValueError(f"{value} is more than {limit}, the largest {what} zoo accepts "
                             f"({why})")
        return value
    return check


def seed_in_range(value: int) -> int:
    """``value`` if torch accepts it as a seed, else a ValueError saying the range."""
    if not SEED_MIN <= value <= SEED_MAX:
        raise ValueError(f"seed {value} is out of range: torch accepts seeds from {SEED_MIN} "
                         f"to {SEED_MAX} (-2**63 to 2**64 - 1)")
    return value


def numpy_seed_in_range(value: int) -> int:
    """``value`` if NumPy accepts it as a seed, else a ValueError saying the range."""
    if not 0 <= value <= NUMPY_SEED_MAX:
        raise ValueError(f"seed {value} is out of range: NumPy accepts seeds from 0 to "
                         f"{NUMPY_SEED_MAX} (2**32 - 1)")
    return value


_MEMORY = "a model that size does not fit in memory"

#: a layer width, state size or number of units, heads or time scales
Width = Annotated[int, Field(gt=0, json_schema_extra={"maximum": MAX_WIDTH}),
                  AfterValidator(_at_most(MAX_WIDTH, "width", _MEMORY))]
#: a number of layers (or of stacked terms)
Layers = Annotated[int, Field(gt=0, json_schema_extra={"maximum": MAX_LAYERS}),
                   AfterValidator(_at_most(MAX_LAYERS, "number of layers", _MEMORY))]
Epochs = Annotated[int, Field(gt=0, json_schema_extra={"maximum": MAX_EPOCHS}),
                   AfterValidator(_at_most(MAX_EPOCHS, "number of epochs",
                                           "a run that long would never finish"))]
BatchSize = Annotated[int, Field(gt=0, json_schema_extra={"maximum": MAX_BATCH}),
                      AfterValidator(_at_most(MAX_BATCH, "batch size",
                                              "a batch that large does not fit in memory"))]
#: a seed handed to torch (``torch.manual_seed`` or ``torch.Generator.manual_seed``)
Seed = Annotated[int, Field(json_schema_extra={"minimum": SEED_MIN, "maximum": SEED_MAX}),
                 AfterValidator(seed_in_range)]
#: a seed handed to NumPy (``numpy.random.default_rng`` or ``RandomState``)
NumpySeed = Annotated[int, Field(json_schema_extra={"minimum": 0, "maximum": NUMPY_SEED_MAX}),
                      AfterValidator(numpy_seed_in_range)]
