//! ROUTER addressing across the two libraries: routing ids announced by DEALER/REQ/ROUTER
//! peers (ZMQ_ROUTING_ID), CONNECT_ROUTING_ID, ROUTER_MANDATORY's EHOSTUNREACH, and
//! silently dropped messages to unknown peers without it.
//!
//! Scenarios run with a ferromq ROUTER against libzmq peers, a libzmq ROUTER against
//! ferromq peers, and libzmq on both sides (`reference`).

use ferromq_interop::{
    configure, parts, show, zmq, Errno, Harness, Lib, LibZmq, Peer, SocketType, Transport,
    ZmqContext,
};
use std::time::{Duration, Instant};
use SocketType::*;

/// Generates the library combinations for a scenario `fn(router_lib, peer_lib)`.
macro_rules! combos {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_router_libzmq_peers() {
                $scenario(Lib::Ferro, Lib::Zmq);
            }
            #[test]
            fn libzmq_router_ferro_peers() {
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
    dealer_routing_id_seen_by_router => dealer_routing_id_seen_by_router;
    dealer_routing_id_over_ipc => dealer_routing_id_over_ipc;
    req_routing_id_and_envelope => req_routing_id_and_envelope;
    replies_reach_the_right_dealer => replies_reach_the_right_dealer;
    generated_ids_are_distinct_and_routable => generated_ids_are_distinct_and_routable;
    mandatory_unknown_id_is_host_unreachable => mandatory_unknown_id_is_host_unreachable;
    unknown_id_dropped_without_mandatory => unknown_id_dropped_without_mandatory;
    mandatory_after_peer_disconnects => mandatory_after_peer_disconnects;
    messages_of_a_peer_that_left_keep_its_id => messages_of_a_peer_that_left_keep_its_id;
    router_to_router_by_routing_id => router_to_router_by_routing_id;
    connect_routing_id_names_the_peer => connect_routing_id_names_the_peer;
    duplicate_routing_id_is_refused => duplicate_routing_id_is_refused;
    router_handover_gives_id_to_new_peer => router_handover;
}

/// `ZMQ_ROUTER_HANDOVER`.
const ROUTER_HANDOVER: i32 = 56;

/// A bound ROUTER and `ids.len()` peers of `kind` connected to it, each with the given
/// ROUTING_ID (`None`: let the ROUTER generate one).
fn router_with_peers(
    h: &Harness,
    router_lib: Lib,
    peer_lib: Lib,
    kind: SocketType,
    ids: &[Option<&[u8]>],
    t: Transport,
) -> (Peer, Vec<Peer>) {
    let router = h.peer(router_lib, Router);
    let ep = h.bind(router.s.as_ref(), t);
    let peers = ids
        .iter()
        .map(|id| {
            let p = h.peer(peer_lib, kind);
            if let Some(id) = id {
                p.s.set_bytes(zmq::ROUTING_ID, id)
                    .unwrap_or_else(|e| panic!("{p}: ROUTING_ID {}: {e:?}", show(id)));
            }
            p.s.connect(&ep)
                .unwrap_or_else(|e| panic!("{p}: connect {ep}: {e:?}"));
            p
        })
        .collect();
    (router, peers)
}

fn routing_id_roundtrip(router_lib: Lib, peer_lib: Lib, t: Transport) {
    let h = Harness::new();
    let id: &[u8] = b"dealer-\xff\x01\x00x";
    let (router, dealers) = router_with_peers(&h, router_lib, peer_lib, Dealer, &[Some(id)], t);
    let dealer = &dealers[0];
    dealer.send_strs(&[b"ping", b""]);
    router.expect(&parts(&[id, b"ping", b""]), dealer);
    router.send_strs(&[id, b"pong", b"", b"end"]);
    dealer.expect(&parts(&[b"pong", b"", b"end"]), &router);
}

fn dealer_routing_id_seen_by_router(router_lib: Lib, peer_lib: Lib) {
    routing_id_roundtrip(router_lib, peer_lib, Transport::Tcp);
}

fn dealer_routing_id_over_ipc(router_lib: Lib, peer_lib: Lib) {
    routing_id_roundtrip(router_lib, peer_lib, Transport::Ipc);
}

fn req_routing_id_and_envelope(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (router, reqs) = router_with_peers(
        &h,
        router_lib,
        peer_lib,
        Req,
        &[Some(b"req-1")],
        Transport::Tcp,
    );
    let req = &reqs[0];
    for round in 0..3u8 {
        req.send_strs(&[b"question", &[round]]);
        router.expect(&parts(&[b"req-1", b"", b"question", &[round]]), req);
        router.send_strs(&[b"req-1", b"", b"answer", &[round]]);
        req.expect(&parts(&[b"answer", &[round]]), &router);
    }
}

fn replies_reach_the_right_dealer(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let ids: [&[u8]; 3] = [b"alpha", b"beta", b"gamma"];
    let (router, dealers) = router_with_peers(
        &h,
        router_lib,
        peer_lib,
        Dealer,
        &ids.map(Some),
        Transport::Tcp,
    );
    for (d, id) in dealers.iter().zip(ids) {
        d.send_strs(&[b"from", id]);
    }
    let mut seen = Vec::new();
    for _ in 0..ids.len() {
        let m = router.recv();
        assert_eq!(m.len(), 3, "{router}: {} parts", m.len());
        assert_eq!(
            show(&m[2]),
            show(&m[0]),
            "{router}: routing id does not match sender"
        );
        seen.push(m[0].clone());
    }
    seen.sort();
    assert_eq!(
        seen,
        [b"alpha".to_vec(), b"beta".to_vec(), b"gamma".to_vec()]
    );
    // Reply in reverse order; each dealer must get exactly its own message.
    for id in ids.iter().rev() {
        router.send_strs(&[id, b"to", id]);
    }
    for (d, id) in dealers.iter().zip(ids) {
        d.expect(&parts(&[b"to", id]), &router);
    }
    std::thread::sleep(Duration::from_millis(50));
    for d in &dealers {
        assert!(
            d.try_recv().is_none(),
            "{d}: got a message meant for another dealer"
        );
    }
}

fn generated_ids_are_distinct_and_routable(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (router, dealers) = router_with_peers(
        &h,
        router_lib,
        peer_lib,
        Dealer,
        &[None, None],
        Transport::Tcp,
    );
    let mut ids = Vec::new();
    for (i, d) in dealers.iter().enumerate() {
        d.send_strs(&[format!("dealer {i}").as_bytes()]);
        let m = router.recv();
        assert_eq!(m.len(), 2, "{router}: {} parts", m.len());
        assert_eq!(show(&m[1]), format!("dealer {i}"));
        assert!(!m[0].is_empty(), "{router}: generated routing id is empty");
        ids.push(m[0].clone());
    }
    assert_ne!(
        ids[0], ids[1],
        "{router}: two peers got the same generated id"
    );
    for (i, id) in ids.iter().enumerate() {
        router.send_strs(&[id, format!("reply {i}").as_bytes()]);
    }
    for (i, d) in dealers.iter().enumerate() {
        d.expect(&parts(&[format!("reply {i}").as_bytes()]), &router);
    }
}

fn mandatory_unknown_id_is_host_unreachable(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (router, dealers) = router_with_peers(
        &h,
        router_lib,
        peer_lib,
        Dealer,
        &[Some(b"known")],
        Transport::Tcp,
    );
    router
        .s
        .set_int(zmq::ROUTER_MANDATORY, 1)
        .expect("ROUTER_MANDATORY");
    router.send_routed(b"known", &parts(&[b"first"]));
    dealers[0].expect(&parts(&[b"first"]), &router);

    for unknown in [&b"unknown"[..], b"know", b"known\x00", b""] {
        assert_eq!(
            router.s.send(unknown, zmq::SNDMORE),
            Err(Errno(libc::EHOSTUNREACH)),
            "{router}: send to unknown routing id {:?}",
            show(unknown)
        );
    }
    // The failed sends left nothing half-sent behind.
    router.send_strs(&[b"known", b"second"]);
    dealers[0].expect(&parts(&[b"second"]), &router);
    dealers[0].send_strs(&[b"still", b"talking"]);
    router.expect(&parts(&[b"known", b"still", b"talking"]), &dealers[0]);
}

fn unknown_id_dropped_without_mandatory(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (router, dealers) = router_with_peers(
        &h,
        router_lib,
        peer_lib,
        Dealer,
        &[Some(b"known")],
        Transport::Tcp,
    );
    // The router learns "known" from the dealer's first message.
    dealers[0].send_strs(&[b"hello"]);
    router.expect(&parts(&[b"known", b"hello"]), &dealers[0]);
    router.send_strs(&[b"nobody", b"lost", b"frames"]);
    router.send_strs(&[b"known", b"kept"]);
    dealers[0].expect(&parts(&[b"kept"]), &router);
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        dealers[0].try_recv().is_none(),
        "{}: received part of a message addressed to an unknown peer",
        dealers[0]
    );
}

/// A DEALER with routing id "leaving" and `linger`, connected to `ep`, in a context of its
/// own so that it can be fully shut down (drop the peer, then the contexts, then term the
/// ferromq one).
fn leaving_dealer(
    peer_lib: Lib,
    ep: &str,
    linger: i32,
) -> (Peer, Option<ZmqContext>, ferromq::Context) {
    let peer_ctx = match peer_lib {
        Lib::Ferro => None,
        Lib::Zmq => Some(LibZmq::get().ctx_new()),
    };
    let ferro_ctx = ferromq::Context::new();
    let dealer = match &peer_ctx {
        Some(c) => Peer::new(Box::new(c.socket(Dealer).expect("socket")), Dealer),
        None => Peer::new(Box::new(ferro_ctx.socket(Dealer).expect("socket")), Dealer),
    };
    configure(dealer.s.as_ref());
    dealer.s.set_int(zmq::LINGER, linger).expect("LINGER");
    dealer
        .s
        .set_bytes(zmq::ROUTING_ID, b"leaving")
        .expect("ROUTING_ID");
    dealer.s.connect(ep).expect("connect");
    (dealer, peer_ctx, ferro_ctx)
}

fn mandatory_after_peer_disconnects(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let router = h.peer(router_lib, Router);
    router
        .s
        .set_int(zmq::ROUTER_MANDATORY, 1)
        .expect("ROUTER_MANDATORY");
    let ep = h.bind(router.s.as_ref(), Transport::Tcp);
    let (dealer, peer_ctx, ferro_ctx) = leaving_dealer(peer_lib, &ep, 0);
    router.send_routed(b"leaving", &parts(&[b"hello"]));
    dealer.expect(&parts(&[b"hello"]), &router);
    drop(dealer);
    drop(peer_ctx);
    ferro_ctx.term().expect("ferromq term");

    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match router.s.send(b"leaving", zmq::SNDMORE) {
            Err(Errno(libc::EHOSTUNREACH)) => break,
            Ok(()) => router.send_strs(&[b"into the void"]),
            Err(e) => panic!("{router}: unexpected error {e:?}"),
        }
        assert!(
            Instant::now() < deadline,
            "{router}: routing id of a closed peer still routable after 5 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A DEALER with a routing id sends right after connecting and closes (linger -1) before
/// the ROUTER reads anything: its connection is gone by then, and its messages, already
/// taken in, still come with its id (libzmq reads a pipe to its end before it lets go of
/// the peer). ferromq dropped all of them.
fn messages_of_a_peer_that_left_keep_its_id(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let router = h.peer(router_lib, Router);
    let ep = h.bind(router.s.as_ref(), Transport::Tcp);
    let (dealer, peer_ctx, ferro_ctx) = leaving_dealer(peer_lib, &ep, -1);
    let bodies: [&[u8]; 3] = [b"m0", b"m1", b"m2"];
    for body in bodies {
        dealer.send_strs(&[body]);
    }
    drop(dealer);
    drop(peer_ctx);
    ferro_ctx.term().expect("ferromq term");
    // Time for the ROUTER to see the disconnect before it reads.
    std::thread::sleep(Duration::from_millis(200));
    for body in bodies {
        router.expect(&parts(&[b"leaving", body]), &router);
    }
}

fn router_to_router_by_routing_id(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let bound = h.peer(router_lib, Router);
    bound
        .s
        .set_bytes(zmq::ROUTING_ID, b"server")
        .expect("ROUTING_ID");
    let ep = h.bind(bound.s.as_ref(), Transport::Tcp);
    let client = h.peer(peer_lib, Router);
    client
        .s
        .set_bytes(zmq::ROUTING_ID, b"client")
        .expect("ROUTING_ID");
    client
        .s
        .set_int(zmq::ROUTER_MANDATORY, 1)
        .expect("ROUTER_MANDATORY");
    client.s.connect(&ep).expect("connect");
    // The connecting ROUTER learns "server" from the handshake.
    client.send_routed(b"server", &parts(&[b"request"]));
    bound.expect(&parts(&[b"client", b"request"]), &client);
    bound.send_strs(&[b"client", b"response"]);
    client.expect(&parts(&[b"server", b"response"]), &bound);
}

fn connect_routing_id_names_the_peer(router_lib: Lib, peer_lib: Lib) {
    // The ROUTER under test connects to a bound ROUTER of the other library, naming it
    // "alias" locally; the bound side announces "real-name".
    let h = Harness::new();
    let bound = h.peer(peer_lib, Router);
    bound
        .s
        .set_bytes(zmq::ROUTING_ID, b"real-name")
        .expect("ROUTING_ID");
    let ep = h.bind(bound.s.as_ref(), Transport::Tcp);
    let client = h.peer(router_lib, Router);
    client
        .s
        .set_bytes(zmq::ROUTING_ID, b"client")
        .expect("ROUTING_ID");
    client
        .s
        .set_int(zmq::ROUTER_MANDATORY, 1)
        .expect("ROUTER_MANDATORY");
    client
        .s
        .set_bytes(zmq::CONNECT_ROUTING_ID, b"alias")
        .expect("CONNECT_ROUTING_ID");
    client.s.connect(&ep).expect("connect");
    client.send_routed(b"alias", &parts(&[b"via alias"]));
    bound.expect(&parts(&[b"client", b"via alias"]), &client);
    bound.send_strs(&[b"client", b"back"]);
    client.expect(&parts(&[b"alias", b"back"]), &bound);
    assert_eq!(
        client.s.send(b"real-name", zmq::SNDMORE),
        Err(Errno(libc::EHOSTUNREACH)),
        "{client}: the announced id must not be routable when CONNECT_ROUTING_ID renamed it"
    );
}

/// The native API reports ROUTER_MANDATORY failures as `Error::HostUnreachable`, and a
/// libzmq DEALER's announced routing id is routable through it.
#[test]
fn ferromq_native_error_is_host_unreachable() {
    let lib = LibZmq::get();
    let ctx = ferromq::Context::new();
    let router = ctx.socket(Router).expect("socket");
    configure(&router);
    router
        .set_int(zmq::ROUTER_MANDATORY, 1)
        .expect("ROUTER_MANDATORY");
    router.bind("tcp://127.0.0.1:*").expect("bind");
    let ep = match router
        .get_option(zmq::LAST_ENDPOINT)
        .expect("LAST_ENDPOINT")
    {
        ferromq::OptionValue::Str(s) => String::from_utf8(s).unwrap(),
        _ => panic!("LAST_ENDPOINT is not a string"),
    };
    assert_eq!(
        router.send(b"nobody", ferromq::SNDMORE),
        Err(ferromq::Error::HostUnreachable)
    );

    let zctx = lib.ctx_new();
    let dealer = zctx.socket(Dealer).expect("libzmq socket");
    configure(&dealer);
    dealer
        .setsockopt(zmq::ROUTING_ID, b"zmq-dealer")
        .expect("ROUTING_ID");
    dealer.connect(&ep).expect("connect");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match router.send(b"zmq-dealer", ferromq::SNDMORE) {
            Ok(()) => break,
            Err(ferromq::Error::HostUnreachable) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("ferromq ROUTER: send to a connected libzmq DEALER: {e:?}"),
        }
    }
    router.send(b"native", 0).expect("send body");
    assert_eq!(dealer.recv(0), Ok((b"native".to_vec(), false)));
    assert_eq!(
        router.send(b"zmq-dealer2", ferromq::SNDMORE | ferromq::DONTWAIT),
        Err(ferromq::Error::HostUnreachable)
    );
}

/// Two peers announcing the same routing id: without ROUTER_HANDOVER the second one is
/// refused and the id keeps naming the first.
fn duplicate_routing_id_is_refused(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (router, dealers) = router_with_peers(
        &h,
        router_lib,
        peer_lib,
        Dealer,
        &[Some(b"same")],
        Transport::Tcp,
    );
    dealers[0].send_strs(&[b"one"]);
    router.expect(&parts(&[b"same", b"one"]), &dealers[0]);

    let ep = router.s.last_endpoint().expect("LAST_ENDPOINT");
    let second = h.peer(peer_lib, Dealer);
    second
        .s
        .set_bytes(zmq::ROUTING_ID, b"same")
        .expect("ROUTING_ID");
    second.s.connect(&ep).expect("connect");
    let _ = second.s.send(b"two", zmq::DONTWAIT);
    std::thread::sleep(Duration::from_millis(300));
    assert!(second.try_recv().is_none());
    assert!(
        router.try_recv().is_none(),
        "{router}: accepted a second peer with a routing id already in use"
    );
    router.send_strs(&[b"same", b"to first"]);
    dealers[0].expect(&parts(&[b"to first"]), &router);
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        second.try_recv().is_none(),
        "{second}: got a message for the first peer"
    );
}

/// With ROUTER_HANDOVER a new peer with an id in use takes the id over.
fn router_handover(router_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let router = h.peer(router_lib, Router);
    router
        .s
        .set_int(ROUTER_HANDOVER, 1)
        .expect("ROUTER_HANDOVER");
    let ep = h.bind(router.s.as_ref(), Transport::Tcp);
    let first = h.peer(peer_lib, Dealer);
    first
        .s
        .set_bytes(zmq::ROUTING_ID, b"same")
        .expect("ROUTING_ID");
    first.s.connect(&ep).expect("connect");
    first.send_strs(&[b"one"]);
    router.expect(&parts(&[b"same", b"one"]), &first);

    let second = h.peer(peer_lib, Dealer);
    second
        .s
        .set_bytes(zmq::ROUTING_ID, b"same")
        .expect("ROUTING_ID");
    second.s.connect(&ep).expect("connect");
    second.send_strs(&[b"two"]);
    router.expect(&parts(&[b"same", b"two"]), &second);
    router.send_strs(&[b"same", b"to newest"]);
    second.expect(&parts(&[b"to newest"]), &router);
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        first.try_recv().is_none(),
        "{first}: still routed to after handover"
    );
}
