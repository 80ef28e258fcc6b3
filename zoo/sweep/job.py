"""One run of a sweep, as sent to a worker process or Ray task, and what comes back."""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    spec_path: str
    overrides: tuple[str, ...]
    seed: int
    name: str
    spec_hash: str
    reproduces: str | None
    metric: str
    smoke: bool


@dataclass(frozen=True)
class Outcome:
    job: Job
    status: str  # finished, failed, skipped
    run_id: str | None = None
    value: float | None = None
    error: str | None = None


def execute(job: Job, tracking_uri: str, threads: int | None = None) -> Outcome:
    """Load the spec and train it in its own MLflow run; a failure becomes a failed outcome."""
    import torch

    from ..runner import RunOptions, run
    from ..spec.validate import load_spec

    if threads:
        torch.set_num_threads(threads)
    tag = f"[{job.name} seed {job.seed}]"
    opts = RunOptions(seed=job.seed, tracking_uri=tracking_uri, smoke=job.smoke,
                      progress=False, keep_freed_blocks=True,  # a worker process of its own
                      say=lambda text: print(tag, text, file=sys.stderr))
    try:
        spec, _ = load_spec(job.spec_path, list(job.overrides))
        result = run(spec, opts)
    except Exception as exc:  # reported in the sweep summary; other runs go on
        return Outcome(job, "failed", error=f"{type(exc).__name__}: {exc}")
    return Outcome(job, "finished", result.run_id, result.test.get(f"test/{job.metric}"))
