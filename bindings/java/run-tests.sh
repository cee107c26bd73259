#!/usr/bin/env bash
# Builds the Java FFM binding and runs its JUnit suite twice: against ferromq
# (dist/lib/libzmq.so.5, or $FERROMQ_LIB) and against Debian's libzmq
# ($LIBZMQ_LIB, default /usr/lib/x86_64-linux-gnu/libzmq.so.5).
# Last line: "java: N passed, M failed" (both runs summed); exit status 1 on any failure.
# ALLOW_MISSING_CURVE=1 reports CURVE tests as skipped (loudly) on a library without CURVE
# instead of failing them.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export JAVA_HOME="${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export PATH="$JAVA_HOME/bin:$PATH"
FERRO="${FERROMQ_LIB:-$ROOT/dist/lib/libzmq.so.5}"
LIBZMQ="${LIBZMQ_LIB:-/usr/lib/x86_64-linux-gnu/libzmq.so.5}"
ALLOW_CURVE="false"; [ "${ALLOW_MISSING_CURVE:-0}" = 1 ] && ALLOW_CURVE="true"
MVN=(mvn -B -q -f "$HERE/pom.xml")

die() { echo "java: $*" >&2; echo "java: 0 passed, 1 failed"; exit 1; }
[ -x "$JAVA_HOME/bin/java" ] || die "JDK 25 not found at $JAVA_HOME"
command -v mvn >/dev/null || die "mvn not found"
[ -f "$FERRO" ] || die "ferromq library not found: $FERRO (run make dist)"
if [ ! -f "$LIBZMQ" ] && [ "$(id -u)" = 0 ] && [ -z "${LIBZMQ_LIB:-}" ]; then
    apt-get install -y -q libzmq3-dev >/dev/null 2>&1 || true
fi
[ -f "$LIBZMQ" ] || die "Debian libzmq not found: $LIBZMQ (apt-get install libzmq3-dev)"

# Maven offline first (fast, no network); online only when the local repository lacks a
# plugin or dependency. On a fresh machine that happens at the build and again at the first
# suite run: surefire and its JUnit provider are resolved only when tests run.
MISSING_RE="offline mode|could not be resolved|Could not resolve|No plugin found"
mvn_offline_first() { # log-file mvn-args...
    local log=$1; shift
    "${MVN[@]}" -o "$@" >"$log" 2>&1 && return 0
    grep -qE "$MISSING_RE" "$log" || return 1
    "${MVN[@]}" "$@" >"$log" 2>&1
}

BUILD_LOG=/tmp/ferromq-java-build.$$
mvn_offline_first "$BUILD_LOG" test-compile \
    || { cat "$BUILD_LOG" >&2; rm -f "$BUILD_LOG"; die "build failed"; }
rm -f "$BUILD_LOG"

REPORTS="$HERE/target/surefire-reports"
run_suite() { # label lib
    rm -rf "${REPORTS:?}/$1"
    echo "java: running JUnit suite on $1 ($2)"
    mvn_offline_first "$HERE/target/test-$1.log" surefire:test -Dferromq.lib="$2" \
        -Dsurefire.label="$1" -Dferromq.allowMissingCurve="$ALLOW_CURVE"
    grep -E "Tests run:.*(FAIL|ERROR)|^\[ERROR\]   " "$HERE/target/test-$1.log" | head -40 >&2 || true
}

run_suite ferromq "$FERRO"
run_suite libzmq "$LIBZMQ"

python3 - "$REPORTS" <<'PY'
import glob, os, sys, xml.etree.ElementTree as ET
root = sys.argv[1]
total_pass = total_fail = 0
for label in ("ferromq", "libzmq"):
    t = f = s = 0
    skipped = []
    files = glob.glob(os.path.join(root, label, "TEST-*.xml"))
    for path in files:
        for case in ET.parse(path).getroot().iter("testcase"):
            t += 1
            if case.find("failure") is not None or case.find("error") is not None:
                f += 1
                print(f"java: [{label}] FAILED {case.get('classname')}.{case.get('name')}")
            elif case.find("skipped") is not None:
                s += 1
                msg = case.find("skipped").get("message") or ""
                skipped.append(f"{case.get('classname')}.{case.get('name')}: {msg}")
    if not files:
        f += 1
        print(f"java: [{label}] no test reports (build or JVM failure; see target/test-{label}.log)")
    p = t - f - s
    print(f"java: [{label}] {t} tests: {p} passed, {f} failed, {s} skipped")
    for line in skipped:
        print(f"java: [{label}] SKIPPED (not yet supported) {line}")
    total_pass += p
    total_fail += f
print(f"java: {total_pass} passed, {total_fail} failed")
sys.exit(1 if total_fail else 0)
PY
