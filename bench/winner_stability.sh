#!/usr/bin/env bash
# How stable a declared winner is: the default batch tuned ROUNDS times (default 5) into fresh
# databases with the same seed, then per kernel how often its most frequent winner was chosen.
# Usage: bench/winner_stability.sh [ROUNDS] [TUNEBED]
set -euo pipefail
rounds=${1:-5}
tunebed=${2:-$(dirname "$0")/../build/harness/tunebed}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for ((i = 1; i <= rounds; i++)); do
  TUNEBED_CACHE_DIR=$scratch/cache "$tunebed" tune --db "$scratch/$i.db" --progress none > /dev/null
  sqlite3 -separator ' ' "$scratch/$i.db" "SELECT kernel_hash, opts FROM v_best" >> "$scratch/winners"
done
# per kernel: the count of its most frequent winner, and how many distinct winners it had
sort "$scratch/winners" | uniq -c | awk '
  { if ($1 > top[$2]) top[$2] = $1; distinct[$2]++ }
  END { for (k in top) { same += top[k]; n++; d += distinct[k] }
        printf "%d kernels x %d rounds: the most frequent winner %d times in %d, %d distinct winners\n",
          n, '"$rounds"', same, n * '"$rounds"', d }'
