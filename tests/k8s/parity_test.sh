#!/usr/bin/env bash
# parity_test.sh SEEDANCE WORK [NODES PODS] -- simulator/control-plane parity on the openb default
# trace (data/openb), on deploy/ as shipped: `seedance bench packing --replay` plays the trace on
# its own clock with the placement policy and seed of deploy/server/seedance-config.yaml and writes
# event,pod,node; `controlplane parity --rendered` plays the same events through a real
# kube-apiserver (RBAC, default admission plugins) + kube-scheduler with deploy/second-scheduler as
# kustomize renders it (its RBAC and ServiceAccounts, the StatefulSet's args with mutual TLS, the
# KubeSchedulerConfiguration: ignorable, no managedResources, no bindVerb; tests/k8s/README.md
# lists what the harness changes) and checks every pod lands on the simulator's node.
# NODES/PODS: use the first NODES nodes and PODS pods of the lists (ctest k8s.parity: 50 and 300);
# without them the whole trace (1,213 nodes, 8,152 pods: docs/BENCHMARKS.md).
# Without Go: skipped (exit 77), or FAIL when SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
SEEDANCE=${1:?usage: parity_test.sh SEEDANCE WORK [NODES PODS]}
WORK=${2:?usage: parity_test.sh SEEDANCE WORK [NODES PODS]}
NODES=${3:-0}
PODS=${4:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$HERE/../..
DATA=$ROOT/data/openb
rm -rf "$WORK"
mkdir -p "$WORK"
nodes=$DATA/openb_node_list_gpu_node.csv
pods=$DATA/openb_pod_list_default.csv
if [ "$NODES" -gt 0 ]; then head -n $((NODES + 1)) "$nodes" > "$WORK/nodes.csv"; nodes=$WORK/nodes.csv; fi
if [ "$PODS" -gt 0 ]; then head -n $((PODS + 1)) "$pods" > "$WORK/pods.csv"; pods=$WORK/pods.csv; fi
. "$HERE/go.sh"
k8s_build_harness "$WORK/controlplane"
k8s_render_deploy "$WORK/render" "$ROOT/deploy/second-scheduler" "$WORK/rendered.yaml"
config=$ROOT/deploy/server/seedance-config.yaml
policy=$(sed -n 's/^  placement_policy: *\([A-Za-z0-9_-]*\).*/\1/p' "$config")
seed=$(sed -n 's/^  seed: *\([0-9]*\).*/\1/p' "$config")
[ -n "$policy" ] && [ -n "$seed" ] || { echo "FAIL: no server.placement_policy / server.seed in $config" >&2; exit 1; }
"$SEEDANCE" bench packing --replay "$WORK/replay.csv" --policies "$policy" --seeds "$seed" --nodes "$nodes" --pods "$pods"
exec "$WORK/controlplane" parity --seedance "$SEEDANCE" --work "$WORK/cp" --nodes "$nodes" --pods "$pods" \
  --expected "$WORK/replay.csv" --policy "$policy" --seed "$seed" \
  --rendered "$WORK/rendered.yaml" --certs-script "$ROOT/scripts/seedance-certs.sh"
