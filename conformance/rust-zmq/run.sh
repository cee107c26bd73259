#!/usr/bin/env bash
# Rust `zmq` crate (rust-zmq) conformance: builds src/main.rs against ferromq's dist/ and
# against the system libzmq, checks with ldd which libzmq.so.5 each binary loads, runs both.
#
#   bash conformance/rust-zmq/run.sh
#
# Uses zmq 0.9 (zmq-sys 0.11), whose build script links an external libzmq found through
# LIBZMQ_PREFIX (or LIBZMQ_LIB_DIR + LIBZMQ_INCLUDE_DIR, else pkg-config). zmq 0.10's
# zmq-sys 0.12 always compiles and statically links its vendored libzmq 4.3.4, so it cannot
# test ferromq.
# Target dirs live under build/conformance/ (one per side: zmq-sys does not rerun its build
# script when LIBZMQ_PREFIX changes). Exit 1 if ferromq fails while the system libzmq passes.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIST="${DIST:-$ROOT/dist}"
OUT="${OUT:-$ROOT/build/conformance}"
SYS_PREFIX="${SYS_PREFIX:-/usr}"   # Debian: /usr/include/zmq.h, libzmq.so in the default path

declare -A RES
broken=0
for side in libzmq ferromq; do
    if [ $side = ferromq ]; then prefix="$DIST"; else prefix="$SYS_PREFIX"; fi
    tgt="$OUT/rust-zmq-target-$side"
    if ! (cd "$HERE" && LIBZMQ_PREFIX="$prefix" CARGO_TARGET_DIR="$tgt" cargo build --locked -q \
            >"$OUT/rust-zmq-$side.build.log" 2>&1); then
        RES[$side]="BUILD-FAIL"; [ $side = ferromq ] && broken=1
        tail -20 "$OUT/rust-zmq-$side.build.log"; continue
    fi
    exe="$tgt/debug/rust-zmq-conformance"
    lib=$(readlink -f "$(ldd "$exe" | awk '/libzmq\.so\.5/ {print $3}')")
    if [ $side = ferromq ] && [ "$lib" != "$(readlink -f "$DIST/lib/libzmq.so.5")" ]; then
        RES[$side]="WRONG-LIB($lib)"; broken=1; continue
    fi
    if [ $side = libzmq ] && [[ "$lib" == "$(readlink -f "$DIST/lib")"* ]]; then
        RES[$side]="WRONG-LIB($lib)"; continue
    fi
    timeout -k 2 30 "$exe" >"$OUT/rust-zmq-$side.out" 2>&1
    rc=$?
    np=$(grep -c '^PASS ' "$OUT/rust-zmq-$side.out"); nf=$(grep -c '^FAIL ' "$OUT/rust-zmq-$side.out")
    if [ $rc = 0 ] && [ "$nf" = 0 ]; then RES[$side]="PASS($np)"; else RES[$side]="FAIL($nf/$((np + nf)),rc=$rc)"; fi
    echo "$side: $(ldd "$exe" | grep libzmq)"
done
printf '%-12s %-22s %-22s\n' program libzmq ferromq
printf '%-12s %-22s %-22s\n' rust-zmq "${RES[libzmq]}" "${RES[ferromq]}"
case "${RES[ferromq]}" in
    PASS*) echo "rust-zmq-conformance: 1 passed, 0 failed" ;;
    *) grep -v '^PASS ' "$OUT/rust-zmq-ferromq.out" 2>/dev/null | head -20
       echo "rust-zmq-conformance: 0 passed, 1 failed"
       case "${RES[libzmq]}" in PASS*) broken=1 ;; esac ;;
esac
exit $broken
