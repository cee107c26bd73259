#!/usr/bin/env bash
# cppzmq conformance: small C++17 programs using cppzmq (Debian's cppzmq-dev headers) built
# twice -- against ferromq (dist/) and against the system libzmq -- then run and compared.
#
#   bash conformance/cpp/run.sh
#
# Programs whose source contains the marker "cppzmq-conformance: draft" are built with
# -DZMQ_BUILD_DRAFT_API (e.g. zmq::poller_t). Debian's libzmq5 does not export the draft
# symbols, so those programs show "n/a" in the libzmq column.
#
# A program containing "cppzmq-conformance: known-gap <reason>" that fails on ferromq but
# passes on libzmq is shown as a known gap and does not make the run fail (remove the marker
# once ferromq implements the feature; an unexpected pass is flagged as "now passes").
#
# Binaries are cached in OUT and rebuilt only when their source, check.hpp, this script or
# dist's zmq.h is newer (FORCE_REBUILD=1 to rebuild all).
#
# Knobs: CXX (default g++), JOBS (parallel compiles, default nproc), DIST (default <repo>/dist), OUT (default <repo>/build/conformance/cpp),
#        ONLY="basics poll" (subset), RUN_TIMEOUT (seconds per program run, default 30).
#
# Exit status: 1 if any program passes on libzmq and fails on ferromq, or if a ferromq
# build/link check broke; 0 otherwise.
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIST="${DIST:-$ROOT/dist}"
OUT="${OUT:-$ROOT/build/conformance/cpp}"
CXX="${CXX:-g++}"
RUN_TIMEOUT="${RUN_TIMEOUT:-30}"
CXXFLAGS=(-std=c++17 -O0 -Wall -Wno-unused-result -pthread)

if [ ! -f /usr/include/zmq.hpp ]; then
    echo "cppzmq headers missing: apt-get install -y cppzmq-dev" >&2
    exit 2
fi
if [ ! -f "$DIST/lib/libzmq.so.5" ] || [ ! -f "$DIST/include/zmq.h" ]; then
    echo "ferromq dist not found under $DIST (run make dist)" >&2
    exit 2
fi
mkdir -p "$OUT"

if [ -n "${ONLY:-}" ]; then
    PROGS=($ONLY)
else
    PROGS=()
    for f in "$HERE"/*.cpp; do PROGS+=("$(basename "$f" .cpp)"); done
fi

broken=0

# zmq.hpp does #include <zmq.h>; make sure the ferromq build really picks dist's header.
hdr=$(echo '#include <zmq.hpp>' | "$CXX" -std=c++17 -I"$DIST/include" -x c++ -E -H - 2>&1 >/dev/null | grep -m1 '/zmq\.h$' | sed 's/^\.* //')
if [ "$(readlink -f "$hdr")" != "$(readlink -f "$DIST/include/zmq.h")" ]; then
    echo "header check: ferromq build resolves <zmq.h> to '$hdr', not $DIST/include/zmq.h" >&2
    broken=1
fi

# Precompiled header per side (cppzmq's headers dominate compile time). Programs built with
# -DZMQ_BUILD_DRAFT_API don't match it; GCC then silently parses the header text instead.
make_pch() { # side
    local side=$1 dir="$OUT/pch-$1" inc=()
    [ "$side" = ferromq ] && inc=(-I"$DIST/include")
    mkdir -p "$dir"
    printf '#include <zmq.hpp>\n#include <zmq_addon.hpp>\n#include <atomic>\n#include <chrono>\n#include <set>\n#include <thread>\n#include <vector>\n#include "%s/check.hpp"\n' "$HERE" >"$dir/all.hpp"
    if [ -n "${FORCE_REBUILD:-}" ] || [ ! -f "$dir/all.hpp.gch" ] || [ "$HERE/check.hpp" -nt "$dir/all.hpp.gch" ] ||
        [ "$0" -nt "$dir/all.hpp.gch" ] || [ "$DIST/include/zmq.h" -nt "$dir/all.hpp.gch" ]; then
        "$CXX" "${CXXFLAGS[@]}" "${inc[@]}" -x c++-header "$dir/all.hpp" -o "$dir/all.hpp.gch" >"$dir/pch.log" 2>&1 ||
            rm -f "$dir/all.hpp.gch"
    fi
}

build() { # side prog
    local side=$1 prog=$2 src="$HERE/$2.cpp" exe="$OUT/$2.$1" flags=()
    if [ -z "${FORCE_REBUILD:-}" ] && [ -f "$exe.build.rc" ] && [ "$(cat "$exe.build.rc")" = 0 ] &&
        [ "$exe" -nt "$src" ] && [ "$exe" -nt "$HERE/check.hpp" ] && [ "$exe" -nt "$0" ] &&
        [ "$exe" -nt "$DIST/include/zmq.h" ]; then
        return
    fi
    rm -f "$exe"
    grep -q 'cppzmq-conformance: draft' "$src" && flags+=(-DZMQ_BUILD_DRAFT_API)
    if [ "$side" = ferromq ]; then
        "$CXX" "${CXXFLAGS[@]}" "${flags[@]}" -include "$OUT/pch-ferromq/all.hpp" -I"$HERE" -I"$DIST/include" "$src" -o "$exe" \
            -L"$DIST/lib" -Wl,-rpath,"$DIST/lib" -lzmq >"$exe.build.log" 2>&1
    else
        "$CXX" "${CXXFLAGS[@]}" "${flags[@]}" -include "$OUT/pch-libzmq/all.hpp" -I"$HERE" "$src" -o "$exe" -lzmq >"$exe.build.log" 2>&1
    fi
    echo $? >"$exe.build.rc"
}

# compile everything, at most JOBS compilers at a time
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
make_pch ferromq & make_pch libzmq & wait
running=0
for p in "${PROGS[@]}"; do
    for side in ferromq libzmq; do
        build "$side" "$p" &
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
    done
done
wait

declare -A RES
fpass=0; ffail=0; regress=(); gaps=()
run_one() { # side prog -> sets status string
    local side=$1 p=$2 exe="$OUT/$2.$1" rc
    if [ "$(cat "$exe.build.rc")" != 0 ]; then
        if [ "$side" = libzmq ] && grep -q 'cppzmq-conformance: draft' "$HERE/$p.cpp" \
            && grep -q 'undefined reference to .zmq_poller' "$exe.build.log"; then
            RES[$side.$p]="n/a(no-draft)"
        else
            RES[$side.$p]="BUILD-FAIL"
        fi
        return
    fi
    # the binary must load the intended libzmq.so.5
    local lib
    lib=$(ldd "$exe" | awk '/libzmq\.so\.5/ {print $3}')
    lib=$(readlink -f "$lib")
    if [ "$side" = ferromq ] && [ "$lib" != "$(readlink -f "$DIST/lib/libzmq.so.5")" ]; then
        RES[$side.$p]="WRONG-LIB"; echo "ldd: $exe loads '$lib', not dist's" >"$exe.out"; return
    fi
    if [ "$side" = libzmq ] && [[ "$lib" == "$(readlink -f "$DIST/lib")"* ]]; then
        RES[$side.$p]="WRONG-LIB"; echo "ldd: $exe loads dist's lib" >"$exe.out"; return
    fi
    timeout -k 2 "$RUN_TIMEOUT" "$exe" >"$exe.out" 2>&1
    rc=$?
    local np nf
    np=$(grep -c '^PASS ' "$exe.out"); nf=$(grep -c '^FAIL ' "$exe.out")
    if [ $rc = 0 ] && [ "$nf" = 0 ] && [ "$np" -gt 0 ]; then
        RES[$side.$p]="PASS($np)"
    elif [ $rc = 124 ] || [ $rc = 137 ]; then
        RES[$side.$p]="TIMEOUT($np/$((np + nf)))"
    else
        RES[$side.$p]="FAIL($nf/$((np + nf)),rc=$rc)"
    fi
}

printf '%-12s %-22s %-22s\n' program libzmq ferromq
printf '%-12s %-22s %-22s\n' ------- ------ -------
for p in "${PROGS[@]}"; do
    run_one libzmq "$p"
    run_one ferromq "$p"
    l=${RES[libzmq.$p]}; f=${RES[ferromq.$p]}
    printf '%-12s %-22s %-22s\n' "$p" "$l" "$f"
    gap=$(grep -m1 -o 'cppzmq-conformance: known-gap.*' "$HERE/$p.cpp" | sed 's/cppzmq-conformance: known-gap *//')
    case "$f" in
        PASS*) fpass=$((fpass + 1))
               [ -n "$gap" ] && echo "  note: $p now passes on ferromq; drop its known-gap marker" ;;
        *) ffail=$((ffail + 1))
           case "$f" in BUILD-FAIL|WRONG-LIB) broken=1 ;; esac
           case "$l" in
               PASS*|n/a*) if [ -n "$gap" ]; then gaps+=("$p ($gap)"); else regress+=("$p"); fi ;;
           esac ;;
    esac
done

# details of ferromq failures
for p in "${PROGS[@]}"; do
    case "${RES[ferromq.$p]}" in
        PASS*) ;;
        BUILD-FAIL) echo "--- $p (ferromq) build log:"; head -20 "$OUT/$p.ferromq.build.log" ;;
        *) echo "--- $p (ferromq):"; grep -v '^PASS ' "$OUT/$p.ferromq.out" | head -20 ;;
    esac
done
for g in "${gaps[@]}"; do echo "known gap (not failing the run): $g"; done
if [ ${#regress[@]} -gt 0 ]; then
    echo "ferromq-only failures: ${regress[*]}"
fi
# Known gaps are failures we list as not done (README); they are reported, not hidden, but
# kept out of the pass/fail count line so it counts only what should work.
nfail=$((ffail - ${#gaps[@]}))
echo "cpp-conformance (ferromq): $fpass of $((fpass + ffail)) programs pass, ${#gaps[@]} known gap(s)"
echo "cpp-conformance: $fpass passed, $nfail failed"
[ ${#regress[@]} -eq 0 ] && [ $broken = 0 ]
