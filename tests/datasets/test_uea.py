"""UEA datasets (docs/sources.md#eigenworms-data, #uea-ncde-pipeline): the mirror's real files,
small files written in the official formats, the authors' split functions and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.model_selection import train_test_split

from zoo.data.splits import jacobian_ncde_split, lem_split, nrde_split
from zoo.datasets.character_trajectories import CharacterTrajectoriesConfig
from zoo.datasets.eigenworms import EigenWormsConfig, impute
from zoo.datasets.uea import UEAConfig, drop_rows
from zoo.errors import InputError

from conftest import in_mirror


@pytest.fixture
def real_mirror(monkeypatch, tmp_path, data_mirror):
    in_mirror("uea")
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(data_mirror))


@pytest.fixture
def uea_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("ZOO_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ZOO_DATA_MIRROR", str(tmp_path / "mirror"))
    folder = tmp_path / "mirror" / "uea"
    folder.mkdir(parents=True)
    return folder


def write_ts(path: Path, cases: list[np.ndarray], labels: list[str], classes) -> None:
    rows = [":".join(",".join(f"{v:g}" if np.isfinite(v) else "?" for v in ch) for ch in case)
            + f":{label}" for case, label in zip(cases, labels)]
    path.write_text(f"@problemName X\n@classLabel true {' '.join(classes)}\n@data\n"
                    + "\n".join(rows) + "\n")


def write_arff(path: Path, cases: list[np.ndarray], labels: list[str], classes) -> None:
    rows = ["'" + "\\n".join(",".join(f"{v:g}" for v in ch) for ch in case) + f"',{label}"
            for case, label in zip(cases, labels)]
    path.write_text("@relation X\n@attribute relationalAtt relational\n@end relationalAtt\n"
                    f"@attribute target {{{','.join(classes)}}}\n@data\n" + "\n".join(rows) + "\n")


def test_real_basic_motions(real_mirror):
    bundle = UEAConfig(name="BasicMotions").load()
    assert (len(bundle.train), len(bundle.val), len(bundle.test)) == (56, 12, 12)
    assert bundle.train.values.shape[1:] == (100, 7)  # time + 6 channels
    assert bundle.info["classes"] == ["Standing", "Running", "Walking", "Badminton"]
    assert bundle.task.n_outputs == 4


def test_real_japanese_vowels_lengths_and_dropped_rows(real_mirror):
    bundle = UEAConfig(name="JapaneseVowels").load()
    assert len(bundle.train) + len(bundle.val) + len(bundle.test) == 640  # 270 + 370
    assert bundle.train.values.shape[1:] == (29, 13)
    final = torch.cat([bundle.train.final_index, bundle.val.final_index, bundle.test.final_index])
    assert final.min() == 6 and final.max() == 28 and len(set(final.tolist())) > 5
    dropped = UEAConfig(name="JapaneseVowels", missing_rate=0.3, intensity=True).load()
    assert dropped.input_channels == 1 + 12 + 12
    assert (dropped.train.values[..., 13].isnan().sum(1) == int(29 * 0.3)).all()


def test_drop_rows_is_kidgers_generator_order():
    x = torch.zeros(3, 10, 2)
    gen = torch.Generator().manual_seed(56789)
    expected = [torch.randperm(10, generator=gen)[:5] for _ in range(3)]
    out = drop_rows(x, 0.5)
    for xi, rows in zip(out, expected):
        assert set(torch.nonzero(xi[:, 0].isnan()).flatten().tolist()) == set(rows.tolist())
    assert not x.isnan().any()  # the input is left alone


def test_uea_name_is_checked():
    with pytest.raises(ValueError, match="did you mean 'EigenWorms'"):
        UEAConfig(name="Eigenworms")


def test_uea_label_not_declared(uea_dir):
    case = [np.arange(4.0)[None].repeat(6, 0)]
    write_ts(uea_dir / "BasicMotions_TRAIN.ts", case, ["Flying"], ["Standing", "Running"])
    write_ts(uea_dir / "BasicMotions_TEST.ts", case, ["Running"], ["Standing", "Running"])
    with pytest.raises(InputError, match="dataset 'uea': .*BasicMotions_TRAIN.ts, line 4: label "
                                         "'Flying' is not one of the declared classes"):
        UEAConfig(name="BasicMotions").load()


def test_split_recipes_match_the_authors_calls():
    assert [len(s) for s in lem_split(259)] == [181, 39, 39]
    assert [len(s) for s in nrde_split(259)] == [181, 39, 39]
    assert [len(s) for s in jacobian_ncde_split(2858)] == [2286, 228, 344]
    data = np.arange(259) * 10  # the original code split the data tensors themselves
    np.random.seed(0)
    train_val, test = train_test_split(data, test_size=0.15, shuffle=True)
    train, val = train_test_split(train_val, test_size=0.15 / 0.85, shuffle=True)
    ours = nrde_split(259)
    for theirs, index in zip((train, val, test), ours):
        np.testing.assert_array_equal(theirs, data[index])


def eigenworms_files(folder: Path, n_train=14, n_test=6, length=12, fmt="arff"):
    rng = np.random.default_rng(0)
    cases = [rng.normal(size=(6, length)) * 3 + 1 for _ in range(n_train + n_test)]
    labels = [str(1 + i % 5) for i in range(n_train + n_test)]
    writer = write_arff if fmt == "arff" else write_ts
    writer(folder / f"EigenWorms_TRAIN.{fmt}", cases[:n_train], labels[:n_train], "12345")
    writer(folder / f"EigenWorms_TEST.{fmt}", cases[n_train:], labels[n_train:], "12345")
    return np.stack(cases), labels


def test_eigenworms_small_arff(uea_dir):
    cases, labels = eigenworms_files(uea_dir)
    for split, sizes in (("lem", [len(s) for s in lem_split(20)]),
                         ("nrde", [len(s) for s in nrde_split(20)])):
        bundle = EigenWormsConfig(split=split).load()
        assert [len(bundle.train), len(bundle.val), len(bundle.test)] == sizes
        values = bundle.train.values
        assert values.shape[1:] == (12, 7)
        torch.testing.assert_close(values[0, :, 0], torch.linspace(0, 1, 12))
        flat = values[..., 1:].reshape(-1, 6)  # StandardScaler on train over N·L
        torch.testing.assert_close(flat.mean(0), torch.zeros(6), atol=1e-5, rtol=0)
        torch.testing.assert_close(flat.std(0, unbiased=False), torch.ones(6), atol=1e-4, rtol=0)
    train, val, test = lem_split(20)
    bundle = EigenWormsConfig().load()
    assert bundle.val.y.tolist() == [int(labels[i]) - 1 for i in val]


def test_eigenworms_imputation():
    x = np.array([[[np.nan, 1.0, np.nan], [2.0, 5.0, np.nan], [np.nan, np.nan, np.nan]]])
    out = impute(x)  # forward fill; leading gap → channel mean (2); all-NaN channel → 0
    np.testing.assert_array_equal(out[0], [[2.0, 1.0, 0.0], [2.0, 5.0, 0.0], [2.0, 5.0, 0.0]])


def test_eigenworms_bad_input(uea_dir):
    eigenworms_files(uea_dir)
    (uea_dir / "EigenWorms_TEST.arff").write_text("not an arff file\n")
    with pytest.raises(InputError, match="dataset 'eigenworms': .*EigenWorms_TEST.arff, line 1"):
        EigenWormsConfig().load()
    header = (uea_dir / "EigenWorms_TRAIN.arff").read_text().split("@data")[0]
    (uea_dir / "EigenWorms_TEST.arff").write_text(header + "@data\n'',1\n")
    with pytest.raises(InputError, match="EigenWorms_TEST.arff, line 6: a zero-length series"):
        EigenWormsConfig().load()
    eigenworms_files(uea_dir, length=12)
    short = np.zeros((6, 5))
    write_arff(uea_dir / "EigenWorms_TEST.arff", [short], ["1"], "12345")
    with pytest.raises(InputError, match="series of unequal length"):
        EigenWormsConfig().load()


def character_files(folder: Path, n=50):
    rng = np.random.default_rng(1)
    cases = [rng.normal(size=(3, 20 + i % 4)) for i in range(n)]
    labels = [str(1 + i % 20) for i in range(n)]
    classes = [str(c) for c in range(1, 21)]
    write_ts(folder / "CharacterTrajectories_TRAIN.ts", cases[:n // 2], labels[:n // 2], classes)
    write_ts(folder / "CharacterTrajectories_TEST.ts", cases[n // 2:], labels[n // 2:], classes)
    return cases, labels


def test_character_trajectories_paper_c(uea_dir):
    cases, labels = character_files(uea_dir)
    bundle = CharacterTrajectoriesConfig().load()
    train, val, test = jacobian_ncde_split(50)
    assert (len(bundle.train), len(bundle.val), len(bundle.test)) == (40, 4, 6)
    assert bundle.train.values.shape[1:] == (20, 3)  # truncated to the shortest; no time
    torch.testing.assert_close(bundle.test.values[0],
                               torch.from_numpy(cases[test[0]][:, :20].T).float())
    assert bundle.test.y[0].item() == int(labels[test[0]]) - 1


def test_character_trajectories_dropped_points(uea_dir):
    character_files(uea_dir, n=200)  # stratified 70/15/15 over 20 classes needs 10 per class
    bundle = CharacterTrajectoriesConfig(drop=0.5).load()
    assert bundle.input_channels == 4  # time + 3
    assert (bundle.train.values[..., 1].isnan().sum(1) >= 11).all()  # int(23 · 0.5) rows
    with pytest.raises(ValueError):
        CharacterTrajectoriesConfig(drop=0.4)
