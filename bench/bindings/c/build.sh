#!/usr/bin/env bash
# Build the C driver against zmq.h, linked to libzmq.so.5 by soname (no rpath).
#   build.sh OUT_DIR   -> OUT_DIR/perf
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(mkdir -p "${1:?usage: build.sh OUT_DIR}" && cd "$1" && pwd)"
"${CC:-gcc}" -O2 -std=c11 -Wall -Wextra -o "$OUT/perf.tmp" "$HERE/perf.c" -lzmq
mv "$OUT/perf.tmp" "$OUT/perf"
