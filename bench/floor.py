"""The work every implementation of a case must do, timed alone: a bound on its speed-up.

* FWP fields: the slow net (projections, LayerNorm, activations) at the distinct stage times of
  the grid, forward and backward, in its cheapest known form (Linear → LayerNorm → Linear
  folded into input space, ``zoo/fields/fwp/folded_norm.py``). It does not depend on the fast
  weights, so no reformulation of the learning rule removes it; the fast paths compute exactly
  this once. Raw values that a read takes through their layer (Hebb-CDE,
  ``zoo/fields/fwp/stage_linear.py``) are not formed, so the floor leaves them out; where the
  keys and learning rates are read through their layer too (``zoo/fast/fwp/layer_read.py``), the
  floor is that read with unit stage weights and query (every stage's keys, softmax, rate and
  value in cache, forward and backward).
* Fields solved step by step (NCDE, matrix NCDE, Jacobian NCDE, GRU-ODE): as many evaluations
  of the state-dependent field as the solve makes, chained as Euler steps z + h F(z) (each
  reads the state the one before produced, as the stages do) by the body's own stepping loop
  (``SolvedBody.stepper``: autograd's, or the NCDE's hand-written reverse pass), forward and
  backward: the solve's evaluations with the least solver arithmetic around them. With an
  adaptive solver the count is the NFE of one solve of the batch and the loop autograd's, as
  in ``zoo/fast/solve/adaptive.py``. The two-layer FWP model (paper a App. C.1), whose field
  reads the fast weights beyond a rank-one term, counts here too, with its ``stage_field``
  (``zoo/fast/fwp/two_layer.py``).

The cases that backpropagate by the continuous adjoint take the same floor: the adjoint does
this work and more (its backward pass evaluates the field again), so the bound is looser there.

generic s/step ÷ this time bounds fast/generic for any implementation of the same numbers
(same solver, same grid) with these kernels (PyTorch's and the compiled ones of
``zoo/kernels/src``). Other cases have no bound here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from zoo.fast.fwp import TwoLayerFastPath, two_layer
from zoo.fast.fwp.hebb import key_layer_read
from zoo.fast.fwp.writes import formed
from zoo.fast.fwp.stages import distinct_writes
from zoo.fast.solve.grid import FixedGrid
from zoo.fast.solve.lean import field_stepper
from zoo.fast.solve.tableau import TABLEAUX
from zoo.fast.solved import stepper as solved_stepper
from zoo.fields.fwp.body import FWPBody
from zoo.fields.fwp.fast_weight import flatten
from zoo.fast.fwp.stage_linear import StageLinear
from zoo.fields.solved_body import SolvedBody


def unavoidable_work(model, batch) -> tuple[Callable[[], None], int] | None:
    """(one unit of the unavoidable work, how many units a training step needs), or None."""
    body = model.body
    if not isinstance(body, FWPBody | SolvedBody):
        return None
    path = model.control.path(batch.times, batch.coeffs)
    dtype = batch.times.dtype
    if isinstance(body, SolvedBody) and getattr(body.fast_path, "adaptive", False):
        return _adaptive_evaluations(model, batch, path)
    grid = FixedGrid.plan(model.integrator, path.grid_points)
    two_layers = isinstance(body.fast_path, TwoLayerFastPath)
    if isinstance(body, FWPBody) and not two_layers:
        def slow_net() -> None:
            writes, _ = distinct_writes(body.vector_field, path, grid, dtype)
            if isinstance(writes.key, StageLinear):  # keys, rates and values read once
                batch, stages = writes.key.z.shape[:2]
                q = writes.key.z.new_ones(batch, writes.key.heads, writes.value.weight.shape[0]
                                          // writes.key.heads)
                total = key_layer_read(writes.key, writes.rate, q.new_ones(batch, stages),
                                       writes.value, q).sum()
            else:
                writes = formed(writes, values=False)
                total = writes.key.sum() + writes.rate.sum()
                if not isinstance(writes.value, StageLinear):
                    total = total + writes.value.sum()
            total.backward()
        return slow_net, 1
    times, _ = grid.distinct_stages(dtype)
    if two_layers:
        update = body.vector_field
        z0 = flatten(body.initial(update, path, batch)).detach()
        stepper = field_stepper(partial(two_layer.stage_field, update))
        stage_inputs = partial(two_layer.stage_inputs, update)
    else:
        z0 = body.z0(path, batch).detach()
        stepper, stage_inputs = solved_stepper(body), body.stage_inputs
    count = grid.steps * grid.tableau.stages
    steps = z0.new_full((count,), 0.1)
    first_input = torch.zeros(count, 1, dtype=torch.long)  # every evaluation reads stage 0

    def evaluations() -> None:
        inputs = stage_inputs(path, times[:1])
        states = stepper(TABLEAUX["euler"], steps, first_input, z0, inputs)
        states[-1].sum().backward()
    return evaluations, 1


def _adaptive_evaluations(model, batch, path) -> tuple[Callable[[], None], int]:
    """An adaptive solve's evaluations (counted by running it once) of the state-dependent
    field, chained under autograd as the lean solve runs them (``field_stepper``)."""
    body = model.body
    with torch.no_grad():
        nfe = model.integrator.nfe
        model(batch)
        count = model.integrator.nfe - nfe
    z0 = body.z0(path, batch).detach()
    stepper, steps = field_stepper(body.stage_field), z0.new_full((count,), 0.1)
    first_input = torch.zeros(count, 1, dtype=torch.long)
    times = path.grid_points[:1].to(batch.times.dtype)

    def evaluations() -> None:
        states = stepper(TABLEAUX["euler"], steps, first_input, z0, body.stage_inputs(path, times))
        states[-1].sum().backward()
    return evaluations, 1
