"""C++ kernels of the fast paths (``zoo/kernels/src/*.cpp``), compiled on first use.

A kernel is a plain C-ABI shared library: no Python or torch headers, so it compiles in about a
second with the system's C++ compiler (``$CXX``, else ``c++``) for this machine's CPU
(``-O3 -march=native``; loops are vectorised by ``#pragma omp simd``, no OpenMP runtime). The
compiler is probed once per process (:func:`toolchain`). The library is cached under
``$ZOO_KERNEL_CACHE`` (default ``~/.cache/nde-zoo/kernels``) as ``<name>-<source>-<build>.so``:
a hash of its source and the shared headers (``kernels/*.h``), then one of the flags, the
compiler's version and the CPU's flags. It is built under an exclusive lock of its own
(``<name>.lock`` beside it), so concurrent processes build it once and the others load that
build, while different kernels build side by side; it is written atomically
with the modes of an ordinary build (0755 under umask 022), so a team's shared cache serves all
its users; and its builds from other sources are removed then (other machines' builds of the same
source stay).
``ZOO_COMPILED_KERNELS=0`` turns them off. Where a kernel cannot be had (no compiler: one warning
per process; a failed build: one per kernel; kernels off), :func:`kernel` returns None and the
callers run their torch-operation form, which gives the same numbers; :func:`recording` and
:func:`summary` tell a run which of these happened. :func:`use_compiled` makes that
choice for a call, :func:`function` finds a kernel's entry for a dtype, and :func:`chunks` with
:func:`each_chunk` split independent work (samples, lanes) between threads;
:func:`torch_form_gradient` gives the gradient of an input a kernel does not differentiate.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal, NamedTuple

import torch

from ..filemodes import give_normal_mode

SOURCES = Path(__file__).with_name("src")
FLAGS = ("-O3", "-march=native", "-fopenmp-simd", "-std=c++17", "-shared", "-fPIC")
SUFFIX = {torch.float32: "f32", torch.float64: "f64"}

#: which form runs: the compiled kernel, the torch operations, or ``auto`` (compiled where it can)
Form = Literal["auto", "compiled", "torch"]


def enabled() -> bool:
    """False when ``ZOO_COMPILED_KERNELS`` is ``0``."""
    return os.environ.get("ZOO_COMPILED_KERNELS", "1") != "0"


class Toolchain(NamedTuple):
    """The C++ compiler the kernels are built with."""

    compiler: str
    version: str  # its ``--version`` output, part of the build hash


class Loaded(NamedTuple):
    """A kernel's library, and what happened: ``compiled`` or why it did not
    (``no compiler``, ``build failed``, ``kernels off``)."""

    library: ctypes.CDLL | None
    outcome: str


class NoCompiler(FileNotFoundError):
    """No C++ compiler can be run (warned once per process by :func:`toolchain`)."""


#: the outcomes of the kernels asked for inside each open :func:`recording`
_records: list[dict[str, str]] = []


def kernel(name: str) -> ctypes.CDLL | None:
    """The library built from ``kernels/<name>.cpp``, or None if kernels are off or it cannot be
    built (warned once per process without a compiler, once per kernel for a failed build)."""
    loaded = _load(name) if enabled() else Loaded(None, "kernels off")
    for record in _records:
        record[name] = loaded.outcome
    return loaded.library


@contextmanager
def recording() -> Iterator[dict[str, str]]:
    """Each kernel asked for inside the block, with its outcome (:class:`Loaded`)."""
    record: dict[str, str] = {}
    _records.append(record)
    try:
        yield record
    finally:
        _records.remove(record)


def summary(record: dict[str, str]) -> str:
    """A :func:`recording` in words: ``compiled``, ``generic (<why>)``, ``compiled, some generic
    (<why>)`` or ``not used``."""
    if not record:
        return "not used"
    why = ", ".join(sorted(set(record.values()) - {"compiled"}))
    if not why:
        return "compiled"
    some = "compiled, some " if "compiled" in record.values() else ""
    return f"{some}generic ({why})"


@functools.cache
def _load(name: str) -> Loaded:
    try:
        return Loaded(ctypes.CDLL(str(build(name))), "compiled")
    except NoCompiler:
        return Loaded(None, "no compiler")
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", None) or error
        warnings.warn(f"compiled kernel '{name}' unavailable ({str(detail).strip()[:500]}); "
                      "running its torch-operation form", stacklevel=3)
        return Loaded(None, "build failed")


@functools.cache
def toolchain() -> Toolchain | None:
    """The C++ compiler (``$CXX``, else ``c++`` or ``g++``) with its version, probed once per
    process; None, with one warning, where none runs."""
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    try:
        if compiler is None:
            raise FileNotFoundError("neither $CXX nor c++ nor g++ found")
        return Toolchain(compiler, subprocess.run([compiler, "--version"], capture_output=True,
                                                  text=True, check=True).stdout)
    except (OSError, subprocess.CalledProcessError) as error:
        warnings.warn(f"no C++ compiler for the compiled kernels ({error}): the fast paths run "
                      "their generic torch-operation form (same numbers, slower). Install one "
                      "(g++ or clang++) or set CXX to it; ZOO_COMPILED_KERNELS=0 silences this",
                      stacklevel=5)
        return None


def use_compiled(form: Form, name: str, *tensors: torch.Tensor) -> bool:
    """Whether ``form`` runs kernel ``name`` for these tensors (``auto``: all on the CPU, float32
    or float64 alike, and the kernel built)."""
    if form != "auto":
        return form == "compiled"
    dtype = tensors[0].dtype
    return (dtype in SUFFIX and all(t.device.type == "cpu" and t.dtype == dtype for t in tensors)
            and kernel(name) is not None)


def function(name: str, entry: str, dtype: torch.dtype) -> Callable:
    """Kernel ``name``'s C function ``<entry>_f32`` or ``<entry>_f64``."""
    return getattr(kernel(name), f"{entry}_{SUFFIX[dtype]}")


def longs(*values: int) -> list[ctypes.c_long]:
    return [ctypes.c_long(value) for value in values]


def pointers(*tensors: torch.Tensor) -> list[ctypes.c_void_p]:
    return [ctypes.c_void_p(t.data_ptr()) for t in tensors]


def chunks(size: int) -> list[tuple[int, int]]:
    """[0, size) split into ``torch.get_num_threads()`` contiguous ranges (at most ``size``)."""
    parts = max(1, min(torch.get_num_threads(), size))
    bounds = [size * p // parts for p in range(parts + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def each_chunk(ranges: list[tuple[int, int]], run: Callable[[int, int, int], None]) -> None:
    """``run(index, start, stop)`` for every range, the first on this thread, the others on a
    persistent pool (a kernel call releases the GIL)."""
    others = [_pool().submit(run, index, *bounds) for index, bounds in enumerate(ranges) if index]
    run(0, *ranges[0])
    for future in others:
        future.result()


def torch_form_gradient(operation: Callable, inputs: list[torch.Tensor], index: int,
                        grad: torch.Tensor) -> torch.Tensor:
    """The gradient of ``inputs[index]`` through ``operation(*inputs, form="torch")``: for an
    input a kernel does not differentiate (the fast paths' data, which needs none)."""
    with torch.enable_grad():
        inputs = [x.detach().requires_grad_(i == index) if isinstance(x, torch.Tensor) else x
                  for i, x in enumerate(inputs)]
        return torch.autograd.grad(operation(*inputs, form="torch"), inputs[index], grad)[0]


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(thread_name_prefix="zoo-kernel")


def build(name: str) -> Path:
    """The cached library of ``kernels/<name>.cpp``, compiled first if missing (raises
    :class:`NoCompiler` where there is no compiler)."""
    tools = toolchain()
    if tools is None:
        raise NoCompiler("no C++ compiler")
    source = SOURCES / f"{name}.cpp"
    version = _hash(source.read_text(), *[h.read_text() for h in sorted(SOURCES.glob("*.h"))])
    setup = _hash(" ".join(FLAGS), tools.version, platform.machine(), _cpu_flags())
    target = _cache_dir() / f"{name}-{version}-{setup}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with _locked(target.parent / f"{name}.lock"):
            if not target.exists():  # not built by another process while this one waited
                _compile(tools.compiler, source, target)
                _prune(name, version, target.parent)
    return target


def _hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the lock file ``path`` (created if missing): the builds of one
    kernel take turns across processes. Where the file system has no such locks (some NFS),
    unlocked: a build may be repeated, never torn."""
    descriptor = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        with suppress(OSError):
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _compile(compiler: str, source: Path, target: Path) -> None:
    """Compile ``source`` to ``target`` atomically, with an ordinary build's modes."""
    fd, partial = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        subprocess.run([compiler, *FLAGS, str(source), "-o", partial], capture_output=True,
                       text=True, check=True)
        give_normal_mode(partial, executable=True)  # 0755 under umask 022, not mkstemp's
        os.replace(partial, target)
    finally:
        Path(partial).unlink(missing_ok=True)


def _prune(name: str, version: str, folder: Path) -> None:
    """Remove kernel ``name``'s libraries built from a source other than ``version`` (any
    machine's), including the one-hash libraries of earlier releases; nothing else."""
    ours = re.compile(rf"{re.escape(name)}-(?P<version>[0-9a-f]{{16}})(-[0-9a-f]{{16}})?\.so")
    for path in folder.iterdir():
        match = ours.fullmatch(path.name)
        if match and match["version"] != version and path.is_file():
            path.unlink(missing_ok=True)


def _cache_dir() -> Path:
    configured = os.environ.get("ZOO_KERNEL_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "nde-zoo" / "kernels"


def _cpu_flags() -> str:
    """The CPU's feature flags (``-march=native`` builds for them), empty where unknown."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return ""
