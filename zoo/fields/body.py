"""The base of the built-in field bodies, and the one hook through which a fast path runs.

A body maps a batch's path to the features the readout reads: ``body(path, batch)`` is
(B, features), or (B, T, features) for per-step tasks. :meth:`Body.generic` is the reference
computation, as the authors' code computes it. A fast path is attached from outside, when the
model is built (:func:`zoo.fast.attach`): it is an object with
``forward(body, path, batch)`` that returns the same numbers with fewer or fused kernels, reading
only the body's modules. Field code never imports ``zoo.fast``; ``implementation_used`` records
what ran: ``"fast"``, ``"generic (<reason>)"`` when the field has a fast path that this spec
cannot use, or :data:`~zoo.components.NO_FAST_PATH`.
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any, Protocol

import torch
from torch import nn

from ..components import NO_FAST_PATH


class FastPath(Protocol):
    """What :func:`zoo.fast.attach` sets as a body's ``fast_path``."""

    def forward(self, body: Body, path: Any, batch: Any) -> torch.Tensor: ...


class Body(nn.Module, metaclass=ABCMeta):
    """``forward(path, batch) -> features``: the fast path when one is attached, else
    :meth:`generic`."""

    #: the width of the features the readout reads
    features: int
    implementation_used: str = NO_FAST_PATH
    fast_path: FastPath | None = None

    @abstractmethod
    def generic(self, path: Any, batch: Any) -> torch.Tensor:
        """The features by the reference computation."""

    def forward(self, path: Any, batch: Any) -> torch.Tensor:
        if self.fast_path is not None:
            return self.fast_path.forward(self, path, batch)
        return self.generic(path, batch)
