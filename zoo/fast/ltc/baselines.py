"""Fast paths of the LTC repository's baselines (CT-RNN, N-ODE, LSTM, CT-GRU;
docs/sources.md#ltc-baselines).

Every layer of these cells reads the concatenation [I, h]: W [I, h] + b = (W_I I + b) + W_h h.
The input part W_I I + b is computed for all T steps in one call; the loop then adds only W_h h
(one thin matrix product per evaluation instead of a concatenation and the full layer); on the
CPU the CT-RNN with global feedback and the N-ODE run that loop compiled (:mod:`.unfold_rnn`),
and the CT-GRU its own (:mod:`.ctgru_loop`). Elsewhere the cells' own update rule
(:meth:`CTGRUCell.update`) and the ``unfold`` solver are reused as they are. The LSTM, whose
update is TensorFlow's ``LSTMCell``, runs torch's fused LSTM kernel with TensorFlow's gates
mapped onto it (:func:`lstm_sequence`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch import nn
from torch.nn import functional as F

from . import ctgru_loop, unfold_rnn


def input_part(layer: nn.Linear, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For ``layer`` over [I, h] and inputs x (B, T, C): W_I I_k + b for every step (T, B, out)
    and W_hᵀ (N, out), so that layer([I_k, h]) = input part[k] + h W_hᵀ."""
    channels = x.shape[-1]
    return (F.linear(x.transpose(0, 1), layer.weight[:, :channels], layer.bias),
            layer.weight[:, channels:].contiguous().t())


def split_layer(layer: nn.Linear, x: torch.Tensor
                ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """:func:`input_part` with the steps unbound (each (B, out)), so that
    layer([I_k, h]) = torch.addmm(input_part[k], h, W_hᵀ). The steps are unbound once, so the
    backward pass stacks their gradients once."""
    inputs, w_h = input_part(layer, x)
    return inputs.unbind(0), w_h


def run(step: Callable[[int, torch.Tensor, torch.Tensor], torch.Tensor], state: torch.Tensor,
        elapsed: torch.Tensor) -> torch.Tensor:
    """States after every step (T, B, ...) of state ← step(k, state, Δt_k)."""
    states = []
    for k, dt in enumerate(elapsed):
        state = step(k, state, dt)
        states.append(state)
    return torch.stack(states)


def ctrnn_sequence(cell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """CT-RNN: dh/dt = −h/τ + tanh(W [I, h] + b) unrolled by the cell's solver (with global
    feedback on the compiled loop where it runs)."""
    if cell.global_feedback:
        a, w_h = input_part(cell.step, x)
        if unfold_rnn.fits(cell, a):
            return cell.output(unfold_rnn.unfold_rnn(cell, a, w_h, 1.0 / cell.tau))
        inputs = a.unbind(0)

        def drive(k, y):
            return torch.tanh(torch.addmm(inputs[k], y, w_h))
    else:
        constant = torch.tanh(cell.step(x)).unbind(1)

        def drive(k, y):
            return constant[k]

    def step(k, h, dt):
        return cell.solver.advance(lambda y: -y / cell.tau + drive(k, y), h, cell.project)

    return cell.output(run(step, x.new_zeros(x.shape[0], cell.units), elapsed))


def node_sequence(cell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """N-ODE RNN: dh/dt = tanh(W [I, h] + b) unrolled by the cell's solver (on the compiled loop
    where it runs)."""
    a, w_h = input_part(cell.step, x)
    if unfold_rnn.fits(cell, a):
        return cell.output(unfold_rnn.unfold_rnn(cell, a, w_h, 0.0))
    inputs = a.unbind(0)

    def step(k, h, dt):
        return cell.solver.advance(lambda y: torch.tanh(torch.addmm(inputs[k], y, w_h)), h,
                                   cell.project)

    return cell.output(run(step, x.new_zeros(x.shape[0], cell.units), elapsed))


def lstm_sequence(cell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """LSTM outputs h (T, B, N) from torch's fused kernel, which computes
    c ← σ(f) c + σ(i) tanh(g), h ← σ(o) tanh(c) from [i, f, g, o] = W_ih I + b_ih + W_hh h + b_hh:
    TensorFlow's gate rows [i, j, f, o] reordered to [i, f, j, o], its forget bias added to
    b_f, W [I, h] split into W_ih and W_hh (contiguous, as cuDNN's kernel needs), b_hh = 0.
    On CUDA cuDNN runs it as the generic cell's products run (:func:`_cudnn_as_generic`)."""
    channels = x.shape[-1]
    i, j, f, o = cell.gates.weight.chunk(4, 0)
    b_i, b_j, b_f, b_o = cell.gates.bias.chunk(4, 0)
    weight = torch.cat([i, f, j, o])
    bias = torch.cat([b_i, b_f + cell.forget_bias, b_j, b_o])
    zeros = x.new_zeros(1, x.shape[0], cell.units)
    w_ih, w_hh = weight[:, :channels].contiguous(), weight[:, channels:].contiguous()
    with _cudnn_as_generic():
        h, _, _ = torch.lstm(x, (zeros, zeros), [w_ih, w_hh, bias, torch.zeros_like(bias)],
                             True, 1, 0.0, cell.training, False, True)
    return h.transpose(0, 1)


@contextmanager
def _cudnn_as_generic() -> Iterator[None]:
    """cuDNN may use TensorFloat-32 (a 10-bit mantissa) for float32 by default, while torch's
    matrix products, which the generic cell runs on, do not unless the user allows it: within
    this block cuDNN follows the matrix products' setting. Its warning that the weights are not
    one contiguous block is silenced: they are fresh tensors of a few kB at each call, and
    copying them into one costs nothing next to the sequence."""
    before = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "RNN module weights are not part of single "
                                    "contiguous chunk", UserWarning)
            yield
    finally:
        torch.backends.cudnn.allow_tf32 = before


def ctgru_sequence(cell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """CT-GRU: ln τ^r, ln τ^s and the detector with their input parts precomputed (on the
    compiled loop where it runs)."""
    parts = [input_part(layer, x) for layer in (cell.tau_r, cell.tau_s, cell.detect)]
    if ctgru_loop.fits(cell, parts[0][0]):
        decay = cell.decay_factors(elapsed.unsqueeze(-1)).expand(len(elapsed), -1)
        return cell.output(ctgru_loop.ctgru_loop(cell, parts, decay))
    (in_r, w_r), (in_s, w_s), (in_q, w_q) = ((a.unbind(0), w) for a, w in parts)

    def step(k, h_hat, dt):
        h = h_hat.sum(-1)
        return cell.update(h_hat, torch.addmm(in_r[k], h, w_r), torch.addmm(in_s[k], h, w_s),
                           lambda read: torch.addmm(in_q[k], read, w_q), dt, fast=True)

    return cell.output(run(step, x.new_zeros(x.shape[0], *cell.state_shape), elapsed))
