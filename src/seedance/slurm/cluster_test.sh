#!/usr/bin/env bash
# cluster_test.sh TEST_BINARY WORKDIR [gtest args]: starts tests/slurm's 3-node Slurm 22.05 cluster
# with accounting (MariaDB + slurmdbd) inside a private network namespace (slurmdbd binds 0.0.0.0),
# runs the controller's real-cluster test binary against it and stops the cluster by PID.
# Exit 77 (ctest: skipped) without root, unshare or the Slurm/MariaDB packages.
set -uo pipefail
BIN=$(realpath "$1"); WORK=$(realpath -m "$2"); shift 2
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
. "$SRC/scripts/testlib/peer.sh"
for c in slurmctld slurmd slurmdbd mariadbd mariadb-install-db munged mungekey sbatch sacctmgr sacct unshare ip ss; do
  command -v "$c" >/dev/null 2>&1 || peer_missing "$c is not installed (apt-get install munge slurmctld slurmd slurm-client slurmdbd mariadb-server)"
done
[ "$(id -u)" = 0 ] || peer_missing "the Slurm test cluster needs root"
unshare --net true 2>/dev/null || peer_missing "cannot create a network namespace (unshare --net)"
rm -rf "$WORK"; mkdir -p "$WORK"
export BIN WORK SRC GTEST_ARGS="$*"
unshare --net bash -c '
  set -u
  ip link set lo up && ip addr add 127.0.0.2/8 dev lo || exit 1
  export CTLD_PORT=16817 NODE_PORT0=17000 DBD_PORT=16819 DB_PORT=13306 SLURMD_TIMEOUT=10
  B=$WORK/cluster
  if ! WITH_DBD=1 bash "$SRC/tests/slurm/slurm-up.sh" "$B" 3 > "$WORK/slurm-up.log" 2>&1; then
    cat "$WORK/slurm-up.log"; bash "$SRC/tests/slurm/slurm-down.sh" "$B" >/dev/null 2>&1; exit 1
  fi
  export SLURM_BASE=$B SLURM_CONF=$B/etc/slurm.conf
  cd "$B/jobs"
  "$BIN" $GTEST_ARGS; rc=$?
  bash "$SRC/tests/slurm/slurm-down.sh" "$B" > "$WORK/slurm-down.log" 2>&1
  exit $rc'
