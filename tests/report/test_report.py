"""`zoo report`: runs tagged with registry ids, side by side with the published numbers."""

from __future__ import annotations

import csv
import functools
import math
import re
import socket

import pytest
from mlflow import MlflowClient
from mlflow.entities import Param

from conftest import REPO
from results.cli import zoo
from zoo.report.recipes import Recipe, comparable, differences
from zoo.report.table import Row, Stats, summarise
from zoo.spec.validate import load_spec
from zoo.tracking.params import chunks, flatten

SPEECH, SEPSIS = "irie2022/table1/speech/cde-delta", "irie2022/table1/sepsis-oi/cde-delta"
NO_OI = "irie2022/table1/sepsis-no-oi/cde-delta"
OJA = "irie2022/table1/speech/cde-oja"
EPOCHS_3 = "train.epochs=3 (recipe 500)"  # the speech recipe trains 500 epochs


@functools.cache
def resolved(entry_id: str, overrides: tuple[str, ...] = ()):
    """The shipped spec of ``entry_id`` with ``overrides``, as ``zoo run -o`` resolves it."""
    path = REPO / "specs/irie2022/table1" / f"{entry_id.split('/', 2)[2]}.yaml"
    return load_spec(path, list(overrides))[0]


def log_run(client, exp, entry_id, metrics, seed, start, status="FINISHED", smoke=False,
            partial=None, overrides=(), params=True, epochs=(), owner=None):
    """A run as the runner leaves it: tags, the resolved spec as params, metrics (and
    ``time/epoch_seconds`` at each of ``epochs``), status (RUNNING: left open, as a live or a
    killed process leaves it)."""
    tags = {"zoo.reproduces": entry_id, "zoo.seed": str(seed), "zoo.smoke": str(smoke).lower()}
    if owner:
        tags["zoo.owner"] = owner
    if partial:
        tags["zoo.partial_data"] = partial
    run = client.create_run(exp, start_time=start, tags=tags)
    run_id = run.info.run_id
    if params:
        spec = resolved(entry_id, tuple(overrides)).model_copy(update={"seed": seed})
        logged = {**flatten(spec.model_dump(mode="json")), "model.n_parameters": "1234"}
        for batch in chunks(logged):
            client.log_batch(run_id, params=[Param(k, v) for k, v in batch.items()])
    for key, value in metrics.items():
        client.log_metric(run_id, key, value)
    for step in epochs:
        client.log_metric(run_id, "time/epoch_seconds", 1.0, step=step)
    if status != "RUNNING":
        client.set_terminated(run_id, status)
    return run_id


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("store")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    client = MlflowClient(uri)
    exp = client.create_experiment("repro", artifact_location=(tmp_path / "art").as_uri())
    log = functools.partial(log_run, client, exp)
    # speech: the recipe for seeds 1-3 (seed 2 with other tracking settings), seed 1 twice
    log(SPEECH, {"test/accuracy": 0.10}, seed=1, start=1000)  # older: not used
    log(SPEECH, {"test/accuracy": 0.90}, seed=1, start=2001)
    log(SPEECH, {"test/accuracy": 0.91}, seed=2, start=2002,
        overrides=("tracking.experiment=elsewhere", "tracking.run_name=mine"))
    log(SPEECH, {"test/accuracy": 0.89}, seed=3, start=2003, epochs=(1, 120))  # stopped early
    log(SPEECH, {"test/accuracy": 0.0}, seed=4, start=3000, smoke=True)
    log(SPEECH, {}, seed=5, start=3001, status="FAILED")
    # speech Oja CDE: nothing finished; seed 1 RUNNING after epoch 7, its process gone from this
    # host; seed 2 interrupted; seed 3 RUNNING from another host; a smoke run and a 3-epoch run
    # interrupted (neither is the recipe's, so neither is named)
    dead = f"{socket.gethostname()}:{2**31 - 1}"
    log(OJA, {}, seed=1, start=5000, status="RUNNING", epochs=range(1, 8), owner=dead)
    log(OJA, {}, seed=2, start=5001, status="KILLED", epochs=(1, 2))
    log(OJA, {}, seed=3, start=5002, status="RUNNING", epochs=(1,), owner="elsewhere:12")
    log(OJA, {}, seed=4, start=5003, status="KILLED", smoke=True, epochs=(1,))
    log(OJA, {}, seed=5, start=5004, status="KILLED", overrides=["train.epochs=3"], epochs=(1,))
    # speech, other specs: 3 epochs (seed 2 twice), 3 epochs and another lr, no spec logged
    log(SPEECH, {"test/accuracy": 0.50}, seed=2, start=3500, overrides=["train.epochs=3"])
    log(SPEECH, {"test/accuracy": 0.902}, seed=1, start=4000, overrides=["train.epochs=3"])
    log(SPEECH, {"test/accuracy": 0.900}, seed=2, start=4001, overrides=["train.epochs=3"])
    log(SPEECH, {"test/accuracy": 0.70}, seed=1, start=4002,
        overrides=["train.epochs=3", "train.optimizer.lr=0.001"])
    log(SPEECH, {"test/accuracy": 0.60}, seed=6, start=4003, params=False)
    # sepsis OI: two seeds (one on partial data), one without the entry's metric
    log(SEPSIS, {"test/auc": 0.80}, seed=1, start=2000, partial="setA only (20336 of 40336 stays)")
    log(SEPSIS, {"test/auc": 0.82}, seed=2, start=2001)
    log(SEPSIS, {"test/accuracy": 0.99}, seed=3, start=2002)  # no AUC logged
    # sepsis no-OI: one recipe run, one with 3 epochs
    log(NO_OI, {"test/auc": 0.845}, seed=1, start=2000)
    log(NO_OI, {"test/auc": 0.845}, seed=2, start=2001, overrides=["train.epochs=3"])
    return uri


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def report(store, out, monkeypatch, capsys) -> str:
    code = zoo(["report", "irie2022/table1", "--tracking-uri", store, "--output-dir", out],
               monkeypatch)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def lines(text: str, *parts: str) -> list[str]:
    return [x for x in text.splitlines() if all(p in x for p in parts)]


@pytest.mark.slow
def test_report_side_by_side(store, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    stdout = report(store, out, monkeypatch, capsys)
    rows = {r["id"]: r for r in read_csv(out / "irie2022_table1.csv") if not r["differs"]}
    assert len(rows) == 24
    speech = rows[SPEECH]
    assert float(speech["ours_mean"]) == pytest.approx(90.0)
    assert float(speech["ours_std"]) == pytest.approx(math.sqrt(2 / 3))
    assert speech["ours_n"] == "3" and speech["epochs"] == "500"
    assert speech["epochs_trained"] == "500 500 120"  # seed 3 stopped early; the others: spec's
    assert float(speech["diff"]) == pytest.approx(-0.2)
    assert speech["within"] == "True" and speech["partial_data"] == ""
    assert (speech["paper_mean"], speech["paper_std"], speech["paper_n"]) == ("90.2", "0.2", "5")
    assert speech["not_used"] == "1 other run of seed 1 not used"
    sepsis = rows[SEPSIS]
    assert float(sepsis["ours_mean"]) == pytest.approx(81.0)
    assert float(sepsis["ours_std"]) == pytest.approx(1.0)
    assert float(sepsis["diff"]) == pytest.approx(-9.9)
    assert sepsis["within"] == "False" and sepsis["ours_n"] == "2" and sepsis["epochs"] == "200"
    assert sepsis["partial_data"] == "setA only (20336 of 40336 stays)"
    assert rows[OJA]["ours_mean"] == ""
    run = r"\(run [0-9a-f]{32}\)"
    assert re.fullmatch(rf"seed 5 before its first epoch of 500, FAILED {run}",
                        speech["unfinished"])
    assert re.fullmatch(rf"seed 1 at epoch 7 of 500, RUNNING but its process is gone {run}; "
                        rf"seed 2 at epoch 2 of 500, KILLED {run}; "
                        rf"seed 3 at epoch 1 of 500, RUNNING {run}", rows[OJA]["unfinished"])
    assert sepsis["unfinished"] == ""

    [line] = lines(stdout, "CDE: Delta", "Speech", "(n=5)")
    assert "90.2 ± 0.2 (n=5)" in line and "90.0 ± 0.8 (n=3)  120–500" in line and "-0.2" in line
    assert line.split()[-1] == "yes"
    [line] = lines(stdout, "CDE: Delta", "Sepsis OI")
    assert "81.0 ± 1.0 (n=2)  200" in line and "no" in line and "partial: setA only" in line
    # 21 recipes without runs, and every shipped variant of the table (none has runs here)
    variants = list((REPO / "specs/irie2022/table1").rglob("*.*.yaml"))
    assert variants and stdout.count("not run") == 20 + len(variants)
    [line] = lines(stdout, "CDE: Oja", "Speech", "(n=5)")
    assert line.split()[-2:] == ["finished", "500"]  # ours: not finished; no diff, no verdict
    [note] = lines(stdout, "CDE: Oja · Speech: not finished, not counted: ")
    assert re.search(r"seed 1 at epoch 7 of 500, RUNNING but its process is gone \(run \w+\); "
                     r"seed 2 at epoch 2 of 500, KILLED \(run \w+\); seed 3 at epoch 1 of 500, "
                     r"RUNNING \(run \w+\)$", note)
    assert lines(stdout, "CDE: Delta · Speech: not finished, not counted: seed 5 before")
    [line] = lines(stdout, "direct NODE: Hebb [auc-selection]", "Sepsis no-OI")
    assert "82.9 ± 0.7 (n=5)  not run" in line
    assert "per seed, the newest finished run (latest start) counts" in stdout
    assert "CDE: Delta · Speech: 1 other run of seed 1 not used" in stdout.splitlines()
    markdown = (out / "irie2022_table1.md").read_text()
    assert "| irie2022/table1/speech/cde-delta | CDE: Delta | Speech | % |" in markdown
    assert "2 x paper std" in markdown
    assert (out / "irie2022_table1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.iterdir()) == [
        "irie2022_table1.csv", "irie2022_table1.md", "irie2022_table1.png"]


@pytest.mark.slow
def test_runs_of_other_specs_are_listed_apart(store, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    stdout = report(store, out, monkeypatch, capsys)
    apart = {(r["id"], r["differs"]): r for r in read_csv(out / "irie2022_table1.csv")
             if r["differs"]}
    assert sorted(apart) == sorted([
        (SPEECH, EPOCHS_3),
        (SPEECH, f"{EPOCHS_3}; train.optimizer.lr=0.001 (recipe 5e-05)"),
        (SPEECH, "no resolved spec logged"),
        (NO_OI, "train.epochs=3 (recipe 200)")])
    three = apart[SPEECH, EPOCHS_3]  # 90.2 and 90.0 would be within the paper's spread
    assert float(three["ours_mean"]) == pytest.approx(90.1)
    assert float(three["ours_std"]) == pytest.approx(0.1)
    assert (three["ours_n"], three["epochs"], three["diff"], three["within"]) == ("2", "3", "", "")
    assert three["not_used"] == "1 other run of seed 2 not used"
    other_lr = apart[SPEECH, f"{EPOCHS_3}; train.optimizer.lr=0.001 (recipe 5e-05)"]
    assert (other_lr["ours_mean"], other_lr["ours_std"], other_lr["ours_n"]) == ("70.0", "", "1")
    assert apart[SPEECH, "no resolved spec logged"]["epochs"] == ""

    head, _, tail = stdout.partition("Runs whose spec differs from the shipped one")
    assert EPOCHS_3 not in head
    [line] = lines(tail, "CDE: Delta", "Speech", EPOCHS_3, "(n=2)")
    assert line.split() == ["CDE:", "Delta", "Speech", "%", "90.1", "±", "0.1", "(n=2)", "3",
                            *EPOCHS_3.split()]
    [line] = lines(tail, "CDE: Delta", "Sepsis no-OI")
    assert line.split() == ["CDE:", "Delta", "Sepsis", "no-OI", "AUC", "x100", "84.5", "(n=1)",
                            "3", "train.epochs=3", "(recipe", "200)"]
    assert f"CDE: Delta · Speech [{EPOCHS_3}]: 1 other run of seed 2 not used" in tail

    # one recipe run: its value alone, no spread, and a verdict
    no_oi = next(r for r in read_csv(out / "irie2022_table1.csv")
                 if r["id"] == NO_OI and not r["differs"])
    assert (no_oi["ours_mean"], no_oi["ours_std"], no_oi["ours_n"]) == ("84.5", "", "1")
    assert no_oi["within"] == "True"
    [line] = lines(head, "CDE: Delta", "Sepsis no-OI")
    assert line.split()[-9:] == ["84.5", "±", "0.7", "(n=5)", "84.5", "(n=1)", "200", "+0.0",
                                 "yes"]
    markdown = (out / "irie2022_table1.md").read_text()
    assert "## Runs whose spec differs from the shipped one" in markdown
    assert f"| {SPEECH} | CDE: Delta | Speech | % | 90.1 ± 0.1 (n=2) | 3 | {EPOCHS_3} |  |" \
        in markdown


def test_differences_name_what_changed():
    shipped = {"train.epochs": "500", "train.optimizer.lr": "5e-05", "seed": "0"}
    recipe = Recipe(REPO / "x.yaml", comparable(shipped))
    assert differences({**shipped, "seed": "3", "tracking.uri": "http://h:5000",
                        "model.n_parameters": "12"}, recipe) is None
    assert differences({**shipped, "train.optimizer.lr": "0.1", "train.epochs": "3",
                        "model.extra": "1"}, recipe) == (
        "train.epochs=3 (recipe 500); model.extra=1 (recipe has none); "
        "train.optimizer.lr=0.1 (recipe 5e-05)")
    assert differences({"seed": "1"}, recipe) == "no resolved spec logged"
    assert differences(shipped, None) == "no shipped spec reproduces this entry"


def test_one_run_has_no_spread():
    assert summarise([90.0]) == Stats(90.0, None, 1)
    assert summarise([1.0, 3.0]) == Stats(2.0, 1.0, 2)
    assert summarise([]) is None


@pytest.mark.slow
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
    from zoo.results.published import load_registry

    entries = load_registry().entries
    delta = entries["irie2022/table1/speech/cde-delta"]  # 90.2 (0.2)
    assert Row(delta, Stats(89.8, 1.0, 5), None, ()).within is True   # |diff| = 2 std
    assert Row(delta, Stats(89.7, 0.1, 5), None, ()).within is False
    assert Row(delta, None, None, ()).within is None
    other = Row(delta, Stats(90.2, 0.1, 5), None, (), 3, EPOCHS_3)  # not the recipe: no verdict
    assert other.within is None and other.diff is None
    bound = entries["irie2022/appendix_c/speech/cde-dx-only"]  # < 65
    assert Row(bound, Stats(60.0, 1.0, 5), None, ()).within is True
    assert Row(bound, Stats(70.0, 1.0, 5), None, ()).within is False
    no_std = entries["irie2022/text/speech/ncde-better-interpolation"]
    assert Row(no_std, Stats(93.0, 1.0, 5), None, ()).within is None


def test_an_option_added_after_a_run_at_its_unset_value_is_no_difference():
    """A run that predates an option (it logged no such key) matches a recipe that leaves the
    option null; a later option the recipe sets to a value, or a logged null against a value,
    is still a difference."""
    from pathlib import Path

    from zoo.report.recipes import Recipe, differences

    recipe = Recipe(Path("spec.yaml"), {"train.epochs": "199", "model.field.wiring": "null",
                                        "model.readout.init": "glorot_uniform"})
    old_run = {"train.epochs": "199", "model.readout.init": "glorot_uniform"}
    assert differences(old_run, recipe) is None
    assert differences({"train.epochs": "199"}, recipe) == (
        "model.readout.init=(not logged) (recipe glorot_uniform)")
    assert differences({**old_run, "model.field.wiring": "{'kind': 'ncp'}"}, recipe) == (
        "model.field.wiring={'kind': 'ncp'} (recipe null)")


def test_an_option_added_at_its_unset_value_keeps_the_recipe_digest():
    """The digest that records carry ignores keys left null, like :func:`differences`; any
    value that is set still changes it."""
    from zoo.report.collect import spec_digest

    before = {"train.epochs": "199", "model.readout.init": "glorot_uniform"}
    assert spec_digest({**before, "model.field.wiring": "null"}) == spec_digest(before)
    assert spec_digest({**before, "seed": "3", "tracking.uri": "x"}) == spec_digest(before)
    assert spec_digest({**before, "model.field.wiring": "{'kind': 'ncp'}"}) != spec_digest(before)
    assert spec_digest({**before, "train.epochs": "3"}) != spec_digest(before)


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(b""), "is empty; run 'zoo sweep' first"),
    (lambda p: p.mkdir(), "is a directory, not an SQLite file")])
def test_an_empty_or_folder_store_is_read_as_nothing(make, message, tmp_path, monkeypatch,
                                                     capsys):
    """zoo report only reads: an empty file is not made into a store, a folder is named so."""
    db = tmp_path / "zero.db"
    make(db)
    code = zoo(["report", "jacobian_ncde/table1", "--tracking-uri", f"sqlite:///{db}",
                "--output-dir", tmp_path / "o"], monkeypatch)
    assert code == 2 and message in capsys.readouterr().err
    assert db.is_dir() or db.stat().st_size == 0
