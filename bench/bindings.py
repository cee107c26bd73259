"""Workload C of BENCHMARKS.md: binding overhead (imported by bench/run.py).

libzmq's classic perf pair (local_thr/remote_thr, local_lat/remote_lat, two
processes over tcp://127.0.0.1) written once per language, each run over every
library under test, overhead reported against the C driver on the same
library in the same invocation.

Driver contract (every language):  CMD ROLE ENDPOINT SIZE COUNT
  ROLE: local_thr | remote_thr | local_lat | remote_lat; the measuring side
  prints one line  RESULT {"msg_per_s": F}  (local_thr)  or
  RESULT {"latency_us": F}  (remote_lat).
Library selection: drivers link libzmq.so.5 by soname; the runner sets
LD_LIBRARY_PATH=<dir holding only a libzmq.so.5 symlink> and exports
FERROMQ_LIB=<that .so.5> and FERROMQ_LIB_DIR=<dir> for dlopen-based drivers.
The runner checks /proc/<pid>/maps of the bound side to see which libzmq was
really loaded, so a driver that ignores the selection fails loudly.

Standard library only.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
SRC = BENCH_DIR / "bindings"
OUT = BENCH_DIR / "out" / "bindings"
NODE_ZEROMQ = REPO_DIR / "build" / "conformance" / "node" / "app-debian" / "node_modules"

ROLES = ("local_thr", "remote_thr", "local_lat", "remote_lat")
METRIC = {"thr": "msg_per_s", "lat": "latency_us"}
SIZES_QUICK, SIZES_FULL = [64, 1500], [64, 1500, 65536]
# Full mode uses workload A's counts (C is A written per language; a 200,000-message
# window of ~50 ms at 64 B measured JIT and scheduler effects more than the binding).
THR_COUNT = {"quick": {64: 20_000, 1500: 10_000, 65536: 2_000},
             "full": {64: 1_000_000, 1500: 178_956, 65536: 4_096}}
LAT_COUNT = {"quick": {64: 1_000, 1500: 1_000, 65536: 500},
             "full": {64: 20_000, 1500: 20_000, 65536: 4_096}}
MIN_COUNT = 20


@dataclass
class Lang:
    key: str            # id, e.g. "python"
    name: str           # table "Language" column
    binding: str        # table "Binding" column
    build: str | None   # bench/bindings/<dir>/build.sh, or None
    out: str            # build output dir under bench/out/bindings/
    argv: list[str]     # command prefix; ROLE ENDPOINT SIZE COUNT appended
    env: dict = field(default_factory=dict)
    only: str | None = None   # run over this library label only (native API)
    expensive: bool = False   # quick mode does not build it, only reuses it
    needs: list[str] = field(default_factory=list)  # tools on PATH
    avail: str | None = None  # reason it cannot run, set by prepare()
    loads_libzmq: bool = True  # check /proc/pid/maps for the selected lib


def languages() -> list[Lang]:
    o = lambda d, *p: str(OUT.joinpath(d, *p))
    return [
        Lang("c", "C", "zmq.h (libzmq API)", "c", "c", [o("c", "perf")],
             needs=["gcc"]),
        Lang("cpp", "C++", "cppzmq 4.9 (zmq.hpp)", "cpp", "cpp",
             [o("cpp", "perf")], needs=["g++"]),
        Lang("python", "Python", "pyzmq 27.3.0 (sdist, -lzmq)", "python",
             "python", [o("python", "venv", "bin", "python"), "-I",
                        str(SRC / "python" / "perf.py")],
             expensive=True, needs=["python3"]),
        Lang("go", "Go", "pebbe/zmq4 v1.4.0 (cgo)", "go", "go",
             [o("go", "perf")], needs=["go"]),
        Lang("rust-zmq", "Rust", "zmq crate 0.9.2", "rust", "rust",
             [o("rust", "perf_zmq")], expensive=True, needs=["cargo"]),
        Lang("rust-native", "Rust", "ferromq native API (crates/core)", "rust",
             "rust", [o("rust", "perf_native")], only="ferromq",
             expensive=True, needs=["cargo"], loads_libzmq=False),
        Lang("node-ferromq", "Node.js",
             "ferromq binding (bindings/node; latency: receiveInto)",
             None, "", ["bash", str(REPO_DIR / "bindings" / "node" / "perf.sh")],
             needs=["node"]),
        Lang("node-zeromq", "Node.js", "zeromq.js 6.8.0 (shared libzmq)",
             None, "", ["node", str(SRC / "node-zeromq" / "perf.js")],
             env={"NODE_PATH": str(NODE_ZEROMQ)}, needs=["node"]),
        Lang("java", "Java", "bindings/java", None, "",
             ["bash", str(REPO_DIR / "bindings" / "java" / "perf.sh")],
             needs=["java"]),
    ]


# ---------------------------------------------------------------------------
# Pure helpers (unit-tested)
# ---------------------------------------------------------------------------

def parse_result(stdout: str) -> dict | None:
    """The last `RESULT {json}` line of a driver's stdout, or None."""
    for line in reversed((stdout or "").splitlines()):
        line = line.strip()
        if line.startswith("RESULT "):
            try:
                d = json.loads(line[len("RESULT "):])
            except json.JSONDecodeError:
                return None
            return d if isinstance(d, dict) else None
    return None


def result_value(res: dict | None, kind: str) -> float | None:
    v = (res or {}).get(METRIC[kind])
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 \
            and v == v and v != float("inf"):
        return float(v)
    return None


def overhead_pct(lang_value: float | None, c_value: float | None) -> float | None:
    """lang / C − 1 in percent (the suite's Diff): throughput − = slower than
    C, latency + = slower than C."""
    if lang_value is None or c_value is None or c_value == 0:
        return None
    return (lang_value / c_value - 1.0) * 100.0


def counts(mode: str, kind: str, size: int, scale: float = 1.0) -> int:
    table = THR_COUNT if kind == "thr" else LAT_COUNT
    n = table[mode].get(size) or table[mode][max(table[mode])]
    return max(MIN_COUNT, int(n * scale))


# ---------------------------------------------------------------------------
# Preparation: library dirs and builds
# ---------------------------------------------------------------------------

def lib_dir(label: str, path: str, root: Path = OUT / "libdirs") -> Path:
    """A directory holding only libzmq.so.5 -> path (same mechanism for every
    library)."""
    d = root / label
    d.mkdir(parents=True, exist_ok=True)
    link = d / "libzmq.so.5"
    target = os.path.realpath(path)
    if link.is_symlink() and os.readlink(link) == target:
        return d
    tmp = d / ".libzmq.so.5.tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(target)
    os.replace(tmp, link)
    return d


def build_node_zeromq(quick: bool, log=print) -> str | None:
    """Builds zeromq.js in shared-library mode (conformance/node-zeromq.sh, ~8 minutes)
    for a full run; a quick run skips it. None when built, else why it is not run."""
    if quick:
        return ("no shared-library zeromq.js build (quick mode does not build it; "
                "`make bench-full` or conformance/node-zeromq.sh does)")
    OUT.mkdir(parents=True, exist_ok=True)
    logf = OUT / "node-zeromq-build.log"
    log(f"bindings: building zeromq.js (shared libzmq) with conformance/node-zeromq.sh, "
        f"log {logf.relative_to(REPO_DIR)}")
    with open(logf, "w") as f:
        rc = subprocess.run(["bash", str(REPO_DIR / "conformance" / "node-zeromq.sh")],
                            cwd=REPO_DIR, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0 or not (NODE_ZEROMQ / "zeromq").is_dir():
        return (f"zeromq.js shared-library build failed (exit {rc}; "
                f"see {logf.relative_to(REPO_DIR)})")
    return None


def prepare(langs: list[Lang], quick: bool, log=print) -> None:
    """Build what can be built; set lang.avail to a reason when it cannot run."""
    built: dict[str, str | None] = {}
    for L in langs:
        missing = [t for t in L.needs if shutil.which(t) is None]
        if missing:
            L.avail = f"toolchain missing: {', '.join(missing)} not on PATH"
            continue
        if L.key == "node-zeromq" and not (NODE_ZEROMQ / "zeromq").is_dir():
            L.avail = build_node_zeromq(quick, log)
            if L.avail:
                continue
        script = L.argv[-1] if L.argv[0] == "bash" else None
        if script and not Path(script).exists():
            L.avail = f"driver not provided yet ({Path(script).relative_to(REPO_DIR)} missing)"
            continue
        if L.build is None:
            continue
        exe = Path(L.argv[0])
        if L.build in built:
            L.avail = built[L.build]
        elif quick and L.expensive and not exe.exists():
            L.avail = (f"not built (slow build, skipped in quick mode: run "
                       f"`make -C bench bindings` or --full)")
            built[L.build] = L.avail
        else:
            log(f"building {L.build} driver ...")
            t0 = time.monotonic()
            r = subprocess.run(["bash", str(SRC / L.build / "build.sh"),
                                str(OUT / L.out)], capture_output=True,
                               text=True)
            if r.returncode != 0:
                tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
                L.avail = "build failed: " + " | ".join(tail)
            log(f"  {L.build}: {'ok' if L.avail is None else L.avail} "
                f"({time.monotonic() - t0:.0f} s)")
            built[L.build] = L.avail
        if L.avail is None and not exe.exists():
            L.avail = f"driver binary {exe} missing after build"


# ---------------------------------------------------------------------------
# Running one pair
# ---------------------------------------------------------------------------

def _listening(port: int) -> bool:
    """Is 127.0.0.1:port in LISTEN state?  (Read from /proc: no connection
    is made to the socket under test.)"""
    want = f"0100007F:{port:04X}"
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for line in Path(f).read_text().splitlines()[1:]:
                parts = line.split()
                if len(parts) > 3 and parts[3] == "0A" and (
                        parts[1] == want or parts[1].endswith(f":{port:04X}")
                        and set(parts[1].split(":")[0]) == {"0"}):
                    return True
        except OSError:
            pass
    return False


def _mapped_libzmq(pid: int) -> list[str]:
    """Real paths of every libzmq mapped into pid (and its children)."""
    pids, found = [pid], set()
    try:
        for t in Path(f"/proc/{pid}/task").iterdir():
            kids = (t / "children").read_text().split()
            pids += [int(k) for k in kids]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/maps").read_text().splitlines():
                path = line.split(None, 5)[-1] if line.count(" ") >= 5 else ""
                if re.search(r"/libzmq\.so", path):
                    found.add(os.path.realpath(path.strip()))
        except OSError:
            pass
    return sorted(found)


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(s: str, n: int = 400) -> str:
    """The end of a driver's stderr, on one line."""
    s = " ⏎ ".join(l.strip() for l in (s or "").strip().splitlines() if l.strip())
    return s if len(s) <= n else "…" + s[-n:]


def _status(role: str, rc: int, err: str) -> str:
    what = "timed out" if rc == -9 else f"exit {rc}"
    return f"{role} {what}: {_tail(err, 200) or '(no stderr)'}"


def run_pair(L: Lang, kind: str, size: int, count: int, libdir: Path,
             libpath: str, timeout: float) -> dict:
    """One run: the bound side (local_*) first, then the connecting side."""
    port = _free_port()
    ep = f"tcp://127.0.0.1:{port}"
    local_role, remote_role = (("local_thr", "remote_thr") if kind == "thr"
                               else ("local_lat", "remote_lat"))
    env = dict(os.environ)
    env.update(L.env)
    env["LD_LIBRARY_PATH"] = str(libdir) + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["FERROMQ_LIB"] = str(libdir / "libzmq.so.5")
    env["FERROMQ_LIB_DIR"] = str(libdir)
    args = [ep, str(size), str(count)]
    rec: dict = {"argv": L.argv + [local_role] + args,
                 "peer_argv": L.argv + [remote_role] + args,
                 "ld_library_path": str(libdir)}
    t0 = time.monotonic()
    local = subprocess.Popen(L.argv + [local_role] + args, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + timeout
        while not _listening(port):
            if local.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        if not _listening(port):
            if local.poll() is None:
                local.kill()
            out, err = local.communicate()
            return _fail(rec, f"{local_role} never listened on {ep} "
                              f"(exit {local.returncode}): {_tail(err)}", t0)
        rec["loaded"] = _mapped_libzmq(local.pid)
        try:
            r = subprocess.run(L.argv + [remote_role] + args, env=env,
                               capture_output=True, text=True, timeout=timeout)
            rout, rerr, rrc = r.stdout, r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            rout, rerr, rrc = "", f"timeout after {timeout:.0f} s", -9
        try:
            lout, lerr = local.communicate(timeout=timeout)
            lrc = local.returncode
        except subprocess.TimeoutExpired:
            local.kill()
            lout, lerr = local.communicate()
            lerr += f"\ntimeout after {timeout:.0f} s"
            lrc = -9
    finally:
        if local.poll() is None:
            local.kill()
            local.wait()
    rec.update({"rc": lrc, "peer_rc": rrc, "stderr": _tail(lerr),
                "peer_stderr": _tail(rerr)})
    mout, mrc, merr = (lout, lrc, lerr) if kind == "thr" else (rout, rrc, rerr)
    prc, perr = (rrc, rerr) if kind == "thr" else (lrc, lerr)
    res = parse_result(mout)
    rec["result"] = res
    value = result_value(res, kind)
    if L.loads_libzmq and rec.get("loaded") and \
            rec["loaded"] != [os.path.realpath(libpath)]:
        return _fail(rec, f"loaded {rec['loaded']} instead of "
                          f"{os.path.realpath(libpath)}", t0)
    if L.loads_libzmq and not rec.get("loaded"):
        rec["load_check"] = "no libzmq mapped when checked"
    if mrc != 0 or value is None or prc != 0:
        mrole, prole = ((local_role, remote_role) if kind == "thr"
                        else (remote_role, local_role))
        return _fail(rec, f"no result ({res}); " + "; ".join(
            [_status(mrole, mrc, merr), _status(prole, prc, perr)]), t0)
    rec.update({"ok": True, "value": value,
                "wall_s": round(time.monotonic() - t0, 3)})
    return rec


def _fail(rec: dict, err: str, t0: float) -> dict:
    rec.update({"ok": False, "value": None, "error": err,
                "wall_s": round(time.monotonic() - t0, 3)})
    return rec


def pair_timeout(kind: str, size: int, count: int) -> float:
    """Generous for the slowest binding (5k msg/s, 1 ms per round trip)."""
    if kind == "thr":
        return 30 + count / 5_000 + count * size / 20e6
    return 30 + count * (0.002 + size / 20e6)


# ---------------------------------------------------------------------------
# The workload: plan, execution, summary
# ---------------------------------------------------------------------------

def run_workload(R, libs: list, quick: bool, runs: int, scale: float = 1.0,
                 only_langs: list[str] | None = None, sizes=None,
                 progress=True, langs: list[Lang] | None = None) -> dict:
    """Run workload C.  R is bench/run.py (summarize, fmt_*); libs its Lib
    list.  Returns the `bindings` section of results.json."""
    import sys
    mode = "quick" if quick else "full"
    langs = langs if langs is not None else languages()
    if only_langs:
        langs = [L for L in langs if L.key in only_langs]
    log = (lambda m: print(m, file=sys.stderr)) if progress else (lambda m: None)
    prepare(langs, quick, log)
    labels = [l.label for l in libs]
    dirs = {l.label: lib_dir(l.label, l.path) for l in libs}
    sizes = list(sizes or (SIZES_QUICK if quick else SIZES_FULL))
    runnable = [L for L in langs if L.avail is None]
    jobs = [(kind, size, r, L, lib) for kind in ("thr", "lat") for size in sizes
            for r in range(1, runs + 1) for L in runnable for lib in libs
            if L.only is None or L.only == lib.label]
    raw, t0 = [], time.monotonic()
    for k, (kind, size, r, L, lib) in enumerate(jobs, 1):
        n = counts(mode, kind, size, scale)
        if progress:
            el = time.monotonic() - t0
            eta = el / (k - 1) * (len(jobs) - k + 1) if k > 1 else None
            log(f"[C {k}/{len(jobs)}] elapsed {R.fmt_duration(el)} ETA "
                f"{R.fmt_duration(eta) if eta is not None else '?'}  "
                f"{L.key} {kind} {size}B {lib.label} run {r}/{runs}")
        rec = run_pair(L, kind, size, n, dirs[lib.label], lib.path,
                       pair_timeout(kind, size, n))
        rec.update({"lang": L.key, "kind": kind, "size": size, "count": n,
                    "lib": lib.label, "run": r, "transport": "tcp"})
        raw.append(rec)
        if not rec["ok"] and progress:
            log(f"  FAILED {L.key} {kind} {size}B {lib.label}: {rec['error']}")
    cells = summarize(R, raw, langs, labels, sizes)
    return {
        "mode": mode, "runs": runs, "count_scale": scale, "transport": "tcp",
        "libs": labels, "lib_dirs": {k: str(v) for k, v in dirs.items()},
        "languages": [{"key": L.key, "name": L.name, "binding": L.binding,
                       "command": L.argv, "only": L.only,
                       "status": "ran" if L.avail is None else "not run",
                       "reason": L.avail} for L in langs],
        "cells": cells, "runs_raw": raw,
        "failed": [f"{c['lang']} {c['kind']} {c['size']}B {l}: {e}"
                   for c in cells for l, e in c["errors"].items()],
    }


def summarize(R, raw: list[dict], langs: list[Lang], labels: list[str],
              sizes: list[int]) -> list[dict]:
    """Per (language, kind, size): per-library stats and overhead vs C."""
    by: dict[tuple, list[dict]] = {}
    for rec in raw:
        by.setdefault((rec["lang"], rec["kind"], rec["size"], rec["lib"]),
                      []).append(rec)
    cells = []
    for kind in ("thr", "lat"):
        for size in sizes:
            for L in langs:
                recs_any = [k for k in by if k[:3] == (L.key, kind, size)]
                if not recs_any:
                    continue
                c = {"lang": L.key, "name": L.name, "binding": L.binding,
                     "kind": kind, "metric": METRIC[kind], "size": size,
                     "transport": "tcp", "stats": {}, "vs_c": {},
                     "errors": {}}
                for lab in labels:
                    recs = by.get((L.key, kind, size, lab), [])
                    good = [r["value"] for r in recs if r["ok"]]
                    s = R.summarize(good)
                    c["stats"][lab] = None if s is None else dict(
                        vars(s), values=good)
                    bad = [r["error"] for r in recs if not r["ok"]]
                    if bad:
                        c["errors"][lab] = bad[0] + (
                            f" (+{len(bad) - 1} more)" if len(bad) > 1 else "")
                cells.append(c)
    # Overhead against C on the same library (C's own row: 0 %).
    for c in cells:
        cref = next((x for x in cells if x["lang"] == "c"
                     and x["kind"] == c["kind"] and x["size"] == c["size"]),
                    None)
        for lab in labels:
            mine = (c["stats"].get(lab) or {}).get("median")
            base = ((cref or {}).get("stats", {}).get(lab) or {}).get("median")
            c["vs_c"][lab] = overhead_pct(mine, base)
    return cells


# ---------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------

def oneline(s: str) -> str:
    return " ".join((s or "").split())


def render_markdown(R, b: dict) -> str:
    labels = b["libs"]
    out = ["## Workload C — binding overhead (perf pair in each language, "
           "separate processes, tcp)", "",
           f"Mode {b['mode']}, {b['runs']} run(s) per cell, libraries and "
           "languages interleaved per run. Each language's driver links "
           "`libzmq.so.5` by soname; the library is chosen with "
           "`LD_LIBRARY_PATH` and checked in `/proc/<pid>/maps`. Values are "
           "medians. *vs C* = language / C − 1 on the **same library** in the "
           "same run: throughput − = slower than C, latency + = slower than "
           "C. CV > 10 % is marked ⚠.", ""]
    head = ["Language", "Binding", "Transport", "Size"] + labels + \
        [f"{l} vs C" for l in labels]
    for kind, title, fmt in (("thr", "### Throughput (msg/s, PUSH → PULL)",
                              R.fmt_rate),
                             ("lat", "### Latency (one-way µs, REQ ↔ REP)",
                              R.fmt_us)):
        rows = []
        for c in b["cells"]:
            if c["kind"] != kind:
                continue
            vals, diffs = [], []
            for lab in labels:
                st = c["stats"].get(lab)
                if st:
                    noisy = " ⚠" if st.get("noisy") else ""
                    vals.append(fmt(st["median"]) + noisy)
                elif lab in c["errors"]:
                    vals.append("FAILED")
                else:
                    vals.append("n/a")
                diffs.append("(baseline)" if c["lang"] == "c" and st
                             else R.fmt_pct(c["vs_c"].get(lab)))
            rows.append([c["name"], c["binding"], "TCP", R.fmt_size(c["size"])]
                        + vals + diffs)
        out += [title, ""]
        out += [R._table(head, rows) if rows else "No language ran.", ""]
    notrun = [L for L in b["languages"] if L["status"] != "ran"]
    if notrun:
        out += ["Not run:", ""]
        out += [f"- {L['name']} — {L['binding']}: {L['reason']}"
                for L in notrun]
        out.append("")
    only = [L for L in b["languages"] if L["only"] and L["status"] == "ran"]
    for L in only:
        out += [f"{L['name']} — {L['binding']} runs on `{L['only']}` only "
                "(it does not go through the C ABI): n/a elsewhere.", ""]
    if b["failed"]:
        out += ["Failed cells:", ""] + [f"- {oneline(f)}" for f in b["failed"]]
        out.append("")
    return "\n".join(out)


def render_svgs(R, b: dict) -> dict[str, str]:
    """Binding overhead per language: language / C on the same library vs
    message size (1 = as fast as C), one line per language × library."""
    svgs = {}
    labels = b["libs"]
    keys = []
    for c in b["cells"]:
        if c["lang"] != "c" and c["lang"] not in keys:
            keys.append(c["lang"])
    for kind, title, ylab in (
            ("thr", "Binding overhead: throughput relative to C",
             "msg/s ÷ C's msg/s, same library"),
            ("lat", "Binding overhead: latency relative to C",
             "latency ÷ C's latency, same library")):
        series = []
        for i, key in enumerate(keys):
            for j, lab in enumerate(labels):
                pts = [(c["size"], 1 + c["vs_c"][lab] / 100)
                       for c in b["cells"] if c["lang"] == key
                       and c["kind"] == kind
                       and c["vs_c"].get(lab) is not None]
                if pts:
                    name = next(c["name"] + " " + c["binding"].split()[0]
                                for c in b["cells"] if c["lang"] == key)
                    series.append({"name": f"{name} / {lab}",
                                   "color": R.PALETTE[i % len(R.PALETTE)],
                                   "dash": R.DASHES[j % len(R.DASHES)],
                                   "points": pts})
        svgs[f"bindings_{kind}.svg"] = R.svg_line_chart(
            title, series, "message size", ylab, width=980,
            height=max(440, 80 + 18 * len(series)), legend_width=300)
    return svgs
