"""Building, caching and falling back from the compiled kernels (zoo/kernels/compiled.py)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch

import zoo
from zoo.kernels import compiled
from zoo.fast.ltc.fused import fused_unfolds
from zoo.tracking.mlflow_run import open_client

REPO = Path(__file__).resolve().parents[2]

needs_compiler = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                    reason="no C++ compiler")


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty kernel cache, kernels on, the compiler not probed and no library loaded yet; the
    process's state restored after."""
    monkeypatch.setenv("ZOO_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.delenv("ZOO_COMPILED_KERNELS", raising=False)
    _forget()
    yield tmp_path / "kernels"
    _forget()


def _forget():
    compiled._load.cache_clear()
    compiled.toolchain.cache_clear()


def fake_compiler(folder: Path, compile_step: str = "echo library > \"$out\"") -> str:
    """A ``$CXX`` script: ``--version`` answers, a build runs ``compile_step`` (``$out``: the
    output) after logging a line to ``$FAKE_CXX_LOG`` where that is set."""
    script = folder / "fake-c++"
    script.write_text(f"""#!/bin/sh
[ "$1" = --version ] && {{ echo "fake c++ 1.0"; exit 0; }}
[ -n "$FAKE_CXX_LOG" ] && echo build >> "$FAKE_CXX_LOG"
for out; do :; done
{compile_step}
""")
    script.chmod(0o755)
    return str(script)


@pytest.fixture
def fake(fresh, monkeypatch, tmp_path):
    """A fake compiler as ``$CXX`` (its libraries are not loadable) on the ``fresh`` cache."""
    monkeypatch.setenv("CXX", fake_compiler(tmp_path))
    return fresh


def _inputs():
    torch.manual_seed(0)
    n = 4
    return [torch.randn(2, 3, n), 1 + torch.rand(2, 3, n), 0.5 + torch.rand(2, n),
            torch.rand(n, n) * 4, -torch.rand(n, n), torch.randn(n, n), torch.rand(n, n)]


@needs_compiler
def test_a_kernel_is_built_once_into_the_cache(fresh):
    first = compiled.build("ltc_synapses")
    assert first.parent == fresh
    assert re.fullmatch(r"ltc_synapses-[0-9a-f]{16}-[0-9a-f]{16}\.so", first.name)
    stamp = first.stat().st_mtime_ns
    assert compiled.build("ltc_synapses") == first and first.stat().st_mtime_ns == stamp
    # no partial files left (they end in .so too), only the kernel's lock file beside it
    assert sorted(p.name for p in fresh.iterdir()) == [first.name, "ltc_synapses.lock"]


def test_a_failing_build_warns_once_and_the_torch_form_runs(fresh, monkeypatch, tmp_path):
    expected = fused_unfolds(*_inputs(), 2, form="torch")
    monkeypatch.setenv("CXX", fake_compiler(tmp_path, "echo 'error: broken' >&2; exit 1"))
    with pytest.warns(UserWarning, match=r"compiled kernel 'ltc_synapses' unavailable \(error"):
        states = fused_unfolds(*_inputs(), 2)
    torch.testing.assert_close(states, expected, rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fused_unfolds(*_inputs(), 2)
    assert not list(fresh.glob("*.so"))  # the failed build left nothing behind


def test_a_missing_compiler_is_probed_once_and_warned_once(fresh, monkeypatch):
    """However many kernels are asked for: one warning, naming the compiler looked for, what
    runs instead and the remedy; every kernel then takes the torch form."""
    expected = fused_unfolds(*_inputs(), 2, form="torch")
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [compiled.kernel(name) for name in ("ltc_synapses", "tanh", "sweep")] == [None] * 3
        torch.testing.assert_close(fused_unfolds(*_inputs(), 2), expected, rtol=0, atol=0)
    [warning] = [str(w.message) for w in caught]
    assert "/nonexistent/c++" in warning and "generic torch-operation form" in warning
    assert "set CXX" in warning
    with pytest.raises(compiled.NoCompiler):
        compiled.build("tanh")


def test_concurrent_builds_build_a_kernel_once(fake, monkeypatch, tmp_path):
    """Two processes build a kernel on an empty cache: one compiles (held until the other
    waits for the kernel's lock), the other then loads that build."""
    log, go = tmp_path / "builds.log", tmp_path / "go"
    monkeypatch.setenv("FAKE_CXX_LOG", str(log))
    monkeypatch.setenv("CXX", fake_compiler(tmp_path, f"until [ -e {go} ]; do sleep 0.01; done\n"
                                                      "echo library > \"$out\""))
    code = "from zoo.kernels import compiled; print(compiled.build('tanh'))"
    builders = [subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE,
                                 text=True) for _ in range(2)]
    try:
        _until(lambda: _builds(log) > 1
               or (_builds(log) == 1 and _lock_waiter(fake / "tanh.lock")))
    finally:
        go.touch()
    paths = {builder.communicate(timeout=120)[0].strip() for builder in builders}
    assert [builder.returncode for builder in builders] == [0, 0]
    assert _builds(log) == 1 and len(paths) == 1
    assert Path(paths.pop()).read_text() == "library\n"


def test_different_kernels_build_side_by_side(fake, monkeypatch, tmp_path):
    """While one process compiles a kernel (held), another builds a different one and is done:
    a fresh machine's many test workers do not queue behind each other's builds."""
    go = tmp_path / "go"
    monkeypatch.setenv("CXX", fake_compiler(
        tmp_path, f'case "$*" in *tanh.cpp*) until [ -e {go} ]; do sleep 0.01; done;; esac\n'
                  'echo library > "$out"'))
    code = "from zoo.kernels import compiled; print(compiled.build('{}'))"
    held = subprocess.Popen([sys.executable, "-c", code.format("tanh")], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    try:
        _until(lambda: (fake / "tanh.lock").exists())
        other = subprocess.run([sys.executable, "-c", code.format("sweep")], cwd=REPO,
                               capture_output=True, text=True, timeout=120)
        assert other.returncode == 0, other.stderr
        assert held.poll() is None  # still compiling tanh
        assert Path(other.stdout.strip()).name.startswith("sweep-")
    finally:
        go.touch()
    assert held.communicate(timeout=120)[0].strip().endswith(".so") and held.returncode == 0


def _builds(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _lock_waiter(path: Path) -> bool:
    """Whether a process waits for a ``flock`` on ``path`` (``/proc/locks``: ``->`` lines)."""
    if not path.exists():
        return False
    inode = f":{path.stat().st_ino}"
    return any("->" in line and any(field.endswith(inode) for field in line.split())
               for line in Path("/proc/locks").read_text().splitlines())


def _until(condition, limit: float = 120) -> None:
    """Wait for ``condition`` (the limit only ends a hung test)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "the builders never got there"
        time.sleep(0.01)


def test_a_new_build_removes_only_its_kernels_stale_builds(fake):
    """Builds of the kernel from another source go (the one-hash names of earlier releases
    too); other machines' builds of this source, other kernels and anything else stay."""
    current = compiled.build("tanh")
    version = current.name.split("-")[1]
    current.unlink()
    stale = [f"tanh-{'0' * 16}-{'1' * 16}.so", f"tanh-{'2' * 16}.so"]
    kept = [f"tanh-{version}-{'3' * 16}.so", f"sweep-{'0' * 16}-{'1' * 16}.so",
            f"tanh-{'0' * 16}-{'1' * 16}.so.notes", "tanh-old.so", f"tanh_x-{'0' * 16}.so"]
    for name in stale + kept:
        (fake / name).write_text("")
    (fake / f"tanh-{'4' * 16}-{'5' * 16}.so").mkdir()  # not a library: left alone
    kept.append(f"tanh-{'4' * 16}-{'5' * 16}.so")
    assert compiled.build("tanh") == current
    assert sorted(p.name for p in fake.iterdir()) == sorted(kept + [current.name, "tanh.lock"])


def test_builds_get_an_ordinary_builds_modes(fake, monkeypatch, tmp_path):
    """Under umask 022 the cache's folders are 0755 and a library 0755, readable by a team."""
    monkeypatch.setenv("ZOO_KERNEL_CACHE", str(tmp_path / "team" / "kernels"))
    old = os.umask(0o022)
    try:
        library = compiled.build("tanh")
    finally:
        os.umask(old)
    for path in (library, library.parent, library.parent.parent):
        assert stat.S_IMODE(path.stat().st_mode) == 0o755, path


def test_a_run_records_whether_kernels_ran(fresh, monkeypatch, tiny_spec, tmp_path):
    """Tag ``zoo.kernels``: the tiny NCDE's fast path on the CPU asks for kernels; without a
    compiler they run generic (warned once); the generic implementation uses none."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    tiny_spec["device"] = "cpu"  # the kernels are the CPU's; a CUDA run asks for none
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.warns(UserWarning, match="no C\\+\\+ compiler") as caught:
        no_compiler = zoo.run_spec(tiny_spec, tracking_uri=uri, progress=False).run_id
    assert len([w for w in caught if "compiler" in str(w.message)]) == 1
    generic = zoo.run_spec(tiny_spec, overrides=["model.implementation=generic"],
                           tracking_uri=uri, progress=False).run_id
    client = open_client(uri)
    assert client.get_run(no_compiler).data.tags["zoo.kernels"] == "generic (no compiler)"
    assert client.get_run(generic).data.tags["zoo.kernels"] == "not used"


@needs_compiler
def test_a_run_with_kernels_records_them(tiny_spec, tmp_path):
    """In the test session's own cache (usually built already), the kernels run compiled."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    tiny_spec["device"] = "cpu"
    run_id = zoo.run_spec(tiny_spec, tracking_uri=uri, progress=False).run_id
    assert open_client(uri).get_run(run_id).data.tags["zoo.kernels"] == "compiled"


def test_a_record_in_words():
    assert compiled.summary({}) == "not used"
    assert compiled.summary({"tanh": "compiled", "sweep": "compiled"}) == "compiled"
    assert compiled.summary({"tanh": "kernels off"}) == "generic (kernels off)"
    assert (compiled.summary({"tanh": "compiled", "sweep": "build failed"})
            == "compiled, some generic (build failed)")
    with compiled.recording() as outer, compiled.recording() as inner:
        compiled.kernel("tanh")
    compiled.kernel("sweep")
    assert list(outer) == list(inner) == ["tanh"]


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
