"""`zoo search`: a real Optuna study on generated data, each trial an MLflow run nested under
the search's parent run; resume after more trials are asked for and after SIGTERM; the best spec
runs; a watch that stops a run (how the pruner stops a trial)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from importlib.util import find_spec

import optuna
import pytest
import yaml

from conftest import REPO, store_runs, wait_for_first_epoch
from results.cli import zoo
from zoo.runner import RunOptions, Stopped, run
from zoo.spec.validate import load_spec

SPACE = {"train.optimizer.lr": {"low": 1e-3, "high": 1e-1, "log": True},
         "model.field.hidden": {"choices": [4, 8]}}


def searched(tiny_spec, trials: int, epochs: int = 3) -> dict:
    return {**tiny_spec, "train": {**tiny_spec["train"], "epochs": epochs},
            "search": {"trials": trials, "sampler": "random", "pruner": "none", "space": SPACE}}


@pytest.mark.slow
def test_a_search_nests_its_trials_and_writes_the_best_spec(write_spec, tiny_spec, tmp_path,
                                                            monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(searched(tiny_spec, trials=3), "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    assert zoo(["search", spec, "--tracking-uri", uri], monkeypatch) == 0
    out = capsys.readouterr().out
    assert "3 complete" in out and "best spec: tiny.best.yaml" in out
    client, runs = store_runs(uri)
    [parent] = [r for r in runs if "zoo.search" in r.data.tags]
    trials = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(runs) == 4 and len(trials) == 3
    assert sorted(r.data.tags["zoo.trial"] for r in trials) == ["0", "1", "2"]
    assert all(r.info.status == "FINISHED" for r in runs)
    # each trial trained its drawn values; the study holds them with the run's selected value
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    for t in study.trials:
        [r] = [r for r in trials if r.data.tags["zoo.trial"] == str(t.number)]
        assert float(r.data.params["train.optimizer.lr"]) == pytest.approx(
            t.params["train.optimizer.lr"])
        assert int(r.data.params["model.field.hidden"]) == t.params["model.field.hidden"]
        history = client.get_metric_history(r.info.run_id, "val/accuracy")
        best_epoch = int(r.data.metrics["best_epoch"])
        assert t.value == [m.value for m in history if m.step == best_epoch][0]
    best = study.best_trial
    assert parent.data.metrics["best/val/accuracy"] == best.value
    assert parent.data.tags["best.model.field.hidden"] == str(best.params["model.field.hidden"])
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id, "plots")}
    assert "plots/optimization_history.png" in artifacts
    # the best spec extends the searched one, without its search, with the best values
    best_spec, _ = load_spec(tmp_path / "tiny.best.yaml")
    assert best_spec.search is None
    assert best_spec.model.field.hidden == best.params["model.field.hidden"]
    assert best_spec.train.optimizer.lr == pytest.approx(best.params["train.optimizer.lr"])


@pytest.mark.slow
def test_asking_for_more_trials_resumes_the_study(write_spec, tiny_spec, tmp_path, monkeypatch,
                                                  capsys):
    monkeypatch.chdir(tmp_path)
    spec = write_spec(searched(tiny_spec, trials=2), "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    assert zoo(["search", spec, "--tracking-uri", uri], monkeypatch) == 0
    assert zoo(["search", spec, "--tracking-uri", uri, "-o", "search.trials=3"],
               monkeypatch) == 0
    assert "3 complete" in capsys.readouterr().out
    _, runs = store_runs(uri)
    parents = [r for r in runs if "zoo.search" in r.data.tags]
    assert len(parents) == 1 and len(runs) == 4  # the same parent run, one more trial
    # the resumed search draws values of its own, not the first search's again
    lrs = {r.data.params["train.optimizer.lr"] for r in runs if "zoo.search" not in r.data.tags}
    assert len(lrs) == 3


@pytest.mark.slow
def test_sigterm_fails_the_trial_and_the_search_resumes(write_spec, tiny_spec, tmp_path):
    spec = write_spec(searched(tiny_spec, trials=2, epochs=40), "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "zoo", "search", str(spec), "--tracking-uri", uri]
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for_first_epoch(uri, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "running the same zoo search again resumes the study" in err
    assert "Traceback" not in err
    _, runs = store_runs(uri)
    assert {r.info.status for r in runs} == {"KILLED"}  # the parent and the trial's run
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    assert [t.state.name for t in study.trials] == ["FAIL"]
    again = subprocess.run([*command, "-o", "train.epochs=2"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    assert [t.state.name for t in study.trials] == ["FAIL", "COMPLETE", "COMPLETE"]


def test_a_watch_stops_the_run_killed_with_its_reason(write_spec, tiny_spec, tmp_path):
    spec, _ = load_spec(write_spec({**tiny_spec, "train": {**tiny_spec["train"], "epochs": 5}}))
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"

    def watch(record):
        if record["epoch"] == 2:
            raise Stopped("pruned at epoch 2")

    with pytest.raises(Stopped):
        run(spec, RunOptions(tracking_uri=uri, progress=False, watch=watch,
                             tags={"zoo.trial": "7"}))
    client, [r] = store_runs(uri)
    assert r.info.status == "KILLED" and r.data.tags["zoo.stopped"] == "pruned at epoch 2"
    assert r.data.tags["zoo.trial"] == "7"
    assert [m.step for m in client.get_metric_history(r.info.run_id, "train/loss")] == [1, 2]


def test_a_spec_without_search_is_one_message(write_spec, tiny_spec, tmp_path, monkeypatch,
                                              capsys):
    spec = write_spec(tiny_spec)
    code = zoo(["search", spec, "--tracking-uri", f"sqlite:///{tmp_path / 'm.db'}"],
               monkeypatch)
    assert code == 2 and "no search: section" in capsys.readouterr().err
    assert not (tmp_path / "m.db").exists()


def test_the_best_spec_keeps_the_training_overrides_and_no_search(write_spec, tiny_spec,
                                                                   tmp_path):
    """``-o`` overrides of the search itself (``search.trials=50``) stay out of the best spec,
    which would otherwise inherit a search: section; those of the training stay in."""
    from types import SimpleNamespace

    from zoo.search.driver import write_best_spec

    spec = write_spec(searched(tiny_spec, trials=3), "tiny.yaml")
    best = SimpleNamespace(number=4, value=0.75, params={"model.field.hidden": 12})
    out = write_best_spec(spec, ["train.epochs=2", "search.trials=50", " search = {trials: 5}"],
                          best, "val/accuracy", tmp_path / "tiny.best.yaml")
    written, _ = load_spec(out)
    assert written.search is None and written.train.epochs == 2
    assert written.model.field.hidden == 12


def test_the_objective_improves_in_the_metrics_direction():
    """Unless given, the direction is the run's selection's for its metric, else the readout's
    for the metric searched: a regression's MAE is minimised, not maximised."""
    cheetah = REPO / "specs/hasani2021/table6/half-cheetah/lstm.yaml"  # regress, select val/mse
    space = "space: {train.optimizer.lr: {low: 0.0001, high: 0.01}}"
    for metric, direction in (("val/mse", "minimize"), ("val/mae", "minimize"),
                              ("val/loss", "minimize")):
        spec, _ = load_spec(cheetah, [f"search={{metric: {metric}, {space}}}"])
        assert spec.search.objective(spec) == (metric, direction)
    spec, _ = load_spec(cheetah, [f"search={{metric: val/mae, direction: maximize, {space}}}"])
    assert spec.search.objective(spec) == ("val/mae", "maximize")


def test_grid_search_counts_its_grid(write_spec, tiny_spec):
    grid = {**tiny_spec, "search": {"sampler": "grid", "space": {
        "train.optimizer.lr": {"low": 0.01, "high": 0.03, "step": 0.01},
        "model.field.hidden": {"low": 4, "high": 8, "step": 4}}}}
    spec, _ = load_spec(write_spec(grid))
    assert spec.search.total_trials() == 6
    assert spec.search.space["model.field.hidden"].grid() == [4, 8]
    assert yaml.safe_load(yaml.safe_dump(spec.search.model_dump()))["sampler"] == "grid"


@pytest.mark.slow
@pytest.mark.parametrize("executor", [
    "local", pytest.param("ray", marks=pytest.mark.skipif(find_spec("ray") is None,
                                                          reason="needs ray"))])
def test_two_workers_share_one_study(executor, write_spec, tiny_spec, tmp_path, monkeypatch,
                                     capsys):
    """Two worker processes (or Ray tasks) take the trials of one study: together exactly
    its number of trials, each a run under the one parent run."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAY_TMPDIR", "/tmp")  # Ray's socket paths must stay short
    spec = write_spec(searched(tiny_spec, trials=4, epochs=2), "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    code = zoo(["search", spec, "--tracking-uri", uri, "--workers", "2",
                "--executor", executor], monkeypatch)
    assert code == 0, capsys.readouterr().err
    assert "4 complete" in capsys.readouterr().out
    _, runs = store_runs(uri)
    [parent] = [r for r in runs if "zoo.search" in r.data.tags]
    trials = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert sorted(int(r.data.tags["zoo.trial"]) for r in trials) == [0, 1, 2, 3]
    # each worker draws values of its own: no trial repeats another's
    assert len({r.data.params["train.optimizer.lr"] for r in trials}) == 4


@pytest.mark.slow
def test_a_killed_worker_loses_only_its_trial(write_spec, tiny_spec, tmp_path):
    """SIGKILL (no clean-up at all): the trial's heartbeat stops; the next search of the study
    fails it and tries its values again, and the study still gets its trials."""
    spec = searched(tiny_spec, trials=2, epochs=40)
    spec["search"]["heartbeat"] = 1
    path = write_spec(spec, "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    command = [sys.executable, "-m", "zoo", "search", str(path), "--tracking-uri", uri]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for_first_epoch(uri, proc)
    proc.kill()
    proc.wait(timeout=30)
    time.sleep(4)  # silent for more than 3 heartbeats
    again = subprocess.run([*command, "-o", "train.epochs=2"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    states = [t.state.name for t in study.trials]
    assert states == ["FAIL", "COMPLETE", "COMPLETE"], states
    # the killed trial's values are tried again first
    assert study.trials[1].params == study.trials[0].params


@pytest.mark.slow
def test_a_killed_worker_process_leaves_the_others_taking_trials(write_spec, tiny_spec,
                                                                  tmp_path):
    """SIGKILL to one of two local workers: the other takes its whole share, the search ends
    with one message (no traceback) and exit 1, and the next search takes what is missing."""
    spec = searched(tiny_spec, trials=4, epochs=40)
    spec["search"]["heartbeat"] = 1
    path = write_spec(spec, "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    command = [sys.executable, "-m", "zoo", "search", str(path), "--tracking-uri", uri,
               "--workers", "2"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = wait_for_first_epoch(uri, proc)
    client, _ = store_runs(uri)
    os.kill(int(client.get_run(first).data.tags["zoo.owner"].rpartition(":")[2]), signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert "error: 1 of 2 search worker processes died" in err and "Traceback" not in err
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    assert [t.state.name for t in study.trials].count("COMPLETE") == 2
    [parent] = [r for r in store_runs(uri)[1] if "zoo.search" in r.data.tags]
    assert parent.info.status == "KILLED"

    time.sleep(4)  # silent for more than 3 heartbeats
    again = subprocess.run([*command, "-o", "train.epochs=2"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'optuna.db'}")
    assert [t.state.name for t in study.trials].count("COMPLETE") == 4


def test_workers_and_resumed_searches_draw_values_of_their_own(write_spec, tiny_spec):
    from zoo.search.study import sampler

    spec, _ = load_spec(write_spec(searched(tiny_spec, trials=4)))

    def first_draw(stream):
        study = optuna.create_study(sampler=sampler(spec.search, stream))
        return study.ask().suggest_float("lr", 1e-3, 1e-1, log=True)

    draws = [first_draw(stream) for stream in [(0, 0), (1, 0), (0, 2), (0, 0)]]
    assert len(set(draws[:3])) == 3 and draws[3] == draws[0]  # distinct, and reproducible


def test_a_study_of_another_spec_or_space_is_refused(write_spec, tiny_spec, tmp_path):
    from zoo.errors import InputError
    from zoo.search.study import open_study

    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    spec, _ = load_spec(write_spec(searched(tiny_spec, trials=2)))
    open_study(spec.search, spec, storage, "s1")
    resumed, _ = load_spec(write_spec(searched(tiny_spec, trials=2)), ["search.trials=5"])
    open_study(resumed.search, resumed, storage, "s1")  # more trials: the same search
    shorter, _ = load_spec(write_spec(searched(tiny_spec, trials=2)), ["train.epochs=1"])
    open_study(shorter.search, shorter, storage, "s1")  # trained otherwise: the same search
    for override, what in [("search.metric=val/loss", r"objective \(val/accuracy, not val/loss\)"),
                           ("search.space={model.field.hidden: {choices: [4, 8, 16]}}",
                            "search space")]:
        other, _ = load_spec(write_spec(searched(tiny_spec, trials=2)), [override])
        with pytest.raises(InputError, match=f"study 's1' in {storage} was created for another "
                                             f"{what}; its trials are not this search's"):
            open_study(other.search, other, storage, "s1")


def test_a_study_database_that_cannot_hold_a_study_is_one_message(write_spec, tiny_spec,
                                                                   tmp_path):
    import sqlite3

    from zoo.errors import InputError
    from zoo.search.study import open_study

    spec, _ = load_spec(write_spec(searched(tiny_spec, trials=2)))
    runs = tmp_path / "mlruns.db"
    with sqlite3.connect(runs) as con:
        con.execute("CREATE TABLE experiments (experiment_id INTEGER)")
        con.execute("CREATE TABLE runs (run_uuid TEXT)")
    con.close()
    junk = tmp_path / "junk.db"
    junk.write_text("junk")
    (tmp_path / "adir").mkdir()
    for db, message in [(runs, "is an MLflow run store; give the study a file of its own"),
                        (junk, "is not an SQLite database"),
                        (tmp_path / "adir", "is a directory, not an SQLite file"),
                        (tmp_path / "no" / "o.db", "does not exist")]:
        with pytest.raises(InputError, match=message):
            open_study(spec.search, spec, f"sqlite:///{db}", "s1")
    assert junk.read_text() == "junk"
    with sqlite3.connect(runs) as con:  # nothing of Optuna's was written into the run store
        assert {r[0] for r in con.execute("SELECT name FROM sqlite_master")} == {
            "experiments", "runs"}
    con.close()


@pytest.mark.parametrize("search, message", [
    ({"space": {"train.optimizer.lr": {"low": 1.0e-4, "high": float("inf")}}},
     "low, high and step must be finite numbers"),
    ({"sampler": "grid", "space": {"model.field.hidden": {"low": 1, "high": 200000, "step": 1},
                                   "train.optimizer.lr": {"choices": [0.1, 0.01]}}},
     "the grid has 200,000 \\(model.field.hidden\\) × 2 \\(train.optimizer.lr\\) = 400,000 "
     "points, more than 100,000"),
    ({"sampler": "grid", "trials": 3, "space": {"model.field.hidden": {"choices": [4, 8]}}},
     "trials: 3 is more than the grid's 2 points"),
])
def test_validation_refuses_a_search_that_cannot_run_as_asked(write_spec, tiny_spec, search,
                                                              message):
    from zoo.errors import SpecError

    with pytest.raises(SpecError, match=message):
        load_spec(write_spec({**tiny_spec, "search": search}))
