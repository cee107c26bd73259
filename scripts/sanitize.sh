#!/usr/bin/env bash
# The code that holds ferromq's `unsafe` blocks, under checkers:
# - Miri (undefined behaviour, data races, leaks) on the lock-free SPSC ring, the message
#   body pool and the message representation, through their unit tests;
# - AddressSanitizer on the C ABI crate (every extern "C" function, handle casts,
#   zmq_msg_t layout) through its unit tests, and on the core crate (eventfd, poll,
#   sigmask, getifaddrs, setsockopt, the ring and pool under real threads) through its
#   unit tests and the semantics, hostile-peer and caller-driven I/O (assist) suites
#   (the latter reads large bodies into spare capacity: `Stream::read_append`);
# - ThreadSanitizer on the same suites plus the pattern and option suites (data races
#   between the application threads, the reactor and the rings).
# Needs the nightly toolchain (Miri, -Zsanitizer, rust-src for -Zbuild-std); fails, never
# skips, without it.
# Prints "sanitize: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
# A fresh machine may have nightly without Miri (or no nightly at all): install what is
# missing through rustup; fail, never skip, if that is impossible.
if ! rustup toolchain list 2>/dev/null | grep '^nightly' >/dev/null; then
    rustup toolchain install nightly --profile minimal -c miri,rust-src >&2 || true
fi
if ! rustup toolchain list 2>/dev/null | grep '^nightly' >/dev/null; then
    echo "sanitize: the nightly Rust toolchain is required for Miri and -Zsanitizer=address" >&2
    echo "sanitize: 0 passed, 1 failed"
    exit 1
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
    rustup component add miri rust-src --toolchain nightly >&2 || {
        echo "sanitize: could not install Miri for the nightly toolchain" >&2
        echo "sanitize: 0 passed, 1 failed"
        exit 1
    }
fi
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
    rustup component add rust-src --toolchain nightly >&2 || {
        echo "sanitize: could not install rust-src (needed by -Zbuild-std) for nightly" >&2
        echo "sanitize: 0 passed, 1 failed"
        exit 1
    }
fi
target=x86_64-unknown-linux-gnu
log=$(mktemp)
status=0
echo "== miri: ring, pool, msg, loan, a frame built in its ring slot"
set +e
CARGO_TARGET_DIR="${CARGO_TARGET_DIR_MIRI:-target/miri}" \
    cargo +nightly miri test -p ferromq --lib -- spsc:: pool:: msg:: loan:: pipe::tests::a_copied 2>&1 | tee -a "$log" |
    grep -E "^test result|^error|Undefined Behavior|data race"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
set -e
export RUSTFLAGS="-Zsanitizer=address"
# A small quarantine: the hostile suite bounds RSS, and ASan's default 256 MiB
# quarantine of freed blocks would count against it.
export ASAN_OPTIONS="${ASAN_OPTIONS:-quarantine_size_mb=4}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR_ASAN:-target/asan}"
# cargo test under a sanitizer: $1 = label, $2 = the sanitizer's report line, then cargo's
# arguments. The sanitizer and its target directory come from the environment.
sanitized() {
    local label=$1 report=$2
    shift 2
    echo "== $label: cargo test $*"
    set +e
    cargo +nightly test --release --target "$target" "$@" 2>&1 | tee -a "$log" |
        grep -E "^test result|$report|^SUMMARY|^error"
    local rc=${PIPESTATUS[0]}
    set -e
    [ "$rc" -eq 0 ] || status=1
}
run() { sanitized asan "ERROR: AddressSanitizer" "$@"; }
run -p ferromq-capi --lib
run -p ferromq --lib --test semantics --test hostile --test assist
# ThreadSanitizer: the C ABI's and the core's unit tests, the pattern suite (every socket
# pattern across threads over inproc, tcp and ipc), and the semantics, hostile-peer,
# caller-driven I/O and option suites (application threads against the reactor). The
# standard library is rebuilt instrumented (-Zbuild-std, rust-src): TSan cannot see the
# synchronisation inside an uninstrumented std and would report races that are not there.
tsan() {
    RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR="${CARGO_TARGET_DIR_TSAN:-target/tsan}" \
        TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}" \
        sanitized tsan "WARNING: ThreadSanitizer" -Zbuild-std "$@"
}
tsan -p ferromq-capi --lib
tsan -p ferromq --lib --test patterns --test semantics --test hostile --test assist --test options
passed=$(grep -Eo '^test result: [a-z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
if grep -qE "ERROR: AddressSanitizer|WARNING: ThreadSanitizer" "$log"; then
    status=1
    failed=$((failed + 1))
fi
if [ "$status" -ne 0 ]; then
    # The filtered output above names no test; show what failed (a flake under a
    # sanitizer's slowdown is otherwise undiagnosable once the log is gone).
    grep -E "^test .* FAILED$|panicked at|^---- .* stdout ----$" "$log" | head -40 >&2 || true
fi
rm -f "$log"
echo "sanitize: $passed passed, $failed failed"
exit $status
