#!/usr/bin/env bash
# Builds the browser demo (tools/web-demo: the runtime compiled to WebAssembly with Debian's
# emscripten) into build/web-demo/, copies its assets and serves it on localhost.
#
# Usage: scripts/demo.sh [--model X.lmmw] [--db X.mmdb] [--port N] [--no-serve]
#   --model X.lmmw  learned-motion-matching bundle (default: quickstart's build/quickstart/model.lmmw)
#   --db X.mmdb     database for ?controller=database (optional; databases are large: a few MB
#                   per minute of motion)
#   --port N        port of the local server (default 8080)
#   --no-serve      build and copy only
# Environment: LMM_JOBS (build jobs, default 2), LMM_SKIP_INSTALL=1 (skip install-deps.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

model="build/quickstart/model.lmmw"
db=""
port=8080
serve=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --no-serve) serve=0; shift ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -f "$model" ]] || { echo "demo.sh: no model bundle at '$model': run scripts/quickstart.sh or pass --model X.lmmw" >&2; exit 2; }
[[ -z "$db" || -f "$db" ]] || { echo "demo.sh: no database at '$db'" >&2; exit 2; }

if [[ "${LMM_SKIP_INSTALL:-0}" != 1 ]]; then
  bash scripts/install-deps.sh
fi
bash tools/web-demo/build.sh lmm_web

site=build/web-demo
args=(--model "$model")
[[ -z "$db" ]] || args+=(--db "$db")
bash tools/web-demo/stage.sh build/web/tools/web-demo "$site" "${args[@]}"
echo "demo.sh: $site: $(du -sh "$site" | cut -f1) (model $(du -h "$site/assets/model.lmmw" | cut -f1)$([[ -z "$db" ]] || echo ", database $(du -h "$site/assets/db.mmdb" | cut -f1)"))"
[[ $serve == 1 ]] || exit 0
exec node tools/web-demo/serve.js "$site" "$port"
