#!/usr/bin/env bash
# Builds the browser demo (tools/web-demo: the runtime compiled to WebAssembly with Debian's
# emscripten, drawn with three.js, which tools/web-demo/stage.sh installs with npm into
# build/web-demo-npm/ the first time) into build/web-demo/ with its assets, and serves it on localhost.
#
# Usage: scripts/demo.sh [--model X.lmmw] [--db X.mmdb] [--data DIR] [--port N] [--no-serve]
#   --model X.lmmw  learned-motion-matching bundle. Default, when bandai-actions/ is beside the data:
#                   build/web-demo-assets/quick-tags.lmmw, the `quick-tags` preset trained on
#                   normal/ + bandai-actions (a learned character that takes keys 1-9 as the
#                   database one does; trained when missing: about 12 minutes); else the
#                   quickstart's build/quickstart/model.lmmw (`quick`, no tags). Either way
#                   scripts/quickstart.sh runs first when its build or bundle is missing (about 15 minutes)
#   --db X.mmdb     database for the database controller and the path mode (default:
#                   build/web-demo-assets/demo.mmdb, imported when missing by
#                   tools/web-demo/demo-db.sh: 32 files, five of them actions, at 30 fps,
#                   about 14 MB)
#   --data DIR      bandai-loco folder for the default assets (default: $LMM_DATA, else the
#                   quickstart's download folder ${XDG_CACHE_HOME:-$HOME/.cache}/lmmkit/bandai-loco)
#   --port N        port of the local server (default 8080)
#   --no-serve      build and copy only
# Environment: LMM_JOBS (build jobs, default 2), LMM_SKIP_INSTALL=1 (skip install-deps.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { echo "demo.sh: ERROR: $*" >&2; exit 2; }
model=""
db=""
data="${LMM_DATA:-${XDG_CACHE_HOME:-$HOME/.cache}/lmmkit/bandai-loco}"
port=8080
serve=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model|--db|--data|--port) [[ $# -ge 2 ]] || die "$1 needs a value (see --help)" ;;&
    --model) model="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --no-serve) serve=0; shift ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ -z "$model" || -f "$model" ]] || die "no model bundle at '$model'"
[[ -z "$db" || -f "$db" ]] || die "no database at '$db'"

if [[ "${LMM_SKIP_INSTALL:-0}" != 1 ]]; then
  bash scripts/install-deps.sh
fi
export LMM_SKIP_INSTALL=1

# The quickstart's build and bundle, made by it when missing.
quickstart_model() {
  if [[ ! -f build/quickstart/model.lmmw || ! -x build/release-tools/tools/lmm-train ]]; then
    echo "demo.sh: no quickstart build or bundle yet: running scripts/quickstart.sh (about 15 minutes)"
    if [[ -d "$data" ]]; then bash scripts/quickstart.sh "$data"; else bash scripts/quickstart.sh; fi
  fi
}

# train_tagged_model ACTIONS OUT: `quick-tags` trained on $data/normal + ACTIONS, exported to OUT.
train_tagged_model() {
  local actions="$1" out="$2" tools=build/release-tools/tools work=build/web-demo-assets/quick-tags
  echo "demo.sh: training the 'quick-tags' preset on $data/normal + $actions for $out (about 12 minutes)"
  rm -rf "$work"
  mkdir -p "$work/bvh"
  ln -s "$data"/normal/*.bvh "$actions"/*.bvh "$work/bvh/"
  "$tools/lmm-import" "$work/bvh" --out "$work/db.mmdb" >"$work/import.log" 2>&1 ||
    { cat "$work/import.log" >&2; die "lmm-import of $data/normal + $actions failed"; }
  for network in autoencoder stepper projector; do
    "$tools/lmm-train" "$network" --db "$work/db.mmdb" --config quick-tags --out "$work/train" ||
      die "lmm-train $network (quick-tags) failed (see above)"
  done
  "$tools/lmm-export" --in "$work/train" --out "$out" --with-encoder >"$work/export.log" 2>&1 ||
    { cat "$work/export.log" >&2; die "lmm-export failed"; }
}

# The default bundle: a tagged one when the data has actions, else the quickstart's.
if [[ -z "$model" ]]; then
  quickstart_model
  actions="$(dirname "$data")/bandai-actions"
  model="build/quickstart/model.lmmw"
  if [[ -d "$actions" && -d "$data/normal" ]]; then
    model="build/web-demo-assets/quick-tags.lmmw"
    [[ -f "$model" ]] || train_tagged_model "$actions" "$model"
  else
    echo "demo.sh: no bandai-actions beside $data: the learned character is the quickstart's 'quick' (no tags:" \
         "keys 1-9 act on the database character, ?controller=database)"
  fi
fi

# lmm-import of the quickstart's build, else of a tools-only build (no LibTorch code).
host_import() {
  local import="build/release-tools/tools/lmm-import"
  if [[ ! -x "$import" ]]; then
    cmake -S . -B build/demo-tools -DCMAKE_BUILD_TYPE=Release -DLMM_BUILD_TOOLS=ON -DLMM_BUILD_TRAINING=OFF \
      -DLMM_BUILD_TESTS=OFF -DLMM_BUILD_C_SHARED=OFF >/dev/null
    cmake --build build/demo-tools -j "${LMM_JOBS:-2}" --target lmm-import >/dev/null
    import="build/demo-tools/tools/lmm-import"
  fi
  echo "$import"
}

# The default database: a browser-sized subset of the data, imported when missing.
if [[ -z "$db" ]]; then
  db="build/web-demo-assets/demo.mmdb"
  if [[ ! -f "$db" ]]; then
    [[ -d "$data/normal" ]] || die "no bandai-loco data at '$data' for the demo database: pass --data DIR, set LMM_DATA or run scripts/quickstart.sh (it downloads the data)"
    mkdir -p "$(dirname "$db")"
    bash tools/web-demo/demo-db.sh "$(host_import)" "$data" 6 "$db"
  fi
fi

bash tools/web-demo/build.sh lmm_web
site=build/web-demo
bash tools/web-demo/stage.sh build/web/tools/web-demo "$site" --model "$model" --db "$db"
echo "demo.sh: $site: $(du -sh "$site" | cut -f1) (model $(du -h "$site/assets/model.lmmw" | cut -f1), database $(du -h "$site/assets/db.mmdb" | cut -f1))"
[[ $serve == 1 ]] || exit 0
exec node tools/web-demo/serve.js "$site" "$port"
