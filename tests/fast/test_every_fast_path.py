"""Every registered field that declares a fast path (``FieldConfig.fast_path``, shown by
``zoo list fields``) computes what its generic path does: outputs and gradients in float64, from
the same weights. Driven by the registry, so a field that gains a fast path is checked without
being listed here; a body that runs a fast path its config does not declare fails too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from zoo import registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fields"))
from test_every_field import build, field_names, minimal_spec, tiny_batch  # noqa: E402


def with_implementation(spec, implementation: str):
    return spec.model_copy(update={"model": spec.model.model_copy(
        update={"implementation": implementation})})


def outputs_and_grads(model, batch) -> tuple[torch.Tensor, torch.Tensor]:
    out = model(batch)
    out.square().sum().backward()
    return out.detach(), torch.cat([p.grad.flatten() for p in model.parameters()
                                    if p.grad is not None])


@pytest.mark.parametrize("kind", field_names())
def test_a_declared_fast_path_equals_the_generic_one(kind):
    spec = minimal_spec(kind)
    fast = build(with_implementation(spec, "fast"), torch.float64)
    if registry.entries("fields")[kind].distribution == registry.BUILTIN:
        assert isinstance(fast.body.implementation_used, str)  # every built-in body says
    runs_fast = getattr(fast.body, "implementation_used", "generic") == "fast"
    declared = registry.get("fields", kind).fast_path
    assert runs_fast == declared, f"'{kind}': fast_path is {declared}, its body ran " \
                                  f"{fast.body.implementation_used!r}"
    if not declared:
        return
    generic = build(with_implementation(spec, "generic"), torch.float64)
    assert generic.body.implementation_used.startswith("generic")
    generic.load_state_dict(fast.state_dict())
    batch = tiny_batch(spec, torch.float64)
    out_fast, grad_fast = outputs_and_grads(fast, batch)
    out_generic, grad_generic = outputs_and_grads(generic, batch)
    torch.testing.assert_close(out_fast, out_generic, rtol=1e-9, atol=1e-10)
    torch.testing.assert_close(grad_fast, grad_generic, rtol=1e-8, atol=1e-10)


def test_the_papers_fields_declare_a_fast_path():
    """The test above is not vacuous."""
    assert {"ncde", "ltc", "fwp", "jacobian"} <= {k for k in field_names()
                                                   if registry.get("fields", k).fast_path}
