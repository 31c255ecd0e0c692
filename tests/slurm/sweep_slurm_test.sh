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
for c in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
  command -v "$c" >/dev/null || { echo "SKIP: $c is not installed (munge slurmctld slurmd slurm-client)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: slurm-up.sh needs root"; exit 77; }
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

# First --slurm run: at most 4 tasks at once, one attempt, while we cancel tasks.
set +e
"$SEEDANCE" sweep --grid grid.yaml --out slurm --slurm --partition gpu --array-limit 4 --max-attempts 1 \
  --poll 0.2s >slurm1.out 2>slurm1.err &
DRIVER=$!
set -e
JOB=""
for _ in $(seq 300); do
  JOB=$(squeue -h -n seedance-sweep -o %F 2>/dev/null | head -1)
  [ -n "$JOB" ] && break; sleep 0.1
done
[ -n "$JOB" ] || { kill "$DRIVER"; fail "no seedance-sweep array job appeared"; }
# Cancel the last pending task (it never starts) and, if one is running now, a running task (killed
# mid-cell: its cell must not be half-written).
PENDING=$(squeue -h -r -j "$JOB" -t PD -o %i | tail -1)
[ -n "$PENDING" ] || fail "no pending task to cancel in job $JOB"
scancel "$PENDING"
RUNNING=$(squeue -h -r -j "$JOB" -t R -o %i | head -1)
[ -n "$RUNNING" ] && scancel "$RUNNING"
echo "cancelled $PENDING ${RUNNING:-}"
set +e; wait "$DRIVER"; RC=$?; set -e
[ "$RC" = 1 ] || { cat slurm1.err >&2; fail "first --slurm run: exit $RC, expected 1 (cells missing)"; }
grep -q "rerun the same command" slurm1.err || fail "first run does not say how to finish"
for f in slurm/cells/*.json; do python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" || fail "torn cell $f"; done
DONE=$(ls slurm/cells/*.json | wc -l)
MISSING=$((60 - DONE))
[ "$MISSING" -ge 1 ] || fail "cancelled tasks left no missing cell"
ls local/cells/*.json | xargs -n1 basename | sort >ids.all
ls slurm/cells/*.json | xargs -n1 basename | sort >ids.done
comm -23 ids.all ids.done | sed 's/\.json$//' >ids.missing

# Rerun: only the missing cells are submitted (one new attempt), then everything merges.
"$SEEDANCE" sweep --grid grid.yaml --out slurm --slurm --partition gpu --poll 0.2s >slurm2.out 2>slurm2.err \
  || { cat slurm2.err >&2; fail "rerun failed"; }
LAST=$(ls slurm/slurm/attempt-*.ids | sed 's/.*attempt-\([0-9]*\)\.ids/\1/' | sort -n | tail -1)
[ "$LAST" = 2 ] || fail "rerun used attempt $LAST, expected 2"
sort slurm/slurm/attempt-2.ids >ids.rerun
cmp ids.rerun ids.missing || fail "the rerun did not submit exactly the $MISSING missing cells"
grep -q "\"cells_already_finished\": $DONE" slurm/manifest.json || fail "manifest: cells_already_finished != $DONE"

cmp local/results.json slurm/results.json || fail "results.json differs between the local and the Slurm run"
cmp local/sweep_report.html slurm/sweep_report.html || fail "sweep_report.html differs"
NODES=$(python3 -c 'import json,glob; print(len({json.load(open(f))["run"]["node"] for f in glob.glob("slurm/cells/*.json")}))')
[ "$NODES" -ge 2 ] || fail "tasks ran on $NODES node(s), expected the cluster's"
echo "ok: 60 cells, $MISSING missing after scancel, rerun ran only those; results identical; cells on $NODES nodes"
