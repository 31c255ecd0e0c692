#!/usr/bin/env bash
# parity_test.sh SEEDANCE WORK [NODES PODS] -- simulator/control-plane parity on the openb default
# trace (data/openb): `seedance bench packing --replay` plays the trace on its own clock with the
# Seedance packing policy and writes event,pod,node; `controlplane parity` plays the same events
# through a real kube-apiserver + kube-scheduler with `seedance server --kubeconfig` (watch-fed,
# node-cache, Seedance binds) and checks every pod lands on the simulator's node.
# NODES/PODS: use the first NODES nodes and PODS pods of the lists (ctest k8s.parity: 50 and 300);
# without them the whole trace (1,213 nodes, 8,152 pods: docs/BENCHMARKS.md).
# Without Go: skipped (exit 77), or FAIL when SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
SEEDANCE=${1:?usage: parity_test.sh SEEDANCE WORK [NODES PODS]}
WORK=${2:?usage: parity_test.sh SEEDANCE WORK [NODES PODS]}
NODES=${3:-0}
PODS=${4:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/../../data/openb
rm -rf "$WORK"
mkdir -p "$WORK"
nodes=$DATA/openb_node_list_gpu_node.csv
pods=$DATA/openb_pod_list_default.csv
if [ "$NODES" -gt 0 ]; then head -n $((NODES + 1)) "$nodes" > "$WORK/nodes.csv"; nodes=$WORK/nodes.csv; fi
if [ "$PODS" -gt 0 ]; then head -n $((PODS + 1)) "$pods" > "$WORK/pods.csv"; pods=$WORK/pods.csv; fi
. "$HERE/go.sh"
k8s_build_harness "$WORK/controlplane"
"$SEEDANCE" bench packing --replay "$WORK/replay.csv" --policies seedance --seeds 0 --nodes "$nodes" --pods "$pods"
exec "$WORK/controlplane" parity --seedance "$SEEDANCE" --work "$WORK/cp" --nodes "$nodes" --pods "$pods" \
  --expected "$WORK/replay.csv" --policy seedance --seed 0
