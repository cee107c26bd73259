//! Every valid socket pairing between ferromq and libzmq, over tcp and ipc, with each
//! library on the binding side, exchanging the standard multipart message (parts of 0 B
//! to 1 MiB) checked byte for byte.
//!
//! Test names read `<ferromq type>_vs_<libzmq type>::<transport>_<who binds>`. The
//! `reference` module runs the same scenarios libzmq against libzmq, which validates the
//! scenarios themselves.

use ferromq_interop::{
    assert_parts, message, show, with_envelope, zmq, Harness, Lib, LibZmq, Peer, SocketType,
    Transport,
};
use SocketType::*;

fn symmetric(x: &Peer, y: &Peer) {
    x.send(&message(1));
    y.expect(&message(1), x);
    y.send(&message(2));
    x.expect(&message(2), y);
    x.send(&message(3));
    y.expect(&message(3), x);
}

fn push_pull(push: &Peer, pull: &Peer) {
    push.send(&message(1));
    push.send(&message(2));
    pull.expect(&message(1), push);
    pull.expect(&message(2), push);
}

fn req_rep(req: &Peer, rep: &Peer) {
    for round in 0..2 {
        req.send(&message(10 + round));
        rep.expect(&message(10 + round), req);
        rep.send(&message(20 + round));
        req.expect(&message(20 + round), rep);
    }
}

fn req_router(req: &Peer, router: &Peer) {
    let mut first_id = None;
    for round in 0..2 {
        req.send(&message(10 + round));
        let got = router.recv();
        assert!(
            got.len() >= 2,
            "{router}: envelope missing: {} parts",
            got.len()
        );
        let id = got[0].clone();
        assert!(!id.is_empty(), "{router}: empty routing id from {req}");
        assert!(
            got[1].is_empty(),
            "{router}: REQ delimiter not empty: {}",
            show(&got[1])
        );
        assert_parts(
            &got[2..],
            &message(10 + round),
            &format!("{req} -> {router}"),
        );
        if let Some(first) = &first_id {
            assert_eq!(&id, first, "{router}: routing id of {req} changed");
        }
        first_id = Some(id.clone());
        router.send(&with_envelope(&[&id, b""], &message(20 + round)));
        req.expect(&message(20 + round), router);
    }
}

fn dealer_rep(dealer: &Peer, rep: &Peer) {
    for round in 0..2 {
        dealer.send(&with_envelope(&[b""], &message(10 + round)));
        rep.expect(&message(10 + round), dealer);
        rep.send(&message(20 + round));
        dealer.expect(&with_envelope(&[b""], &message(20 + round)), rep);
    }
}

fn dealer_router(dealer: &Peer, router: &Peer) {
    for round in 0..2 {
        dealer.send(&message(10 + round));
        let got = router.recv();
        assert!(
            !got.is_empty() && !got[0].is_empty(),
            "{router}: no routing id"
        );
        let id = got[0].clone();
        assert_parts(
            &got[1..],
            &message(10 + round),
            &format!("{dealer} -> {router}"),
        );
        router.send(&with_envelope(&[&id], &message(20 + round)));
        dealer.expect(&message(20 + round), router);
    }
}

fn router_router(connecting: &Peer, c_id: &[u8], bound: &Peer, b_id: &[u8]) {
    connecting.send_routed(b_id, &message(10));
    bound.expect(&with_envelope(&[c_id], &message(10)), connecting);
    bound.send(&with_envelope(&[c_id], &message(20)));
    connecting.expect(&with_envelope(&[b_id], &message(20)), bound);
}

fn pub_sub(publisher: &Peer, sub: &Peer) {
    publisher.await_subscription(sub);
    publisher.send(&message(1));
    publisher.send(&message(2));
    let got = sub.recv_skipping(&[]);
    assert_parts(&got, &message(1), &format!("{publisher} -> {sub}"));
    sub.expect(&message(2), publisher);
}

fn xpub_sub(xpub: &Peer, sub: &Peer) {
    // SUB subscribed to "" before connecting: XPUB must report it as "\x01".
    xpub.expect_subscription(sub, b"\x01");
    xpub.send(&message(1));
    sub.expect(&message(1), xpub);
}

fn pub_xsub(publisher: &Peer, xsub: &Peer) {
    xsub.send(&[vec![1u8]]);
    pub_sub(publisher, xsub);
}

fn xpub_xsub(xpub: &Peer, xsub: &Peer) {
    xsub.send(&[vec![1u8]]);
    xpub.expect_subscription(xsub, b"\x01");
    xpub.send(&message(1));
    xsub.expect(&message(1), xpub);
}

/// Runs one scenario: `a` and `b` are created, configured for their pattern, one binds
/// on `t`, the other connects, and the pattern's exchange is checked.
fn scenario(a: (Lib, SocketType), b: (Lib, SocketType), t: Transport, a_binds: bool) {
    let h = Harness::new();
    let pa = h.peer(a.0, a.1);
    let pb = h.peer(b.0, b.1);
    let (id_a, id_b): (&[u8], &[u8]) = (b"router-a", b"router-b");
    for (p, id) in [(&pa, id_a), (&pb, id_b)] {
        match p.kind {
            Sub => p.s.set_bytes(zmq::SUBSCRIBE, b"").expect("SUBSCRIBE"),
            Router if a.1 == Router && b.1 == Router => {
                p.s.set_bytes(zmq::ROUTING_ID, id).expect("ROUTING_ID");
                p.s.set_int(zmq::ROUTER_MANDATORY, 1)
                    .expect("ROUTER_MANDATORY");
            }
            _ => {}
        }
    }
    let (binder, connecter) = if a_binds { (&pa, &pb) } else { (&pb, &pa) };
    let ep = h.bind(binder.s.as_ref(), t);
    connecter
        .s
        .connect(&ep)
        .unwrap_or_else(|e| panic!("{connecter}: connect {ep}: {e:?}"));

    match (a.1, b.1) {
        (Pair, Pair) | (Dealer, Dealer) => symmetric(&pa, &pb),
        (Push, Pull) => push_pull(&pa, &pb),
        (Pull, Push) => push_pull(&pb, &pa),
        (Req, Rep) => req_rep(&pa, &pb),
        (Rep, Req) => req_rep(&pb, &pa),
        (Req, Router) => req_router(&pa, &pb),
        (Router, Req) => req_router(&pb, &pa),
        (Dealer, Rep) => dealer_rep(&pa, &pb),
        (Rep, Dealer) => dealer_rep(&pb, &pa),
        (Dealer, Router) => dealer_router(&pa, &pb),
        (Router, Dealer) => dealer_router(&pb, &pa),
        (Router, Router) if a_binds => router_router(&pb, id_b, &pa, id_a),
        (Router, Router) => router_router(&pa, id_a, &pb, id_b),
        (Pub, Sub) => pub_sub(&pa, &pb),
        (Sub, Pub) => pub_sub(&pb, &pa),
        (XPub, Sub) => xpub_sub(&pa, &pb),
        (Sub, XPub) => xpub_sub(&pb, &pa),
        (Pub, XSub) => pub_xsub(&pa, &pb),
        (XSub, Pub) => pub_xsub(&pb, &pa),
        (XPub, XSub) => xpub_xsub(&pa, &pb),
        (XSub, XPub) => xpub_xsub(&pb, &pa),
        other => panic!("not a valid pairing: {other:?}"),
    }
}

/// ferromq `f` against libzmq `z`.
fn cross(f: SocketType, z: SocketType, t: Transport, binder: Lib) {
    scenario((Lib::Ferro, f), (Lib::Zmq, z), t, binder == Lib::Ferro);
}

macro_rules! cross_pairs {
    ($($name:ident: $ferro:ident with $zmq:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn tcp_ferro_binds() {
                cross($ferro, $zmq, Transport::Tcp, Lib::Ferro);
            }
            #[test]
            fn tcp_libzmq_binds() {
                cross($ferro, $zmq, Transport::Tcp, Lib::Zmq);
            }
            #[test]
            fn ipc_ferro_binds() {
                cross($ferro, $zmq, Transport::Ipc, Lib::Ferro);
            }
            #[test]
            fn ipc_libzmq_binds() {
                cross($ferro, $zmq, Transport::Ipc, Lib::Zmq);
            }
        }
    )*};
}

cross_pairs! {
    pair_vs_pair: Pair with Pair;
    push_vs_pull: Push with Pull;
    pull_vs_push: Pull with Push;
    req_vs_rep: Req with Rep;
    rep_vs_req: Rep with Req;
    req_vs_router: Req with Router;
    router_vs_req: Router with Req;
    dealer_vs_rep: Dealer with Rep;
    rep_vs_dealer: Rep with Dealer;
    dealer_vs_dealer: Dealer with Dealer;
    dealer_vs_router: Dealer with Router;
    router_vs_dealer: Router with Dealer;
    router_vs_router: Router with Router;
    pub_vs_sub: Pub with Sub;
    sub_vs_pub: Sub with Pub;
    xpub_vs_sub: XPub with Sub;
    sub_vs_xpub: Sub with XPub;
    pub_vs_xsub: Pub with XSub;
    xsub_vs_pub: XSub with Pub;
    xpub_vs_xsub: XPub with XSub;
    xsub_vs_xpub: XSub with XPub;
}

/// The same scenarios with libzmq on both sides: if one of these fails, the scenario (not
/// ferromq) is wrong.
mod reference {
    use super::*;

    fn both(a: SocketType, b: SocketType) {
        for t in [Transport::Tcp, Transport::Ipc] {
            for a_binds in [true, false] {
                scenario((Lib::Zmq, a), (Lib::Zmq, b), t, a_binds);
            }
        }
    }

    #[test]
    fn libzmq_loads_and_is_4_x() {
        let lib = LibZmq::get();
        let (major, minor, _) = lib.version();
        assert_eq!(
            major,
            4,
            "{} reports version {:?}",
            lib.path(),
            lib.version()
        );
        assert!(
            minor >= 2,
            "libzmq {:?} predates ZMTP 3.1 support",
            lib.version()
        );
    }

    #[test]
    fn pair_pair() {
        both(Pair, Pair);
    }
    #[test]
    fn push_pull() {
        both(Push, Pull);
    }
    #[test]
    fn req_rep() {
        both(Req, Rep);
    }
    #[test]
    fn req_router() {
        both(Req, Router);
    }
    #[test]
    fn dealer_rep() {
        both(Dealer, Rep);
    }
    #[test]
    fn dealer_dealer() {
        both(Dealer, Dealer);
    }
    #[test]
    fn dealer_router() {
        both(Dealer, Router);
    }
    #[test]
    fn router_router() {
        both(Router, Router);
    }
    #[test]
    fn pub_sub() {
        both(Pub, Sub);
    }
    #[test]
    fn xpub_sub() {
        both(XPub, Sub);
    }
    #[test]
    fn pub_xsub() {
        both(Pub, XSub);
    }
    #[test]
    fn xpub_xsub() {
        both(XPub, XSub);
    }
}
