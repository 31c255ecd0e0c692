#!/usr/bin/env bash
# seedance slurm as a process, against fake sinfo/squeue/scontrol on PATH that answer with the
# output captured from Slurm 22.05 (tests/data/slurm): --once --dry-run prints the releases and
# their commands and runs no scontrol write; bad config, malformed squeue and an unreachable
# slurmctld give exit 2, 2 and 1 with the reason.
set -u
SEEDANCE=$1; WORK=$2; DATA=$3
rm -rf "$WORK"; mkdir -p "$WORK/bin"
fail() { echo "FAIL: $*"; exit 1; }
cat > "$WORK/bin/sinfo" <<EOS
#!/bin/sh
cat "$DATA/sinfo1.json"
EOS
cat > "$WORK/bin/squeue" <<EOS
#!/bin/sh
[ -n "\${FAKE_SQUEUE_DOWN:-}" ] && { echo "squeue: error: Unable to contact slurm controller (connect failure)" >&2; exit 1; }
[ -n "\${FAKE_SQUEUE_BAD:-}" ] && { echo '{"jobs":[{"job_id":"seven","job_state":"PENDING"}]}'; exit 0; }
cat "$DATA/squeue1.json"
EOS
# Reads (`scontrol show job -d`: a running job's GPU devices) are logged apart and answered with
# nothing (devices unknown); everything else is a write and lands in scontrol.log.
cat > "$WORK/bin/scontrol" <<EOS
#!/bin/sh
[ "\$1" = show ] && { echo "\$@" >> "$WORK/scontrol-reads.log"; exit 0; }
echo "\$@" >> "$WORK/scontrol.log"
EOS
chmod +x "$WORK/bin/"*
cat > "$WORK/config.yaml" <<'EOS'
tenancy:
  tenants:
    - {name: gold, cohort: all, tier: gold, quota: {gpu: {nominal: 4}}}
    - {name: bronze, cohort: all, tier: bronze, quota: {gpu: {nominal: 4}}}
slurm:
  partition: gpu
  mode: strict
EOS
export PATH="$WORK/bin:$PATH"
out=$("$SEEDANCE" slurm --config "$WORK/config.yaml" --once --dry-run 2>&1); rc=$?
[ $rc = 0 ] || fail "dry run exit $rc: $out"
echo "$out" | grep -q "release job 1 -> n1 (H100 x2)" || fail "job 1 not released onto n1: $out"
echo "$out" | grep -q "release job 2 -> n3 (A100 x2)" || fail "job 2 not released onto n3: $out"
echo "$out" | grep -q '\$ scontrol release 1' || fail "no command shown: $out"
echo "$out" | grep -q "running on n1 already: adopted" || fail "job 3 not adopted: $out"
[ ! -e "$WORK/scontrol.log" ] || fail "dry run ran scontrol: $(cat "$WORK/scontrol.log")"
# Without --dry-run the same decisions are taken.
out=$("$SEEDANCE" slurm --config "$WORK/config.yaml" --once 2>&1) || fail "run: $out"
grep -q "^release 1" "$WORK/scontrol.log" || fail "no release ran: $(cat "$WORK/scontrol.log")"
grep -q "^update jobid=2 nodelist=n3" "$WORK/scontrol.log" || fail "job 2 not pinned to n3: $(cat "$WORK/scontrol.log")"
# Bad input.
printf 'slurm:\n  intervl: 5s\n' > "$WORK/bad.yaml"
out=$("$SEEDANCE" slurm --config "$WORK/bad.yaml" --once 2>&1); rc=$?
[ $rc = 2 ] || fail "bad config exit $rc"
echo "$out" | grep -q "bad.yaml:2: key 'slurm.intervl': unknown key" || fail "bad config message: $out"
out=$(FAKE_SQUEUE_BAD=1 "$SEEDANCE" slurm --config "$WORK/config.yaml" --once 2>&1); rc=$?
[ $rc = 2 ] || fail "malformed squeue exit $rc: $out"
echo "$out" | grep -q "squeue --json: jobs\[0\].job_id: expected an integer" || fail "malformed squeue message: $out"
out=$(FAKE_SQUEUE_DOWN=1 "$SEEDANCE" slurm --config "$WORK/config.yaml" --once 2>&1); rc=$?
[ $rc = 1 ] || fail "unreachable slurmctld exit $rc: $out"
echo "$out" | grep -q "Unable to contact slurm controller" || fail "unreachable message: $out"
echo PASS
