#!/usr/bin/env python3
"""Regenerates tests/data/conformance/ from the upstream suites (test inputs and outcomes only).

Usage: extract.py COMMON_GIT PROMETHEUS_GIT OPENMETRICS_GIT   (bare git dirs, read at HEAD)
Writes cases/<origin>/<case> (raw bytes) and manifest.tsv:
  origin  case  format  upstream(accept|reject)  samples  file
`samples` is the number of sample lines of an accepted input (lines not blank, not comments,
before '# EOF'): in these text formats each sample line is one sample.
"""
import os, re, subprocess, sys, json

HERE = os.path.dirname(os.path.abspath(__file__))

def git_show(repo, path):
    return subprocess.run(["git", "--git-dir", repo, "show", "HEAD:" + path], check=True,
                          capture_output=True).stdout

def git_head(repo):
    return subprocess.run(["git", "--git-dir", repo, "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()

ESC = {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", '"': b'"', "'": b"'", "a": b"\a",
       "b": b"\b", "f": b"\f", "v": b"\v"}

def go_literal(src, i):
    """Parses one Go string literal at src[i]; returns (bytes, next index)."""
    if src[i] == "`":
        j = src.index("`", i + 1)
        return src[i + 1:j].encode(), j + 1
    assert src[i] == '"', src[i:i + 20]
    out = bytearray()
    j = i + 1
    while src[j] != '"':
        c = src[j]
        if c == "\\":
            e = src[j + 1]
            if e == "x":
                out.append(int(src[j + 2:j + 4], 16)); j += 4; continue
            if e == "u":
                out += chr(int(src[j + 2:j + 6], 16)).encode(); j += 6; continue
            if e in "01234567":
                out.append(int(src[j + 1:j + 4], 8)); j += 4; continue
            out += ESC[e]; j += 2; continue
        out += c.encode(); j += 1
    return bytes(out), j + 1

def go_expr(src, i):
    """A literal, or literals joined by '+'."""
    val, j = go_literal(src, i)
    while True:
        m = re.compile(r"\s*\+\s*").match(src, j)
        if not m or src[m.end()] not in "`\"":
            return val, j
        more, j = go_literal(src, m.end())
        val += more

def func_body(src, name):
    start = src.index("func " + name + "(")
    nxt = src.find("\nfunc ", start + 1)
    return src[start:nxt if nxt >= 0 else len(src)]

def field_cases(body, key, outcome_key=None):
    """Table entries `key: <lit>` (and optional `outcome_key: <lit>` after it)."""
    res = []
    for m in re.finditer(r"\b%s:\s*" % key, body):
        val, j = go_expr(body, m.end())
        out = None
        if outcome_key:
            m2 = re.compile(r"[\s\S]*?\b%s:\s*" % outcome_key).match(body, j)
            nxt = body.find(key + ":", j)
            if m2 and (nxt < 0 or m2.end() < nxt):
                out, _ = go_expr(body, m2.end())
        res.append((val, out))
    return res

def assigned_input(body):
    m = re.search(r"input := ", body)
    val, j = go_expr(body, m.end())
    for m2 in re.finditer(r"\n\tinput \+= ", body):
        more, _ = go_expr(body, m2.end())
        val += more
    return val

def count_samples(data):
    n = 0
    for line in data.split(b"\n"):
        s = line.strip(b" \t\r")
        if s == b"# EOF":
            break
        if s and not s.startswith(b"#"):
            n += 1
    return n

rows = []

def add(origin, case, fmt, accept, data):
    # cases/<repo>_<test file stem>/<case>, e.g. cases/common_text_parse_test/testTextParse_01
    parts = origin.split("@")[0].split("/")
    d = os.path.join(HERE, "cases", parts[1] + "_" + os.path.splitext(parts[-1])[0])
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, case)
    with open(path, "wb") as f:
        f.write(data)
    rows.append((origin, case, fmt, "accept" if accept else "reject",
                 str(count_samples(data)) if accept else "-", os.path.relpath(path, HERE)))

def main():
    common, prom, om = sys.argv[1:4]
    # prometheus/common expfmt/text_parse_test.go
    src = git_show(common, "expfmt/text_parse_test.go").decode()
    origin = "prometheus/common/expfmt/text_parse_test.go@" + git_head(common)[:12]
    for k, (val, _) in enumerate(field_cases(func_body(src, "testTextParse"), "in")):
        add(origin, "testTextParse_%02d" % k, "prom", True, val)
    for k, (val, err) in enumerate(field_cases(func_body(src, "testTextParseError"), "in", "errUTF8")):
        # errUTF8 "" = accepted with UTF-8 names (the default since Prometheus 3), rejected in legacy mode.
        add(origin, "testTextParseError_%02d" % k, "prom", err == b"", val)
    # prometheus/prometheus model/textparse
    src = git_show(prom, "model/textparse/promparse_test.go").decode()
    origin = "prometheus/prometheus/model/textparse/promparse_test.go@" + git_head(prom)[:12]
    add(origin, "TestPromParse", "prom", True, assigned_input(func_body(src, "TestPromParse")))
    add(origin, "TestUTF8PromParse", "prom", True, assigned_input(func_body(src, "TestUTF8PromParse")))
    for k, (val, _) in enumerate(field_cases(func_body(src, "TestPromParseErrors"), "input")):
        add(origin, "TestPromParseErrors_%02d" % k, "prom", False, val)
    for k, (val, err) in enumerate(field_cases(func_body(src, "TestPromNullByteHandling"), "input", "err")):
        add(origin, "TestPromNullByteHandling_%02d" % k, "prom", err == b"", val)
    src = git_show(prom, "model/textparse/openmetricsparse_test.go").decode()
    origin = "prometheus/prometheus/model/textparse/openmetricsparse_test.go@" + git_head(prom)[:12]
    add(origin, "TestOpenMetricsParse", "openmetrics", True,
        assigned_input(func_body(src, "TestOpenMetricsParse")))
    add(origin, "TestOpenMetricsParse_UTF8", "openmetrics", True,
        assigned_input(func_body(src, "TestOpenMetricsParse_UTF8")))
    for k, (val, err) in enumerate(field_cases(func_body(src, "TestOpenMetricsParseErrors"), "input", "err")):
        # err "EOF" is io.EOF: the "happy cases" at the top of that table.
        add(origin, "TestOpenMetricsParseErrors_%02d" % k, "openmetrics", err == b"EOF", val)
    for k, (val, err) in enumerate(field_cases(func_body(src, "TestOMNullByteHandling"), "input", "err")):
        add(origin, "TestOMNullByteHandling_%02d" % k, "openmetrics", err == b"", val)
    for k, (val, _) in enumerate(field_cases(func_body(src, "TestSTParseFailures"), "input")):
        add(origin, "TestSTParseFailures_%02d" % k, "openmetrics", True, val)
    # OpenMetrics test suite
    origin = "prometheus/OpenMetrics/tests/testdata/parsers@" + git_head(om)[:12]
    names = subprocess.run(["git", "--git-dir", om, "ls-tree", "--name-only", "HEAD",
                            "tests/testdata/parsers/"], check=True, capture_output=True,
                           text=True).stdout.split()
    for path in sorted(names):
        case = os.path.basename(path)
        meta = json.loads(git_show(om, path + "/test.json"))
        if meta.get("type") != "text":
            continue
        add(origin, case, "openmetrics", bool(meta["shouldParse"]),
            git_show(om, path + "/" + meta.get("file", "metrics")))
    with open(os.path.join(HERE, "manifest.tsv"), "w") as f:
        f.write("# origin\tcase\tformat\tupstream\tsamples\tfile\n")
        for r in rows:
            f.write("\t".join(r) + "\n")

main()
