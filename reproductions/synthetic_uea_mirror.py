"""Write random series of the real shapes in the official UEA formats, for timing only.

EigenWorms (6 channels × 17,984 steps) and CharacterTrajectories (3 channels × 182 steps, 2,858
series) are not in the local mirror. Their per-epoch cost depends on the shapes, not the values,
so reproductions/epoch_timing.sh can time one epoch on these files (ZOO_DATA_MIRROR=FOLDER).
The numbers trained on them mean nothing.

    .venv/bin/python reproductions/synthetic_uea_mirror.py /tmp/repro/synthetic_mirror [N_EIGENWORMS]
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("uea_writers", ROOT / "tests/datasets/test_uea.py")
writers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(writers)

folder = Path(sys.argv[1]) / "uea"
folder.mkdir(parents=True, exist_ok=True)
n_worms = int(sys.argv[2]) if len(sys.argv) > 2 else 40
writers.eigenworms_files(folder, n_train=n_worms // 2, n_test=n_worms - n_worms // 2,
                         length=17984)
rng = np.random.default_rng(0)
cases = [rng.normal(size=(3, 182)) for _ in range(2858)]
labels = [str(1 + i % 20) for i in range(2858)]
classes = [str(c) for c in range(1, 21)]
writers.write_ts(folder / "CharacterTrajectories_TRAIN.ts", cases[:1422], labels[:1422], classes)
writers.write_ts(folder / "CharacterTrajectories_TEST.ts", cases[1422:], labels[1422:], classes)
print(f"wrote {folder}")
