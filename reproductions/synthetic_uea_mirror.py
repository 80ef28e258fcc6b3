"""Write random series of the real shapes in the official UEA formats, for timing only.

EigenWorms (259 series: 128 train, 131 test; 6 channels × 17,984 steps) and
CharacterTrajectories (2,858 series of 3 channels; up to 182 steps, all 182 here) are not in the
local mirror. With a fixed-step solver (the EigenWorms recipe: rk4) an epoch's cost depends on
the shapes only, so reproductions/epoch_timing.sh can time one epoch on these files. The
CharacterTrajectories recipe's dopri5 takes as many steps as the path needs, so the series are
smooth (one slow sinusoid per channel, as smooth as a pen's velocity and force) and its time is
indicative only. The numbers trained on them mean nothing; label the runs with DATA_NOTE:

    .venv/bin/python reproductions/synthetic_uea_mirror.py /tmp/repro/synthetic_mirror
    ZOO_DATA_MIRROR=/tmp/repro/synthetic_mirror DATA_NOTE="random series of the official \
shapes, for timing only" reproductions/epoch_timing.sh specs/irie2022/table2/depth2/delta.yaml
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the writers' module imports the tests' conftest
spec = importlib.util.spec_from_file_location("uea_writers", ROOT / "tests/datasets/test_uea.py")
writers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(writers)

folder = Path(sys.argv[1]) / "uea"
folder.mkdir(parents=True, exist_ok=True)
writers.eigenworms_files(folder, n_train=128, n_test=131, length=17984)
rng = np.random.default_rng(0)
t = np.linspace(0.0, 1.0, 182)
cases = [np.sin(2 * np.pi * rng.uniform(0.5, 3.0, (3, 1)) * t + rng.uniform(0, 2 * np.pi, (3, 1)))
         for _ in range(2858)]
labels = [str(1 + i % 20) for i in range(2858)]
classes = [str(c) for c in range(1, 21)]
writers.write_ts(folder / "CharacterTrajectories_TRAIN.ts", cases[:1422], labels[:1422], classes)
writers.write_ts(folder / "CharacterTrajectories_TEST.ts", cases[1422:], labels[1422:], classes)
print(f"wrote {folder}")
