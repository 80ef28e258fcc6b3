"""Learning rules: the fast-weight update terms of paper (a) Eq. 21/24/32 as coded
(docs/sources.md#fwp-ode-fields and #fwp-cde-fields).

Each rule splits into a state-independent part, :meth:`Rule.write` (activations of the slow
net's raw key, value and learning-rate outputs), and the state-dependent :meth:`Rule.term` (the
update dW/dt, or the discrete increment, given W; ``W=None`` gives the term without the
W-dependent correction, which is how the authors build W(t0),
docs/sources.md#fwp-initial-state). Shapes: raw keys/values (..., H, h), raw β (..., H, 1);
terms (..., H, h, h).

* Hebb: dW = [r·a(v)] ⊗ softmax(k). Default r = σ(β), a = tanh (Eq. 21, 30). The authors'
  Hebb-CDE code uses the raw β and no tanh (docs/sources.md#fwp-diff-hebb-cde-values):
  ``activate_values=False``.
* Oja: v = tanh(v); k' = k − Wᵀv; dW = v ⊗ [σ(β)·softmax(k')] (softmax after the subtraction).
* Delta: k = softmax(k); pre-delta: v = tanh(v) − W k; post-delta: v = tanh(v − W k);
  dW = [σ(β) v] ⊗ k (Eq. 32).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ...kernels.tanh import tanh as compiled_tanh
from ..small_softmax import small_softmax
from .fast_weight import outer, retrieve


@dataclass
class Write:
    """What a rule writes, before it meets W: activated key, value and learning rate.
    ``key_logits``: the key field holds logits whose softmax over the key axis is the key
    (the Hebb fast read takes that softmax inside its kernel). On the Hebb fast path a field
    may be its layer of the stage inputs, unformed (:mod:`zoo.fast.fwp.layouts`)."""

    key: Any
    value: Any
    rate: Any
    key_logits: bool = False


class Rule:
    """A learning rule; subclasses define the activations and the update term.

    Every term is rank one per head, response ⊗ probe (probe ⊗ response when ``transposed``),
    and W enters only through the read W·probe (Wᵀ·probe when ``transposed``): the fast paths
    (``zoo/fast/fwp``) rely on this form.
    """

    transposed: bool = False
    reads_state: bool = True
    #: the values and learning rates enter the term as the slow net gives them (no activation)
    linear_values: bool = False

    def write(self, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
              fast: bool = False) -> Write:
        """Activations of the raw outputs; ``fast`` selects :func:`small_softmax`'s fast kernel."""
        raise NotImplementedError

    def probe(self, w: Write) -> torch.Tensor:
        """The vector W is read with (and the term's other factor)."""
        return w.key

    def target(self, w: Write) -> torch.Tensor:
        """What the read is subtracted from."""
        return w.value

    def activate(self, x: torch.Tensor, dim: int = -1, out: torch.Tensor | None = None
                 ) -> torch.Tensor:
        """φ of the response, into ``out`` when given; ``dim`` is the vector axis (the fast
        paths may store it first)."""
        return x if out is None else out.copy_(x)

    def response(self, w: Write, read: torch.Tensor | None) -> torch.Tensor:
        """The term's response factor rate · φ(target − read) (read None: without the
        W-dependent part)."""
        return w.rate * self.activate(self.target(w) if read is None else self.target(w) - read)

    def term(self, w: Write, W: torch.Tensor | None, read_with=retrieve) -> torch.Tensor:
        """The update term given W; ``read_with(W, p, transposed)`` reads it (a fast path may
        bring its own form of :func:`~.fast_weight.retrieve`)."""
        p = self.probe(w)
        read = read_with(W, p, self.transposed) if W is not None and self.reads_state else None
        r = self.response(w, read)
        return outer(p, r) if self.transposed else outer(r, p)


def value_tanh(v: torch.Tensor, fast: bool) -> torch.Tensor:
    """tanh of the values: the fast paths' compiled kernel (:mod:`zoo.kernels.tanh`) when
    ``fast``, else the authors' ``torch.tanh``."""
    return compiled_tanh(v) if fast else torch.tanh(v)


@dataclass(frozen=True)
class Hebb(Rule):
    """dW = [σ(β)·tanh(v)] ⊗ softmax(k); raw β and raw v when ``activate_values`` is False."""

    activate_values: bool = True
    reads_state = False

    @property
    def linear_values(self) -> bool:
        return not self.activate_values

    def write(self, k, v, beta, fast=False):
        """``fast``: the keys left as logits (:attr:`Write.key_logits`), the raw outputs as
        the slow net gives them (layers where it defers them)."""
        if self.activate_values:
            v, beta = value_tanh(v, fast), torch.sigmoid(beta)
        return Write(k, v, beta, key_logits=True) if fast else Write(small_softmax(k), v, beta)


@dataclass(frozen=True)
class Oja(Rule):
    """dW = v ⊗ [σ(β)·softmax(k − Wᵀ v)], v = tanh(v)."""

    transposed = True

    def write(self, k, v, beta, fast=False):
        return Write(k, value_tanh(v, fast), torch.sigmoid(beta))

    def probe(self, w):
        return w.value

    def target(self, w):
        return w.key

    def activate(self, x, dim=-1, out=None):
        return torch.softmax(x, dim, out=out)


@dataclass(frozen=True)
class Delta(Rule):
    """dW = [σ(β)·(tanh(v) − W k)] ⊗ k (pre) or [σ(β)·tanh(v − W k)] ⊗ k (post), k = softmax."""

    post: bool = False

    def write(self, k, v, beta, fast=False):
        return Write(small_softmax(k, fast), v if self.post else value_tanh(v, fast),
                     torch.sigmoid(beta))

    def activate(self, x, dim=-1, out=None):
        return torch.tanh(x, out=out) if self.post else super().activate(x, dim, out)


def make_rule(rule: str, delta: str = "pre", activate_hebb_values: bool = True) -> Rule:
    """The rule named in a spec (``hebb`` | ``oja`` | ``delta``)."""
    if rule == "hebb":
        return Hebb(activate_hebb_values)
    if rule == "oja":
        return Oja()
    return Delta(post=delta == "post")
