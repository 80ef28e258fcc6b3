"""UEA .ts/.arff readers: small files in the official formats, the mirror's real files, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from zoo.data.uea_format import padded, read_arff, read_ts, read_uea
from zoo.errors import InputError

from conftest import DATA_MIRROR, without_mirror

MIRROR = DATA_MIRROR / "uea"

TS = """# a comment
@problemName Tiny
@timeStamps false
@missing true
@univariate false
@dimensions 2
@equalLength false
@classLabel true a b
@data
1,2,3:4,5,6:a
7,?:9,10:b
"""

ARFF = """@relation Tiny
@attribute relationalAtt relational
  @attribute t0 numeric
  @attribute t1 numeric
  @attribute t2 numeric
@end relationalAtt
@attribute target {a,b}
@data
'1,2,3\\n4,5,6',a
'7,?\\n9,10',b
"""


def write(tmp_path, name, text) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_ts_and_arff_read_the_same_cases(tmp_path):
    for reader, name, text in ((read_ts, "t.ts", TS), (read_arff, "t.arff", ARFF)):
        got = reader(write(tmp_path, name, text), "tiny")
        assert got.labels == ["a", "b"] and got.class_labels == ("a", "b")
        np.testing.assert_array_equal(got.series[0], [[1, 2, 3], [4, 5, 6]])
        assert got.series[1].shape == (2, 2) and math.isnan(got.series[1][0, 1])


def test_univariate_arff(tmp_path):
    text = "@relation U\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n" \
           "@data\n1.5,2.5,x\n3,4,y\n"
    got = read_arff(write(tmp_path, "u.arff", text), "u")
    np.testing.assert_array_equal(got.series[1], [[3, 4]])


def test_padding_with_nan_or_last_value(tmp_path):
    got = read_ts(write(tmp_path, "t.ts", TS), "tiny")
    x, lengths = padded(got.series, "nan")
    assert x.shape == (2, 3, 2) and lengths.tolist() == [3, 2]
    assert x[1, 2].isnan().all()
    x, _ = padded(got.series, "last")  # each channel repeats its last value (here NaN, 10)
    assert x[1, 2, 0].isnan() and x[1, 2, 1].item() == 10.0


def test_nan_only_channel_is_read_as_nan(tmp_path):
    text = TS.replace("7,?:9,10:b", "?,?:9,10:b")
    got = read_ts(write(tmp_path, "t.ts", text), "tiny")
    assert np.isnan(got.series[1][0]).all()


@pytest.mark.parametrize("bad, message", [
    ("1,2,3:4,5,6:c", "label 'c' is not one of the declared classes"),
    (":4,5,6:a", "zero-length series"),
    ("1,2,3:4,5:a", "channels of unequal length"),
    ("1,x,3:4,5,6:a", "not a number"),
])
def test_bad_ts_rows_name_dataset_file_and_line(tmp_path, bad, message):
    path = write(tmp_path, "t.ts", TS.replace("1,2,3:4,5,6:a", bad))
    with pytest.raises(InputError, match=message) as err:
        read_ts(path, "tiny")
    assert "dataset 'tiny'" in str(err.value) and f"{path}, line 10" in str(err.value)


def test_wrong_format_files(tmp_path):
    with pytest.raises(InputError, match="no @data section"):
        read_ts(write(tmp_path, "x.ts", "@problemName X\n"), "tiny")
    with pytest.raises(InputError, match="expected an @tag"):
        read_ts(write(tmp_path, "y.ts", "PK\x03\x04 binary junk\n"), "tiny")
    with pytest.raises(InputError, match="unknown format '.csv'"):
        read_uea(write(tmp_path, "z.csv", "1,2\n"), "tiny")
    with pytest.raises(InputError, match="no class labels"):
        read_ts(write(tmp_path, "r.ts", TS.replace("@classLabel true a b", "@classLabel false")
                      .replace(":a\n", "\n").replace(":b\n", "\n")), "tiny")


@without_mirror("uea")
def test_real_basic_motions_and_japanese_vowels():
    for split, n in (("TRAIN", 40), ("TEST", 40)):
        got = read_uea(MIRROR / f"BasicMotions_{split}.ts", "uea")
        x, lengths = padded(got.series)
        assert x.shape == (n, 100, 6) and set(lengths.tolist()) == {100}
        assert got.class_labels == ("Standing", "Running", "Walking", "Badminton")
    sizes = {}
    for split in ("TRAIN", "TEST"):
        got = read_uea(MIRROR / f"JapaneseVowels_{split}.ts", "uea")
        x, lengths = padded(got.series)
        sizes[split] = len(got.series)
        assert x.shape[2] == 12 and len(got.class_labels) == 9
        assert 7 <= lengths.min() and lengths.max() <= 29
        for i in range(len(got.series)):  # NaN exactly after each series' last step
            assert not x[i, :lengths[i]].isnan().any() and x[i, lengths[i]:].isnan().all()
    assert sizes == {"TRAIN": 270, "TEST": 370}
