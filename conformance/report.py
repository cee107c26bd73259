"""Compare two pytest junit XML reports: the reference (real libzmq) vs ferromq.

    python3 conformance/report.py LIBZMQ.xml FERROMQ.xml OUT.md [--title T] [--origin J]...

Prints (and writes to OUT.md, as markdown): a table per test file with passed / failed /
skipped / errors on each side, then every test that fails on ferromq but passes on libzmq
(with the first line of its failure message), then the other differences (failing on both,
passing only on ferromq, skipped on one side only, missing on one side).

--write-mismatches PATH  also writes the node ids whose outcome differs (failed or errored
                         on one side only) to PATH, one a line, for isolated reruns.
--confirm-libzmq X / --confirm-ferromq Y  junit files of those isolated reruns (each test
                         possibly several times): the tables then say how often each
                         differing test failed when run alone, and separate differences that
                         reproduce from flaky or order-dependent ones.
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent

STATES = ("passed", "failed", "skipped", "error")


def classname_to_file(classname: str) -> str:
    # pytest junit classname "tests.test_socket.TestSocket" -> file "tests/test_socket.py"
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        if parts[i - 1].startswith("test_") or parts[i - 1] == "conftest":
            return "/".join(parts[:i]) + ".py"
    return classname.replace(".", "/")


def _testcase(tc) -> tuple[str, dict]:
    classname, name = tc.get("classname", ""), tc.get("name", "")
    file = tc.get("file") or classname_to_file(classname)
    mod = file[:-3].replace("/", ".") if file.endswith(".py") else file
    rest = classname[len(mod):].lstrip(".") if classname.startswith(mod) else classname
    nodeid = "::".join(p for p in (file, rest.replace(".", "::"), name) if p)
    rec = {"file": file, "state": "passed", "message": "", "text": ""}
    for child in tc:
        if child.tag in ("failure", "error"):
            rec["state"] = "failed" if child.tag == "failure" else "error"
            rec["message"], rec["text"] = child.get("message", ""), child.text or ""
            break
        if child.tag == "skipped":
            rec["state"], rec["message"] = "skipped", child.get("message", "")
            if child.get("type") == "pytest.xfail":
                rec["message"] = "xfail: " + rec["message"]
    return nodeid, rec


def _combine(a: dict, b: dict) -> dict:
    """One test reported twice in one run: pytest writes a second <testcase> for an error
    in teardown. The test's outcome is the call's failure if there was one (with the
    teardown error noted), else the error, else skipped, else passed."""
    rank = {"failed": 3, "error": 2, "skipped": 1, "passed": 0}
    first, second = (a, b) if rank[a["state"]] >= rank[b["state"]] else (b, a)
    out = dict(first)
    if first["state"] == "failed" and second["state"] == "error":
        out["message"] = first["message"] + " [+ teardown error: " + first_line(second["message"]) + "]"
    return out


def load(path: str, runs: dict[str, list[dict]] | None = None) -> dict[str, dict]:
    """nodeid -> {file, state, message, text}. Each <testsuite> is one pytest run; a test
    appearing in several runs gets its worst outcome, and with `runs` each run's outcome
    is also appended to runs[nodeid]."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    out: dict[str, dict] = {}
    worst = {"error": 3, "failed": 3, "skipped": 1, "passed": 0}
    for suite in suites:
        seen: dict[str, dict] = {}
        for tc in suite.iter("testcase"):
            nodeid, rec = _testcase(tc)
            seen[nodeid] = _combine(seen[nodeid], rec) if nodeid in seen else rec
        for nodeid, rec in seen.items():
            if runs is not None:
                runs.setdefault(nodeid, []).append(rec)
            prev = out.get(nodeid)
            if prev is None or worst[rec["state"]] > worst[prev["state"]]:
                out[nodeid] = rec
    return out


def first_line(msg: str) -> str:
    """The message's first line; a bare heading such as "AssertionError:" gets the next
    line appended, so the reader sees what was asserted."""
    lines = [ln.strip() for ln in (msg or "").splitlines() if ln.strip()]
    if not lines:
        return ""
    line = lines[0]
    if len(lines) > 1 and (line.endswith(":") or len(line) < 20):
        line += " " + lines[1]
    return line if len(line) <= 240 else line[:237] + "..."


def bad(state: str) -> bool:
    return state in ("failed", "error")


def md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def mismatches(ref: dict, fer: dict) -> list[str]:
    """Node ids that failed or errored on exactly one side."""
    return sorted(k for k in set(ref) & set(fer) if bad(ref[k]["state"]) != bad(fer[k]["state"]))


def rerun_note(k: str, runs: dict | None, want_bad: bool) -> str:
    """'2/2' style count of isolated reruns whose outcome matched the main run's."""
    if runs is None:
        return ""
    recs = runs.get(k, [])
    if not recs:
        return "not rerun"
    hits = sum(1 for r in recs if bad(r["state"]) == want_bad)
    return f"{hits}/{len(recs)}"


def build(ref: dict, fer: dict, title: str, origins: list[dict], ref_name: str, fer_name: str,
          conf_ref: dict | None = None, conf_fer: dict | None = None, note: str = "") -> str:
    lines: list[str] = [f"# {title}", ""]
    if note:
        lines += [note, ""]
    if origins:
        lines += ["| run | pyzmq | zmq_version() | backend | libzmq mapped into the process | has curve |",
                  "|---|---|---|---|---|---|"]
        for o in origins:
            lines.append(f"| {o.get('label', '')} | {o.get('pyzmq')} | {o.get('zmq_version')} | "
                         f"{o.get('backend')} | {', '.join(o.get('libzmq_mapped', []))} | "
                         f"{o.get('has', {}).get('curve')} |")
        lines.append("")

    files = sorted({v["file"] for v in ref.values()} | {v["file"] for v in fer.values()})
    count = {n: defaultdict(lambda: defaultdict(int)) for n in ("ref", "fer")}
    for n, d in (("ref", ref), ("fer", fer)):
        for v in d.values():
            count[n][v["file"]][v["state"]] += 1

    def cells(c):
        return " | ".join(str(c.get(s, 0)) for s in STATES)

    confirmed = conf_ref is not None and conf_fer is not None

    def reproduces(k: str, fer_bad: bool) -> bool:
        """In the isolated reruns, did every run repeat the main run's difference?"""
        if not confirmed:
            return True
        rf, rr = conf_fer.get(k, []), conf_ref.get(k, [])
        return bool(rf) and bool(rr) and all(bad(r["state"]) == fer_bad for r in rf) \
            and all(bad(r["state"]) != fer_bad for r in rr)

    only_fer = sorted(k for k in ref if ref[k]["state"] == "passed" and k in fer and bad(fer[k]["state"]))
    per_file_regress = defaultdict(int)
    for k in only_fer:
        per_file_regress[fer[k]["file"]] += 1

    lines += ["## Results per test file", "",
              f"p/f/s/e = passed / failed / skipped / errors. Regressions = pass on {ref_name}, "
              f"fail or error on {fer_name}.", "",
              f"| test file | {ref_name} p | f | s | e | {fer_name} p | f | s | e | regressions |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    tot = {"ref": defaultdict(int), "fer": defaultdict(int)}
    for f in files:
        for n in ("ref", "fer"):
            for s in STATES:
                tot[n][s] += count[n][f].get(s, 0)
        lines.append(f"| {f} | {cells(count['ref'][f])} | {cells(count['fer'][f])} | "
                     f"{per_file_regress.get(f, 0) or ''} |")
    lines.append(f"| **total** | {cells(tot['ref'])} | {cells(tot['fer'])} | **{len(only_fer)}** |")
    lines.append("")

    real = [k for k in only_fer if reproduces(k, True)]
    flaky = [k for k in only_fer if not reproduces(k, True)]
    head = f"## Fail on {fer_name}, pass on {ref_name} ({len(only_fer)}"
    if confirmed:
        head += (f": {len(real)} reproduce when run alone, {len(flaky)} do not: flaky, or caused by "
                 "an earlier test in the same file")
    lines += [head + ")", ""]
    if confirmed:
        lines += [f"Isolated reruns: each test alone in its own process; '{fer_name} fails' and "
                  f"'{ref_name} passes' count those reruns.", ""]
    if only_fer:
        lines += ["| test | result | first line of the failure |"
                  + (f" {fer_name} fails | {ref_name} passes |" if confirmed else ""),
                  "|---|---|---|" + ("---|---|" if confirmed else "")]
        for k in real + flaky:
            row = f"| `{k}` | {fer[k]['state']} | {md_escape(first_line(fer[k]['message']))} |"
            if confirmed:
                row += f" {rerun_note(k, conf_fer, True)} | {rerun_note(k, conf_ref, False)} |"
            lines.append(row)
    else:
        lines.append("None.")
    lines.append("")

    both = sorted(k for k in ref if bad(ref[k]["state"]) and k in fer and bad(fer[k]["state"]))
    only_ref = sorted(k for k in ref if bad(ref[k]["state"]) and k in fer and not bad(fer[k]["state"]))
    skip_diff = sorted(k for k in ref if k in fer and ref[k]["state"] != fer[k]["state"]
                       and "skipped" in (ref[k]["state"], fer[k]["state"])
                       and not (bad(ref[k]["state"]) or bad(fer[k]["state"])))
    bad_vs_skip = sorted(k for k in ref if k in fer and ref[k]["state"] == "skipped" and bad(fer[k]["state"]))
    missing = sorted(set(ref) ^ set(fer))

    def section(title, keys, show, extra_cols=()):
        out = [f"## {title} ({len(keys)})", ""]
        if not keys:
            return out + ["None.", ""]
        out += ["| test | detail |" + "".join(f" {c} |" for c, _ in extra_cols),
                "|---|---|" + "---|" * len(extra_cols)]
        for k in keys:
            out.append(f"| `{k}` | {md_escape(show(k))} |" + "".join(f" {fn(k)} |" for _, fn in extra_cols))
        return out + [""]

    lines += section("Fail on both", both,
                     lambda k: f"{ref_name}: {first_line(ref[k]['message'])} / {fer_name}: "
                               f"{first_line(fer[k]['message'])}")
    lines += section(f"Skipped on {ref_name}, fail on {fer_name}", bad_vs_skip,
                     lambda k: f"{ref_name} skip: {first_line(ref[k]['message'])} / {fer_name}: "
                               f"{first_line(fer[k]['message'])}")
    lines += section(f"Fail on {ref_name}, pass on {fer_name}", only_ref,
                     lambda k: f"{ref_name}: {first_line(ref[k]['message'])}",
                     ((f"{ref_name} fails alone", lambda k: rerun_note(k, conf_ref, True)),
                      (f"{fer_name} passes alone", lambda k: rerun_note(k, conf_fer, False)))
                     if confirmed else ())
    lines += section("Skipped on one side only", skip_diff,
                     lambda k: f"{ref_name}: {ref[k]['state']} {first_line(ref[k]['message'])} / "
                               f"{fer_name}: {fer[k]['state']} {first_line(fer[k]['message'])}")
    lines += section("Present on one side only", missing,
                     lambda k: f"only in {ref_name}: {ref[k]['state']}" if k in ref
                     else f"only in {fer_name}: {fer[k]['state']} {first_line(fer[k]['message'])}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("libzmq_xml")
    ap.add_argument("ferromq_xml")
    ap.add_argument("out_md")
    ap.add_argument("--title", default="pyzmq test suite: libzmq vs ferromq")
    ap.add_argument("--origin", action="append", default=[],
                    help="zmq_origin.py JSON (libzmq's first, then ferromq's)")
    ap.add_argument("--note", default="", help="a paragraph printed under the title")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 if some test fails on ferromq, passes on libzmq (and, with the "
                         "confirm files, does so in every isolated rerun)")
    ap.add_argument("--write-mismatches", metavar="PATH")
    ap.add_argument("--max-mismatches", type=int, default=100)
    ap.add_argument("--confirm-libzmq", metavar="XML")
    ap.add_argument("--confirm-ferromq", metavar="XML")
    a = ap.parse_args()
    ref, fer = load(a.libzmq_xml), load(a.ferromq_xml)
    if a.write_mismatches:
        with open(a.write_mismatches, "w") as f:
            f.writelines(k + "\n" for k in mismatches(ref, fer)[: a.max_mismatches])
    conf_ref = conf_fer = None
    if a.confirm_libzmq and a.confirm_ferromq:
        conf_ref, conf_fer = {}, {}
        load(a.confirm_libzmq, conf_ref)
        load(a.confirm_ferromq, conf_fer)
    origins = []
    for label, path in zip(("libzmq", "ferromq"), a.origin):
        try:
            with open(path) as f:
                o = json.load(f)
            o["label"] = label
            origins.append(o)
        except OSError:
            pass
    text = build(ref, fer, a.title, origins, "libzmq", "ferromq", conf_ref, conf_fer, a.note)
    # Published reports name files in this repository relative to its root.
    text = text.replace(str(REPO_DIR) + "/", "")
    with open(a.out_md, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    regress = [k for k in ref if ref[k]["state"] == "passed" and k in fer and bad(fer[k]["state"])]
    if conf_ref is not None and conf_fer is not None:
        real = [k for k in regress
                if conf_fer.get(k) and conf_ref.get(k)
                and all(bad(r["state"]) for r in conf_fer[k])
                and not any(bad(r["state"]) for r in conf_ref[k])]
    else:
        real = regress
    print(f"pyzmq conformance: {len(regress)} tests fail on ferromq and pass on libzmq, "
          f"{len(real)} of them reproducibly; report: {a.out_md}", file=sys.stderr)
    return 1 if a.strict and real else 0


if __name__ == "__main__":
    sys.exit(main())
