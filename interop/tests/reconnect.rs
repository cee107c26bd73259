//! Reconnection across the two libraries: a connecting socket keeps its endpoint while the
//! bound peer (socket and context) is destroyed and re-created on the same address.
//!
//! Each scenario runs with ferromq connecting to a restarting libzmq peer, libzmq
//! connecting to a restarting ferromq peer, and libzmq on both sides (`reference`).

use ferromq_interop::{
    configure, monitor, parts, show, wait_event, zmq, Errno, Harness, Lib, LibZmq, Peer, Sock,
    SocketType, Transport, ZmqContext,
};
use std::time::{Duration, Instant};
use SocketType::*;

/// A context created for one incarnation of the bound peer.
enum Ctx {
    Ferro(ferromq::Context),
    Zmq(ZmqContext),
}

/// One incarnation of the bound peer: its own context and socket.
struct Bound {
    peer: Peer,
    ctx: Ctx,
}

impl Bound {
    /// Creates a context and a socket of `kind` from `lib` and binds it to `ep`, retrying
    /// EADDRINUSE for up to 3 s (the previous incarnation's port may still be held).
    fn start(lib: Lib, kind: SocketType, ep: &str) -> Bound {
        let (sock, ctx): (Sock, Ctx) = match lib {
            Lib::Ferro => {
                let c = ferromq::Context::new();
                let s = c.socket(kind).expect("ferromq socket");
                (Box::new(s), Ctx::Ferro(c))
            }
            Lib::Zmq => {
                let c = LibZmq::get().ctx_new();
                let s = c.socket(kind).expect("libzmq socket");
                (Box::new(s), Ctx::Zmq(c))
            }
        };
        configure(sock.as_ref());
        let peer = Peer::new(sock, kind);
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            match peer.s.bind(ep) {
                Ok(()) => break,
                Err(Errno(libc::EADDRINUSE)) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(e) => panic!("{peer}: bind {ep}: {e:?}"),
            }
        }
        Bound { peer, ctx }
    }

    fn endpoint(&self) -> String {
        self.peer.s.last_endpoint().expect("LAST_ENDPOINT")
    }

    /// Closes the socket and terminates the context (bounded: a hanging term fails).
    fn stop(self) {
        let Bound { peer, ctx } = self;
        let name = peer.to_string();
        drop(peer);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            match ctx {
                Ctx::Ferro(c) => c.term().expect("ferromq ctx term"),
                Ctx::Zmq(c) => c.term(),
            }
            let _ = tx.send(());
        });
        rx.recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("{name}: context termination hung for 5 s"));
    }
}

/// The endpoint the bound peer listens on for its whole life: for tcp the first
/// incarnation picks a free port, later ones reuse it.
fn first_endpoint(h: &Harness, t: Transport) -> String {
    match t {
        Transport::Tcp => "tcp://127.0.0.1:*".to_string(),
        Transport::Ipc => h.bind_endpoint(Transport::Ipc),
    }
}

fn connecting(h: &Harness, lib: Lib, kind: SocketType, ep: &str) -> Peer {
    let c = h.peer(lib, kind);
    c.s.set_int(zmq::RECONNECT_IVL, 100).expect("RECONNECT_IVL");
    c.s.connect(ep)
        .unwrap_or_else(|e| panic!("{c}: connect {ep}: {e:?}"));
    c
}

fn numbered(prefix: &str, n: usize) -> Vec<Vec<Vec<u8>>> {
    (0..n)
        .map(|i| parts(&[prefix.as_bytes(), format!("{i}").as_bytes()]))
        .collect()
}

/// PUSH (`push_lib`, connecting) to PULL (`pull_lib`, bound and restarted).
fn push_to_restarted_pull(push_lib: Lib, pull_lib: Lib, t: Transport) {
    let h = Harness::new();
    let first = Bound::start(pull_lib, Pull, &first_endpoint(&h, t));
    let ep = first.endpoint();
    let push = connecting(&h, push_lib, Push, &ep);
    let mon = monitor(&h, push_lib, push.s.as_ref());

    for m in numbered("before", 3) {
        push.send(&m);
        first.peer.expect(&m, &push);
    }
    first.stop();
    // Messages sent before the connecting side noticed would go to the dead connection.
    wait_event(&mon, zmq::EVENT_DISCONNECTED);

    // Messages sent while the peer is away wait in the connecting side's pipe.
    for m in numbered("while-down", 3) {
        push.s
            .send_parts(&m)
            .unwrap_or_else(|e| panic!("{push}: send while peer is down: {e:?}"));
    }

    let second = Bound::start(pull_lib, Pull, &ep);
    for m in numbered("while-down", 3) {
        second.peer.expect(&m, &push);
    }
    for m in numbered("after", 3) {
        push.send(&m);
        second.peer.expect(&m, &push);
    }
    second.stop();
}

/// SUB (`sub_lib`, connecting) to PUB (`pub_lib`, bound and restarted): the subscriber
/// must subscribe again on the new connection.
fn sub_to_restarted_pub(pub_lib: Lib, sub_lib: Lib, t: Transport) {
    let h = Harness::new();
    let first = Bound::start(pub_lib, Pub, &first_endpoint(&h, t));
    let ep = first.endpoint();
    let sub = h.peer(sub_lib, Sub);
    sub.s
        .set_int(zmq::RECONNECT_IVL, 100)
        .expect("RECONNECT_IVL");
    sub.s.set_bytes(zmq::SUBSCRIBE, b"t").expect("SUBSCRIBE");
    sub.s.connect(&ep).expect("connect");

    first.peer.await_subscription_with(&sub, b"t-probe-1");
    first.peer.send_strs(&[b"t", b"first"]);
    first.peer.send_strs(&[b"x", b"not subscribed"]);
    first.peer.send_strs(&[b"t", b"first-end"]);
    assert_eq!(sub.recv_skipping(&[b"t-probe-1"]), parts(&[b"t", b"first"]));
    sub.expect(&parts(&[b"t", b"first-end"]), &first.peer);
    first.stop();

    let second = Bound::start(pub_lib, Pub, &ep);
    second.peer.await_subscription_with(&sub, b"t-probe-2");
    second.peer.send_strs(&[b"x", b"not subscribed"]);
    second.peer.send_strs(&[b"t", b"second"]);
    let got = sub.recv_skipping(&[b"t-probe-1", b"t-probe-2"]);
    assert_eq!(
        got.iter().map(|p| show(p)).collect::<Vec<_>>(),
        ["t", "second"],
        "{} -> {sub} after the publisher restarted",
        second.peer
    );
    second.stop();
}

/// DEALER (`dealer_lib`, connecting, with a routing id) to ROUTER (`router_lib`, bound
/// and restarted): the new ROUTER sees the same routing id and can reply.
fn dealer_to_restarted_router(dealer_lib: Lib, router_lib: Lib, t: Transport) {
    let h = Harness::new();
    let first = Bound::start(router_lib, Router, &first_endpoint(&h, t));
    let ep = first.endpoint();
    let dealer = h.peer(dealer_lib, Dealer);
    dealer
        .s
        .set_int(zmq::RECONNECT_IVL, 100)
        .expect("RECONNECT_IVL");
    dealer
        .s
        .set_bytes(zmq::ROUTING_ID, b"dealer-7")
        .expect("ROUTING_ID");
    dealer.s.connect(&ep).expect("connect");

    dealer.send_strs(&[b"hello"]);
    first.peer.expect(&parts(&[b"dealer-7", b"hello"]), &dealer);
    first.peer.send_strs(&[b"dealer-7", b"reply"]);
    dealer.expect(&parts(&[b"reply"]), &first.peer);
    first.stop();

    let second = Bound::start(router_lib, Router, &ep);
    second
        .peer
        .s
        .set_int(zmq::ROUTER_MANDATORY, 1)
        .expect("ROUTER_MANDATORY");
    // The dealer's routing id becomes routable once it has reconnected.
    second
        .peer
        .send_routed(b"dealer-7", &parts(&[b"welcome back"]));
    dealer.expect(&parts(&[b"welcome back"]), &second.peer);
    dealer.send_strs(&[b"again"]);
    second
        .peer
        .expect(&parts(&[b"dealer-7", b"again"]), &dealer);
    second.stop();
}

macro_rules! restart_tests {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_connects_libzmq_restarts_tcp() {
                $scenario(Lib::Ferro, Lib::Zmq, Transport::Tcp);
            }
            #[test]
            fn ferro_connects_libzmq_restarts_ipc() {
                $scenario(Lib::Ferro, Lib::Zmq, Transport::Ipc);
            }
            #[test]
            fn libzmq_connects_ferro_restarts_tcp() {
                $scenario(Lib::Zmq, Lib::Ferro, Transport::Tcp);
            }
            #[test]
            fn libzmq_connects_ferro_restarts_ipc() {
                $scenario(Lib::Zmq, Lib::Ferro, Transport::Ipc);
            }
            #[test]
            fn reference_libzmq_both_tcp() {
                $scenario(Lib::Zmq, Lib::Zmq, Transport::Tcp);
            }
        }
    )*};
}

/// Adapts a (bound lib, connecting lib) scenario to the (connecting, bound) order.
fn sub_scenario(sub_lib: Lib, pub_lib: Lib, t: Transport) {
    sub_to_restarted_pub(pub_lib, sub_lib, t);
}

restart_tests! {
    push_to_restarted_pull => push_to_restarted_pull;
    sub_to_restarted_pub => sub_scenario;
    dealer_to_restarted_router => dealer_to_restarted_router;
}
