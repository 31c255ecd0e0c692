#!/usr/bin/env bash
# ci-skips.sh ALLOWLIST LOG...: counts the tests ctest reported as skipped in the LOGs ("The
# following tests did not run: ... (Skipped)") and fails (exit 1) when one is not in ALLOWLIST
# (lines "<test name>  # reason"; blank lines and lines starting with # are ignored). Prints the
# count last, so a CI log ends with it. A parameterized gtest appears as "NAME  # GetParam() = ...";
# NAME is what the allow-list names.
set -euo pipefail
allow=$1; shift
mapfile -t allowed < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$allow" | grep -v '^$' || true)
skipped=() unexpected=()
for log in "$@"; do
  while IFS= read -r name; do
    skipped+=("$name")
    ok=0
    for a in "${allowed[@]}"; do [ "$a" = "$name" ] && ok=1 && break; done
    [ $ok = 1 ] || unexpected+=("$name")
  done < <(sed -n 's/^[[:space:]]*[0-9]\+ - \(.*\) (Skipped)$/\1/p' "$log" | sed 's/[[:space:]]\+#.*$//')
done
for n in "${unexpected[@]}"; do echo "CI: skipped and not in $allow: $n" >&2; done
echo "CI: skipped tests: ${#skipped[@]} (allow-listed: $(( ${#skipped[@]} - ${#unexpected[@]} )), not allowed: ${#unexpected[@]})"
[ ${#unexpected[@]} -eq 0 ]
