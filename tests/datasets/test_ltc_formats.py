"""LTC-suite loaders on small files written in the official formats (HAR, power, person, sMNIST),
and bad inputs: each is one clear error naming the dataset and the file, and nothing is cached."""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pytest
import torch

from zoo import registry
from zoo.errors import ZooError


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(tmp_path / "mirror"))
    return tmp_path / "mirror"


def put(mirror, subdir: str, name: str, content: bytes):
    (mirror / subdir).mkdir(parents=True, exist_ok=True)
    (mirror / subdir / name).write_bytes(content)


def load(kind, smoke=False):
    return registry.get("datasets", kind)().load(smoke=smoke)


def no_cache(mirror):
    processed = mirror.parent / "home" / "processed"
    return not processed.exists() or not any(processed.iterdir())


# ---- HAR: "UCI HAR Dataset.zip" with whitespace-separated 561-feature rows ----------------

def har_zip(n_train=40, n_test=30, features=561) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for part, n in (("train", n_train), ("test", n_test)):
            rows = np.arange(n)[:, None] + np.arange(features)[None] / 1000
            zf.writestr(f"UCI HAR Dataset/{part}/X_{part}.txt", "\n".join(
                " " + " ".join(f"{v: .8e}" for v in r) for r in rows) + "\n")
            zf.writestr(f"UCI HAR Dataset/{part}/y_{part}.txt",
                        "\n".join(str(i % 6 + 1) for i in range(n)) + "\n")
    return buf.getvalue()


def test_har_windows_labels_and_split(mirror):
    put(mirror, "ltc/har", "UCI HAR Dataset.zip", har_zip())
    b = load("har")
    # 24 training windows (starts 0..23) → 2 validation; test starts 0, 8 (stride 8)
    assert (len(b.train), len(b.val), len(b.test)) == (22, 2, 2)
    assert b.train.values.shape[1:] == (16, 561) and b.task.n_outputs == 6
    starts = torch.cat([b.train.values, b.val.values])[:, 0, 0].sort().values
    assert torch.equal(starts, torch.arange(24.0))  # not normalised: feature 0 = row index
    assert torch.equal(b.test.values[1, :, 1], torch.arange(8, 24) + 0.001)
    assert torch.equal(b.test.y[1], (torch.arange(8, 24) % 6))  # labels 1..6 → 0..5
    assert b.partial is None


def test_har_truncated_archive_is_one_clear_error(mirror):
    put(mirror, "ltc/har", "UCI HAR Dataset.zip", har_zip()[:3000])
    with pytest.raises(ZooError, match=r"dataset 'har': cannot read .*UCI HAR Dataset.zip"):
        load("har")
    assert no_cache(mirror)


def test_har_wrong_feature_count(mirror):
    put(mirror, "ltc/har", "UCI HAR Dataset.zip", har_zip(features=5))
    with pytest.raises(ZooError, match=r"'har'.*X_train.txt.*561 features"):
        load("har")
    assert no_cache(mirror)


# ---- Power: household_power_consumption.zip, ';'-separated, '?' for gaps ------------------

def power_zip(rows: list[str]) -> bytes:
    header = ("Date;Time;Global_active_power;Global_reactive_power;Voltage;Global_intensity;"
              "Sub_metering_1;Sub_metering_2;Sub_metering_3\n")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("household_power_consumption.txt", header + "".join(rows))
    return buf.getvalue()


def power_rows(n=330):
    rng = np.random.default_rng(0)
    table = rng.uniform(0, 5, (n, 7)).round(3)
    lines = [f"16/12/2006;17:{i % 60:02d}:00;" + ";".join(f"{v:.3f}" for v in row) + "\n"
             for i, row in enumerate(table)]
    lines[5] = "16/12/2006;17:05:00;?;?;?;?;?;?;\n"  # a gap: all seven repeat row 4
    table[5] = table[4]
    return lines, table


def test_power_fills_gaps_normalises_and_windows(mirror):
    lines, table = power_rows()
    put(mirror, "ltc/power", "household_power_consumption.zip", power_zip(lines))
    b = load("power")
    # 330 rows → starts 0, 32, …, 288 (10 windows) → 1 val, 1 test, 8 train
    assert (len(b.train), len(b.val), len(b.test)) == (8, 1, 1)
    z = table.astype(np.float32)
    z = (z - z.mean(0)) / z.std(0)
    order = np.random.RandomState(23489).permutation(10)  # val = order[:1], test = order[1:2]
    for split, index in ((b.train, order[2:]), (b.val, order[:1]), (b.test, order[1:2])):
        expected = np.stack([z[32 * i:32 * i + 32] for i in index])
        assert torch.allclose(split.values, torch.from_numpy(expected[..., 1:]), atol=1e-6)
        assert torch.allclose(split.y, torch.from_numpy(expected[..., :1]), atol=1e-6)
    assert b.task.kind == "regression"


def test_power_wrong_format_names_the_file(mirror):
    put(mirror, "ltc/power", "household_power_consumption.zip",
        power_zip(["16/12/2006;17:00:00;1.0;abc;1;1;1;1;1\n"]))
    with pytest.raises(ZooError, match=r"'power'.*household_power_consumption.zip "
                                       r"\(household_power_consumption.txt\).*abc"):
        load("power")
    assert no_cache(mirror)


# ---- Person: ConfLongDemo_JSI.txt ---------------------------------------------------------

TAGS = ["010-000-024-033", "010-000-030-096", "020-000-033-111", "020-000-032-221"]


def person_text(sizes={"A01": 200, "A02": 100, "A03": 20}):  # noqa: B006 (read only)
    lines = []
    for p, (person, n) in enumerate(sizes.items()):
        for i in range(n):
            activity = ["walking", "lying down", "sitting on the ground"][i % 3]
            lines.append(f"{person},{TAGS[i % 4]},6337902260{i:08d},27.05.2009 14:03:25:127,"
                         f"{p}.5,{i / 10},{-i / 100},{activity}")
    return ("\n".join(lines) + "\n").encode()


def test_person_windows_per_person_and_drops_the_last(mirror):
    put(mirror, "ltc/person", "ConfLongDemo_JSI.txt", person_text())
    b = load("person")
    # A01: starts 0..160 step 16 (11), A02: 0..64 (5); A03, the last person, is left out
    assert (len(b.train), len(b.val), len(b.test)) == (13, 1, 2)
    allx = torch.cat([b.train.values, b.val.values, b.test.values])
    assert set(allx[:, 0, 4].tolist()) == {0.5, 1.5}
    assert allx[..., :4].sum(-1).eq(1).all() and allx[..., :4].sum((0, 1)).min() > 0
    ally = torch.cat([b.train.y, b.val.y, b.test.y])
    # lying down → 0, walking → 3, sitting on the ground → 6
    assert set(ally.unique().tolist()) == {0, 3, 6}


def test_person_unknown_activity(mirror):
    put(mirror, "ltc/person", "ConfLongDemo_JSI.txt",
        person_text().replace(b"walking", b"dancing", 1))
    with pytest.raises(ZooError, match=r"'person'.*ConfLongDemo_JSI.txt.*dancing"):
        load("person")


# ---- sMNIST: the four idx .gz files --------------------------------------------------------

def idx(array: np.ndarray) -> bytes:
    head = bytes([0, 0, 8, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    return gzip.compress(head + array.astype(np.uint8).tobytes())


def write_mnist(mirror, n_train=20, n_test=5):
    rng = np.random.default_rng(1)
    arrays = {}
    for part, n in (("train", n_train), ("t10k", n_test)):
        arrays[part] = (rng.integers(0, 256, (n, 28, 28)), np.arange(n) % 10)
        put(mirror, "mnist", f"{part}-images-idx3-ubyte.gz", idx(arrays[part][0]))
        put(mirror, "mnist", f"{part}-labels-idx1-ubyte.gz", idx(arrays[part][1]))
    return arrays


def test_smnist_rows_as_steps_and_last_tenth_validation(mirror):
    arrays = write_mnist(mirror)
    b = load("smnist")
    assert (len(b.train), len(b.val), len(b.test)) == (18, 2, 5)
    assert not b.task.per_step and b.train.y.shape == (18,)
    assert torch.allclose(b.val.values[0], torch.from_numpy(arrays["train"][0][18] / 255.0).float())
    assert torch.equal(b.val.y, torch.tensor([8, 9]))
    assert torch.equal(b.test.y, torch.arange(5))


def test_smnist_bad_magic_names_the_file(mirror):
    write_mnist(mirror)
    put(mirror, "mnist", "t10k-labels-idx1-ubyte.gz", gzip.compress(b"\0\0\x07\x01garbage"))
    with pytest.raises(ZooError, match=r"'smnist'.*t10k-labels-idx1-ubyte.gz.*magic"):
        load("smnist")
    assert no_cache(mirror)


def test_missing_mirror_file_without_network(mirror, monkeypatch):
    write_mnist(mirror)
    (mirror / "mnist" / "train-labels-idx1-ubyte.gz").unlink()
    monkeypatch.setattr("zoo.data.fetch.TIMEOUT_S", 2)
    monkeypatch.setattr("urllib.request.urlopen", _offline)
    with pytest.raises(ZooError, match=r"'smnist'.*train-labels-idx1-ubyte.gz.*ZOO_DATA_MIRROR"):
        load("smnist")
    assert no_cache(mirror)


def _offline(*args, **kwargs):
    import urllib.error
    raise urllib.error.URLError("network is unreachable")


def test_a_repaired_file_loads_after_a_failure(mirror):
    put(mirror, "ltc/har", "UCI HAR Dataset.zip", b"not a zip")
    with pytest.raises(ZooError):
        load("har")
    put(mirror, "ltc/har", "UCI HAR Dataset.zip", har_zip())
    assert len(load("har", smoke=True).train) == 16
