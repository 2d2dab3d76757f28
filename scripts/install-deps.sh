#!/usr/bin/env bash
# Installs the Debian 12 packages lmmkit needs. Idempotent: checks each package with dpkg-query
# and installs only the missing ones (apt-get update runs only when something is missing).
# Uses sudo only when not running as root.
set -euo pipefail

packages=(
  build-essential cmake git ca-certificates pkg-config
  libtorch-dev libfaiss-dev libgloo-dev
  libcxxopts-dev libspdlog-dev libfmt-dev libtomlplusplus-dev libopenblas0-pthread
  libtinygltf-dev libassimp-dev assimp-testmodels
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev python3 python3-numpy
  emscripten nodejs chromium
)
# npm (three.js for the browser demo, and the browser test's puppeteer-core): Debian's package,
# unless a node from elsewhere (e.g. NodeSource's nodejs, which conflicts with it) already brings
# the command.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi

missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install these packages by hand: ${missing[*]}" >&2
  exit 1
fi

sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: not root and sudo is not available; as root run:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi

echo "install-deps: missing ${#missing[@]} package(s): ${missing[*]}"
echo "install-deps: running apt-get update"
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
echo "install-deps: running apt-get install ${missing[*]}"
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"
