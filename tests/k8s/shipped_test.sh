#!/usr/bin/env bash
# shipped_test.sh SEEDANCE WORK COMMAND [ARGS...] -- runs `controlplane COMMAND` on deploy/ as
# shipped: builds the harness and tests/deploy's renderer, renders deploy/ (as `kubectl
# kustomize`), and passes the render and the shipped openssl recipe (scripts/seedance-certs.sh)
# with --rendered and --certs-script (tests/k8s/README.md, "As shipped"). Which kustomization:
#   smoke   deploy/ (the server for the cluster's own kube-scheduler), with that kube-scheduler
#           run from deploy/kube-scheduler-config.yaml itself (--scheduler-config);
#   others  deploy/second-scheduler (the server and the second scheduler `seedance`).
# Without Go: skipped (exit 77), or FAIL when SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
SEEDANCE=${1:?usage: shipped_test.sh SEEDANCE WORK COMMAND [ARGS...]}
WORK=${2:?usage: shipped_test.sh SEEDANCE WORK COMMAND [ARGS...]}
CMD=${3:?usage: shipped_test.sh SEEDANCE WORK COMMAND [ARGS...]}
shift 3
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
case $CMD in
  smoke) KUSTOMIZATION=$ROOT/deploy; SHIPPED=(--scheduler-config "$ROOT/deploy/kube-scheduler-config.yaml") ;;
  *) KUSTOMIZATION=$ROOT/deploy/second-scheduler; SHIPPED=() ;;
esac
. "$HERE/go.sh"
k8s_build_harness "$WORK/controlplane-$CMD"
k8s_render_deploy "$WORK/render" "$KUSTOMIZATION" "$WORK/rendered-$CMD.yaml"
exec "$WORK/controlplane-$CMD" "$CMD" --seedance "$SEEDANCE" --work "$WORK/$CMD-shipped" \
  --rendered "$WORK/rendered-$CMD.yaml" --certs-script "$ROOT/scripts/seedance-certs.sh" "${SHIPPED[@]}" "$@"
