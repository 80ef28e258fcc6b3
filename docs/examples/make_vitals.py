"""Write the example data of docs/own-data.md's walk-through into OUT_DIR (default: .).

    python docs/examples/make_vitals.py OUT_DIR

* ``vitals.csv``: 60 patients (30 ``well``, 30 ``sick``), each measured 4 to 7 times at its own
  hours between 0 and 2, the temperature missing at about a third of the rows; one row per
  (patient, hour), columns ``patient,hour,hr,temp,outcome``;
* ``new.csv``: 10 new patients, the same columns without ``outcome``;
* ``labelled.csv``: 20 other new patients, with ``outcome``.

Sick patients have a higher heart rate and temperature. Only the standard library is used; the
files are the same on every run.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HOURS = [h / 5 for h in range(11)]  # 0, 0.2, ..., 2


def rows(prefix: str, n: int, rng: random.Random, labels: bool) -> list[str]:
    out = []
    for i in range(n):
        sick = i % 2
        for hour in sorted(rng.sample(HOURS, rng.randint(4, 7))):
            hr = 60 + 10 * sick + rng.gauss(0, 2)
            temp = "" if rng.random() < 0.3 else f"{36.6 + 0.9 * sick + rng.gauss(0, 0.2):.2f}"
            row = f"{prefix}{i},{hour:g},{hr:.2f},{temp}"
            out.append(row + (f",{'sick' if sick else 'well'}" if labels else ""))
    return out


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    folder = Path(argv[0] if argv else ".")
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    header = "patient,hour,hr,temp"
    files = {"vitals.csv": [header + ",outcome", *rows("p", 60, rng, labels=True)],
             "new.csv": [header, *rows("n", 10, rng, labels=False)],
             "labelled.csv": [header + ",outcome", *rows("q", 20, rng, labels=True)]}
    for name, lines in files.items():
        (folder / name).write_text("\n".join(lines) + "\n")
        print(f"wrote {folder / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
