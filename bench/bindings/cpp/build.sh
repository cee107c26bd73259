#!/usr/bin/env bash
# Build the C++ driver against cppzmq (Debian cppzmq-dev: zmq.hpp), linked to
# libzmq.so.5 by soname (no rpath).
#   build.sh OUT_DIR   -> OUT_DIR/perf
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(mkdir -p "${1:?usage: build.sh OUT_DIR}" && cd "$1" && pwd)"
[[ -f /usr/include/zmq.hpp ]] || { echo "cppzmq not installed (apt-get install cppzmq-dev)" >&2; exit 1; }
"${CXX:-g++}" -O2 -std=c++17 -Wall -Wextra -o "$OUT/perf.tmp" "$HERE/perf.cpp" -lzmq
mv "$OUT/perf.tmp" "$OUT/perf"
