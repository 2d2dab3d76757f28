#!/usr/bin/env bash
# ctest web.demo (issues 18 and 42): stages the browser demo with a 12-clip database (tools/web-demo/demo-db.sh
# with one clip per motion: walks, turns, a run and a backward walk of the "normal" style, the sidesteps
# of the bandai-d1-loco folder beside the data, and a wave, bow, kick, punch and bye of the bandai-actions folder,
# imported at 30 fps by the host build's lmm-import) and a `tiny-tags` bundle trained on it by the host
# build's lmm-train (a learned character under gameplay control), and a 2 s lmm-sim run's motion.glb with
# its skinned spindle mesh (the .glb character the test drops), serves it on a free local port and runs
# demo_test.js in Debian's chromium (headless, puppeteer-core pinned by package-lock.json, installed once into
# WORK/node_modules), then frame_time.js (1 and 64 characters, 3 s each). stage.sh installs three.js
# into WORK/web-demo-npm. Skips (77) when a prerequisite is missing; fails instead under CI=true.
# Usage: run.sh MODULE_DIR WORK_DIR LMM_IMPORT DATA_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="$1" work="$2" import="$3" data="$4"
skip() {
  echo "web.demo: SKIP: $*"
  [[ "${CI:-}" == true ]] && exit 1
  exit 77
}
[[ -x "$import" ]] || skip "no host lmm-import at '$import' (scripts/test.sh builds the release configuration first)"
[[ -d "$data/normal" ]] || skip "no bandai-loco data at '$data' (set LMM_DATA)"
[[ -d "$(dirname "$data")/bandai-actions" ]] || skip "no bandai-actions beside '$data' (the demo's actions)"
[[ -d "$(dirname "$data")/bandai-d1-loco" ]] || skip "no bandai-d1-loco beside '$data' (the demo's sidesteps)"
command -v chromium >/dev/null || skip "chromium is not installed (scripts/install-deps.sh installs it)"
command -v npm >/dev/null || skip "npm is not installed"

mkdir -p "$work"
if ! cmp -s "$here/package-lock.json" "$work/package-lock.json" || [[ ! -d "$work/node_modules/puppeteer-core" ]]; then
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
fi
bash "$here/../../tools/web-demo/demo-db.sh" "$import" "$data" 1 "$work/mini.mmdb"
# A tagged learned character for the gameplay checks: `tiny-tags` trained on that database.
tools="$(dirname "$import")"
[[ -x "$tools/lmm-train" && -x "$tools/lmm-export" && -x "$tools/lmm-sim" ]] ||
  skip "no host lmm-train / lmm-export / lmm-sim beside '$import' (a training build)"
rm -rf "$work/tiny-tags"
for network in autoencoder stepper projector; do
  "$tools/lmm-train" "$network" --db "$work/mini.mmdb" --config tiny-tags --out "$work/tiny-tags" >"$work/train.log" 2>&1 ||
    { tail -5 "$work/train.log"; echo "web.demo: training tiny-tags ($network) failed"; exit 1; }
done
"$tools/lmm-export" --in "$work/tiny-tags" --out "$work/tiny-tags.lmmw" >"$work/export.log" 2>&1 ||
  { cat "$work/export.log"; echo "web.demo: lmm-export failed"; exit 1; }
bash "$here/../../tools/web-demo/stage.sh" "$module" "$work/site" --db "$work/mini.mmdb" --model "$work/tiny-tags.lmmw"
rm -rf "$work/sim"
"$tools/lmm-sim" --db "$work/mini.mmdb" --random --seconds 2 --mesh spindles --out "$work/sim" >"$work/sim.log" 2>&1 ||
  { cat "$work/sim.log"; echo "web.demo: lmm-sim --mesh spindles failed"; exit 1; }
cp "$work/sim/motion.glb" "$work/site/test-character.glb"

node "$here/../../tools/web-demo/serve.js" "$work/site" 0 >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q "http://" "$work/serve.log" && break; sleep 0.1; done
url="$(grep -o 'http://[0-9.:]*/' "$work/serve.log" | head -n 1)"
[[ -n "$url" ]] || { cat "$work/serve.log"; echo "web.demo: the server did not start"; exit 1; }
echo "web.demo: $url"
NODE_PATH="$work/node_modules" node "$here/demo_test.js" "${url}?controller=database" "$work/demo.png" "$work/path.png" \
  "$work/action.png" "$work/learned-action.png" --tagged-model --glb test-character.glb --glb-screenshot "$work/glb.png"
NODE_PATH="$work/node_modules" node "$here/frame_time.js" "${url}?controller=database" --characters 1,64 --seconds 3 \
  --screenshots "$work"
