#!/usr/bin/env bash
# Data-parallel training throughput (issue 19): for each preset and model, lmm-train's samples/s
# as 1 rank x 1 thread, 1 rank x 2 threads and 2 ranks x 1 thread (scripts/train-distributed.sh,
# loopback), the
# median of BENCH_REPEATS runs of BENCH_STEPS steps each, with the model's parameter count and rank
# 0's time in the per-step all-reduces (loss terms, gradient flags and the bucketed gradients;
# it includes waiting for the slower rank), and rank 0's memory at the end of its last run
# (proportional set size, MiB: pages shared with the other rank, such as the memory-mapped
# database and training data, count half; and the shared part).
#
# Usage: scripts/bench-distributed.sh DB.mmdb [PRESET...]        (default presets: standard paper)
# Environment: LMM_TRAIN or LMM_BUILD (as train-distributed.sh), BENCH_STEPS (default 5),
#              BENCH_REPEATS (default 3), BENCH_OUT (run folders, kept; default a temporary one),
#              BENCH_MODELS (default "autoencoder stepper projector"; the stepper and projector read the
#              autoencoder checkpoint that an earlier run left in BENCH_OUT).
set -euo pipefail
(($# >= 1)) || { echo "usage: scripts/bench-distributed.sh DB.mmdb [PRESET...]" >&2; exit 2; }
db="$1"
shift
presets=("$@")
((${#presets[@]} > 0)) || presets=(standard paper)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LMM_TRAIN="${LMM_TRAIN:-$root/${LMM_BUILD:-build/release}/tools/lmm-train}"
steps="${BENCH_STEPS:-5}"
repeats="${BENCH_REPEATS:-3}"
out="${BENCH_OUT:-$(mktemp -d)}"
[[ -n "${BENCH_OUT:-}" ]] || trap 'rm -rf "$out"' EXIT

# Value of a top-level numeric key of a JSON report.
json_number() { grep -o "\"$2\": [-0-9.e]*" "$1" | head -n 1 | sed 's/.*: //'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Runs MODEL of PRESET as LAYOUT ("1x1", "1x2" or "2x1") `repeats` times (each from scratch) into
# $out/PRESET-LAYOUT, where the autoencoder's run leaves the checkpoint that the stepper and the
# projector read; prints the median samples/s, the parameter count and the median all-reduce ms per step.
measure() {
  local preset="$1" model="$2" layout="$3" dir="$out/$1-$3" rates=() reduce=() r
  mkdir -p "$dir"
  for ((r = 0; r < repeats; ++r)); do
    local args=("$model" --db "$db" --config "$preset" --out "$dir" --stop-after "$steps" --json "$dir/$model.json")
    if [[ "$layout" == 1x* ]]; then
      "$LMM_TRAIN" "${args[@]}" --threads "${layout#1x}" >"$dir/$model.log" 2>&1
    else
      bash "$root/scripts/train-distributed.sh" 2 "${args[@]}" --threads 1 >"$dir/$model.log" 2>&1
    fi || { cat "$dir/$model.log" >&2; exit 1; }
    rates+=("$(json_number "$dir/$model.json" samples_per_s)")
    local ms="$(json_number "$dir/$model.json" allreduce_ms_per_step)"
    reduce+=("${ms:-0}")  # one process: no all-reduce
  done
  echo "$(median "${rates[@]}") $(json_number "$dir/$model.json" parameters) $(median "${reduce[@]}")" \
       "$(json_number "$dir/$model.json" memory_pss_mb) $(json_number "$dir/$model.json" memory_shared_mb)"
}

echo "data-parallel training, $(date -u +%F), $(nproc) cores, $steps steps x $repeats runs (medians), db $db"
printf '%-10s %-12s %10s %9s %9s %9s %8s %8s %10s %9s %16s\n' preset model parameters "1x1 s/s" "1x2 s/s" \
  "2x1 s/s" "2x1/1x2" "2x1/1x1" "allreduce" "1x2 PSS" "2x1 rank-0 PSS"
printf '%-10s %-12s %10s %9s %9s %9s %8s %8s %10s %9s %16s\n' "" "" "" "" "" "" "" "" "ms/step" "MiB" "MiB (shared)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
for preset in "${presets[@]}"; do
  for model in ${BENCH_MODELS:-autoencoder stepper projector}; do
    read -r one params _ _ _ <<<"$(measure "$preset" "$model" 1x1)"
    read -r single _ _ single_pss _ <<<"$(measure "$preset" "$model" 1x2)"
    read -r parallel _ reduce parallel_pss parallel_shared <<<"$(measure "$preset" "$model" 2x1)"
    printf '%-10s %-12s %10.0f %9.0f %9.0f %9.0f %8.2f %8.2f %10.1f %9.0f %9.0f (%.0f)\n' "$preset" "$model" "$params" \
      "$one" "$single" "$parallel" "$(ratio "$parallel" "$single")" "$(ratio "$parallel" "$one")" "$reduce" \
      "$single_pss" "$parallel_pss" "$parallel_shared"
  done
done
