"""``zoo predict`` / ``zoo evaluate`` and ``zoo.load_model`` / ``zoo.run_spec``.

One tiny model is trained once (with ``zoo.run_spec``) on a small irregular CSV; the other
tasks use untrained models saved as checkpoints, which is enough to compare the prediction
path with the training pipeline.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

import zoo
from zoo.build_context import DataShape
from zoo.cli.main import main
from zoo.errors import InputError
from zoo.model import ZooModel
from zoo.series import PreparedSplit
from zoo.spec.validate import load_spec
from zoo.tracking.mlflow_run import MlflowRun, open_client
from zoo.training.checkpoint import atomic_save, best_payload, load_model
from zoo.training.evaluate import evaluate

MODEL = {"control": {"kind": "natural_cubic"},
         "field": {"kind": "ncde", "hidden": 8, "hidden_hidden": 8, "layers": 1},
         "solver": {"kind": "torchdiffeq", "method": "rk4", "step_size": 0.2},
         "readout": {"kind": "classify"}}


def vitals_csv(path, n: int = 24, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    rows = ["patient,hour,hr,temp,outcome"]
    for i in range(n):
        sick = i % 2
        hours = np.sort(rng.choice(np.arange(11) / 5, size=rng.integers(4, 8), replace=False))
        for h in hours:
            temp = "" if rng.random() < 0.3 else f"{36.5 + sick:.1f}"
            rows.append(f"p{i},{h:g},{60 + 10 * sick + rng.normal():.2f},{temp},"
                        f"{'sick' if sick else 'well'}")
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A run trained by ``zoo.run_spec`` without touching the allocator or matplotlib's
    backend; no ``classes`` in the spec (read from the file)."""
    folder = tmp_path_factory.mktemp("predict")
    vitals_csv(folder / "vitals.csv")
    spec = {"data": {"kind": "table", "path": str(folder / "vitals.csv"), "id": "patient",
                     "time": "hour", "label": "outcome"},
            "model": MODEL, "train": {"epochs": 2, "batch_size": 8}}
    uri = f"sqlite:///{folder / 'mlruns.db'}"

    def refuse(*_):
        raise AssertionError("library code changed a process-wide setting")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("matplotlib.use", refuse)
        mp.setattr("zoo.runner.keep_freed_blocks", refuse)
        run_id, model = zoo.run_spec(spec, tracking_uri=uri, progress=False)
    return {"folder": folder, "uri": uri, "run_id": run_id, "model": model,
            "csv": folder / "vitals.csv"}


def cli(capsys, *args):
    code = main([*map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def pipeline_probabilities(model: ZooModel, spec) -> dict[str, np.ndarray]:
    """Class probabilities per series id through the training pipeline (bundle, splits)."""
    bundle = spec.data.load()
    out = {}
    for name in ("train", "val", "test"):
        split = getattr(bundle, name)
        prepared = PreparedSplit(split, spec.model.control.prepare(split.times, split.values))
        with torch.no_grad():
            logits = torch.cat([model(b) for b in prepared.batches(8)])
        out.update(zip(bundle.info["series"][name], torch.softmax(logits, -1).numpy()))
    return out


def best_checkpoint(trained, tmp_path):
    client = open_client(trained["uri"])
    return client.download_artifacts(trained["run_id"], "checkpoints/best.pt", str(tmp_path))


def test_predict_by_run_id_and_by_checkpoint(trained, tmp_path, capsys):
    out_csv, out_pq = tmp_path / "out.csv", tmp_path / "out.parquet"
    code, _, err = cli(capsys, "predict", trained["run_id"], "--data", trained["csv"],
                       "--output", out_csv, "--tracking-uri", trained["uri"], "--no-progress")
    assert code == 0, err
    frame = pd.read_csv(out_csv)
    assert list(frame.columns) == ["patient", "prob_sick", "prob_well", "predicted"]
    assert frame["patient"].tolist() == [f"p{i}" for i in range(24)]  # every series, in order
    probs = frame[["prob_sick", "prob_well"]].to_numpy()
    assert np.allclose(probs.sum(axis=1), 1)
    assert (frame["predicted"] == np.array(["sick", "well"])[probs.argmax(axis=1)]).all()

    checkpoint = best_checkpoint(trained, tmp_path)
    expected = pipeline_probabilities(load_model(checkpoint), trained["model"].spec)
    assert np.allclose(probs, np.stack([expected[p] for p in frame["patient"]]), atol=1e-6)

    code, _, err = cli(capsys, "predict", checkpoint, "--data", trained["csv"], "--output",
                       out_pq, "--no-progress")
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_parquet(out_pq), frame, check_exact=False)

    code, out, _ = cli(capsys, "predict", checkpoint, "--data", trained["csv"], "--no-progress")
    assert code == 0 and out.split()[:4] == ["patient", "prob_sick", "prob_well", "predicted"]


def test_evaluate_on_the_test_series_gives_the_logged_test_metrics(trained, tmp_path, capsys):
    model = trained["model"]
    test_ids = model.spec.data.load().info["series"]["test"]
    rows = pd.read_csv(trained["csv"])
    rows[rows["patient"].isin(test_ids)].to_csv(tmp_path / "test.csv", index=False)
    code, out, err = cli(capsys, "evaluate", trained["run_id"], "--data", tmp_path / "test.csv",
                         "--tracking-uri", trained["uri"], "--no-progress")
    assert code == 0, err
    printed = {line.split()[0]: float(line.split()[1]) for line in out.splitlines()}
    logged = open_client(trained["uri"]).get_run(trained["run_id"]).data.metrics
    assert set(printed) == {"loss", "accuracy", "f1_macro"}
    for name, value in printed.items():
        assert value == pytest.approx(logged[f"test/{name}"], rel=1e-5)


def test_python_api(trained, tmp_path):
    model = zoo.load_model(trained["run_id"], tracking_uri=trained["uri"])
    assert model.classes == ["sick", "well"] and model.spec.data.kind == "table"
    frame = pd.read_csv(trained["csv"])
    from_file = model.predict(trained["csv"], progress=False)
    pd.testing.assert_frame_equal(model.predict(frame, progress=False), from_file)
    pd.testing.assert_frame_equal(trained["model"].predict(frame, progress=False), from_file)
    test_ids = model.spec.data.load().info["series"]["test"]
    metrics = model.evaluate(frame[frame["patient"].isin(test_ids)], progress=False)
    logged = open_client(trained["uri"]).get_run(trained["run_id"]).data.metrics
    assert metrics["accuracy"] == pytest.approx(logged["test/accuracy"])
    run = open_client(trained["uri"]).get_run(trained["run_id"])
    assert run.data.tags["zoo.allocator"] == "system (not changed)"
    assert {a.path for a in open_client(trained["uri"]).list_artifacts(
        trained["run_id"], "plots")} == {"plots/learning_curves.png"}
    # labels are not needed to predict; a series seen once is predicted too
    unlabelled = frame.drop(columns="outcome")
    unlabelled = pd.concat([unlabelled, pd.DataFrame(
        {"patient": ["new"], "hour": [0.7], "hr": [65.0], "temp": [np.nan]})])
    out = model.predict(unlabelled, progress=False)
    assert out["patient"].tolist()[-1] == "new" and len(out) == 25


def test_the_checkpoint_keeps_what_prediction_needs(trained, tmp_path):
    payload = torch.load(best_checkpoint(trained, tmp_path), weights_only=False)
    data = payload["data"]
    assert data["channels"] == ["time", "hr", "temp"] and data["classes"] == ["sick", "well"]
    assert data["normalisation"]["channels"] == ["time", "hr", "temp"]
    assert data["grid"].dtype == torch.float64 and data["grid"].tolist() == \
        [h / 5 for h in range(11)]
    assert payload["shape"]["task"]["class_names"] == ("sick", "well")


def test_predict_without_the_training_data_and_from_an_older_checkpoint(trained, tmp_path,
                                                                       capsys):
    """The spec derives its classes from the training file; the checkpoint does without it.
    A checkpoint without ``data`` (older zoo) recomputes it from the training file, and says
    what is missing when that is gone."""
    checkpoint = best_checkpoint(trained, tmp_path)
    copy = tmp_path / "vitals.csv"
    shutil.copy(trained["csv"], copy)
    reference = zoo.load_model(checkpoint).predict(copy, progress=False)
    payload = torch.load(checkpoint, weights_only=False)
    del payload["data"]
    old = tmp_path / "old.pt"
    torch.save(payload, old)
    pd.testing.assert_frame_equal(zoo.load_model(old).predict(copy, progress=False), reference)

    hidden = trained["csv"].with_suffix(".hidden")
    trained["csv"].rename(hidden)
    try:
        pd.testing.assert_frame_equal(zoo.load_model(checkpoint).predict(copy, progress=False),
                                      reference)
        code, _, err = cli(capsys, "predict", old, "--data", copy, "--output",
                           tmp_path / "o.csv", "--no-progress")
    finally:
        hidden.rename(trained["csv"])
    assert code == 2 and "no normalisation statistics" in err and "older zoo" in err
    assert not (tmp_path / "o.csv").exists()


def one_error(code, err, *parts):
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    for part in parts:
        assert part in err, err


def test_errors(trained, tmp_path, capsys):
    out = tmp_path / "out.csv"
    run, uri, data = trained["run_id"], trained["uri"], trained["csv"]
    code, _, err = cli(capsys, "predict", "0123abc", "--data", data, "--tracking-uri", uri)
    one_error(code, err, "no run '0123abc'", uri)
    code, _, err = cli(capsys, "predict", tmp_path / "gone.pt", "--data", data)
    one_error(code, err, "gone.pt: checkpoint file not found")
    absent = tmp_path / "absent.db"
    code, _, err = cli(capsys, "evaluate", run, "--data", data, "--tracking-uri",
                       f"sqlite:///{absent}")
    one_error(code, err, "does not exist")
    assert not absent.exists() and not absent.with_suffix(".db.lock").exists()

    renamed = tmp_path / "renamed.csv"
    renamed.write_text(data.read_text().replace("hour,hr,temp", "hours,hr,tmp", 1))
    code, _, err = cli(capsys, "predict", run, "--data", renamed, "--tracking-uri", uri,
                       "--output", out)
    one_error(code, err, "no column 'hour' (did you mean 'hours'?)",
              "no column 'temp' (did you mean 'tmp'?)")
    unlabelled = tmp_path / "unlabelled.csv"
    pd.read_csv(data).drop(columns="outcome").to_csv(unlabelled, index=False)
    code, _, err = cli(capsys, "evaluate", run, "--data", unlabelled, "--tracking-uri", uri)
    one_error(code, err, "no labels to evaluate against", "'outcome'")
    code, _, err = cli(capsys, "predict", run, "--data", data, "--tracking-uri", uri,
                       "--output", tmp_path / "out.json")
    one_error(code, err, "--output", ".parquet")

    empty = MlflowRun(uri)
    empty.start("no-checkpoint", "empty", {})
    code, _, err = cli(capsys, "predict", empty.run_id, "--data", data, "--tracking-uri", uri,
                       "--output", out)
    one_error(code, err, f"run {empty.run_id} has no checkpoint yet")
    empty.finish("KILLED")
    assert not out.exists()


def test_bad_input_to_predict_is_one_message_and_loses_nothing(trained, tmp_path, capsys):
    run, uri, data = trained["run_id"], trained["uri"], trained["csv"]
    given = ("--tracking-uri", uri)
    copy = tmp_path / "same.csv"
    copy.write_bytes(data.read_bytes())
    code, _, err = cli(capsys, "predict", run, "--data", copy, *given, "--output", copy)
    one_error(code, err, f"--output {copy}: is the input {copy}; writing it would destroy")
    assert copy.read_bytes() == data.read_bytes()
    (tmp_path / "d.csv").mkdir()
    code, _, err = cli(capsys, "predict", run, "--data", data, *given, "--output",
                       tmp_path / "d.csv")
    one_error(code, err, "d.csv: is a folder; name a file")
    code, _, err = cli(capsys, "predict", run, "--data", data, *given, "--batch-size", "0")
    one_error(code, err, "batch size 0: give a positive number")
    garbage = tmp_path / "bad.pt"
    garbage.write_text("garbage\n")
    code, _, err = cli(capsys, "predict", garbage, "--data", data)
    one_error(code, err, "bad.pt: not a readable zoo checkpoint")
    last = tmp_path / "last.pt"
    torch.save({"model": {}, "optimizer": {}, "state": {}}, last)
    code, _, err = cli(capsys, "predict", last, "--data", data)
    one_error(code, err, "a training state for resuming a run (last.pt), not a best "
                         "checkpoint: use the run's checkpoints/best.pt")
    frame = pd.read_csv(data)
    patient = frame.patient.iloc[0]
    huge = frame.copy()
    huge.loc[1, "hr"] = 1e308
    huge.to_csv(tmp_path / "huge.csv", index=False)
    code, _, err = cli(capsys, "predict", run, "--data", tmp_path / "huge.csv", *given)
    one_error(code, err, "column 'hr' holds '1e+308' at", "not a number float32 can hold")
    span = frame[frame.patient == patient].copy()
    span["hour"] = span["hour"] * 1e9  # nanoseconds: far too many fixed steps of 0.2
    span.to_csv(tmp_path / "span.csv", index=False)
    code, _, err = cli(capsys, "predict", run, "--data", tmp_path / "span.csv", *given)
    one_error(code, err, "model.solver: the times span", "with step_size 0.2",
              "fixed steps per solve, more than 1,000,000; rescale the times")
    close = span.copy()
    close["hour"] = [0, 0.6000000000000001, *range(2, len(close))]
    close.to_csv(tmp_path / "close.csv", index=False)
    code, _, err = cli(capsys, "predict", run, "--data", tmp_path / "close.csv", *given)
    one_error(code, err, "times 0.6 and 0.6000000000000001 (", "cannot be told apart")


def untrained_checkpoint(tmp_path, spec_text: str):
    """An untrained model of ``spec_text`` saved as a best checkpoint, with its bundle."""
    (tmp_path / "spec.yaml").write_text(spec_text)
    spec, _ = load_spec(tmp_path / "spec.yaml")
    bundle = spec.data.load()
    torch.manual_seed(0)
    model = ZooModel(spec, DataShape(bundle.input_channels, bundle.static_channels,
                                     bundle.train.values.shape[1], bundle.task))
    path = tmp_path / "model.pt"
    atomic_save(best_payload(model, model.state_dict(), bundle.info), path)
    return path, model.eval(), bundle


def test_a_dataset_other_than_table_or_arrays_is_refused(tmp_path, tiny_spec, capsys):
    path, _, _ = untrained_checkpoint(tmp_path, yaml.safe_dump(tiny_spec))
    code, _, err = cli(capsys, "predict", path, "--data", tmp_path / "spec.yaml")
    one_error(code, err, "read `table` or `arrays` files", "'irregular_sines'")


def test_forecast_on_dates(tmp_path):
    rng = np.random.default_rng(1)
    rows = []
    for i in range(12):
        start = pd.Timestamp("2024-01-01") + pd.Timedelta(hours=int(rng.integers(0, 4)))
        rows += [(f"s{i}", (start + pd.Timedelta(hours=k)).isoformat(),
                  np.sin(k / 2 + i), 0.5 * k) for k in range(6)]
    pd.DataFrame(rows, columns=["sid", "when", "a", "b"]).to_csv(tmp_path / "f.csv",
                                                                 index=False)
    path, net, bundle = untrained_checkpoint(tmp_path, yaml.safe_dump({
        "data": {"kind": "table", "path": "f.csv", "id": "sid", "time": "when",
                 "task": "forecast", "forecast": {"horizon": 2, "channels": ["a"]},
                 "split": {"ratios": [0.5, 0.25, 0.25]}},
        "model": {**MODEL, "solver": {"kind": "torchdiffeq", "method": "rk4",
                                      "step_size": 3600.0}, "readout": {"kind": "regress"}},
        "train": {"batch_size": 4}}))
    model = zoo.load_model(path)
    frame = pd.read_csv(tmp_path / "f.csv")
    test = frame[frame["sid"].isin(bundle.info["series"]["test"])]
    prepared = PreparedSplit(bundle.test, net.control.prepare(bundle.test.times,
                                                              bundle.test.values))
    expected = evaluate(net, prepared, 4, "cpu", torch.float32)
    assert model.evaluate(test, progress=False) == pytest.approx(expected, rel=1e-6)
    out = model.predict(test, progress=False)  # from the whole series: the next 2 hours
    assert list(out.columns) == ["sid", "step", "a"] and out["step"].tolist()[:2] == [1, 2]
    assert len(out) == 2 * len(bundle.test)


def test_per_step_regression_from_arrays(tmp_path):
    rng = np.random.default_rng(2)
    values = rng.normal(size=(12, 5, 2))
    values[0, 3:] = np.nan  # series 0 ends after 3 steps
    np.savez(tmp_path / "a.npz", values=values, labels=values.sum(-1))
    path, net, bundle = untrained_checkpoint(tmp_path, yaml.safe_dump({
        "data": {"kind": "arrays", "path": "a.npz", "task": "regress", "per_step": True,
                 "channel_names": ["x", "y"], "split": {"ratios": [0.5, 0.25, 0.25]}},
        "model": {**MODEL, "solver": {"kind": "torchdiffeq", "method": "rk4",
                                      "step_size": 1.0}, "readout": {"kind": "regress"}},
        "train": {"batch_size": 4}}))
    model = zoo.load_model(path)
    test = [int(i) for i in bundle.info["series"]["test"]]
    prepared = PreparedSplit(bundle.test, net.control.prepare(bundle.test.times,
                                                              bundle.test.values))
    expected = evaluate(net, prepared, 4, "cpu", torch.float32)
    got = model.evaluate({"values": values[test], "labels": values.sum(-1)[test]},
                         progress=False)
    assert got == pytest.approx(expected, rel=1e-6)
    out = model.predict(values, progress=False)  # a values array: one row per step
    assert list(out.columns) == ["series", "step", "time", "target"]
    assert len(out) == 3 + 11 * 5 and out["series"].tolist()[:4] == ["0", "0", "0", "1"]
    with pytest.raises(InputError, match="no labels to evaluate against"):
        model.evaluate(values)
    with pytest.raises(InputError, match="trained on arrays"):
        model.predict(pd.DataFrame({"x": [1.0]}))
