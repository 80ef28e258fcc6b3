"""How a `zoo run` ends: resume refusals, SIGTERM, temporary folders, a closed stdout.

Signals go to real `zoo run` processes; the store is then read with MlflowClient.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest
from mlflow import MlflowClient

from zoo.cli.main import main
from zoo.tracking.mlflow_run import open_client

OWNER = "zoo.owner"  # the tag naming the process that trains a run


@pytest.fixture
def tmp(tmp_path, monkeypatch):
    """A private temporary directory for this test's runs, in-process and in subprocesses."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(("zoo-run-",
                                                                          "zoo-resume-")))


def start_zoo(args, cwd, tmp):
    env = {**os.environ, "TMPDIR": str(tmp), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "zoo", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def only_run(uri):
    client = open_client(uri)  # under the store's lock: a `zoo run` may be creating the store
    [exp] = [e for e in client.search_experiments() if e.name != "Default"]
    [run] = client.search_runs([exp.experiment_id])
    return client, run


def wait_for_epochs(uri, proc, n: int) -> str:
    """The id of the run ``proc`` trains, once it has logged ``n`` epochs."""
    deadline = time.time() + 120
    while time.time() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            client, run = only_run(uri)
            if len(client.get_metric_history(run.info.run_id, "train/loss")) >= n:
                return run.info.run_id
        except Exception:  # the store or the run does not exist yet
            pass
        time.sleep(0.1)
    raise AssertionError(f"no {n} epochs logged in time")


def steps(client, run_id, key="train/loss") -> list[int]:
    return [m.step for m in client.get_metric_history(run_id, key)]


def snapshot(client, run_id) -> tuple:
    run = client.get_run(run_id)
    histories = {k: sorted((m.step, m.value, m.timestamp)
                           for m in client.get_metric_history(run_id, k))
                 for k in run.data.metrics}
    return run.info.status, run.info.end_time, run.data.tags, histories


def slow_spec(tiny_spec, epochs: int, length: int = 12):
    tiny_spec["train"]["epochs"] = epochs
    tiny_spec["data"].update(n_train=64, length=length)
    return tiny_spec


@pytest.mark.slow
def test_resume_of_a_finished_run_changes_nothing(write_spec, tiny_spec, tmp_path, tmp,
                                                  capsys):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    assert main(["run", str(write_spec(tiny_spec)), "--no-progress", "--tracking-uri", uri]) == 0
    client, run = only_run(uri)
    before = snapshot(client, run.info.run_id)
    assert before[0] == "FINISHED"
    capsys.readouterr()
    code = main(["run", "--resume", run.info.run_id, "--no-progress", "--tracking-uri", uri])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == f"error: run {run.info.run_id} already finished; nothing to resume"
    assert snapshot(client, run.info.run_id) == before
    assert leftovers(tmp) == []


@pytest.mark.slow
def test_resume_refuses_a_run_another_process_is_training(write_spec, tiny_spec, tmp_path, tmp,
                                                          capsys):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    spec = write_spec(slow_spec(tiny_spec, epochs=40))
    proc = start_zoo(["run", str(spec), "--no-progress", "--tracking-uri", uri], tmp_path, tmp)
    try:
        run_id = wait_for_epochs(uri, proc, 1)
        code = main(["run", "--resume", run_id, "--no-progress", "--tracking-uri", uri])
        err = capsys.readouterr().err
        assert code == 2, err
        assert f"process {proc.pid} on this host is still training it" in err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        code = main(["run", "--resume", run_id, "--force", "--no-progress", "--tracking-uri",
                     uri])
        err = capsys.readouterr().err
        assert code == 2 and f"process {proc.pid} on this host is still training it" in err
        client = MlflowClient(uri)
        run = client.get_run(run_id)
        assert run.info.status == "RUNNING"
        from zoo.tracking import owner

        assert run.data.tags[OWNER] == owner.describe(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    done = steps(client, run_id)
    assert done == sorted(set(done))  # every epoch logged once


@pytest.mark.slow
def test_resume_of_a_stale_run(write_spec, tiny_spec, tmp_path, tmp, capsys):
    """A run left RUNNING by a killed process: taken over when zoo can tell that the process is
    gone (this host), with --force when it cannot (another host)."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    spec = write_spec(slow_spec(tiny_spec, epochs=30, length=30))  # not done when killed
    proc = start_zoo(["run", str(spec), "--no-progress", "--tracking-uri", uri], tmp_path,
                     tmp_path)  # SIGKILL leaves its folders behind: not in ``tmp``
    run_id = wait_for_epochs(uri, proc, 1)
    proc.kill()
    proc.communicate(timeout=60)
    client = MlflowClient(uri)
    assert client.get_run(run_id).info.status == "RUNNING"

    client.set_tag(run_id, OWNER, "elsewhere:4242")
    code = main(["run", "--resume", run_id, "--no-progress", "--tracking-uri", uri])
    err = capsys.readouterr().err
    assert code == 2 and "process 4242 on host elsewhere" in err and "--force" in err
    assert client.get_run(run_id).info.status == "RUNNING"

    code = main(["run", "--resume", run_id, "--force", "--no-progress", "--tracking-uri", uri])
    assert code == 0, capsys.readouterr().err
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED"
    assert sorted(steps(client, run_id)) == list(range(1, 31))
    assert len(steps(client, run_id, "test/accuracy")) == 1
    assert leftovers(tmp) == []


@pytest.mark.slow
def test_a_resume_that_cannot_start_leaves_the_run_resumable(write_spec, tiny_spec, tmp_path,
                                                             tmp, capsys, monkeypatch):
    """An error before training restarts (here: the stored spec no longer loads) ends the run
    KILLED with its checkpoint, not FAILED, which `zoo sweep` would start afresh."""
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    spec = write_spec(slow_spec(tiny_spec, epochs=30, length=30))  # not done when stopped
    proc = start_zoo(["run", str(spec), "--no-progress", "--tracking-uri", uri], tmp_path, tmp)
    run_id = wait_for_epochs(uri, proc, 1)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    client = MlflowClient(uri)
    assert client.get_run(run_id).info.status == "KILLED"
    done = steps(client, run_id)

    from zoo import runner
    from zoo.errors import SpecError

    def unloadable(text, origin):
        raise SpecError([f"{origin}:16:5: model.field: no longer valid"])

    with monkeypatch.context() as patch:
        patch.setattr(runner, "spec_from_yaml", unloadable)
        code = main(["run", "--resume", run_id, "--no-progress", "--tracking-uri", uri])
    err = capsys.readouterr().err
    assert code == 2 and f"run {run_id} spec.yaml:16:5: model.field: no longer valid" in err
    assert f"run {run_id} is left KILLED with its checkpoint" in err and "Traceback" not in err
    assert client.get_run(run_id).info.status == "KILLED"
    assert steps(client, run_id) == done

    code = main(["run", "--resume", run_id, "--no-progress", "--tracking-uri", uri])
    assert code == 0, capsys.readouterr().err
    assert client.get_run(run_id).info.status == "FINISHED"
    assert sorted(steps(client, run_id)) == list(range(1, 31))
    assert leftovers(tmp) == []


def test_owner_liveness():
    from zoo.tracking import owner

    assert owner.alive(owner.describe(os.getpid())) is True
    child = subprocess.Popen(["true"])
    child.wait()
    assert owner.alive(owner.describe(child.pid)) is False
    assert owner.alive("elsewhere:1") is None and owner.alive(None) is None


@pytest.mark.slow
def test_sigterm_ends_a_run_like_ctrl_c(write_spec, tiny_spec, tmp_path, tmp):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    spec = write_spec(slow_spec(tiny_spec, epochs=40))
    proc = start_zoo(["run", str(spec), "--no-progress", "--tracking-uri", uri], tmp_path, tmp)
    run_id = wait_for_epochs(uri, proc, 2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert f"resume with: zoo run --resume {run_id}" in err and "Traceback" not in err
    client = MlflowClient(uri)
    assert client.get_run(run_id).info.status == "KILLED"
    done = steps(client, run_id)
    assert 2 <= len(done) < 40 and done == sorted(set(done))
    assert leftovers(tmp) == []


@pytest.mark.slow
def test_sigterm_before_the_first_checkpoint(write_spec, tiny_spec, tmp_path, tmp, capsys):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    tiny_spec["data"].update(n_train=128, length=100)  # a first epoch of seconds
    spec = write_spec(tiny_spec)
    proc = start_zoo(["run", str(spec), "--no-progress", "--tracking-uri", uri], tmp_path, tmp)
    for line in proc.stderr:
        if line.startswith("MLflow run"):
            break
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    client, run = only_run(uri)
    assert run.info.status == "KILLED"
    assert steps(client, run.info.run_id) == []  # the premise: no epoch was saved
    assert "cannot be resumed" in err and "start it again" in err and "Traceback" not in err
    assert leftovers(tmp) == []
    code = main(["run", "--resume", run.info.run_id, "--tracking-uri", uri])
    assert code == 2 and "no checkpoint" in capsys.readouterr().err
    assert client.get_run(run.info.run_id).info.status == "KILLED"


def test_temporary_folders_are_removed(write_spec, tiny_spec, tmp_path, tmp, capsys,
                                       monkeypatch):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    assert main(["run", str(write_spec(tiny_spec)), "--no-progress", "--tracking-uri", uri]) == 0
    assert leftovers(tmp) == []
    # a run that fails at its first evaluation, once created: validation now refuses a select
    # metric the readout does not report, so the loop's own check (the safety net for readouts
    # that declare no metric names) is made to fail instead
    from zoo.errors import InputError
    from zoo.training.loop import Trainer

    def unrecorded(self, record):
        raise InputError("train.select: metric 'val/nope' is not recorded")

    monkeypatch.setattr(Trainer, "_check_watched", unrecorded)
    tiny_spec["tracking"] = {"experiment": "failing"}
    assert main(["run", str(write_spec(tiny_spec)), "--no-progress", "--tracking-uri", uri]) == 2
    assert "val/nope" in capsys.readouterr().err
    client = MlflowClient(uri)
    [run] = client.search_runs([client.get_experiment_by_name("failing").experiment_id])
    assert run.info.status == "FAILED"
    assert leftovers(tmp) == []


def test_closed_stdout_ends_quietly(tmp_path):
    """`zoo list | head -1`: the reader is gone; exit 141 (128 + SIGPIPE) without a message."""
    proc = start_zoo(["list"], tmp_path, tmp_path)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_sigterm_inside_a_write_is_raised_after_it_completes():
    from zoo.tracking.deferred_interrupt import (Terminated, exit_code, interrupts_deferred,
                                                 sigterm_interrupts)

    done, before = [], signal.getsignal(signal.SIGTERM)  # another library's handler, or default
    with pytest.raises(Terminated) as raised, sigterm_interrupts():
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("write finished")
    assert done == ["write finished"] and exit_code(raised.value) == 143
    assert signal.getsignal(signal.SIGTERM) is before  # the handler before is put back
