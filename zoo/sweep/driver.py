"""Plan a sweep, skip what already finished, resume what was interrupted, run the rest on the
chosen executor."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import InputError
from ..tracking.mlflow_run import check_store, resolve_uri
from .idempotence import already_finished, resumable
from .job import Job, Outcome
from .local import run_local
from .plan import plan
from .ray_executor import preflight, run_ray


@dataclass
class SweepOptions:
    seeds: list[int] | None = None
    overrides: list[str] = field(default_factory=list)
    executor: str = "local"  # local or ray
    workers: int | None = None
    threads: int | None = None  # CPU threads per local run (default: cores ÷ workers)
    address: str | None = None
    cpus_per_run: float = 1.0
    gpus_per_run: float | None = None  # Ray: default one per run where the cluster has GPUs
    tracking_uri: str | None = None
    smoke: bool = False
    restart: bool = False  # start interrupted runs afresh instead of resuming them


def tracking_uri(cli_uri: str | None, spec_uris: set[str]) -> str:
    """One store for the whole sweep: the CLI's, else the one all specs name, else the default."""
    if not cli_uri and len(spec_uris) > 1:
        raise InputError(f"the specs name different tracking URIs ({', '.join(sorted(spec_uris))})"
                         f"; pass --tracking-uri for the whole sweep")
    return resolve_uri(cli_uri, next(iter(spec_uris), None))


def sweep(targets: list[str], opts: SweepOptions,
          progress: Callable[[Outcome], None] = lambda outcome: None) -> list[Outcome]:
    """Every job's outcome, in plan order; ``progress`` sees each one as it completes."""
    jobs, spec_uris = plan(targets, opts.seeds, opts.overrides, opts.smoke)
    return run_jobs(jobs, spec_uris, opts, progress)


def run_jobs(jobs: list[Job], spec_uris: set[str], opts: SweepOptions,
             progress: Callable[[Outcome], None] = lambda outcome: None) -> list[Outcome]:
    """:func:`sweep` for jobs already planned (``spec_uris``: the specs' own tracking URIs)."""
    if opts.executor == "ray":
        preflight(opts.address)
    uri = tracking_uri(opts.tracking_uri, spec_uris)
    check_store(uri)
    outcomes = already_finished(uri, jobs)
    for outcome in outcomes.values():
        progress(outcome)
    todo = [job for job in jobs if job not in outcomes]
    if todo:
        resumes = {} if opts.restart else resumable(uri, todo)
        workers = opts.workers or min(len(todo), os.cpu_count() or 1)
        if opts.executor == "ray":
            results = run_ray(todo, uri, opts.address, workers, opts.cpus_per_run,
                              opts.gpus_per_run, resumes)
        else:
            results = run_local(todo, uri, workers, opts.threads, resumes)
        for outcome in results:
            outcomes[outcome.job] = outcome
            progress(outcome)
    return [outcomes[job] for job in jobs]
