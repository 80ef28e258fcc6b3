"""Run jobs as Ray tasks, on an existing cluster (``address``) or a local Ray instance.

Each job is one task holding ``cpus`` CPUs and ``gpus`` GPUs (fractions share a GPU; by default
one where the cluster has GPUs, none elsewhere), so Ray places as many runs at once as the
cluster's resources allow: one per GPU on a GPU machine. Ray sets each task's
``CUDA_VISIBLE_DEVICES`` to the GPUs it holds, which its run records. Ray is optional: install
it with ``pip install 'ray[default]'``. Every node must have nde-zoo (and its plugins) installed and
reach the tracking store.

SIGTERM or SIGINT (Ctrl-C) to the sweep cancels every task: Ray raises ``KeyboardInterrupt`` in
a task in progress, whose run then ends as a ``zoo run`` does (marked KILLED, an ``interrupted``
outcome with how to resume it); tasks not yet started come back ``cancelled``. Outcomes carry the
sweep's signal (exit code 143 or 130).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlparse

from ..errors import InputError
from .job import Job, Outcome, execute
from .signals import handled

RECANCEL_S = 1.0


def _ray():
    try:
        import ray
    except ImportError:
        raise InputError("the ray executor needs Ray: pip install 'ray[default]' "
                         "(or use --executor local)") from None
    return ray


#: an HTTP/2 client preface and an empty SETTINGS frame: a Ray head (gRPC) answers with its own
#: SETTINGS frame; a port held by something else stays silent or hangs up
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` (or ``ray://HOST:PORT``) where no gRPC server answers: Ray's
    own client would retry such an address for minutes."""
    if address in ("auto", "local"):
        return
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    if not parsed.hostname or parsed.port is None:
        raise InputError(f"Ray address '{address}': expected HOST:PORT, ray://HOST:PORT or auto")
    try:
        with socket.create_connection((parsed.hostname, parsed.port), timeout=timeout) as conn:
            conn.sendall(_HTTP2_HELLO)
            answered = bool(conn.recv(9))
    except TimeoutError:
        answered = False
    except OSError as exc:
        raise InputError(f"Ray cluster at {address} is unreachable ({exc.strerror or exc}); "
                         f"start it with 'ray start --head' or check --address") from None
    if not answered:
        raise InputError(f"{address} does not answer like a Ray cluster (no gRPC reply within "
                         f"{timeout:g} s); check --address (the head's GCS port, 6379 by "
                         f"default, or ray://HOST:10001)")


def preflight(address: str | None) -> None:
    """Check, before any work, that Ray is installed and the cluster address answers."""
    _ray()
    if address:
        check_reachable(address)


def _connect(ray, address: str | None, workers: int, cpus: float) -> bool:
    """Connect (or start a local instance); True when this call started Ray."""
    if ray.is_initialized():
        return False
    if address:  # preflight() has checked that it answers
        try:
            with _native_stderr_held():
                ray.init(address=address, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InputError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
    else:
        ray.init(num_cpus=max(1, round(workers * cpus)), include_dashboard=False)
    return True


@contextmanager
def _native_stderr_held():
    """Hold what Ray's C++ client writes to stderr while it connects (one warning per retry,
    for about 20 s, when something other than Ray answers): shown if the block succeeds,
    dropped if it raises, whose error then stands alone."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        sys.stderr.write(log.read().decode(errors="replace"))
        sys.stderr.flush()


@contextmanager
def ray_session(address: str | None, workers: int, cpus: float):
    """Ray, connected to the cluster at ``address`` or to a local instance sized for
    ``workers`` tasks of ``cpus`` CPUs; shut down afterwards if this call started it."""
    ray = _ray()
    started = _connect(ray, address, workers, cpus)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def gpus_each(ray, gpus: float | None, address: str | None, unit: str = "run") -> float:
    """The GPUs each task holds: ``gpus``, or by default one where the cluster has any (one
    run per GPU), else none; more than a local cluster has is an error."""
    available = ray.cluster_resources().get("GPU", 0)
    if gpus is None:
        return 1.0 if available >= 1 else 0.0
    if gpus > available and not address:
        raise InputError(f"--gpus-per-{unit} {gpus:g}: this machine has {available:g} GPUs")
    if gpus > available:
        print(f"warning: each {unit} asks for {gpus:g} GPU but the cluster has {available:g} "
              f"now; they wait until a GPU node joins", file=sys.stderr)
    return gpus


def run_ray(jobs: list[Job], tracking_uri: str, address: str | None, workers: int,
            cpus: float = 1.0, gpus: float | None = None,
            resumes: dict[Job, str] | None = None) -> Iterator[Outcome]:
    """Outcomes in completion order (``resumes``: the interrupted run a job goes on with);
    shuts Ray down afterwards if it started it."""
    resumes = resumes or {}
    with ray_session(address, workers, cpus) as ray:
        gpus = gpus_each(ray, gpus, address)
        task = ray.remote(execute).options(num_cpus=cpus, num_gpus=gpus, max_retries=0)
        threads = max(1, int(cpus))
        pending = {task.remote(job, tracking_uri, threads, resumes.get(job)): job for job in jobs}
        received: list[int] = []

        def note(signum, _frame) -> None:
            received.append(signum)

        with handled(note):
            cancelled = 0.0  # when the tasks were last asked to stop
            while pending:
                if received and time.monotonic() - cancelled > RECANCEL_S:
                    for ref in pending:  # again until they end: a request can be missed
                        ray.cancel(ref, force=False)
                    cancelled = time.monotonic()
                done, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
                for ref in done:
                    yield _outcome(ray, ref, pending.pop(ref), received[:1])


def _outcome(ray, ref, job: Job, signal: list[int]) -> Outcome:
    """The outcome of the task ``ref``; after the sweep's ``signal`` a cancelled or interrupted
    one carries its exit code (128 + the signal)."""
    try:
        outcome = ray.get(ref)
    except ray.exceptions.TaskCancelledError:
        return Outcome(job, "cancelled", code=128 + (signal or [2])[0])
    except ray.exceptions.RayError as exc:  # the worker died
        return Outcome(job, "failed", error=f"Ray task failed: {type(exc).__name__}")
    if signal and outcome.status == "interrupted":
        outcome = dataclasses.replace(outcome, code=128 + signal[0])
    return outcome
