"""How a sweep reports: one line per completed run, and a table at the end."""

from __future__ import annotations

from ..tables import text_table
from .job import Outcome


def _value(outcome: Outcome) -> str:
    return "" if outcome.value is None else f"{outcome.value:.4f}"


def progress_line(outcome: Outcome) -> str:
    """One line per completed job; an interrupted run's line says how to resume it."""
    job = outcome.job
    text = f"{outcome.status:<8} {job.name} seed {job.seed}"
    if outcome.run_id:
        text += f"  run {outcome.run_id}"
    if outcome.value is not None:
        text += f"  test/{job.metric} {_value(outcome)}"
    return text + (f"  ({outcome.error})" if outcome.error else "")


def summary(outcomes: list[Outcome]) -> str:
    """The sweep table (spec, seed, status, run id, test metric) and a count per status."""
    rows = [[o.job.name, str(o.job.seed), o.status, o.run_id or "-",
             f"{o.job.metric} {_value(o)}" if o.value is not None else "-"] for o in outcomes]
    counts = {s: sum(o.status == s for o in outcomes)
              for s in ("finished", "skipped", "failed", "interrupted", "cancelled")}
    tail = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    # an interrupted run's resume command is in its progress line already
    errors = [f"{o.job.name} seed {o.job.seed}: {o.error}" for o in outcomes
              if o.error and o.status != "interrupted"]
    return "\n".join([text_table(["spec", "seed", "status", "run", "test metric"], rows),
                      f"{len(outcomes)} runs: {tail}", *errors])
