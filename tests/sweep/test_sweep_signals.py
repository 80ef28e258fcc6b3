"""SIGTERM to a real `zoo sweep`, on local workers and on a local Ray instance: every run in
progress ends as a `zoo run` does.

Each worker completes the write in progress and marks its run KILLED; the sweep prints how to
resume each one and exits 143, leaving no run RUNNING and no temporary folder behind. The same
sweep run again goes on with each interrupted run from its checkpoint, in the same MLflow run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from importlib.util import find_spec

import pytest
from mlflow import MlflowClient

from conftest import store_runs, wait_for_first_epoch


@pytest.mark.parametrize("executor", [
    "local", pytest.param("ray", marks=pytest.mark.skipif(find_spec("ray") is None,
                                                          reason="needs ray"))])
@pytest.mark.slow
def test_sigterm_ends_every_run_of_a_sweep(executor, write_spec, tiny_spec, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    # Ray: a missed stop is re-sent
    tiny_spec["train"]["epochs"] = 40 if executor == "local" else 400
    tiny_spec["data"].update(n_train=64, length=12)
    spec = write_spec(tiny_spec, "tiny.yaml")
    # Ray keeps its sockets under RAY_TMPDIR: a Unix socket path is at most 107 bytes
    env = {**os.environ, "TMPDIR": str(tmp), "OMP_NUM_THREADS": "1", "RAY_TMPDIR": "/tmp"}
    command = [sys.executable, "-m", "zoo", "sweep", str(spec), "--seeds", "1-3", "--workers",
               "2", "--executor", executor, "--tracking-uri", uri]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = wait_for_first_epoch(uri, proc)
    deadline = time.time() + 60  # the second worker's run exists too before the stop
    while len(store_runs(uri)[1]) < 2 and time.time() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    client = MlflowClient(uri)
    _, runs = store_runs(uri)
    assert runs and all(r.info.status == "KILLED" for r in runs), [r.info.status for r in runs]
    for run in runs:  # one line per interrupted run, with its resume command
        hint = f"resume with: zoo run --resume {run.info.run_id} --tracking-uri {uri}"
        [line] = [line for line in err.splitlines()
                  if line.startswith("interrupted") and run.info.run_id in line]
        if client.get_metric_history(run.info.run_id, "train/loss"):
            assert hint in line, err
        else:  # interrupted before its first epoch: no checkpoint, started again by a re-run
            assert "cannot be resumed" in line, err
    assert f"resume with: zoo run --resume {first} --tracking-uri {uri}" in err
    assert "cancelled" in out  # seed 3 never started: no run of its own
    assert len(runs) == 2
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith("zoo-run-")) == []
    if executor == "ray":  # resuming goes through the same job code as a local sweep
        return

    saved = {r.info.run_id: len(client.get_metric_history(r.info.run_id, "train/loss"))
             for r in runs}
    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stderr
    client, after = store_runs(uri)
    assert sorted(r.info.status for r in after) == ["FINISHED"] * 3 + ["KILLED"] * (
        sorted(saved.values()).count(0))
    for run_id, epochs in saved.items():
        if not epochs:  # no checkpoint: its seed ran again in a new run
            continue
        assert f"resuming run {run_id} after epoch" in again.stderr
        steps = [m.step for m in client.get_metric_history(run_id, "train/loss")]
        assert sorted(steps) == list(range(1, 41))
        assert client.get_run(run_id).info.status == "FINISHED"
    seeds = {r.data.tags["zoo.seed"] for r in after if r.info.status == "FINISHED"}
    assert seeds == {"1", "2", "3"}


@pytest.mark.slow
def test_a_worker_killed_outright_fails_only_its_own_run(write_spec, tiny_spec, tmp_path):
    """SIGKILL to one worker (as the out-of-memory killer sends): its seed fails with the signal
    named, the other seeds finish on the remaining and a fresh worker, and the next sweep goes on
    with the killed run from its checkpoint."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    tiny_spec["train"]["epochs"] = 40
    tiny_spec["data"].update(n_train=64, length=12)
    spec = write_spec(tiny_spec, "tiny.yaml")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "zoo", "sweep", str(spec), "--seeds", "1-3", "--workers",
               "2", "--tracking-uri", uri]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    killed = wait_for_first_epoch(uri, proc)
    client = MlflowClient(uri)
    os.kill(int(client.get_run(killed).data.tags["zoo.owner"].rpartition(":")[2]), signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    seed = client.get_run(killed).data.tags["zoo.seed"]
    assert f"tiny seed {seed}: worker process killed by SIGKILL (as the out-of-memory " in out
    assert "3 runs: 2 finished, 1 failed" in out
    for n in "123":  # each run said how far it was
        assert f"[tiny seed {n}] epoch 1/40, train/loss " in err
    assert f"tiny  {seed}     failed    {killed}" in out  # the run it left, in the table
    _, runs = store_runs(uri)
    status = {r.data.tags["zoo.seed"]: r.info.status for r in runs}
    assert status == {**{s: "FINISHED" for s in "123"}, seed: "RUNNING"}

    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"resuming run {killed} after epoch" in again.stderr
    steps = [m.step for m in client.get_metric_history(killed, "train/loss")]
    assert sorted(steps) == list(range(1, 41))
    assert [r.info.status for r in store_runs(uri)[1]] == ["FINISHED"] * 3
