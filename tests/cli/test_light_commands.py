"""`zoo validate`, `zoo list` and `zoo schema` import no torch, scikit-learn or SciPy: config
classes live in modules of their own, and models are imported when they are built.

Each command runs in a fresh interpreter, which then reports the heavy modules it imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

HEAVY = ("torch", "sklearn", "scipy", "torchcde", "torchdiffeq", "pysiglib", "signatory")

# Third-party plugins installed next to nde-zoo may import torch at import time (the example
# plugin does), and `zoo list` / `zoo schema` load every plugin: the check runs with the built-in
# entry points only, so that it tests this package's modules and not what else is installed.
RUN = f"""
import importlib.metadata as md
import sys

every = md.entry_points
md.entry_points = lambda **kw: [ep for ep in every(**kw)
                                if ep.dist is not None and ep.dist.metadata["Name"] == "nde-zoo"]

from zoo.cli.main import main

code = main(sys.argv[1:])
sys.stdout.flush()
print("\\nheavy:", [m for m in {HEAVY!r} if m in sys.modules])
sys.exit(code)
"""


def heavy_imports(*args: str) -> list[str]:
    """The heavy modules loaded by ``zoo ARGS`` (which must succeed)."""
    out = subprocess.run([sys.executable, "-c", RUN, *args], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.rsplit("heavy:", 1)[1].replace("'", '"'))


@pytest.mark.parametrize("spec", [
    "specs/hasani2021/table3/ozone/ltc.yaml",
    "specs/irie2022/table1/sepsis-oi/cde-delta.yaml",
    "specs/irie2022/table2/depth2/oja.yaml",  # EigenWorms, log-signature control
    "specs/jacobian_ncde/table1/character-trajectories/jacobian-ncde.yaml",
])
def test_validate_imports_no_torch(spec):
    assert heavy_imports("validate", spec) == []


@pytest.mark.parametrize("command", [["list"], ["schema"]])
def test_list_and_schema_import_no_torch(command):
    assert heavy_imports(*command) == []


def test_solver_methods_are_torchdiffeqs():
    """The methods are written out (no torch to read them from); they must match torchdiffeq's."""
    from torchdiffeq._impl.odeint import SOLVERS

    from zoo.solvers.torchdiffeq_solver import METHODS

    assert set(METHODS) == set(SOLVERS) - {"scipy_solver"}


def test_large_options_are_counted_and_leave_torchdiffeq_on_the_cpu(write_spec, tiny_spec):
    """An option above 512 makes validation count the parameters on PyTorch's meta device;
    torchdiffeq, first imported then, must still make its tableaux on the CPU."""
    tiny_spec["model"]["field"]["hidden_hidden"] = 600
    check = ("import sys\nfrom zoo.spec.validate import load_spec\nload_spec(sys.argv[1])\n"
             "from torchdiffeq._impl.dopri5 import DPS_C_MID\n"
             "assert not DPS_C_MID.is_meta, DPS_C_MID\n")
    out = subprocess.run([sys.executable, "-c", check, str(write_spec(tiny_spec))], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
