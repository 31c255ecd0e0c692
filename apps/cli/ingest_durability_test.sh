#!/usr/bin/env bash
# Durability of `seedance ingest`: kill -9 in the middle of a large file, then check that
#   1. every batch the process reported as committed is in the ledger (no committed batch lost),
#   2. PRAGMA integrity_check says ok (nothing corrupted),
#   3. rerunning the same file completes the ledger, and a second rerun adds nothing.
# Usage: ingest_durability_test.sh SEEDANCE TELEMETRY_GEN LEDGER_INSPECT WORKDIR
set -euo pipefail
seedance=$1 gen=$2 inspect=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
db=$work/ledger.db
big=$work/big.prom
# 12 h of 8 nodes x 8 GPUs, 6 metrics, one scrape a minute: 276,480 samples (~74 MB).
"$gen" "$big" 12 8 60
expected=276480

"$seedance" ingest --format dcgm "$big" --db "$db" --batch 2000 --progress \
  >"$work/out1" 2>"$work/progress" &
pid=$!
# Wait until a few batches are committed, then kill -9 without warning.
for _ in $(seq 1 600); do
  n=$(grep -c "committed" "$work/progress" || true)
  if [ "$n" -ge 5 ]; then break; fi
  sleep 0.02
done
kill -9 "$pid" 2>/dev/null || { echo "FAIL: ingest finished before it could be killed"; exit 1; }
wait "$pid" 2>/dev/null || true
last=$(grep "committed" "$work/progress" | tail -1 | sed -E 's/.*committed ([0-9]+) samples.*/\1/')
echo "killed after $last committed samples"

state=$("$inspect" "$db")
echo "after kill: $state"
case "$state" in integrity=ok\ samples=*) ;; *) echo "FAIL: integrity check: $state"; exit 1;; esac
have=${state##*samples=}
if [ "$have" -lt "$last" ]; then echo "FAIL: $have samples in the ledger, $last were committed"; exit 1; fi
if [ "$have" -ge "$expected" ]; then echo "FAIL: the kill came too late ($have samples)"; exit 1; fi

"$seedance" ingest --format dcgm "$big" --db "$db" --batch 2000 >"$work/out2"
cat "$work/out2"
state=$("$inspect" "$db")
[ "$state" = "integrity=ok samples=$expected" ] || { echo "FAIL: after rerun: $state"; exit 1; }
grep -q "$expected samples ($((expected - have)) new)" "$work/out2" ||
  { echo "FAIL: rerun did not add exactly the missing samples"; exit 1; }

"$seedance" ingest --format dcgm "$big" --db "$db" --batch 2000 >"$work/out3"
grep -q "$expected samples (0 new)" "$work/out3" || { echo "FAIL: second rerun added samples"; exit 1; }
state=$("$inspect" "$db")
[ "$state" = "integrity=ok samples=$expected" ] || { echo "FAIL: after second rerun: $state"; exit 1; }
echo "PASS"
