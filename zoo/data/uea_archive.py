"""Files of the UEA multivariate archive (timeseriesclassification.com) and how to read them.

Each dataset ``<name>`` has ``<name>_TRAIN`` and ``<name>_TEST`` files in ``.ts`` and ``.arff``
form, inside a per-dataset zip and inside the whole-archive zips ``Multivariate2018_ts.zip`` /
``Multivariate2018_arff.zip`` (which the NCDE and FWP code downloaded). A mirror keeps the
extracted files under ``uea/``. No checksums are published for them.
"""

from __future__ import annotations

from pathlib import Path

from .fetch import fetch
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


def uea_file(name: str, split: str, fmt: str) -> RemoteFile:
    """``<name>_<split>.<fmt>`` from the per-dataset zip, else from the whole-archive zip."""
    member = f"{name}_{split}.{fmt}"
    return RemoteFile(member, (f"{SITE}/aeon-toolkit/{name}.zip",
                               f"{SITE}/Downloads/Archives/Multivariate2018_{fmt}.zip"),
                      note="no checksum is published", member=member)


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
