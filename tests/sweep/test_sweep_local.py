"""`zoo sweep` on local processes: specs × seeds, finished runs skipped, failed ones re-run."""

from __future__ import annotations

import pytest
from mlflow import MlflowClient

from results.cli import zoo
from zoo.errors import InputError
from zoo.sweep.job import progress_lines
from zoo.sweep.plan import parse_seeds, plan, spec_files

REPRODUCES = "irie2022/table1/speech/cde-delta"


@pytest.mark.parametrize("text, seeds", [
    ("1-5", [1, 2, 3, 4, 5]), ("1,3,5", [1, 3, 5]), ("1-3,7", [1, 2, 3, 7]), ("2,2,1", [2, 1]),
    (" 4 ", [4]),
])
def test_parse_seeds(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "a", "5-1", "1-", "1..3"])
def test_parse_seeds_rejects(text):
    with pytest.raises(InputError, match="--seeds"):
        parse_seeds(text)


def test_plan_defaults_to_train_seeds_and_skips_bases(write_spec, tiny_spec, tmp_path):
    tiny_spec["train"]["seeds"] = [3, 4]
    write_spec(tiny_spec, "a.yaml")
    write_spec({"train": {"epochs": 1}}, "_base.yaml")
    assert [p.name for p in spec_files(tmp_path)] == ["a.yaml"]
    jobs, uris = plan([str(tmp_path)], None, [], smoke=False)
    assert [(j.name, j.seed, j.metric) for j in jobs] == [("a", 3, "accuracy"),
                                                          ("a", 4, "accuracy")]
    assert len({j.spec_hash for j in jobs}) == 1 and uris == set()
    other, _ = plan([str(tmp_path)], [1], ["train.epochs=3"], smoke=False)
    assert other[0].spec_hash != jobs[0].spec_hash


def runs(uri):
    client = MlflowClient(uri)
    exps = [e.experiment_id for e in client.search_experiments()]
    return client, client.search_runs(exps)


def summary_rows(stdout):
    """{seed: (status, run id)} from the summary table."""
    rows = [line.split() for line in stdout.splitlines() if line.startswith("tiny ")]
    return {int(r[1]): (r[2], r[3]) for r in rows}


def fake_run(client, spec_hash, seed, status, smoke=False):
    exp = client.get_experiment_by_name("tiny") or client.get_experiment(
        client.create_experiment("tiny"))
    run = client.create_run(exp.experiment_id, tags={
        "zoo.spec_hash": spec_hash, "zoo.seed": str(seed), "zoo.smoke": str(smoke).lower()})
    client.set_terminated(run.info.run_id, status)
    return run.info.run_id


@pytest.mark.slow
def test_sweep_skips_finished_and_reruns_failed(write_spec, tiny_spec, tmp_path, monkeypatch,
                                                capsys):
    monkeypatch.chdir(tmp_path)
    tiny_spec["reproduces"] = REPRODUCES
    spec = write_spec(tiny_spec, "tiny.yaml")
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    [job], _ = plan([str(spec)], [1], [], smoke=False)
    client = MlflowClient(uri)
    done = fake_run(client, job.spec_hash, 1, "FINISHED")
    failed = fake_run(client, job.spec_hash, 2, "FAILED")
    fake_run(client, job.spec_hash, 3, "FINISHED", smoke=True)  # smoke runs are not results
    args = ["sweep", spec, "--seeds", "1-3", "--tracking-uri", uri]

    assert zoo(args + ["--workers", "2", "--threads", "1"], monkeypatch) == 0
    first = summary_rows(capsys.readouterr().out)
    assert first[1] == ("skipped", done)
    assert first[2][0] == first[3][0] == "finished" and failed not in (first[2][1], first[3][1])
    new = {r.info.run_id: r for r in runs(uri)[1]}
    for seed in (2, 3):
        run = new[first[seed][1]]
        assert run.info.status == "FINISHED" and run.data.tags["zoo.seed"] == str(seed)
        assert run.data.tags["zoo.threads"] == "1"  # --threads
        assert run.data.tags["zoo.spec_hash"] == job.spec_hash
        assert run.data.tags["zoo.reproduces"] == REPRODUCES
        assert "test/accuracy" in run.data.metrics

    assert zoo(args, monkeypatch) == 0
    out = capsys.readouterr().out
    assert summary_rows(out) == {1: ("skipped", done), 2: ("skipped", first[2][1]),
                                 3: ("skipped", first[3][1])}
    assert "3 runs: 3 skipped" in out
    assert len(new) == len(runs(uri)[1]) == 5


def test_sweep_threads_are_for_local_runs(write_spec, tiny_spec, monkeypatch, capsys):
    spec = write_spec(tiny_spec, "tiny.yaml")
    assert zoo(["sweep", spec, "--executor", "ray", "--threads", "2"], monkeypatch) == 2
    assert "--threads is for local runs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        zoo(["sweep", spec, "--threads", "0"], monkeypatch)
    assert exit_info.value.code == 2
    assert "--threads: not a thread count from 1 to 1024: '0'" in capsys.readouterr().err


def test_interrupted_runs_to_resume(write_spec, tiny_spec, tmp_path, monkeypatch):
    """A job goes on with its newest run when that run was interrupted after an epoch: KILLED
    (not pruned) or left RUNNING by a process that has ended, with a checkpoint."""
    import subprocess

    from zoo.sweep import SweepOptions, sweep
    from zoo.sweep.idempotence import resumable
    from zoo.sweep.job import Outcome
    from zoo.tracking import owner

    spec = write_spec(tiny_spec, "tiny.yaml")
    jobs, _ = plan([str(spec)], [1, 2, 3, 4, 5, 6], [], smoke=False)
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    client = MlflowClient(uri)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.pt").write_bytes(b"a checkpoint")
    ended = subprocess.Popen(["true"])
    ended.wait()

    def interrupted(seed, status="KILLED", checkpoint=True, **tags):
        run_id = fake_run(client, jobs[0].spec_hash, seed, status)
        for key, value in tags.items():
            client.set_tag(run_id, key.replace("_", "."), value)
        if checkpoint:
            client.log_artifacts(run_id, str(tmp_path / "checkpoints"), "checkpoints")
        return run_id

    first = interrupted(1)
    interrupted(2, checkpoint=False)
    interrupted(3)
    fake_run(client, jobs[0].spec_hash, 3, "FAILED")  # newer: seed 3 starts afresh
    interrupted(4, zoo_stopped="pruned at epoch 2")
    fifth = interrupted(5, "RUNNING", zoo_owner=owner.describe(ended.pid))
    interrupted(6, "RUNNING", zoo_owner=owner.describe())  # this process: still writing it
    wanted = {jobs[0]: first, jobs[4]: fifth}
    assert resumable(uri, jobs) == wanted

    seen = []

    def run_local(todo, uri, workers, threads, resumes):
        seen.append(resumes)
        return [Outcome(job, "finished") for job in todo]

    monkeypatch.setattr("zoo.sweep.driver.run_local", run_local)
    sweep([str(spec)], SweepOptions(seeds=[1, 2, 3, 4, 5, 6], tracking_uri=uri))
    sweep([str(spec)], SweepOptions(seeds=[1, 2, 3, 4, 5, 6], tracking_uri=uri, restart=True))
    assert seen == [wanted, {}]


def test_progress_lines_at_evaluated_epochs_at_most_every_so_often(monkeypatch):
    said, clock = [], [100.0]
    monkeypatch.setattr("zoo.sweep.job.time.monotonic", lambda: clock[0])
    watch = progress_lines(said.append, "auc", every_s=60.0)

    def epoch(n, evaluated=True):
        record = {"epoch": n, "train/loss": 0.5 / n, "time/epoch_seconds": 21.04}
        if evaluated:
            record.update({"val/loss": 0.3, "val/auc": 0.8123456, "val/accuracy": 0.9})
        watch(record)
        clock[0] += 25.0

    for n in range(1, 8):
        epoch(n, evaluated=n % 2 == 1)
    assert said == ["epoch 1, train/loss 0.5000, val/auc 0.8123 (21.0 s/epoch)",
                    "epoch 5, train/loss 0.1000, val/auc 0.8123 (21.0 s/epoch)"]
    progress_lines(said.append, "mse", every_s=0.0)({**{"epoch": 2, "train/loss": 1.0},
                                                     "val/loss": 2.0, "time/epoch_seconds": 3.0})
    assert said[-1] == "epoch 2, train/loss 1.0000 (3.0 s/epoch)"  # no val/mse recorded
    of_200 = progress_lines(said.append, "auc", epochs=200, every_s=0.0)
    for n, seconds in ((71, 83.2), (170, 83.2), (199, 30.0)):
        of_200({"epoch": n, "train/loss": 0.5, "val/loss": 0.3, "val/auc": 0.84,
                "time/epoch_seconds": seconds})
    assert said[-3:] == [
        "epoch 71/200, train/loss 0.5000, val/auc 0.8400 (83.2 s/epoch, ≤ 3.0 h left)",
        "epoch 170/200, train/loss 0.5000, val/auc 0.8400 (83.2 s/epoch, ≤ 42 min left)",
        "epoch 199/200, train/loss 0.5000, val/auc 0.8400 (30.0 s/epoch, ≤ 30 s left)"]
