"""Skip jobs whose run already FINISHED in the store; failed or killed runs are run again.

A job matches a run with the same ``zoo.spec_hash`` (the resolved spec without its seed) and
``zoo.seed`` tags that is not a smoke run. Smoke jobs are never skipped: they check a spec end
to end and are not results.
"""

from __future__ import annotations

from ..results.runs import finished_runs
from .job import Job, Outcome


def already_finished(uri: str, jobs: list[Job]) -> dict[Job, Outcome]:
    """Jobs that have a FINISHED non-smoke run, with that (newest) run as a skipped outcome."""
    wanted = {(j.spec_hash, j.seed): j for j in jobs if not j.smoke}
    found: dict[Job, Outcome] = {}
    for digest in sorted({h for h, _ in wanted}):
        for run in finished_runs(uri, f"tags.`zoo.spec_hash` = '{digest}'"):
            tags = run.data.tags
            job = wanted.get((digest, _int(tags.get("zoo.seed"))))
            if job is None or job in found or tags.get("zoo.smoke") == "true":
                continue
            found[job] = Outcome(job, "skipped", run.info.run_id,
                                 run.data.metrics.get(f"test/{job.metric}"))
    return found


def _int(text: str | None) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None
