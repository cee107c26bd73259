#!/usr/bin/env bash
# bench/instr.sh -- instructions per message, ferromq vs libzmq.
#
# Runs `zbench thr --pattern pushpull --size 64` (two threads in one process,
# library-default HWM) over tcp and inproc for each library, twice per
# measurement: with SMALL and with LARGE messages.  Instructions counted for
# the whole process (every thread, the library's I/O threads included):
#
#     instr/msg = (I(LARGE) - I(SMALL)) / (LARGE - SMALL)
#
# so start-up, connection set-up, the sync probe and teardown cancel out.
# Each measurement is repeated REPS times; the median pair difference is
# reported.  Counter: `perf stat -e instructions:u` (user space; kernel
# instructions -- syscalls, the TCP stack -- are reported separately when
# the machine allows instructions:k).  Without a working perf, falls back to
# `valgrind --tool=callgrind` (deterministic, user space only; it serializes
# threads, so spin/poll loops execute a different number of times than on
# real cores -- compare libraries under the same tool only).  Under callgrind
# ferromq runs with FERROMQ_SPIN_US=0 (no spinning before a blocking wait:
# a serialized spinner would count its whole time slice as instructions);
# libzmq does not spin and ignores the variable.
#
# usage: bench/instr.sh [--lib LABEL=PATH]... [--tool perf|callgrind]
#                       [--small N] [--large N] [--reps N] [--size B]
#                       [--transports "tcp inproc"] [--driver PATH]
# default libraries: ferromq=dist/lib/libzmq.so.5, libzmq=Debian's.
# Prints a markdown table on stdout; progress on stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
libs=()
tool=""
small=""
large=""
reps=3
size=64
transports="tcp inproc"
driver="${ZBENCH:-}"

while [ $# -gt 0 ]; do
    case "$1" in
    --lib) libs+=("$2"); shift 2 ;;
    --tool) tool="$2"; shift 2 ;;
    --small) small="$2"; shift 2 ;;
    --large) large="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --transports) transports="$2"; shift 2 ;;
    --driver) driver="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit 0 ;;
    *) echo "instr.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

if [ ${#libs[@]} -eq 0 ]; then
    [ -e "$repo/dist/lib/libzmq.so.5" ] && libs+=("ferromq=$repo/dist/lib/libzmq.so.5")
    [ -e /usr/lib/x86_64-linux-gnu/libzmq.so.5 ] && libs+=("libzmq=/usr/lib/x86_64-linux-gnu/libzmq.so.5")
fi
[ ${#libs[@]} -gt 0 ] || { echo "instr.sh: no library (use --lib LABEL=PATH)" >&2; exit 2; }

if [ -z "$driver" ]; then
    make -s -C "$here" >&2
    driver="$here/out/zbench"
fi
[ -x "$driver" ] || { echo "instr.sh: no driver at $driver" >&2; exit 2; }

# Pick the counter.
kernel=0
if [ -z "$tool" ]; then
    if command -v perf >/dev/null && perf stat -x, -e instructions:u -o /dev/null true 2>/dev/null \
        && perf stat -x, -e instructions:u -o /dev/stdout true 2>/dev/null | grep '^[0-9]' >/dev/null; then
        tool=perf
    elif command -v valgrind >/dev/null; then
        tool=callgrind
    else
        echo "instr.sh: neither a working 'perf stat -e instructions:u' nor valgrind" >&2
        exit 2
    fi
fi
if [ "$tool" = perf ] && perf stat -x, -e instructions:k -o /dev/stdout true 2>/dev/null | grep '^[0-9]' >/dev/null; then
    kernel=1
fi
if [ "$tool" = perf ]; then
    : "${small:=200000}" "${large:=1200000}"
else
    : "${small:=2000}" "${large:=22000}"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count LIBPATH TRANSPORT N -> "user kernel" instructions of one zbench run
count() {
    local lib=$1 t=$2 n=$3 out=$tmp/out.json
    local cmd=("$driver" --lib "$lib" --timeout 600 thr --pattern pushpull
               --transport "$t" --size "$size" --count "$n" --hwm default)
    if [ "$tool" = perf ]; then
        local ev=instructions:u
        [ $kernel = 1 ] && ev=instructions:u,instructions:k
        perf stat -x, -e "$ev" -o "$tmp/perf.csv" -- "${cmd[@]}" >"$out" 2>"$tmp/err"
        grep -q '"ok":true' "$out" || { cat "$tmp/err" "$out" >&2; exit 1; }
        awk -F, '$3 ~ /^instructions:u/ {u=$1} $3 ~ /^instructions:k/ {k=$1}
                 END {if (u == "" || u !~ /^[0-9]+$/) exit 1; print u, (k == "" ? "-" : k)}' "$tmp/perf.csv"
    else
        FERROMQ_SPIN_US=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null -- "${cmd[@]}" >"$out" 2>"$tmp/err"
        grep -q '"ok":true' "$out" || { cat "$tmp/err" "$out" >&2; exit 1; }
        awk '/Collected :/ {print $NF, "-"; found=1} END {if (!found) exit 1}' "$tmp/err"
    fi
}

# cputime LIBPATH TRANSPORT N -> CPU ms (all threads, user + kernel) of one real run
# (perf's task-clock software counter, available where hardware counters are not).
cputime() {
    local lib=$1 t=$2 n=$3 out=$tmp/out.json
    perf stat -x, -e task-clock -o "$tmp/clock.csv" -- "$driver" --lib "$lib" thr \
        --pattern pushpull --transport "$t" --size "$size" --count "$n" --hwm default \
        >"$out" 2>"$tmp/err"
    grep -q '"ok":true' "$out" || { cat "$tmp/err" "$out" >&2; exit 1; }
    awk -F, '$3 ~ /^task-clock/ {print $1}' "$tmp/clock.csv"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) {print "-"; exit}
    print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

labels=()
declare -A user kern
for spec in "${libs[@]}"; do
    label=${spec%%=*}
    path=${spec#*=}
    labels+=("$label")
    for t in $transports; do
        : >"$tmp/u" ; : >"$tmp/k"
        for r in $(seq "$reps"); do
            echo "instr.sh: $label $t ${size}B run $r/$reps ($tool: $small and $large messages)" >&2
            read -r us ks < <(count "$path" "$t" "$small")
            read -r ul kl < <(count "$path" "$t" "$large")
            awk -v a="$us" -v b="$ul" -v n=$((large - small)) 'BEGIN {printf "%.1f\n", (b - a) / n}' >>"$tmp/u"
            if [ "$ks" != "-" ]; then
                awk -v a="$ks" -v b="$kl" -v n=$((large - small)) 'BEGIN {printf "%.1f\n", (b - a) / n}' >>"$tmp/k"
            fi
        done
        user[$label,$t]=$(median <"$tmp/u")
        kern[$label,$t]=$(median <"$tmp/k")
        echo "instr.sh:   $label $t: user $(tr '\n' ' ' <"$tmp/u")-> ${user[$label,$t]}" >&2
    done
done

base=${labels[${#labels[@]}-1]}
echo "Instructions per message: PUSH/PULL, ${size} B, two threads in one process,"
echo "library-default HWM; (I($large) - I($small)) / $((large - small)), median of $reps;"
echo "counter: $([ "$tool" = perf ] && echo 'perf stat -e instructions:u (user space, all threads)' || echo 'valgrind --tool=callgrind (user space, threads serialized, FERROMQ_SPIN_US=0)')."
echo
hdr="| Transport | Size |"
sep="|---|---|"
for l in "${labels[@]}"; do hdr+=" $l instr/msg (user) |"; sep+="---|"; done
[ ${#labels[@]} -gt 1 ] && { hdr+=" Diff vs $base |"; sep+="---|"; }
if [ $kernel = 1 ]; then
    for l in "${labels[@]}"; do hdr+=" $l kernel instr/msg |"; sep+="---|"; done
fi
echo "$hdr"
echo "$sep"
for t in $transports; do
    row="| $t | ${size}B |"
    for l in "${labels[@]}"; do row+=" ${user[$l,$t]} |"; done
    if [ ${#labels[@]} -gt 1 ]; then
        c=${user[${labels[0]},$t]} b=${user[$base,$t]}
        row+=" $(awk -v c="$c" -v b="$b" 'BEGIN {if (b > 0) printf "%+.1f%%", (c / b - 1) * 100; else print "—"}') |"
    fi
    if [ $kernel = 1 ]; then
        for l in "${labels[@]}"; do row+=" ${kern[$l,$t]} |"; done
    fi
    echo "$row"
done
echo
echo "Diff = ${labels[0]} / $base - 1 on user-space instructions: negative = ${labels[0]} executes fewer."

# CPU time per message from real runs: what the instruction count cannot show when it
# comes from callgrind (serialized threads change the I/O pattern: every message is
# written and read on its own) and what it leaves out (kernel work, cache misses).
if command -v perf >/dev/null && perf stat -x, -e task-clock -o /dev/stdout true 2>/dev/null | grep task-clock >/dev/null; then
    csmall=200000 clarge=2200000
    declare -A cpu
    for spec in "${libs[@]}"; do
        label=${spec%%=*} path=${spec#*=}
        for t in $transports; do
            : >"$tmp/c"
            for r in $(seq "$reps"); do
                echo "instr.sh: $label $t ${size}B CPU time run $r/$reps" >&2
                a=$(cputime "$path" "$t" "$csmall")
                b=$(cputime "$path" "$t" "$clarge")
                awk -v a="$a" -v b="$b" -v n=$((clarge - csmall)) 'BEGIN {printf "%.0f\n", (b - a) * 1e6 / n}' >>"$tmp/c"
            done
            cpu[$label,$t]=$(median <"$tmp/c")
        done
    done
    echo
    echo "CPU time per message: the same workload run for real, perf's task-clock (all"
    echo "threads, user + kernel, spinning included), (T($clarge) - T($csmall)) / $((clarge - csmall)), median of $reps."
    echo
    hdr="| Transport | Size |" sep="|---|---|"
    for l in "${labels[@]}"; do hdr+=" $l CPU ns/msg |"; sep+="---|"; done
    [ ${#labels[@]} -gt 1 ] && { hdr+=" Diff vs $base |"; sep+="---|"; }
    echo "$hdr"; echo "$sep"
    for t in $transports; do
        row="| $t | ${size}B |"
        for l in "${labels[@]}"; do row+=" ${cpu[$l,$t]} |"; done
        if [ ${#labels[@]} -gt 1 ]; then
            c=${cpu[${labels[0]},$t]} b=${cpu[$base,$t]}
            row+=" $(awk -v c="$c" -v b="$b" 'BEGIN {if (b > 0) printf "%+.1f%%", (c / b - 1) * 100; else print "—"}') |"
        fi
        echo "$row"
    done
fi
