"""The UEA loader on the archive's ARFF files (multivariate relational, and one file per
dimension) and on dataset names outside the 2018 list whose files are present; small files in
the official formats, plus the mirror's real BasicMotions converted to ARFF here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from zoo.data.uea_format import read_ts
from zoo.datasets.uea import UEAConfig
from zoo.errors import InputError

from conftest import DATA_MIRROR as MIRROR, in_mirror
NAME = "ToyMotion"  # not in the archive's list
CLASSES = ["walk", "run"]


def _num(v: float) -> str:
    return repr(float(v)) if np.isfinite(v) else "?"


def write_ts(path: Path, cases, labels, classes) -> None:
    rows = [":".join(",".join(_num(v) for v in ch) for ch in case) + f":{label}"
            for case, label in zip(cases, labels)]
    equal = len({c.shape[1] for c in cases}) == 1
    path.write_text(f"@problemName {NAME}\n@timeStamps false\n@missing false\n"
                    f"@univariate false\n@dimensions {cases[0].shape[0]}\n"
                    f"@equalLength {str(equal).lower()}\n@classLabel true {' '.join(classes)}\n"
                    "@data\n" + "\n".join(rows) + "\n")


def _padded(case: np.ndarray, length: int) -> np.ndarray:
    out = np.full((case.shape[0], length), np.nan)
    out[:, :case.shape[1]] = case
    return out


def write_relational_arff(path: Path, cases, labels, classes) -> None:
    """The archive's multivariate ARFF: one relational attribute, channels split by ``\\n``,
    shorter series padded with ``?``."""
    length = max(c.shape[1] for c in cases)
    inner = "".join(f"  @attribute att{t} numeric\n" for t in range(length))
    rows = ["'" + "\\n".join(",".join(_num(v) for v in ch) for ch in _padded(case, length))
            + f"',{label}" for case, label in zip(cases, labels)]
    path.write_text(f"% written by the test\n@relation {NAME}\n\n"
                    f"@attribute relationalAtt relational\n{inner}@end relationalAtt\n"
                    f"@attribute classAttribute {{{','.join(classes)}}}\n\n@data\n"
                    + "\n".join(rows) + "\n")


def write_dimension_arffs(folder: Path, name: str, split: str, cases, labels, classes) -> None:
    """One univariate ARFF per dimension: ``<name>Dimension<k>_<split>.arff``."""
    length = max(c.shape[1] for c in cases)
    for k in range(cases[0].shape[0]):
        head = "".join(f"@attribute att{t} numeric\n" for t in range(length))
        rows = [",".join(_num(v) for v in _padded(case, length)[k]) + f",{label}"
                for case, label in zip(cases, labels)]
        (folder / f"{name}Dimension{k + 1}_{split}.arff").write_text(
            f"@relation {name}Dimension{k + 1}\n{head}"
            f"@attribute classAttribute {{{','.join(classes)}}}\n@data\n" + "\n".join(rows) + "\n")


def toy_cases(n=40, channels=3):
    rng = np.random.default_rng(3)
    cases = [rng.normal(size=(channels, 8 + i % 5)).round(4) for i in range(n)]
    labels = [CLASSES[i % 2] for i in range(n)]
    return cases, labels


def write_all(folder: Path, fmt: str, cases, labels, name=NAME, classes=CLASSES) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    half = len(cases) // 2
    for split, part in (("TRAIN", slice(None, half)), ("TEST", slice(half, None))):
        if fmt == "ts":
            write_ts(folder / f"{name}_{split}.ts", cases[part], labels[part], classes)
        elif fmt == "arff":
            write_relational_arff(folder / f"{name}_{split}.arff", cases[part], labels[part],
                                  classes)
        else:
            write_dimension_arffs(folder, name, split, cases[part], labels[part], classes)


def use_mirror(monkeypatch, tmp_path: Path, label: str) -> Path:
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / f"home-{label}"))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(tmp_path / f"mirror-{label}"))
    return tmp_path / f"mirror-{label}" / "uea"


def assert_same(a, b) -> None:
    for part in ("train", "val", "test"):
        x, y = getattr(a, part), getattr(b, part)
        torch.testing.assert_close(x.values, y.values, equal_nan=True, rtol=0, atol=0)
        assert torch.equal(x.y, y.y) and torch.equal(x.final_index, y.final_index)


def test_arff_layouts_equal_ts(tmp_path, monkeypatch):
    cases, labels = toy_cases()
    bundles = {}
    for fmt in ("ts", "arff", "dims"):
        write_all(use_mirror(monkeypatch, tmp_path, fmt), fmt, cases, labels)
        config = UEAConfig(name=NAME)  # outside the fixed list: accepted, its files are there
        assert config.task().n_outputs == 2  # from the training file's header
        bundles[fmt] = config.load()
    assert bundles["ts"].train.values.shape[1:] == (12, 4)  # padded to 12; time + 3
    assert_same(bundles["ts"], bundles["arff"])
    assert_same(bundles["ts"], bundles["dims"])
    assert bundles["arff"].info["formats"] == {"TRAIN": "arff", "TEST": "arff"}
    assert bundles["dims"].info["formats"]["TEST"] == "arff per dimension"
    assert [Path(p).name for p in bundles["dims"].info["sources"]][:3] == [
        f"{NAME}Dimension{k}_TRAIN.arff" for k in (1, 2, 3)]
    assert len(bundles["dims"].info["sources"]) == 6


def test_ts_preferred_and_cache_counts(tmp_path, monkeypatch):
    cases, labels = toy_cases()
    folder = use_mirror(monkeypatch, tmp_path, "both")
    write_all(folder, "ts", cases, labels)
    (folder / f"{NAME}_TRAIN.arff").write_text("not read\n")
    bundle = UEAConfig(name=NAME).load()
    assert bundle.info["formats"] == {"TRAIN": "ts", "TEST": "ts"}
    monkeypatch.delenv("ZOO_DATA_MIRROR")  # files in the cache alone are found too
    write_all(tmp_path / "home-both" / "uea", "arff", cases, labels)
    assert UEAConfig(name=NAME).load().info["formats"]["TRAIN"] == "arff"


@pytest.mark.parametrize("change, message", [
    (lambda c, y: (c[:-1], y[:-1]), "19 cases, 20 in the first dimension"),
    (lambda c, y: (c, ["run"] + y[1:]), "case 1 has label 'run', 'walk' in the first"),
    (lambda c, y: ([c[0][:, :-1]] + c[1:], y), "case 1 has length 7, 8 in the first"),
])
def test_dimension_files_must_agree(tmp_path, monkeypatch, change, message):
    cases, labels = toy_cases()
    folder = use_mirror(monkeypatch, tmp_path, "bad")
    write_all(folder, "dims", cases, labels)
    bad_cases, bad_labels = change([c[1:2] for c in cases[:20]], labels[:20])
    write_dimension_arffs(tmp_path, NAME, "TRAIN", bad_cases, bad_labels, CLASSES)
    (tmp_path / f"{NAME}Dimension1_TRAIN.arff").replace(folder / f"{NAME}Dimension2_TRAIN.arff")
    with pytest.raises(InputError, match=f"{NAME}Dimension2_TRAIN.arff: {message}"):
        UEAConfig(name=NAME).load()


def test_unknown_name_suggests_present_files(tmp_path, monkeypatch):
    cases, labels = toy_cases()
    folder = use_mirror(monkeypatch, tmp_path, "typo")
    write_all(folder, "dims", cases, labels)
    with pytest.raises(ValueError, match="did you mean 'ToyMotion'") as info:
        UEAConfig(name="ToyMotoin")
    assert str(folder) in str(info.value) and "ToyMotoinDimension1_TRAIN.arff" in str(info.value)
    with pytest.raises(ValueError, match="did you mean 'BasicMotions'"):
        UEAConfig(name="BasicMotion")
    with pytest.raises(ValueError, match="no folders"):
        UEAConfig(name="../ToyMotion")


def test_real_basic_motions_as_arff(tmp_path, monkeypatch):
    in_mirror("uea", "BasicMotions_TRAIN.ts")
    source = MIRROR / "uea"
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(MIRROR))
    reference = UEAConfig(name="BasicMotions").load()
    for fmt in ("arff", "dims"):
        folder = use_mirror(monkeypatch, tmp_path, fmt)
        folder.mkdir(parents=True)
        for split in ("TRAIN", "TEST"):
            data = read_ts(source / f"BasicMotions_{split}.ts", "test")
            if fmt == "arff":
                write_relational_arff(folder / f"BasicMotions_{split}.arff", data.series,
                                      data.labels, data.class_labels)
            else:
                write_dimension_arffs(folder, "BasicMotions", split, data.series, data.labels,
                                      data.class_labels)
        bundle = UEAConfig(name="BasicMotions").load()
        assert bundle.info["formats"]["TRAIN"] == ("arff" if fmt == "arff"
                                                   else "arff per dimension")
        assert_same(reference, bundle)
        assert bundle.info["classes"] == reference.info["classes"]
