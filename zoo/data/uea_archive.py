"""Files of the UEA multivariate archive (timeseriesclassification.com) and how to read them.

Each dataset ``<name>`` has ``<name>_TRAIN`` and ``<name>_TEST`` files in ``.ts`` and ``.arff``
form, inside a per-dataset zip and inside the whole-archive zips ``Multivariate2018_ts.zip`` /
``Multivariate2018_arff.zip`` (which the NCDE and FWP code downloaded). Some datasets also (or
only) come as one univariate ARFF file per dimension, ``<name>Dimension<k>_<split>.arff``
(k = 1, 2, …). A mirror keeps the extracted files under ``uea/``. No checksums are published for
them.

:func:`split_files` picks, per split, what the cache or mirror holds, preferring ``.ts``, then
the multivariate ``.arff``, then the per-dimension ``.arff`` files; with none of them it names the
``.ts`` file (downloaded). :func:`present_names` lists the datasets whose files are there.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from ..errors import InputError
from .fetch import data_home, fetch, locate, mirror_root
from .records import DatasetRecord, RemoteFile
from .uea_format import UEASeries, read_uea

SITE = "https://www.timeseriesclassification.com"

#: the 30 datasets of the UEA multivariate archive (2018) and their numbers of classes
UEA_CLASSES = {
    "ArticularyWordRecognition": 25, "AtrialFibrillation": 3, "BasicMotions": 4,
    "CharacterTrajectories": 20, "Cricket": 12, "DuckDuckGeese": 5, "EigenWorms": 5,
    "Epilepsy": 4, "ERing": 6, "EthanolConcentration": 4, "FaceDetection": 2,
    "FingerMovements": 2, "HandMovementDirection": 4, "Handwriting": 26, "Heartbeat": 2,
    "InsectWingbeat": 10, "JapaneseVowels": 9, "Libras": 15, "LSST": 14, "MotorImagery": 2,
    "NATOPS": 6, "PEMS-SF": 7, "PenDigits": 10, "PhonemeSpectra": 39, "RacketSports": 4,
    "SelfRegulationSCP1": 2, "SelfRegulationSCP2": 2, "SpokenArabicDigits": 10,
    "StandWalkJump": 3, "UWaveGestureLibrary": 8,
}
LICENCE = "free for research use; cite the archive and the dataset's donors"
CITATION = ("A. Bagnall et al., The UEA multivariate time series classification archive, 2018, "
            "arXiv:1811.00075")


def uea_file(name: str, split: str, fmt: str, dimension: int | None = None) -> RemoteFile:
    """``<name>_<split>.<fmt>`` (``<name>Dimension<k>_<split>.arff`` for one ``dimension``) from
    the per-dataset zip, else from the whole-archive zip."""
    member = f"{name}{f'Dimension{dimension}' if dimension else ''}_{split}.{fmt}"
    return RemoteFile(member, (f"{SITE}/aeon-toolkit/{name}.zip",
                               f"{SITE}/Downloads/Archives/Multivariate2018_{fmt}.zip"),
                      note="no checksum is published", member=member, part=name)


def uea_record(record_name: str, title: str, names, fmt: str, notes: str = "") -> DatasetRecord:
    """A record holding the train and test files of ``names`` in format ``fmt``."""
    return DatasetRecord(
        name=record_name, title=title,
        files=tuple(uea_file(n, s, fmt) for n in names for s in ("TRAIN", "TEST")),
        licence=LICENCE, citation=CITATION, homepage=SITE, mirror_subdir="uea", notes=notes)


def train_test_paths(record: DatasetRecord, name: str, fmt: str) -> list[Path]:
    """Local paths of ``<name>_TRAIN.<fmt>`` and ``<name>_TEST.<fmt>`` (fetched if needed)."""
    return [fetch(record, f"{name}_{split}.{fmt}") for split in ("TRAIN", "TEST")]


def load_train_test(record: DatasetRecord, name: str, fmt: str
                    ) -> tuple[UEASeries, UEASeries, list[Path]]:
    """Fetch and parse ``<name>_TRAIN`` and ``<name>_TEST`` of ``record``."""
    paths = train_test_paths(record, name, fmt)
    train, test = (read_uea(p, record.name) for p in paths)
    return train, test, paths


#: ``<name>_TRAIN.ts``, ``<name>_TRAIN.arff`` or ``<name>Dimension<k>_TRAIN.arff``
_TRAIN_FILE = re.compile(r"^(?P<name>.+?)(?:Dimension\d+)?_TRAIN\.(?:ts|arff)$")


def search_folders(record: DatasetRecord) -> list[Path]:
    """The cache and (when set) mirror folders where ``record``'s files are looked for."""
    folders = [data_home() / record.mirror_subdir]
    if (root := mirror_root()) is not None:
        folders.append(root / record.mirror_subdir)
    return folders


def present_names(record: DatasetRecord) -> list[str]:
    """Names of the datasets with a ``_TRAIN`` file (any format) in the cache or mirror."""
    names = set()
    for folder in search_folders(record):
        if folder.is_dir():
            names.update(m["name"] for p in folder.iterdir() if (m := _TRAIN_FILE.match(p.name)))
    return sorted(names)


def _with(record: DatasetRecord, files) -> DatasetRecord:
    return dataclasses.replace(record, files=tuple(files))


def _local(record: DatasetRecord, rf: RemoteFile) -> bool:
    return locate(_with(record, [rf]), rf.name) is not None


def split_files(record: DatasetRecord, name: str, split: str) -> tuple[str, list[RemoteFile]]:
    """``(format, files)`` to read for ``split`` of ``name``: format ``"ts"``, ``"arff"`` or
    ``"arff per dimension"`` (see the module docstring)."""
    for fmt in ("ts", "arff"):
        if _local(record, rf := uea_file(name, split, fmt)):
            return fmt, [rf]
    dims = []
    while _local(record, rf := uea_file(name, split, "arff", len(dims) + 1)):
        dims.append(rf)
    if dims:
        return "arff per dimension", dims
    return "ts", [uea_file(name, split, "ts")]


def has_files(record: DatasetRecord, name: str) -> bool:
    """Whether the cache or mirror holds a ``_TRAIN`` file of ``name`` in any format."""
    return any(_local(record, rf) for rf in split_files(record, name, "TRAIN")[1])


def _stack_dimensions(record: DatasetRecord, name: str, parts: list[UEASeries],
                      paths: list[Path]) -> UEASeries:
    """One multivariate :class:`UEASeries` from per-dimension files that must agree on the
    number of cases, their labels and their lengths."""
    first = parts[0]

    def fail(path: Path, message: str):
        raise InputError(f"dataset '{record.name}': {path}: {message}, unlike {paths[0]} (the "
                         f"per-dimension files of {name} must hold the same cases)")

    for part, path in zip(parts[1:], paths[1:]):
        if len(part.labels) != len(first.labels):
            fail(path, f"{len(part.labels)} cases, {len(first.labels)} in the first dimension")
        for i, (a, b) in enumerate(zip(first.labels, part.labels)):
            if a != b:
                fail(path, f"case {i + 1} has label '{b}', '{a}' in the first dimension")
        for i, (a, b) in enumerate(zip(first.series, part.series)):
            if a.shape[1] != b.shape[1]:
                fail(path, f"case {i + 1} has length {b.shape[1]}, {a.shape[1]} in the first "
                           f"dimension")
    classes = tuple(dict.fromkeys(c for part in parts for c in part.class_labels))
    series = [np.concatenate([part.series[i] for part in parts]) for i in range(len(first.series))]
    return UEASeries(series, list(first.labels), classes)


def load_split(record: DatasetRecord, name: str, split: str
               ) -> tuple[UEASeries, str, list[Path]]:
    """``(cases, format, paths read)`` of ``split`` of ``name`` (see :func:`split_files`)."""
    fmt, files = split_files(record, name, split)
    local = _with(record, files)
    paths = [fetch(local, rf.name) for rf in files]
    parts = [read_uea(p, record.name) for p in paths]
    if len(parts) == 1:
        return parts[0], fmt, paths
    return _stack_dimensions(record, name, parts, paths), fmt, paths


def declared_classes(record: DatasetRecord, name: str) -> tuple[str, ...]:
    """The class labels that the header of ``name``'s training file declares."""
    fmt, files = split_files(record, name, "TRAIN")
    local = _with(record, files)
    return read_uea(fetch(local, files[0].name), record.name, header_only=True).class_labels
