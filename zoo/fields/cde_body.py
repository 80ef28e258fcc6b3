"""The body of a neural CDE with a matrix-valued field: dz = F(z) dX, i.e. dz/dt = F(z)·dX/dt.

Shared by the classic NCDE (Kidger's FinalTanh F) and the matrix NCDE of paper c. Fast path:
dX/dt at every stage time in one call, then a loop over F(z)·dX/dt only, its final tanh and the
product in one step (:func:`zoo.fast.tanh.tanh_times`).
"""

from __future__ import annotations

from torch import nn

from ..fast.tanh import tanh_times
from .matrix_func import MatrixFieldFunc
from .solved_body import SolvedBody


class CDEBody(SolvedBody):
    has_fast_path = True

    def func(self, path) -> nn.Module:
        return MatrixFieldFunc(self.vector_field, path.derivative)

    def stage_inputs(self, path, times):
        return (path.derivative(times),)

    def stage_field(self, z, dx):
        return tanh_times(self.vector_field.before_tanh(z), dx)
