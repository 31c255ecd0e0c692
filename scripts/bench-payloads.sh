#!/usr/bin/env bash
# The hostile extender requests of issue 40, one at a time against a fresh `seedance server` in
# a child process (src/seedance/server/payload_probe.cc): a filter with 1M and 6M unknown
# NodeNames (10 MB and 65 MB, under the default --max-body) and a full-node filter whose Node
# nests 200,000 levels (400 KB). Prints one JSON line per request: the answer (or the signal the
# server died of), its wall time, the server's peak RSS and its RSS afterwards, and whether it
# still answers /healthz.
# Usage: scripts/bench-payloads.sh [PROBE, default build/ci/src/seedance/server/server_payload_probe]
# (built with the benchmarks: cmake --build build/ci --target server_payload_probe).
set -euo pipefail
cd "$(dirname "$0")/.."
probe=${1:-build/ci/src/seedance/server/server_payload_probe}
[ -x "$probe" ] || { echo "bench-payloads: $probe not found (cmake --build build/ci --target server_payload_probe)" >&2; exit 2; }
for request in "names 1000000" "names 6000000" "depth 200000"; do
  # shellcheck disable=SC2086
  timeout 600 "$probe" $request 2>/dev/null
done
