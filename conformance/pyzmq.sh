#!/usr/bin/env bash
# pyzmq conformance: run pyzmq's own test suite against ferromq (pyzmq built from its
# sdist against dist/) and against real libzmq (pyzmq's stock wheel, which bundles
# libzmq 4.3.5), then compare.
#
#   bash conformance/pyzmq.sh            -> build/conformance/pyzmq-report.md
#
# Environment knobs (all optional):
#   PYZMQ_VERSION     pyzmq release to test (default below)
#   PYTHON            interpreter for the venvs (default: python3)
#   CONFORMANCE_DIR   scratch dir (default: build/conformance)
#   SKIP_DIST=1       don't run `make dist` first
#   FORCE_REBUILD=1   rebuild pyzmq from source even if dist/include/zmq.h is unchanged
#   ONLY=ferromq|libzmq   run only one side (the report then reuses the other's old XML)
#   TEST_FILES="tests/test_socket.py ..."   subset of pyzmq's tests (default: all)
#   PER_TEST_TIMEOUT  pytest-timeout seconds per test (default 90: pyzmq's unittest-style
#                     tests arm their own 60 s SIGALRM, which should fire first)
#   CONFIRM_RUNS      isolated reruns of each differing test on each side (default 2)
#   PER_FILE_TIMEOUT  hard wall-clock limit per test file run (default 600)
#   STRICT=1          exit 1 if a test fails on ferromq and passes on libzmq, reproducibly
#                     (default: exit 0 whatever the results; non-zero only if the job broke)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/conformance"
OUT="${CONFORMANCE_DIR:-$ROOT/build/conformance}"
DIST="$ROOT/dist"
PYTHON="${PYTHON:-python3}"
PYZMQ_VERSION="${PYZMQ_VERSION:-27.3.0}"
PER_TEST_TIMEOUT="${PER_TEST_TIMEOUT:-90}"
PER_FILE_TIMEOUT="${PER_FILE_TIMEOUT:-600}"

# Pinned tool versions (pyzmq's test-requirements.txt, minus linters/type checkers/coverage).
BUILD_REQS=(
  "cython==3.3.1"
  "scikit-build-core==1.1.2"
  "packaging==26.3"
)
TEST_REQS=(
  "pytest==9.2.0"
  "pytest-asyncio==1.5.0"
  "pytest-timeout==2.4.0"
  "pytest-rerunfailures==16.7"
  "tornado==6.6.1"
  "cython==3.3.1"
  "setuptools==84.2.1"
)

log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'pyzmq.sh: error: %s\n' "$*" >&2; exit 1; }

mkdir -p "$OUT"

# ---------------------------------------------------------------- ferromq dist
if [[ "${SKIP_DIST:-0}" != 1 ]]; then
  log "make dist"
  make -C "$ROOT" dist >"$OUT/make-dist.log" 2>&1 || { tail -30 "$OUT/make-dist.log"; die "make dist failed"; }
fi
[[ -f "$DIST/lib/libzmq.so.5" && -f "$DIST/include/zmq.h" ]] || die "no ferromq dist in $DIST"
# What exactly is being tested (dist/ is shared: note its hash, and check it at the end).
DIST_SHA="$(sha256sum "$DIST/lib/libzmq.so.5" | cut -c1-16)"
GIT_REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if ! git -C "$ROOT" diff --quiet HEAD -- crates include 2>/dev/null; then
  GIT_REV="$GIT_REV + uncommitted changes in crates/ or include/"
fi

# ---------------------------------------------------------------- pyzmq sdist
SDIST_DIR="$OUT/sdist"
SDIST_TGZ="$SDIST_DIR/pyzmq-$PYZMQ_VERSION.tar.gz"
SRC="$SDIST_DIR/pyzmq-$PYZMQ_VERSION"
if [[ ! -f "$SDIST_TGZ" ]]; then
  log "download pyzmq $PYZMQ_VERSION sdist"
  mkdir -p "$SDIST_DIR"
  "$PYTHON" -m pip download -q --no-binary :all: --no-deps -d "$SDIST_DIR" "pyzmq==$PYZMQ_VERSION"
fi
if [[ ! -d "$SRC/tests" ]]; then
  rm -rf "$SRC"
  tar -xzf "$SDIST_TGZ" -C "$SDIST_DIR"
fi
[[ -f "$SRC/tests/conftest.py" ]] || die "sdist has no tests/ directory"

# ---------------------------------------------------------------- venvs
make_venv() {  # make_venv DIR
  local v="$1"
  if [[ ! -x "$v/bin/python" ]]; then
    "$PYTHON" -m venv "$v"
    "$v/bin/python" -m pip install -q --upgrade "pip==25.3"
  fi
  "$v/bin/python" -m pip install -q "${TEST_REQS[@]}"
}

VENV_F="$OUT/venv-ferromq"
VENV_L="$OUT/venv-libzmq"

# (a) ferromq: pyzmq from its sdist, linked against dist/.
#     ZMQ_PREFIX=<dir> makes pyzmq's CMakeLists look ONLY in <dir> and FATAL_ERROR if
#     libzmq is not there (it never falls back to bundling in that branch);
#     PYZMQ_NO_BUNDLE=1 also forbids the bundled fallback should ZMQ_PREFIX ever be lost.
log "venv (a): pyzmq $PYZMQ_VERSION from source against $DIST"
make_venv "$VENV_F"
"$VENV_F/bin/python" -m pip install -q "${BUILD_REQS[@]}"
STAMP="$VENV_F/.pyzmq-build-stamp"
WANT_STAMP="$PYZMQ_VERSION $(sha256sum "$DIST/include/zmq.h" | cut -d' ' -f1) $DIST"
if [[ "${FORCE_REBUILD:-0}" == 1 || ! -f "$STAMP" || "$(cat "$STAMP")" != "$WANT_STAMP" ]]; then
  log "building pyzmq from source (log: $OUT/pyzmq-build.log)"
  if ! env ZMQ_PREFIX="$DIST" PYZMQ_NO_BUNDLE=1 PYZMQ_LIBZMQ_RPATH=1 \
      "$VENV_F/bin/python" -m pip install -v --no-cache-dir --no-build-isolation \
      --no-deps --force-reinstall --no-binary pyzmq "$SDIST_TGZ" >"$OUT/pyzmq-build.log" 2>&1; then
    grep -E "CMake Error|FATAL|error:" "$OUT/pyzmq-build.log" | head -20 >&2 || true
    die "pyzmq source build against $DIST failed (see $OUT/pyzmq-build.log)"
  fi
  grep -q "Bundling libzmq" "$OUT/pyzmq-build.log" && die "pyzmq build bundled libzmq instead of using $DIST"
  echo "$WANT_STAMP" >"$STAMP"
fi

# (b) libzmq: pyzmq's stock wheel (bundles libzmq 4.3.5).
log "venv (b): pyzmq $PYZMQ_VERSION stock wheel (bundled libzmq)"
make_venv "$VENV_L"
"$VENV_L/bin/python" -m pip install -q --only-binary :all: "pyzmq==$PYZMQ_VERSION"

# ---------------------------------------------------------------- verify linkage
# Each check runs outside the sdist tree (so `import zmq` cannot pick up the sdist's
# uncompiled zmq/ package) and reads /proc/self/maps to see which libzmq is loaded.
verify() {  # verify VENV EXPECT_SUBSTRING LABEL
  local v="$1" expect="$2" label="$3"
  (cd / && "$v/bin/python" "$HERE/zmq_origin.py" --expect "$expect" --json "$OUT/origin-$label.json") \
    || die "$label: pyzmq is not running on the expected libzmq"
}
log "verify linkage"
EXT="$(cd / && "$VENV_F/bin/python" -c 'import zmq.backend.cython._zmq as m; print(m.__file__)')"
echo "ferromq extension: $EXT" >&2
LDD="$(ldd "$EXT")"
grep -E 'libzmq' <<<"$LDD" >&2
grep -q "libzmq.so.5 => $DIST/lib/libzmq.so.5 " <<<"$LDD" || die "$EXT does not resolve libzmq.so.5 to $DIST/lib"
readelf -d "$EXT" | grep -E 'RUNPATH|RPATH' >&2 || true
verify "$VENV_F" "$DIST/lib/libzmq.so.5" ferromq
verify "$VENV_L" "pyzmq.libs/libzmq" libzmq

# ---------------------------------------------------------------- run the suites
TEST_FILES_ARR=()
if [[ -n "${TEST_FILES:-}" ]]; then
  read -r -a TEST_FILES_ARR <<<"$TEST_FILES"
else
  mapfile -t TEST_FILES_ARR < <(cd "$SRC" && ls tests/test_*.py)
fi

run_side() {  # run_side LABEL VENV EXPECT OUTNAME RUNFILES-ARGS...
  local label="$1" v="$2" expect="$3" name="$4"; shift 4
  rm -rf "$OUT/junit-$name" "$OUT/logs-$name" "$OUT/cwd-$name"
  mkdir -p "$OUT/cwd-$name"
  # pytest runs in an empty scratch dir with --rootdir/-c pointing at the sdist tree: node ids
  # stay "tests/test_x.py::...", pytest.ini's --import-mode=importlib + pythonpath=tests
  # apply, and nothing (not even a `python -m zmq.curve_keygen` subprocess) can import the
  # sdist's uncompiled zmq/ package instead of the venv's (zmq_origin aborts the run if so).
  (cd "$OUT/cwd-$name" && PYTHONPATH="$HERE" CONFORMANCE_EXPECT_LIBZMQ="$expect" \
     "$v/bin/python" "$HERE/run_files.py" \
       --pytest "$v/bin/pytest" --rootdir "$SRC" \
       --junit-dir "$OUT/junit-$name" --log-dir "$OUT/logs-$name" \
       --per-test-timeout "$PER_TEST_TIMEOUT" --per-file-timeout "$PER_FILE_TIMEOUT" \
       --merged "$OUT/pyzmq-$name.xml" "$@")
}
# the rpath already points the source build at dist/lib; LD_LIBRARY_PATH makes sure of it
run_ferromq() { LD_LIBRARY_PATH="$DIST/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run_side ferromq "$VENV_F" "$DIST/lib/libzmq.so.5" "$@"; }
run_libzmq() { run_side libzmq "$VENV_L" "pyzmq.libs/libzmq" "$@"; }

export PYTHONDONTWRITEBYTECODE=1
if [[ "${ONLY:-}" != ferromq ]]; then
  log "pytest: pyzmq tests on libzmq (${#TEST_FILES_ARR[@]} files)"
  run_libzmq libzmq "${TEST_FILES_ARR[@]}"
fi
if [[ "${ONLY:-}" != libzmq ]]; then
  log "pytest: pyzmq tests on ferromq (${#TEST_FILES_ARR[@]} files)"
  run_ferromq ferromq "${TEST_FILES_ARR[@]}"
fi

# Every test whose outcome differs (fails on one side only) is run again, alone in its own
# process, CONFIRM_RUNS times on each side: that separates real differences from flaky
# tests and from failures caused by an earlier test in the same file.
CONFIRM_RUNS="${CONFIRM_RUNS:-2}"
rm -f "$OUT/pyzmq-confirm-libzmq.xml" "$OUT/pyzmq-confirm-ferromq.xml"
"$PYTHON" "$HERE/report.py" --write-mismatches "$OUT/mismatches.txt" \
  "$OUT/pyzmq-libzmq.xml" "$OUT/pyzmq-ferromq.xml" "$OUT/pyzmq-report.md" >/dev/null
if [[ "$CONFIRM_RUNS" -gt 0 && -s "$OUT/mismatches.txt" ]]; then
  n="$(wc -l <"$OUT/mismatches.txt")"
  log "confirm: $n differing tests, each alone, $CONFIRM_RUNS x on libzmq"
  run_libzmq confirm-libzmq --repeat "$CONFIRM_RUNS" --targets-file "$OUT/mismatches.txt"
  log "confirm: $n differing tests, each alone, $CONFIRM_RUNS x on ferromq"
  run_ferromq confirm-ferromq --repeat "$CONFIRM_RUNS" --targets-file "$OUT/mismatches.txt"
fi

# ---------------------------------------------------------------- report
log "report"
CONFIRM_ARGS=()
[[ -f "$OUT/pyzmq-confirm-libzmq.xml" ]] && CONFIRM_ARGS+=(--confirm-libzmq "$OUT/pyzmq-confirm-libzmq.xml")
[[ -f "$OUT/pyzmq-confirm-ferromq.xml" ]] && CONFIRM_ARGS+=(--confirm-ferromq "$OUT/pyzmq-confirm-ferromq.xml")
NOTE="ferromq: dist/lib/libzmq.so.5 sha256 $DIST_SHA, built $(date -u -r "$DIST/lib/libzmq.so.5" '+%Y-%m-%d %H:%M UTC') from $GIT_REV."
NOTE+=" Python $("$PYTHON" -c 'import platform; print(platform.python_version())'); per-test timeout $PER_TEST_TIMEOUT s;"
NOTE+=" command: \`bash conformance/pyzmq.sh\`."
if [[ "$(sha256sum "$DIST/lib/libzmq.so.5" | cut -c1-16)" != "$DIST_SHA" ]]; then
  NOTE+=" WARNING: dist/lib/libzmq.so.5 changed during the run (rebuilt by someone else?): results may mix two builds."
fi
STRICT_ARGS=()
[[ "${STRICT:-0}" == 1 ]] && STRICT_ARGS+=(--strict)
"$PYTHON" "$HERE/report.py" "${CONFIRM_ARGS[@]}" "${STRICT_ARGS[@]}" --note "$NOTE" \
  --title "pyzmq $PYZMQ_VERSION test suite: libzmq 4.3.5 (stock wheel) vs ferromq ($DIST)" \
  --origin "$OUT/origin-libzmq.json" --origin "$OUT/origin-ferromq.json" \
  "$OUT/pyzmq-libzmq.xml" "$OUT/pyzmq-ferromq.xml" "$OUT/pyzmq-report.md"
