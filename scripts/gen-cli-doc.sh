#!/usr/bin/env bash
# docs/CLI.md from the --help texts of every seedance command, and the rules those texts follow.
#   scripts/gen-cli-doc.sh SEEDANCE > docs/CLI.md   write the reference
#   scripts/gen-cli-doc.sh SEEDANCE --check FILE     exit 1 if FILE is not what would be written, or
#                                                    a help text breaks a rule (listed on stderr)
# Rules: each command's one-line summary is sentence case and at most 80 characters; each --help
# ends with an example invocation; no help text names an internal specification id (S3.3 ...).
set -euo pipefail
bin=${1:?usage: gen-cli-doc.sh SEEDANCE [--check FILE]}
mode=${2:-}
problems=()

# Commands below `path` (words), depth first, in the order --help lists them.
subcommands() {
  "$bin" "$@" --help | awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}'
}
summaries() {
  "$bin" "$@" --help | awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{print} on && /^$/{on=0}'
}

emit() {
  local help
  help=$("$bin" "$@" --help)
  local name="seedance${*:+ $*}"
  printf '## %s\n\n```text\n%s\n```\n\n' "$name" "$help"
  # Here-strings, not pipes: under pipefail, grep -q exiting at its first match could fail printf
  # with SIGPIPE on a long help text and report a rule broken that is not.
  if ! grep -q '^Example' <<<"$help"; then
    problems+=("$name: --help has no example")
  elif ! printf '%s\n' "$help" | awk '/^Example/{seen=1; n=0; next} seen{n++} END{exit !(seen && n <= 2)}'; then
    problems+=("$name: the example is not at the end of --help")
  fi
  if grep -Eq '\(S[0-9]+(\.[0-9]+)?|\bS[0-9]+\.[0-9]+\b' <<<"$help"; then
    problems+=("$name: --help names a specification id: $(printf '%s\n' "$help" | grep -Eo '\bS[0-9]+(\.[0-9]+)?(-S?[0-9.]+)?' | head -1)")
  fi
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    local sub summary
    sub=$(awk '{print $1}' <<<"$line")
    summary=$(sed -E 's/^  [a-z-]+ +//' <<<"$line")
    if [ ${#summary} -gt 80 ]; then problems+=("$name $sub: summary longer than 80 characters (${#summary})"); fi
    if ! [[ $summary =~ ^[A-Z] ]]; then problems+=("$name $sub: summary does not start with a capital"); fi
    if [[ $summary == *. ]]; then problems+=("$name $sub: summary ends with a full stop"); fi
  done < <(summaries "$@")
  local sub
  for sub in $(subcommands "$@"); do emit "$@" "$sub"; done
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  printf '# Seedance command-line reference\n\n'
  printf 'Generated from the `--help` texts by `scripts/gen-cli-doc.sh`; a test fails when this file is\n'
  printf 'out of date. Regenerate with `scripts/gen-cli-doc.sh build/ci/apps/cli/seedance > docs/CLI.md`.\n\n'
  emit
} > "$tmp"  # a redirected group runs in this shell, so `problems` survives

if [ "$mode" = "--check" ]; then
  file=${3:?--check needs the file}
  rc=0
  for p in "${problems[@]+"${problems[@]}"}"; do echo "cli help: $p" >&2; rc=1; done
  if ! diff -u "$file" "$tmp" >&2; then
    echo "cli help: $file is out of date: run scripts/gen-cli-doc.sh SEEDANCE > $file" >&2
    rc=1
  fi
  exit $rc
fi
cat "$tmp"
for p in "${problems[@]+"${problems[@]}"}"; do echo "cli help: $p" >&2; done
