#!/usr/bin/env bash
# Long fuzzing runs, one target after another with one job each (the machine is
# shared): ./long.sh SECONDS [target...]. Corpora accumulate in fuzz/corpus/<t>
# (seeded from fuzz/seeds/<t>), crashes land in fuzz/artifacts/<t>, logs in
# fuzz/logs/<t>.log (one process, i.e. one job, no -jobs: that would move the
# log to fuzz-N.log); a summary line per target (executions, exec/s, cov, ft,
# corpus size, crashes, duration, CPU seconds) is appended to fuzz/logs/summary.tsv.
# Never pause a running fuzzer (SIGSTOP): libFuzzer times units by the clock, so the
# pause is reported as a timeout with a test case that does not reproduce.
# Background use: `setsid nice -n 19 ./long.sh ...` with FUZZ_BACKGROUND=1. With the
# kernel's autogroups, nice alone ranks a process only within its session, so the script
# also lowers its own session's group (then builds and benchmarks elsewhere come first).
set -u
cd "$(dirname "$0")"
if [ -n "${FUZZ_BACKGROUND:-}" ] && [ -w /proc/self/autogroup ]; then
    echo 19 >/proc/self/autogroup
fi
secs="${1:?usage: long.sh SECONDS [target...]}"
shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cargo +nightly fuzz list)
mkdir -p logs
cargo +nightly fuzz build || exit 1
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    seeds=()
    [ -d "seeds/$t" ] && seeds=("seeds/$t")
    t0=$(date +%s)
    /usr/bin/time -f '%U %S' -o "logs/$t.cpu" cargo +nightly fuzz run "$t" "corpus/$t" "${seeds[@]}" -- \
        -max_total_time="$secs" -max_len=4096 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 >"logs/$t.log" 2>&1
    rc=$?
    dur=$(( $(date +%s) - t0 ))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' | tail -1)
    last=$(grep -E '^#[0-9]+' "logs/$t.log" | tail -1)
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
    corpus=$(find "corpus/$t" -type f | wc -l)
    crashes=$(find "artifacts/$t" -type f | wc -l)
    cpu=$(awk 'END { printf "%d", $1 + $2 }' "logs/$t.cpu" 2>/dev/null)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$secs" \
        "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "$corpus" "$crashes" "${dur}s rc=$rc" "cpu=${cpu:-?}s" \
        | tee -a logs/summary.tsv
done
