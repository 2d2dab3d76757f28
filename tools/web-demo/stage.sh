#!/usr/bin/env bash
# Writes the demo site: the WebAssembly module built in MODULE_DIR (target lmm_web), the page, the
# parts of three.js it imports and the assets, into SITE (replaced whole: written to SITE.tmp, then
# renamed). three.js is the version package-lock.json pins, installed with `npm ci` into NPM_DIR
# (default: SITE's parent folder's web-demo-npm/) when missing or when the lock changed; the site
# then loads nothing from the network. The game states the page's keys 5-9 switch among are
# configs/controllers/bandai-states.toml's (assets/states.toml).
# Usage: tools/web-demo/stage.sh MODULE_DIR SITE [--model X.lmmw] [--db X.mmdb] [--npm NPM_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage="usage: stage.sh MODULE_DIR SITE [--model X.lmmw] [--db X.mmdb] [--npm NPM_DIR]"
[[ $# -ge 2 ]] || { echo "stage.sh: $usage" >&2; exit 2; }
module="$1" site="$2"
shift 2
model="" db="" npm_dir="$(dirname "$site")/web-demo-npm"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    --npm) npm_dir="$2"; shift 2 ;;
    *) echo "stage.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
  esac
done
for f in lmm.js lmm.wasm lmm.worker.js; do
  [[ -f "$module/$f" ]] || { echo "stage.sh: $module/$f is missing (build the target lmm_web)" >&2; exit 1; }
done
three="$npm_dir/node_modules/three"
if ! cmp -s "$here/package-lock.json" "$npm_dir/package-lock.json" || [[ ! -f "$three/package.json" ]]; then
  command -v npm >/dev/null || { echo "stage.sh: npm is needed once to install three.js (scripts/install-deps.sh installs it)" >&2; exit 1; }
  mkdir -p "$npm_dir"
  cp "$here/package.json" "$here/package-lock.json" "$npm_dir/"
  (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
rm -rf "$site.tmp"
mkdir -p "$site.tmp/assets"
cp "$module/lmm.js" "$module/lmm.wasm" "$module/lmm.worker.js" "$here/index.html" "$here/demo.js" "$site.tmp/"
# three.js: the core, the glTF loader and the two files it imports (index.html's import map).
for f in LICENSE build/three.module.js build/three.core.js examples/jsm/loaders/GLTFLoader.js \
         examples/jsm/utils/BufferGeometryUtils.js examples/jsm/utils/SkeletonUtils.js; do
  mkdir -p "$site.tmp/three/$(dirname "$f")"
  cp "$three/$f" "$site.tmp/three/$f"
done
cp "$here/../../configs/controllers/bandai-states.toml" "$site.tmp/assets/states.toml"
[[ -z "$model" ]] || cp "$model" "$site.tmp/assets/model.lmmw"
[[ -z "$db" ]] || cp "$db" "$site.tmp/assets/db.mmdb"
# Which assets there are, so that the page asks for none that is missing.
printf '{"model": %s, "db": %s}\n' "$([[ -n "$model" ]] && echo true || echo false)" \
  "$([[ -n "$db" ]] && echo true || echo false)" >"$site.tmp/assets/assets.json"
rm -rf "$site"
mv "$site.tmp" "$site"
