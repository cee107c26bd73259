"""Workloads R (raw-socket ceiling) and M (memory) -- imported by bench/run.py.

R: the same traffic as workload B's `thr` and `lat` cells over a plain TCP or
   Unix-stream socket pair (`zbench raw_thr` / `raw_lat`, no zmq library),
   once per run under the label "raw".  The B tables get a "raw socket"
   column and each library's share of it ("% of raw").
M: resident set size.  `zbench mem_idle` (a ROUTER with N idle, handshaken
   tcp connections: RSS growth and KiB per connection) and `zbench
   mem_slowsub` (PUB and a SUB that stops reading, separate processes: each
   one's RSS growth at the default HWM).  Lower is better.

Functions take R = the bench/run.py module where they need its Cell, table
and number formatting (like bindings.py).  Standard library only.
"""
from __future__ import annotations

RAW_LABEL = "raw"
RAW_VERSION = "none (raw socket)"
RAW_TRANSPORTS = ["tcp", "ipc"]
RAW_MIN_BYTES = 64 << 20

# mem_idle: the 10,000-connection figure is the full-mode cell; quick mode
# uses fewer (same per-connection figure, a fraction of the time).
IDLE_COUNT_FULL, IDLE_COUNT_QUICK = 10_000, 2_000
# mem_slowsub: enough messages to pass both HWMs (1000 each by default)
# and fill the kernel's socket buffers.
SLOWSUB_FULL = {64: 200_000, 1024: 100_000, 65536: 20_000}
SLOWSUB_QUICK = {64: 20_000, 65536: 3_000}

MEM_FIELDS = ["rss_growth_kib", "kib_per_conn", "pub_rss_growth_kib",
              "sub_rss_growth_kib", "rss_before_kib", "rss_after_kib",
              "pub_rss_before_kib", "pub_rss_after_kib", "sub_rss_before_kib",
              "sub_rss_after_kib", "handshake_s"]


# ---------------------------------------------------------------------------
# Plan and driver arguments
# ---------------------------------------------------------------------------

def plan(R, quick: bool, workloads, sizes, transports, scale: float,
         warmup: int) -> list:
    """R cells (throughput and latency per raw transport and size, counts
    equal to workload B's) and M cells."""
    cells = []
    if "R" in workloads:
        ts = [t for t in transports if t in RAW_TRANSPORTS]
        for t in ts:
            for s in sizes:
                cells.append(R.Cell("R", "thr", "raw", t, s,
                                    raw_thr_count(R, s, quick, scale)))
        for t in ts:
            for s in sizes:
                cells.append(R.Cell("R", "lat", "raw", t, s,
                                    R.lat_count(s, quick, scale), "default",
                                    warmup))
    if "M" in workloads:
        n = IDLE_COUNT_QUICK if quick else IDLE_COUNT_FULL
        # A per-connection figure: --count-scale may shrink the cell but never
        # grow it past the full-mode count (whose descriptors fit the usual
        # hard RLIMIT_NOFILE of 20,000 that a larger count would exceed).
        cells.append(R.Cell("M", "mem", "idle", "tcp", 0,
                            max(2, min(int(n * scale), IDLE_COUNT_FULL))))
        for s, n in (SLOWSUB_QUICK if quick else SLOWSUB_FULL).items():
            cells.append(R.Cell("M", "mem", "slowsub", "tcp", s,
                                max(2, int(n * scale))))
    return cells


def raw_thr_count(R, size: int, quick: bool, scale: float = 1.0) -> int:
    """Workload B's message count, but at least RAW_MIN_BYTES of payload: a
    bare socket moves quick mode's 10k x 64 B in about a millisecond, too
    short to time against thread start-up.  Raw transfers are cheap."""
    return max(R.thr_count(size, quick, scale),
               int(RAW_MIN_BYTES // size * scale), 2)


def is_raw(cell) -> bool:
    return cell.workload == "R"


def driver_args(cell) -> list[str]:
    """zbench COMMAND and options for an R or M cell."""
    if cell.workload == "R":
        a = [f"raw_{cell.kind}", "--transport", cell.transport, "--size",
             str(cell.size), "--count", str(cell.count)]
        if cell.kind == "lat":
            a += ["--warmup", str(cell.warmup)]
        return a
    if cell.pattern == "idle":
        return ["mem_idle", "--count", str(cell.count)]
    return ["mem_slowsub", "--size", str(cell.size), "--count",
            str(cell.count)]


def timeout(cell) -> int:
    """Watchdog seconds for an M cell (handshakes, RSS settling waits)."""
    if cell.pattern == "idle":
        return int(60 + cell.count / 100)
    return int(60 + cell.count / 20_000 + cell.count * cell.size / 50e6)


def extra_fields(cell) -> list[str]:
    return MEM_FIELDS if cell.kind == "mem" else []


# ---------------------------------------------------------------------------
# Table math (pure; tested on synthetic numbers)
# ---------------------------------------------------------------------------

def pct_of_raw(value: float | None, raw: float | None,
               higher_is_better: bool) -> float | None:
    """A library's figure as a percentage of the raw-socket figure.
    Throughput: library / raw (100% = as fast as the bare socket; higher is
    better).  Latency: library / raw too (100% = as fast; above 100% =
    slower; lower is better) -- see raw_note()."""
    if value is None or raw is None or raw <= 0 or value <= 0:
        return None
    return value / raw * 100.0


def mem_diff(candidate: float | None, baseline: float | None):
    """(candidate - baseline in KiB, candidate / baseline).  Lower memory is
    better, so a positive difference / ratio > 1 means the candidate uses
    MORE memory.  The ratio is None when the baseline is not positive."""
    if candidate is None or baseline is None:
        return None, None
    ratio = candidate / baseline if baseline > 0 else None
    return candidate - baseline, ratio


def fmt_kib(v: float | None) -> str:
    if v is None:
        return "—"
    if abs(v) >= 100:
        return f"{v:,.0f} KiB"
    return f"{v:.1f} KiB"


def fmt_kib_diff(v: float | None) -> str:
    if v is None:
        return "—"
    return ("+" if v > 0 else "") + fmt_kib(v)


def fmt_ratio(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}×"


def fmt_pct_raw(v: float | None) -> str:
    return "—" if v is None else f"{v:.0f}%"


def raw_index(cells: list[dict]) -> dict:
    """{(kind, transport, size): raw cell's stats} for the R cells."""
    idx = {}
    for c in cells:
        if c["workload"] == "R":
            idx[(c["kind"], c["transport"], c["size"])] = \
                c["stats"].get(RAW_LABEL)
    return idx


def raw_columns(c: dict, idx: dict, labels: list[str], fmt) -> list[str]:
    """Extra cells for a B table row: raw socket, then each library as % of
    raw (on the cell's metric: throughput median, or mean latency)."""
    raw = idx.get((c["kind"], c["transport"], c["size"]))
    rv = raw["median"] if raw else None
    out = [fmt(rv) if raw else "—"]
    for l in labels:
        st = c["stats"].get(l)
        out.append(fmt_pct_raw(pct_of_raw(st and st["median"], rv,
                                          c["kind"] == "thr")))
    return out


def raw_header(labels: list[str]) -> list[str]:
    return ["raw socket"] + [f"{l} % of raw" for l in labels]


def raw_note(kind: str) -> str:
    if kind == "thr":
        return ("% of raw = library msg/s ÷ raw-socket msg/s over the same "
                "transport and size (higher is better; 100% = as fast as a "
                "bare socket pair). Inproc has no raw counterpart (—).")
    return ("% of raw = library one-way latency ÷ raw-socket one-way "
            "latency (lower is better; 100% = as fast as a bare socket "
            "pair, 250% = 2.5× the raw latency).")


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------

def _med(st, field=None):
    if not st:
        return None
    if field is None:
        return st["median"]
    return (st.get("extra") or {}).get(field)


def render_raw(R, cells: list[dict], labels: list[str]) -> list[str]:
    """The summary section: raw ceilings, and PUSH/PULL (HWM 0 if measured)
    and REQ/REP as % of raw for every library."""
    rc = [c for c in cells if c["workload"] == "R"]
    if not rc:
        return []
    out = ["## Workload R — raw-socket ceiling (no zmq)", "",
           "The same transfer as workload B over a plain socket pair "
           "(`zbench raw_thr` / `raw_lat`; two threads, TCP_NODELAY, "
           "256 KiB writes and reads for throughput; one message per "
           "write for latency), measured in the same run. The B tables "
           "above carry a `raw socket` column and each library's share "
           "of it.", ""]
    b = {(c["kind"], c["pattern"], c["transport"], c["size"], c["hwm"]): c
         for c in cells if c["workload"] == "B" and not c["null"]}

    def bcell(kind, pattern, t, s):
        for h in ("0", "default"):
            if (kind, pattern, t, s, h) in b:
                return b[(kind, pattern, t, s, h)]
        return None

    thr = R._sorted_cells([c for c in rc if c["kind"] == "thr"])
    if thr:
        rows = []
        for c in thr:
            st = c["stats"].get(RAW_LABEL)
            bc = bcell("thr", "pushpull", c["transport"], c["size"])
            row = [R.TRANSPORT_TITLES.get(c["transport"], c["transport"]),
                   R.fmt_size(c["size"]), R._value(st, R.fmt_rate),
                   (f"{st['extra'].get('mbit_per_s', 0):.0f} Mb/s"
                    if st else "—")]
            for l in labels:
                v = _med(bc["stats"].get(l)) if bc else None
                row.append(fmt_pct_raw(pct_of_raw(v, _med(st), True)))
            row += [R.fmt_range(st, R.fmt_rate), R.fmt_cv(st)]
            rows.append(row)
        out += ["### Throughput ceiling (msg/s; PUSH/PULL as % of raw)", "",
                R._table(["Transport", "Size", "raw socket", "raw Mb/s"]
                         + [f"{l} PUSH/PULL % of raw" for l in labels]
                         + ["raw min–max", "raw CV"], rows), "",
                raw_note("thr"), ""]
    lat = R._sorted_cells([c for c in rc if c["kind"] == "lat"])
    if lat:
        rows = []
        for c in lat:
            st = c["stats"].get(RAW_LABEL)
            bc = bcell("lat", "reqrep", c["transport"], c["size"])
            row = [R.TRANSPORT_TITLES.get(c["transport"], c["transport"]),
                   R.fmt_size(c["size"]), R._value(st, R.fmt_us),
                   R.fmt_us(_med(st, "p50_us")), R.fmt_us(_med(st, "p99_us"))]
            for l in labels:
                v = _med(bc["stats"].get(l)) if bc else None
                row.append(fmt_pct_raw(pct_of_raw(v, _med(st), False)))
            row += [R.fmt_cv(st)]
            rows.append(row)
        out += ["### Latency floor (one-way µs; REQ/REP mean as % of raw)", "",
                R._table(["Transport", "Size", "raw mean", "raw p50",
                          "raw p99"]
                         + [f"{l} REQ/REP % of raw" for l in labels]
                         + ["raw CV"], rows), "",
                raw_note("lat"), ""]
    return out


def mem_rows(c: dict, labels: list[str]) -> list[tuple[str, list]]:
    """(case title, [value per label]) rows of one M cell, in KiB."""
    def vals(field):
        return [_med(c["stats"].get(l), field) for l in labels]
    if c["pattern"] == "idle":
        n = c["count"]
        return [(f"Idle ROUTER, {n:,} handshaken tcp connections: RSS growth",
                 [_med(c["stats"].get(l)) for l in labels]),
                ("… per connection", vals("kib_per_conn"))]
    size = R_fmt_size(c["size"])
    n = c["count"]
    return [(f"Slow SUB, {n:,} × {size} PUB sends (default HWM): PUB RSS growth",
             vals("pub_rss_growth_kib")),
            (f"… SUB RSS growth ({size})", vals("sub_rss_growth_kib"))]


def R_fmt_size(n: int) -> str:
    return f"{n // 1024}KB" if n >= 1024 and n % 1024 == 0 else f"{n}B"


def render_mem(R, cells: list[dict], labels: list[str],
               baseline: str) -> list[str]:
    mc = [c for c in cells if c["workload"] == "M"]
    if not mc:
        return []
    mc.sort(key=lambda c: (c["pattern"] != "idle", c["size"]))
    cands = [l for l in labels if l != baseline]
    head = ["Case"] + labels
    for l in cands:
        sfx = "" if len(cands) == 1 else f" {l}"
        head += [f"Diff{sfx}", f"Ratio{sfx}"]
    rows = []
    for c in mc:
        for title, vals in mem_rows(c, labels):
            row = [title] + [fmt_kib(v) if v is not None else "FAILED"
                             for v in vals]
            base = vals[labels.index(baseline)] if baseline in labels else None
            for l in cands:
                d, r = mem_diff(vals[labels.index(l)], base)
                row += [fmt_kib_diff(d), fmt_ratio(r)]
            rows.append(row)
    cv_rows = []
    for c in mc:
        cv_rows.append([c["id"]] + [
            f"{R.fmt_range(c['stats'].get(l), fmt_kib)} ({R.fmt_cv(c['stats'].get(l))})"
            for l in labels])
    lower = (f"**Lower is better.** Diff = {cands[0]} − {baseline} in KiB, "
             f"Ratio = {cands[0]} ÷ {baseline}: a positive Diff / a ratio "
             f"above 1 means {cands[0]} uses MORE memory than {baseline}."
             if len(cands) == 1 else
             f"**Lower is better.** Diff = library − {baseline} (KiB); "
             "positive = uses more memory.") if cands else \
        "**Lower is better.** One library measured: no Diff."
    return ["## Workload M — memory (RSS growth, KiB)", "",
            "VmRSS from `/proc/self/status` of the measured process, medians "
            "over runs. `mem_idle`: a ROUTER binds tcp; a forked child opens "
            "the connections as raw ZMTP 3.0 DEALERs (NULL greeting + READY) "
            "and leaves them idle; growth = RSS once every "
            "HANDSHAKE_SUCCEEDED monitor event has arrived and RSS has "
            "settled − RSS before bind. `mem_slowsub`: PUB binds, a SUB in a "
            "forked process reads one message and stops; PUB sends with "
            "ZMQ_DONTWAIT at the default HWM (dropping as PUB does); each "
            "process reports its own settled growth.", "", lower, "",
            R._table(head, rows), "",
            "Spread per cell (RSS growth, PUB + SUB for slowsub: min–max "
            "(CV)):", "",
            R._table(["Cell"] + labels, cv_rows), ""]
