//! ZMTP handshake checks across the two libraries: a peer of an incompatible socket type
//! must be refused (no message may reach it or come from it), while compatible peers on
//! the same endpoint keep working; the READY properties a peer announces are visible as
//! message metadata (`zmq_msg_gets`).
//!
//! Each scenario runs with the bound socket from ferromq and peers from libzmq, the
//! reverse, and libzmq on both sides (`reference`).

use ferromq_interop::{parts, zmq, Harness, Lib, SocketType, Transport};
use std::time::Duration;
use SocketType::*;

macro_rules! combos {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_bound_libzmq_peers() {
                $scenario(Lib::Ferro, Lib::Zmq);
            }
            #[test]
            fn libzmq_bound_ferro_peers() {
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
    push_skips_incompatible_push_peer => push_skips_incompatible_peer;
    pull_ignores_incompatible_dealer_peer => pull_ignores_incompatible_peer;
    rep_ignores_incompatible_pair_peer => rep_ignores_incompatible_peer;
}

/// A bound PUSH with an (incompatible) PUSH and a PULL connected: round robin must only
/// use the PULL, so every message arrives there.
fn push_skips_incompatible_peer(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let push = h.peer(bound_lib, Push);
    let ep = h.bind(push.s.as_ref(), Transport::Tcp);
    let wrong = h.peer(peer_lib, Push);
    wrong.s.connect(&ep).expect("connect");
    // Let the incompatible handshake happen (and fail) first.
    std::thread::sleep(Duration::from_millis(200));
    let pull = h.peer(peer_lib, Pull);
    pull.s.connect(&ep).expect("connect");
    for i in 0..20u8 {
        push.send_strs(&[b"job", &[i]]);
    }
    for i in 0..20u8 {
        pull.expect(&parts(&[b"job", &[i]]), &push);
    }
}

/// A bound PULL with an (incompatible) DEALER and a PUSH connected, both sending: only
/// the PUSH's messages may arrive.
fn pull_ignores_incompatible_peer(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let pull = h.peer(bound_lib, Pull);
    let ep = h.bind(pull.s.as_ref(), Transport::Tcp);
    let wrong = h.peer(peer_lib, Dealer);
    wrong.s.connect(&ep).expect("connect");
    let _ = wrong.s.send(b"from dealer", zmq::DONTWAIT);
    let push = h.peer(peer_lib, Push);
    push.s.connect(&ep).expect("connect");
    std::thread::sleep(Duration::from_millis(200));
    assert!(wrong.try_recv().is_none());
    push.send_strs(&[b"from push"]);
    pull.expect(&parts(&[b"from push"]), &push);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        pull.try_recv().is_none(),
        "{pull}: received a message from an incompatible DEALER peer"
    );
}

/// A bound REP with an (incompatible) PAIR and a REQ connected.
fn rep_ignores_incompatible_peer(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let rep = h.peer(bound_lib, Rep);
    let ep = h.bind(rep.s.as_ref(), Transport::Tcp);
    let wrong = h.peer(peer_lib, Pair);
    wrong.s.connect(&ep).expect("connect");
    let _ = wrong.s.send_parts(&parts(&[b"", b"from pair"]));
    let req = h.peer(peer_lib, Req);
    req.s.connect(&ep).expect("connect");
    std::thread::sleep(Duration::from_millis(200));
    assert!(wrong.try_recv().is_none());
    req.send_strs(&[b"from req"]);
    rep.expect(&parts(&[b"from req"]), &req);
    rep.send_strs(&[b"reply"]);
    req.expect(&parts(&[b"reply"]), &rep);
}

combos! {
    push_properties_reach_pull => push_properties_reach_pull;
    dealer_identity_property_reaches_router => dealer_identity_property;
}

/// What the receiver sees through `zmq_msg_gets` for a message from a peer of the
/// other library: the ZMTP READY properties plus "Peer-Address".
fn push_properties_reach_pull(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let pull = h.peer(bound_lib, Pull);
    let ep = h.bind(pull.s.as_ref(), Transport::Tcp);
    let push = h.peer(peer_lib, Push);
    push.s.connect(&ep).expect("connect");
    push.send_strs(&[b"with metadata"]);
    let (body, more, props) = pull
        .s
        .recv_props(0, &["Socket-Type", "Peer-Address", "No-Such-Property"])
        .unwrap_or_else(|e| panic!("{pull}: recv: {e:?}"));
    assert_eq!((body.as_slice(), more), (&b"with metadata"[..], false));
    assert_eq!(
        props,
        [
            Some("PUSH".to_string()),
            Some("127.0.0.1".to_string()),
            None
        ],
        "{pull}: properties of a message from {push} \
         (Socket-Type, Peer-Address, No-Such-Property)"
    );
}

fn dealer_identity_property(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let router = h.peer(bound_lib, Router);
    let ep = h.bind(router.s.as_ref(), Transport::Tcp);
    let dealer = h.peer(peer_lib, Dealer);
    dealer
        .s
        .set_bytes(zmq::ROUTING_ID, b"meta-id")
        .expect("ROUTING_ID");
    dealer.s.connect(&ep).expect("connect");
    dealer.send_strs(&[b"body"]);
    let (id, more, _) = router.s.recv_props(0, &[]).expect("recv id");
    assert_eq!((id.as_slice(), more), (&b"meta-id"[..], true));
    let (body, more, props) = router
        .s
        .recv_props(0, &["Socket-Type", "Identity"])
        .unwrap_or_else(|e| panic!("{router}: recv: {e:?}"));
    assert_eq!((body.as_slice(), more), (&b"body"[..], false));
    assert_eq!(
        props,
        [Some("DEALER".to_string()), Some("meta-id".to_string())],
        "{router}: properties (Socket-Type, Identity) of a message from {dealer}"
    );
}
