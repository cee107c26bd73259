//! A thread streaming large messages over tcp writes whole segments and holds the few
//! bytes past the last one for its next write (`io::tail_hold`). Whatever is held must
//! still arrive when the stream stops, also if the sending thread then makes no call at
//! all, and the held bytes of a lent body must be the ones of the call that sent it.

mod common;

use common::*;
use ferromq::options::id as opt;
use ferromq::{Context, Socket, SocketType};
use std::thread;
use std::time::Duration;

const SIZE: usize = 64 * 1024;

/// The body of message `i`: position and index mixed (a shifted, cut or swapped tail
/// does not match).
fn body(i: usize) -> Vec<u8> {
    (0..SIZE).map(|k| (k * 13 + i * 101) as u8).collect()
}

/// A PUSH connected over tcp to a PULL, with one message through to make sure.
fn connected_pair(ctx: &Context) -> (Socket, Socket) {
    let pull = sock(ctx, SocketType::Pull);
    let push = sock(ctx, SocketType::Push);
    let ep = bind_tcp(&pull);
    push.connect(&ep).unwrap();
    pull.set_int(opt::RCVTIMEO, 5000).unwrap();
    push.send(b"hello", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"hello");
    (push, pull)
}

/// Sends `count` messages from one buffer, scribbling over it after each send.
fn stream(push: &Socket, first: usize, count: usize) {
    let mut buf = Vec::with_capacity(SIZE);
    for i in first..first + count {
        buf.clear();
        buf.extend_from_slice(&body(i));
        push.send(&buf, 0).unwrap();
        buf.fill(0xA5);
    }
}

#[test]
fn a_stream_that_stops_with_bytes_held_is_delivered_whole() {
    let ctx = Context::new();
    let (push, pull) = connected_pair(&ctx);
    // Short bursts with pauses between: the reader keeps up, so the kernel takes each
    // write at once (a full socket sends through the I/O thread, which holds nothing).
    const BURST: usize = 8;
    // Reads until nothing more comes for a while; checks every byte.
    pull.set_int(opt::RCVTIMEO, 1500).unwrap();
    let reader = thread::spawn(move || {
        let mut got = 0;
        while let Ok(m) = pull.recv(0) {
            assert!(
                m.data() == body(got).as_slice(),
                "message {got} is not what was sent"
            );
            got += 1;
        }
        got
    });
    // Bursts until one ends with bytes held, then no call on any socket: only the I/O
    // thread's timer can write those bytes.
    let mut sent = 0;
    let mut writes = 0;
    let mut ended_held = false;
    for _ in 0..300 {
        stream(&push, sent, BURST);
        sent += BURST;
        let (held_writes, holding) = push.held_tail();
        writes = held_writes;
        if holding > 0 {
            ended_held = true;
            break;
        }
        thread::sleep(Duration::from_millis(5));
    }
    assert!(
        writes > 0,
        "no write held bytes back: the stream was never seen"
    );
    assert!(ended_held, "no burst ended with bytes held");
    assert_eq!(
        reader.join().unwrap(),
        sent,
        "the last message's held bytes never came"
    );
}

#[test]
fn a_request_is_never_held_back() {
    // Each request answers a reply: never part of a stream, even if the reply was
    // already queued when the requester asked for it.
    let ctx = Context::new();
    let rep = sock(&ctx, SocketType::Rep);
    rep.set_int(opt::RCVTIMEO, 5000).unwrap();
    let req = sock(&ctx, SocketType::Req);
    let ep = bind_tcp(&rep);
    req.connect(&ep).unwrap();
    let server = thread::spawn(move || {
        for _ in 0..200 {
            let m = rep.recv(0).unwrap();
            rep.send(m.data(), 0).unwrap();
        }
        rep
    });
    for i in 0..200 {
        req.send(&body(i), 0).unwrap();
        let m = req.recv(0).unwrap();
        assert!(m.data() == body(i).as_slice());
    }
    let rep = server.join().unwrap();
    assert_eq!(req.held_tail().0, 0, "a request was held back");
    assert_eq!(rep.held_tail().0, 0, "a reply was held back");
}
