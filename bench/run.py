#!/usr/bin/env python3
"""ferromq benchmark runner (workloads A, B, C and D of BENCHMARKS.md).

Builds the driver (bench/driver/zbench.c), runs the benchmark matrix over
every library under test -- interleaved per run (A, B, A, B, ...) -- and
writes markdown tables, a JSON file with every raw run and the host
description, and hand-written SVG plots to an output directory.

    python3 bench/run.py                      # quick mode (also when $CI is set)
    python3 bench/run.py --full               # >= 5 runs per cell, all sizes
    python3 bench/run.py --lib ferromq=dist/lib/libzmq.so.5 \\
                         --lib libzmq=/usr/lib/x86_64-linux-gnu/libzmq.so.5
    python3 bench/run.py --render bench/out/<ts>/results.json   # re-render

Python 3.11 standard library only.  Exit status: 0 = every cell produced a
number, 1 = some cell failed (named on stderr and in the report), 2 = setup
error (no driver, library fails to load, bad arguments).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import html
import json
import math
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bindings  # noqa: E402  (workload C)
import ceiling  # noqa: E402  (workloads R and M)

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DRIVER_SRC = BENCH_DIR / "driver" / "zbench.c"
# Every translation unit of the driver (zbench.h is shared by all).
DRIVER_SRCS = [DRIVER_SRC, BENCH_DIR / "driver" / "zraw.c",
               BENCH_DIR / "driver" / "zmem.c"]
DRIVER_HDR = BENCH_DIR / "driver" / "zbench.h"
DEFAULT_DRIVER = BENCH_DIR / "out" / "zbench"
DEFAULT_OUT_ROOT = BENCH_DIR / "out"
DEFAULT_FERROMQ = REPO_DIR / "dist" / "lib" / "libzmq.so.5"
DEFAULT_LIBZMQ = Path("/usr/lib/x86_64-linux-gnu/libzmq.so.5")
SYSTEM_ZMQ_H = Path("/usr/include/zmq.h")

PATTERNS = [
    "pair", "pubsub", "pushpull", "dealer_dealer", "dealer_router",
    "router_router", "router_router_poll",
]
PATTERN_TITLES = {
    "pair": "PAIR",
    "pubsub": "PUB/SUB",
    "pushpull": "PUSH/PULL",
    "dealer_dealer": "DEALER/DEALER",
    "dealer_router": "DEALER/ROUTER",
    "router_router": "ROUTER/ROUTER",
    "router_router_poll": "ROUTER/ROUTER + zmq_poll",
    "reqrep": "REQ/REP",
    "router_par": "ROUTER → ROUTER, parallel receiver (workload D)",
}
TRANSPORTS = ["tcp", "ipc", "inproc"]
TRANSPORT_TITLES = {"tcp": "TCP", "ipc": "IPC", "inproc": "inproc"}

FULL_SIZES = [64, 256, 1024, 8192, 65536, 131072, 262144]
QUICK_SIZES = [64, 1024, 65536]
A_SIZES_FULL = [64, 1500, 65536]
A_SIZES_QUICK = [64, 1500]
A_TRANSPORTS_FULL = ["tcp", "ipc"]
A_TRANSPORTS_QUICK = ["tcp"]
# Workload D (seed 004): messageCount 10000, sizes 64/1500/65536, JMH-style
# iterations (1 warmup + 5 timed); quick: 2000 messages, 1 + 2 iterations.
D_SIZES = [64, 1500, 65536]
D_COUNT_FULL, D_COUNT_QUICK = 10_000, 2_000
D_ITER_FULL, D_ITER_QUICK = 5, 2
D_WARMUP = 1

FULL_RUNS = 5
QUICK_RUNS = 1
NULL_RUNS = 5  # the null test always gets enough runs for a CV
NOISY_CV = 0.10

# Message counts.  Full mode: throughput moves ~256 MiB per run (1M messages
# at most, 2000 at least), latency does up to 20k round trips.  Quick mode:
# throughput / 10 but at least 1000 messages (fewer would let the sender
# queue everything before the receiver wakes up: see DRAIN_FRACTION),
# latency / 10 (so p99.9 still means something).  At / 100 a 64 B cell lasted
# 2-5 ms and swung 10x for both libraries, so the main job's tables misled.
THR_BYTES_FULL = 1 << 28
THR_MAX_FULL, THR_MIN_FULL = 1_000_000, 2_000
LAT_BYTES_FULL = 1 << 28
LAT_MAX_FULL, LAT_MIN_FULL = 20_000, 2_000
QUICK_THR_DIV, QUICK_LAT_DIV = 10, 10
QUICK_THR_MIN = 1000
# An inproc throughput run whose sender had already queued more than this
# fraction of the messages when the receiver got the first one measured
# popping a queue, not throughput (the receiver-side window of libzmq's perf
# tools allows it).  Over tcp/ipc queued messages still have to cross the I/O
# path inside the window, so only inproc cells are flagged.
DRAIN_FRACTION = 0.5
MIN_THR_COUNT, MIN_LAT_COUNT = 20, 20

ENV_NOTE = "CI"


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------

@dataclass
class Summary:
    n: int
    median: float
    min: float
    max: float
    mean: float
    cv: float | None  # sample stdev / mean; None with fewer than 2 values
    noisy: bool


def summarize(values: list[float], noisy_cv: float = NOISY_CV) -> Summary | None:
    """Median, min, max, mean and coefficient of variation of one cell."""
    vals = [float(v) for v in values]
    if not vals:
        return None
    mean = statistics.fmean(vals)
    cv = None
    if len(vals) >= 2 and mean != 0:
        cv = statistics.stdev(vals) / abs(mean)
    return Summary(
        n=len(vals),
        median=statistics.median(vals),
        min=min(vals),
        max=max(vals),
        mean=mean,
        cv=cv,
        noisy=cv is not None and cv > noisy_cv,
    )


def diff_pct(candidate: float | None, baseline: float | None) -> float | None:
    """candidate / baseline - 1, in percent (None if undefined)."""
    if candidate is None or baseline is None or baseline == 0:
        return None
    return (candidate / baseline - 1.0) * 100.0


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------

def fmt_rate(v: float | None) -> str:
    """Messages per second in the seeds' style: 4.81M/s, 864K/s."""
    if v is None:
        return "—"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M/s"
    if v >= 1e5:
        return f"{v / 1e3:.0f}K/s"
    if v >= 1e3:
        return f"{v / 1e3:.1f}K/s"
    return f"{v:.0f}/s"


def fmt_us(v: float | None) -> str:
    if v is None:
        return "—"
    if v >= 1000:
        return f"{v:.0f} µs"
    if v >= 100:
        return f"{v:.1f} µs"
    return f"{v:.2f} µs"


def fmt_pct(v: float | None) -> str:
    return "—" if v is None else f"{v:+.1f}%"


def fmt_cv(s: dict | None) -> str:
    if not s or s.get("cv") is None:
        return "—"
    txt = f"{s['cv'] * 100:.1f}%"
    return txt + " ⚠noisy" if s.get("noisy") else txt


def fmt_size(n: int) -> str:
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}KB"
    return f"{n}B"


def fmt_range(s: dict | None, fmt) -> str:
    if not s:
        return "—"
    return f"{fmt(s['min'])}–{fmt(s['max'])}"


def fmt_duration(sec: float) -> str:
    sec = max(0, int(round(sec)))
    h, rem = divmod(sec, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


# ---------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    workload: str    # "A" (separate processes), "B" (two threads), "D",
                     # "R" (raw-socket ceiling), "M" (memory)
    kind: str        # "thr", "lat" or "mem"
    pattern: str     # a PATTERNS entry, or "reqrep" for latency
    transport: str
    size: int
    count: int
    hwm: str = "default"  # "default" or a number ("0" = unlimited)
    warmup: int = 0
    null: bool = False
    iterations: int = 0   # workload D: timed iterations per run

    @property
    def id(self) -> str:
        if self.kind == "mem" and self.pattern == "idle":
            return f"M/mem/idle/{self.transport}/{self.count}conn"
        s = f"{self.workload}/{self.kind}/{self.pattern}/{self.transport}/{self.size}"
        if self.kind == "thr" and self.workload != "R":
            s += f"/hwm{self.hwm}"
        if self.null:
            s += "/null"
        return s

    @property
    def metric(self) -> str:
        return {"thr": "msg_per_s", "mem": "rss_growth_kib"}.get(self.kind,
                                                                 "mean_us")

    @property
    def higher_is_better(self) -> bool:
        return self.kind == "thr"


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def thr_count(size: int, quick: bool, scale: float = 1.0) -> int:
    n = _clamp(THR_BYTES_FULL // size, THR_MIN_FULL, THR_MAX_FULL)
    if quick:
        n = max(QUICK_THR_MIN, n // QUICK_THR_DIV)
    return max(MIN_THR_COUNT, int(n * scale))


def lat_count(size: int, quick: bool, scale: float = 1.0) -> int:
    n = _clamp(LAT_BYTES_FULL // size, LAT_MIN_FULL, LAT_MAX_FULL)
    if quick:
        n //= QUICK_LAT_DIV
    return max(MIN_LAT_COUNT, int(n * scale))


def build_plan(quick: bool, *, sizes=None, patterns=None, transports=None,
               hwms=None, workloads=("A", "B", "D"), scale=1.0, null=True,
               only: str | None = None) -> list[Cell]:
    sizes = list(sizes or (QUICK_SIZES if quick else FULL_SIZES))
    patterns = list(patterns or PATTERNS)
    transports = list(transports or TRANSPORTS)
    hwms = list(hwms or (["0"] if quick else ["0", "default"]))
    warmup = 10 if quick else 100
    cells: list[Cell] = []
    if "B" in workloads:
        for hwm in hwms:
            for p in patterns:
                for t in transports:
                    for s in sizes:
                        cells.append(Cell("B", "thr", p, t, s,
                                          thr_count(s, quick, scale), hwm))
        for t in transports:
            for s in sizes:
                cells.append(Cell("B", "lat", "reqrep", t, s,
                                  lat_count(s, quick, scale), "default",
                                  warmup))
    if "A" in workloads:
        a_sizes = A_SIZES_QUICK if quick else A_SIZES_FULL
        a_transports = [t for t in (A_TRANSPORTS_QUICK if quick
                                    else A_TRANSPORTS_FULL)
                        if t in transports] or ["tcp"]
        for t in a_transports:
            for s in a_sizes:
                cells.append(Cell("A", "thr", "pushpull", t, s,
                                  thr_count(s, quick, scale), "default"))
            for s in a_sizes:
                cells.append(Cell("A", "lat", "reqrep", t, s,
                                  lat_count(s, quick, scale), "default",
                                  warmup))
    if "D" in workloads:
        # Library-default HWM is the seed's setting; HWM 0 also in full mode
        # (quick mode: HWM 0 only, like workload B).
        d_hwms = ["0"] if quick else ["default", "0"]
        if hwms and set(hwms) != set(["0"] if quick else ["0", "default"]):
            d_hwms = hwms
        for hwm in d_hwms:
            for s in D_SIZES:
                n = max(MIN_THR_COUNT, int((D_COUNT_QUICK if quick
                                            else D_COUNT_FULL) * scale))
                cells.append(Cell("D", "thr", "router_par", "tcp", s, n, hwm,
                                  D_WARMUP, iterations=D_ITER_QUICK if quick
                                  else D_ITER_FULL))
    cells += ceiling.plan(sys.modules[__name__], quick, workloads, sizes,
                          transports, scale, warmup)
    if null:
        cells.append(Cell("B", "thr", "pushpull", "tcp", 64,
                          thr_count(64, quick, scale), "0", null=True))
        cells.append(Cell("B", "lat", "reqrep", "tcp", 64,
                          lat_count(64, quick, scale), "default", warmup,
                          null=True))
    if only:
        rx = re.compile(only)
        cells = [c for c in cells if rx.search(c.id)]
    return cells


# ---------------------------------------------------------------------------
# Driver, libraries, host
# ---------------------------------------------------------------------------

def driver_build_cmd(src, out: Path, cc: str | None = None) -> list[str]:
    """src: one path or a list of the driver's .c files.  Keep in sync with
    bench/Makefile."""
    cmd = [cc or os.environ.get("CC") or "gcc", "-O2", "-std=c11", "-Wall",
           "-Wextra", "-Wno-unused-parameter"]
    if SYSTEM_ZMQ_H.exists():
        cmd.append("-DZBENCH_CHECK_HEADER")
    srcs = [src] if isinstance(src, (str, Path)) else list(src)
    return cmd + ["-pthread", "-o", str(out)] + [str(s) for s in srcs] + [
        "-ldl", "-lm"]


def build_driver(out: Path = DEFAULT_DRIVER, force: bool = False) -> Path:
    newest = max(p.stat().st_mtime for p in DRIVER_SRCS + [DRIVER_HDR])
    if not force and out.exists() and out.stat().st_mtime >= newest:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # Build to a temporary name, then rename: concurrent runs never see a
    # half-written binary.
    fd, tmp = tempfile.mkstemp(prefix=".zbench-", dir=out.parent)
    os.close(fd)
    cmd = driver_build_cmd(DRIVER_SRCS, Path(tmp))
    print("building driver: " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        os.unlink(tmp)
        raise SetupError(f"driver build failed:\n{r.stdout}{r.stderr}")
    os.replace(tmp, out)
    return out


class SetupError(Exception):
    pass


@dataclass
class Lib:
    label: str
    path: str
    version: str = "?"
    realpath: str = ""
    sha256: str = ""
    size_bytes: int = 0


def probe_lib(driver: Path, lib: Lib) -> Lib:
    r = subprocess.run([str(driver), "--lib", lib.path, "--timeout", "30",
                        "version"], capture_output=True, text=True, timeout=60)
    res = parse_json_line(r.stdout)
    if r.returncode != 0 or not res or not res.get("ok"):
        err = (res or {}).get("error") or r.stderr.strip()
        raise SetupError(f"library {lib.label}={lib.path} does not load: {err}")
    lib.version = res.get("version", "?")
    lib.realpath = res.get("realpath", lib.path)
    try:
        data = Path(lib.realpath).read_bytes()
        lib.sha256 = hashlib.sha256(data).hexdigest()
        lib.size_bytes = len(data)
    except OSError:
        pass
    return lib


def host_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    os_name = ""
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    cc = os.environ.get("CC") or "gcc"
    try:
        ccv = subprocess.run([cc, "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        ccv = "unknown"
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "cores_usable": affinity,
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "machine": platform.machine(),
        "os": os_name,
        "python": platform.python_version(),
        "compiler": ccv,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "loadavg_start": list(os.getloadavg()),
    }


# ---------------------------------------------------------------------------
# Running cells
# ---------------------------------------------------------------------------

def parse_json_line(stdout: str) -> dict | None:
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def free_tcp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_ipc_seq = 0


def a_endpoint(transport: str) -> str:
    global _ipc_seq
    if transport == "tcp":
        return f"tcp://127.0.0.1:{free_tcp_port()}"
    _ipc_seq += 1
    return f"ipc:///tmp/zbench-run-{os.getpid()}-{_ipc_seq}.ipc"


def _tail(s: str, n: int = 600) -> str:
    s = (s or "").strip()
    return s if len(s) <= n else "…" + s[-n:]


def _finish(rec: dict, res: dict | None, rc: int, stderr: str,
            metric: str, any_sign: bool = False) -> dict:
    """any_sign: the metric may be 0 or negative (an RSS growth)."""
    rec["rc"] = rc
    rec["result"] = res
    value = (res or {}).get(metric)
    if rc == 0 and res and res.get("ok") and isinstance(value, (int, float)) \
            and (any_sign or value > 0) and math.isfinite(value):
        rec["ok"] = True
        rec["value"] = float(value)
    else:
        rec["ok"] = False
        rec["error"] = ((res or {}).get("error")
                        or f"exit status {rc}: {_tail(stderr)}"
                        or "no result")
    return rec


def run_in_process(driver: Path, lib: Lib, cell: Cell, timeout: int) -> dict:
    argv = [str(driver), "--lib", lib.path, "--timeout", str(timeout),
            cell.kind, "--transport", cell.transport, "--size", str(cell.size),
            "--count", str(cell.count)]
    if cell.workload in ("R", "M"):
        argv = argv[:5] + ceiling.driver_args(cell)
    elif cell.pattern == "router_par":
        argv[5] = "router_par"
        argv += ["--hwm", cell.hwm, "--iterations", str(cell.iterations),
                 "--warmup", str(cell.warmup)]
    elif cell.kind == "thr":
        argv += ["--pattern", cell.pattern, "--hwm", cell.hwm]
    else:
        argv += ["--warmup", str(cell.warmup)]
    rec = {"argv": argv}
    try:
        r = subprocess.run(argv, capture_output=True, text=True,
                           timeout=timeout + 15)
    except subprocess.TimeoutExpired as e:
        rec["stderr"] = _tail(e.stderr.decode() if isinstance(e.stderr, bytes)
                              else (e.stderr or ""))
        return _finish(rec, None, -9, "runner timeout (driver watchdog did "
                       "not fire)", cell.metric)
    rec["stderr"] = _tail(r.stderr)
    return _finish(rec, parse_json_line(r.stdout), r.returncode, r.stderr,
                   cell.metric, any_sign=cell.kind == "mem")


def run_processes(driver: Path, lib: Lib, cell: Cell, timeout: int) -> dict:
    """Workload A: local_* binds (started first), remote_* connects."""
    local_cmd, remote_cmd = (("local_thr", "remote_thr") if cell.kind == "thr"
                             else ("local_lat", "remote_lat"))
    rec: dict = {}
    for attempt in range(3):
        ep = a_endpoint(cell.transport)
        with tempfile.TemporaryDirectory(prefix="zbench-") as tmp:
            ready = Path(tmp) / "ready"
            done = Path(tmp) / "done"
            common = ["--size", str(cell.size), "--count", str(cell.count),
                      "--endpoint", ep]
            if cell.kind == "lat":
                common += ["--warmup", str(cell.warmup)]
            base = [str(driver), "--lib", lib.path, "--timeout", str(timeout)]
            largv = base + [local_cmd] + common + ["--ready-file", str(ready)]
            rargv = base + [remote_cmd] + common
            if cell.kind == "thr":
                # PUSH closes only after PULL has the last message: the
                # result must not depend on LINGER at close (libzmq 4.3.4
                # can lose the tail otherwise; see bench/README.md).
                largv += ["--done-file", str(done)]
                rargv += ["--done-file", str(done)]
            rec = {"argv": largv, "peer_argv": rargv}
            local = subprocess.Popen(largv, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
            try:
                deadline = time.monotonic() + timeout
                while not ready.exists():
                    if local.poll() is not None or time.monotonic() > deadline:
                        break
                    time.sleep(0.002)
                if not ready.exists():
                    if local.poll() is None:
                        local.kill()
                    out, err = local.communicate()
                    res = parse_json_line(out)
                    if "Address already in use" in (err + out) and attempt < 2:
                        continue
                    rec["stderr"] = _tail(err)
                    return _finish(rec, res, local.returncode or -1,
                                   err or "local side never became ready",
                                   cell.metric)
                try:
                    r = subprocess.run(rargv, capture_output=True, text=True,
                                       timeout=timeout + 15)
                    rres, rrc, rerr = parse_json_line(r.stdout), r.returncode, r.stderr
                except subprocess.TimeoutExpired:
                    rres, rrc, rerr = None, -9, "remote side: runner timeout"
                try:
                    out, err = local.communicate(timeout=timeout + 15)
                    lres, lrc = parse_json_line(out), local.returncode
                except subprocess.TimeoutExpired:
                    local.kill()
                    out, err = local.communicate()
                    lres, lrc = None, -9
                    err += "\nlocal side: runner timeout"
            finally:
                if local.poll() is None:
                    local.kill()
                    local.wait()
            rec["stderr"] = _tail(err)
            rec["peer_stderr"] = _tail(rerr)
            if cell.kind == "thr":   # the number comes from the PULL side
                rec["peer_result"] = rres
                rec = _finish(rec, lres, lrc, err, cell.metric)
            else:                    # ... and from the REQ side
                rec["peer_result"] = lres
                rec = _finish(rec, rres, rrc, rerr, cell.metric)
            peer_rc = rrc if cell.kind == "thr" else lrc
            peer = rres if cell.kind == "thr" else lres
            if rec["ok"] and (peer_rc != 0 or not peer or not peer.get("ok")):
                rec["ok"] = False
                rec["value"] = None
                rec["error"] = "peer process failed: " + (
                    (peer or {}).get("error") or _tail(rerr if cell.kind == "thr"
                                                       else err))
            return rec
    return rec


def cell_timeout(cell: Cell, fixed: int | None = None) -> int:
    """Watchdog seconds for one run: generous for a slow library (20k msg/s,
    50 MB/s, 2 ms per round trip), small enough that a hang does not eat
    the suite."""
    if fixed:
        return fixed
    if cell.kind == "mem":
        return ceiling.timeout(cell)
    if cell.pattern == "router_par":
        n = cell.count * (cell.iterations + cell.warmup)
        return int(math.ceil(30 + n / 20_000 + n * cell.size / 50e6))
    if cell.kind == "thr":
        t = 30 + cell.count / 20_000 + cell.count * cell.size / 50e6
    else:
        t = 30 + (cell.count + cell.warmup) * (0.002 + cell.size / 50e6)
    return int(math.ceil(t))


def run_cell_once(driver: Path, lib: Lib, cell: Cell, timeout: int) -> dict:
    t0 = time.monotonic()
    if cell.workload == "A":
        rec = run_processes(driver, lib, cell, timeout)
    else:
        rec = run_in_process(driver, lib, cell, timeout)
    rec["wall_s"] = round(time.monotonic() - t0, 4)
    return rec


class Progress:
    def __init__(self, total_runs: int, n_cells: int, stream=sys.stderr):
        self.total = total_runs
        self.n_cells = n_cells
        self.done = 0
        self.t0 = time.monotonic()
        self.stream = stream
        self.tty = stream.isatty()

    def update(self, k: int, cell: Cell, label: str, run: int, runs: int):
        el = time.monotonic() - self.t0
        eta = (el / self.done * (self.total - self.done)) if self.done else None
        msg = (f"[cell {k}/{self.n_cells}] elapsed {fmt_duration(el)} "
               f"ETA {fmt_duration(eta) if eta is not None else '?'}  "
               f"{cell.id}  {label} run {run}/{runs}")
        if self.tty:
            self.stream.write("\r\x1b[K" + msg)
        elif (run == 1 or k == 1) and label:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def finish(self):
        if self.tty:
            self.stream.write("\n")
        self.stream.write(f"finished {self.done} runs in "
                          f"{fmt_duration(time.monotonic() - self.t0)}\n")
        self.stream.flush()


def execute(plan: list[Cell], libs: list[Lib], driver: Path, runs: int,
            null_runs: int, baseline: Lib, timeout: int | None,
            progress: bool = True, order: str = "round") -> list[dict]:
    """Run every cell; libraries interleaved per run (A, B, A, B, ...).

    order "round": run 1 of every cell, then run 2 of every cell, ... so that a
    cell's runs are spread over the whole invocation. The 2-vCPU hosts go
    through phases lasting seconds to minutes in which some cells run at half
    speed (docs/results/2026-11-29-large-tcp-cells/NOTES.md); a cell's runs
    made back to back ("cell") all land in one phase, and its median says
    which phase that was rather than what is typical."""
    jobs = []
    for cell in plan:
        if cell.null:
            cell_libs = [Lib(baseline.label + "#1", baseline.path,
                             baseline.version, baseline.realpath,
                             baseline.sha256, baseline.size_bytes),
                         Lib(baseline.label + "#2", baseline.path,
                             baseline.version, baseline.realpath,
                             baseline.sha256, baseline.size_bytes)]
            n = max(runs, null_runs)
        elif ceiling.is_raw(cell):
            # No library is loaded; --lib is passed for uniformity.
            cell_libs, n = [Lib(ceiling.RAW_LABEL, baseline.path,
                                ceiling.RAW_VERSION)], runs
        else:
            cell_libs, n = libs, runs
        jobs.append((cell, cell_libs, n))
    total = sum(len(l) * n for _, l, n in jobs)
    prog = Progress(total, len(jobs))
    if order == "round":
        steps = [(r, k) for r in range(max((n for _, _, n in jobs), default=0))
                 for k in range(1, len(jobs) + 1) if r < jobs[k - 1][2]]
    else:
        steps = [(r, k) for k in range(1, len(jobs) + 1)
                 for r in range(jobs[k - 1][2])]
    raw = []
    for r, k in steps:
        cell, cell_libs, n = jobs[k - 1]
        for lib in cell_libs:
            if progress:
                prog.update(k, cell, lib.label, r + 1, n)
            rec = run_cell_once(driver, lib, cell,
                                cell_timeout(cell, timeout))
            prog.done += 1
            rec.update({"cell": cell.id, "lib": lib.label,
                        "path": lib.path, "run": r + 1})
            raw.append(rec)
            if not rec["ok"] and progress:
                sys.stderr.write(("\n" if prog.tty else "")
                                 + f"  FAILED {cell.id} {lib.label} run "
                                 f"{r + 1}: {rec.get('error')}\n")
    if progress:
        prog.finish()
    return raw


# ---------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------

LAT_FIELDS = ["mean_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us",
              "min_us"]


def summarize_cells(plan: list[Cell], raw: list[dict], labels: list[str],
                    baseline: str) -> list[dict]:
    by_cell: dict[str, list[dict]] = {}
    for rec in raw:
        by_cell.setdefault(rec["cell"], []).append(rec)
    out = []
    for cell in plan:
        recs = by_cell.get(cell.id, [])
        if cell.null:
            cell_labels = [baseline + "#1", baseline + "#2"]
            cell_base = baseline + "#2"
        elif ceiling.is_raw(cell):
            cell_labels = [ceiling.RAW_LABEL]
            cell_base = ceiling.RAW_LABEL
        else:
            cell_labels = list(labels)
            cell_base = baseline
        d = asdict(cell)
        d.update({"id": cell.id, "metric": cell.metric,
                  "better": "higher" if cell.higher_is_better else "lower",
                  "labels": cell_labels, "baseline": cell_base,
                  "stats": {}, "diff_pct": {}, "errors": []})
        for label in cell_labels:
            lrecs = [r for r in recs if r["lib"] == label]
            good = [r for r in lrecs if r["ok"]]
            s = summarize([r["value"] for r in good])
            st = asdict(s) if s else None
            if st is not None:
                st["values"] = [r["value"] for r in good]
                extra = {}
                fields = (["mbit_per_s", "e2e_msg_per_s"] if cell.kind == "thr"
                          else ceiling.extra_fields(cell) if cell.kind == "mem"
                          else LAT_FIELDS)
                for f in fields:
                    vals = [r["result"][f] for r in good
                            if isinstance((r.get("result") or {}).get(f),
                                          (int, float))]
                    if vals:
                        extra[f] = statistics.median(vals)
                drains = [r["result"]["drain_fraction"] for r in good
                          if isinstance((r.get("result") or {}).get(
                              "drain_fraction"), (int, float))]
                if drains:
                    extra["max_drain_fraction"] = max(drains)
                st["extra"] = extra
                st["drained"] = (cell.transport == "inproc" and bool(drains)
                                 and max(drains) > DRAIN_FRACTION)
            d["stats"][label] = st
            for r in lrecs:
                if not r["ok"]:
                    d["errors"].append(f"{label} run {r['run']}: "
                                       f"{r.get('error')}")
            if not lrecs:
                d["errors"].append(f"{label}: no runs")
        base_st = d["stats"].get(cell_base)
        for label in cell_labels:
            if label == cell_base:
                continue
            st = d["stats"].get(label)
            d["diff_pct"][label] = diff_pct(st and st["median"],
                                            base_st and base_st["median"])
        d["ok"] = not d["errors"] and all(d["stats"].get(l) for l in cell_labels)
        out.append(d)
    return out


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------

def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("-" * (len(h) + 2) for h in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _cmp_columns(cell_labels: list[str], baseline: str) -> list[str]:
    """Value columns then the Diff column(s): | ferromq | libzmq | Diff |."""
    cands = [l for l in cell_labels if l != baseline]
    cols = list(cell_labels)
    if len(cands) == 1:
        cols.append("Diff")
    else:
        cols += [f"Diff {c}" for c in cands]
    return cols


def _value(st: dict | None, fmt) -> str:
    if not st:
        return "FAILED"
    return fmt(st["median"]) + (" ‡" if st.get("drained") else "")


def _cmp_row(c: dict, fmt) -> list[str]:
    labels, base = c["labels"], c["baseline"]
    vals = [_value(c["stats"].get(l), fmt) for l in labels]
    diffs = [fmt_pct(c["diff_pct"].get(l)) for l in labels if l != base]
    extra = []
    for l in labels:
        st = c["stats"].get(l)
        extra += [fmt_range(st, fmt), fmt_cv(st)]
    return vals + diffs + extra


def _extra_header(labels: list[str]) -> list[str]:
    h = []
    for l in labels:
        h += [f"{l} min–max", f"{l} CV"]
    return h


def _sorted_cells(cells: list[dict]) -> list[dict]:
    def key(c):
        t = TRANSPORTS.index(c["transport"]) if c["transport"] in TRANSPORTS else 9
        return (t, c["size"])
    return sorted(cells, key=key)


def render_markdown(report: dict) -> str:
    cells = report["cells"]
    labels = [l["label"] for l in report["libs"]]
    baseline = report["baseline"]
    host = report["host"]
    cfg = report["config"]
    out = [f"# ferromq benchmark results — {host['date']}", ""]
    for w in report.get("warnings", []):
        out += [f"> **WARNING:** {w}", ""]
    out += [
        f"- Mode: **{cfg['mode']}**, {cfg['runs']} run(s) per cell "
        f"(null test: {cfg['null_runs']}), libraries interleaved per run",
        f"- Host: {host['cpu_model']}, {host['cores']} cores, Linux "
        f"{host['kernel']}, {host.get('os', '')}; load average at start "
        f"{', '.join(f'{x:.2f}' for x in host.get('loadavg_start', []))}",
    ]
    for lib in report["libs"]:
        out.append(f"- `{lib['label']}`: zmq_version {lib['version']}, "
                   f"`{lib['path']}` (sha256 {lib['sha256'][:12]})")
    cands = [l for l in labels if l != baseline]
    out += [
        f"- Values are medians; Diff = candidate / {baseline} − 1. "
        "Throughput: + means the candidate is faster. Latency: − means the "
        "candidate is faster. CV = sample stdev / mean over runs; "
        f"CV > {NOISY_CV:.0%} is marked ⚠noisy; — = a single run.",
        "",
    ]
    if not cands:
        out += ["> Only one library measured: the tables have no Diff.", ""]

    ridx = ceiling.raw_index(cells)

    def section(title, selected, fmt, extra_note=None, raw=False):
        """raw: add the raw-socket column and each library's % of raw."""
        if not selected:
            return
        out.extend([title, ""])
        if extra_note:
            out.extend([extra_note, ""])
        first = selected[0]
        main = (_cmp_columns(first["labels"], first["baseline"])
                if len(first["labels"]) > 1 else [first["labels"][0]])
        raw = raw and bool(ridx)
        header = (["Transport", "Size"] + main
                  + (ceiling.raw_header(first["labels"]) if raw else [])
                  + _extra_header(first["labels"]))
        rows = []
        for c in _sorted_cells(selected):
            row = _cmp_row(c, fmt)
            if raw:
                row = (row[:len(main)]
                       + ceiling.raw_columns(c, ridx, first["labels"], fmt)
                       + row[len(main):])
            rows.append([TRANSPORT_TITLES.get(c["transport"], c["transport"]),
                         fmt_size(c["size"])] + row)
        out.extend([_table(header, rows), ""])
        if raw:
            out.extend([ceiling.raw_note(first["kind"]), ""])

    norm = [c for c in cells if not c["null"]]
    # Workload B throughput: one table per pattern (and HWM setting).
    hwms = []
    for c in norm:
        if c["workload"] == "B" and c["kind"] == "thr" and c["hwm"] not in hwms:
            hwms.append(c["hwm"])
    for hwm in hwms:
        hdesc = "0 = unlimited" if hwm == "0" else (
            "library default" if hwm == "default" else hwm)
        out += [f"## Workload B — throughput, msg/s (HWM {hdesc})", ""]
        for p in PATTERNS:
            sel = [c for c in norm if c["workload"] == "B" and c["kind"] == "thr"
                   and c["pattern"] == p and c["hwm"] == hwm]
            section(f"### {PATTERN_TITLES[p]}", sel, fmt_rate, raw=True)
    # Workload B latency.
    lat_b = [c for c in norm if c["workload"] == "B" and c["kind"] == "lat"]
    if lat_b:
        out += ["## Workload B — REQ/REP latency, one-way µs (two threads)", ""]
        section("### Mean one-way latency", lat_b, fmt_us, raw=True)
        out.extend(_lat_percentile_table(lat_b))
    out.extend(ceiling.render_raw(sys.modules[__name__], norm, labels))
    # Workload A.
    a_cells = [c for c in norm if c["workload"] == "A"]
    if a_cells:
        out += ["## Workload A — libzmq perf pair (separate processes)", ""]
        section("### Throughput: PUSH connects, PULL binds (msg/s)",
                [c for c in a_cells if c["kind"] == "thr"], fmt_rate)
        thr_a = [c for c in a_cells if c["kind"] == "thr"]
        if thr_a:
            rows = []
            for c in _sorted_cells(thr_a):
                rows.append([TRANSPORT_TITLES.get(c["transport"], c["transport"]),
                             fmt_size(c["size"])] + [
                    (f"{c['stats'][l]['extra'].get('mbit_per_s', 0):.0f} Mb/s"
                     if c["stats"].get(l) else "FAILED") for l in c["labels"]])
            out.extend([_table(["Transport", "Size"] + thr_a[0]["labels"],
                               rows), ""])
        lat_a = [c for c in a_cells if c["kind"] == "lat"]
        section("### Latency: REQ connects, REP binds (mean one-way µs)",
                lat_a, fmt_us)
        out.extend(_lat_percentile_table(lat_a))
    # Workload D.
    d_cells = [c for c in norm if c["workload"] == "D"]
    if d_cells:
        it = d_cells[0].get("iterations") or "?"
        out += ["## Workload D — parallel ROUTER → ROUTER throughput (msg/s)",
                "",
                f"Seed 004: ROUTER `r1` (ROUTER_MANDATORY) sends {d_cells[0]['count']} "
                "two-frame messages (routing id `r2` + payload) from the main "
                "thread while a fresh receiver thread receives them on ROUTER "
                f"`r2`; route established before timing; {d_cells[0]['warmup']} "
                f"warmup + {it} timed iterations per run, msg/s = messages / "
                "time of the timed iterations (thread start to join).", ""]
        for hwm in sorted({c["hwm"] for c in d_cells}, reverse=True):
            hdesc = "0 = unlimited" if hwm == "0" else (
                "library default (the seed's setting)" if hwm == "default"
                else hwm)
            section(f"### HWM {hdesc}",
                    [c for c in d_cells if c["hwm"] == hwm], fmt_rate)
    out.extend(ceiling.render_mem(sys.modules[__name__], norm, labels,
                                  baseline))
    # Workload C.
    if report.get("bindings"):
        out += [bindings.render_markdown(sys.modules[__name__],
                                         report["bindings"]), ""]
    # Null test.
    nulls = [c for c in cells if c["null"]]
    if nulls:
        out += [f"## Null test — {baseline} against itself (noise floor)", "",
                "The same library loaded under two labels, interleaved like "
                "a real comparison. Any Diff here is noise.", ""]
        rows = []
        for c in nulls:
            fmt = fmt_rate if c["kind"] == "thr" else fmt_us
            a, b = c["labels"]
            sa, sb = c["stats"].get(a), c["stats"].get(b)
            rows.append([c["id"], fmt(sa and sa["median"]),
                         fmt(sb and sb["median"]),
                         fmt_pct(c["diff_pct"].get(a)),
                         fmt_range(sa, fmt), fmt_cv(sa),
                         fmt_range(sb, fmt), fmt_cv(sb)])
        la, lb = nulls[0]["labels"]
        out.extend([_table(["Cell", la, lb, "Diff", f"{la} min–max", f"{la} CV",
                            f"{lb} min–max", f"{lb} CV"], rows), ""])
    drained = [f"`{c['id']}` ({l})" for c in cells for l in c["labels"]
               if (c["stats"].get(l) or {}).get("drained")]
    if drained:
        out += ["## ‡ Drain warnings", "",
                f"In these inproc cells some run's sender had queued more than "
                f"{DRAIN_FRACTION:.0%} of the messages before the receiver got "
                "the first one, so the receiver's first-to-last window measured "
                "draining a queue rather than throughput (the number is "
                "inflated). Use more messages (`--count-scale`) or compare "
                "`e2e_msg_per_s` (first send to last receive) in results.json: "
                + ", ".join(drained), ""]
    failed = [c for c in cells if not c["ok"]]
    c_failed = (report.get("bindings") or {}).get("failed", [])
    out += ["## Failures", ""]
    if failed or c_failed:
        for c in failed:
            for e in c["errors"] or ["no number"]:
                out.append(f"- `{c['id']}`: {e}")
        for e in c_failed:
            out.append(f"- workload C {bindings.oneline(e)}")
    else:
        out.append("None: every cell produced a number.")
    out += ["", "Method: see `bench/README.md`. Raw runs: `results.json`.", ""]
    return "\n".join(out)


def _lat_percentile_table(cells: list[dict]) -> list[str]:
    if not cells:
        return []
    rows = []
    for c in _sorted_cells(cells):
        for l in c["labels"]:
            st = c["stats"].get(l)
            ex = (st or {}).get("extra", {})
            rows.append([TRANSPORT_TITLES.get(c["transport"], c["transport"]),
                         fmt_size(c["size"]), l]
                        + [fmt_us(ex.get(f)) for f in
                           ("mean_us", "p50_us", "p99_us", "p999_us", "max_us")]
                        + [fmt_cv(st), str(c["count"])])
    return ["Percentiles of one-way latency (rtt/2) from per-round-trip "
            "times; median over runs:", "",
            _table(["Transport", "Size", "Library", "mean", "p50", "p99",
                    "p99.9", "max", "CV(mean)", "round trips"], rows), ""]


# ---------------------------------------------------------------------------
# SVG (hand-written, no dependencies)
# ---------------------------------------------------------------------------

PALETTE = ["#d95f02", "#1b64b0", "#1b9e77", "#7570b3", "#e7298a", "#66a61e",
           "#a6761d", "#17becf", "#666666", "#e6ab02"]
DASHES = ["", "7,4", "2,3", "10,3,2,3"]


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Decade ticks (1, 2, 5 x 10^k) within [lo, hi]; finer (1..9 x 10^k)
    when the range is too narrow for that; decades only when too wide."""
    def gen(mants):
        out = []
        for e in range(math.floor(math.log10(lo)) - 1,
                       math.ceil(math.log10(hi)) + 1):
            for m in mants:
                v = m * 10.0 ** e
                if lo <= v <= hi:
                    out.append(v)
        return out
    ticks = gen((1, 2, 5))
    if len(ticks) < 4:
        ticks = gen(range(1, 10))
    if len(ticks) > 12:
        ticks = gen((1,))
    return ticks or [lo, hi]


def _fmt_tick(v: float) -> str:
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if v >= div:
            x = v / div
            return f"{x:g}{suf}"
    return f"{v:g}"


def svg_line_chart(title: str, series: list[dict], xlabel: str, ylabel: str,
                   width: int = 760, height: int = 440,
                   legend_width: int = 230) -> str:
    """Log-log line chart.  series: [{name, color, dash, points:[(x, y, lo,
    hi)]}]; x is plotted on a log2 axis with a tick at every x present, y on a
    log10 axis; lo..hi is drawn as a whisker (min-max over runs)."""
    ml, mr, mt, mb = 78, legend_width, 40, 52
    pw, ph = width - ml - mr, height - mt - mb
    xs = sorted({p[0] for s in series for p in s["points"]})
    ys = [v for s in series for p in s["points"] for v in p[1:]
          if v is not None and v > 0]
    e = html.escape
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<title>{e(title)}</title>',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{ml + pw / 2}" y="22" text-anchor="middle" '
             f'font-size="15" font-weight="bold">{e(title)}</text>']
    if not xs or not ys:
        parts.append(f'<text x="{ml + pw / 2}" y="{mt + ph / 2}" '
                     'text-anchor="middle">no data</text></svg>')
        return "\n".join(parts)
    xlo, xhi = math.log2(xs[0]), math.log2(xs[-1])
    if xhi == xlo:
        xlo, xhi = xlo - 1, xhi + 1
    ylo, yhi = min(ys), max(ys)
    ylo, yhi = ylo / 1.25, yhi * 1.25

    def X(x):
        return ml + (math.log2(x) - xlo) / (xhi - xlo) * pw

    def Y(y):
        return mt + ph - (math.log10(y) - math.log10(ylo)) / (
            math.log10(yhi) - math.log10(ylo)) * ph

    parts.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" '
                 'fill="none" stroke="#444"/>')
    for t in _log_ticks(ylo, yhi):
        y = Y(t)
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y:.1f}" y2="{y:.1f}" '
                     'stroke="#ddd"/>')
        parts.append(f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{e(_fmt_tick(t))}</text>')
    for x in xs:
        px = X(x)
        parts.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{mt}" '
                     f'y2="{mt + ph}" stroke="#eee"/>')
        parts.append(f'<text x="{px:.1f}" y="{mt + ph + 16}" '
                     f'text-anchor="middle">{e(fmt_size(int(x)))}</text>')
    parts.append(f'<text x="{ml + pw / 2}" y="{height - 10}" '
                 f'text-anchor="middle">{e(xlabel)}</text>')
    parts.append(f'<text transform="translate(16,{mt + ph / 2}) rotate(-90)" '
                 f'text-anchor="middle">{e(ylabel)}</text>')
    for i, s in enumerate(series):
        pts = sorted((p for p in s["points"] if p[1] and p[1] > 0),
                     key=lambda p: p[0])
        color, dash = s.get("color", "#000"), s.get("dash", "")
        da = f' stroke-dasharray="{dash}"' if dash else ""
        g = [f'<g class="series" data-name="{e(s["name"])}">']
        if pts:
            d = " ".join(f"{X(p[0]):.1f},{Y(p[1]):.1f}" for p in pts)
            g.append(f'<polyline points="{d}" fill="none" stroke="{color}" '
                     f'stroke-width="2"{da}/>')
        for p in pts:
            x, y = X(p[0]), Y(p[1])
            lo, hi = (p[2], p[3]) if len(p) >= 4 else (None, None)
            if lo and hi and lo > 0 and hi > 0 and hi != lo:
                g.append(f'<line class="whisker" x1="{x:.1f}" x2="{x:.1f}" '
                         f'y1="{Y(lo):.1f}" y2="{Y(hi):.1f}" stroke="{color}"/>')
            g.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}">'
                     f'<title>{e(s["name"])}: {p[1]:.6g} at '
                     f'{e(fmt_size(int(p[0])))}</title></circle>')
        g.append("</g>")
        parts.extend(g)
        ly = mt + 10 + i * 18
        lx = ml + pw + 14
        parts.append(f'<line x1="{lx}" x2="{lx + 28}" y1="{ly}" y2="{ly}" '
                     f'stroke="{color}" stroke-width="2"{da}/>')
        parts.append(f'<text x="{lx + 34}" y="{ly + 4}">{e(s["name"])}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def render_svgs(report: dict) -> dict[str, str]:
    """{filename: svg}: throughput vs size per pattern (and workload/HWM),
    latency percentiles vs size per workload and transport."""
    labels = [l["label"] for l in report["libs"]]
    color = {l: PALETTE[i % len(PALETTE)] for i, l in enumerate(labels)}
    cells = [c for c in report["cells"] if not c["null"]]
    svgs = {}
    raw = [c for c in cells if c["workload"] == "R"]
    cells = [c for c in cells if c["workload"] not in ("R", "M")]
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        if c["kind"] == "thr":
            groups.setdefault((c["workload"], c["pattern"], c["hwm"]), []).append(c)
    for (w, p, hwm), cs in groups.items():
        series = []
        for l in labels:
            for ti, t in enumerate(TRANSPORTS):
                pts = []
                for c in cs:
                    st = c["stats"].get(l)
                    if c["transport"] == t and st:
                        pts.append((c["size"], st["median"], st["min"], st["max"]))
                if pts:
                    series.append({"name": f"{l} {TRANSPORT_TITLES[t]}",
                                   "color": color[l], "dash": DASHES[ti],
                                   "points": pts})
        sizes = {c["size"] for c in cs}
        for ti, t in enumerate(TRANSPORTS):   # the raw-socket ceiling
            pts = [(c["size"], st["median"], st["min"], st["max"])
                   for c in raw if c["kind"] == "thr" and c["transport"] == t
                   and c["size"] in sizes
                   and (st := c["stats"].get(ceiling.RAW_LABEL))]
            if pts and w == "B":
                series.append({"name": f"raw socket {TRANSPORT_TITLES[t]}",
                               "color": "#999999", "dash": DASHES[ti],
                               "points": pts})
        title = (f"{PATTERN_TITLES.get(p, p)} throughput (workload {w}, "
                 f"HWM {hwm})")
        svgs[f"thr_{w}_{p}_hwm{hwm}.svg"] = svg_line_chart(
            title, series, "message size", "messages / s (median, min–max)")
    lat_groups: dict[tuple, list[dict]] = {}
    for c in cells:
        if c["kind"] == "lat":
            lat_groups.setdefault((c["workload"], c["transport"]), []).append(c)
    metrics = [("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"),
               ("max_us", "max")]
    for (w, t), cs in lat_groups.items():
        series = []
        for l in labels:
            for mi, (f, name) in enumerate(metrics):
                pts = []
                for c in cs:
                    st = c["stats"].get(l)
                    if st and st.get("extra", {}).get(f):
                        pts.append((c["size"], st["extra"][f]))
                if pts:
                    series.append({"name": f"{l} {name}", "color": color[l],
                                   "dash": DASHES[mi], "points": pts})
        mode = "separate processes" if w == "A" else "two threads"
        svgs[f"lat_{w}_{t}.svg"] = svg_line_chart(
            f"REQ/REP one-way latency, {TRANSPORT_TITLES[t]} ({mode})",
            series, "message size", "µs (median over runs)")
    if report.get("bindings"):
        svgs.update(bindings.render_svgs(sys.modules[__name__],
                                         report["bindings"]))
    return svgs


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

def repo_relative(value):
    """`value` (JSON-like) with every path inside this repository made relative to its
    root, so that published results do not name the machine they were made on."""
    if isinstance(value, str):
        return value.replace(str(REPO_DIR) + "/", "")
    if isinstance(value, list):
        return [repo_relative(v) for v in value]
    if isinstance(value, dict):
        return {k: repo_relative(v) for k, v in value.items()}
    return value


def write_outputs(report: dict, out_dir: Path, plots: bool = True) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    report = repo_relative(report)
    written = []
    p = out_dir / "results.json"
    p.write_text(json.dumps(report, indent=1, sort_keys=False) + "\n")
    written.append(p)
    p = out_dir / "results.md"
    p.write_text(render_markdown(report))
    written.append(p)
    if plots:
        for name, svg in render_svgs(report).items():
            p = out_dir / name
            p.write_text(svg + "\n")
            written.append(p)
    return written


def parse_lib_arg(s: str) -> Lib:
    if "=" not in s:
        raise SetupError(f"--lib wants LABEL=PATH, got {s!r}")
    label, path = s.split("=", 1)
    if not label or not re.fullmatch(r"[A-Za-z0-9_.+-]+", label):
        raise SetupError(f"bad library label {label!r}")
    p = Path(path)
    if not p.is_absolute():
        p = (Path.cwd() / p) if (Path.cwd() / p).exists() else (REPO_DIR / p)
    return Lib(label, str(p))


def default_libs(warnings: list[str]) -> list[Lib]:
    libs = []
    if DEFAULT_FERROMQ.exists():
        libs.append(Lib("ferromq", str(DEFAULT_FERROMQ)))
    else:
        warnings.append(f"ferromq NOT FOUND at {DEFAULT_FERROMQ} (run `make "
                        "dist`): measuring libzmq ONLY, there is no "
                        "comparison in this report.")
    if DEFAULT_LIBZMQ.exists():
        libs.append(Lib("libzmq", str(DEFAULT_LIBZMQ)))
    else:
        warnings.append(f"libzmq NOT FOUND at {DEFAULT_LIBZMQ} (apt-get install "
                        "libzmq3-dev, or pass --lib libzmq=PATH).")
    return libs


def loud(msg: str):
    bar = "!" * 78
    sys.stderr.write(f"\n{bar}\n!! {msg}\n{bar}\n\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="ferromq benchmark suite: workloads A, B, C, D, R and M of "
                    "BENCHMARKS.md over each library under test.")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--full", action="store_true",
                      help=f"full matrix, >= {FULL_RUNS} runs per cell")
    mode.add_argument("--quick", action="store_true",
                      help="quick matrix, 1 run per cell (the default; also "
                           "when $CI is set)")
    ap.add_argument("--lib", action="append", metavar="LABEL=PATH",
                    help="library under test (repeatable; default: "
                         "ferromq=dist/lib/libzmq.so.5 and libzmq=Debian's, "
                         "whichever exist)")
    ap.add_argument("--baseline", default="libzmq",
                    help="label Diff is computed against (default libzmq, or "
                         "the last --lib)")
    ap.add_argument("--runs", type=int, help="runs per cell")
    ap.add_argument("--order", choices=["round", "cell"], default="round",
                    help="round (default): run 1 of every cell, then run 2, "
                    "...; cell: all runs of a cell back to back")
    ap.add_argument("--null-runs", type=int, default=NULL_RUNS,
                    help=f"runs per null-test cell (default {NULL_RUNS})")
    ap.add_argument("--no-null", action="store_true", help="skip the null test")
    ap.add_argument("--count-scale", type=float, default=1.0,
                    help="multiply every message count (e.g. 0.1)")
    ap.add_argument("--sizes", help="comma-separated sizes (bytes)")
    ap.add_argument("--patterns", help="comma-separated: " + ",".join(PATTERNS))
    ap.add_argument("--transports", help="comma-separated: tcp,ipc,inproc")
    ap.add_argument("--hwm", help="comma-separated HWM settings for workload B "
                                  "throughput: 0 (unlimited) and/or default "
                                  "(quick: 0, full: 0,default)")
    ap.add_argument("--workloads", default="A,B,C,D,R,M",
                    help="any of A,B,C,D,R,M (default all; R = raw-socket "
                         "ceiling, M = memory)")
    ap.add_argument("--langs", help="workload C languages (comma-separated "
                    "keys; default all): " + ",".join(
                        L.key for L in bindings.languages()))
    ap.add_argument("--only", metavar="REGEX", help="run only cells whose id "
                    "matches, e.g. 'B/thr/router'")
    ap.add_argument("--timeout", type=int,
                    help="per-run watchdog seconds (default: 30 s plus a "
                         "budget from the cell's message count and size)")
    ap.add_argument("--out", type=Path, help="output directory (default "
                    "bench/out/<timestamp>)")
    ap.add_argument("--driver", type=Path, help="prebuilt zbench binary")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the driver")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--list", action="store_true",
                    help="print the plan (cell ids and counts) and exit")
    ap.add_argument("--render", type=Path, metavar="RESULTS_JSON",
                    help="re-render results.md and SVGs from a results.json")
    args = ap.parse_args(argv)

    if args.render:
        report = json.loads(args.render.read_text())
        out = args.out or args.render.parent
        write_outputs(report, out, plots=not args.no_plots)
        print(render_markdown(report))
        return 0

    quick = not args.full
    mode_name = "full" if args.full else (
        "quick (CI)" if os.environ.get(ENV_NOTE) else "quick")
    warnings: list[str] = []
    try:
        split = lambda s: [x.strip() for x in s.split(",") if x.strip()] if s else None
        sizes = [int(x) for x in split(args.sizes)] if args.sizes else None
        patterns = split(args.patterns)
        for p in patterns or []:
            if p not in PATTERNS:
                raise SetupError(f"unknown pattern {p!r}")
        transports = split(args.transports)
        for t in transports or []:
            if t not in TRANSPORTS:
                raise SetupError(f"unknown transport {t!r}")
        hwms = split(args.hwm)
        for h in hwms or []:
            if h != "default" and not h.isdigit():
                raise SetupError(f"bad HWM {h!r}")
        workloads = split(args.workloads) or ["A", "B", "C", "D", "R", "M"]
        for w in workloads:
            if w not in ("A", "B", "C", "D", "R", "M"):
                raise SetupError(f"unknown workload {w!r}")
        langs = split(args.langs)
        known = [L.key for L in bindings.languages()]
        for k in langs or []:
            if k not in known:
                raise SetupError(f"unknown language {k!r} ({', '.join(known)})")
        if langs and "c" not in langs:
            langs.insert(0, "c")   # overhead is always against C
        plan = build_plan(quick, sizes=sizes, patterns=patterns,
                          transports=transports, hwms=hwms,
                          workloads=workloads,
                          scale=args.count_scale,
                          null=not args.no_null and bool(
                              {"A", "B"} & set(workloads)),
                          only=args.only)
        if not plan and "C" not in workloads:
            raise SetupError("the plan is empty (check --only/--sizes/...)")
        runs = args.runs or (QUICK_RUNS if quick else FULL_RUNS)
        if args.list:
            for c in plan:
                print(f"{c.id}  count={c.count}" +
                      (f" warmup={c.warmup}" if c.kind == "lat" else ""))
            print(f"{len(plan)} cells, {runs} run(s) each", file=sys.stderr)
            if "C" in workloads:
                for L in bindings.languages():
                    if not langs or L.key in langs:
                        print(f"C/{L.key}  {L.name}: {L.binding}  "
                              f"sizes={bindings.SIZES_QUICK if quick else bindings.SIZES_FULL}")
            return 0

        libs = [parse_lib_arg(s) for s in args.lib] if args.lib \
            else default_libs(warnings)
        for lib in libs:
            if not Path(lib.path).exists():
                raise SetupError(f"library {lib.label}: {lib.path} does not exist")
        if not libs:
            raise SetupError("no library to measure")
        if len({l.label for l in libs}) != len(libs):
            raise SetupError("duplicate library labels")
        for w in warnings:
            loud(w)
        driver = args.driver or build_driver(DEFAULT_DRIVER, force=args.rebuild)
        for lib in libs:
            probe_lib(driver, lib)
        baseline = next((l for l in libs if l.label == args.baseline), libs[-1])
        if len({l.realpath for l in libs}) < len(libs):
            warnings.append("two labels load the same library file "
                            f"({', '.join(l.label + '=' + l.realpath for l in libs)}): "
                            "this whole run is a null test.")
    except SetupError as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2

    timeout = args.timeout
    host = host_info()
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = args.out or (DEFAULT_OUT_ROOT / stamp)
    print(f"libraries: " + ", ".join(f"{l.label}={l.path} ({l.version})"
                                     for l in libs), file=sys.stderr)
    print(f"mode {mode_name}: {len(plan)} cells, {runs} run(s) per cell; "
          f"output {out_dir}", file=sys.stderr)
    t0 = time.monotonic()
    raw = execute(plan, libs, driver, runs, args.null_runs, baseline,
                  timeout, order=args.order) if plan else []
    bind = None
    if "C" in workloads:
        bind = bindings.run_workload(sys.modules[__name__], libs, quick, runs,
                                     args.count_scale, langs,
                                     sizes=sizes and [s for s in sizes
                                                      if s > 0])
    host["loadavg_end"] = list(os.getloadavg())
    cells = summarize_cells(plan, raw, [l.label for l in libs], baseline.label)
    failed = [c["id"] for c in cells if not c["ok"]]
    report = {
        "suite": "ferromq bench",
        "host": host,
        "libs": [asdict(l) for l in libs],
        "baseline": baseline.label,
        "config": {
            "mode": mode_name, "runs": runs, "null_runs": args.null_runs,
            "order": args.order,
            "noisy_cv": NOISY_CV, "count_scale": args.count_scale,
            "timeout_s": timeout or "per cell (cell_timeout)", "argv": sys.argv if argv is None else argv,
            "driver": str(driver),
            "driver_sha256": hashlib.sha256(Path(driver).read_bytes()).hexdigest(),
            "wall_s": round(time.monotonic() - t0, 2),
        },
        "warnings": warnings,
        "failed_cells": failed,
        "cells": cells,
        "runs": raw,
    }
    if bind is not None:
        report["bindings"] = bind
    written = write_outputs(report, out_dir, plots=not args.no_plots)
    if args.out is None:
        latest = DEFAULT_OUT_ROOT / "latest"
        try:
            if latest.is_symlink() or latest.exists():
                latest.unlink()
            latest.symlink_to(out_dir.name)
        except OSError:
            pass
    print(render_markdown(report))
    print(f"wrote {len(written)} files to {out_dir} in "
          f"{fmt_duration(time.monotonic() - t0)}", file=sys.stderr)
    for w in warnings:
        loud(w)
    c_failed = (bind or {}).get("failed", [])
    if failed or c_failed:
        print(f"run.py: {len(failed) + len(c_failed)} cell(s) failed to "
              "produce a number:", file=sys.stderr)
        for c in cells:
            if not c["ok"]:
                print(f"  {c['id']}: " + "; ".join(c["errors"] or ["no number"]),
                      file=sys.stderr)
        for e in c_failed:
            print(f"  C {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
