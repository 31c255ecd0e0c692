# Sourced by the shell tests that run `seedance server` (the kill -9 durability tests).
# start_server ARGS...: starts "$seedance" server on 127.0.0.1:0 with ARGS, its stderr in
# "$work/server.log"; sets $server (the PID) and $port (from the `listening` log line), or fails
# the test when it does not start within 5 s.
start_server() {
  : >"$work/server.log"
  "$seedance" server --listen 127.0.0.1:0 "$@" 2>>"$work/server.log" &
  server=$!
  port=""
  for _ in $(seq 1 500); do
    port=$(grep '"event":"listening"' "$work/server.log" | grep -o '"port":[0-9]*' | head -1 | cut -d: -f2 || true)
    [ -n "$port" ] && break
    sleep 0.01
  done
  [ -n "$port" ] || { echo "FAIL: the server did not start"; cat "$work/server.log"; exit 1; }
}
