#!/usr/bin/env bash
# The replay table of README.md ("Comparing search strategies offline"): BEAM width 4 tunes 53
# kernels (34 reduction kernels of tinygrad's dataset and the ten library workloads), the model's
# training data adds 150 other reduction kernels of the dataset (BEAM width 2, budget 150),
# the model strategy's replay fills what it and BEAM proposed that the data lacks, then each
# strategy is replayed against BEAM width 4's best, the model trained on the other kernels. Usage:
#   bench/replay_table.sh [DATASET] [OUT]
# DATASET: tinygrad's sops.gz (default ../shared/data/tinygrad-sops.gz); OUT: where the database
# and the per-kernel tables go (default a new temporary folder; an OUT/data.db already there is
# replayed again, not re-tuned). TUNEBED: the binary (default build/harness/tunebed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dataset=$(realpath "${1:-$here/../shared/data/tinygrad-sops.gz}")
out=${2:-$(mktemp -d)}
mkdir -p "$out"
tunebed=${TUNEBED:-$here/build/harness/tunebed}
export TUNEBED_CACHE_DIR=${TUNEBED_CACHE_DIR:-$out/cache}
db=$out/data.db
train=$out/train.db
if [[ ! -f $db ]]; then
  {
    echo "corpus $dataset sample=34 seed=1 filter=reduce"
    printf '%s\n' matmul batched_matmul conv2d depthwise_conv layernorm softmax sum max mlp attention
  } > "$out/manifest.txt"
  start=$SECONDS
  "$tunebed" tune --manifest "$out/manifest.txt" --strategy beam --width 4 --budget 400 --seconds 600 \
    --db "$db" --progress none > "$out/tune.txt"
  echo "data: $(sqlite3 "$db" 'SELECT count(*) FROM candidates') candidates in $((SECONDS - start)) s"
  # The model's training data: the BEAM data and a batch of other kernels (a few overlap; a replay
  # never trains on the kernel it replays).
  echo "corpus $dataset sample=150 seed=2 filter=reduce" > "$out/others.txt"
  start=$SECONDS
  "$tunebed" tune --manifest "$out/others.txt" --strategy beam --width 2 --budget 150 --seconds 900 \
    --db "$out/others.db" --progress none > "$out/others-tune.txt"
  "$tunebed" db merge --out "$train" --in "$db" --in "$out/others.db" > /dev/null
  echo "training data: $(sqlite3 "$train" 'SELECT count(DISTINCT kernel_id) FROM candidates') kernels," \
    "$(sqlite3 "$out/others.db" 'SELECT count(*) FROM candidates') candidates of others in $((SECONDS - start)) s"
  start=$SECONDS
  "$tunebed" replay --db "$db" --train-db "$train" --strategy model --target beam:4 --budget 400 --fill \
    > "$out/fill.txt"
  echo "filled: $(sqlite3 "$db" 'SELECT count(*) FROM candidates') candidates after $((SECONDS - start)) s"
fi
# One row of README's table from a replay's per-kernel table (kernel device stored proposed missing
# best_us found_us target_us to_5pct wall_s search_s), against BEAM's proposals per kernel.
rows() { awk 'FNR > 1 && $1 ~ /^[0-9a-f]+$/' "$out/$1.txt"; }
summarize() {  # summarize NAME
  local beam_total median
  beam_total=$(rows beam | awk '{ s += $4 } END { print s }')
  median=$(rows "$1" | awk '$9 != "-" { print $9 }' | sort -n |
    awk '{ v[NR] = $1 } END { print NR ? (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) : "-" }')
  { rows beam | sed 's/^/beam /'; rows "$1"; } | awk -v name="$1" -v beam_total="$beam_total" -v median="$median" '
    $1 == "beam" { beam[$2] = $5; next }
    {
      n++; proposed += $4; missing += $5; search += $11
      if ($7 != "-" && $8 > 0) { logs += log($7 / $8); found++ }
      if ($9 != "-") { within++; wall += $10; if (4 * $9 <= beam[$1]) quarter++ }
    }
    END {
      printf "| %s | %d / %d | %d / %d | %.2f | %d (%.1f), %.2f | %s | %.1f | %.1f | %d |\n", name, within, n, quarter, n,
        exp(logs / found), proposed, proposed / n, proposed / beam_total, median, wall, search, missing
    }'
}
replay() {  # replay NAME ARGS...: one strategy's table in OUT/NAME.txt, its summary lines here
  local name=$1
  shift
  "$tunebed" replay --db "$db" --target beam:4 --budget 400 "$@" > "$out/$name.txt"
  echo "== $name: $(tail -n 2 "$out/$name.txt" | tr '\n' ' ')"
}
replay beam --strategy beam --width 4
replay random --strategy random --seed 1
replay annealing --strategy annealing --seed 1
replay model --strategy model --train-db "$train"
replay model-own --strategy model
replay ridge --strategy model --cost-model ridge --train-db "$train"
# The model's found best against BEAM's, re-timed head to head on this machine (replay --confirm):
# a stored median is one draw, and BEAM's best the luckiest of the tens it measured.
"$tunebed" replay --db "$db" --target beam:4 --budget 400 --strategy model --train-db "$train" --confirm \
  > "$out/confirm.txt"
echo "== confirm: $(tail -n 3 "$out/confirm.txt" | head -n 1)"
echo "| strategy | within 5% of BEAM's best | within 5% in a quarter of BEAM's candidates | found / target (geometric mean) | candidates proposed (per kernel), share of BEAM's | median to 5% (where reached) | wall_s to 5% | search_s | missing |"
# fill: the model's replay at the end of its --fill, which measured what it proposed (exact, but
# for what 4 rounds did not reach); model: the same model replayed again (train.db predates the
# fill, so on fresh data it equals fill; on an OUT replayed again it is this binary's);
# model-own: trained on the other kernels of the filled BEAM data alone.
for name in beam random annealing fill model model-own ridge; do [[ -f $out/$name.txt ]] && summarize "$name"; done
# How each model ranks every stored candidate of each kernel, with no search (`tunebed rank`).
for model in xgboost ridge; do
  "$tunebed" rank --db "$db" --train-db "$train" --cost-model "$model" > "$out/rank-$model.txt" 2> /dev/null
  echo "== rank: $(tail -n 1 "$out/rank-$model.txt")"
done
echo "tables in $out"
