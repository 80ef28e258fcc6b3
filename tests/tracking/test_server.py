"""A real MLflow server over the store `zoo run` wrote serves the run through its REST API."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time

import pytest
import requests

from zoo.cli.main import main


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    db = tmp_path / "mlruns.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    yield db, url, lambda: subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{db}",
         "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)


def wait_healthy(url: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        assert proc.poll() is None, "mlflow server exited"
        try:
            if requests.get(f"{url}/health", timeout=2).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(1)
    raise TimeoutError("mlflow server did not start")


def finished_run_id(stdout: str) -> str:
    return re.search(r"^run (\w+) finished", stdout, re.M).group(1)


@pytest.mark.slow
def test_server_over_zoo_store_and_run_by_uri(server, write_spec, tiny_spec, tmp_path,
                                              monkeypatch, capsys):
    """One server: it reads back a run `zoo run` wrote to the embedded store, then a second
    `zoo run` logs to it by URI."""
    db, url, start = server
    monkeypatch.chdir(tmp_path)
    spec = str(write_spec(tiny_spec))
    assert main(["run", spec, "--no-progress", "--tracking-uri", f"sqlite:///{db}"]) == 0
    run_id = finished_run_id(capsys.readouterr().out)
    proc = start()
    try:
        wait_healthy(url, proc)
        api = f"{url}/api/2.0/mlflow"
        run = requests.get(f"{api}/runs/get", params={"run_id": run_id}, timeout=30).json()["run"]
        params = {p["key"]: p["value"] for p in run["data"]["params"]}
        assert params["model.field.kind"] == "ncde" and params["train.epochs"] == "2"
        metrics = {m["key"] for m in run["data"]["metrics"]}
        assert {"train/loss", "val/accuracy", "test/accuracy"} <= metrics
        history = requests.get(f"{api}/metrics/get-history",
                               params={"run_id": run_id, "metric_key": "train/loss"},
                               timeout=30).json()["metrics"]
        assert sorted(m["step"] for m in history) == [1, 2]
        listed = requests.get(f"{api}/artifacts/list", params={"run_id": run_id},
                              timeout=30).json()
        assert {"spec.yaml", "checkpoints", "plots"} <= {f["path"] for f in listed["files"]}
        spec_text = requests.get(f"{url}/get-artifact", params={"path": "spec.yaml",
                                                               "run_uuid": run_id}, timeout=30)
        assert spec_text.ok and "kind: ncde" in spec_text.text

        assert main(["run", spec, "--no-progress", "--tracking-uri", url]) == 0
        out = capsys.readouterr().out
        assert f"open {url} in a browser" in out
        remote = requests.get(f"{api}/runs/get", params={"run_id": finished_run_id(out)},
                              timeout=30).json()["run"]
        assert remote["info"]["status"] == "FINISHED"
        listed = requests.get(f"{api}/artifacts/list",
                              params={"run_id": finished_run_id(out)}, timeout=30).json()
        assert "spec.yaml" in {f["path"] for f in listed["files"]}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
