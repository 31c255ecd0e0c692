#!/usr/bin/env bash
# Durability of admission decisions (issue 26): kill -9 of `seedance server` while clients submit
# workloads to /v1/workloads, then check that
#   1. every admit decision a client was told of (HTTP 200) is in the ledger, and its workload is
#      admitted there;
#   2. PRAGMA integrity_check says ok;
#   3. the restarted server shows every acknowledged workload admitted (GET), holds exactly the
#      quota the ledger's admitted rows hold (none allocated twice), and decides again.
# Usage: admission_kill9_test.sh SEEDANCE_BINARY [WORKDIR]
# Needs curl and the sqlite3 shell (skipped with 77 without them).
set -euo pipefail
seedance=$1
work=${2:-$(mktemp -d)}
. "$(dirname "$0")/../../../scripts/testlib/peer.sh"
. "$(dirname "$0")/../../../scripts/testlib/server.sh"
command -v curl >/dev/null && command -v sqlite3 >/dev/null || peer_missing "needs curl and sqlite3"
rm -rf "$work" && mkdir -p "$work"
db=$work/ledger.db
quota=40
cat >"$work/config.yaml" <<YAML
server:
  admission_mode: strict
tenancy:
  tenants:
    - name: team-a
      quota:
        cpu: {nominal: $quota}
YAML


post_loop() {  # submits w-$1-0, w-$1-1, ... (1 cpu each), recording each acknowledged admit
  local i=0 out
  while true; do
    out=$(curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' \
          --data "{\"workloads\":[{\"name\":\"w-$1-$i\",\"tenant\":\"team-a\",\"request\":{\"cpu\":1}}]}" \
          "http://127.0.0.1:$port/v1/workloads" || true)
    if [ "$(tail -1 <<<"$out")" = 200 ]; then
      grep -o '"kind":"admit"[^}]*"name":"[^"]*"' <<<"$out" | grep -o '"name":"[^"]*"' | cut -d'"' -f4 >>"$work/acked" || true
      # Every other admitted workload finishes at once, so admissions go on past the quota.
      if [ $((i % 2)) = 0 ] && grep -q "\"kind\":\"admit\"[^}]*\"name\":\"w-$1-$i\"" <<<"$out"; then
        curl -s -o /dev/null -H 'Content-Type: application/json' \
             --data "{\"workloads\":[\"default/w-$1-$i\"]}" "http://127.0.0.1:$port/v1/workloads/finished" || true
      fi
    fi
    i=$((i + 1))
  done
}

start_server --db "$db" --config "$work/config.yaml"
: >"$work/acked"
post_loop a & loop_a=$!
post_loop b & loop_b=$!
for _ in $(seq 1 6000); do
  [ "$(wc -l <"$work/acked")" -ge 30 ] && break
  sleep 0.01
done
kill -9 "$server"
wait "$server" 2>/dev/null || true
sleep 0.2
kill "$loop_a" "$loop_b" 2>/dev/null || true
wait "$loop_a" "$loop_b" 2>/dev/null || true
acked=$(wc -l <"$work/acked")
echo "killed after $acked acknowledged admissions"
[ "$acked" -ge 30 ] || { echo "FAIL: too few admissions acknowledged before the kill"; cat "$work/server.log"; exit 1; }

[ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ] || { echo "FAIL: integrity check"; exit 1; }
lost=0
while read -r name; do
  n=$(sqlite3 "$db" "SELECT COUNT(*) FROM admission_decisions WHERE namespace='default' AND name='$name' AND kind='admit'")
  [ "$n" -ge 1 ] || { echo "FAIL: $name's admission was acknowledged, the ledger has no admit decision"; lost=1; }
done <"$work/acked"
[ "$lost" = 0 ] || exit 1
admitted=$(sqlite3 "$db" "SELECT COUNT(*) FROM admission_workloads WHERE state='admitted'")
[ "$admitted" -le "$quota" ] || { echo "FAIL: $admitted admitted rows, more than the quota of $quota cpu"; exit 1; }

start_server --db "$db" --config "$work/config.yaml"
stats=$(curl -s "http://127.0.0.1:$port/v1/workloads/stats")
grep -q "\"admitted\":$admitted[,}]" <<<"$stats" || { echo "FAIL: restarted with $stats, the ledger has $admitted admitted"; exit 1; }
# Every acknowledged admission that was not reported finished is still admitted after the restart.
while read -r name; do
  state=$(curl -s "http://127.0.0.1:$port/v1/workloads/default/$name" | grep -o '"state":"[a-z]*"' | head -1 | cut -d'"' -f4)
  case "$state" in
    admitted|finished) ;;
    *) echo "FAIL: $name was acknowledged admitted; after the restart it is '$state'"; lost=1 ;;
  esac
done <"$work/acked"
[ "$lost" = 0 ] || exit 1
# The quota the restarted server holds is the ledger's: it admits exactly the free part of it.
free=$((quota - admitted))
body='{"workloads":['
for ((k = 0; k <= free; k++)); do body+="{\"name\":\"after-$k\",\"tenant\":\"team-a\",\"request\":{\"cpu\":1}},"; done
body="${body%,}]}"
out=$(curl -s -H 'Content-Type: application/json' --data "$body" "http://127.0.0.1:$port/v1/workloads")
kill "$server"; wait "$server" 2>/dev/null || true
got=$(grep -o '"kind":"admit"' <<<"$out" | wc -l)
pending_before=$(grep -o '"pending":[0-9]*' <<<"$stats" | cut -d: -f2)
# Workloads pending before the restart come first in the queue; the new ones take what is left.
[ "$got" -le "$free" ] || { echo "FAIL: $got new admissions with $free cpu free: quota allocated twice"; exit 1; }
if [ "$pending_before" = 0 ]; then
  [ "$got" = "$free" ] || { echo "FAIL: $got new admissions with $free cpu free and nothing pending"; exit 1; }
fi
echo "PASS: $acked acknowledged admissions all in the ledger; $admitted admitted restored; $got of $((free + 1)) new admitted with $free cpu free"
