//! Connection life cycle across the two libraries: LINGER delivering queued messages when
//! the sender closes, long streams of small messages (many frames per read), request/reply
//! round trips, and ZMTP heartbeats (PING/PONG) keeping an idle connection up.
//!
//! Scenarios run with ferromq in the role under test against libzmq, the reverse, and
//! libzmq on both sides (`reference`).

use ferromq_interop::{
    configure, parts, pattern, show, zmq, Harness, Lib, LibZmq, Peer, Sock, SocketType, Transport,
};
use std::time::{Duration, Instant};
use SocketType::*;

const HEARTBEAT_IVL: i32 = 75;
const HEARTBEAT_TIMEOUT: i32 = 77;

/// Generates the library combinations for a scenario `fn(lib_under_test, peer_lib)`.
macro_rules! combos {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_vs_libzmq() {
                $scenario(Lib::Ferro, Lib::Zmq);
            }
            #[test]
            fn libzmq_vs_ferro() {
                $scenario(Lib::Zmq, Lib::Ferro);
            }
            #[test]
            fn reference_libzmq_both() {
                $scenario(Lib::Zmq, Lib::Zmq);
            }
        }
    )*};
}

combos! {
    linger_delivers_after_close_connecting => linger_connecting;
    linger_delivers_after_close_bound => linger_bound;
    linger_delivers_to_a_pair_after_close => linger_pair;
    stream_of_small_messages => stream_of_small_messages;
    many_request_reply_round_trips => many_round_trips;
    heartbeats_keep_idle_connection => heartbeats_keep_idle_connection;
}

/// A socket in a context of its own, so the context can be terminated independently.
enum Own {
    Ferro(ferromq::Context),
    Zmq(ferromq_interop::ZmqContext),
}

fn own_socket(lib: Lib, kind: SocketType) -> (Peer, Own) {
    let (s, ctx): (Sock, Own) = match lib {
        Lib::Ferro => {
            let c = ferromq::Context::new();
            (Box::new(c.socket(kind).expect("socket")), Own::Ferro(c))
        }
        Lib::Zmq => {
            let c = LibZmq::get().ctx_new();
            (Box::new(c.socket(kind).expect("socket")), Own::Zmq(c))
        }
    };
    configure(s.as_ref());
    (Peer::new(s, kind), ctx)
}

/// Closes `p` and terminates its context; fails if that takes more than 8 s.
fn close_and_term(p: Peer, ctx: Own) {
    let name = p.to_string();
    drop(p);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        match ctx {
            Own::Ferro(c) => c.term().expect("ferromq term"),
            Own::Zmq(c) => c.term(),
        }
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(8))
        .unwrap_or_else(|_| panic!("{name}: context termination did not finish in 8 s"));
}

const LINGER_COUNT: usize = 200;

fn linger_message(i: usize) -> Vec<Vec<u8>> {
    vec![format!("{i}").into_bytes(), pattern(16 * 1024, i as u64)]
}

/// `sender_lib`'s PUSH (or `kinds`' sender) queues messages and is closed at once (LINGER
/// 5000) with its context terminated; every message must still reach `receiver_lib`'s
/// PULL (or `kinds`' receiver), read after the sender's connection is gone.
fn linger(sender_lib: Lib, receiver_lib: Lib, sender_binds: bool) {
    linger_with(sender_lib, receiver_lib, sender_binds, (Push, Pull));
}

fn linger_with(
    sender_lib: Lib,
    receiver_lib: Lib,
    sender_binds: bool,
    kinds: (SocketType, SocketType),
) {
    let h = Harness::new();
    let pull = h.peer(receiver_lib, kinds.1);
    let (push, ctx) = own_socket(sender_lib, kinds.0);
    push.s.set_int(zmq::LINGER, 5000).expect("LINGER");
    if sender_binds {
        let ep = h.bind(push.s.as_ref(), Transport::Tcp);
        pull.s.connect(&ep).expect("connect");
    } else {
        let ep = h.bind(pull.s.as_ref(), Transport::Tcp);
        push.s.connect(&ep).expect("connect");
    }
    // Wait for the connection so that a bound PUSH has somewhere to queue.
    push.send(&parts(&[b"hello"]));
    pull.expect(&parts(&[b"hello"]), &push);
    let push_name = push.to_string();
    for i in 0..LINGER_COUNT {
        push.send(&linger_message(i));
    }
    close_and_term(push, ctx);
    for i in 0..LINGER_COUNT {
        let got = pull.s.recv_parts(0).unwrap_or_else(|e| {
            panic!("{pull}: message {i} of {LINGER_COUNT} lost after {push_name} closed: {e:?}")
        });
        ferromq_interop::assert_parts(
            &got,
            &linger_message(i),
            &format!("{push_name} (closed) -> {pull}"),
        );
    }
}

fn linger_connecting(sender_lib: Lib, receiver_lib: Lib) {
    linger(sender_lib, receiver_lib, false);
}

fn linger_bound(sender_lib: Lib, receiver_lib: Lib) {
    linger(sender_lib, receiver_lib, true);
}

/// A PAIR reads what its peer queued before it left (ferromq dropped it with the pipe).
fn linger_pair(sender_lib: Lib, receiver_lib: Lib) {
    linger_with(sender_lib, receiver_lib, false, (Pair, Pair));
}

/// 20 000 messages of 0 to 299 bytes from `sender_lib` to `receiver_lib`: many frames
/// per network read, frames split across reads.
fn stream_of_small_messages(sender_lib: Lib, receiver_lib: Lib) {
    const N: usize = 20_000;
    let h = Harness::new();
    let pull = h.peer(receiver_lib, Pull);
    let push = h.peer(sender_lib, Push);
    let ep = h.bind(pull.s.as_ref(), Transport::Tcp);
    push.s.connect(&ep).expect("connect");
    let body = |i: usize| pattern(i % 300, i as u64);
    // Every 7th frame continues into the next one (the last frame never does).
    let has_more = |i: usize| i % 7 == 0 && i + 1 < N;
    let (push_name, pull_name) = (push.to_string(), pull.to_string());
    // Send from another thread so that neither side's HWM can stall the test.
    let sender = std::thread::spawn(move || {
        for i in 0..N {
            let more = if has_more(i) { zmq::SNDMORE } else { 0 };
            push.s
                .send(&body(i), more)
                .unwrap_or_else(|e| panic!("{push_name}: send {i}: {e:?}"));
        }
        push
    });
    for i in 0..N {
        let (got, more) = pull
            .s
            .recv(0)
            .unwrap_or_else(|e| panic!("{pull_name}: recv {i}: {e:?}"));
        assert_eq!(more, has_more(i), "{pull_name}: MORE flag of frame {i}");
        if got != body(i) {
            panic!(
                "{pull_name}: frame {i} ({} bytes, want {}) corrupted",
                got.len(),
                i % 300
            );
        }
    }
    let _push = sender.join().expect("sender thread");
}

fn many_round_trips(req_lib: Lib, rep_lib: Lib) {
    let h = Harness::new();
    let rep = h.peer(rep_lib, Rep);
    let req = h.peer(req_lib, Req);
    let ep = h.bind(rep.s.as_ref(), Transport::Tcp);
    req.s.connect(&ep).expect("connect");
    let start = Instant::now();
    for i in 0..2000u32 {
        let q = i.to_le_bytes().to_vec();
        req.send(&[q.clone(), b"q".to_vec()]);
        rep.expect(&[q.clone(), b"q".to_vec()], &req);
        rep.send(std::slice::from_ref(&q));
        req.expect(&[q], &rep);
    }
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{req} <-> {rep}: 2000 round trips took {:?}",
        start.elapsed()
    );
}

/// `hb_lib`'s DEALER heartbeats every 50 ms and gives up on a silent peer after 1 s;
/// `peer_lib`'s ROUTER must answer the PINGs, and `hb_lib` must accept the PONGs and the
/// peer's own PINGs, so that an idle 1.5 s keeps the same connection (same routing id).
/// (The timeout is generous so that a loaded machine's stall is not a silent peer.)
fn heartbeats_keep_idle_connection(hb_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let router = h.peer(peer_lib, Router);
    router.s.set_int(HEARTBEAT_IVL, 60).expect("HEARTBEAT_IVL");
    router
        .s
        .set_int(HEARTBEAT_TIMEOUT, 1000)
        .expect("HEARTBEAT_TIMEOUT");
    let ep = h.bind(router.s.as_ref(), Transport::Tcp);
    let dealer = h.peer(hb_lib, Dealer);
    dealer.s.set_int(HEARTBEAT_IVL, 50).expect("HEARTBEAT_IVL");
    dealer
        .s
        .set_int(HEARTBEAT_TIMEOUT, 1000)
        .expect("HEARTBEAT_TIMEOUT");
    dealer.s.connect(&ep).expect("connect");

    dealer.send_strs(&[b"first"]);
    let m1 = router.recv();
    assert_eq!(m1.len(), 2, "{router}: {} parts", m1.len());
    std::thread::sleep(Duration::from_millis(1500));
    dealer.send_strs(&[b"second"]);
    let m2 = router.recv();
    assert_eq!(show(&m2[1]), "second");
    assert_eq!(
        show(&m2[0]),
        show(&m1[0]),
        "{router} sees a new routing id after an idle second: the heartbeating \
         connection from {dealer} was dropped and re-established"
    );
    router.send(&[m2[0].clone(), b"reply".to_vec()]);
    dealer.expect(&parts(&[b"reply"]), &router);
}
