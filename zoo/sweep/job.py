"""One run of a sweep, as sent to a worker process or Ray task, and what comes back.

In a local worker process (see :func:`worker_signals`) SIGTERM and SIGINT end the job in
progress as they end a ``zoo run``: the write in progress completes, the run is marked KILLED and
the outcome is ``interrupted``, with how to resume it. A job that a worker takes up after the
signal does not start (``cancelled``).
"""

from __future__ import annotations

import math
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..durations import duration
from ..tracking.deferred_interrupt import Terminated, exit_code


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
    epochs: int | None = None  # the spec's train.epochs (the most it trains), for progress lines


@dataclass(frozen=True)
class Outcome:
    job: Job
    status: str  # finished, failed, skipped, interrupted, cancelled (not started)
    run_id: str | None = None
    value: float | None = None
    error: str | None = None  # for interrupted: how to go on (resume with: zoo run --resume ...)
    code: int | None = None  # interrupted, cancelled: 143 (SIGTERM) or 130 (SIGINT)


#: a sweep worker's progress lines come at most this often (seconds)
PROGRESS_EVERY_S = 60.0

_stopping: int | None = None  # the signal this worker process received
_in_job = False


def _on_signal(signum, _frame) -> None:
    """The first signal ends the job in progress; a later one (Ctrl-C reaches a worker both from
    the terminal and from the sweep) must not interrupt the marking of its run as KILLED."""
    global _stopping
    if _stopping is not None:
        return
    _stopping = signum
    if _in_job:
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def worker_signals() -> None:
    """Initializer of a local worker process: SIGTERM and SIGINT interrupt the job in progress
    only; an idle worker remembers them and starts no further job."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _on_signal)


def progress_lines(say: Callable[[str], None], metric: str, epochs: int | None = None,
                   every_s: float = PROGRESS_EVERY_S) -> Callable[[dict], None]:
    """A run's watch that says how far it is, at its evaluated epochs (those that log
    ``val/loss``), at most once every ``every_s`` seconds: the epoch (of ``epochs``), training
    loss, validation ``metric``, seconds per epoch and, given ``epochs``, the time the epochs
    left would take at that rate (at most: a recipe may stop early)."""
    last = -math.inf

    def watch(record: dict) -> None:
        nonlocal last
        if "val/loss" not in record or time.monotonic() - last < every_s:
            return
        last = time.monotonic()
        epoch, seconds = record["epoch"], record["time/epoch_seconds"]
        shown = [f"epoch {epoch}" + (f"/{epochs}" if epochs else ""),
                 f"train/loss {record['train/loss']:.4f}"]
        if f"val/{metric}" in record:
            shown.append(f"val/{metric} {record[f'val/{metric}']:.4f}")
        left = f", ≤ {duration((epochs - epoch) * seconds)} left" if epochs else ""
        say(", ".join(shown) + f" ({seconds:.1f} s/epoch{left})")

    return watch


def execute(job: Job, tracking_uri: str, threads: int | None = None,
            resume_id: str | None = None) -> Outcome:
    """Load the spec and train it in its own MLflow run, or go on with the interrupted run
    ``resume_id`` from its last checkpoint; a failure becomes a failed outcome."""
    import torch

    from ..runner import Interrupted, RunOptions, resume, run
    from ..spec.validate import load_spec

    global _in_job
    if _stopping is not None:
        return Outcome(job, "cancelled", code=128 + _stopping)
    if threads:
        torch.set_num_threads(threads)
    tag = f"[{job.name} seed {job.seed}]"

    def say(text: str) -> None:
        print(tag, text, file=sys.stderr, flush=True)

    opts = RunOptions(seed=job.seed, tracking_uri=tracking_uri, smoke=job.smoke,
                      progress=False, keep_freed_blocks=True,  # a worker process of its own
                      say=say, watch=progress_lines(say, job.metric, job.epochs))
    try:
        _in_job = True
        if _stopping is not None:  # arrived just now, before the job could be interrupted
            return Outcome(job, "cancelled", code=128 + _stopping)
        if resume_id:
            result = resume(resume_id, opts)
        else:
            spec, _ = load_spec(job.spec_path, list(job.overrides))
            result = run(spec, opts)
    except Interrupted as exc:  # the run is marked KILLED
        return Outcome(job, "interrupted", exc.run_id, error=exc.hint, code=exc.exit_code)
    except KeyboardInterrupt as exc:  # before the run was created, or just after it finished
        return Outcome(job, "interrupted", code=exit_code(exc),
                       error="interrupted before its run started or as it finished")
    except Exception as exc:  # reported in the sweep summary; other runs go on
        return Outcome(job, "failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        _in_job = False
    return Outcome(job, "finished", result.run_id, result.test.get(f"test/{job.metric}"))
