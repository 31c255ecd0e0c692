#!/usr/bin/env bash
# Run by src/seedance/ledger/pg_test.sh, which starts a throwaway PostgreSQL and sets
# SEEDANCE_PG_CONN: `seedance cost-benchmark --ledger <connection string>` writes the seedance
# policy's charges into PostgreSQL, and a rerun replaces them (no double counting).
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
psql_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/psql
sum() { "$psql_bin" "$SEEDANCE_PG_CONN" -Atc "select count(*) || ' ' || coalesce(sum(cost_micro), 0) from seedance_charges"; }
"$SEEDANCE" cost-benchmark --duration 1d --no-packing --ledger "$SEEDANCE_PG_CONN" --out "$out/a" >/dev/null
first=$(sum)
"$SEEDANCE" cost-benchmark --duration 1d --no-packing --ledger "$SEEDANCE_PG_CONN" --out "$out/b" >/dev/null
second=$(sum)
echo "charges (count, micro-USD): after one run $first, after a rerun $second"
[ "${first%% *}" -gt 0 ] || { echo "no charges written"; exit 1; }
[ "$first" = "$second" ] || { echo "a rerun changed the ledger"; exit 1; }
