#!/usr/bin/env bash
# sweep_slurm_test.sh SEEDANCE WORK -- `seedance sweep --slurm` on a real Slurm 22.05 cluster
# (slurm-up.sh: 3 fake-GPU nodes on loopback, ports 26817 / 27001-27003 so another cluster can run
# beside it). Checks: a 60-cell grid through --slurm merges to the same bytes as the local run;
# cancelling array tasks (scancel) leaves their cells missing (exit 1) and the rerun submits only
# the missing cells. Exit 77 (skipped) without the Slurm packages or root.
set -euo pipefail
SEEDANCE=${1:?usage: sweep_slurm_test.sh SEEDANCE WORK}
WORK=${2:?usage: sweep_slurm_test.sh SEEDANCE WORK}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../scripts/testlib/peer.sh"
for c in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
  command -v "$c" >/dev/null || peer_missing "$c is not installed (munge slurmctld slurmd slurm-client)"
done
[ "$(id -u)" = 0 ] || peer_missing "slurm-up.sh needs root"
export CTLD_PORT=26817 NODE_PORT0=27000
BASE=$WORK/cluster
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$WORK"; mkdir -p "$WORK"
trap 'bash "$HERE/slurm-down.sh" "$BASE" >/dev/null 2>&1 || true' EXIT
bash "$HERE/slurm-up.sh" "$BASE" 3 >"$WORK/slurm-up.log" 2>&1 || { cat "$WORK/slurm-up.log" >&2; fail "slurm-up.sh"; }
export SLURM_CONF=$BASE/etc/slurm.conf

# examples/sweep-grid.yaml: 2 workloads x 5 spot price ratios x 3 policies x 2 seeds = 60 cells.
cp "$HERE/../../examples/sweep-grid.yaml" "$WORK/grid.yaml"

cd "$WORK"
"$SEEDANCE" sweep --grid grid.yaml --out local --threads 2 >local.out 2>local.err || { cat local.err >&2; fail "local run"; }
[ "$(ls local/cells/*.json | wc -l)" = 60 ] || fail "local run: expected 60 cells"

# start_and_cancel OUT MAX_ATTEMPTS: a --slurm run (at most 12 tasks at once, so they spread over
# nodes) in the background; cancels the last pending task (it never starts) and, if one is running
# at that moment, a running task (killed mid-cell: its cell must not be half-written). Sets RC.
start_and_cancel() {
  local out=$1 attempts=$2 job="" pending running driver
  set +e
  "$SEEDANCE" sweep --grid grid.yaml --out "$out" --slurm --partition gpu --array-limit 12 \
    --max-attempts "$attempts" --poll 0.2s >"$out.out" 2>"$out.err" &
  driver=$!
  set -e
  for _ in $(seq 300); do
    job=$(squeue -h -n seedance-sweep -o %F 2>/dev/null | head -1)
    [ -n "$job" ] && break; sleep 0.1
  done
  [ -n "$job" ] || { kill "$driver"; fail "no seedance-sweep array job appeared"; }
  pending=$(squeue -h -r -j "$job" -t PD -o %i | tail -1)
  [ -n "$pending" ] || fail "no pending task to cancel in job $job"
  scancel "$pending"
  running=$(squeue -h -r -j "$job" -t R -o %i | head -1)
  [ -n "$running" ] && scancel "$running"
  echo "$out: cancelled $pending ${running:-}"
  set +e; wait "$driver"; RC=$?; set -e
  for f in "$out"/cells/*.json; do
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" || fail "torn cell $f"
  done
}

# 1. One attempt while tasks are cancelled: cells are missing, exit 1.
start_and_cancel slurm 1
[ "$RC" = 1 ] || { cat slurm.err >&2; fail "first --slurm run: exit $RC, expected 1 (cells missing)"; }
grep -q "rerun the same command" slurm.err || fail "first run does not say how to finish"
DONE=$(ls slurm/cells/*.json | wc -l)
MISSING=$((60 - DONE))
[ "$MISSING" -ge 1 ] || fail "cancelled tasks left no missing cell"
ls local/cells/*.json | xargs -n1 basename | sort >ids.all
ls slurm/cells/*.json | xargs -n1 basename | sort >ids.done
comm -23 ids.all ids.done | sed 's/\.json$//' >ids.missing

# 2. Rerun: only the missing cells are submitted (one new attempt), then everything merges.
"$SEEDANCE" sweep --grid grid.yaml --out slurm --slurm --partition gpu --poll 0.2s >rerun.out 2>rerun.err \
  || { cat rerun.err >&2; fail "rerun failed"; }
LAST=$(ls slurm/slurm/attempt-*.ids | sed 's/.*attempt-\([0-9]*\)\.ids/\1/' | sort -n | tail -1)
[ "$LAST" = 2 ] || fail "rerun used attempt $LAST, expected 2"
sort slurm/slurm/attempt-2.ids >ids.rerun
cmp ids.rerun ids.missing || fail "the rerun did not submit exactly the $MISSING missing cells"
grep -q "\"cells_already_finished\": $DONE" slurm/manifest.json || fail "manifest: cells_already_finished != $DONE"

cmp local/results.json slurm/results.json || fail "results.json differs between the local and the Slurm run"
cmp local/sweep_report.html slurm/sweep_report.html || fail "sweep_report.html differs"
NODES=$(python3 -c 'import json,glob; print(len({json.load(open(f))["run"]["node"] for f in glob.glob("slurm/cells/*.json")}))')
[ "$NODES" -ge 2 ] || fail "tasks ran on $NODES node(s), expected the cluster's"

# 3. Retries inside one run: the driver resubmits the cancelled cells itself (attempt 2) and merges.
start_and_cancel retry 3
[ "$RC" = 0 ] || { cat retry.err >&2; fail "retrying run: exit $RC, expected 0"; }
[ -f retry/slurm/attempt-2.ids ] || fail "retrying run: no second attempt"
cmp local/results.json retry/results.json || fail "results.json of the retrying run differs"
# 4. Preemption: `scontrol requeue` of a running task (a 2-second cell). Slurm kills it and holds the
# requeued task until BeginTime; the driver releases it (StartTime=now) and the one attempt finishes.
printf 'workloads: [llm-finetune]\npolicies: [gavel-las]\nseeds: [0]\nvalues:\n  duration: 7d\n' >slow.yaml
set +e
"$SEEDANCE" sweep --grid slow.yaml --out preempt --slurm --max-attempts 1 --poll 0.2s >preempt.out 2>preempt.err &
DRIVER=$!
set -e
TASK=""
for _ in $(seq 300); do
  TASK=$(squeue -h -r -n seedance-sweep -t R -o %i 2>/dev/null | head -1)
  [ -n "$TASK" ] && break; sleep 0.05
done
[ -n "$TASK" ] || { kill "$DRIVER"; fail "the slow cell never showed RUNNING"; }
scontrol requeue "$TASK"
set +e; timeout 120 tail --pid="$DRIVER" -f /dev/null; wait "$DRIVER"; RC=$?; set -e
[ "$RC" = 0 ] || { cat preempt.err >&2; fail "preempted run: exit $RC, expected 0"; }
RELEASED=$(python3 -c 'import json; print(json.load(open("preempt/manifest.json"))["slurm"]["attempts"][0]["released_from_begin_time"])')
[ "$RELEASED" -ge 1 ] || fail "the requeued task was not released from BeginTime"
[ -f preempt/results.json ] || fail "preempted run: no results.json"

echo "ok: 60 cells; $MISSING missing after scancel and the rerun ran only those; the retrying run resubmitted" \
     "$(wc -l <retry/slurm/attempt-2.ids) cell(s) itself; results identical to local; cells on $NODES nodes;" \
     "a requeued (preempted) task was released and finished in one attempt"
