"""Every fast path = its generic path on a CUDA device (the kernels of ``zoo/kernels/src`` are
CPU-only, so CUDA runs the torch-operation forms); skipped where there is none."""

from __future__ import annotations

import pytest
import torch
from fast_harness import assert_fast_equals_generic
from test_fwp_fast import RULES, field as fwp_field
from test_gru_ode_fast import FIELD as GRU_ODE
from test_jacobian_fast import FIELD as JACOBIAN
from test_ltc_fast import BASELINES, LTC, assert_ltc_fast_equals_generic, case_id
from test_ncde_fast import FIELDS as NCDE

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

SOLVED = [*NCDE, GRU_ODE, JACOBIAN,
          *(fwp_field(rule, form) for rule in RULES for form in ("ode", "cde"))]
DTYPES = [torch.float64, torch.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("field", SOLVED, ids=lambda f: "-".join(map(str, f.values())))
def test_solved_fields_on_cuda(field, dtype):
    assert_fast_equals_generic(field, "rk4", dtype=dtype, device="cuda")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", LTC + BASELINES, ids=case_id)
def test_recurrent_fields_on_cuda(case, dtype):
    assert_ltc_fast_equals_generic(case, dtype, device="cuda")
