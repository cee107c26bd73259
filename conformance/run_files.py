"""Run pytest one target at a time, surviving hangs and crashes.

    run_files.py --pytest VENV/bin/pytest --rootdir SRC --junit-dir D --log-dir L \
                 --merged OUT.xml TARGET...

TARGETs are test files or node ids, relative to --rootdir (pyzmq's sdist tree, which holds
its pytest.ini); pytest runs from the current directory, which should NOT be the sdist tree
(tests that start `python -m zmq...` subprocesses would import the sdist's uncompiled zmq/).
Each target gets its own pytest process (so a segfault, an abort or a hang loses one test, not
the whole suite), with pytest-timeout per test (thread method: pyzmq's unittest-style tests
arm their own 60 s SIGALRM, which the signal method would fight with; on expiry it dumps every
thread's stack and exits the process). A watchdog also follows the zmq_origin plugin's
progress file: a test still running PER_TEST_TIMEOUT + 30 s after it started gets its native
stacks taken with gdb (if present), then SIGABRT (faulthandler dumps the Python stacks), then
SIGKILL. A test that timed out, hung or killed the interpreter is written to the junit as an
<error>, deselected, and the target is run again, up to --max-restarts times. Finally all junit
files are merged into one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path


def nodeid_to_junit(nodeid: str) -> tuple[str, str, str]:
    """(file, classname, name) as pytest's junitxml (xunit1) would write them."""
    parts = nodeid.split("::")
    file = parts[0]
    mod = file[:-3] if file.endswith(".py") else file
    names = [mod.replace("/", ".")] + parts[1:-1]
    return file, ".".join(names), parts[-1]


def read_progress(path: Path) -> tuple[str | None, float | None, set[str]]:
    """Return (nodeid of the test running now, its start time, finished nodeids)."""
    running, started, done = None, None, set()
    if not path.exists():
        return None, None, done
    for line in path.read_text(errors="replace").splitlines():
        try:
            ts, kind, nodeid = line.split(" ", 2)
        except ValueError:
            continue
        if kind == "START":
            running, started = nodeid, float(ts)
        elif kind == "END":
            done.add(nodeid)
            if nodeid == running:
                running, started = None, None
    return running, started, done


def native_stacks(pid: int) -> str:
    if not shutil.which("gdb"):
        return ""
    try:
        r = subprocess.run(
            ["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off",
             "-ex", "thread apply all bt 30"],
            capture_output=True, text=True, timeout=60,
        )
        return r.stdout[-20000:]
    except Exception as e:  # noqa: BLE001
        return f"(gdb failed: {e})"


def run_one(args, target: str, stem: str) -> tuple[Path | None, list[dict]]:
    """Run one target; return (junit path of the last complete run, synthetic errors)."""
    file = target.split("::")[0]
    junit_dir, log_dir = Path(args.junit_dir), Path(args.log_dir)
    deselect: list[str] = []
    synthetic: list[dict] = []
    for attempt in range(args.max_restarts + 1):
        suffix = f".{attempt}" if attempt else ""
        junit = junit_dir / f"{stem}{suffix}.xml"
        logf = log_dir / f"{stem}{suffix}.log"
        progress = log_dir / f"{stem}{suffix}.progress"
        progress.unlink(missing_ok=True)
        junit.unlink(missing_ok=True)
        root = Path(args.rootdir)
        cmd = [
            args.pytest, "-p", "no:cacheprovider", "-p", "zmq_origin", "-v", "-rfEs",
            "-c", str(root / "pytest.ini"), "--rootdir", str(root),
            f"--timeout={args.per_test_timeout}", "--timeout-method=thread",
            "-o", "junit_family=xunit1", f"--junitxml={junit}", str(root / target),
        ]
        for d in deselect:  # --deselect takes node ids as pytest prints them (rootdir-relative)
            cmd += ["--deselect", d]
        env = dict(os.environ, CONFORMANCE_PROGRESS=str(progress), PYTHONUNBUFFERED="1",
                   PYTHONFAULTHANDLER="1")
        t0 = time.time()
        with open(logf, "w") as out:
            out.write("$ " + " ".join(cmd) + "\n")
            out.flush()
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True)
            killed_for = None
            while p.poll() is None:
                time.sleep(1)
                running, started, _ = read_progress(progress)
                now = time.time()
                if running and started and now - started > args.per_test_timeout + 30:
                    killed_for = f"hung: no result {int(now - started)} s after it started " \
                                 f"(pytest-timeout {args.per_test_timeout} s did not interrupt it)"
                elif now - t0 > args.per_file_timeout:
                    killed_for = f"hung: test file exceeded {args.per_file_timeout} s"
                if killed_for:
                    stacks = native_stacks(p.pid)
                    out.write("\n===== run_files.py: " + killed_for + "\n")
                    if stacks:
                        out.write("===== native stacks (gdb):\n" + stacks + "\n")
                    out.flush()
                    try:
                        os.kill(p.pid, signal.SIGABRT)  # faulthandler dumps Python stacks
                        p.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        pass
                    except ProcessLookupError:
                        pass
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    p.wait()
                    break
        rc = p.returncode
        if rc == 3 and not killed_for:
            sys.exit(f"run_files.py: {file}: pytest exited 3 (zmq_origin check failed?), see {logf}")
        if killed_for is None and rc >= 0 and junit.exists():
            return junit, synthetic  # normal completion (pass or fail)
        # crashed or killed: blame the test that was running
        running, _, _ = read_progress(progress)
        text = logf.read_text(errors="replace")
        if killed_for is None:
            sig = -rc if rc < 0 else None
            if "+++++ Timeout +++++" in text:
                killed_for = (f"timeout: no result after {args.per_test_timeout} s "
                              "(pytest-timeout ended the process)")
            elif sig:
                killed_for = f"crashed: interpreter killed by signal {signal.Signals(sig).name}"
            else:
                killed_for = f"crashed: pytest exited {rc} without a junit report"
        # keep the head of the stack dumps (where it hung) and the end (faulthandler/gdb)
        tail = text[-6000:]
        for marker in ("+++++ Timeout +++++", "===== run_files.py:"):
            i = text.find(marker)
            if i >= 0 and i < len(text) - 6000:
                tail = text[i:i + 6000] + "\n[...]\n" + text[-3000:]
                break
        if not running:
            synthetic.append({"nodeid": f"{file}::<file>", "message": killed_for, "text": tail,
                              "log": str(logf)})
            return None, synthetic
        print(f"    {running}: {killed_for} (log {logf})", file=sys.stderr)
        synthetic.append({"nodeid": running, "message": killed_for, "text": tail, "log": str(logf)})
        deselect.append(running)
    return None, synthetic


def merge(junits: list[Path], synthetic: list[dict], out: Path) -> None:
    root = ET.Element("testsuites")
    for j in junits:
        tree = ET.parse(j)
        r = tree.getroot()
        suites = [r] if r.tag == "testsuite" else list(r.iter("testsuite"))
        for s in suites:
            root.append(s)
    if synthetic:
        suite = ET.SubElement(root, "testsuite", name="run_files.py: hung or crashed tests")
        for s in synthetic:
            file, classname, name = nodeid_to_junit(s["nodeid"])
            tc = ET.SubElement(suite, "testcase", classname=classname, name=name, file=file)
            err = ET.SubElement(tc, "error", message=s["message"])
            err.text = f"(log: {s['log']})\n" + s["text"]
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pytest", required=True)
    ap.add_argument("--rootdir", required=True, help="the tree holding pytest.ini and tests/")
    ap.add_argument("--junit-dir", required=True)
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--merged", required=True)
    ap.add_argument("--per-test-timeout", type=int, default=60)
    ap.add_argument("--per-file-timeout", type=int, default=600)
    ap.add_argument("--max-restarts", type=int, default=8)
    ap.add_argument("--targets-file", help="file with one target per line (added to TARGETs)")
    ap.add_argument("--repeat", type=int, default=1, help="run every target this many times")
    ap.add_argument("targets", nargs="*")
    args = ap.parse_args()
    Path(args.junit_dir).mkdir(parents=True, exist_ok=True)
    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    targets = list(args.targets)
    if args.targets_file:
        targets += [t.strip() for t in Path(args.targets_file).read_text().splitlines() if t.strip()]
    junits, synthetic = [], []
    t_all = time.time()
    runs = [(rep, f) for rep in range(args.repeat) for f in targets]
    for n, (rep, f) in enumerate(runs, 1):
        if "::" in f:  # a node id: a unique, file-system-safe stem
            stem = f"{n:04d}-" + "".join(c if c.isalnum() else "_" for c in f.split("/")[-1])[:100]
        else:
            stem = Path(f).stem + (f"-r{rep}" if args.repeat > 1 else "")
        t0 = time.time()
        j, syn = run_one(args, f, stem)
        if j:
            junits.append(j)
        synthetic += syn
        status = "ok" if j else "NO JUNIT"
        if j:
            r = ET.parse(j).getroot()
            s = r if r.tag == "testsuite" else r.find("testsuite")
            status = ", ".join(f"{k}={s.get(k)}" for k in ("tests", "failures", "errors", "skipped"))
        extra = f", {len(syn)} hung/crashed" if syn else ""
        print(f"  {f}: {status}{extra} ({time.time() - t0:.0f} s)", file=sys.stderr)
    merge(junits, synthetic, Path(args.merged))
    print(f"  total {time.time() - t_all:.0f} s -> {args.merged}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
