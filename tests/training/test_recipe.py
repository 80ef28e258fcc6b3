"""Training recipe options: train-split evaluation, plateau per evaluation, the stop rule."""

from __future__ import annotations

import copy
import io

import pytest
import torch
import yaml

from zoo.build_context import DataShape
from zoo.errors import SpecError
from zoo.model import ZooModel
from zoo.series import PreparedSplit
from zoo.spec.schema import spec_model
from zoo.spec.sections import StoppingSpec
from zoo.spec.validate import load_spec
from zoo.training import loop
from zoo.training.evaluate import evaluate
from zoo.training.recipe import weight_penalty
from zoo.training.stopping import EarlyStopping, improved

from conftest import REPO, TINY_SPEC

SPEECH = REPO / "specs/irie2022/table1/speech/ncde.yaml"


def trainer_for(train: dict) -> loop.Trainer:
    """A Trainer of the tiny irregular-sines spec with ``train`` merged into its recipe."""
    data = copy.deepcopy(TINY_SPEC)
    data["train"].update(train)
    spec = spec_model().model_validate(data)
    bundle = spec.data.load()
    torch.manual_seed(0)
    model = ZooModel(spec, DataShape(bundle.input_channels, 0, bundle.train.values.shape[1],
                                     bundle.task))
    splits = loop.Splits(*(PreparedSplit(s, spec.model.control.prepare(s.times, s.values))
                           for s in (bundle.train, bundle.val, bundle.test)))
    return loop.Trainer(model, splits, torch.device("cpu"), torch.float32, progress=False)


def script_evaluations(monitor, trainer, train_metrics, val_metrics=None):
    """Evaluations of the training/validation split return the next scripted metrics."""
    scripted = {id(trainer.splits.train): iter(train_metrics),
                id(trainer.splits.val): iter(val_metrics or [])}

    def fake(model, split, *args):
        if split is trainer.splits.test:
            return {"loss": 0.0, "accuracy": 0.0}
        return dict(next(scripted[id(split)], {"loss": 1.0, "accuracy": 0.5}))

    monitor.setattr(loop, "evaluate", fake)


def stop_epoch(spec: StoppingSpec, records: list[tuple[int, dict]], state=None) -> int | None:
    stopping = EarlyStopping(spec, {} if state is None else state)
    for epoch, record in records:
        if stopping.update(record, epoch):
            return epoch
    return None


# -- the comparison ---------------------------------------------------------------------------

def test_relative_min_delta_follows_the_reference_code():
    # loss: progress only when loss·(1 + 1e-4) < best
    assert not improved(1.0 * (1 - 0.00005), 1.0, "min", 1e-4, "rel")  # 0.005 % better
    assert improved(1.0 * (1 - 0.0002), 1.0, "min", 1e-4, "rel")       # 0.02 % better
    assert improved(0.999900005, 1.0, "min", 1e-4, "rel")  # loss·1.0001 < best, not best·0.9999
    # accuracy: progress only when accuracy > best·(1 + 1e-3)
    assert improved(0.5 * 1.002, 0.5, "max", 1e-3, "rel")
    assert not improved(0.5 * 1.0005, 0.5, "max", 1e-3, "rel")
    # absolute deltas, and a first value always makes progress
    assert improved(0.52, 0.5, "max", 0.01) and not improved(0.505, 0.5, "max", 0.01)
    assert improved(0.48, 0.5, "min", 0.01) and not improved(0.495, 0.5, "min", 0.01)
    assert improved(3.0, None, "min", 1.0, "rel")


# -- the stop rule on hand-made sequences ------------------------------------------------------

def reference_sequence() -> list[tuple[int, dict]]:
    """Evaluations every 10 epochs: the loss improves by 0.02 % each time up to epoch 50, then
    stays 0.005 % below that best; the accuracy improves by 0.2 % up to epoch 80, then stays
    0.05 % above its best."""
    records, loss, acc = [], 1.0, 0.5
    for epoch in range(10, 400, 10):
        if epoch <= 50:
            loss *= 1 - 0.0002
            best_loss = loss
        if epoch <= 80:
            acc *= 1 + 0.002
            best_acc = acc
        records.append((epoch, {
            "train_eval/objective": loss if epoch <= 50 else best_loss * (1 - 0.00005),
            "train_eval/accuracy": acc if epoch <= 80 else best_acc * (1 + 0.0005)}))
    return records


def test_shipped_speech_recipe_stops_like_the_reference_code():
    spec, _ = load_spec(SPEECH)
    stopping = spec.train.stopping
    # either metric stale for more than 100 epochs stops: the loss, last better at epoch 50
    assert stop_epoch(stopping, reference_sequence()) == 160
    # stop_on: all waits for the accuracy too, last better at epoch 80
    assert stop_epoch(stopping.model_copy(update={"stop_on": "all"}), reference_sequence()) == 190


def test_stale_epochs_are_counted_from_the_start_and_checked_when_recorded():
    spec = StoppingSpec(monitor="val/accuracy", patience=25, patience_unit="epochs")
    flat = [(e, {"val/accuracy": 0.5}) for e in range(10, 100, 10)]
    assert stop_epoch(spec, flat) == 40          # last progress at epoch 10, 30 ≥ 25 at 40
    # a metric recorded at other epochs does not trigger the check
    assert stop_epoch(spec, [(e, {"train/loss": 1.0}) for e in range(1, 100)]) is None


def test_single_monitor_counts_evaluations_as_before():
    spec = StoppingSpec(monitor="val/accuracy", mode="max", patience=2, min_delta=0.01)
    values = [0.5, 0.505, 0.52, 0.52, 0.525, 0.6]
    records = [(i + 1, {"val/accuracy": v}) for i, v in enumerate(values)]
    assert stop_epoch(spec, records) == 5        # 0.52 resets; 0.52 and 0.525 are not > 0.53
    per_epoch = StoppingSpec(monitor="train/loss", mode="min", patience=3)
    records = [(e, {"train/loss": v}) for e, v in enumerate([3, 2, 2, 2.5, 1, 1, 1, 1], 1)]
    assert stop_epoch(per_epoch, records) == 8


def test_stop_state_resumes_from_a_copy():
    spec = load_spec(SPEECH)[0].train.stopping
    records = reference_sequence()
    state: dict = {}
    assert stop_epoch(spec, records[:8], state) is None
    resumed = torch.load(io.BytesIO(_saved(state)), weights_only=False)
    assert resumed == state and resumed["train_eval/objective"]["epoch"] == 50
    assert stop_epoch(spec, records[8:], resumed) == 160


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def resumed_after(train: dict, epoch: int, prepare=lambda trainer: None):
    """A new trainer restored from the snapshot a first one took after ``epoch`` before it was
    interrupted (``prepare`` runs on the first trainer before it trains)."""
    class Interrupt(Exception):
        pass

    first, snapshot = trainer_for(train), []

    def interrupt(record):
        if record["epoch"] == epoch:
            snapshot.append(_saved(first.snapshot()))
            raise Interrupt

    prepare(first)
    with pytest.raises(Interrupt):
        first.fit(interrupt)
    second = trainer_for(train)
    second.restore(torch.load(io.BytesIO(snapshot[0]), weights_only=False))
    return second


# -- the loop ----------------------------------------------------------------------------------

def test_train_split_is_evaluated_exactly_at_evaluation_epochs():
    trainer = trainer_for({"epochs": 5, "eval_every": 2, "evaluate_train": True,
                           "weight_penalty": 0.03})
    direct = {}

    def on_epoch(record):  # the same evaluate() on the training split, as it is now
        direct[record["epoch"]] = evaluate(trainer.model, trainer.splits.train, 16, "cpu",
                                           torch.float32)
        with torch.no_grad():
            direct[record["epoch"]]["penalty"] = float(weight_penalty(trainer.model,
                                                                      trainer.train_spec))

    trainer.fit(on_epoch)
    history = trainer.state.history
    evaluated = {"train_eval/loss", "train_eval/accuracy", "train_eval/objective",
                 "val/loss", "val/accuracy", "val/objective"}
    assert [sorted(evaluated & r.keys()) for r in history] == [
        [], sorted(evaluated), [], sorted(evaluated), sorted(evaluated)]
    assert all("train/loss" in r for r in history)
    for record in history[1::2] + history[-1:]:
        again = direct[record["epoch"]]
        assert record["train_eval/loss"] == pytest.approx(again["loss"], rel=1e-6)
        assert record["train_eval/accuracy"] == again["accuracy"]
        assert record["train_eval/objective"] == pytest.approx(again["loss"] + again["penalty"],
                                                               rel=1e-6)


def test_plateau_steps_once_per_evaluation(monkeypatch):
    trainer = trainer_for({"epochs": 12, "eval_every": 2, "evaluate_train": True,
                           "schedule": {"kind": "plateau", "monitor": "train_eval/loss",
                                        "patience": 2, "factor": 0.1}})
    script_evaluations(monkeypatch, trainer, [{"loss": 1.0, "accuracy": 0.5}] * 6)
    trainer.fit(lambda record: None)
    lrs = [r["lr"] for r in trainer.state.history]
    # evaluation 1 (epoch 2) sets the best; evaluations 2, 3, 4 do not improve: the 3rd
    # (= patience + 1) non-improving one, at epoch 8, cuts the lr used from epoch 9 on
    assert lrs == pytest.approx([0.01] * 8 + [0.001] * 4)


def test_loop_stops_on_the_stale_monitor(monkeypatch):
    stopping = {"monitors": [{"metric": "train_eval/loss", "mode": "min", "min_delta": 1e-4},
                             {"metric": "train_eval/accuracy", "mode": "max",
                              "min_delta": 1e-3}],
                "delta_mode": "rel", "patience": 5, "patience_unit": "epochs"}
    # the loss improves at epoch 4 only; the accuracy never after epoch 2
    metrics = [{"loss": 1.0, "accuracy": 0.5}] + [{"loss": 0.9, "accuracy": 0.5}] * 20
    for stop_on, epochs in (("any", 8), ("all", 10)):
        trainer = trainer_for({"epochs": 30, "eval_every": 2, "evaluate_train": True,
                               "stopping": dict(stopping, stop_on=stop_on)})
        script_evaluations(monkeypatch, trainer, metrics)
        trainer.fit(lambda record: None)
        assert trainer.state.epoch == epochs, stop_on
        assert trainer.state.stopping == {
            "train_eval/loss": {"best": 0.9, "epoch": 4, "stale": epochs // 2 - 2},
            "train_eval/accuracy": {"best": 0.5, "epoch": 2, "stale": epochs // 2 - 1}}


@pytest.mark.slow
def test_resumed_loop_keeps_the_stop_and_schedule_state(monkeypatch):
    train = {"epochs": 40, "eval_every": 2, "evaluate_train": True,
             "schedule": {"kind": "plateau", "monitor": "train_eval/loss", "patience": 1},
             "stopping": {"monitor": "train_eval/loss", "mode": "min", "patience": 9,
                          "patience_unit": "epochs"}}
    metrics = [{"loss": v, "accuracy": 0.5} for v in (1.0, 0.8, 0.9, 0.7, 0.9, 0.9, 0.9, 0.9)]
    whole = trainer_for(train)
    script_evaluations(monkeypatch, whole, metrics)
    whole.fit(lambda record: None)
    assert whole.state.epoch == 18        # last progress at epoch 8, 10 ≥ 9 stale epochs at 18

    second = resumed_after(train, 11, lambda first: script_evaluations(monkeypatch, first,
                                                                       metrics))
    assert second.state.stopping == {"train_eval/loss": {"best": 0.7, "epoch": 8, "stale": 1}}
    script_evaluations(monkeypatch, second, metrics[5:])
    second.fit(lambda record: None)
    assert second.state.epoch == 18
    assert second.state.stopping == whole.state.stopping
    assert [r["lr"] for r in second.state.history] == [r["lr"] for r in whole.state.history]


@pytest.mark.slow
def test_run_logs_train_eval_metrics_to_mlflow(write_spec, tiny_spec, tmp_path, monkeypatch):
    from mlflow import MlflowClient

    from zoo.cli.main import main

    monkeypatch.chdir(tmp_path)
    tiny_spec["train"].update(epochs=3, eval_every=2, evaluate_train=True)
    assert main(["run", str(write_spec(tiny_spec)), "--no-progress"]) == 0
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns.db'}")
    [run] = client.search_runs([e.experiment_id for e in client.search_experiments()])
    for key in ("train_eval/loss", "train_eval/accuracy"):
        assert [m.step for m in client.get_metric_history(run.info.run_id, key)] == [2, 3]
    assert [m.step for m in client.get_metric_history(run.info.run_id, "train/loss")] == [1, 2, 3]


# -- spec validation ---------------------------------------------------------------------------

def problems(write_spec, train: dict) -> list[str]:
    data = copy.deepcopy(TINY_SPEC)
    data["train"].update(train)
    path = write_spec(yaml.safe_dump(data, sort_keys=False, default_flow_style=None))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [p.split(": ", 1)[1] for p in info.value.problems]


@pytest.mark.parametrize("stopping, message", [
    ({"monitors": [], "patience": 3},
     "train.stopping.monitors: List should have at least 1 item after validation, not 0"),
    ({"monitor": "val/loss", "patience": 0},
     "train.stopping.patience: Input should be greater than or equal to 1"),
    ({"monitors": [{"metric": "val/loss", "min_delta": -0.1}], "patience": 2},
     "train.stopping.monitors.0.min_delta: Input should be greater than or equal to 0"),
    ({"monitor": "val/loss", "min_delta": -0.1, "patience": 2},
     "train.stopping.min_delta: Input should be greater than or equal to 0"),
    ({"monitor": "val/loss", "monitors": [{"metric": "val/accuracy"}], "patience": 2},
     "train.stopping: give monitor or monitors, not both (set the inherited one to null)"),
    ({"monitors": [{"metric": "val/loss"}, {"metric": "val/loss"}], "patience": 2},
     "train.stopping: monitors lists a metric twice: val/loss, val/loss"),
    ({"patience": 2},
     "train.stopping: stopping needs both a monitor (or monitors) and patience (or neither)"),
    ({"monitors": [{"metric": "train_eval/loss"}], "patience": 2},
     "train: stopping watches 'train_eval/loss', which is recorded only with "
     "evaluate_train: true"),
    ({"monitor": "val/objective", "patience": 2},
     "train: stopping watches 'val/objective', which is recorded only with weight_penalty > 0"),
    ({"monitor": "val/loss", "patience": 2, "patience_unit": "epoch"},
     "train.stopping.patience_unit: 'epoch' is not one of evaluations, epochs "
     "(did you mean 'epochs'?)"),
])
def test_bad_stopping_is_reported(write_spec, stopping, message):
    assert problems(write_spec, {"stopping": stopping}) == [message]


def test_stopping_errors_point_at_the_value(write_spec):
    path = write_spec(yaml.safe_dump({k: v for k, v in TINY_SPEC.items() if k != "train"},
                                     sort_keys=False) + """\
train:
  stopping:
    monitors:
      - {metric: val/loss, mode: min}
      - {metric: val/accuracy, min_delta: -1}
    patience: 2
""")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    [line] = [n for n, text in enumerate(path.read_text().splitlines(), 1) if "-1}" in text]
    assert info.value.problems == [
        f"{path}:{line}:43: train.stopping.monitors.1.min_delta: Input should be greater than "
        f"or equal to 0"]


def test_bad_monitor_key_lists_the_valid_ones(write_spec):
    [missing, unknown] = problems(write_spec, {"stopping": {"monitors": [{"metrc": "val/loss"}],
                                                            "patience": 2}})
    assert missing == "train.stopping.monitors.0.metric: required key is missing"
    assert unknown == ("train.stopping.monitors.0.metrc: unknown key 'metrc' (did you mean "
                       "'metric'?); valid keys: metric, mode, min_delta, delta_mode")


def test_plateau_on_train_eval_needs_evaluate_train(write_spec):
    assert problems(write_spec, {"schedule": {"kind": "plateau",
                                              "monitor": "train_eval/loss"}}) == [
        "train: schedule watches 'train_eval/loss', which is recorded only with "
        "evaluate_train: true"]


def test_monitor_defaults_fill_unset_monitor_options():
    spec = StoppingSpec(monitors=[{"metric": "a/x"}, {"metric": "a/y", "mode": "min",
                                                      "delta_mode": "abs"}],
                        mode="max", min_delta=0.5, delta_mode="rel", patience=1)
    [x, y] = spec.criteria()
    assert (x.mode, x.min_delta, x.delta_mode) == ("max", 0.5, "rel")
    assert (y.mode, y.min_delta, y.delta_mode) == ("min", 0.5, "abs")
    assert StoppingSpec().criteria() == []


# -- when evaluations happen (eval_first) and which batches train (drop_last) -------------------

def evaluated_epochs(history: list[dict]) -> list[int]:
    return [r["epoch"] for r in history if any(k.startswith("val/") for k in r)]


@pytest.mark.parametrize("eval_first, epochs", [(1, [1, 11, 21, 25]), (None, [10, 20, 25])])
def test_evaluations_start_at_eval_first(monkeypatch, eval_first, epochs):
    trainer = trainer_for({"epochs": 25, "eval_every": 10, "eval_first": eval_first,
                           "evaluate_train": True,
                           "schedule": {"kind": "plateau", "monitor": "train_eval/loss",
                                        "patience": 0, "factor": 0.1}})
    script_evaluations(monkeypatch, trainer, [{"loss": 1.0, "accuracy": 0.5}] * 4)
    trainer.fit(lambda record: None)
    history = trainer.state.history
    assert [r["epoch"] for r in history] == list(range(1, 26))
    assert evaluated_epochs(history) == epochs
    assert [r["epoch"] for r in history if "train_eval/loss" in r] == epochs
    # the plateau (patience 0) steps at the evaluations only: each one after the first makes
    # no progress and cuts the lr used from the next epoch on
    cuts = [sum(e < epoch for e in epochs[1:]) for epoch in range(1, 26)]
    assert [r["lr"] for r in history] == pytest.approx([0.01 * 0.1 ** c for c in cuts])
    assert trainer.state.best_epoch == epochs[0]


def test_eval_first_after_the_last_epoch_evaluates_at_the_last():
    assert [e for e in range(1, 6) if load_train({"epochs": 5, "eval_first": 8}).evaluates(e)] \
        == [5]
    assert [e for e in range(1, 8) if load_train({"epochs": 7, "eval_every": 3,
                                                  "eval_first": 2}).evaluates(e)] == [2, 5, 7]


def test_stop_in_epochs_counts_from_the_shifted_evaluations(monkeypatch):
    # evaluations at 1, 4, 7, 10, ...: the loss improves at epoch 4 only; 6 ≥ 5 stale epochs
    # are first seen at epoch 10 (the authors' check: epoch > best epoch + plateau_terminate)
    trainer = trainer_for({"epochs": 30, "eval_every": 3, "eval_first": 1,
                           "evaluate_train": True,
                           "stopping": {"monitor": "train_eval/loss", "mode": "min",
                                        "patience": 5, "patience_unit": "epochs"}})
    metrics = [{"loss": 1.0, "accuracy": 0.5}] + [{"loss": 0.9, "accuracy": 0.5}] * 10
    script_evaluations(monkeypatch, trainer, metrics)
    trainer.fit(lambda record: None)
    assert trainer.state.epoch == 10
    assert evaluated_epochs(trainer.state.history) == [1, 4, 7, 10]
    assert trainer.state.stopping == {"train_eval/loss": {"best": 0.9, "epoch": 4, "stale": 2}}


def test_eval_first_must_be_positive(write_spec):
    assert problems(write_spec, {"eval_first": 0}) == [
        "train.eval_first: Input should be greater than 0"]


def load_train(train: dict):
    data = copy.deepcopy(TINY_SPEC)
    data["train"].update(train)
    return spec_model().model_validate(data).train


class CountingBar:
    """Stands in for tqdm: records the total and the batches reported."""

    made: list[CountingBar] = []

    def __init__(self, total, initial=0, **kwargs):
        self.total, self.n = total, initial
        CountingBar.made.append(self)

    def update(self, k=1):
        self.n += k

    def set_description(self, *args, **kwargs):
        pass

    set_postfix = set_description

    def close(self):
        pass


def watch_training(monkeypatch, trainer) -> tuple[list[int], list[int]]:
    """Sizes of the training batches drawn, and one entry per optimiser step."""
    sizes, steps = [], []
    batches, step = trainer.splits.train.batches, trainer.optimizer.step

    def drawn(*args, **kwargs):
        for batch in batches(*args, **kwargs):
            sizes.append(len(batch.y))
            yield batch

    def counted(*args, **kwargs):
        steps.append(1)
        return step(*args, **kwargs)

    monkeypatch.setattr(trainer.splits.train, "batches", drawn)
    monkeypatch.setattr(trainer.optimizer, "step", counted)
    return sizes, steps


def test_drop_last_trains_on_full_batches_only(monkeypatch):
    monkeypatch.setattr(loop, "tqdm", CountingBar)
    records = {}
    for drop_last in (False, True):
        CountingBar.made.clear()
        # 48 training series in batches of 20: 20, 20, 8 (or 20, 20 with drop_last)
        trainer = trainer_for({"epochs": 2, "batch_size": 20, "drop_last": drop_last})
        sizes, steps = watch_training(monkeypatch, trainer)
        trainer.fit(lambda record: None)
        full = [20, 20] if drop_last else [20, 20, 8]
        assert sizes == full * 2 and len(steps) == len(full) * 2
        [bar] = CountingBar.made
        assert bar.total == bar.n == len(full) * 2
        records[drop_last] = trainer.state.history
    # NFE per batch: fixed-step rk4, so every batch costs the same; the count divides by the
    # batches trained, not by 3
    nfe = [[r["solver/nfe"] for r in records[d]] for d in (False, True)]
    assert nfe[0] == nfe[1] and nfe[1][0] > 0


def test_drop_last_needs_one_full_batch(write_spec, tiny_spec, tmp_path, monkeypatch, capsys):
    from zoo.cli.main import main
    from zoo.errors import InputError

    message = ("train.drop_last: the training split has 48 series, fewer than one batch "
               "(batch_size 64), so every batch would be dropped; lower batch_size or set "
               "drop_last: false")
    with pytest.raises(InputError) as info:
        trainer_for({"batch_size": 64, "drop_last": True})
    assert str(info.value) == message
    trainer_for({"batch_size": 64})          # without drop_last one smaller batch trains
    monkeypatch.chdir(tmp_path)
    tiny_spec["train"].update(batch_size=64, drop_last=True)
    path = write_spec(tiny_spec)
    assert main(["run", str(path), "--no-progress"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {message}"
    # --smoke shrinks every split to 16 series and trains on them all
    tiny_spec["train"].update(batch_size=32)
    assert main(["run", str(write_spec(tiny_spec)), "--smoke", "--no-progress"]) == 0


@pytest.mark.slow
def test_resume_with_eval_first_and_drop_last_continues_the_same_history():
    train = {"epochs": 25, "eval_every": 10, "eval_first": 1, "batch_size": 20,
             "drop_last": True, "evaluate_train": True,
             "schedule": {"kind": "plateau", "monitor": "train_eval/loss", "patience": 0}}
    whole = trainer_for(train)
    whole_test = whole.fit(lambda record: None)

    second = resumed_after(train, 13)
    assert evaluated_epochs(second.state.history) == [1, 11]
    resumed_test = second.fit(lambda record: None)
    assert evaluated_epochs(second.state.history) == [1, 11, 21, 25]
    assert second.state.best_epoch == whole.state.best_epoch
    for a, b in zip(second.state.history, whole.state.history, strict=True):
        assert a.keys() == b.keys()
        assert {k: v for k, v in a.items() if not k.startswith("time/")} == pytest.approx(
            {k: v for k, v in b.items() if not k.startswith("time/")}, rel=1e-6)
    assert resumed_test == pytest.approx(whole_test, rel=1e-6)


@pytest.mark.parametrize("name, scope", [("cde-hebb", "without_static"),
                                         ("ncde", "field"), ("gru-ode", "field")])
def test_sepsis_penalty_scope_is_the_authors(name, scope):
    """The FWP Sepsis code penalises the model its InitialValueNetwork wraps (the static
    network is free); Kidger's baselines penalise the vector field only."""
    from zoo.series import TaskInfo
    from zoo.training.recipe import penalised_parameters

    spec, _ = load_spec(REPO / f"specs/irie2022/table1/sepsis-oi/{name}.yaml")
    assert spec.train.penalty_scope == scope
    torch.manual_seed(0)
    model = ZooModel(spec, DataShape(69, 7, 72, TaskInfo("binary", 1)))
    static = [p for m in model.modules() if type(m).__name__ == "StaticNetwork"
              for p in m.parameters()]
    assert static
    covered = {id(p) for p in penalised_parameters(model, spec.train.penalty_scope)}
    assert not covered & {id(p) for p in static}
    if scope == "without_static":
        free = {id(p) for p in model.parameters()} - covered
        assert free == {id(p) for p in static}
        whole = float(weight_penalty(model, spec.train.model_copy(
            update={"penalty_scope": "model"})))
        assert float(weight_penalty(model, spec.train)) == pytest.approx(
            whole - 0.03 * sum(float(p.norm()) for p in static), rel=1e-6)
