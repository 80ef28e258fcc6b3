"""Results as data: `zoo report --export` records, their merge, and the page built from them."""

from __future__ import annotations

import dataclasses
import functools
import json

import pytest
from mlflow import MlflowClient
from test_report import NO_OI, SEPSIS, SPEECH, log_run

from conftest import REPO
from results.cli import zoo
from zoo.errors import InputError
from zoo.report import kept, page, records
from zoo.report.recipes import recipes_of
from zoo.report.records import Record, merge
from zoo.results.published import load_registry

PAGE = REPO / "docs" / "reproduction.md"
REGENERATE = ("zoo report --from-records reproductions/results --timings reproductions/timings "
              "--page docs/reproduction.md")


def test_page_section_is_what_the_records_give():
    """The committed section of docs/reproduction.md equals the one the committed records give."""
    text = PAGE.read_text(encoding="utf-8")
    root = REPO / "reproductions" / "results"
    done = records.load(root)
    timed = records.load(REPO / "reproductions" / "timings", per_device=True)
    expected = page.section(load_registry(), done, page.link(PAGE, root), timed,
                            recipes_of(done.keys() | timed.keys()))
    shown = text[text.index(page.BEGIN):text.index(page.END) + len(page.END)]
    assert shown == expected, f"the results section is stale; run: {REGENERATE}"


def test_committed_records_are_of_the_shipped_specs():
    """Every committed record names the digest of the spec now shipped for its entry: a changed
    recipe makes its records stale (re-run them), and an option added later at its unset value
    (null) leaves them counting, as the next export keeps them."""
    from zoo.report.collect import spec_digest
    from zoo.report.recipes import load_recipes, recipe_key

    for folder in ("results", "timings"):
        found = records.load(REPO / "reproductions" / folder, per_device=folder == "timings")
        keys = {recipe_key(r.id, r.variant) for rs in found.values() for r in rs}
        shipped = load_recipes({key.partition("@")[0] for key in keys})
        for rs in found.values():
            for r in rs:
                key = recipe_key(r.id, r.variant)
                assert r.recipe == spec_digest(shipped[key].params), (
                    f"reproductions/{folder}/{key}.jsonl seed {r.seed}: recorded under another "
                    f"spec than {shipped[key].path.relative_to(REPO)}")


@pytest.fixture
def store(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    client = MlflowClient(uri)
    exp = client.create_experiment("repro", artifact_location=(tmp_path / "art").as_uri())
    log = functools.partial(log_run, client, exp)
    log(SPEECH, {"test/accuracy": 0.10}, seed=1, start=1000)  # older run of seed 1
    one = log(SPEECH, {"test/accuracy": 0.90}, seed=1, start=2001)
    for step, seconds in ((1, 2.0), (2, 4.0), (3, 6.0)):  # stopped early, after epoch 3
        client.log_metric(one, "time/epoch_seconds", seconds, step=step)
        client.log_metric(one, "val/accuracy", 0.5 + step / 10, step=step, timestamp=step)
    client.log_metric(one, "val/accuracy", 0.75, step=2, timestamp=9)  # epoch 2 again, resumed
    client.log_metric(one, "val/loss", 0.25, step=2)
    client.log_metric(one, "best_epoch", 2, step=2)  # kept the checkpoint of epoch 2
    for key, value in {"zoo.device": "cpu", "zoo.threads": "1", "zoo.git_commit": "abc123",
                       "zoo.spec_hash": "feedbeef"}.items():
        client.set_tag(one, key, value)
    two = log(SPEECH, {"test/accuracy": 0.91}, seed=2, start=2002,
              overrides=("tracking.experiment=elsewhere",))
    client.set_tag(two, "mlflow.source.git.commit", "def456")
    log(SPEECH, {"test/accuracy": 0.50}, seed=3, start=3000, overrides=["train.epochs=3"])
    log(SPEECH, {"test/accuracy": 0.0}, seed=4, start=3001, smoke=True)
    log(SEPSIS, {"test/auc": 0.80}, seed=1, start=2000, partial="setA only")
    return uri, client, log, one, two


def export(uri, root, monkeypatch, capsys, table="irie2022/table1") -> str:
    code = zoo(["report", table, "--tracking-uri", uri, "--export", root], monkeypatch)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.mark.slow
def test_export_writes_the_runs_that_count(store, tmp_path, monkeypatch, capsys):
    uri, _, _, one, two = store
    root = tmp_path / "results"
    out = export(uri, root, monkeypatch, capsys)
    speech = root / f"{SPEECH}.jsonl"
    lines = speech.read_text().splitlines()
    assert [json.loads(x)["seed"] for x in lines] == [1, 2]
    first, second = records.read(speech)
    assert first == Record(
        id=SPEECH, variant=None, seed=1, metric="test/accuracy", value=0.9, epochs=3,
        epoch_seconds=4.0, date="1970-01-01T00:00:02.001+00:00", device="cpu", threads=1,
        commit="abc123",
        spec_hash="feedbeef", recipe=first.recipe, partial_data=None, run_id=one,
        select="val/accuracy", kept_epoch=2, validation={"val/accuracy": 0.75, "val/loss": 0.25})
    # no epoch logged: the spec's train.epochs; no best epoch: no checkpoint named
    assert (second.run_id, second.epochs, second.epoch_seconds, second.commit, second.device,
            second.threads) == (two, 500, None, "def456", None, None)
    assert (second.select, second.kept_epoch, second.validation) == (None, None, None)
    assert first.recipe == second.recipe  # other tracking settings: the same recipe
    assert list(json.loads(lines[0])) == [f.name for f in dataclasses.fields(Record)]
    [sepsis] = records.read(root / f"{SEPSIS}.jsonl")
    assert (sepsis.value, sepsis.partial_data) == (0.8, "setA only")
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.jsonl")) == [
        f"{SEPSIS}.jsonl", f"{SPEECH}.jsonl"]  # no file for entries without counted runs

    assert f"{SPEECH}: wrote {speech} (2 seeds)" in out
    assert "  skipped 1 run (seed 3): train.epochs=3 (recipe 500)" in out
    assert "  skipped 1 run (seed 1): an older run of its seed (the newest counts)" in out
    assert "seed 4" not in out  # smoke runs are not read
    assert "2 of 24 entries have runs or records" in out

    assert f"{speech} unchanged (2 seeds)" in export(uri, root, monkeypatch, capsys)
    assert speech.read_text().splitlines() == lines


@pytest.mark.slow
def test_reexport_merges_by_start_time(store, tmp_path, monkeypatch, capsys):
    uri, _, log, one, two = store
    root = tmp_path / "results"
    export(uri, root, monkeypatch, capsys)
    speech = root / f"{SPEECH}.jsonl"
    first, second = records.read(speech)
    later = dataclasses.replace(second, run_id="r" * 32, date="2030-01-01T00:00:00.000+00:00",
                                value=0.5)
    kept = dataclasses.replace(first, seed=7, run_id="k" * 32)  # a seed not in this store
    records.write(speech, [first, later, kept])
    stale = root / f"{NO_OI}.jsonl"  # made under an earlier shipped spec, no run of it now
    records.write(stale, [dataclasses.replace(first, id=NO_OI, recipe="0" * 16)])
    newer = log(SPEECH, {"test/accuracy": 0.95}, seed=1, start=5000)
    out = export(uri, root, monkeypatch, capsys)
    assert (f"  seed 1: run {newer} (1970-01-01T00:00:05.000+00:00) replaces run {one} "
            f"(1970-01-01T00:00:02.001+00:00), which is older") in out
    assert (f"  seed 2: kept run {'r' * 32} (2030-01-01T00:00:00.000+00:00); run {two} "
            f"(1970-01-01T00:00:02.002+00:00) is not newer") in out
    assert [(r.seed, r.run_id, r.value) for r in records.read(speech)] == [
        (1, newer, 0.95), (2, "r" * 32, 0.5), (7, "k" * 32, 0.9)]
    assert f"{NO_OI}: removed {stale}: none of its records counts" in out
    assert "  seed 1: dropped run " in out and not stale.exists()
    assert not list(root.rglob(".*"))  # no temporary file left


def _record(seed, run, date, recipe="r1", value=0.5):
    return Record(id="p/t/e", variant=None, seed=seed, metric="test/accuracy", value=value,
                  epochs=10, epoch_seconds=1.0, date=f"2024-01-0{date}T00:00:00.000+00:00",
                  device="cpu", threads=None, commit=None, spec_hash=None, recipe=recipe,
                  partial_data=None,
                  run_id=run)


def test_merge_rule():
    old = [_record(1, "a", 2), _record(2, "b", 2), _record(3, "c", 2), _record(4, "d", 2, "r0")]
    new = [_record(1, "x", 3), _record(2, "y", 1), _record(3, "c", 2, value=0.7),
           _record(5, "z", 1)]
    merged, notes = merge(old, new, "r1")
    assert [(r.seed, r.run_id, r.value) for r in merged] == [
        (1, "x", 0.5), (2, "b", 0.5), (3, "c", 0.7), (5, "z", 0.5)]
    assert notes == [
        "seed 4: dropped run d (2024-01-02T00:00:00.000+00:00), recorded under an earlier "
        "shipped spec",
        "seed 1: run x (2024-01-03T00:00:00.000+00:00) replaces run a "
        "(2024-01-02T00:00:00.000+00:00), which is older",
        "seed 2: kept run b (2024-01-02T00:00:00.000+00:00); run y "
        "(2024-01-01T00:00:00.000+00:00) is not newer"]
    assert merge(old[:1], [_record(1, "x", 2)], "r1")[0][0].run_id == "a"  # a tie keeps it


def test_kept_checkpoints_where_runs_select_by_another_metric_than_reported():
    """Per seed and protocol: the metric that kept the checkpoint, its epoch, the selecting
    metrics there as logged and the test value in the paper's unit; no table where every record
    selects by the reported metric or names no checkpoint."""
    entry = "irie2022/table1/sepsis-oi/cde-hebb"

    def rec(variant, select, epoch, accuracy, auc, value):
        return dataclasses.replace(
            _record(1, f"run-{variant}", 2, value=value), id=entry, variant=variant,
            metric="test/auc", select=select, kept_epoch=epoch,
            validation={"val/accuracy": accuracy, "val/auc": auc, "val/loss": 0.6})

    both = {entry: [rec(None, "val/accuracy", 1, 0.936, 0.807, 0.7992)],
            f"{entry}@auc-selection": [rec("auc-selection", "val/auc", 11, 0.889, 0.902, 0.89)]}
    lines = kept.table(load_registry(), both)
    assert lines[0] == kept.HEADING
    assert ("| id | seed | protocol | kept by | epochs | kept epoch | val/accuracy there | "
            "val/auc there | test (paper's unit) |") in lines
    assert f"| {entry} | 1 | recipe | val/accuracy | 10 | 1 | 0.936 | 0.807 | 79.9 |" in lines
    assert f"| {entry} | 1 | auc-selection | val/auc | 10 | 11 | 0.889 | 0.902 | 89.0 |" in lines
    assert lines[-2] == ("Runs that kept the checkpoint of epoch 1 (the model after one epoch of "
                         "training): 1 of the 1 runs kept by val/accuracy, 0 of the 1 runs kept "
                         "by val/auc.")
    alone = kept.table(load_registry(), {entry: both[entry]})
    assert alone[-2] == ("Runs that kept the checkpoint of epoch 1 (the model after one epoch of "
                         "training): 1 of the 1 runs kept by val/accuracy.")
    by_auc = f"{entry}@auc-selection"
    assert kept.table(load_registry(), {by_auc: both[by_auc]}) == []
    unnamed = {k: [dataclasses.replace(r, kept_epoch=None) for r in v] for k, v in both.items()}
    assert kept.table(load_registry(), unnamed) == []


@pytest.mark.slow
def test_records_rebuild_the_page(store, tmp_path, monkeypatch, capsys):
    uri = store[0]
    root = tmp_path / "results"
    export(uri, root, monkeypatch, capsys)
    doc = tmp_path / "docs" / "page.md"
    doc.parent.mkdir()
    doc.write_text(f"# Title\n\nkept\n\n{page.BEGIN}\nold\n{page.END}\n\nkept too\n")
    code = zoo(["report", "--from-records", root, "--page", doc], monkeypatch)
    out = capsys.readouterr().out
    assert code == 0
    text = doc.read_text()
    assert text.startswith("# Title\n\nkept\n\n<!-- results:begin -->\n")
    assert text.endswith("<!-- results:end -->\n\nkept too\n") and "old" not in text
    assert "3 seeds recorded for 2 of the 111 registry entries." in text
    assert (f"| {SPEECH} | CDE: Delta · Speech | % | 90.2 ± 0.2 (n=5) | "
            f"90.5 ± 0.5 (n=2, 3–500 epochs) | +0.3 | within | cpu: 4 (1 thread) |") in text
    assert (f"| {SEPSIS} | CDE: Delta · Sepsis OI | AUC x100 | 90.9 ± 0.2 (n=5) | "
            f"80.0 (n=1, 200 epochs), partial data: setA only | -10.9 | outside | – |") in text
    assert "![irie2022/table1 from the records](../results/irie2022/table1.png)" in text
    assert "Other entries: no recipe runs recorded (speech/gru-ode, " in text
    assert "### jacobian_ncde/table1: CharacterTrajectories accuracy (fraction), 4 seeds\n\n" \
           "No recipe runs recorded (character-trajectories/matrix-ncde, " in text
    assert (root / "irie2022/table1.png").read_bytes()[:4] == b"\x89PNG"
    assert f"wrote {root / 'irie2022/table1.png'}" in out
    assert "results section rewritten from 3 records of 2 recipes and variants" in out

    # records alone: the store is not needed
    (tmp_path / "mlruns.db").unlink()
    assert zoo(["report", "--from-records", root, "--page", doc], monkeypatch) == 0
    assert "results section unchanged" in capsys.readouterr().out


@pytest.mark.slow
def test_shortened_runs_are_recorded_for_their_cost_only(store, tmp_path, monkeypatch, capsys):
    """The seed-3 run of 3 epochs goes to the timings folder, not to the results; the cost table
    shows the epoch times of both, and the complete seeds' training time."""
    uri, client, log, one, _ = store
    short = log(SPEECH, {"test/accuracy": 0.4}, seed=5, start=6000,
                overrides=["train.epochs=1", "train.drop_last=false",
                           "train.eval_shuffle_drop_last=false"])
    client.log_metric(short, "time/epoch_seconds", 10.0, step=1)
    client.set_tag(short, "zoo.device", "cpu")
    log(SPEECH, {"test/accuracy": 0.4}, seed=6, start=6001,
        overrides=["train.epochs=1", "train.optimizer.lr=0.1"])  # not only shortened
    root, timings = tmp_path / "results", tmp_path / "timings"
    code = zoo(["report", "irie2022/table1", "--tracking-uri", uri, "--export", root,
                "--timings", timings], monkeypatch)
    out = capsys.readouterr().out
    assert code == 0 and f"{SPEECH} (timings): wrote {timings / SPEECH}.jsonl (2 timings)" in out
    timed = records.read(timings / f"{SPEECH}.jsonl")
    assert [(r.seed, r.epochs, r.epoch_seconds) for r in timed] == [(3, 3, None), (5, 1, 10.0)]
    assert [r.seed for r in records.read(root / f"{SPEECH}.jsonl")] == [1, 2]
    assert {r.recipe for r in timed} == {records.read(root / f"{SPEECH}.jsonl")[0].recipe}
    timed = records.load(timings, per_device=True)
    section = page.section(load_registry(), records.load(root), "results", timed,
                           recipes_of([SPEECH]))
    # seed 1 (complete, stopped after 3 epochs, 1 thread): 4 s per epoch; seed 5 (its threads
    # not recorded): 10 s, apart; the others logged no epoch time. A seed of the recipe: at most
    # 500 epochs (it stops early) at either rate
    assert (f"| {SPEECH} | cpu | 4 (1 thread); 10 (threads not recorded) | ≤ 500 epochs (stops "
            "early): ≤ 33 min (1 thread); ≤ 83 min (threads not recorded) | 1: 12 s "
            "(3 epochs) | seed 5: 1 | complete |") in section
    client.set_tag(short, "zoo.threads", "1")
    zoo(["report", "irie2022/table1", "--tracking-uri", uri, "--export", root, "--timings",
         timings], monkeypatch)
    section = page.section(load_registry(), records.load(root), "results",
                           records.load(timings, per_device=True))
    assert f"| {SPEECH} | cpu | 7 (1 thread) | – | 1: 12 s (3 epochs) | seed 5: 1 |" in section
    assert "### Cost per training epoch" not in page.section(load_registry(), records.load(root),
                                                          "results")


@pytest.mark.parametrize("argv, message", [
    (["--page", "x.md"], "--page goes with --from-records"),
    (["--timings", "t"], "--timings goes with --export or --from-records"),
    (["irie2022", "--from-records", "."], "give no PAPER/TABLE"),
    (["--from-records", "nowhere"], "no such folder"),
])
def test_from_records_errors(argv, message, monkeypatch, capsys):
    assert zoo(["report", *argv], monkeypatch) == 2
    assert message in capsys.readouterr().err


def test_page_without_markers_is_left_alone(tmp_path, monkeypatch, capsys):
    doc = tmp_path / "page.md"
    doc.write_text("# no markers\n")
    (tmp_path / "results").mkdir()
    assert zoo(["report", "--from-records", tmp_path / "results", "--page", doc],
               monkeypatch) == 2
    assert f"--page {doc}: the page needs one '<!-- results:begin -->'" in \
        capsys.readouterr().err
    assert doc.read_text() == "# no markers\n"


def test_a_record_without_the_checkpoint_keys_reads_them_as_null(tmp_path):
    path = tmp_path / "p" / "t" / "e.jsonl"
    path.parent.mkdir(parents=True)
    record = dataclasses.asdict(_record(1, "a", 2))
    for key in ("select", "kept_epoch", "validation"):
        del record[key]
    path.write_text(json.dumps(record) + "\n")
    [read] = records.read(path)
    assert read == _record(1, "a", 2) and read.kept_epoch is None


@pytest.mark.parametrize("second, why", [
    ('{"seed": 1}', "missing commit, date, device, epoch_seconds, epochs, id, metric"),
    ("[1, 2]", "a record is a JSON object"),
    ({"colour": "red"}, "unknown colour; the keys are id, variant, seed"),
    ({"value": float("nan")}, "NaN is not a finite number"),
    ({"value": "0.9"}, "value must be float, not '0.9'"),
    ({"seed": 1.5}, "seed must be int, not 1.5"),
    ({"kept_epoch": True}, "kept_epoch must be int | None, not True"),
    ({"validation": [0.9]}, r"validation must be dict\[str, float\] \| None, not \[0.9\]"),
])
def test_bad_record_names_its_line(tmp_path, second, why):
    path = tmp_path / "p" / "t" / "e.jsonl"
    path.parent.mkdir(parents=True)
    good = dataclasses.asdict(_record(1, "a", 2))
    if isinstance(second, dict):
        second = json.dumps({**good, **second})
    path.write_text(json.dumps(good) + "\n" + second + "\n")
    with pytest.raises(InputError, match=rf"e\.jsonl:2: not a record: {why}"):
        records.load(tmp_path)


def test_a_record_file_that_is_not_utf8_or_repeats_a_seed_is_named(tmp_path):
    path = tmp_path / "p" / "t" / "e.jsonl"
    path.parent.mkdir(parents=True)
    good = json.dumps(dataclasses.asdict(_record(1, "a", 2)))
    path.write_bytes(good.encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError, match=r"e\.jsonl: not UTF-8 text \(byte \d+: invalid start "
                                         r"byte\)"):
        records.load(tmp_path)
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(InputError, match=r"e\.jsonl: seed 1 is recorded twice$"):
        records.load(tmp_path)


@pytest.mark.slow
def test_variants_of_the_protocol_get_rows_and_files_of_their_own(tmp_path, monkeypatch, capsys):
    """Table 2's N-ODE measured under the authors' code (the recipe) and the paper's text (the
    paper-text variant): both count, each in its own record file, both on the page, untrained."""
    import sys

    monkeypatch.syspath_prepend(str(REPO / "reproductions"))
    from trajectory_length import main as measure_draws

    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    relu = REPO / "specs/hasani2021/table2/relu"
    monkeypatch.setattr(sys, "argv", ["trajectory_length.py", str(relu / "node.yaml"),
                                      str(relu / "node.paper-text.yaml"), "--tries", "2",
                                      "--tracking-uri", uri])
    measure_draws()
    root = tmp_path / "results"
    out = export(uri, root, monkeypatch, capsys, table="hasani2021/table2")
    entry = "hasani2021/table2/relu/node"
    code, text = (records.read(root / f"{entry}{suffix}.jsonl") for suffix in ("", "@paper-text"))
    assert [(r.seed, r.variant, r.epochs) for r in code] == [(1, None, None), (2, None, None)]
    assert [(r.seed, r.variant, r.epochs) for r in text] == [
        (1, "paper-text", None), (2, "paper-text", None)]
    assert code[0].value > 0.05 > 0.01 > text[0].value  # [0, 2π] in 100; [0, 100] in 10,001
    assert f"{entry}@paper-text: wrote " in out
    section = page.section(load_registry(), records.load(root), "results")
    assert f"| {entry} | Neural ODE · ReLU | steps per input | 1.29 ± 0.10 (n=100) | " in section
    assert f"| {entry} | Neural ODE [paper-text] · ReLU | " in section
    assert "(n=2, untrained)" in section


def _authors_scripts(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "reproductions"))
    import authors_scripts

    return authors_scripts


def test_authors_scripts_section_is_what_their_records_give(monkeypatch):
    """The page's table of the authors' own scripts run here equals the one their records, the
    registry and zoo's records give."""
    authors = _authors_scripts(monkeypatch)
    text = PAGE.read_text(encoding="utf-8")
    shown = text[text.index(authors.BEGIN):text.index(authors.END) + len(authors.END)]
    assert shown == authors.section(), (
        "the authors' scripts section is stale; run: .venv/bin/python "
        "reproductions/authors_scripts.py --page docs/reproduction.md")


def test_authors_scripts_summary_and_staging(tmp_path, monkeypatch):
    """Runs are summarised as mean ± population std in the paper's units beside the paper and
    zoo's records; staging changes only the TensorFlow import line of the authors' files."""
    authors = _authors_scripts(monkeypatch)
    entry = "hasani2021/table3/gesture/lstm"
    folder = tmp_path / "records" / "hasani2021/table3/gesture"
    folder.mkdir(parents=True)
    runs = [{"id": entry, "value": v, "best_epoch": 50, "tensorflow": "2.15.1",
             "repo_commit": "abc", "date": "2026-01-01T00:00:00+00:00", "seconds": 1.0}
            for v in (58.0, 60.0, 62.0)]
    (folder / "lstm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    lines = authors.section(tmp_path / "records").splitlines()
    row = next(line for line in lines if line.startswith(f"| {entry} "))
    ours = [r.value * 100 for r in records.load(REPO / "reproductions/results")[entry]]
    mean, std = sum(ours) / len(ours), (sum((v - sum(ours) / len(ours)) ** 2 for v in ours)
                                       / len(ours)) ** 0.5
    assert row == (f"| {entry} | 64.57 ± 0.59 (n=5) | 60.00 ± 1.63 (n=3) "
                   f"| {mean:.2f} ± {std:.2f} (n={len(ours)}) | 2.15.1 |")

    source = tmp_path / "repo" / "experiments_with_ltcs"
    source.mkdir(parents=True)
    for name in ("gesture.py", "ltc_model.py", "ctrnn_model.py"):
        (source / name).write_text(f"import numpy as np\nimport tensorflow as tf\n# {name}\n")
    monkeypatch.setattr(authors, "_place_data", lambda task, work: None)
    work = tmp_path / "work"
    work.mkdir()
    authors._stage(tmp_path / "repo", authors.TASKS["gesture"], work)
    assert (work / "gesture.py").read_text() == f"import numpy as np\n{authors.TF1}\n# gesture.py\n"
    (source / "ozone.py").write_text("import tensorflow.compat.v1 as tf\n")
    with pytest.raises(SystemExit, match="has no line 'import tensorflow as tf'"):
        authors._stage(tmp_path / "repo", authors.TASKS["ozone"], tmp_path / "work2")


def test_recipe_epochs_and_early_stopping_of_the_cost_table():
    """A seed at the recipe is its epochs × s/epoch, an upper bound where the recipe stops early
    (paper (a)'s plateau stop) and exact where it trains every epoch (the LTC protocol)."""
    ltc, sepsis = "hasani2021/table3/traffic/ltc", "irie2022/table1/sepsis-oi/cde-hebb"
    found = recipes_of([ltc, sepsis])
    assert (found[ltc].epochs, found[ltc].stops_early) == (199, False)
    assert (found[sepsis].epochs, found[sepsis].stops_early) == (200, True)
    [timed] = records.read(REPO / "reproductions" / "timings" / f"{ltc}.jsonl")
    timed = dataclasses.replace(timed, epoch_seconds=33.0, threads=1)
    assert page._recipe_seed([timed], found[ltc]) == "199 epochs: 1.8 h (1 thread)"
    assert page._recipe_seed([timed], found[sepsis]) == ("≤ 200 epochs (stops early): ≤ 1.8 h "
                                                         "(1 thread)")


def test_the_cost_table_keeps_a_row_per_device():
    """Epoch times of a GPU and of the CPU are never averaged together: each device has its row,
    and a GPU record names the GPU (``zoo.gpu``) beside ``zoo.device``."""
    from zoo.report.export import _device

    key = "irie2022/table2/depth1/delta"
    [timed] = [r for r in records.read(REPO / "reproductions" / "timings" / f"{key}.jsonl")
               if r.device == "cpu"]
    gpu = dataclasses.replace(timed, epoch_seconds=2.0, threads=16,
                              device=_device({"zoo.device": "cuda", "zoo.gpu": "NVIDIA H200"}))
    cpu = dataclasses.replace(timed, epoch_seconds=40.0, threads=1)
    rows = [line for line in page.costs({}, {key: [cpu, gpu]}, recipes_of([key]))
            if line.startswith(f"| {key} ")]
    assert [row.split(" | ")[1:3] for row in rows] == [["cpu", "40 (1 thread)"],
                                                       ["cuda (NVIDIA H200)", "2 (16 threads)"]]
    assert _device({"zoo.device": "cpu"}) == "cpu"


def test_timings_keep_a_seed_per_device():
    """A GPU timing of seed 1 joins the CPU one in the timings folder (per_device); among
    results a newer run of a seed replaces the older one, whatever its device."""
    key = "irie2022/table2/depth1/delta"
    [cpu] = [r for r in records.read(REPO / "reproductions" / "timings" / f"{key}.jsonl")
             if r.device == "cpu"]
    gpu = dataclasses.replace(cpu, device="cuda (NVIDIA H200)", run_id="gpu",
                              date="2099-01-01T00:00:00.000+00:00")
    merged, _ = records.merge([cpu], [gpu], cpu.recipe, per_device=True)
    assert [(r.seed, r.device) for r in merged] == [(1, "cpu"), (1, "cuda (NVIDIA H200)")]
    assert records.merge([cpu], [gpu], cpu.recipe)[0] == [gpu]


def test_the_cost_table_shows_the_fastest_and_slowest_seed():
    """Seeds run to the end on machines of other speed show their training times from the
    fastest to the slowest, not a mean that no seed took; seeds that agree show one time."""
    key = "hasani2021/table3/occupancy/ltc"
    [seed] = records.read(REPO / "reproductions" / "results" / f"{key}.jsonl")[:1]
    fast = dataclasses.replace(seed, seed=1, epochs=199, epoch_seconds=2.7, threads=1)
    slow = dataclasses.replace(seed, seed=2, epochs=199, epoch_seconds=18.7, threads=1)

    def seeds_cell(recs):
        [row] = [line for line in page.costs({key: recs}, {}, recipes_of([key]))
                 if line.startswith(f"| {key} ")]
        return row.split(" | ")[4]

    assert seeds_cell([fast, slow]) == "2: 9 min to 62 min (199 epochs)"
    assert seeds_cell([fast, dataclasses.replace(fast, seed=2)]) == "2: 9 min each (199 epochs)"
