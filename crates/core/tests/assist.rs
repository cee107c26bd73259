//! Caller-driven I/O (`io::assist`): application threads write and read their tcp/ipc
//! connections themselves. These tests pin down what must not change when they do: a
//! connection the reactor drops is closed at once even while a receive is blocked on it,
//! nothing is written into a connection whose peer has left, and messages in either
//! direction keep their order and frames whichever thread moved them.

mod common;

use common::*;
use ferromq::options::id as opt;
use ferromq::{event, Context, SocketType, DONTWAIT, POLLIN, POLLOUT, SNDMORE};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A raw ZMTP 3.1 PUSH peer, handshaken with `ep` (a PULL).
fn raw_push(ep: &str) -> TcpStream {
    let mut raw = TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    raw.write_all(&zmtp_greeting(b"NULL")).unwrap();
    raw.write_all(&zmtp_ready("PUSH")).unwrap();
    // The server's greeting and READY.
    let mut buf = [0u8; 64];
    raw.read_exact(&mut buf).unwrap();
    raw
}

#[test]
fn a_dropped_connection_closes_at_once_while_a_receive_blocks_on_it() {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option(opt::MAXMSGSIZE, &10i64.to_ne_bytes())
        .unwrap();
    let mon = Monitor::new(&ctx, &pull, "inproc://assist-drop-mon");
    let ep = bind_tcp(&pull);
    let mut raw = raw_push(&ep);
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    // A receive that blocks (and reads the connection itself while it waits) for longer
    // than the test takes.
    pull.set_int(opt::RCVTIMEO, 4000).unwrap();
    let started = Instant::now();
    let receiver = std::thread::spawn(move || {
        let r = pull.recv(0);
        (r.is_err(), Instant::now(), pull)
    });
    std::thread::sleep(Duration::from_millis(100));
    // A frame above MAXMSGSIZE: the server must drop this connection.
    raw.write_all(&zmtp_message(&[b'z'; 100])).unwrap();
    let mut rest = Vec::new();
    let eof = loop {
        let mut buf = [0u8; 256];
        match raw.read(&mut buf) {
            Ok(0) => break Instant::now(),
            Ok(n) => rest.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break Instant::now(),
            Err(e) => panic!("no end of stream from the server: {e}"),
        }
    };
    let (failed, returned, pull) = receiver.join().unwrap();
    assert!(failed, "nothing valid was sent");
    assert!(
        eof < returned,
        "the peer saw the close only after the blocked receive gave up ({:?} vs {:?})",
        eof - started,
        returned - started
    );
    drop((pull, mon));
    ctx.term().unwrap();
}

#[test]
fn a_send_after_the_peer_left_waits_for_the_reconnect() {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_tcp(&pull);
    let push = sock(&ctx, SocketType::Push);
    push.set_int(opt::RECONNECT_IVL, 20).unwrap();
    let mon = Monitor::new(&ctx, &push, "inproc://assist-left-mon");
    push.connect(&ep).unwrap();
    push.send(b"one", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"one");
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    // The peer goes away; once its end is seen, a message sent now (written from this
    // thread if it were still connected) must wait for the next connection.
    drop(pull);
    mon.wait_for(event::DISCONNECTED, 2000);
    push.send(b"two", 0).unwrap();
    let pull = sock(&ctx, SocketType::Pull);
    pull.bind(&ep).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"two");
    drop((push, pull, mon));
    ctx.term().unwrap();
}

#[test]
fn a_send_right_after_the_peer_dropped_us_goes_to_the_next_connection() {
    // The peer drops the connection with our bytes unread (its end then reports a reset,
    // not an end of stream) and this thread sends at once, before the I/O thread has read
    // that: the message must not be written into the dead connection from this thread but
    // wait for the reconnect, as libzmq's queue keeps it. Small and large bodies (large
    // ones are written from where they are) over ipc and tcp.
    for ep in ["ipc://@ferromq-assist-drop", "tcp://127.0.0.1:*"] {
        let ctx = Context::new();
        let pull = sock(&ctx, SocketType::Pull);
        pull.set_option(opt::MAXMSGSIZE, &100_000i64.to_ne_bytes())
            .unwrap();
        let pull_mon = Monitor::new(&ctx, &pull, "inproc://assist-drop-mon");
        pull.bind(ep).unwrap();
        let ep = last_endpoint(&pull);
        let push = sock(&ctx, SocketType::Push);
        push.set_int(opt::RECONNECT_IVL, 10).unwrap();
        push.connect(&ep).unwrap();
        let oversized = vec![b'o'; 100_001];
        for round in 0..4u8 {
            for len in [3usize, 16 * 1024, 64 * 1024] {
                pull_mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
                push.send(&oversized, 0).unwrap();
                pull_mon.wait_for(event::DISCONNECTED, 2000);
                let body = vec![round ^ (len as u8); len];
                push.send(&body, 0).unwrap();
                let got = pull.recv(0).unwrap_or_else(|e| {
                    panic!("{ep}: round {round}, {len} bytes sent after the drop: lost ({e:?})")
                });
                assert_eq!(got.data(), &body[..], "{ep}: round {round}, {len} bytes");
            }
        }
        drop((push, pull, pull_mon));
        ctx.term().unwrap();
    }
}

#[test]
fn ping_pong_keeps_frames_and_order_over_tcp_and_ipc() {
    for ep in ["tcp://127.0.0.1:*", "ipc://@ferromq-assist-pingpong"] {
        let ctx = Context::new();
        let router = sock(&ctx, SocketType::Router);
        router.bind(ep).unwrap();
        let ep = last_endpoint(&router);
        let dealer = sock(&ctx, SocketType::Dealer);
        dealer.connect(&ep).unwrap();
        for i in 0u32..2000 {
            // Sizes across inline, pooled and shared bodies.
            let body = vec![(i % 251) as u8; (i as usize * 37) % 3000];
            dealer.send(&i.to_be_bytes(), SNDMORE).unwrap();
            dealer.send(&body, 0).unwrap();
            let parts = router.recv_multipart(0).unwrap();
            assert_eq!(parts.len(), 3, "routing id + 2 frames");
            assert_eq!(parts[1].data(), i.to_be_bytes());
            assert_eq!(parts[2].data(), &body[..]);
            router.send(parts[0].data(), SNDMORE).unwrap();
            router.send(parts[2].data(), 0).unwrap();
            assert_eq!(dealer.recv(0).unwrap().data(), &body[..], "reply {i}");
        }
        drop((dealer, router));
        ctx.term().unwrap();
    }
}

#[test]
fn a_burst_then_silence_is_delivered_in_full() {
    // The first message of a burst is written by the sender; the rest go to the I/O
    // thread's batch. Nothing may be left behind when the sender then goes quiet.
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_tcp(&pull);
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    push.send(b"warm", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"warm");
    for round in 0..20u32 {
        for i in 0..(round * 13 + 1) {
            push.send(&i.to_le_bytes(), 0).unwrap();
        }
        for i in 0..(round * 13 + 1) {
            assert_eq!(
                pull.recv(0).unwrap().data(),
                i.to_le_bytes(),
                "round {round}"
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    drop((push, pull));
    ctx.term().unwrap();
}

#[test]
fn large_bodies_cross_tcp_and_ipc_intact_in_place() {
    // Bodies of 8 KiB and more are written with writev from the message and read
    // straight into their own allocation (no zeroing, then no copy); mixed with small
    // frames so the 4 KiB read after a large body and multipart boundaries are crossed.
    for ep in ["tcp://127.0.0.1:*", "ipc://@ferromq-assist-large"] {
        let ctx = Context::new();
        let pull = sock(&ctx, SocketType::Pull);
        pull.bind(ep).unwrap();
        let ep = last_endpoint(&pull);
        let push = sock(&ctx, SocketType::Push);
        push.connect(&ep).unwrap();
        let sizes = [
            8 * 1024,
            3,
            70_000,
            8 * 1024 - 1,
            300_000,
            0,
            1 << 20,
            9_000,
            64,
        ];
        let body = |i: usize, n: usize| -> Vec<u8> {
            (0..n).map(|j| (j.wrapping_mul(31) ^ i) as u8).collect()
        };
        let sender = std::thread::spawn(move || {
            for round in 0..20 {
                for (i, &n) in sizes.iter().enumerate() {
                    let more = i % 3 != 2;
                    let flags = if more { SNDMORE } else { 0 };
                    push.send(&body(i + round, n), flags).unwrap();
                }
                push.send(b"end", 0).unwrap();
            }
            push
        });
        for round in 0..20 {
            for (i, &n) in sizes.iter().enumerate() {
                let m = pull.recv(0).unwrap();
                assert_eq!(m.len(), n, "round {round} frame {i}");
                assert!(
                    m.data() == &body(i + round, n)[..],
                    "round {round} frame {i}"
                );
                assert_eq!(m.more(), i % 3 != 2, "round {round} frame {i}");
            }
            assert_eq!(pull.recv(0).unwrap().data(), b"end");
        }
        let push = sender.join().unwrap();
        drop((push, pull));
        ctx.term().unwrap();
    }
}

#[test]
fn replies_larger_than_the_socket_buffer_complete_both_ways() {
    // 1 MiB is more than a Unix socket's default send buffer (208 KiB) and than a fresh
    // tcp one: every send leaves output waiting for room, which the waiting thread then
    // writes itself while it polls for its reply. A write left to nobody stalls the pair
    // (RCVTIMEO fails the test instead of hanging it).
    for ep in ["tcp://127.0.0.1:*", "ipc://@ferromq-assist-room"] {
        let ctx = Context::new();
        let rep = sock(&ctx, SocketType::Rep);
        rep.bind(ep).unwrap();
        let ep = last_endpoint(&rep);
        let req = sock(&ctx, SocketType::Req);
        req.connect(&ep).unwrap();
        for s in [&req, &rep] {
            s.set_int(opt::RCVTIMEO, 5000).unwrap();
        }
        let echo = std::thread::spawn(move || {
            for _ in 0..100 {
                let m = rep.recv(0).unwrap();
                rep.send(m.data(), 0).unwrap();
            }
            rep
        });
        for i in 0..100u32 {
            let body: Vec<u8> = (0..1 << 20).map(|j: u32| (j ^ i) as u8).collect();
            req.send(&body, 0).unwrap();
            let back = req.recv(0).unwrap();
            assert!(back.data() == &body[..], "round trip {i} over {ep}");
        }
        let rep = echo.join().unwrap();
        drop((req, rep));
        ctx.term().unwrap();
    }
}

/// `Socket::wait_events` (one-socket `zmq_poll`), then a non-blocking receive, as a poll
/// loop does: the waiting thread reads and writes the connection itself in between.
fn poll_recv(s: &ferromq::Socket) -> ferromq::Msg {
    let ev = s
        .wait_events(POLLIN, Some(Instant::now() + Duration::from_secs(5)))
        .unwrap();
    assert!(ev & POLLIN != 0, "nothing to receive within 5 s");
    s.recv(DONTWAIT).unwrap()
}

#[test]
fn a_poll_wait_returns_on_arrival_and_on_its_deadline() {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_tcp(&pull);
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    let deadline = Instant::now() + Duration::from_millis(50);
    assert_eq!(
        pull.wait_events(POLLIN, Some(deadline)).unwrap() & POLLIN,
        0
    );
    assert!(Instant::now() >= deadline, "returned before its deadline");
    // PULL cannot send: POLLOUT alone never becomes ready.
    let soon = Instant::now() + Duration::from_millis(20);
    assert_eq!(pull.wait_events(POLLOUT, Some(soon)).unwrap(), 0);
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        push.send(b"late", 0).unwrap();
        push
    });
    assert_eq!(pull.wait_events(POLLIN, None).unwrap() & POLLIN, POLLIN);
    assert_eq!(pull.recv(DONTWAIT).unwrap().data(), b"late");
    let push = sender.join().unwrap();
    drop((push, pull));
    ctx.term().unwrap();
}

#[test]
fn poll_then_receive_moves_large_messages_both_ways_over_tcp_and_ipc() {
    // As `replies_larger_than_the_socket_buffer_complete_both_ways`, with both threads
    // waiting in `wait_events` instead of a blocking receive; two frames each way (a
    // ROUTER's routing id), so a claim ends between the frames of one message too.
    for ep in ["tcp://127.0.0.1:*", "ipc://@ferromq-assist-poll"] {
        let ctx = Context::new();
        let router = sock(&ctx, SocketType::Router);
        router.bind(ep).unwrap();
        let ep = last_endpoint(&router);
        let dealer = sock(&ctx, SocketType::Dealer);
        dealer.connect(&ep).unwrap();
        let echo = std::thread::spawn(move || {
            for _ in 0..50 {
                let id = poll_recv(&router);
                let body = router.recv(0).unwrap();
                router.send(id.data(), SNDMORE).unwrap();
                router.send(body.data(), 0).unwrap();
            }
            router
        });
        for i in 0..50u32 {
            let body: Vec<u8> = (0..(1 << 20) - i * 4099).map(|j| (j ^ i) as u8).collect();
            dealer.send(&body, 0).unwrap();
            let back = poll_recv(&dealer);
            assert!(back.data() == &body[..], "round trip {i} over {ep}");
        }
        let router = echo.join().unwrap();
        drop((dealer, router));
        ctx.term().unwrap();
    }
}

/// A PULL over tcp, its monitor (on `mon_ep`), and a raw PUSH handshaken with it.
fn pull_with_raw_push(ctx: &Context, mon_ep: &str) -> (ferromq::Socket, Monitor, TcpStream) {
    let pull = sock(ctx, SocketType::Pull);
    let mon = Monitor::new(ctx, &pull, mon_ep);
    let ep = bind_tcp(&pull);
    let raw = raw_push(&ep);
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    (pull, mon, raw)
}

/// Sends a ZMTP PING on `raw` and reads until the PONG (panics, naming `from`, if the
/// stream ends or times out first).
fn ping_expect_pong(raw: &mut TcpStream, from: &str) {
    raw.write_all(&[0x04, 7, 4, b'P', b'I', b'N', b'G', 0, 0])
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    while !got.windows(5).any(|w| w == b"\x04PONG") {
        match raw.read(&mut buf) {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            r => panic!("no PONG from {from}: {r:?}"),
        }
    }
}

#[test]
fn input_left_to_a_receiver_that_stopped_is_still_read() {
    // Once the receiving thread takes part of a batch and keeps the rest queued, the I/O
    // thread leaves further input to it (it reads the connection itself when its queue
    // runs empty). A receiver that then stops receiving must not leave the connection
    // unread: a PING behind that input is answered, and nothing queued or sent is lost.
    let ctx = Context::new();
    let (pull, mon, mut raw) = pull_with_raw_push(&ctx, "inproc://assist-left-mon");
    for i in 0..3u8 {
        raw.write_all(&zmtp_message(&[b'a', i])).unwrap();
    }
    pull.set_int(opt::RCVTIMEO, 2000).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"a\x00");
    // The receiver holds two queued messages and does not receive; the I/O thread reads
    // this batch (the receiver is not waiting for it) ...
    std::thread::sleep(Duration::from_millis(50));
    for i in 0..3u8 {
        raw.write_all(&zmtp_message(&[b'b', i])).unwrap();
    }
    std::thread::sleep(Duration::from_millis(50));
    // ... and leaves what comes next to the receiver, which is not coming back.
    ping_expect_pong(&mut raw, "a connection whose receiver stopped");
    raw.write_all(&zmtp_message(b"c0")).unwrap();
    let mut all = Vec::new();
    for _ in 0..6 {
        all.push(pull.recv(0).unwrap().data().to_vec());
    }
    assert_eq!(
        all,
        [&b"a\x01"[..], b"a\x02", b"b\x00", b"b\x01", b"b\x02", b"c0"]
    );
    drop((raw, pull, mon));
    ctx.term().unwrap();
}

/// Polls `cond` every millisecond for up to `secs` seconds.
fn within(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    cond()
}

/// Writes `n` messages `body` to `raw` (a clone), one every 0.4 ms: a receiver waits for
/// each, briefly (as when messages stream in).
fn paced_writer(raw: &TcpStream, n: usize, body: &'static [u8]) -> std::thread::JoinHandle<()> {
    let mut w = raw.try_clone().unwrap();
    // Each message in a segment of its own now, not held back by Nagle for the peer's
    // (delayed, up to 40 ms) ACK of the one before.
    w.set_nodelay(true).unwrap();
    std::thread::spawn(move || {
        for _ in 0..n {
            std::thread::sleep(Duration::from_micros(400));
            w.write_all(&zmtp_message(body)).unwrap();
        }
    })
}

#[test]
fn a_claim_left_after_a_receive_goes_back_to_the_io_thread() {
    // A receive loop that waits for each message leaves its claim in place between its
    // receives (checked right after each receive: most of 40 see it). Once the
    // thread stays away the I/O thread takes the descriptor back and reads it (a PING is
    // answered without another receive); a receive that finds nothing, events() without
    // input and ZMQ_FD end the claim at once.
    let ctx = Context::new();
    let (pull, mon, mut raw) = pull_with_raw_push(&ctx, "inproc://assist-idle-claim-mon");
    pull.set_int(opt::RCVTIMEO, 3000).unwrap();
    let writer = paced_writer(&raw, 40, b"m");
    let mut left = 0;
    for _ in 0..40 {
        assert_eq!(pull.recv(0).unwrap().data(), b"m");
        left += usize::from(pull.idle_claims() == 1);
    }
    writer.join().unwrap();
    assert!(left > 0, "no receive left its claim in place");
    assert!(
        within(3, || pull.idle_claims() == 0),
        "the I/O thread did not take the descriptor back"
    );
    ping_expect_pong(&mut raw, "a connection whose receiver is away");
    let writer = paced_writer(&raw, 60, b"n");
    // A message may come early (this thread stalled): then the round checks nothing.
    let (mut got, mut checked) = (0, 0);
    while got < 60 {
        assert_eq!(pull.recv(0).unwrap().data(), b"n");
        got += 1;
        if pull.idle_claims() != 1 {
            continue;
        }
        let kind = checked % 3;
        match kind {
            0 => {
                if let Ok(m) = pull.recv(DONTWAIT) {
                    assert_eq!(m.data(), b"n");
                    got += 1;
                    continue;
                }
            }
            1 if pull.events().unwrap() & POLLIN != 0 => continue,
            1 => {}
            _ => assert!(pull.fd() >= 0),
        }
        assert_eq!(
            pull.idle_claims(),
            0,
            "check {kind} (0: EAGAIN, 1: events, 2: fd)"
        );
        checked += 1;
    }
    assert!(checked > 0, "no receive left a claim to end");
    writer.join().unwrap();
    // What comes next makes ZMQ_FD readable without a receive (only the I/O thread's
    // reads do that).
    let fd = pull.fd();
    assert_eq!(pull.events().unwrap() & POLLIN, 0);
    raw.write_all(&zmtp_message(b"late")).unwrap();
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut pfd, 1, 3000) };
    assert_eq!(
        n, 1,
        "ZMQ_FD not readable for a message that came after events()"
    );
    assert_eq!(pull.recv(DONTWAIT).unwrap().data(), b"late");
    drop((raw, pull, mon));
    ctx.term().unwrap();
}
