#!/usr/bin/env bash
# Builds the libFuzzer harnesses (preset fuzz: clang-14, ASan + UBSan) and runs each one that has
# a corpus in tests/fuzz/corpus/<harness>/ for SECONDS (default 30), one at a time. Fails (exit 1)
# on a crash, leak or sanitizer report; the reproducer is left in build/fuzz/artifacts/<harness>/.
# New interesting inputs go to build/fuzz/corpus/<harness>/ (not to the checked-in seeds; merge
# them with: build/fuzz/tests/fuzz/<harness> -merge=1 -max_len=2048 tests/fuzz/corpus/<harness>
# build/fuzz/corpus/<harness>, keeping all corpora under 2 MB).
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
seconds="${1:-30}"
shift || true
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzzers
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for dir in tests/fuzz/corpus/*/; do harnesses+=("$(basename "$dir")"); done
fi
status=0
for h in "${harnesses[@]}"; do
  bin="build/fuzz/tests/fuzz/$h"
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: no harness $h (add it in tests/fuzz/CMakeLists.txt)" >&2
    status=1
    continue
  fi
  mkdir -p "build/fuzz/corpus/$h" "build/fuzz/artifacts/$h" "build/fuzz/work/$h"
  echo "== $h: ${seconds}s"
  # -jobs=1 runs one worker that logs to fuzz-0.log in the current directory: run it in work/.
  (cd "build/fuzz/work/$h" && rm -f fuzz-0.log &&
   "$root/$bin" -max_total_time="$seconds" -jobs=1 -workers=1 -timeout=10 -rss_limit_mb=2048 \
     -max_len=65536 -print_final_stats=1 -artifact_prefix="$root/build/fuzz/artifacts/$h/" \
     "$root/build/fuzz/corpus/$h" "$root/tests/fuzz/corpus/$h" >/dev/null 2>&1) || true
  cp "build/fuzz/work/$h/fuzz-0.log" "build/fuzz/$h.log" 2>/dev/null || true
  grep -E '^#[0-9]+.*(INITED|DONE)|==[0-9]+==ERROR|SUMMARY|^stat::' "build/fuzz/$h.log" || true
  if grep -qE '==[0-9]+==ERROR|runtime error|deadly signal|Test unit written' "build/fuzz/$h.log"; then
    echo "fuzz.sh: $h crashed; see build/fuzz/$h.log and build/fuzz/artifacts/$h/" >&2
    status=1
  fi
done
exit $status
