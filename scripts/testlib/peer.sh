# Sourced by the shell tests that start a real peer (PostgreSQL, Slurm, curl + sqlite3, ...).
# peer_missing REASON: the peer is not here. Skips (exit 77, ctest SKIP_RETURN_CODE) on a
# developer's machine; fails (exit 1) under SEEDANCE_REQUIRE_PEERS=1, which `.ci/run` sets, so CI
# cannot pass on a skipped peer. The C++ tests' twin is src/seedance/core/testing/require_peer.h.
peer_missing() {
  if [ "${SEEDANCE_REQUIRE_PEERS:-0}" = 1 ]; then
    echo "FAIL: SEEDANCE_REQUIRE_PEERS=1 and a required peer is missing: $*" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
