#!/usr/bin/env bash
# Writes the demo site: the WebAssembly module built in MODULE_DIR (target lmm_web), the page and
# the assets, into SITE (replaced whole: written to SITE.tmp, then renamed). The game states the
# page's keys 5-9 switch among are configs/controllers/bandai-states.toml's (assets/states.toml).
# Usage: tools/web-demo/stage.sh MODULE_DIR SITE [--model X.lmmw] [--db X.mmdb]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -ge 2 ]] || { echo "stage.sh: usage: stage.sh MODULE_DIR SITE [--model X.lmmw] [--db X.mmdb]" >&2; exit 2; }
module="$1" site="$2"
shift 2
model="" db=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    *) echo "stage.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for f in lmm.js lmm.wasm lmm.worker.js; do
  [[ -f "$module/$f" ]] || { echo "stage.sh: $module/$f is missing (build the target lmm_web)" >&2; exit 1; }
done
rm -rf "$site.tmp"
mkdir -p "$site.tmp/assets"
cp "$module/lmm.js" "$module/lmm.wasm" "$module/lmm.worker.js" "$here/index.html" "$here/demo.js" "$site.tmp/"
cp "$here/../../configs/controllers/bandai-states.toml" "$site.tmp/assets/states.toml"
[[ -z "$model" ]] || cp "$model" "$site.tmp/assets/model.lmmw"
[[ -z "$db" ]] || cp "$db" "$site.tmp/assets/db.mmdb"
# Which assets there are, so that the page asks for none that is missing.
printf '{"model": %s, "db": %s}\n' "$([[ -n "$model" ]] && echo true || echo false)" \
  "$([[ -n "$db" ]] && echo true || echo false)" >"$site.tmp/assets/assets.json"
rm -rf "$site"
mv "$site.tmp" "$site"
