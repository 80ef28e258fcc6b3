"""Write random data of the real shapes in the official formats, for timing only.

The recipes' fixed-step solvers (rk4) take the same steps whatever the values, so an epoch's
cost depends on the shapes only, and reproductions/epoch_timing.sh can time one epoch of a spec
whose data are absent here on these files:

* ``uea``: EigenWorms (259 series: 128 train, 131 test; 6 channels × 17,984 steps) and
  CharacterTrajectories (2,858 series of 3 channels; up to 182 steps, all 182 here). The
  CharacterTrajectories recipe's dopri5 takes as many steps as the path needs, so its series
  are smooth (one slow sinusoid per channel, as smooth as a pen's velocity and force) and its
  time is indicative only.
* ``speech``: the full Speech Commands v0.02 archive's 34,975 clips of 16,000 samples of the ten
  command words (3,498 for each of the first five words, 3,497 for the others), random 16-bit
  noise; the recipe trains on 24,482 of them (23 full batches of 1,024) as 161 MFCC frames
  each. The mirror holds only 1,000 clips of the official test set, a single partial batch.

The numbers trained on them mean nothing; label the runs with DATA_NOTE:

    .venv/bin/python reproductions/synthetic_mirror.py /tmp/repro/synthetic_mirror uea speech
    ZOO_DATA_MIRROR=/tmp/repro/synthetic_mirror DATA_NOTE="random series of the official \
shapes, for timing only" reproductions/epoch_timing.sh specs/irie2022/table2/depth2/delta.yaml
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import sys
import tarfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SPEECH_CLIPS = 34_975
sys.path.insert(0, str(ROOT / "tests"))  # the writers' modules import the tests' conftest


def _writers(name: str):
    """The official-format writers of the dataset tests (``tests/datasets/test_<name>.py``)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / f"tests/datasets/test_{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def uea(folder: Path) -> Path:
    writers = _writers("uea")
    folder = folder / "uea"
    folder.mkdir(parents=True, exist_ok=True)
    writers.eigenworms_files(folder, n_train=128, n_test=131, length=17984)
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 1.0, 182)
    cases = [np.sin(2 * np.pi * rng.uniform(0.5, 3.0, (3, 1)) * t
                    + rng.uniform(0, 2 * np.pi, (3, 1))) for _ in range(2858)]
    labels = [str(1 + i % 20) for i in range(2858)]
    classes = [str(c) for c in range(1, 21)]
    writers.write_ts(folder / "CharacterTrajectories_TRAIN.ts", cases[:1422], labels[:1422],
                     classes)
    writers.write_ts(folder / "CharacterTrajectories_TEST.ts", cases[1422:], labels[1422:],
                     classes)
    return folder


def speech(folder: Path) -> Path:
    writers = _writers("speech_commands")
    words = writers.WORDS
    counts = [SPEECH_CLIPS // len(words) + (i < SPEECH_CLIPS % len(words))
              for i in range(len(words))]
    path = folder / "speech_commands" / writers.FULL
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for word, count in zip(words, counts):
            for i in range(count):
                data = writers.wav_bytes(rng.integers(-3000, 3000, 16000))
                info = tarfile.TarInfo(f"{word}/{i:05d}_nohash_0.wav")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


WRITERS = {"uea": uea, "speech": speech}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the mirror folder (ZOO_DATA_MIRROR)")
    parser.add_argument("datasets", nargs="+", choices=sorted(WRITERS))
    args = parser.parse_args()
    for name in args.datasets:
        print(f"wrote {WRITERS[name](args.folder)}")


if __name__ == "__main__":
    main()
