#!/usr/bin/env bash
# ZMTP 2.0 against a real implementation of it: JeroMQ 0.3.6 (a Java port of libzmq 3.2,
# fetched from Maven Central, checksum-checked) as the peer of the library under test, as
# libzmq 4.3 talks to such peers: PUSH/PULL both ways, PUB to a 2.0 SUB, a ROUTER taking
# the 2.0 peer's routing id, and the monitor events (no HANDSHAKE_SUCCEEDED; the end of a
# 2.0 connection reported as HANDSHAKE_FAILED_NO_DETAIL with EPIPE, then DISCONNECTED).
#
#   bash conformance/zmtp2-jeromq/run.sh [PREFIX]   PREFIX: dist/ (default), or "system"
#                                                   for the system libzmq (Debian's 4.3.4)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PREFIX="${1:-$ROOT/dist}"
OUT="${CONFORMANCE_DIR:-$ROOT/build/conformance}/zmtp2-jeromq"
VERSION=0.3.6
SHA1=8e6936d98d940b337f77907c13c096f7d9f3f369
mkdir -p "$OUT"
jar="$OUT/jeromq-$VERSION.jar"
if ! echo "$SHA1  $jar" | sha1sum -c --status 2>/dev/null; then
  curl -sfL --retry 3 -o "$jar.tmp" \
    "https://repo1.maven.org/maven2/org/zeromq/jeromq/$VERSION/jeromq-$VERSION.jar"
  echo "$SHA1  $jar.tmp" | sha1sum -c --status || { echo "zmtp2-jeromq: bad checksum" >&2; exit 1; }
  mv "$jar.tmp" "$jar"
fi
javac -d "$OUT" -cp "$jar" "$HERE/OldPeer.java"
if [ "$PREFIX" = system ]; then
  gcc -O1 -Wall -Werror -std=c11 -D_GNU_SOURCE "$HERE/zmtp2_side.c" -o "$OUT/side" -lzmq
else
  gcc -O1 -Wall -Werror -std=c11 -D_GNU_SOURCE -I"$PREFIX/include" "$HERE/zmtp2_side.c" \
    -o "$OUT/side" -L"$PREFIX/lib" -Wl,-rpath,"$PREFIX/lib" -lzmq
fi
peer() { timeout 30 java -cp "$OUT:$jar" OldPeer "$@"; }
failed=0
# expect FILE LINE...: the lines appear in FILE in this order (each a prefix of a line).
expect() {
  local file=$1; shift
  if ! python3 - "$file" "$@" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
at = 0
for want in sys.argv[2:]:
    while at < len(lines) and not lines[at].startswith(want):
        at += 1
    if at == len(lines):
        sys.exit(f"missing {want!r}")
    at += 1
PY
  then
    echo "--- $file:" >&2; cat "$file" >&2; failed=$((failed + 1))
  fi
}
# side ROLE: starts the library's side in the background; waits for its endpoint.
side() {
  : > "$OUT/$1.out"
  timeout 30 "$OUT/side" "$1" "$2" > "$OUT/$1.out" 2>&1 &
  side_pid=$!
  for _ in $(seq 100); do grep -q '^ready' "$OUT/$1.out" && break; sleep 0.05; done
  endpoint=$(awk '/^ready/{print $2; exit}' "$OUT/$1.out")
}

side pull "tcp://127.0.0.1:*"; peer push "$endpoint" > "$OUT/push.peer"; wait $side_pid || true
expect "$OUT/pull.out" "frame m0 more" "frame tail" "frame m1 more" "frame tail" \
  "event 0x800 32" "event 0x200"
if grep -q '^event 0x1000' "$OUT/pull.out"; then echo "HANDSHAKE_SUCCEEDED for a 2.0 peer" >&2; failed=$((failed + 1)); fi

peer pull "tcp://127.0.0.1" > "$OUT/pull.peer" & peer_pid=$!
for _ in $(seq 200); do grep -q '^ready' "$OUT/pull.peer" && break; sleep 0.05; done
"$OUT/side" push "tcp://127.0.0.1:$(awk '/^ready/{print $2; exit}' "$OUT/pull.peer")" > "$OUT/push.out"
wait $peer_pid || true
expect "$OUT/pull.peer" "got hello" "got hello"

side pub "tcp://127.0.0.1:*"; peer sub "$endpoint" > "$OUT/sub.peer"; wait $side_pid || true
expect "$OUT/sub.peer" "got hello" "got hello"
if grep -q 'other' "$OUT/sub.peer"; then echo "SUB got an unsubscribed topic" >&2; failed=$((failed + 1)); fi

side router "tcp://127.0.0.1:*"; peer dealer "$endpoint" > "$OUT/dealer.peer"; wait $side_pid || true
expect "$OUT/router.out" "routing id old" "frame m0 more" "frame tail"
expect "$OUT/dealer.peer" "got back"

if [ "$failed" = 0 ]; then echo "zmtp2-jeromq: 4 cases passed ($PREFIX)"; else echo "zmtp2-jeromq: $failed check(s) failed ($PREFIX)"; exit 1; fi
