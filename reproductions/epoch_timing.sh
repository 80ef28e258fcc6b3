#!/usr/bin/env bash
# One training epoch of the specs whose full data or compute is not available here, on the
# partial copies in the local mirror (Speech Commands: the 1,000-clip test subset; Sepsis: set B
# and 87 % of set A), to extrapolate the time of a full run (docs/reproduction.md).
# Usage: reproductions/epoch_timing.sh SPEC... ; prints time/epoch_seconds and the batch count.
set -euo pipefail
cd "$(dirname "$0")/.."
export ZOO_DATA_MIRROR=${ZOO_DATA_MIRROR:-$(pwd)/../shared/data}
STORE=${STORE:-/tmp/repro/timing.db}
for spec in "$@"; do
  start=$(date +%s)
  .venv/bin/zoo run "$spec" --seed 1 -o train.epochs=1 -o train.eval_shuffle_drop_last=false \
    --tracking-uri "sqlite:///$STORE" --no-progress 2>&1 | grep -E "^run |rror|partial" || true
  echo "$spec: $(( $(date +%s) - start )) s wall for the whole command"
done
.venv/bin/python - "$STORE" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("select r.name, m.value from metrics m join runs r on r.run_uuid = m.run_uuid "
                   "where m.key = 'time/epoch_seconds' order by r.start_time")
for name, value in rows:
    print(f"{name}: {value:.1f} s per training epoch")
PY
