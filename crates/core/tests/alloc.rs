//! Zero heap allocations per message in steady state, for bodies up to 32 bytes (inline)
//! on inproc and tcp, and for pooled bodies (64 bytes on both, 1 KiB on inproc).
//!
//! A counting global allocator wraps the system one. Everything runs in ONE test function
//! (the harness runs tests of a file on parallel threads, which would pollute the global
//! count). Each scenario warms up (pipes, ring chunks, pool blocks, buffers reach their
//! steady size), then sends and receives 10,000 messages and asserts that no allocation
//! happened: on the calling thread, and for tcp in the whole process (the I/O thread too).

use ferromq::{Context, Socket, SocketType};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static GLOBAL: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static LOCAL: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    GLOBAL.fetch_add(1, Ordering::Relaxed);
    // try_with: the allocator may run while thread-locals are being torn down.
    let _ = LOCAL.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded contract.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded contract.
        unsafe { System.realloc(p, l, n) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn local() -> u64 {
    LOCAL.with(|c| c.get())
}

fn global() -> u64 {
    GLOBAL.load(Ordering::Relaxed)
}

const N: usize = 10_000;

/// Sends and receives `n` messages of `body` one at a time on this thread.
fn ping(tx: &Socket, rx: &Socket, body: &[u8], n: usize) {
    for _ in 0..n {
        tx.send(body, 0).unwrap();
        let m = rx.recv(0).unwrap();
        assert_eq!(m.len(), body.len());
    }
}

/// Sends `n` messages in bursts of `burst`, then receives them (queue depth varies).
fn bursts(tx: &Socket, rx: &Socket, body: &[u8], n: usize, burst: usize) {
    for _ in 0..n / burst {
        for _ in 0..burst {
            tx.send(body, 0).unwrap();
        }
        for _ in 0..burst {
            assert_eq!(rx.recv(0).unwrap().len(), body.len());
        }
    }
}

fn pair(ctx: &Context, kind_tx: SocketType, kind_rx: SocketType, ep: &str) -> (Socket, Socket) {
    let rx = ctx.socket(kind_rx).unwrap();
    let tx = ctx.socket(kind_tx).unwrap();
    rx.set_int(ferromq::options::id::RCVTIMEO, 5000).unwrap();
    rx.bind(ep).unwrap();
    let ep = match rx.get_option(ferromq::options::id::LAST_ENDPOINT).unwrap() {
        ferromq::OptionValue::Str(e) => e.trim_end_matches('\0').to_string(),
        _ => unreachable!(),
    };
    tx.connect(&ep).unwrap();
    (tx, rx)
}

fn inproc(ctx: &Context, size: usize, name: &str) {
    let (tx, rx) = pair(
        ctx,
        SocketType::Push,
        SocketType::Pull,
        &format!("inproc://{name}"),
    );
    let body = vec![7u8; size];
    ping(&tx, &rx, &body, 2 * N);
    bursts(&tx, &rx, &body, 2 * N, 100);
    let before = local();
    ping(&tx, &rx, &body, N);
    bursts(&tx, &rx, &body, N, 100);
    let allocs = local() - before;
    assert!(
        allocs <= tolerated(size),
        "inproc {size} B: {allocs} allocations for {} messages",
        2 * N
    );
}

/// Allocations tolerated in a measured run: none for inline bodies; for pooled ones, a
/// new 8 KiB pool block now and then is possible when timing puts one more block in flight
/// than during the warm-up (amortised, not per message: a block holds ~100 bodies).
fn tolerated(size: usize) -> u64 {
    if size <= ferromq::INLINE_CAP {
        0
    } else {
        2
    }
}

fn tcp(ctx: &Context, size: usize) {
    let (tx, rx) = pair(ctx, SocketType::Push, SocketType::Pull, "tcp://127.0.0.1:*");
    let body = vec![9u8; size];
    ping(&tx, &rx, &body, 2 * N);
    bursts(&tx, &rx, &body, 2 * N, 100);
    let (before_local, before_global) = (local(), global());
    ping(&tx, &rx, &body, N);
    bursts(&tx, &rx, &body, N, 100);
    let (l, g) = (local() - before_local, global() - before_global);
    assert!(
        l <= tolerated(size),
        "tcp {size} B: {l} allocations on the caller's thread"
    );
    assert!(
        g <= tolerated(size),
        "tcp {size} B: {g} allocations in the process (I/O thread included)"
    );
}

#[test]
fn steady_state_send_recv_does_not_allocate() {
    let ctx = Context::new();
    for size in [0, 1, 32] {
        inproc(&ctx, size, &format!("alloc-{size}"));
    }
    // Pooled bodies: past the inline capacity, within the pool.
    for size in [64, 1024] {
        inproc(&ctx, size, &format!("alloc-{size}"));
    }
    for size in [0, 32] {
        tcp(&ctx, size);
    }
    // Pooled on both sides (the I/O thread copies bodies under 1 KiB into its pool).
    tcp(&ctx, 64);
}
