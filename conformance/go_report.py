#!/usr/bin/env python3
"""Compare two `go test -v` logs (pebbe/zmq4 against ferromq and against libzmq).

Writes a markdown report: per-package / per-side pass/fail/skip counts, the list of tests
that fail (or do not run to completion) on ferromq but pass on libzmq, split into
"needs CURVE (issue 6)" and the rest, and the per-test failure messages.

Only the Python standard library is used.
"""
import argparse
import re
import sys
from collections import OrderedDict
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent

RUN_RE = re.compile(r"^=== (RUN|CONT|PAUSE|NAME)\s+(\S+)")
RES_RE = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\)")
PKG_OK_RE = re.compile(r"^ok\s+(\S+)\s+(\S+)")
PKG_FAIL_RE = re.compile(r"^FAIL\s+(\S+)\s+(.*)$")
PKG_NOTEST_RE = re.compile(r"^\?\s+(\S+)\s+\[no test files\]")
TIMEOUT_RE = re.compile(r"^panic: test timed out after")

# Tests that need a security mechanism ferromq does not have (CURVE, issue 6).
CURVE_HINTS = ("curve", "z85")
# Tests that need PLAIN or a ZAP handler (not implemented in ferromq either). Names are
# pebbe/zmq4's; the output hints catch renamed tests.
SECURITY_TESTS = {
    "TestSecurityPlain": "PLAIN mechanism (ZMQ_PLAIN_SERVER -> ENOTSUP)",
    "TestSecurityNull": "ZAP handler for the NULL mechanism (ZMQ_ZAP_DOMAIN ignored)",
}
SECURITY_HINTS = ("plain", "zap")


def parse(path):
    """Return (tests, packages).

    tests:    OrderedDict name -> {"pkg", "status", "time", "output": [lines]}
              status in PASS/FAIL/SKIP/NORESULT (started but never reported).
    packages: OrderedDict pkg -> status string ("ok", "FAIL", "build failed", ...)
    """
    tests = OrderedDict()
    packages = OrderedDict()
    pending = []          # test names seen since the last package summary line
    current = None        # test whose output we are collecting
    build_errors = []     # compiler output before any test ran
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except FileNotFoundError:
        return None, None, None
    for line in lines:
        m = RUN_RE.match(line)
        if m:
            name = m.group(2)
            if name not in tests:
                tests[name] = {"pkg": None, "status": "NORESULT", "time": "", "output": []}
                pending.append(name)
            current = name
            continue
        m = RES_RE.match(line)
        if m:
            name = m.group(3)
            t = tests.setdefault(name, {"pkg": None, "status": "NORESULT", "time": "", "output": []})
            if name not in pending and t["pkg"] is None:
                pending.append(name)
            t["status"] = m.group(2)
            t["time"] = m.group(4)
            current = None if not m.group(1) else current
            continue
        m = PKG_OK_RE.match(line)
        if m:
            packages[m.group(1)] = "ok"
            for n in pending:
                tests[n]["pkg"] = m.group(1)
            pending, current = [], None
            continue
        m = PKG_FAIL_RE.match(line)
        if m:
            rest = m.group(2).strip()
            packages[m.group(1)] = "build failed" if "[build failed]" in rest else (
                "setup failed" if "[setup failed]" in rest else "FAIL")
            for n in pending:
                tests[n]["pkg"] = m.group(1)
            pending, current = [], None
            continue
        m = PKG_NOTEST_RE.match(line)
        if m:
            packages[m.group(1)] = "no test files"
            continue
        if TIMEOUT_RE.match(line) and current:
            tests[current]["output"].append(line)
            tests[current]["status"] = "NORESULT"
            continue
        if current is not None:
            if line.strip() and line not in ("PASS", "FAIL"):
                tests[current]["output"].append(line)
        elif not tests and line.strip():
            build_errors.append(line)
    for n in pending:
        tests[n]["pkg"] = "?"
    return tests, packages, build_errors


def top(name):
    return name.split("/", 1)[0]


def needs_curve(name, tests_f):
    low = name.lower()
    if any(h in low for h in CURVE_HINTS):
        return True
    out = " ".join(tests_f.get(name, {}).get("output", [])).lower()
    return "curve not available" in out


def needs_security(name, tests_f):
    if top(name) in SECURITY_TESTS:
        return True
    low = name.lower()
    return any(h in low for h in SECURITY_HINTS)


def count(tests, pkg, subtests=False):
    c = {"PASS": 0, "FAIL": 0, "SKIP": 0, "NORESULT": 0}
    for n, t in tests.items():
        if t["pkg"] != pkg or (not subtests and "/" in n):
            continue
        c[t["status"]] += 1
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ferromq", required=True)
    ap.add_argument("--libzmq", required=True)
    ap.add_argument("--ferromq-lib", default="")
    ap.add_argument("--libzmq-lib", default="")
    ap.add_argument("--version", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--strict", action="store_true")
    a = ap.parse_args()

    tf, pf, _ = parse(a.ferromq)
    tl, pl, _ = parse(a.libzmq)
    if tf is None or tl is None:
        print("missing log: %s" % (a.ferromq if tf is None else a.libzmq), file=sys.stderr)
        return 2

    out = []
    w = out.append
    w("# pebbe/zmq4 %s `go test` conformance: ferromq vs libzmq\n" % a.version)
    w("- ferromq side loads: `%s`" % a.ferromq_lib)
    w("- libzmq side loads: `%s`" % a.libzmq_lib)
    w("- command (each side): `go test -v -count=1 -timeout 300s ./...` (default build tags)\n")

    w("## Summary (top-level tests)\n")
    w("| package | side | package result | passed | failed | skipped | no result |")
    w("|---|---|---|---:|---:|---:|---:|")
    pkgs = list(OrderedDict.fromkeys(list(pl.keys()) + list(pf.keys())))
    for pkg in pkgs:
        for side, tests, packs in (("ferromq", tf, pf), ("libzmq", tl, pl)):
            c = count(tests, pkg)
            w("| `%s` | %s | %s | %d | %d | %d | %d |" % (
                pkg, side, packs.get(pkg, "-"), c["PASS"], c["FAIL"], c["SKIP"], c["NORESULT"]))
    w("")

    # per-test comparison table
    names = list(OrderedDict.fromkeys(list(tl.keys()) + list(tf.keys())))
    w("## Per-test results\n")
    w("| test | package | libzmq | ferromq |")
    w("|---|---|---|---|")
    for n in names:
        sl = tl.get(n, {}).get("status", "-")
        sf = tf.get(n, {}).get("status", "-")
        mark = " **≠**" if sl != sf else ""
        pkg = (tl.get(n) or tf.get(n))["pkg"]
        w("| `%s` | `%s` | %s | %s%s |" % (n, pkg, sl, sf, mark))
    w("")

    regress = [n for n in names
               if tl.get(n, {}).get("status") == "PASS"
               and tf.get(n, {}).get("status") in ("FAIL", "NORESULT", "SKIP", None)]
    curve = [n for n in regress if needs_curve(n, tf)]
    security = [n for n in regress if n not in curve and needs_security(n, tf)]
    other = [n for n in regress if n not in curve and n not in security]
    pkg_regress = [p for p in pkgs if pl.get(p) == "ok" and pf.get(p) != "ok"
                   and not any(tf.get(n, {}).get("pkg") == p for n in tf)]

    w("## Fail (or skip / no result) on ferromq, pass on libzmq\n")
    if not regress and not pkg_regress:
        w("None.\n")
    w("### Needs CURVE (issue 6)\n")
    for n in curve:
        w("- `%s`: ferromq %s" % (n, tf.get(n, {}).get("status", "missing")))
    if not curve:
        w("None.")
    w("\n### Needs PLAIN / ZAP (not implemented)\n")
    for n in security:
        why = SECURITY_TESTS.get(top(n), "")
        w("- `%s`: ferromq %s%s" % (n, tf.get(n, {}).get("status", "missing"),
                                    " -- " + why if why else ""))
    if not security:
        w("None.")
    w("\n### Other\n")
    for n in other:
        w("- `%s`: ferromq %s" % (n, tf.get(n, {}).get("status", "missing")))
    for p in pkg_regress:
        w("- package `%s`: ferromq %s" % (p, pf.get(p, "missing")))
    if not other and not pkg_regress:
        w("None.")
    w("")

    both = [p for p in pkgs if pl.get(p) not in ("ok", "no test files", None) and pf.get(p) == pl.get(p)]
    if both:
        w("## Packages failing on both sides (not a ferromq difference)\n")
        for p in both:
            w("- `%s`: %s on both" % (p, pl[p]))
        w("")

    w("## ferromq failure output\n")
    for n in regress:
        w("### `%s` (%s)\n" % (n, tf.get(n, {}).get("status", "missing")))
        w("```")
        for line in tf.get(n, {}).get("output", [])[:40]:
            w(line)
        w("```\n")

    with open(a.out, "w", encoding="utf-8") as fh:
        # Published reports name files in this repository relative to its root.
        fh.write("\n".join(out).replace(str(REPO_DIR) + "/", "") + "\n")
    print("report: %s  (%d ferromq-only failures: %d need CURVE, %d PLAIN/ZAP, %d other)" % (
        a.out, len(regress), len(curve), len(security), len(other)))
    if a.strict and (other or pkg_regress):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
