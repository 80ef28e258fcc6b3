"""Run jobs on spawned worker processes of this machine, one job at a time per worker.

Each run is its own MLflow run, finished (or marked failed) by the worker itself. A worker that
dies (the kernel's out-of-memory killer, say) fails only the job it held, named with the signal
that killed it; a fresh worker takes its place and the other jobs go on. Its run, left RUNNING
by a process that has ended, is resumed by the next sweep from its last stored epoch.

SIGTERM or SIGINT (Ctrl-C) to the sweep is passed on to every worker: the runs in progress end
as a ``zoo run`` does (marked KILLED, ``interrupted`` outcomes with how to resume them), jobs not
yet started come back ``cancelled``, and the sweep collects them all before it ends.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait

from ..results.runs import store_runs
from ..tracking import owner
from .job import Job, Outcome, execute, worker_signals
from .signals import handled


def _serve(conn: Connection, threads: int) -> None:
    """A worker process: execute each job it is sent, send back its outcome; ``None`` ends it."""
    worker_signals()
    while (message := conn.recv()) is not None:
        job, tracking_uri, resume_id = message
        conn.send(execute(job, tracking_uri, threads, resume_id))


class _Worker:
    """A spawned process and the pipe its jobs and outcomes travel on."""

    def __init__(self, context, threads: int):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, threads), name="zoo-worker")
        self.process.start()
        child.close()  # the worker's death then reads as end-of-file here

    def give(self, job: Job, tracking_uri: str, resume_id: str | None) -> None:
        self.conn.send((job, tracking_uri, resume_id))

    def outcome(self) -> Outcome | None:
        """The outcome it sent, or ``None`` when it died before sending one."""
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join()
            return None

    def death(self) -> str:
        """Why it died, and what becomes of its run."""
        code = self.process.exitcode
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            why = " (as the out-of-memory killer does; see `dmesg`)" if name == "SIGKILL" else ""
            text = f"worker process killed by {name}{why}"
        else:
            text = f"worker process ended with exit code {code}"
        return text + "; the next sweep resumes its run if it stored an epoch"

    def run_left(self, tracking_uri: str) -> str | None:
        """The id of the run it left RUNNING, if it had started one."""
        mine = f"tags.`{owner.TAG}` = '{owner.describe(self.process.pid)}'"
        return next((run.info.run_id for run in store_runs(tracking_uri, mine, "RUNNING")), None)

    def close(self, busy: bool) -> None:
        """Stop the process: an idle one is told to end, a busy one is sent SIGTERM (its run
        is marked KILLED)."""
        if not self.process.is_alive():
            return
        if busy:
            self.process.terminate()
        else:
            try:
                self.conn.send(None)
            except OSError:  # it has just died
                pass
        self.process.join()


def run_local(jobs: list[Job], tracking_uri: str, workers: int, threads: int | None = None,
              resumes: dict[Job, str] | None = None) -> Iterator[Outcome]:
    """Outcomes in completion order; ``workers`` processes of ``threads`` CPU threads each
    (default: the cores shared evenly); ``resumes`` names the interrupted run a job goes on
    with."""
    resumes = resumes or {}
    threads = threads or max(1, (os.cpu_count() or 1) // workers)
    context = multiprocessing.get_context("spawn")
    pending, busy, idle = deque(jobs), {}, []
    received: list[int] = []

    def forward(signum, _frame) -> None:
        if not received:
            received.append(signum)
        for worker in busy:
            try:
                os.kill(worker.process.pid, signum)
            except OSError:  # already gone
                pass

    with handled(forward):
        try:
            while pending or busy:
                while pending and not received and len(busy) < workers:
                    worker = idle.pop() if idle else _Worker(context, threads)
                    job = pending.popleft()
                    worker.give(job, tracking_uri, resumes.get(job))
                    busy[worker] = job
                while received and pending:
                    yield Outcome(pending.popleft(), "cancelled", code=128 + received[0])
                if not busy:
                    continue
                ready = set(wait([w.conn for w in busy]))
                for worker in [w for w in busy if w.conn in ready]:
                    job, outcome = busy.pop(worker), worker.outcome()
                    if outcome is not None:
                        idle.append(worker)
                        yield outcome
                    elif received:  # a signal reached it before it could handle one
                        yield Outcome(job, "cancelled", code=128 + received[0])
                    else:
                        yield Outcome(job, "failed", worker.run_left(tracking_uri),
                                      error=worker.death())
        finally:
            for worker in idle:
                worker.close(busy=False)
            for worker in busy:
                worker.close(busy=True)
