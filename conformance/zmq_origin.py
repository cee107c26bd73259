"""Which libzmq is pyzmq really running on?

Two uses:
  * script:  python zmq_origin.py --expect SUBSTRING [--json OUT]
             imports zmq, prints zmq/pyzmq versions, the backend module and every libzmq
             mapped into the process (from /proc/self/maps); exits 1 unless exactly one
             libzmq is mapped and its path contains SUBSTRING and zmq_version() == 4.3.5.
  * pytest plugin (``-p zmq_origin`` with this directory on PYTHONPATH): same check at
             session start, against $CONFORMANCE_EXPECT_LIBZMQ; aborts the run on a mismatch,
             and prints the result in pytest's header. With $CONFORMANCE_PROGRESS set, it also
             appends "START nodeid" / "END nodeid" lines there (fsync'd), so run_files.py can
             tell which test hung or crashed the interpreter.
"""

from __future__ import annotations

import json
import os
import sys

EXPECTED_VERSION = "4.3.5"


def mapped_libzmq() -> list[str]:
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and "libzmq" in os.path.basename(parts[5].strip()):
                paths.add(parts[5].strip())
    return sorted(paths)


def origin() -> dict:
    import zmq
    import zmq.backend

    backend = zmq.backend.Socket.__module__
    ext = sys.modules.get("zmq.backend.cython._zmq")
    return {
        "python": sys.version.split()[0],
        "pyzmq": zmq.pyzmq_version(),
        "pyzmq_file": zmq.__file__,
        "zmq_version": zmq.zmq_version(),
        "backend": backend,
        "backend_file": getattr(ext, "__file__", None),
        "libzmq_mapped": mapped_libzmq(),
        "has": {f: bool(zmq.has(f)) for f in ("ipc", "pgm", "tipc", "norm", "curve", "gssapi", "draft")},
    }


def check(info: dict, expect: str) -> list[str]:
    problems = []
    if info["zmq_version"] != EXPECTED_VERSION:
        problems.append(f"zmq_version() is {info['zmq_version']}, expected {EXPECTED_VERSION}")
    libs = info["libzmq_mapped"]
    if len(libs) != 1:
        problems.append(f"expected exactly one libzmq mapped, found {libs}")
    elif expect not in libs[0]:
        problems.append(f"libzmq mapped from {libs[0]}, expected a path containing {expect!r}")
    if "site-packages" not in (info["pyzmq_file"] or ""):
        problems.append(f"zmq imported from {info['pyzmq_file']}, not from the venv")
    return problems


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--expect", required=True)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    info = origin()
    problems = check(info, a.expect)
    info["problems"] = problems
    print(json.dumps(info, indent=2))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(info, f, indent=2)
    for p in problems:
        print("zmq_origin: " + p, file=sys.stderr)
    return 1 if problems else 0


# ------------------------------------------------------------------ pytest plugin
_INFO: dict | None = None


def pytest_configure(config):
    global _INFO
    expect = os.environ.get("CONFORMANCE_EXPECT_LIBZMQ")
    if not expect:
        return
    _INFO = origin()
    problems = check(_INFO, expect)
    if problems:
        import pytest

        pytest.exit("zmq_origin: " + "; ".join(problems), returncode=3)


def pytest_report_header(config):
    if _INFO is None:
        return None
    return [
        f"zmq_origin: pyzmq {_INFO['pyzmq']} from {_INFO['pyzmq_file']}",
        f"zmq_origin: libzmq {_INFO['zmq_version']} mapped from {_INFO['libzmq_mapped']}",
        f"zmq_origin: has {_INFO['has']}",
    ]


def _progress(line: str) -> None:
    path = os.environ.get("CONFORMANCE_PROGRESS")
    if not path:
        return
    import time

    with open(path, "a") as f:
        f.write(f"{time.time():.3f} {line}\n")
        f.flush()
        os.fsync(f.fileno())


def pytest_runtest_logstart(nodeid, location):
    _progress(f"START {nodeid}")


def pytest_runtest_logfinish(nodeid, location):
    _progress(f"END {nodeid}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
