#!/usr/bin/env bash
# The cost of a spec whose full run does not fit here: one training epoch of the shipped spec
# (seed 1), on the data of the local mirror (partial copies are labelled by their loaders).
# The runs change only train.epochs (and let training and evaluation keep a last incomplete
# batch, which a subset smaller than one batch needs; a full epoch then has at most one more
# partial batch than the recipe's), so `zoo report --export ... --timings DIR` records them
# for their cost per epoch; they are never results.
# Each run uses THREADS CPU threads (default 1, as a sweep worker has where two runs share two
# cores; the record keeps the count). DATA_NOTE labels data that are not the named dataset's
# (zoo run --data-note), as for the random series of reproductions/synthetic_mirror.py.
# DEVICE (cpu, cuda) overrides the specs' device; ZOO is the command (default .venv/bin/zoo).
# Usage: STORE=/tmp/repro/timing.db [THREADS=1] [DATA_NOTE=TEXT] [DEVICE=cuda]
#        reproductions/epoch_timing.sh SPEC...
set -euo pipefail
cd "$(dirname "$0")/.."
export ZOO_DATA_MIRROR=${ZOO_DATA_MIRROR:-$(pwd)/../shared/data}
STORE=${STORE:-/tmp/repro/timing.db}
mkdir -p "$(dirname "$STORE")"
for spec in "$@"; do
  start=$(date +%s)
  ${ZOO:-.venv/bin/zoo} run "$spec" --seed 1 --threads "${THREADS:-1}" -o train.epochs=1 -o train.drop_last=false \
    -o train.eval_shuffle_drop_last=false \
    --tracking-uri "sqlite:///$STORE" --no-progress ${DATA_NOTE:+--data-note "$DATA_NOTE"} \
    ${DEVICE:+--device "$DEVICE"}
  echo "$spec: $(( $(date +%s) - start )) s wall for the whole command"
done
