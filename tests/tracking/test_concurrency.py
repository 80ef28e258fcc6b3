"""Processes that open one new SQLite store at once all succeed and share one experiment."""

from __future__ import annotations

import multiprocessing

import pytest
from mlflow import MlflowClient

from zoo.tracking.mlflow_run import MlflowRun

PROCESSES = 4


def _start_run(uri: str, barrier, results) -> None:
    """Wait for the others, then open the store and start a run in experiment ``race``."""
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401  (slow import, before the start)

    barrier.wait()
    try:
        tracker = MlflowRun(uri)
        run_id = tracker.start("race", "run", {})
        tracker.finish()
        results.put(("ok", run_id))
    except BaseException as exc:  # reported to the test, not lost in a child's stderr
        results.put(("failed", f"{type(exc).__name__}: {exc}"))


@pytest.mark.slow
def test_processes_create_one_new_store_at_once(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    workers = [ctx.Process(target=_start_run, args=(uri, barrier, results))
               for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    try:
        outcomes = [results.get(timeout=120) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=30)
            if worker.is_alive():
                worker.terminate()
    assert [msg for status, msg in outcomes if status != "ok"] == []
    client = MlflowClient(uri)
    [exp] = [e for e in client.search_experiments() if e.name == "race"]
    logged = {r.info.run_id for r in client.search_runs([exp.experiment_id])}
    assert logged == {run_id for _, run_id in outcomes} and len(logged) == PROCESSES


@pytest.mark.slow
def test_experiment_created_meanwhile_is_reused(tmp_path):
    """A create that loses the race to another process (any backend) re-reads the experiment."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    tracker = MlflowRun(uri)
    other = MlflowClient(uri).create_experiment("race")
    lookup = tracker.client.get_experiment_by_name
    calls = []

    def stale_first(name):  # the first look-up happens before the other process creates it
        calls.append(name)
        return None if len(calls) == 1 else lookup(name)

    tracker.client.get_experiment_by_name = stale_first
    assert tracker._experiment_id("race") == other and len(calls) == 2
