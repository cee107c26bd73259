#!/usr/bin/env bash
# Builds build/ferromq.node: plain gcc against Node's node_api.h/uv.h and zmq.h, linked to
# libzmq.so.5 by soname only (no rpath), so LD_LIBRARY_PATH picks the library at run time.
# Env: ZMQ_INCLUDE (dir of zmq.h), ZMQ_LIB_DIR (dir with libzmq.so.5), CC, CFLAGS.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NODE_INC=${NODE_INC:-$(dirname "$(readlink -f "$(command -v node)")")/../include/node}
ZMQ_INCLUDE=${ZMQ_INCLUDE:-$ROOT/dist/include}
ZMQ_LIB_DIR=${ZMQ_LIB_DIR:-$ROOT/dist/lib}
[ -f "$NODE_INC/node_api.h" ] || { echo "build.sh: node_api.h not found in $NODE_INC" >&2; exit 1; }
[ -f "$ZMQ_INCLUDE/zmq.h" ] || ZMQ_INCLUDE=/usr/include
[ -e "$ZMQ_LIB_DIR/libzmq.so.5" ] || ZMQ_LIB_DIR=/usr/lib/x86_64-linux-gnu
mkdir -p "$HERE/build"
OUT="$HERE/build/ferromq.node"
SRC="$HERE/src/ferromq.c"
if [ "$OUT" -nt "$SRC" ] && [ "$OUT" -nt "$0" ] && [ -z "${FORCE:-}" ]; then exit 0; fi
# link against the soname directly (-l:libzmq.so.5) so no libzmq.so dev symlink is needed
${CC:-cc} -O2 -fPIC -shared -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
  -fvisibility=hidden ${CFLAGS:-} \
  -DNODE_GYP_MODULE_NAME=ferromq -I"$NODE_INC" -I"$ZMQ_INCLUDE" \
  -o "$OUT.tmp" "$SRC" -L"$ZMQ_LIB_DIR" -l:libzmq.so.5 -Wl,--unresolved-symbols=ignore-all
mv "$OUT.tmp" "$OUT"
echo "build.sh: $OUT (NEEDED: $(objdump -p "$OUT" | awk '/NEEDED.*zmq/{print $2}'), rpath: $(objdump -p "$OUT" | awk '/RPATH|RUNPATH/{print $2}' | tr -d '\n')none)"
