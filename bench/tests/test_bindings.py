"""Tests for workload C (bench/bindings.py) and workload D (zbench router_par).

No test asserts anything about wall-clock time or how fast a library is.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_run import run, SYSTEM_LIBZMQ, needs_libzmq  # noqa: E402

import bindings  # noqa: E402  (run.py put bench/ on sys.path)

FERROMQ = run.DEFAULT_FERROMQ
needs_both = pytest.mark.skipif(
    not SYSTEM_LIBZMQ.exists() or not FERROMQ.exists()
    or shutil.which("gcc") is None,
    reason="needs Debian's libzmq, ferromq's dist/ and gcc")


def both_libs():
    return [run.Lib("ferromq", str(FERROMQ)), run.Lib("libzmq", str(SYSTEM_LIBZMQ))]


# ---------------------------------------------------------------------------
# The RESULT line
# ---------------------------------------------------------------------------

def test_parse_result_takes_the_last_result_line_among_noise():
    out = ("perf: warming up\nRESULT {\"msg_per_s\": 1.0}\n"
           "some log line\n  RESULT {\"msg_per_s\": 1234.5}  \ntrailer\n")
    assert bindings.parse_result(out) == {"msg_per_s": 1234.5}
    assert bindings.result_value(bindings.parse_result(out), "thr") == 1234.5


def test_parse_result_latency_and_extra_fields():
    res = bindings.parse_result('RESULT {"latency_us": 42.25, "zmq": "4.3.5"}')
    assert bindings.result_value(res, "lat") == 42.25
    assert bindings.result_value(res, "thr") is None   # wrong metric


@pytest.mark.parametrize("out", [
    "", "no result here\n", "RESULT not json\n", "RESULT [1, 2]\n",
    "RESULT: {\"msg_per_s\": 5}\n",      # not the contract's spelling
    "result {\"msg_per_s\": 5}\n",
])
def test_parse_result_rejects_malformed_output(out):
    assert bindings.parse_result(out) is None


@pytest.mark.parametrize("value", [0, -3.0, "12", None, True, math.inf])
def test_result_value_rejects_non_positive_or_non_numbers(value):
    assert bindings.result_value({"msg_per_s": value}, "thr") is None


# ---------------------------------------------------------------------------
# Overhead against C, on synthetic numbers
# ---------------------------------------------------------------------------

def test_overhead_pct():
    assert bindings.overhead_pct(50.0, 100.0) == pytest.approx(-50.0)
    assert bindings.overhead_pct(150.0, 100.0) == pytest.approx(50.0)
    assert bindings.overhead_pct(None, 100.0) is None
    assert bindings.overhead_pct(1.0, None) is None
    assert bindings.overhead_pct(1.0, 0.0) is None


def _raw(lang, kind, size, lib, values):
    return [{"lang": lang, "kind": kind, "size": size, "lib": lib, "run": i + 1,
             "ok": v is not None, "value": v,
             "error": None if v is not None else "boom"}
            for i, v in enumerate(values)]


def synthetic_bindings():
    langs = [bindings.Lang("c", "C", "zmq.h", None, "", ["x"]),
             bindings.Lang("py", "Python", "pyzmq", None, "", ["x"]),
             bindings.Lang("native", "Rust", "native", None, "", ["x"],
                           only="ferromq"),
             bindings.Lang("gone", "Java", "jzmq", None, "", ["x"])]
    langs[3].avail = "toolchain missing: java not on PATH"
    raw = (_raw("c", "thr", 64, "ferromq", [1000.0, 1200.0, 1100.0])
           + _raw("c", "thr", 64, "libzmq", [2000.0, 2000.0, 2000.0])
           + _raw("py", "thr", 64, "ferromq", [550.0, 500.0, 600.0])
           + _raw("py", "thr", 64, "libzmq", [500.0, 500.0, None])
           + _raw("native", "thr", 64, "ferromq", [2200.0, 2200.0, 2200.0])
           + _raw("c", "lat", 64, "ferromq", [10.0, 10.0, 10.0])
           + _raw("c", "lat", 64, "libzmq", [20.0, 20.0, 20.0])
           + _raw("py", "lat", 64, "ferromq", [30.0, 30.0, 30.0])
           + _raw("py", "lat", 64, "libzmq", [30.0, 30.0, 30.0]))
    cells = bindings.summarize(run, raw, langs, ["ferromq", "libzmq"], [64])
    return {"mode": "quick", "runs": 3, "libs": ["ferromq", "libzmq"],
            "languages": [{"key": L.key, "name": L.name, "binding": L.binding,
                           "only": L.only, "command": L.argv,
                           "status": "ran" if L.avail is None else "not run",
                           "reason": L.avail} for L in langs],
            "cells": cells, "runs_raw": raw,
            "failed": [f"{c['lang']} {c['kind']} {c['size']}B {l}: {e}"
                       for c in cells for l, e in c["errors"].items()]}


def _c(b, lang, kind):
    return next(c for c in b["cells"] if c["lang"] == lang and c["kind"] == kind)


def test_summarize_computes_overhead_against_c_on_the_same_library():
    b = synthetic_bindings()
    py = _c(b, "py", "thr")
    assert py["stats"]["ferromq"]["median"] == 550.0
    assert py["vs_c"]["ferromq"] == pytest.approx(550 / 1100 * 100 - 100)
    assert py["vs_c"]["libzmq"] == pytest.approx(-75.0)     # 500 vs 2000
    assert _c(b, "c", "thr")["vs_c"] == {"ferromq": 0.0, "libzmq": 0.0}
    assert _c(b, "py", "lat")["vs_c"]["ferromq"] == pytest.approx(200.0)
    assert _c(b, "py", "lat")["vs_c"]["libzmq"] == pytest.approx(50.0)
    native = _c(b, "native", "thr")
    assert native["vs_c"]["ferromq"] == pytest.approx(100.0)
    assert native["stats"]["libzmq"] is None and native["vs_c"]["libzmq"] is None
    # a failed run is recorded and named, the others still give a median
    assert py["stats"]["libzmq"]["n"] == 2 and "libzmq" in py["errors"]
    assert b["failed"] == ["py thr 64B libzmq: boom"]


def test_markdown_tables_have_the_requested_shape_and_name_what_did_not_run():
    md = bindings.render_markdown(run, synthetic_bindings())
    head = ("| Language | Binding | Transport | Size | ferromq | libzmq | "
            "ferromq vs C | libzmq vs C |")
    assert md.count(head) == 2   # throughput and latency
    assert "| Python | pyzmq | TCP | 64B | 550/s | 500/s | -50.0% | -75.0% |" in md
    assert "| C | zmq.h | TCP | 64B | 1.1K/s | 2.0K/s | (baseline) | (baseline) |" in md
    assert "| Rust | native | TCP | 64B | 2.2K/s | n/a | +100.0% | — |" in md
    assert "- Java — jzmq: toolchain missing: java not on PATH" in md
    assert "py thr 64B libzmq: boom" in md


def test_overhead_svg_has_one_series_per_language_and_library():
    svgs = bindings.render_svgs(run, synthetic_bindings())
    assert set(svgs) == {"bindings_thr.svg", "bindings_lat.svg"}
    root = ET.fromstring(svgs["bindings_thr.svg"])
    names = [g.get("data-name") for g in root.iter("{http://www.w3.org/2000/svg}g")]
    assert names == ["Python pyzmq / ferromq", "Python pyzmq / libzmq",
                     "Rust native / ferromq"]


def test_prepare_reports_missing_toolchains_and_drivers_as_not_run(tmp_path):
    langs = [bindings.Lang("x", "X", "x", None, "", ["x"],
                           needs=["definitely-not-a-tool-zz"]),
             bindings.Lang("j", "Java", "j", None, "",
                           ["bash", str(bindings.REPO_DIR / "no" / "perf.sh")]),
             bindings.Lang("e", "Slow", "e", "c", "c",
                           [str(tmp_path / "never-built")], expensive=True)]
    bindings.prepare(langs, quick=True, log=lambda m: None)
    assert "definitely-not-a-tool-zz not on PATH" in langs[0].avail
    assert "no/perf.sh missing" in langs[1].avail
    assert "skipped in quick mode" in langs[2].avail


def test_counts_scale_and_have_a_floor():
    assert bindings.counts("full", "thr", 64) == 1_000_000
    # Workload C is A written per language: the same message counts.
    for size in bindings.SIZES_FULL:
        assert bindings.counts("full", "thr", size) == run.thr_count(size, quick=False)
        assert bindings.counts("full", "lat", size) == run.lat_count(size, quick=False)
    assert bindings.counts("quick", "thr", 64) < bindings.counts("full", "thr", 64)
    assert bindings.counts("quick", "lat", 1500, 0.0001) == bindings.MIN_COUNT


def test_lib_dir_holds_only_a_libzmq_so_5_symlink(tmp_path):
    lib = tmp_path / "real" / "libzmq.so.5.2.4"
    lib.parent.mkdir()
    lib.write_text("")
    d = bindings.lib_dir("x", str(lib), root=tmp_path / "dirs")
    assert [p.name for p in d.iterdir()] == ["libzmq.so.5"]
    assert os.path.realpath(d / "libzmq.so.5") == str(lib)


# ---------------------------------------------------------------------------
# Real runs, tiny counts
# ---------------------------------------------------------------------------

@needs_both
def test_c_binding_matrix_produces_a_number_in_every_cell():
    b = bindings.run_workload(run, both_libs(), quick=True, runs=1, scale=0.01,
                              only_langs=["c"], progress=False)
    assert [L["status"] for L in b["languages"]] == ["ran"]
    cells = b["cells"]
    assert {(c["kind"], c["size"]) for c in cells} == {
        (k, s) for k in ("thr", "lat") for s in bindings.SIZES_QUICK}
    for c in cells:
        for lab in ("ferromq", "libzmq"):
            st = c["stats"][lab]
            assert st and st["median"] > 0, (c["kind"], c["size"], lab, c["errors"])
            assert c["vs_c"][lab] == 0.0
    assert b["failed"] == []
    # the library each run loaded is the one it was meant to load
    for rec in b["runs_raw"]:
        want = os.path.realpath(str(FERROMQ if rec["lib"] == "ferromq"
                                    else SYSTEM_LIBZMQ))
        assert rec["loaded"] == [want]


@needs_both
@pytest.mark.parametrize("label", ["ferromq", "libzmq"])
def test_workload_d_produces_a_number(label):
    lib = next(l for l in both_libs() if l.label == label)
    driver = run.build_driver()
    cell = run.Cell("D", "thr", "router_par", "tcp", 64, 200, "0", 1,
                    iterations=2)
    rec = run.run_cell_once(driver, lib, cell, 60)
    assert rec["ok"], rec.get("error")
    res = rec["result"]
    assert res["cmd"] == "router_par" and res["frames"] == 2
    assert len(res["iter_msg_per_s"]) == 2 and len(res["warmup_msg_per_s"]) == 1
    assert rec["value"] == res["msg_per_s"] > 0


def test_workload_d_cells_in_the_plan():
    quick = [c for c in run.build_plan(True) if c.workload == "D"]
    assert {c.size for c in quick} == {64, 1500, 65536}
    assert {c.hwm for c in quick} == {"0"} and quick[0].iterations >= 1
    full = [c for c in run.build_plan(False) if c.workload == "D"]
    assert {c.hwm for c in full} == {"default", "0"}
    assert all(c.count == 10_000 for c in full)


@needs_libzmq
def test_router_par_rejects_a_missing_count(tmp_path):
    driver = run.build_driver()
    r = subprocess.run([str(driver), "--lib", str(SYSTEM_LIBZMQ), "router_par"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert json.loads(r.stdout.strip().splitlines()[-1])["ok"] is False
