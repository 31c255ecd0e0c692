#!/usr/bin/env bash
# smoke_test.sh SEEDANCE WORK -- deploy/ as rendered on a real Kubernetes control plane (tests/k8s:
# embedded etcd, Kubernetes' kube-apiserver test server with RBAC and the default admission
# plugins, the real kube-scheduler run with deploy/kube-scheduler-config.yaml): a GPU pod is placed
# through Seedance's filter/prioritize over mutual TLS, a pod over quota stays Pending with
# Seedance's reason, deleting the first pod frees its GPUs, a CPU-only pod is not sent to Seedance
# (managedResources), and with Seedance killed a GPU pod is still placed, loudly (ignorable: true)
# (tests/k8s/README.md). Builds the harness with `go build` first (Go's module and build caches
# make later runs fast). Without Go: skipped (exit 77), or FAIL when SEEDANCE_REQUIRE_PEERS=1.
set -euo pipefail
exec bash "$(dirname "$0")/shipped_test.sh" "${1:?usage: smoke_test.sh SEEDANCE WORK}" \
  "${2:?usage: smoke_test.sh SEEDANCE WORK}" smoke
