"""The body of a neural CDE with Kidger's FinalTanh field: dz = F(z) dX, i.e. dz/dt = F(z)·dX/dt.

Shared by the classic NCDE and the matrix NCDE of paper c (a FinalTanh with one hidden layer).
Fast path: dX/dt at every stage time in one call, then the steps with a hand-written reverse
pass (:mod:`zoo.fast.final_tanh_solve`).
"""

from __future__ import annotations

from torch import nn

from ..fast.adjoint import AdjointSteps
from ..fast.final_tanh_solve import FinalTanhSteps, final_tanh_stepper
from ..fast.lean import Stepper
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

    def stepper(self) -> Stepper:
        return final_tanh_stepper(self._linears(), self.vector_field.channels)

    def adjoint_steps(self) -> AdjointSteps:
        return FinalTanhSteps(self._linears(), self.vector_field.channels)

    def _linears(self) -> list[nn.Linear]:
        field = self.vector_field
        return [field.linear_in, *field.linears, field.linear_out]
