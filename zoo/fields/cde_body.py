"""The body of a neural CDE with a matrix-valued field: dz = F(z) dX, i.e. dz/dt = F(z)·dX/dt.

Shared by the classic NCDE (Kidger's FinalTanh F) and the matrix NCDE of paper c. Fast path:
dX/dt at every stage time in one call, then a loop over F(z)·dX/dt only, with F's final tanh
by the fast paths' kernel and the product as a broadcast multiply-and-sum.
"""

from __future__ import annotations

from torch import nn

from .matrix_func import MatrixFieldFunc, matrix_times
from .solved_body import SolvedBody


class CDEBody(SolvedBody):
    has_fast_path = True

    def func(self, path) -> nn.Module:
        return MatrixFieldFunc(self.vector_field, path.derivative)

    def stage_inputs(self, path, times):
        return (path.derivative(times),)

    def stage_field(self, z, dx):
        return matrix_times(self.vector_field(z, fast=True), dx, fast=True)
