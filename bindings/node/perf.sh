#!/usr/bin/env bash
# perf.sh ROLE ENDPOINT SIZE COUNT — runs perf.js on the library in $FERROMQ_LIB_DIR
# (a directory containing libzmq.so.5; default: ferromq's dist/lib), chosen through
# LD_LIBRARY_PATH since the addon links libzmq.so.5 by soname without an rpath.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIBDIR=${FERROMQ_LIB_DIR:-$ROOT/dist/lib}
[ -e "$LIBDIR/libzmq.so.5" ] || { echo "perf.sh: no libzmq.so.5 in $LIBDIR" >&2; exit 2; }
[ -f "$HERE/build/ferromq.node" ] || bash "$HERE/build.sh" >&2
LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec node "$HERE/perf.js" "$@"
