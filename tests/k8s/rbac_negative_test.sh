#!/usr/bin/env bash
# rbac_negative_test.sh SEEDANCE WORK -- the as-shipped tests see a broken deploy/: `controlplane
# smoke` on deploy/'s render with `list` on nodes dropped from ClusterRole seedance (--drop-verb)
# must fail, because the server, as ServiceAccount seedance, is refused (403) and never gets ready.
# Passes only on that failure: exit 1 from the scenario (not from a build), naming the
# ServiceAccount, and a 403 in the server's log. Without Go: skipped (exit 77).
set -uo pipefail
SEEDANCE=${1:?usage: rbac_negative_test.sh SEEDANCE WORK}
WORK=${2:?usage: rbac_negative_test.sh SEEDANCE WORK}
HERE=$(cd "$(dirname "$0")" && pwd)
out=$(bash "$HERE/shipped_test.sh" "$SEEDANCE" "$WORK" smoke --drop-verb ClusterRole/seedance:nodes:list --timeout 20s 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" = 77 ] && exit 77
log=$WORK/smoke-shipped/seedance/seedance.log
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$rc" = 1 ] || fail "smoke with nodes/list dropped from ClusterRole seedance exited $rc, want 1 (the scenario's failure)"
grep -q 'controlplane smoke: FAIL: .*as ServiceAccount seedance' <<<"$out" ||
  fail "smoke failed, but not at the server's readiness under ServiceAccount seedance's RBAC"
grep -q 'answered 403 to GET /api/v1/nodes' "$log" || fail "no 403 on listing nodes in the server's log $log"
echo "PASS: with ClusterRole seedance lacking list on nodes, smoke fails: the server is refused (403) and never ready"
