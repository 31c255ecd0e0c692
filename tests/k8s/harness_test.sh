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
. "$(dirname "$0")/go.sh"
k8s_build_harness "$WORK/controlplane-$CMD"
exec "$WORK/controlplane-$CMD" "$CMD" --seedance "$SEEDANCE" --work "$WORK/$CMD" "$@"
