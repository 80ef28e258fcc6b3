"""GRU-ODE lean loop = generic path."""

from __future__ import annotations

import pytest
import torch
from fast_harness import METHODS, assert_fast_equals_generic

FIELD = {"kind": "gru_ode", "hidden": 6}


@pytest.mark.parametrize("method", METHODS)
def test_fast_equals_generic(method):
    assert_fast_equals_generic(FIELD, method)


def test_per_step_and_float32():
    assert_fast_equals_generic(FIELD, "rk4", per_step=True)
    assert_fast_equals_generic(FIELD, "rk4", dtype=torch.float32)
