#!/usr/bin/env bash
# Go binding conformance: run github.com/pebbe/zmq4's own test suite (`go test`) against
# ferromq (dist/) and against the system libzmq (Debian's 4.3.x, via pkg-config), then
# compare the two `go test -v` outputs.
#
#   bash conformance/go-zmq4.sh          -> build/conformance/go-zmq4-report.md
#
# Nothing is copied into this repository: the module source is fetched through the Go
# module proxy into a private module cache under build/ and copied to a scratch dir there.
#
# Environment knobs (all optional):
#   ZMQ4_VERSION      pebbe/zmq4 release (default below)
#   CONFORMANCE_DIR   scratch dir (default: build/conformance)
#   GO                go binary (default: go from PATH)
#   GO_TEST_TIMEOUT   `go test -timeout` (default 300s)
#   GO_TEST_RUN       `go test -run` regexp (default: all tests)
#   ONLY=ferromq|libzmq   run only one side (the report then reuses the other's old log)
#   STRICT=1          exit 1 if some test fails on ferromq and passes on libzmq
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
HERE="$ROOT/conformance"
OUT="${CONFORMANCE_DIR:-$ROOT/build/conformance}"
DIST="$ROOT/dist"
GO="${GO:-go}"
ZMQ4_VERSION="${ZMQ4_VERSION:-v1.4.0}"
GO_TEST_TIMEOUT="${GO_TEST_TIMEOUT:-300s}"
GO_TEST_RUN="${GO_TEST_RUN:-}"
ONLY="${ONLY:-}"

GOBASE="$OUT/go"
export GOPATH="$GOBASE/path" GOCACHE="$GOBASE/cache" GOMODCACHE="$GOBASE/modcache"
export GOFLAGS="-buildvcs=false -mod=mod"
export GOTOOLCHAIN=local
mkdir -p "$GOPATH" "$GOCACHE" "$GOMODCACHE" "$OUT"

[ -e "$DIST/lib/libzmq.so.5" ] || { echo "missing $DIST/lib/libzmq.so.5 (run make dist)" >&2; exit 2; }
[ -e "$DIST/include/zmq.h" ] || { echo "missing $DIST/include/zmq.h" >&2; exit 2; }

# --- fetch the module through the proxy --------------------------------------------------
echo "== go mod download github.com/pebbe/zmq4@$ZMQ4_VERSION"
MODDIR="$(cd "$GOBASE" && "$GO" mod download -json "github.com/pebbe/zmq4@$ZMQ4_VERSION" \
          | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir","")); sys.exit(1 if d.get("Error") else 0)')"
[ -d "$MODDIR" ] || { echo "module download failed" >&2; exit 2; }
echo "   source: $MODDIR"

# run_side NAME  (env for cgo / runtime set by the caller)
run_side() {
    local name="$1"
    local src="$GOBASE/src-$name"
    local log="$OUT/go-zmq4-$name.log"
    rm -rf "$src"
    cp -r "$MODDIR" "$src"
    chmod -R u+w "$src"
    cd "$src"
    # Go's pkg-config results are cached by cgo flags; force a clean build per side.
    echo "== [$name] build the test binary (go test -c)"
    "$GO" test -c -o "$src/zmq4.test" . >"$OUT/go-zmq4-$name.build.log" 2>&1 || {
        cat "$OUT/go-zmq4-$name.build.log" >&2; echo "build failed for $name" >&2; return 2; }
    local loaded
    loaded="$(ldd "$src/zmq4.test" | awk '/libzmq/ {print $3}')"
    echo "   test binary loads libzmq from: $loaded"
    echo "$loaded" >"$OUT/go-zmq4-$name.libpath"
    
    echo "== [$name] go test -v -count=1 -timeout $GO_TEST_TIMEOUT ./..."
    local runargs=()
    [ -n "$GO_TEST_RUN" ] && runargs=(-run "$GO_TEST_RUN")
    set +e
    "$GO" test -v -count=1 -timeout "$GO_TEST_TIMEOUT" "${runargs[@]}" ./... >"$log" 2>&1
    local rc=$?
    set -e
    echo "   exit $rc, log: $log"
    echo "$rc" >"$OUT/go-zmq4-$name.rc"
    cd "$ROOT"
}

if [ "$ONLY" != libzmq ]; then
    (
        export PKG_CONFIG_PATH="$DIST/lib/pkgconfig"
        export CGO_CFLAGS="-I$DIST/include"
        export CGO_LDFLAGS="-L$DIST/lib -Wl,-rpath,$DIST/lib"
        export LD_LIBRARY_PATH="$DIST/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        run_side ferromq
    )
    case "$(cat "$OUT/go-zmq4-ferromq.libpath")" in
        "$DIST"/lib/*) ;;
        *) echo "ERROR: ferromq test binary does not load dist's libzmq" >&2; exit 2 ;;
    esac
fi

if [ "$ONLY" != ferromq ]; then
    (
        unset PKG_CONFIG_PATH CGO_CFLAGS CGO_LDFLAGS LD_LIBRARY_PATH
        run_side libzmq
    )
    case "$(cat "$OUT/go-zmq4-libzmq.libpath")" in
        "$DIST"/*) echo "ERROR: libzmq test binary loads dist's library" >&2; exit 2 ;;
    esac
fi

SYS_VERSION="$(pkg-config --modversion libzmq 2>/dev/null || echo unknown)"
python3 "$HERE/go_report.py" \
    --ferromq "$OUT/go-zmq4-ferromq.log" --libzmq "$OUT/go-zmq4-libzmq.log" \
    --ferromq-lib "$(cat "$OUT/go-zmq4-ferromq.libpath")" \
    --libzmq-lib "$(cat "$OUT/go-zmq4-libzmq.libpath") (libzmq $SYS_VERSION)" \
    --version "$ZMQ4_VERSION" \
    --out "$OUT/go-zmq4-report.md" ${STRICT:+--strict}
