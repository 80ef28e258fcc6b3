"""`zoo report --runs`: an experiment's runs (or a search's trials) per configuration, each
as mean ± std over its seeds."""

from __future__ import annotations

import statistics

import pytest

from results.cli import zoo
from zoo.tracking.mlflow_run import open_client

pytestmark = pytest.mark.slow  # real runs


def test_an_experiment_per_configuration(write_spec, tiny_spec, tmp_path, monkeypatch, capsys):
    tiny_spec["train"]["epochs"] = 1
    spec = write_spec(tiny_spec, "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    # a run of its own name (as a search names each trial's) is still the same configuration
    for extra in (["--seed", "1"], ["--seed", "2", "-o", "tracking.run_name=second"],
                  ["--seed", "1", "-o", "model.field.hidden=4"]):
        assert zoo(["run", spec, "--tracking-uri", uri, "--no-progress", *extra],
                   monkeypatch) == 0
    capsys.readouterr()
    assert zoo(["report", "--runs", "tiny", "--tracking-uri", uri], monkeypatch) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "experiment tiny: 3 finished runs, 2 configurations"
    client = open_client(uri)
    runs = client.search_runs([client.get_experiment_by_name("tiny").experiment_id])
    eight = [r.data.metrics["test/accuracy"] for r in runs
             if r.data.params["model.field.hidden"] == "8"]
    [row8] = [line for line in lines if line.startswith("| model.field.hidden=8 |")]
    assert row8.split(" | ")[1:3] == ["2", "1"]  # runs, epochs
    assert (f"{statistics.fmean(eight):.4g} ± {statistics.pstdev(eight):.2g}"
            in row8)
    [row4] = [line for line in lines if line.startswith("| model.field.hidden=4 |")]
    assert "±" not in row4  # one run: no spread

    monkeypatch.setattr("zoo.results.runs._PAGE", 2)  # more runs than one page of the store
    assert zoo(["report", "--runs", "tiny", "--tracking-uri", uri], monkeypatch) == 0
    assert capsys.readouterr().out.splitlines()[0] == lines[0]


@pytest.mark.parametrize("target, message", [
    ("tinny", "neither an experiment nor a run of this store (did you mean 'tiny'?)")])
def test_an_unknown_group_is_one_message(target, message, write_spec, tiny_spec, tmp_path,
                                        monkeypatch, capsys):
    tiny_spec["train"]["epochs"] = 1
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    zoo(["run", write_spec(tiny_spec, "tiny.yaml"), "--tracking-uri", uri, "--no-progress"],
        monkeypatch)
    capsys.readouterr()
    assert zoo(["report", "--runs", target, "--tracking-uri", uri], monkeypatch) == 2
    assert message in capsys.readouterr().err
