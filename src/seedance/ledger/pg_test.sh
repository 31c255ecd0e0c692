#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 on 127.0.0.1 (initdb + pg_ctl, as the postgres user when run by
# root), runs a test against it, stops it. The test gets SEEDANCE_PG_CONN (a libpq connection
# string) and SEEDANCE_PG_URL (postgresql://user@host:port, no database: tests add /DBNAME).
# Exits 77 (ctest: skipped) when no PostgreSQL server binaries are installed or it cannot start;
# under SEEDANCE_REQUIRE_PEERS=1 that is a failure (scripts/testlib/peer.sh).
# Usage: pg_test.sh TEST_BINARY WORKDIR [ARGS...]
set -uo pipefail
test_bin=$1 work=$2
shift 2
. "$(dirname "$0")/../../../scripts/testlib/peer.sh"
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then peer_missing "no PostgreSQL server installed"; fi
rm -rf "$work" && mkdir -p "$work" && chmod 700 "$work"
port=$((15000 + $$ % 2000))   # below the ephemeral range
as_pg=()
if [ "$(id -u)" = 0 ]; then
  if ! id postgres >/dev/null 2>&1; then peer_missing "running as root without a postgres user"; fi
  chown postgres:postgres "$work"
  as_pg=(runuser -u postgres --)
fi
if ! "${as_pg[@]}" "$bin/initdb" -D "$work/data" -A trust -U postgres -E UTF8 --no-sync >"$work/initdb.log" 2>&1; then
  cat "$work/initdb.log"; peer_missing "initdb failed"
fi
if ! "${as_pg[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $work -c fsync=off" start >/dev/null; then
  cat "$work/server.log"; peer_missing "PostgreSQL did not start"
fi
trap '"${as_pg[@]}" "$bin/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null 2>&1' EXIT
SEEDANCE_PG_CONN="host=127.0.0.1 port=$port user=postgres dbname=postgres" \
  SEEDANCE_PG_URL="postgresql://postgres@127.0.0.1:$port" "$test_bin" "$@"
