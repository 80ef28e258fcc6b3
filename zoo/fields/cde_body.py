"""The body of a neural CDE with Kidger's FinalTanh field: dz = F(z) dX, i.e. dz/dt = F(z)·dX/dt.

Shared by the classic NCDE and the matrix NCDE of paper c (a FinalTanh with one hidden layer).
Its fast path (:mod:`zoo.fast.solved`) evaluates dX/dt at every stage time in one call and steps
with a hand-written reverse pass through the FinalTanh layers.
"""

from __future__ import annotations

from torch import nn

from .matrix_func import MatrixFieldFunc, matrix_times
from .solved_body import SolvedBody


class CDEBody(SolvedBody):
    has_fast_path = True
    has_adaptive_fast_path = True

    def func(self, path) -> nn.Module:
        return MatrixFieldFunc(self.vector_field, path.derivative)

    def stage_inputs(self, path, times):
        return (path.derivative(times),)

    def stage_field(self, z, dx):
        return matrix_times(self.vector_field(z), dx)
