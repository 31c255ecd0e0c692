#!/usr/bin/env bash
# Durability of the server's ingest: kill -9 during sustained OTLP ingest, then check that
#   1. every batch the server acknowledged (HTTP 200) is in the ledger, all of its samples;
#   2. PRAGMA integrity_check says ok;
#   3. the server restarts on the same ledger and ingests again.
# Usage: ingest_kill9_test.sh SEEDANCE_BINARY [WORKDIR]   (runs `seedance server`)
# Needs curl and the sqlite3 shell (skipped with 77 without them).
set -euo pipefail
seedance=$1
work=${2:-$(mktemp -d)}
. "$(dirname "$0")/../../../scripts/testlib/peer.sh"
. "$(dirname "$0")/../../../scripts/testlib/server.sh"
command -v curl >/dev/null && command -v sqlite3 >/dev/null || peer_missing "needs curl and sqlite3"
rm -rf "$work" && mkdir -p "$work"
db=$work/ledger.db
points=200


# One OTLP request: gauge durability_batch{batch=I}, $points points one second apart.
batch_json() {
  local i=$1 t0=$((1795950000 + $1 * 1000)) dp="" k
  for ((k = 0; k < points; k++)); do
    dp+="${dp:+,}{\"timeUnixNano\":\"$(((t0 + k) * 1000000000))\",\"asDouble\":$k}"
  done
  printf '{"resourceMetrics":[{"resource":{"attributes":[{"key":"batch","value":{"stringValue":"%s"}}]},"scopeMetrics":[{"metrics":[{"name":"durability_batch","unit":"1","gauge":{"dataPoints":[%s]}}]}]}]}' "$i" "$dp"
}

post_loop() {  # posts batches from $1 on, recording each acknowledged one
  local i=$1
  while true; do
    batch_json "$i" >"$work/body.$2"
    code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
           --data-binary @"$work/body.$2" "http://127.0.0.1:$port/v1/metrics" || true)
    [ "$code" = 200 ] && echo "$i" >>"$work/acked"
    i=$((i + 2))
  done
}

start_server --db "$db"
: >"$work/acked"
post_loop 0 a & loop_a=$!
post_loop 1 b & loop_b=$!
for _ in $(seq 1 1000); do
  [ "$(wc -l <"$work/acked")" -ge 30 ] && break
  sleep 0.01
done
kill -9 "$server"
wait "$server" 2>/dev/null || true
sleep 0.2
kill "$loop_a" "$loop_b" 2>/dev/null || true
wait "$loop_a" "$loop_b" 2>/dev/null || true
acked=$(wc -l <"$work/acked")
echo "killed after $acked acknowledged batches"
[ "$acked" -ge 30 ] || { echo "FAIL: too few batches acknowledged before the kill"; exit 1; }

[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || { echo "FAIL: integrity check"; exit 1; }
lost=0
while read -r i; do
  n=$(sqlite3 "$db" "SELECT COUNT(*) FROM samples s JOIN series r ON r.id = s.series_id WHERE r.key = 'durability_batch{batch=\"$i\"}'")
  [ "$n" = "$points" ] || { echo "FAIL: batch $i was acknowledged, the ledger holds $n of its $points samples"; lost=1; }
done <"$work/acked"
[ "$lost" = 0 ] || exit 1

start_server --db "$db"
batch_json 100000 >"$work/body.c"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
       --data-binary @"$work/body.c" "http://127.0.0.1:$port/v1/metrics")
kill "$server"; wait "$server" 2>/dev/null || true
[ "$code" = 200 ] || { echo "FAIL: after restart the server answered $code"; exit 1; }
echo "PASS: $acked acknowledged batches of $points samples all in the ledger; restart ingests"
