//! What a connection keeps in memory while its peer has stopped reading: the messages up to
//! the HWM, and only a little encoded output. The encoder takes up to 256 KiB of messages
//! per write; a batch the kernel had no room for used to stay in a buffer of that size (or
//! twice it, grown step by step) for as long as the peer stalled, on top of the HWM's
//! messages (a PUB behind a stopped subscriber: 1.2-1.4x libzmq's RSS).
//!
//! A counting global allocator tracks the live bytes of allocations larger than 64 KiB.
//! With 1 KiB messages nothing else that large is live here: message bodies share pool
//! blocks of exactly 64 KiB (`pool.rs`; hence "larger than"), pipe chunks are a few KiB.
//! One test in this file, so that nothing else runs in the process while it measures. The
//! batch is bounded by the room the kernel reports (`SO_MEMINFO`, Linux 4.7 and later).

mod common;

use common::*;
use ferromq::options::id as opt;
use ferromq::{Context, Error, SocketType};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

/// Allocations above this size are counted.
const LARGE: usize = 64 * 1024;

static LARGE_LIVE: AtomicIsize = AtomicIsize::new(0);

fn note(size: usize, sign: isize) {
    if size > LARGE {
        LARGE_LIVE.fetch_add(sign * size as isize, Ordering::Relaxed);
    }
}

struct Counting;

// SAFETY: forwards to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note(l.size(), 1);
        // SAFETY: forwarded contract.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        note(l.size(), 1);
        // SAFETY: forwarded contract.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let q = unsafe { System.realloc(p, l, n) };
        if !q.is_null() {
            note(l.size(), -1);
            note(n, 1);
        }
        q
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        note(l.size(), -1);
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn a_peer_that_stops_reading_leaves_little_encoded_output_held() {
    const HWM: i32 = 2000;
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_int(opt::SNDHWM, HWM).unwrap();
    let ep = bind_tcp(&push);

    // A raw PULL peer: handshake, then never read again.
    let mut peer = TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    peer.write_all(&zmtp_greeting(b"NULL")).unwrap();
    peer.write_all(&zmtp_ready("PULL")).unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut greeting = [0u8; 64];
    peer.read_exact(&mut greeting).unwrap();

    // Send until the queue and both kernel buffers are full: no room for 300 ms.
    let body = [7u8; 1024];
    let mut sent = 0u64;
    let mut idle_since = Instant::now();
    let deadline = Instant::now() + Duration::from_secs(60);
    while idle_since.elapsed() < Duration::from_millis(300) {
        assert!(Instant::now() < deadline, "never stalled ({sent} sent)");
        match push.send(&body, ferromq::DONTWAIT) {
            Ok(()) => {
                sent += 1;
                idle_since = Instant::now();
            }
            Err(Error::Again) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => panic!("send: {e:?}"),
        }
    }
    assert!(
        sent > HWM as u64,
        "only {sent} messages went out before the stall"
    );

    let held = LARGE_LIVE.load(Ordering::Relaxed);
    eprintln!("{sent} messages sent; {held} bytes live in allocations over 64 KiB");
    assert!(
        held <= 128 * 1024,
        "{held} bytes of allocations over 64 KiB live behind a stalled peer ({sent} sent)"
    );
    drop(peer);
}
