"""Building, caching and falling back from the compiled kernels (zoo/fast/compiled.py)."""

from __future__ import annotations

import shutil
import warnings

import pytest
import torch

from zoo.fast import compiled
from zoo.fast.ltc_fused import fused_unfolds

needs_compiler = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                    reason="no C++ compiler")


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty kernel cache, kernels on and no library loaded yet; the process's state restored
    after."""
    monkeypatch.setenv("ZOO_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.delenv("ZOO_COMPILED_KERNELS", raising=False)
    compiled._load.cache_clear()
    yield tmp_path / "kernels"
    compiled._load.cache_clear()


def _inputs():
    torch.manual_seed(0)
    n = 4
    return [torch.randn(2, 3, n), 1 + torch.rand(2, 3, n), 0.5 + torch.rand(2, n),
            torch.rand(n, n) * 4, -torch.rand(n, n), torch.randn(n, n), torch.rand(n, n)]


@needs_compiler
def test_a_kernel_is_built_once_into_the_cache(fresh):
    first = compiled.build("ltc_synapses")
    assert first.parent == fresh and first.name.startswith("ltc_synapses-")
    stamp = first.stat().st_mtime_ns
    assert compiled.build("ltc_synapses") == first and first.stat().st_mtime_ns == stamp
    assert [p.name for p in fresh.iterdir()] == [first.name]  # no partial files left


def test_a_failing_compiler_warns_once_and_the_torch_form_runs(fresh, monkeypatch):
    expected = fused_unfolds(*_inputs(), 2, form="torch")
    monkeypatch.setenv("CXX", "false")
    with pytest.warns(UserWarning, match="compiled kernel 'ltc_synapses' unavailable"):
        states = fused_unfolds(*_inputs(), 2)
    torch.testing.assert_close(states, expected, rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fused_unfolds(*_inputs(), 2)
    assert not list(fresh.glob("*"))  # the failed build left nothing behind


def test_a_missing_compiler_is_named(fresh, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.warns(UserWarning, match="nonexistent"):
        assert compiled.kernel("ltc_synapses") is None


def test_kernels_can_be_switched_off(fresh, monkeypatch):
    monkeypatch.setenv("ZOO_COMPILED_KERNELS", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled.kernel("ltc_synapses") is None
        states = fused_unfolds(*[x.requires_grad_() for x in _inputs()], 2)
    assert type(states.grad_fn).__name__ == "_FusedUnfoldsBackward"


def test_tensors_off_the_cpu_take_the_torch_form():
    """The kernels read CPU memory: a tensor elsewhere (CUDA; here the meta device), a dtype
    without a kernel, or mixed dtypes choose the torch form under ``auto``."""
    cpu, meta = torch.ones(3), torch.ones(3, device="meta")
    assert not compiled.use_compiled("auto", "sweep", cpu, meta)
    assert not compiled.use_compiled("auto", "sweep", torch.ones(3, dtype=torch.float16))
    assert not compiled.use_compiled("auto", "sweep", cpu, cpu.double())
    assert compiled.use_compiled("torch", "sweep", cpu) is False
    assert compiled.use_compiled("compiled", "sweep", meta) is True
