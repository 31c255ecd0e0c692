#!/usr/bin/env bash
# Sorts the samples of a `perf record` of `seedance server` (scripts/bench-server.sh with
# SEEDANCE_PERF=FILE) by what they were doing, from each sample's own function (self time):
#   codec      the extender's JSON: request parsing (nlohmann, the NodeNames scanner, ParsePod) and
#              the answers' writers (DumpFilterResult, DumpHostPriorityList, AnswerText)
#   http       cpp-httplib and the server's front end (guarded queue, reactor), in user space
#   kernel     everything in the kernel (socket reads and writes, scheduling, page faults)
#   decision   the extender's rules and policy (Extender, cluster, sched)
#   memory     malloc/free and libc's copies (memmove, memcpy, memset, strlen): shared by all
#   other      the rest (metrics, the decision log, the standard library)
# Usage: scripts/perf-breakdown.sh perf.data
set -euo pipefail
data=${1:?usage: scripts/perf-breakdown.sh perf.data}
command -v perf >/dev/null || { echo "perf-breakdown: perf is not installed" >&2; exit 2; }
perf report -i "$data" --no-children --sort dso,sym --stdio -g none 2>/dev/null | awk '
  /^ +[0-9.]+%/ {
    pct = $1; sub(/%/, "", pct); line = $0
    if (line ~ /\[k\]/) c = "kernel"
    else if (line ~ /nlohmann|ScanPlainNodeNames|ParseExtenderArgs|ParsePod|ParseBody|DumpFilterResult|DumpHostPriorityList|AppendJsonString|AnswerText|PlainStringEnd|CheckJsonDepth|IsKubernetesName|K8sQuantity|ParseQuantity/) c = "codec"
    else if (line ~ /httplib|Guarded|Reactor|ConnectionStream|HttpServer/) c = "http"
    else if (line ~ /Extender::|extender_internal|seedance::cluster|seedance::sched|NameIndex|HealthBoard|QuotaBook/) c = "decision"
    else if (line ~ /malloc|free|_int_|memmove|memcpy|memset|memcmp|strlen|unlink_chunk|operator new|operator delete/) c = "memory"
    else c = "other"
    share[c] += pct; total += pct
  }
  END {
    n = split("codec http kernel decision memory other", order, " ")
    for (i = 1; i <= n; ++i) printf "%-9s %6.1f %%\n", order[i], share[order[i]]
    printf "%-9s %6.1f %%\n", "total", total
  }'
