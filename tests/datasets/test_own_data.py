"""Own data from YAML: ``kind: table`` (CSV/Parquet) and ``kind: arrays`` (.npz/.npy).

Every test writes its small files into ``tmp_path``; nothing is downloaded.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_predict import vitals_csv

from zoo.cli.main import main
from zoo.datasets.own.arrays import ArraysConfig
from zoo.datasets.own.table import TableConfig
from zoo.errors import InputError, SpecError
from zoo.readouts.classify import ClassifyConfig
from zoo.readouts.regress import RegressConfig
from zoo.series import IGNORE_LABEL
from zoo.spec.validate import load_spec

NAN = float("nan")

# three series on different times; 'c' misses hr at t=2; split fixed by a column
IRREGULAR = """\
id,t,hr,temp,label,fold
a,0,1,10,x,train
a,1.5,2,11,x,train
a,3,3,,x,train
b,0.5,5,20,y,train
b,1.5,7,22,y,
c,0,8,30,x,val
c,2,,31,x,val
d,1,9,40,y,test
"""


def csv(tmp_path, text: str, name: str = "data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def table(path, **options) -> TableConfig:
    options.setdefault("id", "id")
    return TableConfig(path=path, **options)


def error(config) -> str:
    with pytest.raises(InputError) as info:
        config.load()
    return str(info.value)


def series_csv(n_per_class: int = 20, classes=("x", "y")) -> str:
    rows = ["id,t,v,label"]
    for i in range(n_per_class * len(classes)):
        label = classes[i % len(classes)]
        rows += [f"s{i},{t},{i + t},{label}" for t in (0, 1, 2)]
    return "\n".join(rows) + "\n"


# ----- table: grid, channels, labels


def test_table_union_grid_places_nan_where_unobserved(tmp_path):
    config = table(csv(tmp_path, IRREGULAR), time="t", channels=["hr", "temp"], label="label",
                   split={"column": "fold"}, normalise=False)
    assert config.task().class_names == ("x", "y")
    bundle = config.load()
    train, val, test = bundle.train, bundle.val, bundle.test
    assert train.times.tolist() == [0, 0.5, 1, 1.5, 2, 3]  # union of all times
    assert (len(train), len(val), len(test)) == (2, 1, 1)
    assert train.values.shape == (2, 6, 3)  # time channel + hr + temp
    a, b = train.values
    nan = torch.isnan
    assert a[:, 0].tolist()[0] == 0 and nan(a[1]).all() and nan(a[2]).all()
    assert a[3].tolist() == [1.5, 2, 11] and a[5, :2].tolist() == [3, 3] and nan(a[5, 2])
    assert nan(b[0]).all() and b[1].tolist() == [0.5, 5, 20] and b[3].tolist() == [1.5, 7, 22]
    assert train.final_index.tolist() == [5, 3]
    c = val.values[0]
    assert c[4, 0] == 2 and nan(c[4, 1]) and c[4, 2] == 31  # hr missing at t=2
    assert train.y.tolist() == [0, 1] and val.y.tolist() == [0] and test.y.tolist() == [1]
    assert bundle.info["series"] == {"train": ["a", "b"], "val": ["c"], "test": ["d"]}
    assert bundle.info["channels"] == ["time", "hr", "temp"]


def test_table_without_time_uses_row_order_and_default_channels(tmp_path):
    text = ("id,note,v,w,label\na,hi,1,,x\na,yo,2,5,x\nb,hm,3,6,y\nb,ok,4,7,y\nb,ok,5,8,y\n"
            "c,ok,9,9,x\n")
    config = table(csv(tmp_path, text), label="label", time_channel=False, normalise=False,
                   split={"ratios": [0.34, 0.33, 0.33]})
    bundle = config.load()
    everything = torch.cat([bundle.train.values, bundle.val.values, bundle.test.values])
    assert bundle.info["channels"] == ["v", "w"]  # 'note' is text: not a channel
    assert bundle.train.times.tolist() == [0, 1, 2]
    assert everything.shape == (3, 3, 2)
    assert sorted(everything[:, 0, 0].tolist()) == [1, 3, 9]


def test_integer_labels_and_classes_found_in_the_file(tmp_path):
    text = "id,v,label\na,1,10\na,2,10.0\nb,3,2\nc,4,1\nd,5,2\ne,6,1\nf,7,10\n"
    config = table(csv(tmp_path, text), label="label")
    assert config.task().class_names == ("1", "2", "10")  # numerically sorted, 10.0 is 10
    given = table(csv(tmp_path, text), label="label", classes=[10, 2, 1])
    assert given.task().class_names == ("10", "2", "1")
    bundle = given.load()
    assert sorted(torch.cat([bundle.train.y, bundle.val.y, bundle.test.y]).tolist()) == \
        [0, 0, 1, 1, 2, 2]


def test_dates_become_seconds_since_the_earliest(tmp_path):
    text = ("id,when,v,label\na,2024-01-01T00:00:00,1,x\na,2024-01-01T00:01:00,2,x\n"
            "b,2024-01-01T00:00:30,3,y\nc,2024-01-01T00:00:00,4,x\nd,2024-01-01T00:02:00,5,y\n")
    config = table(csv(tmp_path, text), time="when", label="label", split={
        "ratios": [0.5, 0.25, 0.25]})
    assert config.load().train.times.tolist() == [0, 30, 60, 120]


def test_parquet_reads_like_csv(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.read_csv(csv(tmp_path, IRREGULAR))
    frame.to_parquet(tmp_path / "data.parquet")
    options = dict(time="t", channels=["hr", "temp"], label="label", split={"column": "fold"})
    from_csv = table(str(tmp_path / "data.csv"), **options).load()
    from_parquet = table(str(tmp_path / "data.parquet"), **options).load()
    assert torch.equal(from_csv.train.values.nan_to_num(-1),
                       from_parquet.train.values.nan_to_num(-1))
    assert from_csv.train.y.tolist() == from_parquet.train.y.tolist()


# ----- tasks


def test_per_step_classification_ignores_steps_without_label(tmp_path):
    config = table(csv(tmp_path, IRREGULAR.replace("b,1.5,7,22,y,", "b,1.5,7,22,,")),
                   time="t", label="label", per_step=True, channels=["hr"],
                   split={"column": "fold"})
    assert config.task().per_step
    y = config.load().train.y
    assert y.shape == (2, 6)
    assert y[0].tolist() == [0, IGNORE_LABEL, IGNORE_LABEL, 0, IGNORE_LABEL, 0]
    assert y[1].tolist() == [IGNORE_LABEL, 1] + [IGNORE_LABEL] * 4  # empty label at t=1.5


def test_regression_per_series_and_per_step(tmp_path):
    text = "id,t,v,y1,y2\na,0,1,5,6\na,1,2,5,6\nb,0,3,7,8\nc,0,4,1,2\nd,1,5,3,4\n"
    options = dict(time="t", channels=["v"], task="regress", label=["y1", "y2"],
                   split={"ratios": [0.5, 0.25, 0.25]})
    config = table(csv(tmp_path, text), **options)
    assert config.task().n_outputs == 2 and config.task().kind == "regression"
    bundle = config.load()
    ys = {tuple(y) for s in (bundle.train, bundle.val, bundle.test) for y in s.y.tolist()}
    assert ys == {(5, 6), (7, 8), (1, 2), (3, 4)}
    per_step = table(csv(tmp_path, text.replace("b,0,3,7,8", "b,0,3,,")), per_step=True,
                     **options).load()
    everything = torch.cat([per_step.train.y, per_step.val.y, per_step.test.y])
    assert everything.shape == (4, 2, 2)
    assert torch.isnan(everything).sum() == 4 * 2 * 2 - 2 * 5 + 2  # rows × targets, b's empty


def test_forecast_targets_are_the_last_observations(tmp_path):
    rows = ["id,t,a,b"] + [f"s{i},{t},{10 * i + t},{-t}" for i in range(4) for t in range(5)]
    config = table(csv(tmp_path, "\n".join(rows) + "\n"), time="t", task="forecast",
                   forecast={"horizon": 2, "channels": ["a"]},
                   split={"ratios": [0.5, 0.25, 0.25], "seed": 1})
    assert config.task().n_outputs == 2 and not config.task().per_step
    bundle = config.load()
    stats = bundle.info["normalisation"]
    assert stats["channels"] == ["time", "a", "b"]
    train = bundle.train
    assert train.values.shape == (2, 3, 3)  # the last 2 of 5 steps are the target
    assert train.final_index.tolist() == [2, 2]
    ids = [int(s[1:]) for s in bundle.info["series"]["train"]]
    raw = torch.tensor([[10 * i + 3, 10 * i + 4] for i in ids], dtype=torch.float64)
    expected = (raw - stats["mean"][1]) / stats["std"][1]
    assert torch.allclose(train.y.double(), expected, atol=1e-5)
    history = torch.tensor([10 * i + t for i in ids for t in range(3)], dtype=torch.float64)
    assert stats["mean"][1] == pytest.approx(history.mean().item())  # targets excluded


# ----- split and normalisation


def test_ratio_split_is_stratified_and_seeded(tmp_path):
    path = csv(tmp_path, series_csv(20))
    bundle = table(path, time="t", label="label").load()
    sizes = [len(s) for s in (bundle.train, bundle.val, bundle.test)]
    assert sizes == [28, 6, 6]
    for split, n in zip((bundle.train, bundle.val, bundle.test), (14, 3, 3)):
        assert torch.bincount(split.y, minlength=2).tolist() == [n, n]
    again = table(path, time="t", label="label").load()
    other = table(path, time="t", label="label", split={"seed": 5}).load()
    assert again.info["series"] == bundle.info["series"] != other.info["series"]


def test_normalisation_statistics_come_from_training_series_only(tmp_path):
    text = ("id,t,v,y,fold\na,0,1,1,train\na,1,3,2,train\nb,0,5,3,train\nb,2,,4,train\n"
            "c,0,100,5,val\nd,1,-100,6,test\n")
    bundle = table(csv(tmp_path, text), time="t", task="regress", label="y",
                   channels=["v"], split={"column": "fold"}, per_step=True).load()
    stats = bundle.info["normalisation"]
    v = np.array([1, 3, 5])  # the training values; NaN ignored
    t = np.array([0, 1, 0, 2])  # training rows' times (the row with a missing v counts)
    assert stats["channels"] == ["time", "v"]
    assert stats["mean"] == pytest.approx([t.mean(), v.mean()])
    assert stats["std"] == pytest.approx([t.std(), v.std()])
    assert bundle.val.values[0, 0, 1].item() == pytest.approx((100 - v.mean()) / v.std(),
                                                                rel=1e-5)
    assert bundle.train.y[0, 0, 0] == 1  # targets are not normalised


# ----- arrays


def write_npz(tmp_path, name="data.npz", **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return str(path)


def test_npz_with_per_series_times_and_lengths(tmp_path):
    values = np.arange(2 * 3 * 1, dtype=float).reshape(2, 3, 1)
    values[0, 2] = 99  # past series 0's length: ignored
    times = np.array([[0.0, 2.0, 5.0], [1.0, 2.0, 3.0]])
    path = write_npz(tmp_path, values=values, times=times, lengths=np.array([2, 3]),
                     labels=np.array(["dog", "cat"]), split=np.array(["train", "val"]))
    config = ArraysConfig(path=path, split={"key": "split"}, normalise=False)
    assert config.task().class_names == ("cat", "dog")
    with pytest.raises(InputError, match="the test split is empty"):
        config.load()
    np.savez(path, values=np.concatenate([values, values[:1]]), labels=["dog", "cat", "dog"],
             times=np.concatenate([times, times[:1]]), lengths=[2, 3, 3],
             split=["train", "val", "test"])
    bundle = ArraysConfig(path=path, split={"key": "split"}, normalise=False).load()
    assert bundle.train.times.tolist() == [0, 1, 2, 3, 5]
    assert bundle.train.values[0, :, 1].nan_to_num(-1).tolist() == [0, -1, 1, -1, -1]
    assert bundle.val.values[0, :, 1].nan_to_num(-1).tolist() == [-1, 3, 4, 5, -1]
    assert bundle.test.values[0, :, 1].nan_to_num(-1).tolist() == [0, -1, 1, -1, 99]
    assert bundle.train.y.tolist() == [1] and bundle.val.y.tolist() == [0]


def test_npy_folder_and_list_without_times(tmp_path):
    values = np.random.default_rng(0).normal(size=(8, 4, 2))
    values[:4, 3] = NAN  # half the series end after 3 steps
    folder = tmp_path / "arrays"
    folder.mkdir()
    np.save(folder / "values.npy", values)
    np.save(folder / "labels.npy", np.arange(8 * 3, dtype=float).reshape(8, 3))
    config = ArraysConfig(path=str(folder), task="regress", split={"ratios": [0.5, 0.25, 0.25]},
                          channel_names=["p", "q"])
    assert config.task().n_outputs == 3
    bundle = config.load()
    assert bundle.train.times.tolist() == [0, 1, 2, 3] and bundle.train.y.shape == (4, 3)
    assert bundle.info["channels"] == ["time", "p", "q"]
    final = torch.cat([bundle.train.final_index, bundle.val.final_index, bundle.test.final_index])
    assert sorted(final.tolist()) == [2] * 4 + [3] * 4
    files = [str(folder / "values.npy"), str(folder / "labels.npy")]
    again = ArraysConfig(path=files, task="regress", split={"ratios": [0.5, 0.25, 0.25]},
                         channel_names=["p", "q"]).load()
    assert torch.equal(again.train.y, bundle.train.y)


def test_arrays_per_step_classes_and_forecast_by_index(tmp_path):
    values = np.arange(4 * 5 * 2, dtype=float).reshape(4, 5, 2)
    labels = np.array([[0, 1, 1, 2, -1]] * 4)  # -1 at the padded last step of each series
    path = write_npz(tmp_path, values=values, labels=labels, lengths=[4, 4, 4, 4])
    per_step = ArraysConfig(path=path, per_step=True, split={"ratios": [0.5, 0.25, 0.25]})
    assert per_step.task().class_names == ("0", "1", "2")  # padding is not a class
    assert per_step.load().train.y[0].tolist() == [0, 1, 1, 2]
    forecast = ArraysConfig(path=path, task="forecast", forecast={"horizon": 1, "channels": [1]},
                            split={"ratios": [0.5, 0.25, 0.25]}, normalise=False)
    bundle = forecast.load()
    first = int(bundle.info["series"]["train"][0])
    assert bundle.train.y[0].tolist() == [values[first, 3, 1]]


# ----- errors in the data file


def test_missing_file(tmp_path):
    message = error(table(str(tmp_path / "nope.csv"), label="label"))
    assert message.startswith(f"{tmp_path / 'nope.csv'}: data file not found")


@pytest.mark.parametrize("options, expected", [
    (dict(time="tt"), "no column 'tt' (did you mean 't'?); columns: id, t, hr, temp, label, fold"),
    (dict(time="t", channels=["hr", "tmp"]), "no column 'tmp' (did you mean 'temp'?)"),
])
def test_unknown_column(tmp_path, options, expected):
    path = csv(tmp_path, IRREGULAR)
    message = error(table(path, label="label", classes=["x", "y"], **options))
    assert message == f"{path}: {expected}" or message.startswith(f"{path}: {expected}")


def test_unknown_label_column_when_reading_classes(tmp_path):
    path = csv(tmp_path, IRREGULAR)
    with pytest.raises(InputError, match=r"no column 'lable' \(did you mean 'label'\?\)"):
        table(path, label="lable").task()


@pytest.mark.parametrize("edit, expected", [
    (("b,1.5,7,22,y,", "b,0.5,7,22,y,"),
     "series 'b': time 0.5 appears twice (line 5, line 6); the times of a series must increase"),
    (("a,3,3,,x,train", "a,1,3,,x,train"),
     "series 'a': time 1 comes after 1.5 (line 3, line 4)"),
    (("c,2,,31,x,val", "c,2,abc,31,x,val"),
     "column 'hr' holds 'abc' at line 8, not a number"),
    (("d,1,9,40,y,test", "d,1,9,40,z,test"),
     "label 'z' at line 9 is not one of the classes x, y (data.classes)"),
    (("d,1,9,40,y,test", "d,1,9,40,y,tset"),
     "split column 'fold' holds 'tset' at line 9; use train, val or test (did you mean 'test'?)"),
    (("d,1,9,40,y,test", "d,1,9,40,y,val"), "the test split is empty: no series has split 'test'"),
    (("b,1.5,7,22,y,", "b,1.5,7,22,x,"),
     "the label column 'label' changes within series 'b' (line 5, line 6)"),
    (("c,2,,31,x,val", "c,,5,31,x,val"), "the time is missing at line 8"),
])
def test_data_errors_name_the_file_and_the_cell(tmp_path, edit, expected):
    path = csv(tmp_path, IRREGULAR.replace(*edit))
    message = error(table(path, time="t", channels=["hr", "temp"], label="label",
                          classes=["x", "y"], split={"column": "fold"}))
    assert message.startswith(f"{path}: {expected}"), message


def test_all_missing_channel_and_stray_text_in_default_channels(tmp_path):
    path = csv(tmp_path, IRREGULAR.replace(",10,", ",,").replace(",11,", ",,").replace(
        ",20,", ",,").replace(",22,", ",,").replace(",30,", ",,").replace(",31,", ",,")
        .replace(",40,", ",,"))
    message = error(table(path, time="t", channels=["hr", "temp"], label="label"))
    assert message == f"{path}: channel 'temp' has no value (every cell is empty or NaN)"
    path = csv(tmp_path, IRREGULAR.replace("a,1.5,2,11", "a,1.5,2,1l"))
    message = error(table(path, time="t", label="label"))
    assert message.startswith(f"{path}: column 'temp' holds '1l' at line 3, not a number")
    assert "list data.channels to leave the column out" in message


def test_empty_ratio_split_and_short_forecast_series(tmp_path):
    path = csv(tmp_path, "id,v,label\na,1,x\nb,2,x\n")
    assert "the test split is empty: 2 series split by data.split.ratios" in error(
        table(path, label="label"))
    path = csv(tmp_path, "id,v\na,1\na,2\nb,3\nb,4\nc,5\n")
    message = error(table(path, task="forecast", forecast={"horizon": 1, "channels": ["v"]}))
    assert message == (f"{path}: series 'c' has 1 observations; forecast.horizon 1 needs at "
                       f"least 2 (a history to read)")


def test_array_errors(tmp_path):
    values = np.zeros((3, 4, 1))
    path = write_npz(tmp_path, values=values, labels=np.array([0, 1]))
    assert error(ArraysConfig(path=path)) == \
        f"{path}: 'labels' has 2 series (first axis) but values has 3"
    path = write_npz(tmp_path, values=values, labels=np.array([0, 1, 1]), times=np.zeros(5))
    assert "times has shape (5,); expected (4,) shared or (3, 4) per series" in error(
        ArraysConfig(path=path))
    path = write_npz(tmp_path, valuez=values, labels=np.array([0, 1, 1]))
    assert error(ArraysConfig(path=path, classes=[0, 1])) == \
        f"{path}: no array 'values' (did you mean 'valuez'?); found: valuez, labels"
    path = write_npz(tmp_path, values=values, labels=np.array([0, 1, 2]))
    assert error(ArraysConfig(path=path, classes=[0, 1])).startswith(
        f"{path}: label '2' at series 2 is not one of the classes 0, 1")
    np.save(tmp_path / "values.npy", np.zeros((2, 3, 1)))
    np.save(tmp_path / "labels.npy", np.array(["a", None], dtype=object))
    message = error(ArraysConfig(path=[str(tmp_path / "values.npy"),
                                       str(tmp_path / "labels.npy")], classes=["a"]))
    assert "an object array (pickled), which is not loaded" in message
    path = write_npz(tmp_path, values=np.full((2, 3, 1), NAN), labels=np.array([0, 1]))
    assert "series 0 has no value (all NaN)" in error(ArraysConfig(path=path, classes=[0, 1]))
    path = write_npz(tmp_path, values=values, labels=np.array([0, 1, 1]),
                     split=np.array(["train", "val", "validation"]))
    assert "split[2] is 'validation'; use train, val or test" in error(
        ArraysConfig(path=path, split={"key": "split"}))


def test_data_without_series_is_said_so(tmp_path):
    empty = csv(tmp_path, "id,t,v,label\n")
    assert error(table(empty, time="t", label="label")).endswith(
        "data.csv: the table has no rows (only a header)")
    with pytest.raises(InputError, match="the table has no rows"):  # classes read at validation
        table(empty, time="t", label="label").task()
    path = write_npz(tmp_path, values=np.zeros((0, 8, 2)), labels=np.array([], dtype=str))
    for config in (ArraysConfig(path=path), ArraysConfig(path=path, classes=["a", "b"])):
        assert error(config).endswith("data.npz: 'values' holds no series (its shape is "
                                      "(0, 8, 2))")
    text = tmp_path / "text.npz"
    text.write_text("id,t,v\n")
    assert error(ArraysConfig(path=str(text), classes=["a"])).endswith(
        "text.npz: cannot read it as .npz: not a zip archive of arrays (save one with "
        "numpy.savez)")


def test_a_value_float32_cannot_hold_is_refused_with_its_cell(tmp_path):
    path = csv(tmp_path, "id,t,v,label\na,0,1,x\na,1,1e308,x\nb,0,1,y\n")
    assert "column 'v' holds '1e308' at " in error(table(path, time="t", label="label"))
    values = np.ones((3, 4, 1))
    values[1, 2, 0] = -1e39
    path = write_npz(tmp_path, values=values, labels=np.array([0, 1, 1]))
    assert "'values' holds '-1e+39' at index (1, 2, 0), not a number float32 can hold" in \
        error(ArraysConfig(path=path, classes=[0, 1]))


# ----- spec validation (no data read)

SPEC = """\
data:
  kind: table
  path: series.csv
  id: id
  task: classify
  label: label
  split: {ratios: [0.7, 0.15, 0.15]}
model:
  control: {kind: natural_cubic}
  field: {kind: ncde, hidden: 8, hidden_hidden: 8, layers: 1}
  solver: {kind: torchdiffeq, method: rk4, step_size: 1.0}
  readout: {kind: classify}
train: {epochs: 2, batch_size: 16}
"""


def spec_problems(path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value.problems


@pytest.mark.parametrize("edit, expected", [
    (("[0.7, 0.15, 0.15]", "[0.7, 0.2, 0.2]"),
     "7:19: data.split.ratios: shares 0.7, 0.2, 0.2 sum to 1.1, not 1"),
    (("[0.7, 0.15, 0.15]", "[0.85, 0.15, 0]"),
     "7:19: data.split.ratios: every share must be > 0"),
    (("split: {ratios: [0.7, 0.15, 0.15]}", "split: {ratios: [0.7, 0.15, 0.15], column: f}"),
     "7:10: data.split: give either ratios or column, not both"),
    (("  label: label\n", "  forecast: {horizon: 0, channels: [v]}\n"),
     "6:23: data.forecast.horizon: Input should be greater than 0"),
    (("  label: label\n", ""), "5:9: data.task: task 'classify' needs label: the class column"),
    (("  label: label\n", "  label: label\n  forecast: {horizon: 2, channels: [v]}\n"),
     "7:13: data.forecast: applies to task 'forecast' only (task is 'classify')"),
    (("  label: label\n", "  label: id\n"), "6:10: data.label: column 'id' is already data.id"),
    (("  label: label\n", "  label: label\n  channels: [v, v]\n"),
     "7:13: data.channels: column 'v' is already data.channels"),
    (("series.csv", "series.xlsx"), "3:9: data.path: '"),
])
def test_spec_errors_point_at_file_and_line(write_spec, edit, expected):
    path = write_spec(SPEC.replace(*edit))
    [problem] = [p for p in spec_problems(path) if p.startswith(f"{path}:{expected}")]
    if edit[1] == "series.xlsx":
        assert problem.endswith("series.xlsx' is not a .csv, .tsv or .parquet file")


def test_gru_ode_needs_the_time_channel(write_spec):
    text = SPEC.replace("  label: label\n", "  label: label\n  time_channel: false\n").replace(
        "{kind: ncde, hidden: 8, hidden_hidden: 8, layers: 1}", "{kind: gru_ode, hidden: 8}")
    path = write_spec(text)
    (path.parent / "series.csv").write_text(series_csv())
    assert [p for p in spec_problems(path) if "data.time_channel: field 'gru_ode' moves h by "
            "dX₀/dt, the rate of channel 0, which must be time" in p]
    assert load_spec(write_spec(text.replace("false", "true")))[0].model.field.kind == "gru_ode"


def test_spec_path_is_relative_to_the_spec_file(tmp_path, monkeypatch):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "series.csv").write_text(series_csv(4))
    (folder / "spec.yaml").write_text(SPEC)
    monkeypatch.chdir(tmp_path)
    spec, _ = load_spec("project/spec.yaml")
    assert spec.data.path == str(folder / "series.csv")
    assert spec.data.task().class_names == ("x", "y")  # read from the label column
    dumped = spec.data.model_dump(mode="json")
    assert dumped["task"] == "classify" and "task_kind" not in dumped


# ----- readouts leave unlabelled steps out


def test_readouts_ignore_missing_targets():
    logits = torch.tensor([[[2.0, 0.0], [0.0, 2.0], [5.0, -5.0]]])
    labels = torch.tensor([[0, 1, IGNORE_LABEL]])
    classify = ClassifyConfig()
    assert classify.metrics(logits, labels)["accuracy"] == 1.0
    assert classify.loss(logits, labels).item() == pytest.approx(
        torch.nn.functional.cross_entropy(logits[0, :2], labels[0, :2]).item())
    weighted = ClassifyConfig(class_weights=[1.0, 2.0], weight_reduction="mean")
    assert math.isfinite(weighted.loss(logits, labels).item())
    outputs = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    target = torch.tensor([[1.0, NAN], [NAN, 6.0]])
    regress = RegressConfig()
    loss = regress.loss(outputs, target)
    assert loss.item() == pytest.approx((0 + 4) / 2)
    loss.backward()
    assert torch.isfinite(outputs.grad).all()
    assert regress.metrics(outputs.detach(), target) == pytest.approx(
        {"loss": 2.0, "mse": 2.0, "mae": 1.0})


# ----- end to end


@pytest.mark.slow
def test_zoo_run_on_an_irregular_csv(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "project"
    folder.mkdir()
    vitals_csv(folder / "vitals.csv")
    (folder / "vitals.yaml").write_text(
        "data: {kind: table, path: vitals.csv, id: patient, time: hour, label: outcome,\n"
        "       classes: [well, sick]}\n"
        "model:\n"
        "  control: {kind: natural_cubic}\n"
        "  field: {kind: ncde, hidden: 8, hidden_hidden: 8, layers: 1}\n"
        "  solver: {kind: torchdiffeq, method: rk4, step_size: 0.2}\n"
        "  readout: {kind: classify}\n"
        "train: {epochs: 2, batch_size: 8}\n")
    monkeypatch.chdir(tmp_path)
    code = main(["run", "project/vitals.yaml", "--no-progress", "--tracking-uri",
                 f"sqlite:///{tmp_path / 'mlruns.db'}"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "finished" in out.out and "test/accuracy" in out.out and "test/loss" in out.out


def test_a_data_error_writes_nothing(tmp_path, monkeypatch, capsys):
    """A bad file stops ``zoo run`` before the tracking store exists: no store, no run."""
    (tmp_path / "bad.csv").write_text("patient,hour,hr,outcome\np1,0,60,well\np1,0,61,well\n"
                                      "p2,0,70,sick\np2,1,71,sick\n")
    (tmp_path / "bad.yaml").write_text(
        "data: {kind: table, path: bad.csv, id: patient, time: hour, label: outcome,\n"
        "       classes: [well, sick], split: {ratios: [0.5, 0.25, 0.25]}}\n"
        "model:\n"
        "  control: {kind: natural_cubic}\n"
        "  field: {kind: ncde, hidden: 4, hidden_hidden: 4, layers: 1}\n"
        "  solver: {kind: torchdiffeq, method: rk4, step_size: 0.5}\n"
        "  readout: {kind: classify}\n")
    monkeypatch.chdir(tmp_path)
    code = main(["run", "bad.yaml", "--no-progress", "--tracking-uri",
                 f"sqlite:///{tmp_path / 'mlruns.db'}"])
    err = capsys.readouterr().err
    assert code == 2 and "bad.csv" in err and "Traceback" not in err
    assert not (tmp_path / "mlruns.db").exists()
