"""Run jobs as Ray tasks, on an existing cluster (``address``) or a local Ray instance.

Each job is one task holding ``cpus`` CPUs and ``gpus`` GPUs (fractions share a GPU), so Ray
places as many runs at once as the cluster's resources allow. Ray is optional: install it with
``pip install 'ray[default]'``. Every node must have nde-zoo (and its plugins) installed and
reach the tracking store.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from urllib.parse import urlparse

from ..errors import InputError
from .job import Job, Outcome, execute


def _ray():
    try:
        import ray
    except ImportError:
        raise InputError("the ray executor needs Ray: pip install 'ray[default]' "
                         "(or use --executor local)") from None
    return ray


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` (or ``ray://HOST:PORT``) nobody listens on."""
    if address in ("auto", "local"):
        return
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    if not parsed.hostname or parsed.port is None:
        raise InputError(f"Ray address '{address}': expected HOST:PORT, ray://HOST:PORT or auto")
    try:
        socket.create_connection((parsed.hostname, parsed.port), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"Ray cluster at {address} is unreachable ({exc.strerror or exc}); "
                         f"start it with 'ray start --head' or check --address") from None


def preflight(address: str | None) -> None:
    """Check, before any work, that Ray is installed and the cluster address answers."""
    _ray()
    if address:
        check_reachable(address)


def _connect(ray, address: str | None, workers: int, cpus: float) -> bool:
    """Connect (or start a local instance); True when this call started Ray."""
    if ray.is_initialized():
        return False
    if address:
        check_reachable(address)
        try:
            ray.init(address=address)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise InputError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
    else:
        ray.init(num_cpus=max(1, round(workers * cpus)), include_dashboard=False)
    return True


def run_ray(jobs: list[Job], tracking_uri: str, address: str | None, workers: int,
            cpus: float = 1.0, gpus: float = 0.0) -> Iterator[Outcome]:
    """Outcomes in completion order; shuts Ray down afterwards if it started it."""
    ray = _ray()
    started = _connect(ray, address, workers, cpus)
    try:
        available = ray.cluster_resources().get("GPU", 0)
        if gpus > available and not address:
            raise InputError(f"--gpus-per-run {gpus:g}: this machine has {available:g} GPUs")
        if gpus > available:
            print(f"warning: each run asks for {gpus:g} GPU but the cluster has {available:g} "
                  f"now; runs wait until a GPU node joins", file=sys.stderr)
        task = ray.remote(execute).options(num_cpus=cpus, num_gpus=gpus)
        threads = max(1, int(cpus))
        pending = {task.remote(job, tracking_uri, threads): job for job in jobs}
        while pending:
            [done], _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(done)
            try:
                yield ray.get(done)
            except ray.exceptions.RayError as exc:  # the worker died or was cancelled
                yield Outcome(job, "failed", error=f"Ray task failed: {type(exc).__name__}")
    finally:
        if started:
            ray.shutdown()
