#!/usr/bin/env bash
# smoke_test.sh SEEDANCE WORK -- a real Kubernetes control plane (tests/k8s: embedded etcd, Kubernetes'
# kube-apiserver test server, the real kube-scheduler as the second scheduler `seedance`) with
# `seedance server --kubeconfig` as kube-scheduler's extender in node-cache mode, fed only by its
# watch of the API server: a GPU pod is bound by Seedance's bind, a pod over its tenant's quota
# stays Pending with Seedance's `quota:` reason, deleting the bound pod frees its GPUs in
# GET /v1/cluster and the pending pod is then bound.
# Builds the harness with `go build` first (Go's module and build caches make later runs fast).
# Without Go: skipped (exit 77), or FAIL when SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
SEEDANCE=${1:?usage: smoke_test.sh SEEDANCE WORK}
WORK=${2:?usage: smoke_test.sh SEEDANCE WORK}
HERE=$(cd "$(dirname "$0")" && pwd)
GO=${GO:-$(command -v go || true)}
[ -n "$GO" ] || GO=/usr/local/go/bin/go
if [ ! -x "$GO" ]; then
  if [ "${SEEDANCE_REQUIRE_PEERS:-0}" = 1 ]; then
    echo "FAIL: Go is not installed (looked for go on PATH and /usr/local/go/bin/go) and SEEDANCE_REQUIRE_PEERS=1" >&2
    exit 1
  fi
  echo "SKIP: Go is not installed (go on PATH or /usr/local/go/bin/go); tests/k8s needs Go 1.26"
  exit 77
fi
mkdir -p "$WORK"
start=$(date +%s)
(cd "$HERE" && nice -n 10 "$GO" build -o "$WORK/controlplane" ./cmd/controlplane) || {
  echo "FAIL: go build of tests/k8s/cmd/controlplane" >&2; exit 1; }
echo "k8s.smoke: harness built in $(( $(date +%s) - start )) s ($("$GO" version))"
exec "$WORK/controlplane" smoke --seedance "$SEEDANCE" --work "$WORK/smoke"
