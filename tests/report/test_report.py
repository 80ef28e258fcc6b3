"""`zoo report`: runs tagged with registry ids, side by side with the published numbers."""

from __future__ import annotations

import csv
import math

import pytest
from mlflow import MlflowClient

from results.cli import zoo
from zoo.report.table import Row, Stats


def log_run(client, exp, entry_id, metrics, seed, start, status="FINISHED", smoke=False,
            partial=None):
    tags = {"zoo.reproduces": entry_id, "zoo.seed": str(seed), "zoo.smoke": str(smoke).lower()}
    if partial:
        tags["zoo.partial_data"] = partial
    run = client.create_run(exp, start_time=start, tags=tags)
    for key, value in metrics.items():
        client.log_metric(run.info.run_id, key, value)
    client.set_terminated(run.info.run_id, status)
    return run.info.run_id


@pytest.fixture
def store(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    client = MlflowClient(uri)
    exp = client.create_experiment("repro", artifact_location=(tmp_path / "art").as_uri())
    speech, sepsis = "irie2022/table1/speech/cde-delta", "irie2022/table1/sepsis-oi/cde-delta"
    log_run(client, exp, speech, {"test/accuracy": 0.10}, seed=1, start=1000)  # replaced
    for seed, acc in ((1, 0.90), (2, 0.91), (3, 0.89)):
        log_run(client, exp, speech, {"test/accuracy": acc}, seed=seed, start=2000 + seed)
    log_run(client, exp, speech, {"test/accuracy": 0.0}, seed=4, start=3000, smoke=True)
    log_run(client, exp, speech, {"test/accuracy": 0.0}, seed=5, start=3001, status="FAILED")
    log_run(client, exp, sepsis, {"test/auc": 0.80}, seed=1, start=2000,
            partial="setA only (20336 of 40336 stays)")
    log_run(client, exp, sepsis, {"test/auc": 0.82}, seed=2, start=2001)
    log_run(client, exp, sepsis, {"test/accuracy": 0.99}, seed=3, start=2002)  # no AUC logged
    return uri


def read_csv(path):
    with open(path, newline="") as fh:
        return {r["id"]: r for r in csv.DictReader(fh)}


def test_report_side_by_side(store, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    code = zoo(["report", "irie2022/table1", "--tracking-uri", store, "--output-dir", out],
               monkeypatch)
    stdout = capsys.readouterr().out
    assert code == 0
    rows = read_csv(out / "irie2022_table1.csv")
    assert len(rows) == 24
    speech = rows["irie2022/table1/speech/cde-delta"]
    assert float(speech["ours_mean"]) == pytest.approx(90.0)
    assert float(speech["ours_std"]) == pytest.approx(math.sqrt(2 / 3))
    assert speech["ours_n"] == "3"
    assert float(speech["diff"]) == pytest.approx(-0.2)
    assert speech["within"] == "True" and speech["partial_data"] == ""
    assert (speech["paper_mean"], speech["paper_std"], speech["paper_n"]) == ("90.2", "0.2", "5")
    sepsis = rows["irie2022/table1/sepsis-oi/cde-delta"]
    assert float(sepsis["ours_mean"]) == pytest.approx(81.0)
    assert float(sepsis["ours_std"]) == pytest.approx(1.0)
    assert float(sepsis["diff"]) == pytest.approx(-9.9)
    assert sepsis["within"] == "False" and sepsis["ours_n"] == "2"
    assert sepsis["partial_data"] == "setA only (20336 of 40336 stays)"
    assert rows["irie2022/table1/speech/cde-oja"]["ours_mean"] == ""

    [line] = [x for x in stdout.splitlines() if x.startswith("CDE: Delta") and "Speech" in x]
    assert "90.2 ± 0.2 (n=5)" in line and "90.0 ± 0.8 (n=3)" in line and "-0.2" in line
    assert line.split()[-1] == "yes"
    [line] = [x for x in stdout.splitlines() if x.startswith("CDE: Delta") and "Sepsis OI" in x]
    assert "81.0 ± 1.0 (n=2)" in line and "no" in line and "partial: setA only" in line
    assert stdout.count("not run") == 22
    markdown = (out / "irie2022_table1.md").read_text()
    assert "| irie2022/table1/speech/cde-delta | CDE: Delta | Speech | % |" in markdown
    assert "2 x paper std" in markdown
    assert (out / "irie2022_table1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.iterdir()) == [
        "irie2022_table1.csv", "irie2022_table1.md", "irie2022_table1.png"]


def test_unknown_table_suggests_and_writes_nothing(store, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    code = zoo(["report", "irie2022/tabel2", "--tracking-uri", store, "--output-dir", out],
               monkeypatch)
    assert code == 2
    assert "did you mean 'irie2022/table2'?" in capsys.readouterr().err
    assert not out.exists()


def test_missing_store_is_one_message(tmp_path, monkeypatch, capsys):
    code = zoo(["report", "jacobian_ncde/table1", "--tracking-uri",
                f"sqlite:///{tmp_path / 'none.db'}", "--output-dir", tmp_path / "o"], monkeypatch)
    assert code == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_within_rule():
    from zoo.results.registry import load_registry

    entries = load_registry().entries
    delta = entries["irie2022/table1/speech/cde-delta"]  # 90.2 (0.2)
    assert Row(delta, Stats(89.8, 1.0, 5), None, ()).within is True   # |diff| = 2 std
    assert Row(delta, Stats(89.7, 0.1, 5), None, ()).within is False
    assert Row(delta, None, None, ()).within is None
    bound = entries["irie2022/appendix_c/speech/cde-dx-only"]  # < 65
    assert Row(bound, Stats(60.0, 1.0, 5), None, ()).within is True
    assert Row(bound, Stats(70.0, 1.0, 5), None, ()).within is False
    no_std = entries["irie2022/text/speech/ncde-better-interpolation"]
    assert Row(no_std, Stats(93.0, 1.0, 5), None, ()).within is None
