#!/usr/bin/env bash
# harness_test.sh SEEDANCE WORK COMMAND [ARGS...] -- builds tests/k8s's controlplane harness into
# WORK and runs `controlplane COMMAND --seedance SEEDANCE --work WORK/COMMAND ARGS...` (for example
# `failover`: two leader-elected replicas, the leader killed with kill -9 during binds, then both
# restarted; see tests/k8s/README.md). Without Go: skipped (exit 77), or FAIL when
# SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
SEEDANCE=${1:?usage: harness_test.sh SEEDANCE WORK COMMAND [ARGS...]}
WORK=${2:?usage: harness_test.sh SEEDANCE WORK COMMAND [ARGS...]}
CMD=${3:?usage: harness_test.sh SEEDANCE WORK COMMAND [ARGS...]}
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || GO=/usr/local/go/bin/go
if [ ! -x "$GO" ]; then
  if [ "${SEEDANCE_REQUIRE_PEERS:-0}" = 1 ]; then
    echo "FAIL: Go is not installed (go on PATH or /usr/local/go/bin/go) and SEEDANCE_REQUIRE_PEERS=1" >&2
    exit 1
  fi
  echo "SKIP: Go is not installed (go on PATH or /usr/local/go/bin/go); tests/k8s needs Go 1.26"
  exit 77
fi
mkdir -p "$WORK"
start=$(date +%s)
(cd "$HERE" && nice -n 10 "$GO" build -o "$WORK/controlplane-$CMD" ./cmd/controlplane) || {
  echo "FAIL: go build of tests/k8s/cmd/controlplane" >&2; exit 1; }
echo "k8s.$CMD: harness built in $(( $(date +%s) - start )) s ($("$GO" version))"
exec "$WORK/controlplane-$CMD" "$CMD" --seedance "$SEEDANCE" --work "$WORK/$CMD" "$@"
