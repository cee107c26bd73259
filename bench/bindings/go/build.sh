#!/usr/bin/env bash
# Build the Go driver against github.com/pebbe/zmq4 (fetched through the Go
# module proxy into a private module cache under OUT), linked by cgo against
# the system libzmq.so (soname libzmq.so.5, no rpath).
#   build.sh OUT_DIR   -> OUT_DIR/perf
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$(mkdir -p "${1:?usage: build.sh OUT_DIR}" && cd "$1" && pwd)"
GO="${GO:-go}"
export GOPATH="$OUT/gopath" GOCACHE="$OUT/gocache" GOMODCACHE="$OUT/modcache"
export GOFLAGS="-buildvcs=false -mod=mod" GOTOOLCHAIN=local CGO_ENABLED=1
unset CGO_CFLAGS CGO_LDFLAGS PKG_CONFIG_PATH
cd "$HERE"
"$GO" build -trimpath -o "$OUT/perf.tmp" . >"$OUT/build.log" 2>&1 \
  || { cat "$OUT/build.log" >&2; exit 1; }
readelf -d "$OUT/perf.tmp" | grep 'NEEDED.*\[libzmq.so.5\]' >/dev/null \
  || { echo "perf does not need libzmq.so.5" >&2; exit 1; }
mv "$OUT/perf.tmp" "$OUT/perf"
