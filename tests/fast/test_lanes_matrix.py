"""Per-lane matrix reads and rank updates (zoo/fast/fwp/lanes_matrix.py): compiled = torch form,
and both = the plain products."""

from __future__ import annotations

import pytest
import torch

from zoo.kernels.compiled import kernel
from zoo.fast.fwp.lanes_matrix import rank_update, read

RTOL = {torch.float64: 1e-12, torch.float32: 2e-6}
FORMS = ["torch"] + (["compiled"] if kernel("lanes_matrix") is not None else [])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("h", [3, 20], ids=["columnwise", "product"])
@pytest.mark.parametrize("form", FORMS)
def test_reads_and_updates_equal_the_products(form, h, dtype, threads, torch_threads):
    torch_threads(threads)
    gen = torch.Generator().manual_seed(0)
    W, P, R = (torch.randn(*shape, 7, dtype=dtype, generator=gen)
               for shape in ((h, h), (4, h), (4, h)))
    c = [0.0, 0.5, -1.5, 2.0]
    matrices = W.permute(2, 0, 1)  # (L, h, h)
    for transposed in (False, True):
        m = matrices.mT if transposed else matrices
        expected = (m[None] @ P.permute(0, 2, 1)[..., None])[..., 0].permute(0, 2, 1)
        got = read(W, P, transposed, form=form)
        assert (got - expected).abs().max() <= RTOL[dtype] * expected.abs().max()
    expected = W + sum(w * R[s][:, None] * P[s][None] for s, w in enumerate(c))
    got = rank_update(W, R, P, c, form=form)
    assert (got - expected).abs().max() <= RTOL[dtype] * expected.abs().max()
