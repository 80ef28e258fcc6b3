"""`zoo sweep --executor ray`: runs as Ray tasks on a local instance; unreachable clusters."""

from __future__ import annotations

import socket

import pytest
from mlflow import MlflowClient

from results.cli import zoo

ray = pytest.importorskip("ray")


@pytest.mark.slow
def test_ray_sweep_on_local_instance(write_spec, tiny_spec, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(tiny_spec, "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    code = zoo(["sweep", spec, "--seeds", "1,2", "--executor", "ray", "--workers", "2",
                "--tracking-uri", uri], monkeypatch)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 runs: 2 finished" in out
    assert not ray.is_initialized()  # the executor shut down the instance it started
    client = MlflowClient(uri)
    logged = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert sorted(r.data.tags["zoo.seed"] for r in logged) == ["1", "2"]
    assert all(r.info.status == "FINISHED" and "test/accuracy" in r.data.metrics
               for r in logged)


def test_unreachable_cluster_is_one_message(write_spec, tiny_spec, tmp_path, monkeypatch,
                                            capsys):
    spec = write_spec(tiny_spec, "tiny.yaml")
    code = zoo(["sweep", spec, "--executor", "ray", "--address", "127.0.0.1:1",
                "--tracking-uri", f"sqlite:///{tmp_path / 'mlruns.db'}"], monkeypatch)
    err = capsys.readouterr().err
    assert code == 2
    assert "Ray cluster at 127.0.0.1:1 is unreachable" in err and "Traceback" not in err
    assert not (tmp_path / "mlruns.db").exists()


def test_a_port_that_is_not_ray_is_one_message_not_a_hang(write_spec, tiny_spec, tmp_path,
                                                          monkeypatch, capfd):
    """Something listens but never answers: Ray's client would retry it for minutes."""
    spec = write_spec(tiny_spec, "tiny.yaml")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        code = zoo(["sweep", spec, "--executor", "ray", "--address", address,
                    "--tracking-uri", f"sqlite:///{tmp_path / 'mlruns.db'}"], monkeypatch)
    err = capfd.readouterr().err
    assert code == 2
    assert f"{address} does not answer like a Ray cluster" in err and "Traceback" not in err
    assert not (tmp_path / "mlruns.db").exists()


def test_unreachable_tracking_server_is_one_message(write_spec, tiny_spec, monkeypatch,
                                                   capsys):
    spec = write_spec(tiny_spec, "tiny.yaml")
    code = zoo(["sweep", spec, "--executor", "ray", "--tracking-uri", "http://127.0.0.1:1"],
               monkeypatch)
    assert code == 2
    assert "tracking server http://127.0.0.1:1 is unreachable" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_places_one_run_per_gpu(write_spec, tiny_spec, tmp_path, monkeypatch, capsys):
    """On a Ray instance with 2 GPUs (declared: this machine may have none), each run holds one
    GPU by default: 3 runs, at most 2 at a time, each run on one GPU that Ray names in its
    ``CUDA_VISIBLE_DEVICES`` (tagged ``zoo.cuda_visible_devices``)."""
    tiny_spec["train"]["epochs"] = 1
    spec = write_spec(tiny_spec, "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    ray.init(num_cpus=3, num_gpus=2, include_dashboard=False)
    try:
        code = zoo(["sweep", spec, "--seeds", "1-3", "--executor", "ray", "--workers", "3",
                    "--tracking-uri", uri], monkeypatch)
    finally:
        ray.shutdown()
    assert code == 0, capsys.readouterr().err
    client = MlflowClient(uri)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert sorted(r.data.tags["zoo.cuda_visible_devices"] for r in runs) in (
        ["0", "0", "1"], ["0", "1", "1"])
    spans = sorted((r.info.start_time, r.info.end_time) for r in runs)
    # with one GPU per run, the third run starts only after one of the first two has ended
    assert spans[2][0] >= min(spans[0][1], spans[1][1])
