#!/usr/bin/env bash
# shipped_test.sh SEEDANCE WORK COMMAND [ARGS...] -- runs `controlplane COMMAND` on deploy/ as
# shipped: builds the harness and tests/deploy's renderer, renders deploy/second-scheduler (as
# `kubectl kustomize`), and passes the render and the shipped openssl recipe
# (scripts/seedance-certs.sh) with --rendered and --certs-script (tests/k8s/README.md, "As shipped").
# Without Go: skipped (exit 77), or FAIL when SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
SEEDANCE=${1:?usage: shipped_test.sh SEEDANCE WORK COMMAND [ARGS...]}
WORK=${2:?usage: shipped_test.sh SEEDANCE WORK COMMAND [ARGS...]}
CMD=${3:?usage: shipped_test.sh SEEDANCE WORK COMMAND [ARGS...]}
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$HERE/../..
. "$HERE/go.sh"
k8s_build_harness "$WORK/controlplane-$CMD"
k8s_render_deploy "$WORK/render" "$ROOT/deploy/second-scheduler" "$WORK/rendered-$CMD.yaml"
exec "$WORK/controlplane-$CMD" "$CMD" --seedance "$SEEDANCE" --work "$WORK/$CMD-shipped" \
  --rendered "$WORK/rendered-$CMD.yaml" --certs-script "$ROOT/scripts/seedance-certs.sh" "$@"
