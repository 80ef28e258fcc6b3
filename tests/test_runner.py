"""`zoo run` end to end: MLflow contents, checkpoint reload, determinism, resume."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
import torch

from zoo.cli.main import main
from zoo.tracking.mlflow_run import open_client
from zoo.training.checkpoint import load_model
from zoo.training.device import resolve_device


def run_cli(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return f"sqlite:///{tmp_path / 'mlruns.db'}"


def only_run(uri):
    client = open_client(uri)  # under the store's lock: a `zoo run` may be creating the store
    [exp] = [e for e in client.search_experiments() if e.name != "Default"]
    [run] = client.search_runs([exp.experiment_id])
    return client, run


@pytest.mark.slow
def test_run_logs_params_metrics_artifacts(write_spec, tiny_spec, store, tmp_path, capsys):
    path = write_spec(tiny_spec, "tiny.yaml")
    threads = torch.get_num_threads()
    try:
        code, out, err = run_cli(["run", str(path), "--no-progress", "--seed", "3",
                                  "--threads", "1"], capsys)
    finally:
        torch.set_num_threads(threads)
    assert code == 0, err
    assert f"mlflow ui --backend-store-uri {store}" in out
    client, run = only_run(store)
    params = run.data.params
    assert params["model.field.kind"] == "ncde"
    assert params["model.field.hidden"] == "8"
    assert params["train.optimizer.lr"] == "0.01"
    assert params["seed"] == "3"
    assert int(params["model.n_parameters"]) > 0
    tags = run.data.tags
    assert tags["zoo.seed"] == "3" and tags["zoo.device"] == str(resolve_device("auto"))
    assert tags["zoo.threads"] == "1"  # --threads
    assert len(tags["zoo.spec_hash"]) == 16
    assert "zoo.version" in tags and tags["zoo.implementation"] == "fast"
    assert tags["zoo.allocator"] == "glibc, freed blocks kept"  # this machine: Linux, glibc
    history = client.get_metric_history(run.info.run_id, "train/loss")
    assert [m.step for m in history] == [1, 2]
    assert [m.step for m in client.get_metric_history(run.info.run_id, "val/accuracy")] == [1, 2]
    assert "test/accuracy" in run.data.metrics and "solver/nfe" in run.data.metrics
    assert run.data.metrics["time/epoch_seconds"] > 0
    files = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"spec.yaml", "checkpoints", "plots"} <= files
    ckpts = {a.path for a in client.list_artifacts(run.info.run_id, "checkpoints")}
    assert ckpts == {"checkpoints/best.pt", "checkpoints/last.pt"}
    assert run.info.status == "FINISHED"

    # the best checkpoint rebuilds an identical model
    local = client.download_artifacts(run.info.run_id, "checkpoints/best.pt", str(tmp_path))
    model = load_model(local)
    assert model.spec.model.field.hidden == 8
    payload = torch.load(local, map_location="cpu", weights_only=False)
    for key, value in model.state_dict().items():
        assert torch.equal(value, payload["model"][key])


@pytest.mark.slow
def test_same_seed_same_metrics(write_spec, tiny_spec, tmp_path, monkeypatch, capsys):
    path = write_spec(tiny_spec, "tiny.yaml")
    results = []
    for i in range(2):
        folder = tmp_path / f"r{i}"
        folder.mkdir()
        monkeypatch.chdir(folder)
        code, out, err = run_cli(["run", str(path), "--no-progress", "--seed", "5"], capsys)
        assert code == 0, err
        client, run = only_run(f"sqlite:///{folder / 'mlruns.db'}")
        results.append({k: v for k, v in run.data.metrics.items() if not k.startswith("time/")})
    assert results[0] == results[1]


def test_unwritable_store_and_unreachable_server(write_spec, tiny_spec, tmp_path, capsys):
    path = write_spec(tiny_spec)
    code, _, err = run_cli(["run", str(path), "--tracking-uri",
                            "sqlite:////nonexistent-dir/x.db"], capsys)
    assert code == 2 and "folder /nonexistent-dir does not exist" in err
    code, _, err = run_cli(["run", str(path), "--tracking-uri", "http://127.0.0.1:9"], capsys)
    assert code == 2 and "tracking server http://127.0.0.1:9 is unreachable" in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_resume_continues_the_same_run(write_spec, tiny_spec, tmp_path):
    """Kill a run mid-training, resume it, and find one history with every epoch once."""
    tiny_spec["train"]["epochs"] = 40
    tiny_spec["data"].update(n_train=64)
    path = write_spec(tiny_spec)
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    proc = subprocess.Popen([sys.executable, "-m", "zoo", "run", str(path), "--no-progress",
                             "--tracking-uri", uri], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    client = None
    deadline = time.time() + 600  # generous: a loaded machine starts slowly
    while time.time() < deadline:
        time.sleep(1)
        assert proc.poll() is None, proc.communicate()[1]
        try:
            client, run = only_run(uri)
        except (ValueError, Exception):
            continue
        if len(client.get_metric_history(run.info.run_id, "train/loss")) >= 3:
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "resume with: zoo run --resume" in err
    client, run = only_run(uri)
    assert run.info.status == "KILLED"
    done = len(client.get_metric_history(run.info.run_id, "train/loss"))
    assert 3 <= done < 40
    params_before = run.data.params

    out = subprocess.run([sys.executable, "-m", "zoo", "run", "--resume", run.info.run_id,
                          "--no-progress", "--tracking-uri", uri], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    client, run = only_run(uri)
    assert run.info.status == "FINISHED"
    steps = [m.step for m in client.get_metric_history(run.info.run_id, "train/loss")]
    assert sorted(steps) == list(range(1, 41))
    assert run.data.params == params_before
    assert "test/accuracy" in run.data.metrics


@pytest.mark.slow
def test_resume_errors(tmp_path, store, capsys):
    code, _, err = run_cli(["run", "--resume", "0123abc", "--tracking-uri", store], capsys)
    assert code == 2 and "no run '0123abc'" in err
    code, _, err = run_cli(["run", "x.yaml", "--resume", "0123abc"], capsys)
    assert code == 2 and "do not pass a spec" in err
    code, _, err = run_cli(["run", "--resume", "0123abc", "--data-note", "a copy"], capsys)
    assert code == 2 and "--data-note" in err


@pytest.mark.slow
def test_smoke_run_is_tiny(write_spec, tiny_spec, store, capsys):
    """--smoke: one epoch on a few series cut to a few steps."""
    tiny_spec["data"].update(length=40, n_train=64)
    tiny_spec["train"]["epochs"] = 5
    code, _, err = run_cli(["run", str(write_spec(tiny_spec)), "--smoke", "--no-progress"],
                           capsys)
    assert code == 0, err
    client, run = only_run(store)
    assert run.data.tags["zoo.smoke"] == "true"
    assert [m.step for m in client.get_metric_history(run.info.run_id, "train/loss")] == [1]
    assert float(run.data.metrics["solver/nfe"]) <= 4 * 23  # rk4 over at most 24 grid points


@pytest.mark.parametrize("value", ["0", "two", "100000"])  # 100000: torch segfaulted
def test_run_refuses_a_thread_count_that_is_not_positive(value, write_spec, tiny_spec, capsys):
    path = write_spec(tiny_spec, "tiny.yaml")
    with pytest.raises(SystemExit) as exit_info:
        run_cli(["run", str(path), "--threads", value], capsys)
    assert exit_info.value.code == 2
    assert f"--threads: not a thread count from 1 to 1024: '{value}'" in capsys.readouterr().err


@pytest.mark.slow
def test_data_note_labels_the_run_as_partial(write_spec, tiny_spec, store, capsys):
    """--data-note: data that are not the named dataset's are tagged like a partial mirror copy,
    so an exported record shows the label beside the number."""
    tiny_spec["train"]["epochs"] = 1
    note = "random series of the official shapes, for timing only"
    code, _, err = run_cli(["run", str(write_spec(tiny_spec)), "--no-progress",
                            "--data-note", note], capsys)
    assert code == 0, err
    assert f"WARNING: partial data: {note}" in err
    _, run = only_run(store)
    assert run.data.tags["zoo.partial_data"] == note
