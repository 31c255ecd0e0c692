# Sourced by tests/k8s's test scripts: k8s_build_harness OUT builds the controlplane harness
# (tests/k8s/cmd/controlplane) into OUT with Go 1.26 (go on PATH, else /usr/local/go/bin/go).
# Without Go it skips the test (exit 77), or fails it when SEEDANCE_REQUIRE_PEERS=1.
k8s_build_harness() {
  local out=$1 here go start
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  go=${GO:-$(command -v go || true)}
  [ -n "$go" ] || go=/usr/local/go/bin/go
  if [ ! -x "$go" ]; then
    if [ "${SEEDANCE_REQUIRE_PEERS:-0}" = 1 ]; then
      echo "FAIL: Go is not installed (go on PATH or /usr/local/go/bin/go) and SEEDANCE_REQUIRE_PEERS=1" >&2
      exit 1
    fi
    echo "SKIP: Go is not installed (go on PATH or /usr/local/go/bin/go); tests/k8s needs Go 1.26"
    exit 77
  fi
  mkdir -p "$(dirname "$out")"
  start=$(date +%s)
  (cd "$here" && nice -n 10 "$go" build -o "$out" ./cmd/controlplane) || {
    echo "FAIL: go build of tests/k8s/cmd/controlplane" >&2; exit 1; }
  echo "harness built in $(( $(date +%s) - start )) s ($("$go" version))"
}

# k8s_render_deploy BIN KUSTOMIZATION OUT builds tests/deploy's renderer (kustomize's library, as
# `kubectl kustomize`) into BIN and writes KUSTOMIZATION's render to OUT.
k8s_render_deploy() {
  local bin=$1 dir=$2 out=$3 here go
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  go=${GO:-$(command -v go || true)}
  [ -n "$go" ] || go=/usr/local/go/bin/go
  (cd "$here/../deploy" && nice -n 10 "$go" build -o "$bin" ./cmd/render) || {
    echo "FAIL: go build of tests/deploy/cmd/render" >&2; exit 1; }
  "$bin" "$dir" > "$out"
}
