#!/usr/bin/env bash
# CI smoke test of the fuzz targets: builds every target with the nightly
# toolchain and runs each for a fixed number of inputs, starting from its seed
# corpus (fuzz/seeds/<target>). Prints one line per target and a final
#   fuzz-smoke: N passed, M failed
# and exits non-zero if any target failed or could not be built.
#
# Needs the nightly toolchain (never skipped: missing nightly is a failure) and
# cargo-fuzz (installed with `cargo install cargo-fuzz --locked` if missing).
#
# Environment: FUZZ_RUNS (default 2000), FUZZ_SANITIZER (default address;
# "none" builds and runs faster).
set -u
cd "$(dirname "$0")"

RUNS="${FUZZ_RUNS:-2000}"
SANITIZER="${FUZZ_SANITIZER:-address}"
start=$(date +%s)

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz-smoke: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
    echo "fuzz-smoke: 0 passed, 1 failed"
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz" >&2
    if ! cargo install cargo-fuzz --locked; then
        echo "fuzz-smoke: cargo-fuzz could not be installed" >&2
        echo "fuzz-smoke: 0 passed, 1 failed"
        exit 2
    fi
fi

targets=$(cargo +nightly fuzz list)
if [ -z "$targets" ]; then
    echo "fuzz-smoke: no fuzz targets found" >&2
    echo "fuzz-smoke: 0 passed, 1 failed"
    exit 2
fi

if ! cargo +nightly fuzz build -s "$SANITIZER"; then
    n=$(echo "$targets" | wc -l)
    echo "fuzz-smoke: build failed"
    echo "fuzz-smoke: 0 passed, $n failed"
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
for t in $targets; do
    mkdir -p "$work/$t"
    seeds=()
    [ -d "seeds/$t" ] && seeds=("seeds/$t")
    t0=$(date +%s)
    # New inputs go to the scratch corpus; the seeds are only read.
    if cargo +nightly fuzz run -s "$SANITIZER" "$t" "$work/$t" "${seeds[@]}" -- \
        -runs="$RUNS" -seed=1 -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        >"$work/$t.log" 2>&1; then
        passed=$((passed + 1))
        echo "fuzz-smoke: $t ok ($RUNS runs, $(( $(date +%s) - t0 ))s)"
    else
        failed=$((failed + 1))
        echo "fuzz-smoke: $t FAILED; last lines of its log:"
        tail -n 40 "$work/$t.log" | sed 's/^/    /'
    fi
done
echo "fuzz-smoke: total $(( $(date +%s) - start ))s"
echo "fuzz-smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
