#!/usr/bin/env bash
# smoke_test.sh SEEDANCE WORK -- a real Kubernetes control plane (tests/k8s: embedded etcd, Kubernetes'
# kube-apiserver test server, the real kube-scheduler as the second scheduler `seedance`) with
# `seedance server --kubeconfig` as kube-scheduler's extender in node-cache mode, fed only by its
# watch: a GPU pod is bound through Seedance's filter/prioritize/bind, a pod over quota stays Pending
# with Seedance's reason, and deleting the first pod frees its GPUs (tests/k8s/README.md).
# Builds the harness with `go build` first (Go's module and build caches make later runs fast).
# Without Go: skipped (exit 77), or FAIL when SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
exec bash "$(dirname "$0")/harness_test.sh" "${1:?usage: smoke_test.sh SEEDANCE WORK}" \
  "${2:?usage: smoke_test.sh SEEDANCE WORK}" smoke
