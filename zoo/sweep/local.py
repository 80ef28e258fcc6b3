"""Run jobs in a pool of spawned processes on this machine.

Each run is its own MLflow run, finished (or marked failed) by the worker itself, so a worker
that crashes loses only the run it was executing.

SIGTERM or SIGINT (Ctrl-C) to the sweep is passed on to every worker: the runs in progress end
as a ``zoo run`` does (marked KILLED, ``interrupted`` outcomes with how to resume them), jobs not
yet started come back ``cancelled``, and the sweep collects them all before it ends.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from .job import Job, Outcome, execute, worker_signals
from .signals import handled


def run_local(jobs: list[Job], tracking_uri: str, workers: int, threads: int | None = None,
              resumes: dict[Job, str] | None = None) -> Iterator[Outcome]:
    """Outcomes in completion order; ``workers`` processes of ``threads`` CPU threads each
    (default: the cores shared evenly); ``resumes`` names the interrupted run a job goes on
    with."""
    resumes = resumes or {}
    threads = threads or max(1, (os.cpu_count() or 1) // workers)
    context = multiprocessing.get_context("spawn")
    received: list[int] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=context,
                             initializer=worker_signals) as pool:

        def forward(signum, _frame) -> None:
            if not received:
                received.append(signum)
            for pid in list(getattr(pool, "_processes", None) or {}):
                try:
                    os.kill(pid, signum)
                except OSError:  # already gone
                    pass

        with handled(forward):
            futures = {pool.submit(execute, job, tracking_uri, threads, resumes.get(job)): job
                       for job in jobs}
            for future in as_completed(futures):
                try:
                    yield future.result()
                except Exception as exc:  # the worker process died (e.g. out of memory)
                    job = futures[future]
                    if received:  # a signal reached it before it could handle one
                        yield Outcome(job, "cancelled", code=128 + received[0])
                    else:
                        yield Outcome(job, "failed", error=f"worker crashed: {exc}")
