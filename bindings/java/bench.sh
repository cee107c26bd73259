#!/usr/bin/env bash
# Quick JMH run of seed 004's ROUTER->ROUTER throughput benchmark for
#   ferromq-FFM (this binding on dist/lib/libzmq.so.5 or $FERROMQ_LIB),
#   libzmq-FFM  (this binding on Debian's libzmq, or $LIBZMQ_LIB) and
#   JeroMQ      (org.zeromq:jeromq, pure Java),
# in one JMH invocation. Writes bench/out/java/jmh-<UTC timestamp>.json (-rf json) and
# prints + writes a summary (msg/s = ops/s x messageCount) next to it.
# Env: JMH_ARGS to override the iteration settings (default: -wi 3 -w 2s -i 5 -r 2s -f 1),
#      JMH_FILTER (regex, default: all Router benchmarks), SIZES (default 64,1500,65536).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export JAVA_HOME="${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
FERRO="${FERROMQ_LIB:-$ROOT/dist/lib/libzmq.so.5}"
LIBZMQ="${LIBZMQ_LIB:-/usr/lib/x86_64-linux-gnu/libzmq.so.5}"
OUT="$ROOT/bench/out/java"
mkdir -p "$OUT"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
JSON="$OUT/jmh-$STAMP.json"

cd "$HERE"
mvn -B -q -o test-compile >/dev/null 2>&1 || mvn -B -q test-compile
CPF="$HERE/target/bench-classpath.txt"
mvn -B -q -o dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$CPF" \
    >/dev/null 2>&1 || mvn -B -q dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$CPF"
CP="$HERE/target/test-classes:$HERE/target/classes:$(cat "$CPF")"

set +e
"$JAVA_HOME/bin/java" -cp "$CP" org.openjdk.jmh.Main \
    ${JMH_ARGS:--wi 3 -w 2s -i 5 -r 2s -f 1} \
    -p messageSize="${SIZES:-64,1500,65536}" -p hwm="${HWMS:-default,0}" \
    -jvmArgsAppend "--enable-native-access=ALL-UNNAMED -Dbench.lib.ferromq=$FERRO -Dbench.lib.libzmq=$LIBZMQ" \
    -rf json -rff "$JSON" "${JMH_FILTER:-org.ferromq.bench.*RouterBenchmark}" 2>&1 | tee "$OUT/jmh-$STAMP.log"
set -e
# Results may be published: paths inside the repository relative to its root.
[ -f "$JSON" ] && sed -i "s|$ROOT/||g" "$JSON"

python3 - "$JSON" "$OUT/summary-$STAMP.md" "${FERRO#"$ROOT"/}" "$LIBZMQ" "${SIZES:-64,1500,65536}" "${HWMS:-default,0}" <<'PY'
import json, os, sys
src, dst, ferro, libzmq, sizes, hwms = sys.argv[1:7]
rows = {}
for r in (json.load(open(src)) if os.path.getsize(src) else []):
    p = r["params"]
    name = ("JeroMQ" if "Jeromq" in r["benchmark"]
            else {"ferromq": "ferromq-FFM", "libzmq": "libzmq-FFM"}[p["lib"]])
    n = int(p["messageCount"])
    m = r["primaryMetric"]
    err = m["scoreError"] if isinstance(m["scoreError"], (int, float)) else float("nan")
    rows[(p["hwm"], int(p["messageSize"]), name)] = (m["score"] * n, err * n)
impls = ["ferromq-FFM", "libzmq-FFM", "JeroMQ"]
lines = [f"ROUTER->ROUTER tcp, msg/s (JMH ops/s x messageCount; +- = JMH 99.9% error;",
         f"FAILED = the trial threw, e.g. a send stalled 10 s: see the .log)",
         f"ferromq = {ferro}; libzmq = {libzmq}", "",
         "| HWM | Size | " + " | ".join(impls) + " | ferromq/JeroMQ | ferromq/libzmq |",
         "|---|---|" + "---|" * (len(impls) + 2)]
for hwm in hwms.split(","):
    for size in [int(x) for x in sizes.split(",")]:
        cells = []
        for i in impls:
            v = rows.get((hwm, size, i))
            cells.append(f"{v[0]:,.0f} ± {v[1]:,.0f}" if v else "FAILED")
        f = rows.get((hwm, size, "ferromq-FFM")); j = rows.get((hwm, size, "JeroMQ"))
        l = rows.get((hwm, size, "libzmq-FFM"))
        cells.append(f"{f[0]/j[0]:.2f}x" if f and j else "-")
        cells.append(f"{f[0]/l[0]:.2f}x" if f and l else "-")
        lines.append(f"| {hwm} | {size} | " + " | ".join(cells) + " |")
text = "\n".join(lines) + "\n"
open(dst, "w").write(text)
print(text)
print(f"json: {src}\nsummary: {dst}")
PY
