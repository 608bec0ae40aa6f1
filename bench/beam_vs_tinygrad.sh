#!/usr/bin/env bash
# BEAM width 2 on a 512³ float32 matmul: tunebed (default check, then --check-budget 2^20) against
# tinygrad at the seed (BEAM=2 DEV=CPU, `(a @ b).realize()`), cold caches each, one script so that
# the machine's load is shared. Usage:
#   bench/beam_vs_tinygrad.sh TINYGRAD_CHECKOUT [ROUNDS] [TUNEBED...]
# TINYGRAD_CHECKOUT: tinygrad at 7b16fadd (../shared/seed/README.md); TUNEBED: one or more tunebed
# binaries, run alternately in each round (default build/harness/tunebed). Prints one line a run.
set -euo pipefail
tinygrad=$(realpath "$1")
rounds=${2:-3}
shift $(($# >= 2 ? 2 : 1))
bins=("$@")
((${#bins[@]} > 0)) || bins=("$(dirname "$0")/../build/harness/tunebed")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TUNEBED_CACHE_DIR=$scratch/cache
uptime
for ((round = 1; round <= rounds; round++)); do
  for check in default 1048576; do
    for bin in "${bins[@]}"; do
      rm -rf "$scratch/tb.db" "$TUNEBED_CACHE_DIR"
      extra=()
      [[ $check != default ]] && extra=(--check-budget "$check")
      start=$(date +%s.%N)
      "$bin" tune matmul:M=512,N=512,K=512,dtype=float32 --strategy beam --width 2 --budget 100000 \
        --seconds 3600 --db "$scratch/tb.db" "${extra[@]}" > "$scratch/out" 2>&1
      wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
      n=$(sqlite3 "$scratch/tb.db" "SELECT count(*) FROM candidates")
      printf 'tunebed round=%d check=%s wall=%.2f s candidates=%s tuned_us=%s (%s)\n' "$round" "$check" "$wall" \
        "$n" "$(tail -n 1 "$scratch/out" | awk '{print $4}')" "$bin"
    done
  done
done
for ((round = 1; round <= 2; round++)); do
  rm -rf "$scratch/tg"
  start=$(date +%s.%N)
  kernel=$(cd "$tinygrad" && XDG_CACHE_HOME=$scratch/tg CACHEDB=$scratch/tg/db.sqlite BEAM=2 DEV=CPU DEBUG=2 \
    PYTHONPATH=. python3 -c "
from tinygrad import Tensor
a = Tensor.rand(512, 512).realize(); b = Tensor.rand(512, 512).realize()
(a @ b).realize()" 2>&1 | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' | grep __matmul__ | tail -n 1 | grep -o 'tm *[0-9.]*[mu]s' || true)
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  printf 'tinygrad round=%d wall=%.2f s kernel %s\n' "$round" "$wall" "$kernel"
done
uptime
