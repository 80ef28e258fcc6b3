"""Per spec in an MLflow store: runs, epochs trained, seconds per training epoch, run wall time.

    .venv/bin/python reproductions/summarise_runs.py sqlite:////tmp/repro/mlruns.db [ID_PREFIX]
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict

from zoo.results.runs import finished_runs

uri = sys.argv[1]
prefix = sys.argv[2] if len(sys.argv) > 2 else ""
rows = defaultdict(list)
for run in finished_runs(uri, "tags.`zoo.reproduces` LIKE '%'"):
    rid = run.data.tags["zoo.reproduces"]
    if not rid.startswith(prefix) or run.data.tags.get("zoo.smoke") == "true":
        continue
    epochs = run.data.params.get("train.epochs", "-")
    wall = (run.info.end_time - run.info.start_time) / 1000
    rows[rid].append((epochs, run.data.metrics.get("time/epoch_seconds"), wall))
print("| id | runs | epochs | s / epoch (last) | wall per run (s) |")
print("|---|---|---|---|---|")
for rid, runs in sorted(rows.items()):
    eps = sorted({e for e, _, _ in runs})
    per = [s for _, s, _ in runs if s is not None]
    per_text = f"{statistics.mean(per):.1f}" if per else "-"
    print(f"| {rid} | {len(runs)} | {', '.join(eps)} | {per_text} | "
          f"{statistics.mean(w for _, _, w in runs):.0f} |")
