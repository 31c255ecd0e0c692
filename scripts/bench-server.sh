#!/usr/bin/env bash
# Load test of `seedance server` on loopback with wrk (Debian package `wrk`), bounded in time:
#   1. kube-scheduler extender: filter + prioritize (alternating) for a 1-GPU pod, node-cache mode,
#      SEEDANCE_NODES nodes registered (default 1,000), each request carrying the node names
#      kube-scheduler would send: SEEDANCE_NAMES, by default numFeasibleNodesToFind(N) with
#      percentageOfNodesToScore unset, max(100, N x max(5, 50 - N/125) / 100) (all N below 100;
#      420 of 1,000; 500 of 5,000); SEEDANCE_NAMES=N is percentageOfNodesToScore: 100.
#      SEEDANCE_CONDITIONS=1 gives every node the status the cluster watch brings (a Ready=True
#      condition), as a watch-fed node carries (default 0: no conditions, as POST /v1/nodes of a
#      node watcher without status).
#      Target >= 2,000 requests/s, p99 <= 5 ms, zero errors. The server's RSS before and after the
#      nodes are registered gives its memory per node; the server's and wrk's CPU per request are
#      printed (/proc/PID/stat); SEEDANCE_PERF=FILE records the server with `perf record -g` during
#      the phase (scripts/perf-breakdown.sh FILE); SEEDANCE_SKIP_OTLP=1 stops after this phase;
#   2. OTLP/HTTP JSON ingest at /v1/metrics, 8,192 data points per request (the OTel collector's batch), target >= 200,000
#      samples/s, every one committed to the SQLite ledger before the 200.
# Usage: scripts/bench-server.sh [SEEDANCE_BINARY] [SECONDS per phase, default 15] [OUT.json]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/apps/cli/seedance}
secs=${2:-15}
out=${3:-}
command -v wrk >/dev/null || { echo "bench-server: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
command -v curl >/dev/null || { echo "bench-server: curl is not installed (apt-get install curl)" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench-server: $bin not found (build the release preset first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
nodes=${SEEDANCE_NODES:-1000}
# kube-scheduler's numFeasibleNodesToFind (pkg/scheduler/schedule_one.go), percentageOfNodesToScore unset.
feasible() {
  local n=$1 pct k
  [ "$n" -lt 100 ] && { echo "$n"; return; }
  pct=$((50 - n / 125)); [ "$pct" -lt 5 ] && pct=5
  k=$((n * pct / 100)); [ "$k" -lt 100 ] && k=100
  echo "$k"
}
names=${SEEDANCE_NAMES:-$(feasible "$nodes")}
conditions=${SEEDANCE_CONDITIONS:-0}
ready=""
[ "$conditions" = 1 ] && ready=',"conditions":[{"type":"Ready","status":"True"}]'
export SEEDANCE_NODES=$nodes SEEDANCE_NAMES=$names
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
echo "seedance-bench-token" >"$work/token"
"$bin" server --listen 127.0.0.1:0 --db "$work/ledger.db" --token-file "$work/token" 2>"$work/server.log" &
pid=$!
port=""
for _ in $(seq 1 200); do
  port=$(grep -o '"event":"listening"[^}]*' "$work/server.log" | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "bench-server: the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }
url=http://127.0.0.1:$port
# 1,000 nodes of 8 GPUs (A100-80G, 96 cores, 1 TiB), as a v1.NodeList.
{
  printf '{"kind":"NodeList","items":['
  for ((i = 0; i < nodes; i++)); do
    [ "$i" -gt 0 ] && printf ','
    printf '{"metadata":{"name":"gpu-node-%04d","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}},' "$i"
    printf '"status":{"allocatable":{"cpu":"96","memory":"1Ti","nvidia.com/gpu":"8"}%s}}' "$ready"
  done
  printf ']}'
} >"$work/nodes.json"
rss_before=$(rss_kib)
curl -sf -H "Authorization: Bearer seedance-bench-token" -H 'Content-Type: application/json' \
  --data-binary @"$work/nodes.json" "$url/v1/nodes" >/dev/null
rss_after=$(rss_kib)
echo "== server RSS: $rss_before KiB before, $rss_after KiB after $nodes nodes ($(( (rss_after - rss_before) * 1024 / nodes )) bytes per node)"
echo "== extender: filter + prioritize, $nodes nodes (Ready condition: $conditions), $names names per request, ${secs} s, 1 wrk thread, ${EXT_CONNS:-4} connections"
# CPU seconds (user + system) of a process, from /proc/PID/stat (fields 14 and 15, in clock ticks).
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / hz}' "/proc/$1/stat"; }
# SEEDANCE_PERF=FILE: `perf record -g` on the server during this phase (scripts/perf-breakdown.sh FILE
# sorts its samples into codec, HTTP, decision, allocation and kernel).
[ -n "${SEEDANCE_PERF:-}" ] && { perf record -g -o "$SEEDANCE_PERF" -p "$pid" -- sleep "$secs" >/dev/null 2>&1 & perf_pid=$!; }
cpu0=$(cpu_s "$pid")
ext=$( { /usr/bin/time -f 'wrk_cpu_s %U %S' wrk -t1 -c"${EXT_CONNS:-4}" -d"${secs}s" --latency -s bench/server/extender.lua "$url" 2>&1; } | tee /dev/stderr)
cpu1=$(cpu_s "$pid")
[ -n "${SEEDANCE_PERF:-}" ] && wait "$perf_pid"
wrk_cpu=$(echo "$ext" | awk '/^wrk_cpu_s/ {print $2 + $3}')
ext=$(echo "$ext" | grep '^RESULT' | cut -c8-)
reqs=$(echo "$ext" | sed 's/.*"requests":\([0-9]*\).*/\1/')
echo "== server CPU $(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.2f", b - a}') s, wrk CPU ${wrk_cpu:-?} s for $reqs requests: $(awk -v a="$cpu0" -v b="$cpu1" -v n="$reqs" -v w="${wrk_cpu:-0}" 'BEGIN {printf "%.3f ms of server CPU and %.3f ms of wrk CPU per request (2 cores at 2,000 requests/s allow 1.000 ms for both)", 1000 * (b - a) / n, 1000 * w / n}')"
[ "${SEEDANCE_SKIP_OTLP:-0}" = 1 ] && { echo "{\"nodes\":$nodes,\"conditions\":$conditions,\"names_per_request\":$names,\"extender\":$ext}"; exit 0; }
echo "== OTLP ingest: /v1/metrics, 8,192 points per request (the OTel collector batch size), ${secs} s, 1 wrk thread, ${OTLP_CONNS:-8} connections"
otlp=$(SEEDANCE_TOKEN=seedance-bench-token wrk -t1 -c"${OTLP_CONNS:-8}" -d"${secs}s" --latency -s bench/server/otlp.lua "$url" \
  | tee /dev/stderr | grep '^RESULT' | cut -c8-)
committed=$(curl -sf "$url/metrics" | grep -E '^seedance_ingest_samples_total' | awk '{s+=$2} END {print s+0}')
summary="{\"nodes\":$nodes,\"conditions\":$conditions,\"names_per_request\":$names,\"rss_kib_before_nodes\":$rss_before,\"rss_kib_after_nodes\":$rss_after,\"seconds\":$secs,\"extender\":$ext,\"otlp\":$otlp,\"ingest_samples_total\":$committed}"
echo "$summary"
[ -n "$out" ] && echo "$summary" >"$out"
exit 0
