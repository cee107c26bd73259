#!/usr/bin/env bash
# Builds the addon and runs the node:test suite twice: on ferromq (dist/lib) and on
# Debian's libzmq, selecting the library with LD_LIBRARY_PATH (the addon links libzmq.so.5
# by soname, without an rpath). Last line: "node: N passed, M failed"; non-zero on failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FERRO=${FERROMQ_LIB_DIR:-$ROOT/dist/lib}
DEBIAN=${LIBZMQ_LIB_DIR:-/usr/lib/x86_64-linux-gnu}
command -v node >/dev/null || { echo "node: 0 passed, 1 failed (node not installed)"; exit 1; }
if ! bash "$HERE/build.sh"; then echo "node: 0 passed, 1 failed (addon build failed)"; exit 1; fi
pass=0; fail=0
for pair in "ferromq=$FERRO" "libzmq=$DEBIAN"; do
  label=${pair%%=*}; dir=${pair#*=}
  if [ ! -e "$dir/libzmq.so.5" ]; then
    echo "== $label: no libzmq.so.5 in $dir"; fail=$((fail + 1)); continue
  fi
  out=$(cd "$HERE" && LD_LIBRARY_PATH="$dir" timeout 300 node --test --test-timeout=60000 \
        --test-reporter=tap test/ 2>&1)
  rc=$?
  p=$(printf '%s\n' "$out" | awk '/^# pass /{print $3}' | tail -1)
  f=$(printf '%s\n' "$out" | awk '/^# fail /{print $3}' | tail -1)
  p=${p:-0}; f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crash/timeout without a TAP summary
  ver=$(cd "$HERE" && LD_LIBRARY_PATH="$dir" node -p 'require("./index.js").version' 2>/dev/null)
  echo "== $label ($dir, zmq_version ${ver:-?}): $p passed, $f failed"
  if [ "$f" -ne 0 ]; then printf '%s\n' "$out" | grep -E -A12 '^not ok|^ *not ok' | head -80; fi
  pass=$((pass + p)); fail=$((fail + f))
done
echo "node: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
