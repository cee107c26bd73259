"""Tests for bench/run.py and the zbench driver (pytest; stdlib otherwise).

    python3 -m pytest -q bench/tests

No test asserts anything about wall-clock time or how fast a library is.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1]
RUN_PY = BENCH / "run.py"
SYSTEM_LIBZMQ = Path("/usr/lib/x86_64-linux-gnu/libzmq.so.5")


def _load_run():
    spec = importlib.util.spec_from_file_location("bench_run", RUN_PY)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = mod
    spec.loader.exec_module(mod)
    return mod


run = _load_run()

needs_libzmq = pytest.mark.skipif(
    not SYSTEM_LIBZMQ.exists() or shutil.which(os.environ.get("CC", "gcc")) is None,
    reason="needs Debian's libzmq (libzmq3-dev) and a C compiler")


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------

def test_summarize_odd_count():
    s = run.summarize([3, 1, 100, 2, 4])
    assert s.n == 5
    assert s.median == 3
    assert s.min == 1 and s.max == 100
    assert s.mean == pytest.approx(22.0)
    # sample stdev: sqrt((441 + 400 + 361 + 324 + 6084) / 4) = sqrt(1902.5)
    assert s.cv == pytest.approx(math.sqrt(1902.5) / 22.0)
    assert s.noisy is True


def test_summarize_even_count_median_is_midpoint():
    s = run.summarize([10.0, 20.0, 40.0, 30.0])
    assert s.median == 25.0
    assert s.cv == pytest.approx(statistics.stdev([10, 20, 30, 40]) / 25.0)


def test_summarize_single_value_has_no_cv_and_is_not_noisy():
    s = run.summarize([5.0])
    assert (s.n, s.median, s.min, s.max) == (1, 5.0, 5.0, 5.0)
    assert s.cv is None
    assert s.noisy is False


def test_summarize_empty_is_none():
    assert run.summarize([]) is None


def test_noisy_threshold_is_ten_percent_and_strict():
    quiet = run.summarize([100, 110])      # cv = 7.07 / 105 = 6.7 %
    loud = run.summarize([100, 130])       # cv = 21.2 / 115 = 18.4 %
    assert run.NOISY_CV == 0.10
    assert quiet.cv == pytest.approx(0.067343, rel=1e-4) and not quiet.noisy
    assert loud.cv == pytest.approx(0.184453, rel=1e-4) and loud.noisy
    cv = statistics.stdev([90, 110]) / 100
    assert not run.summarize([90, 110], noisy_cv=cv).noisy   # at: not above
    assert run.summarize([90, 110], noisy_cv=cv - 1e-9).noisy


def test_diff_pct():
    assert run.diff_pct(110, 100) == pytest.approx(10.0)
    assert run.diff_pct(90, 100) == pytest.approx(-10.0)
    assert run.diff_pct(100, 100) == 0.0
    assert run.diff_pct(None, 100) is None
    assert run.diff_pct(100, None) is None
    assert run.diff_pct(100, 0) is None


def test_formatters():
    assert run.fmt_rate(4.81e6) == "4.81M/s"
    assert run.fmt_rate(864_000) == "864K/s"
    assert run.fmt_rate(26_512) == "26.5K/s"
    assert run.fmt_rate(None) == "—"
    assert run.fmt_pct(4.1) == "+4.1%"
    assert run.fmt_pct(-0.6) == "-0.6%"
    assert run.fmt_us(12.3456) == "12.35 µs"
    assert run.fmt_size(64) == "64B" and run.fmt_size(65536) == "64KB"
    assert run.fmt_size(1500) == "1500B"


# ---------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------

def test_quick_plan_covers_the_reduced_matrix():
    plan = run.build_plan(quick=True)
    ids = {c.id for c in plan}
    for p in run.PATTERNS:
        for t in run.TRANSPORTS:
            for s in (64, 1024, 65536):
                assert f"B/thr/{p}/{t}/{s}/hwm0" in ids
    for t in run.TRANSPORTS:
        for s in (64, 1024, 65536):
            assert f"B/lat/reqrep/{t}/{s}" in ids
    for s in (64, 1500):
        assert f"A/thr/pushpull/tcp/{s}/hwmdefault" in ids
        assert f"A/lat/reqrep/tcp/{s}" in ids
    assert sum(c.null for c in plan) == 2
    assert len(ids) == len(plan)  # ids are unique


def test_quick_counts_are_about_10x_smaller_than_full():
    for s in run.FULL_SIZES:
        full, quick = run.thr_count(s, False), run.thr_count(s, True)
        assert quick == max(run.QUICK_THR_MIN, full // 10)
    assert run.thr_count(64, True) == 100_000
    assert run.lat_count(64, True) == 2000
    assert run.thr_count(65536, True) == 1000   # floor against drain artefacts
    assert run.thr_count(64, False) == 1_000_000
    assert run.thr_count(262144, False) == 2000
    assert run.thr_count(1024, False) * 1024 == 1 << 28


def test_full_plan_has_all_sizes_and_both_hwm_settings():
    plan = run.build_plan(quick=False)
    ids = {c.id for c in plan}
    for s in run.FULL_SIZES:
        assert f"B/thr/router_router_poll/ipc/{s}/hwm0" in ids
        assert f"B/thr/pubsub/inproc/{s}/hwmdefault" in ids
        assert f"B/lat/reqrep/tcp/{s}" in ids
    for s in (64, 1500, 65536):
        assert f"A/thr/pushpull/ipc/{s}/hwmdefault" in ids


def test_only_filter():
    plan = run.build_plan(quick=True, only=r"^B/thr/router_router/")
    assert plan and all(c.pattern == "router_router" for c in plan)


# ---------------------------------------------------------------------------
# Synthetic results -> summaries -> markdown / JSON / SVG
# ---------------------------------------------------------------------------

def _thr_result(v, size, drain=0.01):
    return {"ok": True, "msg_per_s": v, "mbit_per_s": v * size * 8 / 1e6,
            "e2e_msg_per_s": v * 0.9, "drain_fraction": drain}


def _lat_result(mean):
    return {"ok": True, "mean_us": mean, "p50_us": mean * 0.9,
            "p90_us": mean * 1.1, "p99_us": mean * 2, "p999_us": mean * 3,
            "max_us": mean * 10, "min_us": mean * 0.5}


def _rec(cell, lib, run_no, value, result):
    return {"cell": cell.id, "lib": lib, "path": "/x/" + lib, "run": run_no,
            "ok": value is not None, "value": value, "result": result,
            "error": None if value is not None else "boom: zmq_bind failed"}


def synthetic_report():
    C = run.Cell
    plan = [
        C("B", "thr", "pushpull", "tcp", 64, 1000, "0"),
        C("B", "thr", "pushpull", "tcp", 1024, 1000, "0"),
        C("B", "thr", "pushpull", "inproc", 64, 1000, "0"),
        C("B", "thr", "pair", "tcp", 64, 1000, "0"),          # fails for ferromq
        C("B", "lat", "reqrep", "tcp", 64, 500, "default", 10),
        C("A", "thr", "pushpull", "tcp", 64, 1000, "default"),
        C("B", "thr", "pushpull", "tcp", 64, 1000, "0", null=True),
    ]
    # ferromq: 2M/s (quiet); libzmq 1M/s (noisy at 1024)
    raw = []
    series = {
        plan[0].id: ([2.0e6, 2.1e6, 1.9e6], [1.0e6, 1.0e6, 1.0e6]),
        plan[1].id: ([5.0e5, 5.0e5, 5.0e5], [4.0e5, 6.0e5, 5.0e5]),
        plan[2].id: ([8.0e6, 8.0e6, 8.0e6], [4.0e6, 4.0e6, 4.0e6]),
        plan[3].id: ([None, 1.0e6, 1.0e6], [1.0e6, 1.0e6, 1.0e6]),
        plan[5].id: ([3.0e6, 3.0e6, 3.0e6], [3.0e6, 3.0e6, 3.0e6]),
    }
    for cell in plan:
        for r in range(3):
            if cell.null:
                for lib, v in (("libzmq#1", 1.0e6), ("libzmq#2", 1.0e6)):
                    raw.append(_rec(cell, lib, r + 1, v, _thr_result(v, 64)))
                continue
            for lib, idx in (("ferromq", 0), ("libzmq", 1)):
                if cell.kind == "lat":
                    v = (10.0, 20.0)[idx]
                    raw.append(_rec(cell, lib, r + 1, v, _lat_result(v)))
                else:
                    v = series[cell.id][idx][r]
                    # ferromq's inproc 64 B run 2 drained a pre-filled queue
                    drain = 0.9 if (cell is plan[2] and lib == "ferromq"
                                    and r == 1) else 0.01
                    raw.append(_rec(cell, lib, r + 1, v,
                                    _thr_result(v, cell.size, drain) if v else
                                    {"ok": False, "error": "boom"}))
    cells = run.summarize_cells(plan, raw, ["ferromq", "libzmq"], "libzmq")
    return {
        "suite": "ferromq bench",
        "host": {"cpu_model": "Test CPU", "cores": 2, "kernel": "6.0-test",
                 "os": "TestOS", "date": "2030-01-01T00:00:00+00:00",
                 "loadavg_start": [0.1, 0.2, 0.3]},
        "libs": [{"label": "ferromq", "path": "/x/ferromq", "version": "4.3.5",
                  "realpath": "/x/ferromq", "sha256": "ab" * 32, "size_bytes": 1},
                 {"label": "libzmq", "path": "/x/libzmq", "version": "4.3.4",
                  "realpath": "/x/libzmq", "sha256": "cd" * 32, "size_bytes": 1}],
        "baseline": "libzmq",
        "config": {"mode": "quick", "runs": 3, "null_runs": 3},
        "warnings": [],
        "failed_cells": [c["id"] for c in cells if not c["ok"]],
        "cells": cells,
        "runs": raw,
    }, plan


def _cell(report, cid):
    return next(c for c in report["cells"] if c["id"] == cid)


def test_summarize_cells_medians_diffs_and_failures():
    report, plan = synthetic_report()
    c = _cell(report, plan[0].id)
    assert c["stats"]["ferromq"]["median"] == 2.0e6
    assert c["stats"]["libzmq"]["median"] == 1.0e6
    assert c["diff_pct"]["ferromq"] == pytest.approx(100.0)
    assert c["stats"]["libzmq"]["cv"] == 0.0 and c["ok"]
    noisy = _cell(report, plan[1].id)
    assert noisy["stats"]["libzmq"]["noisy"] is True     # cv 20 %
    assert noisy["stats"]["ferromq"]["noisy"] is False
    assert noisy["diff_pct"]["ferromq"] == pytest.approx(0.0)
    failed = _cell(report, plan[3].id)
    assert failed["ok"] is False
    assert any("ferromq run 1" in e for e in failed["errors"])
    assert failed["stats"]["ferromq"]["n"] == 2   # the two good runs
    lat = _cell(report, plan[4].id)
    assert lat["better"] == "lower"
    assert lat["diff_pct"]["ferromq"] == pytest.approx(-50.0)
    assert lat["stats"]["ferromq"]["extra"]["p999_us"] == pytest.approx(30.0)
    null = _cell(report, plan[6].id)
    assert null["labels"] == ["libzmq#1", "libzmq#2"]
    assert null["diff_pct"]["libzmq#1"] == pytest.approx(0.0)
    assert report["failed_cells"] == [plan[3].id]
    drained = _cell(report, plan[2].id)["stats"]
    assert drained["ferromq"]["drained"] is True
    assert drained["ferromq"]["extra"]["max_drain_fraction"] == 0.9
    assert drained["libzmq"]["drained"] is False
    assert c["stats"]["ferromq"]["extra"]["e2e_msg_per_s"] == pytest.approx(1.8e6)


def test_markdown_tables_have_the_seed_shape_and_the_numbers():
    report, plan = synthetic_report()
    md = run.render_markdown(report)
    assert "### PUSH/PULL" in md and "### PAIR" in md
    headers = [l for l in md.splitlines()
               if l.startswith("| Transport | Size | ferromq | libzmq | Diff |")]
    assert len(headers) >= 4   # pushpull, pair, B latency, A throughput
    lines = md.splitlines()
    row = next(l for l in lines if l.startswith("| TCP | 64B | 2.00M/s |"))
    cols = [x.strip() for x in row.strip("|").split("|")]
    assert cols[:5] == ["TCP", "64B", "2.00M/s", "1.00M/s", "+100.0%"]
    assert cols[5] == "1.90M/s–2.10M/s"
    assert cols[6] == "5.0%"                       # ferromq CV
    assert cols[8] == "0.0%"                       # libzmq CV
    noisy_row = next(l for l in lines if l.startswith("| TCP | 1KB | 500K/s |"))
    assert "⚠noisy" in noisy_row and "+0.0%" in noisy_row
    assert "| inproc | 64B | 8.00M/s ‡ | 4.00M/s | +100.0% |" in md
    assert "## ‡ Drain warnings" in md
    assert f"`{plan[2].id}` (ferromq)" in md and "(libzmq)" not in md
    lat_row = next(l for l in lines if l.startswith("| TCP | 64B | 10.00 µs |"))
    assert "| 20.00 µs | -50.0% |" in lat_row
    # percentile table: mean, p50, p99, p99.9, max of ferromq
    assert ("| TCP | 64B | ferromq | 10.00 µs | 9.00 µs | 20.00 µs | "
            "30.00 µs | 100.0 µs |") in md
    assert "## Null test" in md and "libzmq#1" in md
    assert "## Failures" in md and f"`{plan[3].id}`" in md
    assert "Test CPU" in md and "4.3.5" in md and "4.3.4" in md


def test_markdown_without_a_candidate_has_no_diff_column():
    report, _ = synthetic_report()
    report["libs"] = report["libs"][1:]
    for c in report["cells"]:
        if not c["null"]:
            c["labels"] = ["libzmq"]
            c["stats"] = {"libzmq": c["stats"]["libzmq"]}
            c["diff_pct"] = {}
    md = run.render_markdown(report)
    assert "| Transport | Size | libzmq | libzmq min–max | libzmq CV |" in md
    assert "Only one library measured" in md


def test_json_output_keeps_every_raw_run_and_rerenders(tmp_path):
    report, plan = synthetic_report()
    written = run.write_outputs(report, tmp_path)
    names = {p.name for p in written}
    assert {"results.json", "results.md"} <= names
    data = json.loads((tmp_path / "results.json").read_text())
    assert len(data["runs"]) == len(report["runs"])
    assert {r["cell"] for r in data["runs"]} == {c.id for c in plan}
    assert data["host"]["cpu_model"] == "Test CPU"
    assert [l["version"] for l in data["libs"]] == ["4.3.5", "4.3.4"]
    assert data["failed_cells"] == [plan[3].id]
    # The markdown is a pure function of the JSON.
    assert run.render_markdown(data) == (tmp_path / "results.md").read_text()


def test_published_results_name_repository_paths_relative_to_its_root(tmp_path):
    report, _ = synthetic_report()
    report["libs"][0]["path"] = str(run.REPO_DIR / "dist" / "lib" / "libzmq.so.5")
    report["config"]["argv"] = [str(run.REPO_DIR / "bench" / "run.py"), "--full"]
    run.write_outputs(report, tmp_path)
    text = (tmp_path / "results.json").read_text() + (tmp_path / "results.md").read_text()
    assert str(run.REPO_DIR) not in text
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["libs"][0]["path"] == "dist/lib/libzmq.so.5"
    assert data["config"]["argv"] == ["bench/run.py", "--full"]


def test_svg_throughput_plot_has_one_series_per_library_and_transport(tmp_path):
    report, plan = synthetic_report()
    svgs = run.render_svgs(report)
    assert "thr_B_pushpull_hwm0.svg" in svgs
    assert "thr_B_pair_hwm0.svg" in svgs
    assert "lat_B_tcp.svg" in svgs
    assert not any("null" in n for n in svgs)
    root = ET.fromstring(svgs["thr_B_pushpull_hwm0.svg"])
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    groups = root.findall(".//s:g[@class='series']", ns)
    names = sorted(g.get("data-name") for g in groups)
    assert names == ["ferromq TCP", "ferromq inproc", "libzmq TCP",
                     "libzmq inproc"]
    tcp = next(g for g in groups if g.get("data-name") == "libzmq TCP")
    assert len(tcp.findall("s:circle", ns)) == 2          # 64 B and 1 KB
    assert len(tcp.findall("s:polyline", ns)) == 1
    # libzmq 1 KB ran 400K..600K: one min-max whisker; 64 B had none.
    assert len(tcp.findall("s:line[@class='whisker']", ns)) == 1
    texts = "".join(root.itertext())
    assert "PUSH/PULL throughput" in texts and "64B" in texts and "1KB" in texts
    lat = ET.fromstring(svgs["lat_B_tcp.svg"])
    lat_names = {g.get("data-name") for g in lat.findall(".//s:g[@class='series']", ns)}
    assert {"ferromq p50", "ferromq p99", "ferromq p99.9", "libzmq max"} <= lat_names
    run.write_outputs(report, tmp_path)
    for name in svgs:
        ET.parse(tmp_path / name)   # well-formed files on disk


def test_svg_y_axis_is_logarithmic():
    s = run.svg_line_chart("t", [{"name": "a", "color": "#000", "dash": "",
                                  "points": [(64, 10.0), (128, 1000.0)]}],
                           "x", "y")
    root = ET.fromstring(s)
    ns = {"s": "http://www.w3.org/2000/svg"}
    cy = [float(c.get("cy")) for c in root.findall(".//s:circle", ns)]
    ticks = {t.text: float(t.get("y")) for t in root.findall("s:text", ns)
             if t.text in ("10", "100", "1K")}
    assert set(ticks) == {"10", "100", "1K"}
    # equal ratios are equal distances on a log axis
    assert ticks["10"] - ticks["100"] == pytest.approx(ticks["100"] - ticks["1K"],
                                                       abs=0.2)
    assert cy[0] > cy[1]


# ---------------------------------------------------------------------------
# The driver and the runner against Debian's libzmq
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if not SYSTEM_LIBZMQ.exists():
        pytest.skip("no Debian libzmq")
    return run.build_driver(tmp_path_factory.mktemp("drv") / "zbench",
                            force=True)


@needs_libzmq
def test_driver_reports_the_loaded_library_version(driver):
    r = subprocess.run([str(driver), "--lib", str(SYSTEM_LIBZMQ), "version"],
                       capture_output=True, text=True)
    assert r.returncode == 0
    d = json.loads(r.stdout)
    assert d["ok"] and d["version"].startswith("4.")


@needs_libzmq
def test_driver_is_not_linked_against_libzmq(driver):
    r = subprocess.run(["ldd", str(driver)], capture_output=True, text=True)
    assert "libzmq" not in r.stdout


@needs_libzmq
def test_driver_errors_are_json_and_nonzero(driver, tmp_path):
    r = subprocess.run([str(driver), "--lib", str(tmp_path / "nope.so"),
                        "version"], capture_output=True, text=True)
    assert r.returncode == 2
    d = json.loads(r.stdout)
    assert d["ok"] is False and "dlopen" in d["error"]
    r = subprocess.run([str(driver), "--lib", str(SYSTEM_LIBZMQ), "local_thr",
                        "--endpoint", "tcp://192.0.2.1:1", "--count", "10"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "zmq_bind" in json.loads(r.stdout)["error"]


@needs_libzmq
def test_driver_watchdog_fails_a_hung_cell(driver):
    # local_thr with no sender never gets a message: the watchdog must fire.
    r = subprocess.run([str(driver), "--lib", str(SYSTEM_LIBZMQ), "--timeout",
                        "1", "local_thr", "--endpoint",
                        f"tcp://127.0.0.1:{run.free_tcp_port()}", "--count",
                        "10"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 124
    assert "watchdog" in json.loads(r.stdout)["error"]


@needs_libzmq
@pytest.mark.parametrize("pattern", run.PATTERNS)
def test_driver_thr_delivers_every_message_with_finite_hwm(driver, pattern):
    # HWM 10 forces PUB (NODROP) and ROUTER (MANDATORY) to block, not drop.
    r = subprocess.run([str(driver), "--lib", str(SYSTEM_LIBZMQ), "--timeout",
                        "60", "thr", "--pattern", pattern, "--transport", "ipc",
                        "--size", "100", "--count", "3000", "--hwm", "10"],
                       capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["ok"] and d["count"] == 3000 and d["msg_per_s"] > 0
    assert d["sndhwm"] == 10 and d["rcvhwm"] == 10
    assert d["e2e_msg_per_s"] > 0 and 0 <= d["drain_fraction"] <= 1


@needs_libzmq
def test_end_to_end_quick_matrix_libzmq_under_both_labels(driver, tmp_path):
    out = tmp_path / "out"
    lib = str(SYSTEM_LIBZMQ)
    env = dict(os.environ)
    env.pop("CI", None)
    r = subprocess.run(
        [sys.executable, str(RUN_PY), "--lib", f"ferromq={lib}",
         "--lib", f"libzmq={lib}", "--count-scale", "0.1", "--driver",
         str(driver), "--out", str(out), "--timeout", "60",
         "--workloads", "A,B,D"],   # C has its own tests (test_bindings.py)
        capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    expected = {c.id for c in run.build_plan(quick=True, scale=0.1)}
    assert {c["id"] for c in data["cells"]} == expected
    for c in data["cells"]:
        assert c["ok"], (c["id"], c["errors"])
        for label in c["labels"]:
            st = c["stats"][label]
            assert st and st["median"] > 0 and st["n"] >= 1, (c["id"], label)
    assert data["runs"] and all(rec["ok"] and rec["value"] > 0
                                for rec in data["runs"])
    assert data["failed_cells"] == []
    assert {l["label"] for l in data["libs"]} == {"ferromq", "libzmq"}
    assert all(l["version"].startswith("4.") for l in data["libs"])
    assert data["host"]["cores"] >= 1 and data["host"]["kernel"]
    md = (out / "results.md").read_text()
    assert md in r.stdout   # tables printed to stdout as well
    assert "| Transport | Size | ferromq | libzmq | Diff |" in md
    svgs = list(out.glob("*.svg"))
    assert len(svgs) >= len(run.PATTERNS) + 1
    for p in svgs:
        ET.parse(p)
    assert "cell " in r.stderr and "ETA" in r.stderr   # progress lines


def test_runner_exits_nonzero_and_names_a_failed_cell(monkeypatch, tmp_path,
                                                      capsys):
    fake_driver = tmp_path / "zbench"
    fake_driver.write_text("not really a driver")
    fake_lib = tmp_path / "libfake.so.5"
    fake_lib.write_text("")
    monkeypatch.setattr(run, "probe_lib", lambda drv, lib: lib)

    def fake_run(driver, lib, cell, timeout):
        if cell.id == "B/thr/pair/tcp/64/hwm0" and lib.label == "a":
            return {"ok": False, "value": None, "error": "zmq_bind failed",
                    "rc": 1, "result": None}
        return {"ok": True, "value": 123.0, "rc": 0,
                "result": {"ok": True, "msg_per_s": 123.0, "mean_us": 123.0}}

    monkeypatch.setattr(run, "run_cell_once", fake_run)
    rc = run.main(["--lib", f"a={fake_lib}", "--lib", f"libzmq={fake_lib}",
                   "--driver", str(fake_driver), "--out", str(tmp_path / "o"),
                   "--only", "^B/thr/pair/tcp/", "--no-plots",
                   "--workloads", "A,B"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "B/thr/pair/tcp/64/hwm0" in err and "zmq_bind failed" in err
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert data["failed_cells"] == ["B/thr/pair/tcp/64/hwm0"]


def test_runner_setup_errors_exit_2(tmp_path, capsys):
    assert run.main(["--lib", f"x={tmp_path / 'missing.so'}",
                     "--out", str(tmp_path / "o")]) == 2
    assert run.main(["--lib", "no-equals-sign"]) == 2
    assert run.main(["--patterns", "bogus"]) == 2


def test_missing_ferromq_is_reported_loudly(monkeypatch, tmp_path):
    monkeypatch.setattr(run, "DEFAULT_FERROMQ", tmp_path / "dist/lib/libzmq.so.5")
    fake = tmp_path / "libzmq.so.5"
    fake.write_text("")
    monkeypatch.setattr(run, "DEFAULT_LIBZMQ", fake)
    warnings = []
    libs = run.default_libs(warnings)
    assert [l.label for l in libs] == ["libzmq"]
    assert len(warnings) == 1 and "ferromq NOT FOUND" in warnings[0]
    assert "libzmq ONLY" in warnings[0]
