#!/usr/bin/env bash
# libzmq 4.3.4's own test programs (tests/*.cpp of Debian's source package zeromq3, fetched
# from the Debian archive and checksum-checked) built against libzmq's own zmq.h and run on
# the library under test the way a program built for libzmq meets ferromq: linked by
# soname, the library chosen by LD_LIBRARY_PATH.
#
#   bash conformance/libzmq-tests/run.sh [PREFIX]   PREFIX: dist/ (default), or "system"
#                                                   for Debian's libzmq (a reference run)
#
# On PREFIX every test must pass, except the tests in known.txt (each with the reason it
# fails on ferromq; those marked ~ depend on timing and are not counted) and the fuzz
# targets, which skip (exit 77) without a fuzzing engine. A test listed as failing that
# passes fails the run too, so that the list stays true. JOBS tests run at a time
# (default 2); each has 60 s.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PREFIX="${1:-$ROOT/dist}"
[ "$PREFIX" = system ] || PREFIX="$(cd "$PREFIX" && pwd)"
OUT="${CONFORMANCE_DIR:-$ROOT/build/conformance}/libzmq-tests"
JOBS="${JOBS:-2}"
VERSION=4.3.4
SHA256=0ff5a531c9ffaf0dfdc7dc78d13d1383088f454896d252934c429b2554d10559
TARBALL="zeromq3_$VERSION.orig.tar.gz"
mkdir -p "$OUT"
if ! echo "$SHA256  $OUT/$TARBALL" | sha256sum -c --status 2>/dev/null; then
  curl -sSfL --retry 3 -o "$OUT/$TARBALL.tmp" \
    "http://deb.debian.org/debian/pool/main/z/zeromq3/$TARBALL"
  echo "$SHA256  $OUT/$TARBALL.tmp" | sha256sum -c --status \
    || { echo "libzmq-tests: bad checksum for $TARBALL" >&2; exit 1; }
  mv "$OUT/$TARBALL.tmp" "$OUT/$TARBALL"
fi
SRC="$OUT/libzmq-$VERSION"
[ -f "$SRC/tests/CMakeLists.txt" ] || tar xzf "$OUT/$TARBALL" -C "$OUT"

# (awk reads all of ldconfig's output: an early exit could kill it with SIGPIPE.)
so_path() { ldconfig -p | awk -v n="$1" '$1 == n && /x86-64/ && !p { p = $NF } END { print p }'; }
if [ "$PREFIX" = system ]; then
  lib="$(so_path libzmq.so.5)"
else
  lib="$PREFIX/lib/libzmq.so.5"
fi
sodium="$(so_path libsodium.so.23)"
[ -f "$lib" ] && [ -f "$sodium" ] || { echo "libzmq-tests: need $lib and libsodium.so.23" >&2; exit 1; }
libdir="$(dirname "$lib")"

# The tests CMakeLists.txt builds on Linux without draft APIs, GSSAPI, TIPC or VMCI.
tests="$(sed -n '/^set(tests/,/)/p' "$SRC/tests/CMakeLists.txt" | grep -o 'test_[a-z0-9_]*')
test_socks test_connect_null_fuzzer test_bind_null_fuzzer test_connect_fuzzer
test_bind_fuzzer test_security_curve test_connect_curve_fuzzer test_bind_curve_fuzzer
test_z85_decode_fuzzer test_ipc_wildcard test_pair_ipc test_reqrep_ipc test_rebind_ipc
test_proxy test_proxy_hwm test_proxy_single_socket test_proxy_terminate
test_getsockopt_memset test_filter_ipc test_stream_exceeds_buffer test_router_mandatory_hwm
test_use_fd test_zmq_poll_fd test_fork test_abstract_ipc"

bin="$OUT/bin" obj="$OUT/obj" res="$OUT/results-$(basename "$PREFIX")"
rm -rf "$bin" "$obj" "$res"
mkdir -p "$bin" "$obj" "$res"
CXX=(g++ -O1 -g -std=gnu++11 -pthread -w -DZMQ_CUSTOM_PLATFORM_HPP
     -include "$HERE/platform.hpp" -I"$HERE" -I"$SRC/external/unity" -I"$SRC/include" -I"$SRC/tests")
gcc -O1 -w -c "$SRC/external/unity/unity.c" -o "$obj/unity.o"
for f in testutil testutil_monitoring testutil_security testutil_unity; do
  "${CXX[@]}" -c "$SRC/tests/$f.cpp" -o "$obj/$f.o"
done
"${CXX[@]}" -c "$HERE/shim.cpp" -o "$obj/shim.o"
export SRC bin obj res lib sodium libdir
export CXXS="${CXX[*]}"
build_and_run() {
  local t=$1
  # shellcheck disable=SC2086
  if ! $CXXS "$SRC/tests/$t.cpp" "$obj"/*.o -o "$bin/$t" "$lib" "$sodium" \
      > "$res/$t.log" 2>&1; then
    echo "$t notbuilt" > "$res/$t.rc"; return
  fi
  if ! LD_LIBRARY_PATH="$libdir" ldd "$bin/$t" | grep -qF "$libdir/libzmq.so.5"; then
    echo "$t notlinked" > "$res/$t.rc"; return
  fi
  mkdir -p "$res/cwd-$t"
  local rc=0
  (cd "$res/cwd-$t" && LD_LIBRARY_PATH="$libdir" timeout 60 "$bin/$t") \
    > "$res/$t.log" 2>&1 || rc=$?
  echo "$t $rc" > "$res/$t.rc"
}
export -f build_and_run
echo "$tests" | tr ' ' '\n' | grep . | xargs -P "$JOBS" -I{} bash -c 'build_and_run {}'

known() { grep -qE "^$1( |$)" "$HERE/known.txt"; }
timing() { grep -qE "^~$1( |$)" "$HERE/known.txt"; }
passed=0 skipped=0 known_failed=0 uncounted=0 bad=0
for t in $tests; do
  read -r _ rc < "$res/$t.rc"
  # A listed test may fail its checks (Unity exits with their count); a hang (124) or a
  # crash (128 + signal) is unexpected.
  if [ "$PREFIX" != system ] && timing "$t" && [[ "$rc" =~ ^[0-9]{1,2}$ ]]; then
    uncounted=$((uncounted + 1))
    echo "libzmq-tests: $t exit $rc (timing-dependent, not counted)"
  elif [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    if [ "$PREFIX" != system ] && known "$t"; then
      echo "libzmq-tests: $t passes but is listed in known.txt" >&2; bad=$((bad + 1))
    fi
  elif [ "$rc" = 77 ] && [[ "$t" == *_fuzzer ]]; then
    skipped=$((skipped + 1))
  elif [ "$PREFIX" != system ] && known "$t" && [[ "$rc" =~ ^[1-9][0-9]?$ ]]; then
    known_failed=$((known_failed + 1))
  else
    echo "libzmq-tests: $t FAILED ($rc):" >&2
    grep -E ':FAIL|Assertion|WARNING' "$res/$t.log" | head -5 >&2 || tail -5 "$res/$t.log" >&2
    bad=$((bad + 1))
  fi
done
echo "libzmq-tests ($lib): $passed passed, $known_failed known differences and" \
  "$uncounted timing-dependent (known.txt), $skipped fuzz targets skipped, $bad unexpected"
[ "$bad" = 0 ] || [ "$PREFIX" = system ]
