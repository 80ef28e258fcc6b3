"""The MLflow pyfunc model each run on own data logs (``zoo.serving``): served over HTTP by
``mlflow models serve``, loaded in-process, registered, and not logged for other datasets."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import zoo
from test_predict import MODEL, vitals_csv
from zoo.tracking.mlflow_run import open_client

#: every test here trains a run or serves a model over HTTP (each 5-15 s)
pytestmark = pytest.mark.slow

MLFLOW = Path(sys.executable).with_name("mlflow")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny run on a CSV, its model registered as ``vitals``."""
    folder = tmp_path_factory.mktemp("serve")
    vitals_csv(folder / "vitals.csv")
    spec = {"data": {"kind": "table", "path": str(folder / "vitals.csv"), "id": "patient",
                     "time": "hour", "label": "outcome"},
            "model": MODEL, "train": {"epochs": 1, "batch_size": 8},
            "tracking": {"register_model": "vitals"}}
    uri = f"sqlite:///{folder / 'mlruns.db'}"
    run_id, model = zoo.run_spec(spec, tracking_uri=uri, progress=False)
    return {"folder": folder, "uri": uri, "run_id": run_id, "model": model,
            "rows": pd.read_csv(folder / "vitals.csv")}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(uri: str, run_id: str, folder: Path) -> Iterator[str]:
    """``mlflow models serve -m runs:/RUN_ID/model`` on a free loopback port: its URL."""
    import requests

    port = free_port()
    # the server execs `uvicorn` from PATH: the venv's, as an activated venv has it
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri,
           "PATH": f"{MLFLOW.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    log = folder / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [str(MLFLOW), "models", "serve", "-m", f"runs:/{run_id}/model",
             "--env-manager", "local", "--host", "127.0.0.1", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=folder,
            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if requests.get(f"{url}/ping", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"mlflow models serve did not answer /ping (exit "
                            f"{server.poll()}):\n{log.read_text()[-4000:]}")
            time.sleep(0.5)
        yield url
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


def post(url: str, rows: pd.DataFrame):
    """A client's request: JSON with null for missing cells (NaN is not JSON)."""
    import requests

    body = {"dataframe_split": json.loads(rows.to_json(orient="split", index=False))}
    return requests.post(f"{url}/invocations", json=body, timeout=60)


def invoke(url: str, rows: pd.DataFrame) -> pd.DataFrame:
    """The predictions of a client's request."""
    reply = post(url, rows)
    assert reply.status_code == 200, reply.text
    return pd.DataFrame(reply.json()["predictions"])


def test_served_model_answers_as_load_model(trained, tmp_path):
    rows = trained["rows"]
    rows = rows[rows.patient.isin(["p3", "p4", "p7"])].drop(columns="outcome")
    with served(trained["uri"], trained["run_id"], tmp_path) as url:
        answer = invoke(url, rows)
        huge = rows.copy()
        huge.loc[huge.index[1], "hr"] = 1e300  # more than float32 holds
        refused = post(url, huge)
    expected = zoo.load_model(trained["run_id"], tracking_uri=trained["uri"]).predict(
        rows, progress=False)
    assert list(answer.patient) == ["p3", "p4", "p7"]
    pd.testing.assert_frame_equal(answer, expected, check_dtype=False)
    # a request zoo refuses: HTTP 400 with zoo's message, no traceback
    assert refused.status_code == 400 and refused.json()["error_code"] == \
        "INVALID_PARAMETER_VALUE"
    assert "column 'hr' holds '1e+300' at" in refused.json()["message"]
    assert "not a number float32 can hold" in refused.json()["message"]
    assert "Traceback" not in refused.text


def ramps_csv(path: Path) -> None:
    """16 irregular series of two channels; per-step label ``up`` when ``a`` rose, a target
    ``y`` (their mean of ``a``), for the regression, per-step and forecast tasks."""
    rng = np.random.default_rng(3)
    rows = ["sid,t,a,b,y,up"]
    for i in range(16):
        times = np.sort(rng.choice(np.arange(12) / 4, size=8, replace=False))
        a = np.cumsum(rng.normal(size=8)) + i % 3
        for k, t in enumerate(times):
            b = "" if rng.random() < 0.2 else f"{np.cos(t + i):.3f}"
            up = "yes" if k and a[k] > a[k - 1] else "no"
            rows.append(f"s{i},{t:g},{a[k]:.3f},{b},{a.mean():.3f},{up}")
    path.write_text("\n".join(rows) + "\n")


TASKS = {
    "regression": {"task": "regress", "label": "y", "channels": ["a", "b"]},
    "per-step": {"task": "classify", "label": "up", "per_step": True, "channels": ["a", "b"]},
    "forecast": {"task": "forecast", "forecast": {"horizon": 2, "channels": ["a"]},
                 "channels": ["a", "b"]},
}


@pytest.mark.parametrize("task", TASKS)
def test_every_task_is_served(task, tmp_path):
    """Regression, per-step classification and forecasting answer over HTTP as
    ``load_model(...).predict`` does in-process."""
    ramps_csv(tmp_path / "ramps.csv")
    readout = "classify" if task == "per-step" else "regress"
    spec = {"data": {"kind": "table", "path": str(tmp_path / "ramps.csv"), "id": "sid",
                     "time": "t", "split": {"ratios": [0.5, 0.25, 0.25]}, **TASKS[task]},
            "model": {**MODEL, "readout": {"kind": readout}},
            "train": {"epochs": 1, "batch_size": 4}}
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    run_id, model = zoo.run_spec(spec, tracking_uri=uri, progress=False)
    rows = pd.read_csv(tmp_path / "ramps.csv")
    rows = rows[rows.sid.isin(["s1", "s9"])].drop(columns=["y", "up"])
    with served(uri, run_id, tmp_path) as url:
        answer = invoke(url, rows)
    expected = model.predict(rows, progress=False)
    assert set(answer.sid) == {"s1", "s9"} and len(answer) == len(expected) > 2 or \
        task == "regression"
    pd.testing.assert_frame_equal(answer, expected, check_dtype=False)


def test_pyfunc_in_process_signature_and_registry(trained):
    import mlflow
    from mlflow import MlflowClient

    mlflow.set_tracking_uri(trained["uri"])
    try:
        model = mlflow.pyfunc.load_model(f"runs:/{trained['run_id']}/model")
        registered = mlflow.pyfunc.load_model("models:/vitals/1")
    finally:
        mlflow.set_tracking_uri(None)
    rows = trained["rows"]
    expected = trained["model"].predict(rows, progress=False)
    pd.testing.assert_frame_equal(model.predict(rows), expected)
    pd.testing.assert_frame_equal(registered.predict(rows), expected)
    inputs = model.metadata.get_input_schema().input_names()
    assert inputs == ["patient", "hour", "hr", "temp"]
    assert model.metadata.get_output_schema().input_names() == list(expected.columns)
    client = MlflowClient(tracking_uri=trained["uri"], registry_uri=trained["uri"])
    [version] = client.search_model_versions("name='vitals'")
    assert version.run_id == trained["run_id"]
    # an MLflow logged model of the run (listed on the experiment's Models tab), READY, with
    # the selected epoch's metrics
    run = client.get_run(trained["run_id"])
    [logged] = client.search_logged_models([run.info.experiment_id])
    assert (logged.name, logged.source_run_id, str(logged.status)) == \
        ("model", trained["run_id"], "READY")
    assert version.source == logged.artifact_location
    assert json.loads(logged.tags["mlflow.modelVersions"]) == [{"name": "vitals", "version": 1}]
    assert [o.model_id for o in run.outputs.model_outputs] == [logged.model_id]
    best = int(run.data.metrics["best_epoch"])
    linked = {m.key: m for m in logged.metrics}
    assert {"test/accuracy", "val/accuracy", "best_epoch"} <= set(linked)
    assert linked["test/accuracy"].value == run.data.metrics["test/accuracy"]
    assert {m.step for m in logged.metrics} == {best}
    folder = Path(mlflow.artifacts.download_artifacts(artifact_uri=logged.artifact_location))
    assert (folder / "MLmodel").is_file() and any(folder.glob("input_example*"))


def test_arrays_run_serves_the_long_layout(tmp_path):
    """``arrays`` data: the pyfunc model reads one row per step (series, time, channels)."""
    import mlflow

    rng = np.random.default_rng(0)
    values = rng.normal(size=(20, 6, 2))
    values[::3, 4:] = np.nan  # shorter series
    np.savez(tmp_path / "d.npz", values=values, labels=np.arange(20) % 2,
             times=np.arange(6) * 0.5)
    spec = {"data": {"kind": "arrays", "path": str(tmp_path / "d.npz"),
                     "channel_names": ["a", "b"]},
            "model": MODEL, "train": {"epochs": 1, "batch_size": 8}}
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    run_id, trained = zoo.run_spec(spec, tracking_uri=uri, progress=False)
    mlflow.set_tracking_uri(uri)
    try:
        model = mlflow.pyfunc.load_model(f"runs:/{run_id}/model")
    finally:
        mlflow.set_tracking_uri(None)
    assert model.metadata.get_input_schema().input_names() == ["series", "time", "a", "b"]
    long = pd.DataFrame([{"series": f"s{i}", "time": t * 0.5, "a": values[i, t, 0],
                          "b": values[i, t, 1]}
                         for i in (5, 6) for t in range(4 if i % 3 == 0 else 6)])
    served = model.predict(long)
    expected = trained.predict({"values": values[[5, 6]], "times": np.arange(6) * 0.5},
                               progress=False)
    assert list(served.series) == ["s5", "s6"]
    pd.testing.assert_frame_equal(served.drop(columns="series"),
                                  expected.drop(columns="series"))


def test_other_datasets_and_log_model_false_log_nothing(tiny_spec, tmp_path, capsys):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    run_id, _ = zoo.run_spec(tiny_spec, tracking_uri=uri, progress=False)
    assert "no MLflow model logged: dataset 'irregular_sines'" in capsys.readouterr().err
    client = open_client(uri)
    experiments = [client.get_run(run_id).info.experiment_id]
    assert client.search_logged_models(experiments) == []

    folder = tmp_path / "own"
    folder.mkdir()
    vitals_csv(folder / "v.csv", n=12)
    spec = {"data": {"kind": "table", "path": str(folder / "v.csv"), "id": "patient",
                     "label": "outcome"},
            "model": MODEL, "train": {"epochs": 1, "batch_size": 8},
            "tracking": {"log_model": False}}
    run_id, _ = zoo.run_spec(spec, tracking_uri=uri, progress=False)
    experiments.append(client.get_run(run_id).info.experiment_id)
    assert client.search_logged_models(experiments) == []
    assert "MLflow model" not in capsys.readouterr().err
