#!/usr/bin/env bash
# Workload A/C side by side, interleaved: perf pair (separate processes, tcp) for
#   C (bench zbench driver, dlopen by path) and Java FFM (perf.sh) on ferromq and libzmq,
#   and JeroMQ (JeromqPerf).
# Usage: perf-compare.sh [SIZE] [THR_COUNT] [LAT_COUNT] [RUNS]   (default 64 1000000 20000 3)
# Needs a zbench binary: $ZBENCH or bench/out/zbench. Prints one line per run and medians;
# appends raw lines to bench/out/java/perf-<stamp>.txt.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export JAVA_HOME="${JAVA_HOME_25:-/usr/lib/jvm/temurin-25-jdk-amd64}"
SIZE="${1:-64}"; THR="${2:-1000000}"; LAT="${3:-20000}"; RUNS="${4:-3}"
FERRO="${FERROMQ_LIB:-$ROOT/dist/lib/libzmq.so.5}"
LIBZMQ="${LIBZMQ_LIB:-/usr/lib/x86_64-linux-gnu/libzmq.so.5}"
ZB="${ZBENCH:-$ROOT/bench/out/zbench}"
OUT="$ROOT/bench/out/java"; mkdir -p "$OUT"
RAW="$OUT/perf-$(date -u +%Y%m%dT%H%M%SZ).txt"
cd "$HERE"
mvn -B -q -o test-compile >/dev/null 2>&1 || mvn -B -q test-compile
CPF="$HERE/target/bench-classpath.txt"
[ -f "$CPF" ] || mvn -B -q -o dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$CPF" >/dev/null
JCP="$HERE/target/test-classes:$HERE/target/classes:$(cat "$CPF")"
PORT=$((20000 + RANDOM % 20000))

num() { python3 -c "import json,sys
for l in sys.stdin:
    l=l.strip()
    if l.startswith('RESULT '): l=l[7:]
    if l.startswith('{'):
        d=json.loads(l); print(d.get('$1', d.get('classic_us', 'nan'))); break
else: print('nan')"; }

run() { # impl kind(thr|lat) -> number
    local impl=$1 kind=$2; PORT=$((PORT + 1)); local ep="tcp://127.0.0.1:$PORT"
    local n=$THR; [ "$kind" = lat ] && n=$LAT
    local L B R M
    case $impl in
        C-ferromq) L=$FERRO;; C-libzmq) L=$LIBZMQ;;
        FFM-ferromq) L=$FERRO;; FFM-libzmq) L=$LIBZMQ;;
    esac
    if [ "$kind" = thr ]; then B=local_thr; R=remote_thr; M=msg_per_s
    else B=local_lat; R=remote_lat; M=latency_us; fi
    case $impl in
        C-*) local first=("$ZB" --lib "$L" "$B" --endpoint "$ep" --size "$SIZE" --count "$n")
             local second=("$ZB" --lib "$L" "$R" --endpoint "$ep" --size "$SIZE" --count "$n")
             [ "$kind" = lat ] && { first+=(--warmup 100); second+=(--warmup 100); } ;;
        FFM-*) local first=(env FERROMQ_LIB="$L" "$HERE/perf.sh" "$B" "$ep" "$SIZE" "$n")
               local second=(env FERROMQ_LIB="$L" "$HERE/perf.sh" "$R" "$ep" "$SIZE" "$n") ;;
        JeroMQ) local j=("$JAVA_HOME/bin/java" -cp "$JCP" org.ferromq.bench.JeromqPerf)
                local first=("${j[@]}" "$B" "$ep" "$SIZE" "$n")
                local second=("${j[@]}" "$R" "$ep" "$SIZE" "$n") ;;
    esac
    local tmp; tmp=$(mktemp)
    timeout 120 "${first[@]}" >"$tmp.1" 2>/dev/null &
    local p1=$!
    sleep 0.5
    timeout 120 "${second[@]}" >"$tmp.2" 2>/dev/null
    wait $p1
    if [ "$kind" = thr ]; then num $M <"$tmp.1"; else num $M <"$tmp.2"; fi
    rm -f "$tmp" "$tmp.1" "$tmp.2"
}

IMPLS=(C-ferromq FFM-ferromq C-libzmq FFM-libzmq JeroMQ)
[ -x "$ZB" ] || IMPLS=(FFM-ferromq FFM-libzmq JeroMQ)
declare -A RES
for r in $(seq 1 "$RUNS"); do
    for kind in thr lat; do
        for impl in "${IMPLS[@]}"; do
            v=$(run "$impl" "$kind")
            RES[$impl.$kind]="${RES[$impl.$kind]:-} $v"
            echo "run $r $kind $impl $v" | tee -a "$RAW"
        done
    done
done
echo "size $SIZE B, tcp, thr count $THR, lat count $LAT, $RUNS runs (median; min..max)" | tee -a "$RAW"
for kind in thr lat; do
    for impl in "${IMPLS[@]}"; do
        python3 -c "import statistics,sys
v=[float(x) for x in sys.argv[3:] if x!='nan']
u='msg/s' if sys.argv[2]=='thr' else 'us one-way'
print(f'{sys.argv[1]:12s} {sys.argv[2]}: ' + (f'{statistics.median(v):,.1f} {u} ({min(v):,.1f}..{max(v):,.1f})' if v else 'FAILED'))" \
            "$impl" "$kind" ${RES[$impl.$kind]} | tee -a "$RAW"
    done
done
echo "raw: $RAW"
