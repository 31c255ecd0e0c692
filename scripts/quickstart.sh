#!/usr/bin/env bash
# The README Quickstart, on a fresh Debian 12 machine (as root, or with sudo):
#   scripts/quickstart.sh run [ARGS...]   install packages, build (release), run `seedance cost-benchmark ARGS`
#   scripts/quickstart.sh test            install packages, build the ci preset, run every test (ctest)
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian 12 packages the build needs; nothing is downloaded from anywhere else.
PACKAGES=(cmake ninja-build g++ pkg-config libfmt-dev nlohmann-json3-dev libcli11-dev
          libgtest-dev libgmock-dev libbenchmark-dev libglpk-dev libyaml-cpp-dev
          libsqlite3-dev libeigen3-dev libpq-dev libssl-dev libcpp-httplib-dev)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "quickstart: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  run)
    install_missing
    cmake --preset release >/dev/null
    cmake --build --preset release
    exec ./build/release/apps/cli/seedance cost-benchmark "$@"
    ;;
  test)
    install_missing
    cmake --workflow --preset ci
    ;;
  *)
    echo "usage: scripts/quickstart.sh run [cost-benchmark args...] | test" >&2
    exit 2
    ;;
esac
