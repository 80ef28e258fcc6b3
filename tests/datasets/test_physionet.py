"""PhysioNet 2019 sepsis (docs/sources.md#sepsis): small .psv zips in the official layout, the
mirror."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import pytest
import torch

from zoo.data.sepsis_psv import psv_members, read_stay, read_stays
from zoo.datasets.physionet_sepsis import SET_A, SET_B, PhysioNetSepsisConfig
from zoo.errors import InputError

from conftest import DATA_MIRROR, without_mirror

MIRROR = DATA_MIRROR / "physionet2019"
HEADER = ("HR|O2Sat|Temp|SBP|MAP|DBP|Resp|EtCO2|BaseExcess|HCO3|FiO2|pH|PaCO2|SaO2|AST|BUN|"
          "Alkalinephos|Calcium|Chloride|Creatinine|Bilirubin_direct|Glucose|Lactate|Magnesium|"
          "Phosphate|Potassium|Bilirubin_total|TroponinI|Hct|Hgb|PTT|WBC|Fibrinogen|Platelets|"
          "Age|Gender|Unit1|Unit2|HospAdmTime|ICULOS|SepsisLabel")


def row(iculos: int, label: int = 0, hr: float | str = 80, unit1="1", age=60) -> str:
    values = [str(hr)] + ["NaN"] * 33
    return "|".join(values + [str(age), "1", unit1, "0", "-5.5", str(iculos), str(label)])


def stay(iculos, labels=None, **kw) -> str:
    labels = labels or [0] * len(iculos)
    return "\n".join([HEADER] + [row(i, lab, hr=60 + i, **kw) for i, lab in zip(iculos, labels)])


def test_read_stay_follows_the_authors_rules():
    text = stay([1, 2, 5, 72, 73], labels=[0, 0, 0, 0, 1], unit1="NaN")
    got = read_stay(text.splitlines(), "p.psv", "physionet_sepsis", flags=True)
    assert len(got.rows) == 72  # hours 1..72 with NaN rows for 3, 4, 6..71
    assert got.rows[0][0] == 61 and math.isnan(got.rows[2][0]) and got.rows[4][0] == 65
    assert got.label == 0.0  # the positive row at ICULOS 73 is past the window
    assert got.static == [60.0, 1.0, 0.0, 0.0, -5.5, 0.0, 1.0]
    assert read_stay(stay([1, 2]).splitlines(), "p", "d", flags=False) is None  # ≤ 2 rows
    gap = read_stay(stay([3, 4]).splitlines(), "p", "d", flags=False)  # hours 1, 2 missing
    assert len(gap.rows) == 4 and math.isnan(gap.rows[0][0])


@pytest.mark.parametrize("text, message", [
    (HEADER, "no data rows"),
    (HEADER + "\n1|2|3", "expected 41 '|'-separated columns, found 3"),
    (stay([1, 2, 3]).replace("|60|1|1|0|-5.5|2|", "|60|1|1|0|-5.5|two|"), "line 3"),
])
def test_bad_files_name_dataset_and_file(text, message):
    with pytest.raises(InputError, match=message) as err:
        read_stay(text.splitlines(), "training/p000001.psv", "physionet_sepsis", flags=False)
    assert "dataset 'physionet_sepsis': training/p000001.psv" in str(err.value)


def write_zip(path: Path, folder: str, stays: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in stays.items():
            zf.writestr(f"{folder}/{name}", text + "\n")


@pytest.fixture
def small_sets(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(tmp_path / "mirror"))
    folder = tmp_path / "mirror" / "physionet2019"
    a = {f"p{i:06d}.psv": stay(range(1, 4 + i % 50), labels=[0] * (2 + i % 50) + [int(i % 4 == 0)])
         for i in range(40)}
    a["p000099.psv"] = stay([1, 2])  # dropped: two rows only
    b = {f"p1{i:05d}.psv": stay(range(1, 90), labels=[int(i % 4 == 0)] * 89) for i in range(40)}
    write_zip(folder / SET_A, "training", a)
    write_zip(folder / SET_B, "training_setB", b)
    return folder


def test_small_sets_through_the_pipeline(small_sets):
    for intensity, channels, static in ((False, 35, 5), (True, 69, 7)):
        bundle = PhysioNetSepsisConfig(intensity=intensity).load()
        assert bundle.partial == ("training set A holds 41 of its 20,336 stays; training set "
                                  "B holds 40 of its 20,000 stays; results are not the paper's")
        assert (len(bundle.train), len(bundle.val), len(bundle.test)) == (56, 12, 12)
        assert bundle.train.values.shape[1:] == (72, channels)
        assert bundle.train.static.shape[1] == static
        torch.testing.assert_close(bundle.train.values[0, :, 0], torch.arange(1.0, 73.0))
        for split in (bundle.train, bundle.val, bundle.test):
            hr = split.values[..., channels - 34]
            last = hr.isnan().logical_not().cumsum(1).argmax(1)
            assert torch.equal(split.final_index, last)  # the last real row
            assert split.y.dtype == torch.float32
    hr_train = bundle.train.values[..., 35]
    assert abs(hr_train[~hr_train.isnan()].mean().item()) < 1e-5  # train-stat normalisation
    counts = bundle.train.values[0, :, 1]
    assert counts[bundle.train.final_index[0]] == bundle.train.final_index[0] + 1
    flags = torch.cat([bundle.train.static, bundle.val.static, bundle.test.static])[:, 5:]
    assert set(flags.flatten().tolist()) <= {0.0, 1.0}


def test_labels_and_order(small_sets):
    stays = list(read_stays([small_sets / SET_B, small_sets / SET_A], "d", False))
    names = [name for name, _ in stays]
    assert names == sorted(names) and len(names) == 80
    assert sum(s.label for _, s in stays) == 20


@without_mirror("physionet2019")
def test_real_mirror_set_b():
    members = psv_members(MIRROR / SET_B, "physionet_sepsis")
    assert len(members) == 20000
    assert len(psv_members(MIRROR / SET_A, "physionet_sepsis")) == 17652
    assert PhysioNetSepsisConfig._partial([MIRROR / SET_A, MIRROR / SET_B]) == (
        "training set A holds 17,652 of its 20,336 stays; results are not the paper's")
    first = list(read_stays([MIRROR / SET_B], "physionet_sepsis", True, limit=300))
    assert len(first) > 290 and first[0][0] == "p100001.psv"
    assert all(len(s.rows) <= 72 and len(s.static) == 7 for _, s in first)
