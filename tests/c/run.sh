#!/usr/bin/env bash
# Builds each tests/c/test_*.c against the drop-in's header and library (as a user would,
# through pkg-config) and runs it. Fails if any program fails or links to another libzmq.
set -euo pipefail
prefix=${1:?usage: run.sh DIST_PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags=$(pkg-config --cflags libzmq)
libs=$(pkg-config --libs libzmq)
passed=0; failed=0
for src in "$here"/test_*.c; do
  name=$(basename "$src" .c)
  gcc -O1 -g -Wall -Wextra -Werror -std=c11 -D_GNU_SOURCE $cflags "$src" -o "$out/$name" $libs -Wl,-rpath,"$prefix/lib"
  # Not `ldd | grep -q`: grep -q exits at the first match, ldd may then die of SIGPIPE,
  # and pipefail turns that into a false "not linked".
  if ! grep -qF "$prefix/lib/libzmq.so.5" <<<"$(ldd "$out/$name")"; then
    echo "$name: not linked against $prefix/lib/libzmq.so.5" >&2; failed=$((failed+1)); continue
  fi
  if timeout 60 "$out/$name"; then passed=$((passed+1)); else echo "$name: FAILED" >&2; failed=$((failed+1)); fi
done
echo "c-tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
