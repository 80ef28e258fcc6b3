"""What a sweep need not start afresh: jobs whose run already FINISHED in the store are skipped,
and jobs whose run was interrupted after an epoch are resumed; failed runs are run again.

A job matches a run with the same ``zoo.spec_hash`` (the resolved spec without its seed) and
``zoo.seed`` tags that is not a smoke run. Smoke jobs are never skipped nor resumed: they check
a spec end to end and are not results.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..results.runs import store_runs
from ..tracking import owner
from ..tracking.mlflow_run import has_artifact, open_client
from .job import Job, Outcome

#: the artifact ``zoo run --resume`` continues from
CHECKPOINT = "checkpoints/last.pt"


def already_finished(uri: str, jobs: list[Job]) -> dict[Job, Outcome]:
    """Jobs that have a FINISHED non-smoke run, with that (newest) run as a skipped outcome."""
    found: dict[Job, Outcome] = {}
    for job, run in _matching_runs(uri, jobs, "FINISHED"):
        if job not in found:
            found[job] = Outcome(job, "skipped", run.info.run_id,
                                 run.data.metrics.get(f"test/{job.metric}"))
    return found


def resumable(uri: str, jobs: list[Job]) -> dict[Job, str]:
    """For each job whose newest run was interrupted after an epoch, that run's id: marked
    KILLED (not a pruned trial), or left RUNNING by a process of this host that has ended (a
    sweep killed outright), and holding a checkpoint. A run that another live process may
    still be writing is left alone."""
    client = open_client(uri)
    newest: dict[Job, Any] = {}
    for job, run in _matching_runs(uri, jobs):
        newest.setdefault(job, run)
    found: dict[Job, str] = {}
    for job, run in newest.items():
        status, tags = run.info.status, run.data.tags
        interrupted = (status == "KILLED" and "zoo.stopped" not in tags or
                       status == "RUNNING" and owner.alive(tags.get(owner.TAG)) is False)
        if interrupted and has_artifact(client, run.info.run_id, CHECKPOINT):
            found[job] = run.info.run_id
    return found


def _matching_runs(uri: str, jobs: list[Job], status: str | None = None
                   ) -> Iterator[tuple[Job, Any]]:
    """(job, run) for every non-smoke run of a non-smoke job, newest run first per job."""
    wanted = {(j.spec_hash, j.seed): j for j in jobs if not j.smoke}
    for digest in sorted({h for h, _ in wanted}):
        for run in store_runs(uri, f"tags.`zoo.spec_hash` = '{digest}'", status):
            tags = run.data.tags
            job = wanted.get((digest, _int(tags.get("zoo.seed"))))
            if job is not None and tags.get("zoo.smoke") != "true":
                yield job, run


def _int(text: str | None) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None
