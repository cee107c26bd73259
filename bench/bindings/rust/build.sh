#!/usr/bin/env bash
# Build the Rust workload C drivers (release) into OUT_DIR, with a target dir
# of their own under OUT_DIR (never the ferromq workspace's target/).
#   build.sh OUT_DIR   -> OUT_DIR/perf_zmq, OUT_DIR/perf_native
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(mkdir -p "${1:?usage: build.sh OUT_DIR}" && cd "$1" && pwd)"
unset LIBZMQ_PREFIX LIBZMQ_LIB_DIR LIBZMQ_INCLUDE_DIR
cd "$HERE"
# Fetch first (crates.io is reachable; a fresh machine's cache may not hold the zmq crate
# yet, e.g. before `make test` has built the rust-zmq conformance program), then build
# without touching the index again.
cargo fetch --locked -q >"$OUT/fetch.log" 2>&1 || { tail -30 "$OUT/fetch.log" >&2; exit 1; }
CARGO_TARGET_DIR="$OUT/target" cargo build --release --offline --locked -q \
  >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log" >&2; exit 1; }
for b in perf_zmq perf_native; do cp "$OUT/target/release/$b" "$OUT/$b.tmp"; mv "$OUT/$b.tmp" "$OUT/$b"; done
readelf -d "$OUT/perf_zmq" | grep 'NEEDED.*\[libzmq.so.5\]' >/dev/null \
  || { echo "perf_zmq does not need libzmq.so.5" >&2; exit 1; }
if readelf -d "$OUT/perf_native" | grep 'NEEDED.*libzmq' >/dev/null; then
  echo "perf_native links a libzmq" >&2; exit 1
fi
