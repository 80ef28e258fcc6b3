"""Run jobs in a pool of spawned processes on this machine.

Each run is its own MLflow run, finished (or marked failed) by the worker itself, so a worker
that crashes loses only the run it was executing.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from .job import Job, Outcome, execute


def run_local(jobs: list[Job], tracking_uri: str, workers: int) -> Iterator[Outcome]:
    """Outcomes in completion order; ``workers`` processes share the CPU cores evenly."""
    threads = max(1, (os.cpu_count() or 1) // workers)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(execute, job, tracking_uri, threads): job for job in jobs}
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # the worker process died (e.g. out of memory)
                yield Outcome(futures[future], "failed", error=f"worker crashed: {exc}")
