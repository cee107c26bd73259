#!/usr/bin/env bash
# Usage: perf.sh ROLE ENDPOINT SIZE COUNT [WARMUP]
#   ROLE: local_thr | remote_thr | local_lat | remote_lat   (see org.ferromq.perf.Perf)
# Runs the Java FFM perf tool on the library named by $FERROMQ_LIB (default: ferromq's
# dist/lib/libzmq.so.5). The measuring role prints one line: RESULT {"msg_per_s": x} or
# RESULT {"latency_us": x}. Builds the classes on first use (Maven, offline if possible).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export JAVA_HOME="${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
LIB="${FERROMQ_LIB:-$HERE/../../dist/lib/libzmq.so.5}"
case "$LIB" in /*) ;; *) LIB="$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")";; esac
CLASSES="$HERE/target/classes"
if [ ! -f "$CLASSES/org/ferromq/perf/Perf.class" ]; then
    (cd "$HERE" && { mvn -B -q -o compile >&2 || mvn -B -q compile >&2; })
fi
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Dferromq.lib="$LIB" \
    ${PERF_JAVA_OPTS:-} -cp "$CLASSES" org.ferromq.perf.Perf "$@"
