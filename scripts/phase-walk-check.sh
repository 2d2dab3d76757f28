#!/usr/bin/env bash
# Issue 17's real-data check of the periodic autoencoder (Starke, Mason & Komura 2022): trains a
# preset's [phase] on the steady straight walks of bandai-loco/normal (dataset-2_walk_normal_*,
# 24 clips, not mirrored) and requires the dominant channel's phase to go backwards on at most 2%
# of consecutive frames (lmm-train's phase_backward_share). Minutes of training, so not a unit test.
#
# Usage: scripts/phase-walk-check.sh [PRESET] [OUT_DIR]      (default: quick build/phase-walk-PRESET)
# Environment: LMM_DATA (bandai-loco folder), LMM_BUILD (default build/release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset="${1:-quick}"
out="${2:-build/phase-walk-$preset}"
build="${LMM_BUILD:-build/release}"
data="${LMM_DATA:?set LMM_DATA to the bandai-loco folder}"
tools="$build/tools"
[[ -x "$tools/lmm-train" ]] || { echo "phase-walk-check.sh: $tools/lmm-train not built (configure with -DLMM_BUILD_TRAINING=ON)" >&2; exit 1; }
mkdir -p "$out"
db="$out/walk.mmdb"
[[ -f "$db" ]] || "$tools/lmm-import" "$data"/normal/dataset-2_walk_normal_*.bvh --no-mirror --out "$db"
"$tools/lmm-train" phase --db "$db" --config "$preset" --out "$out/pae" --json "$out/phase.json"
share=$(grep -o '"phase_backward_share": [-0-9.e]*' "$out/phase.json" | sed 's/.*: //')
echo "phase_backward_share = $share (at most 0.02 required)"
awk -v s="$share" 'BEGIN { exit !(s <= 0.02) }' || { echo "FAIL: the dominant phase goes backwards too often" >&2; exit 1; }
