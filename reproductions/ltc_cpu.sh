#!/usr/bin/env bash
# Short-budget CPU reproductions of paper b (Hasani et al., LTC) Table 6 and Table 3 (gesture, ozone,
# traffic, occupancy),
# 5 seeds each, with FEWER EPOCHS than the paper's 200 (see docs/reproduction.md).
# Usage: reproductions/ltc_cpu.sh [STORE]   (default store: /tmp/repro/mlruns.db, outside the repo)
# Two runs at a time (2 CPU cores). Equivalent with the sweep command:
#   zoo sweep specs/hasani2021/table6/half-cheetah --seeds 1-5 --workers 2 \
#     --tracking-uri sqlite:///STORE -o train.epochs=5
set -euo pipefail
cd "$(dirname "$0")/.."
STORE=${1:-/tmp/repro/mlruns.db}
mkdir -p "$(dirname "$STORE")"
export ZOO_DATA_MIRROR=${ZOO_DATA_MIRROR:-$(pwd)/../shared/data}
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
URI="sqlite:///$STORE"
S=specs/hasani2021
jobs() {  # EPOCHS SPEC...: one line per spec and seed
  local epochs=$1; shift
  for spec in "$@"; do for seed in 1 2 3 4 5; do echo "$spec $seed $epochs"; done; done
}
{
  jobs "${EPOCHS_CHEETAH:-5}" $S/table6/half-cheetah/{ltc,lstm,ctrnn,node,ctgru}.yaml
  jobs "${EPOCHS_GESTURE:-10}" $S/table3/gesture/{ltc,lstm}.yaml
  jobs "${EPOCHS_OZONE:-4}" $S/table3/ozone/{ltc,lstm}.yaml
  jobs "${EPOCHS_TRAFFIC:-3}" $S/table3/traffic/{ltc,lstm}.yaml
  jobs "${EPOCHS_OCCUPANCY:-10}" $S/table3/occupancy/{ltc,lstm}.yaml
} | xargs -P 2 -L 1 sh -c 'echo "start $0 seed $1 ($2 epochs) $(date +%T)"; \
    .venv/bin/zoo run "$0" --seed "$1" -o train.epochs="$2" --tracking-uri "'"$URI"'" \
    --no-progress 2>&1 | grep -E "^run |rror" ; echo "done  $0 seed $1 $(date +%T)"'
