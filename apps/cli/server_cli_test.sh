#!/usr/bin/env bash
# seedance server as a process: starts on port 0, survives SIGHUP with a broken config (keeps the old
# one), applies a good one on the next SIGHUP, restarts on its port after kill -9, exits 0 on SIGTERM;
# bad flags and configs exit 2.
# Usage: server_cli_test.sh SEEDANCE WORKDIR
set -u
SEEDANCE=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK"
fail() { echo "FAIL: $*"; [ -f "$WORK/server.log" ] && cat "$WORK/server.log"; [ -n "${PID:-}" ] && kill -9 "$PID" 2>/dev/null; exit 1; }

# GET PATH on the server: prints the response body (HTTP/1.0, so the server closes after it).
get() {
  exec 3<>"/dev/tcp/127.0.0.1/$PORT" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
# Waits until the log has N lines matching PATTERN.
wait_log() {
  for _ in $(seq 1 100); do
    n=$(grep -c "$1" "$WORK/server.log" 2>/dev/null)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "no '$1' (x$2) in the log"
}

# Bad flags and configs: exit 2, nothing served.
"$SEEDANCE" server --listen nope 2>/dev/null; [ $? -eq 2 ] || fail "--listen nope should exit 2"
"$SEEDANCE" server --listen 127.0.0.1:0 --db postgresql://localhost/ledger 2>/dev/null
[ $? -eq 2 ] || fail "a PostgreSQL --db should exit 2 (the server's ledger is SQLite)"
"$SEEDANCE" server --config "$WORK/absent.yaml" --listen 127.0.0.1:0 2>/dev/null
[ $? -eq 2 ] || fail "a missing config should exit 2"
printf 'server:\n  placement_policy: nope\n' > "$WORK/bad.yaml"
"$SEEDANCE" server --config "$WORK/bad.yaml" --listen 127.0.0.1:0 2>"$WORK/bad.log"
[ $? -eq 2 ] || fail "a bad config should exit 2"
grep -q "bad.yaml:2: key 'server.placement_policy'" "$WORK/bad.log" || fail "the error names file:line:key: $(cat "$WORK/bad.log")"

printf 'server:\n  placement_policy: fgd\n' > "$WORK/config.yaml"
"$SEEDANCE" server --config "$WORK/config.yaml" --listen 127.0.0.1:0 --db "$WORK/ledger.db" 2>"$WORK/server.log" &
PID=$!
wait_log '"event":"listening"' 1
PORT=$(grep '"event":"listening"' "$WORK/server.log" | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2)
[ -n "$PORT" ] && [ "$PORT" -gt 0 ] || fail "no port in the listening line"
[ "$(get /healthz)" = "ok" ] || fail "/healthz"
get /v1/config | grep -q '"policy":"fgd"' || fail "/v1/config before reload"

printf 'server:\n  placement_policy: packing\n  seed: [\n' > "$WORK/config.yaml"
kill -HUP "$PID"
wait_log '"event":"config_rejected"' 1
[ "$(get /healthz)" = "ok" ] || fail "/healthz after a broken reload"
get /v1/config | grep -q '"policy":"fgd"' || fail "the old config should stay"

printf 'server:\n  placement_policy: packing\n' > "$WORK/config.yaml"
kill -HUP "$PID"
wait_log '"event":"config_applied"' 1
get /v1/config | grep -q '"policy":"packing"' || fail "the good config should apply"
get /metrics | grep -q 'seedance_config_reloads_total{result="rejected"} 1' || fail "reload counters"

# kill -9 and a restart on the same port (SO_REUSEADDR, no stale state) serves again.
kill -9 "$PID"
wait "$PID" 2>/dev/null || true
mv "$WORK/server.log" "$WORK/server-killed.log"
"$SEEDANCE" server --config "$WORK/config.yaml" --listen "127.0.0.1:$PORT" --db "$WORK/ledger.db" 2>"$WORK/server.log" &
PID=$!
wait_log '"event":"listening"' 1
[ "$(get /healthz)" = "ok" ] || fail "/healthz after a restart on port $PORT"

kill -TERM "$PID"
wait "$PID"
RC=$?
[ "$RC" -eq 0 ] || fail "SIGTERM should exit 0, got $RC"
grep -q '"event":"stopped"' "$WORK/server.log" || fail "no stopped line"
echo PASS
