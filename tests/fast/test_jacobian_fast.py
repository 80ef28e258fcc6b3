"""Jacobian NCDE lean loop (W_x X, W_x Ẋ precomputed for all stages) = generic path."""

from __future__ import annotations

import pytest
import torch
from fast_harness import METHODS, assert_fast_equals_generic

FIELD = {"kind": "jacobian", "hidden": 8}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("options", [{}, {"taylor_terms": 2, "relu_derivative": "exact"}])
def test_fast_equals_generic(options, method):
    assert_fast_equals_generic({**FIELD, **options}, method)


def test_per_step_initial_and_float32():
    assert_fast_equals_generic(FIELD, "rk4", per_step=True, initial="first_observation")
    assert_fast_equals_generic(FIELD, "rk4", dtype=torch.float32)
