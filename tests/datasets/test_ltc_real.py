"""The LTC-suite loaders on the real files of the local mirror (skipped when it is absent)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo import registry
from zoo.datasets.ltc import occupancy, ozone

from conftest import DATA_MIRROR as MIRROR, without_mirror

pytestmark = without_mirror("ltc")


@pytest.fixture(scope="module", autouse=True)
def env(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ZOO_DATA_HOME", str(tmp_path_factory.mktemp("home")))
        mp.setenv("ZOO_DATA_MIRROR", str(MIRROR))
        yield


def load(kind, **options):
    return registry.get("datasets", kind)(**options).load()


def sizes(bundle):
    return len(bundle.train), len(bundle.val), len(bundle.test)


def test_cheetah_by_file_split_and_next_step_targets():
    traces = sorted((MIRROR / "ltc" / "cheetah").glob("*.npy"))
    assert len(traces) == 31 and all(np.load(t).shape == (1000, 17) for t in traces)
    b = load("cheetah")
    # 97 windows (starts 0, 10, …, 960) per trace: 10 train, 5 val, 10 test traces
    assert sizes(b) == (970, 485, 970)
    assert b.train.values.shape == (970, 32, 17) and b.train.y.shape == (970, 32, 17)
    assert torch.equal(b.train.values[:, 1:], b.train.y[:, :-1])
    first_val = torch.from_numpy(np.load(traces[0]).astype(np.float32))
    assert torch.equal(b.val.values[1], first_val[10:42])  # val = traces 0-4, stride 10
    assert torch.equal(b.test.values[0], torch.from_numpy(np.load(traces[5])[:32]).float())
    assert b.task.kind == "regression" and b.task.n_outputs == 17 and b.task.per_step
    assert b.partial is None and torch.equal(b.train.times, torch.arange(32.0))


def test_occupancy_rows_windows_and_train_statistics():
    rows = {n: occupancy.read_rows("occupancy", MIRROR / "ltc" / "occupancy" / n)[0]
            for n in occupancy.FILES}
    assert [len(r) for r in rows.values()] == [8143, 2665, 9752]
    b = load("occupancy")
    # 8,127 training windows of 16 → 812 validation; test stride 8: 332 + 1,217
    assert sizes(b) == (7315, 812, 1549) and b.train.values.shape[1:] == (16, 5)
    everything = torch.cat([b.train.values, b.val.values])[:, 0]  # first row of each window
    assert everything.mean(0).abs().max() < 0.05
    assert set(b.test.y.unique().tolist()) == {0, 1} and b.task.n_outputs == 2


def test_gesture_windows_normalised_and_split():
    b = load("gesture")
    assert sizes(b) == (455, 60, 90)  # 605 windows: 10 % / 15 % with seed 23489
    allx = torch.cat([b.train.values, b.val.values, b.test.values]).double()
    assert allx.shape[1:] == (32, 32)
    assert allx.mean((0, 1)).abs().max() < 1e-4
    assert torch.allclose(allx.std((0, 1), unbiased=False), torch.ones(32, dtype=torch.float64),
                          atol=1e-3)
    assert set(torch.cat([b.train.y, b.val.y, b.test.y]).unique().tolist()) == set(range(5))


def test_traffic_counts_and_features():
    b = load("traffic")
    # 48,204 hours → 12,043 windows (stride 4) → 9,033 / 1,204 / 1,806
    assert sizes(b) == (9033, 1204, 1806)
    assert b.train.values.shape[1:] == (32, 7) and b.train.y.shape[1:] == (32, 1)
    assert torch.all(b.train.values[..., 0] == 0)  # the script's holiday flag is always 0
    weekday = torch.cat([b.train.values, b.test.values])[..., 5]
    assert set(weekday.unique().tolist()) == set(range(7))


def test_ozone_both_protocols():
    x, y = ozone.read_rows((MIRROR / "ltc" / "ozone" / "eighthr.data").read_text())
    assert x.shape == (2534, 72) and int(y.sum()) == 160
    assert abs(x.mean()) < 1e-9 and abs(x.std() - 1) < 1e-9
    as_run = load("ozone")
    assert sizes(as_run) == (25, 3, 4) and as_run.train.values.shape[1:] == (626, 72)
    # sequence k, step j is row 4 j + k of the normalised file
    seqs = torch.cat([as_run.train.values, as_run.val.values, as_run.test.values])
    assert any(torch.allclose(s[1], torch.from_numpy(x[4]).float()) for s in seqs)
    windowed = load("ozone", protocol="windowed")
    assert sizes(windowed) == (471, 62, 93) and windowed.train.values.shape[1:] == (32, 72)
    assert windowed.info["class_weights"] == (0.1, 1.6)


def test_smoke_is_a_tiny_subset():
    b = registry.get("datasets", "gesture")().load(smoke=True)
    assert sizes(b) == (16, 16, 16)
