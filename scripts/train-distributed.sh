#!/usr/bin/env bash
# Data-parallel training on one machine (issue 19): starts N lmm-train ranks that meet on the
# loopback interface at a free port, prints rank 0's output as it comes, waits for every rank and
# exits with the first failing rank's status (stopping the others, and printing that rank's
# output) when one fails.
#
# Usage: scripts/train-distributed.sh N MODEL [lmm-train options...]
#   e.g. scripts/train-distributed.sh 2 autoencoder --db db.mmdb --config standard --out run --threads 1
# Environment: LMM_TRAIN (the lmm-train binary; default $LMM_BUILD/tools/lmm-train, LMM_BUILD
#              default build/release), MASTER_PORT (default: a free port).
# Across machines, start one lmm-train per rank instead (docs/training.md):
#   lmm-train MODEL ... --world-size N --rank R --master HOST_OF_RANK_0:PORT
set -uo pipefail
usage="usage: scripts/train-distributed.sh N MODEL [lmm-train options...]"
(($# >= 2)) || { echo "$usage" >&2; exit 2; }
ranks="$1"
model="$2"
shift 2
[[ "$ranks" =~ ^[1-9][0-9]*$ ]] || { echo "train-distributed.sh: N '$ranks' must be a whole number >= 1 ($usage)" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
train="${LMM_TRAIN:-$root/${LMM_BUILD:-build/release}/tools/lmm-train}"
[[ -x "$train" ]] || { echo "train-distributed.sh: no lmm-train at $train (set LMM_TRAIN or LMM_BUILD)" >&2; exit 1; }
port="${MASTER_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
logs="$(mktemp -d)"
declare -A rank_of=()  # pid -> rank
stop_ranks() {
  for pid in "${!rank_of[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap 'stop_ranks; rm -rf "$logs"' EXIT
trap 'exit 130' INT TERM

# Rank 0 writes to this script's output; the others to a log each, shown if they fail.
for ((rank = 0; rank < ranks; ++rank)); do
  args=("$model" "$@" --world-size "$ranks" --rank "$rank" --master "127.0.0.1:$port")
  if ((rank == 0)); then
    "$train" "${args[@]}" &
  else
    "$train" "${args[@]}" >"$logs/rank$rank.log" 2>&1 &
  fi
  rank_of[$!]=$rank
done

while ((${#rank_of[@]} > 0)); do
  wait -n -p finished "${!rank_of[@]}"
  status=$?
  rank="${rank_of[$finished]}"
  unset "rank_of[$finished]"
  if ((status != 0)); then
    if ((rank != 0)); then
      echo "train-distributed.sh: rank $rank of $ranks failed (exit status $status); its output:" >&2
      cat "$logs/rank$rank.log" >&2
    fi
    echo "train-distributed.sh: rank $rank of $ranks failed (exit status $status); stopping the other ranks" >&2
    exit "$status"
  fi
done
