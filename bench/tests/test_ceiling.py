"""Tests for workloads R (raw-socket ceiling) and M (memory): planning, the
table math on synthetic results, and the driver's raw_* / mem_* commands.

    python3 -m pytest -q bench/tests

No test asserts anything about wall-clock time or how fast a library is.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_run import run, _rec, _thr_result, _lat_result  # noqa: E402

import ceiling  # noqa: E402  (bench/ is on sys.path via run.py)

SYSTEM_LIBZMQ = Path("/usr/lib/x86_64-linux-gnu/libzmq.so.5")
needs_libzmq = pytest.mark.skipif(
    not SYSTEM_LIBZMQ.exists() or shutil.which(os.environ.get("CC", "gcc")) is None,
    reason="needs Debian's libzmq (libzmq3-dev) and a C compiler")


# ---------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------

def test_quick_mode_plans_a_few_raw_and_memory_cells():
    plan = run.build_plan(quick=True, workloads=("B", "R", "M"))
    raw = [c for c in plan if c.workload == "R"]
    mem = [c for c in plan if c.workload == "M"]
    # raw: tcp and ipc (no inproc counterpart), every quick size, thr + lat
    assert {(c.kind, c.transport, c.size) for c in raw} == {
        (k, t, s) for k in ("thr", "lat") for t in ("tcp", "ipc")
        for s in run.QUICK_SIZES}
    assert {c.pattern for c in mem} == {"idle", "slowsub"}
    idle = next(c for c in mem if c.pattern == "idle")
    assert idle.count == ceiling.IDLE_COUNT_QUICK and idle.id.endswith("conn")
    assert all(c.kind == "mem" and c.metric == "rss_growth_kib"
               and not c.higher_is_better for c in mem)
    # a cheap addition: fewer cells than a tenth of the B matrix
    assert len(raw) + len(mem) <= 20


def test_full_mode_has_the_10000_connection_cell_and_every_size():
    plan = run.build_plan(quick=False, workloads=("R", "M"))
    idle = [c for c in plan if c.pattern == "idle"]
    assert [c.count for c in idle] == [10_000]
    raw_sizes = {c.size for c in plan if c.workload == "R"}
    assert raw_sizes == set(run.FULL_SIZES)


def test_count_scale_never_grows_the_idle_cell_past_the_full_count():
    # 20,000 connections need more descriptors than the usual hard limit.
    for quick, scale, want in ((True, 10, 10_000), (False, 10, 10_000),
                               (False, 0.1, 1_000), (True, 1, 2_000)):
        plan = run.build_plan(quick=quick, workloads=("M",), scale=scale)
        assert [c.count for c in plan if c.pattern == "idle"] == [want], \
            (quick, scale)


def test_raw_counts_match_b_latency_and_cover_enough_bytes():
    plan = run.build_plan(quick=True, workloads=("B", "R"))
    b = {(c.kind, c.transport, c.size): c for c in plan if c.workload == "B"
         and not c.null}
    for c in plan:
        if c.workload != "R":
            continue
        twin = b[(c.kind, c.transport, c.size)]
        if c.kind == "lat":
            assert c.count == twin.count and c.warmup == twin.warmup
        else:
            assert c.count >= twin.count
            assert c.count * c.size >= ceiling.RAW_MIN_BYTES


def test_default_plan_and_transport_filter():
    # build_plan's own default stays A, B, D (the runner's CLI adds R and M)
    assert not [c for c in run.build_plan(quick=True)
                if c.workload in ("R", "M")]
    plan = run.build_plan(quick=True, workloads=("R",), transports=["inproc"])
    assert plan == [] or all(c.null for c in plan)


def test_cell_ids_and_driver_arguments():
    C = run.Cell
    thr = C("R", "thr", "raw", "tcp", 64, 1000)
    lat = C("R", "lat", "raw", "ipc", 64, 500, "default", 10)
    idle = C("M", "mem", "idle", "tcp", 0, 10000)
    slow = C("M", "mem", "slowsub", "tcp", 65536, 3000)
    assert thr.id == "R/thr/raw/tcp/64"        # no HWM for a bare socket
    assert idle.id == "M/mem/idle/tcp/10000conn"
    assert slow.id == "M/mem/slowsub/tcp/65536"
    assert ceiling.driver_args(thr) == ["raw_thr", "--transport", "tcp",
                                        "--size", "64", "--count", "1000"]
    assert ceiling.driver_args(lat)[-2:] == ["--warmup", "10"]
    assert ceiling.driver_args(idle) == ["mem_idle", "--count", "10000"]
    assert ceiling.driver_args(slow) == ["mem_slowsub", "--size", "65536",
                                         "--count", "3000"]
    assert run.cell_timeout(idle) >= 60


def _execute_recording(monkeypatch, plan, runs, null_runs, **kw):
    """Runs `execute` with every driver run faked; returns (cell id, label) per
    run in the order they ran, and execute's records."""
    seen = []

    def fake(driver, lib, cell, timeout):
        seen.append((cell.id, lib.label))
        return {"ok": True, "value": 1.0, "rc": 0, "result": {"ok": True}}

    monkeypatch.setattr(run, "run_cell_once", fake)
    libs = [run.Lib("ferromq", "/x/f"), run.Lib("libzmq", "/x/l")]
    raw = run.execute(plan, libs, Path("zbench"), runs, null_runs, libs[1],
                      None, progress=False, **kw)
    return seen, raw


def test_raw_cells_run_once_per_run_under_the_raw_label(monkeypatch):
    C = run.Cell
    plan = [C("R", "thr", "raw", "tcp", 64, 1000),
            C("B", "thr", "pushpull", "tcp", 64, 1000, "0")]
    seen, _ = _execute_recording(monkeypatch, plan, 2, 2, order="cell")
    assert seen == [("R/thr/raw/tcp/64", "raw")] * 2 + [
        ("B/thr/pushpull/tcp/64/hwm0", "ferromq"),
        ("B/thr/pushpull/tcp/64/hwm0", "libzmq")] * 2


def test_runs_go_round_the_cells_so_each_cell_is_sampled_over_the_whole_run(
        monkeypatch):
    C = run.Cell
    plan = [C("B", "thr", "pair", "tcp", 64, 1000, "0"),
            C("B", "thr", "pushpull", "tcp", 64, 1000, "0", null=True),
            C("B", "thr", "pushpull", "tcp", 64, 1000, "0")]
    seen, raw = _execute_recording(monkeypatch, plan, 2, 3)
    pair, null, pp = (c.id for c in plan)
    one_round = [(pair, "ferromq"), (pair, "libzmq"),
                 (null, "libzmq#1"), (null, "libzmq#2"),
                 (pp, "ferromq"), (pp, "libzmq")]
    # The null test has more runs than the others: its third comes alone.
    assert seen == one_round * 2 + [(null, "libzmq#1"), (null, "libzmq#2")]
    assert [r["run"] for r in raw] == [1] * 6 + [2] * 6 + [3, 3]


def test_memory_metric_may_be_zero_or_negative_but_not_missing():
    ok = run._finish({}, {"ok": True, "rss_growth_kib": -12}, 0, "",
                     "rss_growth_kib", any_sign=True)
    assert ok["ok"] and ok["value"] == -12
    bad = run._finish({}, {"ok": True}, 0, "", "rss_growth_kib",
                      any_sign=True)
    assert not bad["ok"]
    thr = run._finish({}, {"ok": True, "msg_per_s": 0}, 0, "", "msg_per_s")
    assert not thr["ok"]


# ---------------------------------------------------------------------------
# Table math
# ---------------------------------------------------------------------------

def test_percent_of_raw():
    assert ceiling.pct_of_raw(2.5e6, 1.0e7, True) == pytest.approx(25.0)
    # latency: library / raw, 100% = as fast as the bare socket
    assert ceiling.pct_of_raw(30.0, 12.0, False) == pytest.approx(250.0)
    assert ceiling.pct_of_raw(None, 1.0, True) is None
    assert ceiling.pct_of_raw(1.0, 0.0, True) is None


def test_memory_diff_direction():
    # lower is better: candidate above baseline = positive diff, ratio > 1
    d, r = ceiling.mem_diff(77.0, 23.0)
    assert d == pytest.approx(54.0) and r == pytest.approx(77 / 23)
    d, r = ceiling.mem_diff(500.0, 1000.0)
    assert d == pytest.approx(-500.0) and r == pytest.approx(0.5)
    assert ceiling.mem_diff(10.0, 0.0) == (10.0, None)
    assert ceiling.mem_diff(None, 5.0) == (None, None)
    assert ceiling.fmt_kib_diff(54.0) == "+54.0 KiB"
    assert ceiling.fmt_kib_diff(-1500.0) == "-1,500 KiB"
    assert ceiling.fmt_ratio(2.0) == "2.00×"


def _mem_result(case, growth, **kw):
    d = {"ok": True, "case": case, "rss_growth_kib": growth}
    d.update(kw)
    return d


def synthetic_report():
    C = run.Cell
    plan = [
        C("B", "thr", "pushpull", "tcp", 64, 1000, "0"),
        C("B", "thr", "pushpull", "inproc", 64, 1000, "0"),
        C("B", "lat", "reqrep", "tcp", 64, 500, "default", 10),
        C("R", "thr", "raw", "tcp", 64, 1000),
        C("R", "lat", "raw", "tcp", 64, 500, "default", 10),
        C("M", "mem", "idle", "tcp", 0, 1000),
        C("M", "mem", "slowsub", "tcp", 64, 5000),
    ]
    recs = []
    for r in (1, 2, 3):
        recs.append(_rec(plan[3], "raw", r, 8.0e6, _thr_result(8.0e6, 64)))
        recs.append(_rec(plan[4], "raw", r, 10.0, _lat_result(10.0)))
        for lib, thr, lat, idle, pub, sub in (
                ("ferromq", 4.0e6, 15.0, 78_000, 500, 800),
                ("libzmq", 2.0e6, 30.0, 23_000, 600, 1000)):
            recs.append(_rec(plan[0], lib, r, thr, _thr_result(thr, 64)))
            recs.append(_rec(plan[1], lib, r, thr * 2, _thr_result(thr * 2, 64)))
            recs.append(_rec(plan[2], lib, r, lat, _lat_result(lat)))
            recs.append(_rec(plan[5], lib, r, idle, _mem_result(
                "idle", idle, kib_per_conn=idle / 1000)))
            recs.append(_rec(plan[6], lib, r, pub + sub, _mem_result(
                "slowsub", pub + sub, pub_rss_growth_kib=pub,
                sub_rss_growth_kib=sub)))
    cells = run.summarize_cells(plan, recs, ["ferromq", "libzmq"], "libzmq")
    return {
        "suite": "ferromq bench",
        "host": {"cpu_model": "Test CPU", "cores": 2, "kernel": "6.0-test",
                 "os": "TestOS", "date": "2030-01-01T00:00:00+00:00",
                 "loadavg_start": [0.1, 0.2, 0.3]},
        "libs": [{"label": "ferromq", "path": "/x/ferromq", "version": "4.3.5",
                  "realpath": "/x/ferromq", "sha256": "ab" * 32,
                  "size_bytes": 1},
                 {"label": "libzmq", "path": "/x/libzmq", "version": "4.3.4",
                  "realpath": "/x/libzmq", "sha256": "cd" * 32,
                  "size_bytes": 1}],
        "baseline": "libzmq",
        "config": {"mode": "quick", "runs": 3, "null_runs": 3},
        "warnings": [], "failed_cells": [c["id"] for c in cells if not c["ok"]],
        "cells": cells, "runs": recs,
    }


def _row(md, prefix):
    line = next(l for l in md.splitlines() if l.startswith(prefix))
    return [x.strip() for x in line.strip().strip("|").split("|")]


def test_summaries_of_raw_and_memory_cells():
    rep = synthetic_report()
    assert rep["failed_cells"] == []
    raw = next(c for c in rep["cells"] if c["id"] == "R/thr/raw/tcp/64")
    assert raw["labels"] == ["raw"] and raw["diff_pct"] == {}
    assert raw["stats"]["raw"]["median"] == 8.0e6
    idle = next(c for c in rep["cells"] if c["pattern"] == "idle")
    assert idle["better"] == "lower"
    assert idle["stats"]["ferromq"]["extra"]["kib_per_conn"] == 78.0
    # Diff on a lower-is-better metric: ferromq uses more => positive
    assert idle["diff_pct"]["ferromq"] == pytest.approx((78 / 23 - 1) * 100)


def test_b_tables_get_a_raw_column_and_percent_of_raw():
    md = run.render_markdown(synthetic_report())
    header = _row(md, "| Transport | Size | ferromq | libzmq | Diff | raw socket")
    assert header[5:8] == ["raw socket", "ferromq % of raw", "libzmq % of raw"]
    tcp = _row(md, "| TCP | 64B | 4.00M/s |")
    assert tcp[2:8] == ["4.00M/s", "2.00M/s", "+100.0%", "8.00M/s", "50%",
                        "25%"]
    inproc = _row(md, "| inproc | 64B | 8.00M/s |")
    assert inproc[5:8] == ["—", "—", "—"]        # no raw inproc
    lat = _row(md, "| TCP | 64B | 15.00 µs |")
    assert lat[2:8] == ["15.00 µs", "30.00 µs", "-50.0%", "10.00 µs",
                        "150%", "300%"]
    assert "lower is better; 100% = as fast as a bare socket pair" in md


def test_raw_summary_section():
    md = run.render_markdown(synthetic_report())
    assert "## Workload R — raw-socket ceiling" in md
    row = _row(md, "| TCP | 64B | 8.00M/s |")
    assert row[3] == "4096 Mb/s" and row[4:6] == ["50%", "25%"]
    lat = _row(md, "| TCP | 64B | 10.00 µs |")
    assert lat[5:7] == ["150%", "300%"]


def test_memory_table_direction_and_labels():
    md = run.render_markdown(synthetic_report())
    assert "## Workload M — memory" in md
    assert "| Case | ferromq | libzmq | Diff | Ratio |" in md
    assert "**Lower is better.**" in md and "ferromq uses MORE memory" in md
    per = _row(md, "| … per connection |")
    assert per[1:] == ["78.0 KiB", "23.0 KiB", "+55.0 KiB", "3.39×"]
    idle = _row(md, "| Idle ROUTER, 1,000 handshaken")
    assert idle[1:] == ["78,000 KiB", "23,000 KiB", "+55,000 KiB", "3.39×"]
    pub = _row(md, "| Slow SUB, 5,000 × 64B")
    assert pub[1:] == ["500 KiB", "600 KiB", "-100 KiB", "0.83×"]
    sub = _row(md, "| … SUB RSS growth (64B)")
    assert sub[1:] == ["800 KiB", "1,000 KiB", "-200 KiB", "0.80×"]


def test_raw_series_in_b_charts_and_no_empty_r_or_m_charts(tmp_path):
    rep = synthetic_report()
    svgs = run.render_svgs(rep)
    assert not [n for n in svgs if "_R_" in n or "_M_" in n]
    chart = svgs["thr_B_pushpull_hwm0.svg"]
    names = [g.get("data-name") for g in ET.fromstring(chart).iter(
        "{http://www.w3.org/2000/svg}g")]
    assert "raw socket TCP" in names and "ferromq TCP" in names
    run.write_outputs(rep, tmp_path)
    assert json.loads((tmp_path / "results.json").read_text())["cells"]


# ---------------------------------------------------------------------------
# The driver (built into a temporary directory)
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if shutil.which(os.environ.get("CC", "gcc")) is None:
        pytest.skip("no C compiler")
    return run.build_driver(tmp_path_factory.mktemp("drv") / "zbench",
                            force=True)


def _zb(driver, *args, timeout=60):
    r = subprocess.run([str(driver), *args], capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("transport", ["tcp", "ipc"])
def test_raw_commands_move_every_byte_without_loading_a_library(
        driver, transport, tmp_path):
    missing = str(tmp_path / "not-a-library.so")   # never dlopen()ed
    rc, d = _zb(driver, "--lib", missing, "raw_thr", "--transport",
                transport, "--size", "100", "--count", "5000")
    assert rc == 0 and d["ok"], d
    assert d["version"] == "none (raw socket)" and d["pattern"] == "raw"
    assert d["count"] == 5000 and d["msg_per_s"] > 0 and d["mbit_per_s"] > 0
    assert d["write_bytes"] % 100 == 0 and d["writes"] >= 1
    rc, d = _zb(driver, "--lib", missing, "raw_lat", "--transport",
                transport, "--size", "64", "--count", "50", "--warmup", "5")
    assert rc == 0 and d["ok"], d
    assert d["count"] == 50 and d["min_us"] <= d["p50_us"] <= d["max_us"]
    assert d["tcp_nodelay"] is (transport == "tcp")


def test_raw_command_rejects_inproc(driver):
    rc, d = _zb(driver, "--lib", "x", "raw_thr", "--transport", "inproc",
                "--count", "10")
    assert rc == 2 and not d["ok"]


@needs_libzmq
def test_mem_idle_counts_every_handshake(driver):
    rc, d = _zb(driver, "--lib", str(SYSTEM_LIBZMQ), "--timeout", "60",
                "mem_idle", "--count", "40", timeout=120)
    assert rc == 0 and d["ok"], d
    assert d["handshakes"] == 40 == d["count"]
    assert d["rss_growth_kib"] == d["rss_after_kib"] - d["rss_before_kib"]
    assert d["kib_per_conn"] == pytest.approx(d["rss_growth_kib"] / 40,
                                              abs=1e-3)


@needs_libzmq
def test_mem_slowsub_reports_both_processes(driver):
    rc, d = _zb(driver, "--lib", str(SYSTEM_LIBZMQ), "--timeout", "60",
                "mem_slowsub", "--size", "64", "--count", "2000", timeout=120)
    assert rc == 0 and d["ok"], d
    assert d["sndhwm"] == d["rcvhwm"] == 1000      # libzmq's default HWM
    assert d["probes_sent"] >= 1
    assert d["pub_rss_growth_kib"] == d["pub_rss_after_kib"] - d["pub_rss_before_kib"]
    assert d["sub_rss_growth_kib"] == d["sub_rss_after_kib"] - d["sub_rss_before_kib"]
    assert d["rss_growth_kib"] == d["pub_rss_growth_kib"] + d["sub_rss_growth_kib"]
