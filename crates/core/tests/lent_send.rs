//! `Socket::send` (and so `zmq_send`) lends large bodies to the library for the duration of
//! the call instead of copying them. The caller may overwrite its buffer the moment the call
//! returns: whatever still holds the message then (a write queue waiting for room, a ring,
//! an inproc peer, a clone for another subscriber, a CURVE encoder) must deliver the bytes
//! as they were at the call. Each test sends from one reused buffer, scribbles over it
//! after every send, and starts reading only later, so most messages are held past their
//! call.

mod common;

use common::*;
use ferromq::options::id as opt;
use ferromq::{Context, Socket, SocketType};
use ferromq_zmtp::curve::KeyPair;
use std::thread;
use std::time::Duration;

/// Sizes across the lending threshold (8 KiB) and past the pool (256 KiB).
const SIZES: [usize; 4] = [8 * 1024 - 1, 8 * 1024, 64 * 1024, 300 * 1024];

/// The body of message `i` of `size` bytes: position and index mixed, so that a body
/// shifted, truncated or taken from another message does not match.
fn body(i: usize, size: usize) -> Vec<u8> {
    (0..size).map(|k| (k * 31 + i * 7) as u8).collect()
}

/// Sends `count` messages of each size from one buffer, overwriting it after each send.
fn send_scribbling(s: &Socket, count: usize) {
    let mut buf = Vec::new();
    for &size in &SIZES {
        for i in 0..count {
            buf.clear();
            buf.extend_from_slice(&body(i, size));
            s.send(&buf, 0).unwrap();
            buf.fill(0xEE);
        }
    }
}

/// Receives what `send_scribbling` sent and checks every byte.
fn expect_all(s: &Socket, count: usize, who: &str) {
    for &size in &SIZES {
        for i in 0..count {
            let m = s
                .recv(0)
                .unwrap_or_else(|e| panic!("{who}: {size} B #{i}: {e:?}"));
            assert_eq!(m.len(), size, "{who}: length of {size} B #{i}");
            assert!(
                m.data() == body(i, size).as_slice(),
                "{who}: {size} B #{i} is not the bytes it was sent with"
            );
        }
    }
}

/// PUSH → PULL over `transport`, the reader starting after a pause.
fn push_pull(bind_ep: &str, curve: bool) {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let push = sock(&ctx, SocketType::Push);
    if curve {
        let server = KeyPair::generate().unwrap();
        let client = KeyPair::generate().unwrap();
        pull.set_int(opt::CURVE_SERVER, 1).unwrap();
        pull.set_option(opt::CURVE_SECRETKEY, &server.secret[..])
            .unwrap();
        push.set_option(opt::CURVE_SERVERKEY, &server.public)
            .unwrap();
        push.set_option(opt::CURVE_PUBLICKEY, &client.public)
            .unwrap();
        push.set_option(opt::CURVE_SECRETKEY, &client.secret[..])
            .unwrap();
    }
    pull.bind(bind_ep).unwrap();
    push.connect(&last_endpoint(&pull)).unwrap();
    let count = 40;
    let reader = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        expect_all(&pull, count, "pull");
    });
    send_scribbling(&push, count);
    reader.join().unwrap();
}

#[test]
fn tcp_bodies_held_past_the_call_keep_their_bytes() {
    push_pull("tcp://127.0.0.1:*", false);
}

#[test]
fn ipc_bodies_held_past_the_call_keep_their_bytes() {
    let path = std::env::temp_dir().join(format!("ferromq-lent-{}.ipc", std::process::id()));
    push_pull(&format!("ipc://{}", path.display()), false);
    let _ = std::fs::remove_file(path);
}

#[test]
fn inproc_bodies_held_past_the_call_keep_their_bytes() {
    push_pull("inproc://lent-send", false);
}

#[test]
fn curve_bodies_held_past_the_call_keep_their_bytes() {
    push_pull("tcp://127.0.0.1:*", true);
}

#[test]
fn every_subscriber_gets_the_bytes_of_the_call() {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    publisher.set_int(opt::SNDHWM, 0).unwrap();
    let ep = bind_tcp(&publisher);
    publisher.bind("inproc://lent-pub").unwrap();
    let subs: Vec<Socket> = [ep.as_str(), ep.as_str(), "inproc://lent-pub"]
        .iter()
        .map(|e| {
            let s = sock(&ctx, SocketType::Sub);
            s.set_int(opt::RCVHWM, 0).unwrap();
            s.set_option(opt::SUBSCRIBE, b"").unwrap();
            s.connect(e).unwrap();
            s
        })
        .collect();
    // Until each subscription has arrived, a PUB drops; wait for a probe on every one.
    loop {
        publisher.send(b"probe", 0).unwrap();
        thread::sleep(Duration::from_millis(20));
        let all = subs.iter().all(|s| {
            let mut got = false;
            while let Ok(m) = s.recv(ferromq::DONTWAIT) {
                got |= m.data() == b"probe";
            }
            got
        });
        if all {
            break;
        }
    }
    for s in &subs {
        while s.recv(ferromq::DONTWAIT).is_ok() {}
    }
    let count = 20;
    let readers: Vec<_> = subs
        .into_iter()
        .enumerate()
        .map(|(k, s)| {
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(200));
                expect_all(&s, count, &format!("sub {k}"));
            })
        })
        .collect();
    send_scribbling(&publisher, count);
    for r in readers {
        r.join().unwrap();
    }
}

/// Message `i` of `size` bytes for the topic test: `body` with topic A (even `i`) or B.
fn with_topic(i: usize, size: usize) -> Vec<u8> {
    let mut b = body(i, size);
    b[0] = if i.is_multiple_of(2) { b'A' } else { b'B' };
    b
}

#[test]
fn one_subscriber_gets_the_lent_bodies_its_topic_matches() {
    let ctx = Context::new();
    let publisher = sock(&ctx, SocketType::Pub);
    publisher.set_int(opt::SNDHWM, 0).unwrap();
    let ep = bind_tcp(&publisher);
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_int(opt::RCVHWM, 0).unwrap();
    sub.set_option(opt::SUBSCRIBE, b"A").unwrap();
    sub.connect(&ep).unwrap();
    // Until the subscription has arrived, a PUB drops; wait for a probe.
    loop {
        publisher.send(b"Aprobe", 0).unwrap();
        thread::sleep(Duration::from_millis(20));
        if sub.recv(ferromq::DONTWAIT).is_ok() {
            break;
        }
    }
    while sub.recv(ferromq::DONTWAIT).is_ok() {}
    // The publisher matches each body where the caller keeps it (no copy); the ones
    // that match are then written or held past the call, the others dropped.
    let count = 20;
    let reader = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        for &size in &SIZES {
            for i in (0..count).step_by(2) {
                let m = sub.recv(0).unwrap();
                assert!(
                    m.data() == with_topic(i, size).as_slice(),
                    "{size} B #{i} is not the bytes it was sent with"
                );
            }
        }
        let end = sub.recv(0).unwrap();
        assert_eq!(end.data(), b"Aend", "a body the topic did not match came");
    });
    let mut buf = Vec::new();
    for &size in &SIZES {
        for i in 0..count {
            buf.clear();
            buf.extend_from_slice(&with_topic(i, size));
            publisher.send(&buf, 0).unwrap();
            buf.fill(b'A');
        }
    }
    publisher.send(b"Aend", 0).unwrap();
    reader.join().unwrap();
}
