"""NCDE and matrix NCDE lean loops = generic path."""

from __future__ import annotations

import pytest
import torch
from fast_harness import METHODS, assert_fast_equals_generic

FIELDS = [{"kind": "ncde", "hidden": 8, "hidden_hidden": 8, "layers": 2},
          {"kind": "matrix_ncde", "hidden": 8},
          {"kind": "nrde", "hidden": 5, "hidden_hidden": 6, "layers": 3}]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f["kind"])
def test_fast_equals_generic(field, method):
    assert_fast_equals_generic(field, method)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f["kind"])
def test_per_step_and_float32(field):
    assert_fast_equals_generic(field, "rk4", per_step=True)
    assert_fast_equals_generic(field, "rk4", dtype=torch.float32)
