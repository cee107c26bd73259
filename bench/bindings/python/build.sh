#!/usr/bin/env bash
# Build pyzmq ONCE from its sdist against ferromq's dist/ headers, linked to
# libzmq.so.5 by soname and WITHOUT an rpath, into a venv under OUT.  At run
# time LD_LIBRARY_PATH picks the library (ferromq or libzmq).
#   build.sh OUT_DIR     (idempotent: a stamp file skips a rebuild)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
OUT="$(mkdir -p "${1:?usage: build.sh OUT_DIR}" && cd "$1" && pwd)"
DIST="${DIST:-$ROOT/dist}"
PYTHON="${PYTHON:-python3}"
VER="${PYZMQ_VERSION:-27.3.0}"
VENV="$OUT/venv"
STAMP="$OUT/.stamp"
WANT="$VER $(sha256sum "$DIST/include/zmq.h" | cut -c1-16)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -x "$VENV/bin/python" ]]; then
  exit 0
fi
mkdir -p "$OUT"
# Reuse the sdist conformance/pyzmq.sh downloaded, else fetch it with pip.
SDIST="$ROOT/build/conformance/sdist/pyzmq-$VER.tar.gz"
if [[ ! -f "$SDIST" ]]; then
  SDIST="$OUT/pyzmq-$VER.tar.gz"
  [[ -f "$SDIST" ]] || "$PYTHON" -m pip download -q --no-binary :all: --no-deps -d "$OUT" "pyzmq==$VER"
fi
[[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q "cython==3.3.1" "scikit-build-core==1.1.2" "packaging==26.3"
# ZMQ_PREFIX=dist: pyzmq's CMake looks only there (FATAL_ERROR otherwise);
# PYZMQ_NO_BUNDLE forbids the bundled fallback; PYZMQ_LIBZMQ_RPATH=OFF keeps
# the extension free of an rpath so LD_LIBRARY_PATH alone selects the library.
env ZMQ_PREFIX="$DIST" PYZMQ_NO_BUNDLE=1 PYZMQ_LIBZMQ_RPATH=OFF \
  "$VENV/bin/python" -m pip install -v --no-cache-dir --no-build-isolation \
  --no-deps --force-reinstall --no-binary pyzmq "$SDIST" >"$OUT/build.log" 2>&1 \
  || { tail -20 "$OUT/build.log" >&2; exit 1; }
if grep -q "Bundling libzmq" "$OUT/build.log"; then
  echo "pyzmq bundled libzmq instead of linking $DIST" >&2; exit 1
fi
EXT="$(cd / && LD_LIBRARY_PATH="$DIST/lib" "$VENV/bin/python" -c 'import zmq.backend.cython._zmq as m; print(m.__file__)')"
if readelf -d "$EXT" | grep -E 'RPATH|RUNPATH' >/dev/null; then
  echo "warning: $EXT has an rpath: $(readelf -d "$EXT" | grep -E 'RPATH|RUNPATH')" >&2
fi
readelf -d "$EXT" | grep 'NEEDED.*\[libzmq.so.5\]' >/dev/null || { echo "$EXT does not need libzmq.so.5" >&2; exit 1; }
echo "$WANT" >"$STAMP"
