//! Socket patterns over inproc, tcp and ipc, ferromq to ferromq.

use ferromq::{Context, Error, Socket, SocketType, DONTWAIT, SNDMORE};
use std::time::Duration;

const RCVTIMEO: i32 = 27;
const LINGER: i32 = 17;
const SUBSCRIBE: i32 = 6;
const ROUTING_ID: i32 = 5;
const ROUTER_MANDATORY: i32 = 33;
const SNDHWM: i32 = 23;
const RCVHWM: i32 = 24;

fn endpoints(tag: &str) -> Vec<String> {
    vec![
        format!("inproc://{tag}"),
        "tcp://127.0.0.1:*".to_string(),
        format!("ipc:///tmp/ferromq-test-{}-{tag}", std::process::id()),
    ]
}

fn last_endpoint(s: &Socket) -> String {
    s.last_endpoint().unwrap()
}

fn pair(ctx: &Context, a: SocketType, b: SocketType, ep: &str) -> (Socket, Socket) {
    let sa = ctx.socket(a).unwrap();
    let sb = ctx.socket(b).unwrap();
    for s in [&sa, &sb] {
        s.set_int(RCVTIMEO, 5000).unwrap();
        s.set_int(LINGER, 0).unwrap();
    }
    sa.bind(ep).unwrap();
    let real = last_endpoint(&sa);
    sb.connect(&real).unwrap();
    (sa, sb)
}

fn data(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|k| (k * 31 + i * 7) as u8).collect()
}

#[test]
fn push_pull_multipart_all_transports() {
    let ctx = Context::new();
    for ep in endpoints("pushpull") {
        let (pull, push) = pair(&ctx, SocketType::Pull, SocketType::Push, &ep);
        for (i, len) in [0usize, 1, 30, 31, 255, 256, 70_000]
            .into_iter()
            .enumerate()
        {
            push.send(&data(i, len), SNDMORE).unwrap();
            push.send(b"tail", 0).unwrap();
            let parts = pull.recv_multipart(0).unwrap();
            assert_eq!(parts.len(), 2, "{ep}");
            assert_eq!(parts[0].data(), &data(i, len)[..], "{ep} len {len}");
            assert!(parts[0].more());
            assert_eq!(parts[1].data(), b"tail");
            assert!(!parts[1].more());
        }
    }
    ctx.term().unwrap();
}

#[test]
fn req_rep_round_trips_and_state_machine() {
    let ctx = Context::new();
    for ep in endpoints("reqrep") {
        let (rep, req) = pair(&ctx, SocketType::Rep, SocketType::Req, &ep);
        assert_eq!(req.recv(0).unwrap_err(), Error::State);
        for i in 0..20 {
            req.send(format!("ping {i}").as_bytes(), 0).unwrap();
            assert_eq!(
                req.send(b"again", 0).unwrap_err(),
                Error::State,
                "REQ cannot send twice"
            );
            let m = rep.recv(0).unwrap();
            assert_eq!(m.data(), format!("ping {i}").as_bytes());
            assert_eq!(rep.recv(0).unwrap_err(), Error::State);
            rep.send(format!("pong {i}").as_bytes(), 0).unwrap();
            assert_eq!(req.recv(0).unwrap().data(), format!("pong {i}").as_bytes());
        }
    }
    ctx.term().unwrap();
}

#[test]
fn dealer_router_routing_ids() {
    let ctx = Context::new();
    for ep in endpoints("router") {
        let router = ctx.socket(SocketType::Router).unwrap();
        router.set_int(RCVTIMEO, 5000).unwrap();
        router.set_int(LINGER, 0).unwrap();
        router.bind(&ep).unwrap();
        let real = last_endpoint(&router);
        let dealer = ctx.socket(SocketType::Dealer).unwrap();
        dealer.set_option(ROUTING_ID, b"alice").unwrap();
        dealer.set_int(RCVTIMEO, 5000).unwrap();
        dealer.set_int(LINGER, 0).unwrap();
        dealer.connect(&real).unwrap();
        dealer.send(b"hi", 0).unwrap();
        let parts = router.recv_multipart(0).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].data(), b"alice");
        assert_eq!(parts[1].data(), b"hi");
        router.send(b"alice", SNDMORE).unwrap();
        router.send(b"back", 0).unwrap();
        assert_eq!(dealer.recv(0).unwrap().data(), b"back");
        router.set_int(ROUTER_MANDATORY, 1).unwrap();
        assert_eq!(
            router.send(b"nobody", SNDMORE).unwrap_err(),
            Error::HostUnreachable
        );
    }
    ctx.term().unwrap();
}

#[test]
fn pub_sub_prefix_filtering() {
    let ctx = Context::new();
    for ep in endpoints("pubsub") {
        let (publ, sub) = pair(&ctx, SocketType::Pub, SocketType::Sub, &ep);
        sub.set_option(SUBSCRIBE, b"weather").unwrap();
        // Publish until the subscription has arrived.
        let mut got = None;
        for _ in 0..500 {
            publ.send(b"weather sync", 0).unwrap();
            if let Ok(m) = sub.recv(DONTWAIT) {
                got = Some(m);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            got.expect("subscription propagated").data(),
            b"weather sync"
        );
        publ.send(b"sports result", 0).unwrap();
        publ.send(b"weather today", 0).unwrap();
        publ.send(b"weather end", 0).unwrap();
        // Sync messages still in flight may come first; "sports" must never come.
        let mut seen = Vec::new();
        loop {
            let m = sub.recv(0).unwrap();
            if m.data() == b"weather sync" {
                continue;
            }
            seen.push(m.data().to_vec());
            if m.data() == b"weather end" {
                break;
            }
        }
        assert_eq!(
            seen,
            vec![b"weather today".to_vec(), b"weather end".to_vec()]
        );
    }
    ctx.term().unwrap();
}

#[test]
fn pair_both_ways_and_inproc_connect_before_bind() {
    let ctx = Context::new();
    let a = ctx.socket(SocketType::Pair).unwrap();
    a.set_int(RCVTIMEO, 5000).unwrap();
    a.connect("inproc://late").unwrap();
    a.send(b"early", 0).unwrap();
    let b = ctx.socket(SocketType::Pair).unwrap();
    b.set_int(RCVTIMEO, 5000).unwrap();
    b.bind("inproc://late").unwrap();
    assert_eq!(b.recv(0).unwrap().data(), b"early");
    b.send(b"reply", 0).unwrap();
    assert_eq!(a.recv(0).unwrap().data(), b"reply");
    drop(a);
    drop(b);
    ctx.term().unwrap();
}

#[test]
fn hwm_blocks_push_with_eagain() {
    let ctx = Context::new();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(RCVHWM, 5).unwrap();
    pull.bind("inproc://hwm").unwrap();
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(SNDHWM, 5).unwrap();
    push.set_int(LINGER, 0).unwrap();
    push.connect("inproc://hwm").unwrap();
    let mut sent = 0;
    while push.send(b"x", DONTWAIT).is_ok() {
        sent += 1;
        assert!(sent < 1000, "HWM never reached");
    }
    assert_eq!(sent, 10, "inproc HWM is SNDHWM + RCVHWM");
    assert_eq!(push.send(b"x", DONTWAIT).unwrap_err(), Error::Again);
    pull.recv(0).unwrap();
    drop(push);
    drop(pull);
    ctx.term().unwrap();
}

#[test]
fn push_passes_over_a_full_peer_and_keeps_each_message_whole() {
    let ctx = Context::new();
    let pulls: Vec<Socket> = [("inproc://lb-small", 1), ("inproc://lb-large", 1000)]
        .into_iter()
        .map(|(ep, hwm)| {
            let s = ctx.socket(SocketType::Pull).unwrap();
            s.set_int(RCVHWM, hwm).unwrap();
            s.set_int(LINGER, 0).unwrap();
            s.bind(ep).unwrap();
            s
        })
        .collect();
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(SNDHWM, 1).unwrap();
    push.set_int(LINGER, 0).unwrap();
    push.connect("inproc://lb-small").unwrap();
    push.connect("inproc://lb-large").unwrap();
    // Two-frame messages (the last frame goes in as bytes) and one-frame ones.
    for i in 0..20u8 {
        if i.is_multiple_of(2) {
            push.send(&[i], SNDMORE | DONTWAIT).unwrap();
        }
        push.send(&data(i.into(), 64), DONTWAIT).unwrap();
    }
    let drain = |s: &Socket| {
        let mut got = Vec::new();
        while let Ok(parts) = s.recv_multipart(DONTWAIT) {
            got.push(parts.iter().map(|m| m.data().to_vec()).collect::<Vec<_>>());
        }
        got
    };
    let whole = |i: u8| {
        let body = data(i.into(), 64);
        if i.is_multiple_of(2) {
            vec![vec![i], body]
        } else {
            vec![body]
        }
    };
    // Turn by turn until the small peer holds its two (SNDHWM + RCVHWM), then the rest
    // to the other; none lost, none split.
    assert_eq!(drain(&pulls[0]), [whole(0), whole(2)]);
    let rest: Vec<_> = [1, 3].into_iter().chain(4..20).map(whole).collect();
    assert_eq!(drain(&pulls[1]), rest);
    drop(push);
    drop(pulls);
    ctx.term().unwrap();
}

#[test]
fn dontwait_and_timeouts_give_eagain() {
    let ctx = Context::new();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.bind("inproc://empty").unwrap();
    assert_eq!(pull.recv(DONTWAIT).unwrap_err(), Error::Again);
    pull.set_int(RCVTIMEO, 20).unwrap();
    assert_eq!(pull.recv(0).unwrap_err(), Error::Again);
    assert_eq!(pull.send(b"x", 0).unwrap_err(), Error::NotSupported);
    drop(pull);
    ctx.term().unwrap();
}

#[test]
fn term_unblocks_blocking_recv_with_eterm() {
    let ctx = Context::new();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let t = std::thread::spawn(move || {
        let r = pull.recv(0);
        drop(pull);
        r
    });
    std::thread::sleep(Duration::from_millis(50));
    ctx.term().unwrap();
    assert_eq!(t.join().unwrap().unwrap_err(), Error::Terminated);
}

#[test]
fn linger_delivers_queued_messages_after_close() {
    let ctx = Context::new();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(RCVTIMEO, 5000).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let ep = last_endpoint(&pull);
    let push = ctx.socket(SocketType::Push).unwrap();
    push.connect(&ep).unwrap();
    for i in 0..100u32 {
        push.send(&i.to_le_bytes(), 0).unwrap();
    }
    drop(push);
    for i in 0..100u32 {
        assert_eq!(pull.recv(0).unwrap().data(), i.to_le_bytes());
    }
    drop(pull);
    ctx.term().unwrap();
}

#[test]
fn bad_endpoints_and_unbind() {
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Pull).unwrap();
    assert_eq!(s.bind("nonsense").unwrap_err(), Error::InvalidArgument);
    assert_eq!(s.bind("pgm://x").unwrap_err(), Error::ProtocolNotSupported);
    assert_eq!(s.unbind("tcp://127.0.0.1:1").unwrap_err(), Error::NoEntry);
    // udp is for RADIO, DISH and DGRAM only in libzmq: ENOCOMPATPROTO on any other type,
    // for every endpoint call.
    let udp = "udp://127.0.0.1:5555";
    assert_eq!(s.bind(udp).unwrap_err(), Error::IncompatibleProtocol);
    assert_eq!(s.connect(udp).unwrap_err(), Error::IncompatibleProtocol);
    assert_eq!(s.unbind(udp).unwrap_err(), Error::IncompatibleProtocol);
    assert_eq!(s.disconnect(udp).unwrap_err(), Error::IncompatibleProtocol);
    s.bind("tcp://127.0.0.1:*").unwrap();
    let ep = last_endpoint(&s);
    let other = ctx.socket(SocketType::Pull).unwrap();
    assert_eq!(other.bind(&ep).unwrap_err(), Error::AddressInUse);
    s.unbind(&ep).unwrap();
    drop(s);
    drop(other);
    ctx.term().unwrap();
}

#[test]
fn stream_socket_talks_raw_tcp() {
    use std::io::{Read, Write};
    let ctx = Context::new();
    let stream = ctx.socket(SocketType::Stream).unwrap();
    stream.set_int(RCVTIMEO, 5000).unwrap();
    stream.bind("tcp://127.0.0.1:*").unwrap();
    let ep = last_endpoint(&stream);
    let addr = ep.trim_start_matches("tcp://");
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    // Connect notification: [id][empty].
    let note = stream.recv_multipart(0).unwrap();
    assert_eq!(note.len(), 2);
    assert!(note[1].is_empty());
    let id = note[0].data().to_vec();
    client.write_all(b"hello").unwrap();
    let mut got = Vec::new();
    while got.len() < 5 {
        let parts = stream.recv_multipart(0).unwrap();
        assert_eq!(parts[0].data(), &id[..]);
        got.extend_from_slice(parts[1].data());
    }
    assert_eq!(got, b"hello");
    // A routing id without MORE is taken and ignored, and so is the frame after it (as
    // libzmq does): only "world" reaches the client.
    stream.send(&id, 0).unwrap();
    stream.send(b"lost", SNDMORE).unwrap();
    stream.send(&id, SNDMORE).unwrap();
    stream.send(b"world", 0).unwrap();
    let mut buf = [0u8; 5];
    client.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"world");
    // An empty data frame closes the connection: the client reads EOF.
    stream.send(&id, SNDMORE).unwrap();
    stream.send(b"", 0).unwrap();
    assert_eq!(client.read(&mut buf).unwrap(), 0);
    drop(stream);
    ctx.term().unwrap();
}

#[test]
fn stream_delivers_what_a_client_sent_before_closing() {
    // A raw client that writes and closes at once: its data comes before the disconnect
    // notification, as libzmq delivers it (ferromq dropped the data with the pipe).
    use std::io::Write;
    let ctx = Context::new();
    let stream = ctx.socket(SocketType::Stream).unwrap();
    stream.set_int(RCVTIMEO, 5000).unwrap();
    stream.bind("tcp://127.0.0.1:*").unwrap();
    let ep = last_endpoint(&stream);
    let mut client = std::net::TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    client.write_all(b"hello").unwrap();
    drop(client);
    let note = stream.recv_multipart(0).unwrap();
    assert_eq!(note.len(), 2);
    assert!(note[1].is_empty(), "connect notification first");
    let id = note[0].data().to_vec();
    let mut got = Vec::new();
    loop {
        let parts = stream.recv_multipart(0).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].data(), &id[..]);
        if parts[1].is_empty() {
            break; // the disconnect notification
        }
        got.extend_from_slice(parts[1].data());
    }
    assert_eq!(got, b"hello", "data before the disconnect notification");
    drop(stream);
    ctx.term().unwrap();
}

#[test]
fn inproc_disconnect_stops_delivery_both_ways() {
    let ctx = Context::new();
    let push = ctx.socket(SocketType::Push).unwrap();
    push.bind("inproc://disc").unwrap();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(RCVTIMEO, 5000).unwrap();
    pull.connect("inproc://disc").unwrap();
    push.send(b"one", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"one");
    pull.disconnect("inproc://disc").unwrap();
    // The only peer is gone: PUSH has nowhere to send.
    assert_eq!(push.send(b"two", DONTWAIT).unwrap_err(), Error::Again);
    assert_eq!(pull.recv(DONTWAIT).unwrap_err(), Error::Again);
    assert_eq!(
        pull.disconnect("inproc://disc").unwrap_err(),
        Error::NoEntry
    );
    drop(push);
    drop(pull);
    ctx.term().unwrap();
}

#[test]
fn linger_delivers_to_a_peer_that_binds_after_close() {
    let ctx = Context::new();
    // Find a free port, then leave it unbound.
    let probe = ctx.socket(SocketType::Pull).unwrap();
    probe.bind("tcp://127.0.0.1:*").unwrap();
    let ep = last_endpoint(&probe);
    drop(probe);
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(LINGER, 10_000).unwrap();
    push.set_int(18, 20).unwrap(); // RECONNECT_IVL
    push.connect(&ep).unwrap();
    push.send(b"kept", 0).unwrap();
    drop(push); // closed with the message still queued and no peer
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(RCVTIMEO, 5000).unwrap();
    pull.bind(&ep).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"kept");
    drop(pull);
    ctx.term().unwrap();
}

/// Sends 0..20 from a PUSH to a PULL over inproc, ZMQ_CONFLATE set on `conflating`
/// ("pull" or "push"), the PULL bound or connecting (`pull_binds`), the connect first or
/// the bind first (`connect_first`); returns what the PULL holds afterwards.
fn inproc_conflate_received(
    conflating: &str,
    pull_binds: bool,
    connect_first: bool,
) -> Vec<String> {
    let ctx = Context::new();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    let push = ctx.socket(SocketType::Push).unwrap();
    let flagged = if conflating == "pull" { &pull } else { &push };
    flagged.set_int(54, 1).unwrap(); // ZMQ_CONFLATE
    let (binder, connecter) = if pull_binds {
        (&pull, &push)
    } else {
        (&push, &pull)
    };
    let ep = format!("inproc://conflate-{conflating}-{pull_binds}-{connect_first}");
    if connect_first {
        connecter.connect(&ep).unwrap();
        binder.bind(&ep).unwrap();
    } else {
        binder.bind(&ep).unwrap();
        connecter.connect(&ep).unwrap();
    }
    for i in 0..20 {
        push.send(format!("{i}").as_bytes(), 0).unwrap();
    }
    let mut got = Vec::new();
    while let Ok(m) = pull.recv(DONTWAIT) {
        got.push(String::from_utf8_lossy(m.data()).into_owned());
    }
    drop(push);
    drop(pull);
    ctx.term().unwrap();
    got
}

#[test]
fn inproc_conflate_follows_the_connecting_socket_as_libzmq() {
    // Checked against Debian's libzmq 4.3.4: over inproc the connecting socket's
    // ZMQ_CONFLATE governs the pipe in both directions and the bound socket's is ignored.
    let all: Vec<String> = (0..20).map(|i| i.to_string()).collect();
    for connect_first in [false, true] {
        for pull_binds in [true, false] {
            for conflating in ["pull", "push"] {
                let flag_on_connecter = (conflating == "pull") != pull_binds;
                let expect = if flag_on_connecter {
                    vec!["19".to_string()]
                } else {
                    all.clone()
                };
                assert_eq!(
                    inproc_conflate_received(conflating, pull_binds, connect_first),
                    expect,
                    "CONFLATE on {conflating}, PULL binds: {pull_binds}, connect first: {connect_first}"
                );
            }
        }
    }
}

#[test]
fn connect_checks_tcp_address_syntax() {
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Pub).unwrap();
    assert_eq!(
        s.connect("tcp://in val id:1234").unwrap_err(),
        Error::InvalidArgument
    );
    assert_eq!(
        s.connect("tcp://bad!host:1234").unwrap_err(),
        Error::InvalidArgument
    );
    s.connect("tcp://localhost:1234").unwrap();
    drop(s);
    ctx.term().unwrap();
}

#[test]
fn sender_closing_at_hwm_loses_nothing() {
    // Debian's libzmq 4.3.4 was seen dropping the tail of such a stream (bench/README.md);
    // ferromq must deliver every message a closed sender had queued (LINGER -1).
    let ctx = Context::new();
    let pull = ctx.socket(SocketType::Pull).unwrap();
    pull.set_int(RCVHWM, 10).unwrap();
    pull.set_int(RCVTIMEO, 10_000).unwrap();
    pull.bind("tcp://127.0.0.1:*").unwrap();
    let ep = last_endpoint(&pull);
    let sender = std::thread::spawn(move || {
        let ctx = Context::new();
        let push = ctx.socket(SocketType::Push).unwrap();
        push.set_int(SNDHWM, 10).unwrap();
        push.connect(&ep).unwrap();
        for i in 0..50_000u32 {
            push.send(&i.to_le_bytes(), 0).unwrap();
        }
        drop(push);
        ctx.term().unwrap();
    });
    for i in 0..50_000u32 {
        assert_eq!(pull.recv(0).unwrap().data(), i.to_le_bytes(), "message {i}");
    }
    sender.join().unwrap();
    assert_eq!(pull.recv(DONTWAIT).unwrap_err(), Error::Again);
    drop(pull);
    ctx.term().unwrap();
}

/// A publisher reads its subscribers' (un)subscriptions only when something new has come
/// in since its last send: each later change must still take effect, on every transport.
#[test]
fn a_publisher_applies_every_later_subscription_change() {
    const UNSUBSCRIBE: i32 = 7;
    let ctx = Context::new();
    for ep in endpoints("pubsub-changes") {
        let (publ, sub) = pair(&ctx, SocketType::Pub, SocketType::Sub, &ep);
        // Publishes `topic` until one arrives (the subscription has reached the publisher).
        let sync = |topic: &[u8]| {
            for _ in 0..1000 {
                publ.send(topic, 0).unwrap();
                if let Ok(m) = sub.recv(DONTWAIT) {
                    assert_eq!(m.data(), topic);
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            panic!("{ep}: {} never arrived", String::from_utf8_lossy(topic));
        };
        sub.set_option(SUBSCRIBE, b"a").unwrap();
        sync(b"a");
        for round in 0..3 {
            sub.set_option(UNSUBSCRIBE, b"a").unwrap();
            sub.set_option(SUBSCRIBE, b"b").unwrap();
            sync(b"b");
            publ.send(b"a-dropped", 0).unwrap();
            publ.send(b"b-end", 0).unwrap();
            loop {
                let m = sub.recv(0).unwrap();
                assert_ne!(m.data(), b"a-dropped", "{ep} round {round}");
                if m.data() == b"b-end" {
                    break;
                }
            }
            sub.set_option(UNSUBSCRIBE, b"b").unwrap();
            sub.set_option(SUBSCRIBE, b"a").unwrap();
            sync(b"a");
            publ.send(b"b-dropped", 0).unwrap();
            publ.send(b"a-end", 0).unwrap();
            loop {
                let m = sub.recv(0).unwrap();
                assert_ne!(m.data(), b"b-dropped", "{ep} round {round}");
                if m.data() == b"a-end" {
                    break;
                }
            }
        }
    }
    ctx.term().unwrap();
}

#[test]
fn xpub_nodrop_refuses_at_the_mark_and_loses_nothing() {
    const XPUB_NODROP: i32 = 69;
    let ctx = Context::new();
    for subscribers in [1usize, 2] {
        let publ = ctx.socket(SocketType::Pub).unwrap();
        publ.set_int(SNDHWM, 5).unwrap();
        publ.set_int(LINGER, 0).unwrap();
        publ.set_int(XPUB_NODROP, 1).unwrap();
        let ep = format!("inproc://nodrop-{subscribers}");
        publ.bind(&ep).unwrap();
        let subs: Vec<Socket> = (0..subscribers)
            .map(|_| {
                let sub = ctx.socket(SocketType::Sub).unwrap();
                sub.set_int(RCVHWM, 5).unwrap();
                sub.set_int(LINGER, 0).unwrap();
                sub.set_option(SUBSCRIBE, b"").unwrap();
                sub.connect(&ep).unwrap();
                sub
            })
            .collect();
        // Publish until every subscription has arrived, then empty the queues.
        for sub in &subs {
            let mut seen = false;
            for _ in 0..500 {
                publ.send(b"sync", 0).unwrap();
                if sub.recv(DONTWAIT).is_ok() {
                    seen = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            assert!(seen, "subscription propagated");
        }
        for sub in &subs {
            while sub.recv(DONTWAIT).is_ok() {}
        }
        let mut sent = 0u32;
        while publ.send(&sent.to_be_bytes(), DONTWAIT).is_ok() {
            sent += 1;
            assert!(sent < 1000, "XPUB_NODROP never refused");
        }
        // At most SNDHWM + RCVHWM (inproc); fewer when the credit for the sync messages
        // read above has not all come back (it returns in steps of half the mark).
        assert!((5..=10).contains(&sent), "refused after {sent}");
        assert_eq!(publ.send(b"x", DONTWAIT).unwrap_err(), Error::Again);
        for sub in &subs {
            for i in 0..sent {
                assert_eq!(sub.recv(DONTWAIT).unwrap().data(), i.to_be_bytes());
            }
            assert_eq!(sub.recv(DONTWAIT).unwrap_err(), Error::Again);
        }
        publ.send(b"room again", DONTWAIT).unwrap();
    }
    // Without XPUB_NODROP a full subscriber misses messages; sends never fail.
    let publ = ctx.socket(SocketType::Pub).unwrap();
    publ.set_int(SNDHWM, 5).unwrap();
    publ.set_int(LINGER, 0).unwrap();
    publ.bind("inproc://drop").unwrap();
    let sub = ctx.socket(SocketType::Sub).unwrap();
    sub.set_int(RCVHWM, 5).unwrap();
    sub.set_option(SUBSCRIBE, b"").unwrap();
    sub.connect("inproc://drop").unwrap();
    for _ in 0..100 {
        publ.send(b"m", DONTWAIT).unwrap();
    }
    drop((publ, sub));
    ctx.term().unwrap();
}

/// `send_many` queues a batch under one lock and wakes the reader once, at the end: a
/// reader already asleep in a receive (a thread on inproc, a connection on tcp/ipc) gets
/// every message, in order, on every transport.
#[test]
fn send_many_wakes_a_sleeping_reader_once_and_loses_nothing() {
    let ctx = Context::new();
    for ep in endpoints("sendmany") {
        let (pull, push) = pair(&ctx, SocketType::Pull, SocketType::Push, &ep);
        // The connection is up before the batch (a PUSH without a peer has no room).
        push.send(b"hello", 0).unwrap();
        assert_eq!(pull.recv(0).unwrap().data(), b"hello");
        let reader = std::thread::spawn(move || {
            (0..300u32)
                .map(|_| u32::from_le_bytes(pull.recv(0).unwrap().data().try_into().unwrap()))
                .collect::<Vec<u32>>()
        });
        // Let the reader fall asleep in its receive first.
        std::thread::sleep(Duration::from_millis(50));
        let bodies: Vec<[u8; 4]> = (0..300u32).map(u32::to_le_bytes).collect();
        let refs: Vec<&[u8]> = bodies.iter().map(|b| &b[..]).collect();
        assert_eq!(push.send_many(&refs).unwrap(), 300, "{ep}");
        let got = reader.join().unwrap();
        assert_eq!(got, (0..300u32).collect::<Vec<_>>(), "{ep}");
    }
    ctx.term().unwrap();
}

/// With small socket buffers and a reader that keeps pausing, most of a connection's
/// writes are short (encoded output and in-place bodies left waiting for room, see
/// io/conn.rs `flush`): every frame must still arrive once, whole and in order, copied
/// and in-place bodies mixed, multipart messages cut by a short write included. The
/// copied runs between in-place bodies are longer than 64 KiB, so that a flush working
/// through a batch in pieces would be cut inside one too
/// (docs/results/2026-11-27-copy-chunk.md).
#[test]
fn a_stream_cut_by_full_socket_buffers_keeps_every_frame_in_order() {
    const SNDBUF: i32 = 11;
    const RCVBUF: i32 = 12;
    const MESSAGES: u32 = 3000;
    // Sizes around the engine's pieces (64 KiB) and the in-place threshold (8 KiB).
    let body = |i: u32, part: u32| -> Vec<u8> {
        let len = match (i % 50, i % 7) {
            (0, _) => 20_000,
            (_, 1) => 8191,
            (_, 2) => 1,
            _ => 300 + (i as usize * 37) % 3000,
        } + part as usize;
        (0..len).map(|k| (i as usize + k) as u8).collect()
    };
    let ctx = Context::new();
    for ep in endpoints("cut-stream").into_iter().skip(1) {
        let pull = ctx.socket(SocketType::Pull).unwrap();
        let push = ctx.socket(SocketType::Push).unwrap();
        pull.set_int(RCVBUF, 32 * 1024).unwrap();
        pull.set_int(RCVTIMEO, 10_000).unwrap();
        push.set_int(SNDBUF, 32 * 1024).unwrap();
        push.set_int(LINGER, -1).unwrap();
        pull.bind(&ep).unwrap();
        push.connect(&last_endpoint(&pull)).unwrap();
        let sender = std::thread::spawn(move || {
            for i in 0..MESSAGES {
                let parts = 1 + i % 3;
                for part in 0..parts {
                    let flags = if part + 1 < parts { SNDMORE } else { 0 };
                    push.send(&body(i, part), flags).unwrap();
                }
            }
            push
        });
        for i in 0..MESSAGES {
            if i % 200 == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
            let parts = 1 + i % 3;
            for part in 0..parts {
                let m = pull.recv(0).unwrap();
                assert_eq!(m.more(), part + 1 < parts, "{ep}: message {i} part {part}");
                assert!(
                    m.data() == body(i, part),
                    "{ep}: message {i} part {part} differs"
                );
            }
        }
        assert_eq!(pull.recv(DONTWAIT).unwrap_err(), Error::Again, "{ep}");
        drop(sender.join().unwrap());
    }
    ctx.term().unwrap();
}

/// A publisher finds each message's subscribers through an index of topics: every
/// subscriber holding a matching prefix gets the message once (also when two of its topics
/// match, or the empty one and another), the others none, and an unsubscribed or departed
/// subscriber drops out of the index.
#[test]
fn a_publisher_delivers_to_each_matching_subscriber_once() {
    const UNSUBSCRIBE: i32 = 7;
    let ctx = Context::new();
    for ep in endpoints("pubsub-index") {
        let publ = ctx.socket(SocketType::Pub).unwrap();
        publ.set_int(LINGER, 0).unwrap();
        publ.bind(&ep).unwrap();
        let real = last_endpoint(&publ);
        let topics: [&[&[u8]]; 6] = [
            &[b""],
            &[b"a"],
            &[b"ab"],
            &[b"a", b"ab"],
            &[b"b"],
            &[b"zzz"],
        ];
        let subs: Vec<Socket> = topics
            .iter()
            .map(|ts| {
                let sub = ctx.socket(SocketType::Sub).unwrap();
                sub.set_int(RCVTIMEO, 5000).unwrap();
                sub.set_int(LINGER, 0).unwrap();
                for t in ts.iter().chain([&&b"sync"[..], &&b"end"[..]]) {
                    sub.set_option(SUBSCRIBE, t).unwrap();
                }
                sub.connect(&real).unwrap();
                sub
            })
            .collect();
        // Publishes "sync" until every subscriber got one, then drains the extra ones.
        let sync = |subs: &[&Socket]| {
            let mut seen = vec![false; subs.len()];
            for _ in 0..1000 {
                publ.send(b"sync", 0).unwrap();
                for (k, s) in subs.iter().enumerate() {
                    while s.recv(DONTWAIT).is_ok() {
                        seen[k] = true;
                    }
                }
                if seen.iter().all(|&s| s) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            assert!(
                seen.iter().all(|&s| s),
                "{ep}: a subscription never arrived"
            );
        };
        // What each subscriber receives up to "end", skipping late "sync"s and "c"s.
        let received = |s: &Socket| {
            let mut got = Vec::new();
            loop {
                let m = s.recv(0).unwrap();
                match m.data() {
                    b"end" => return got,
                    b"sync" | b"c" => {}
                    d => got.push(String::from_utf8(d.to_vec()).unwrap()),
                }
            }
        };
        sync(&subs.iter().collect::<Vec<_>>());
        for m in ["abc", "a", "b1", "ab", "x", "zzz1", "end"] {
            publ.send(m.as_bytes(), 0).unwrap();
        }
        let expect: [&[&str]; 6] = [
            &["abc", "a", "b1", "ab", "x", "zzz1"],
            &["abc", "a", "ab"],
            &["abc", "ab"],
            &["abc", "a", "ab"],
            &["b1"],
            &["zzz1"],
        ];
        for (k, s) in subs.iter().enumerate() {
            assert_eq!(received(s), expect[k], "{ep}: subscriber {k}");
        }
        // Subscriber 1 drops "a" (then takes "c", to know the change arrived); the
        // "zzz" subscriber leaves.
        let mut subs = subs;
        drop(subs.pop());
        subs[1].set_option(UNSUBSCRIBE, b"a").unwrap();
        subs[1].set_option(SUBSCRIBE, b"c").unwrap();
        for _ in 0..1000 {
            publ.send(b"c", 0).unwrap();
            if subs[1].recv(DONTWAIT).is_ok_and(|m| m.data() == b"c") {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        for s in &subs {
            while s.recv(DONTWAIT).is_ok() {}
        }
        for m in ["a2", "zzz2", "c2", "end"] {
            publ.send(m.as_bytes(), 0).unwrap();
        }
        let expect: [&[&str]; 5] = [&["a2", "zzz2", "c2"], &["c2"], &[], &["a2"], &[]];
        for (k, s) in subs.iter().enumerate() {
            assert_eq!(
                received(s),
                expect[k],
                "{ep}: subscriber {k} after the changes"
            );
        }
    }
    ctx.term().unwrap();
}

/// A PUB whose only subscriber has just left: the send that finds it gone (reading the
/// departure while matching its one peer) goes nowhere and fails nothing.
#[test]
fn a_publisher_sends_on_after_its_only_subscriber_left() {
    let ctx = Context::new();
    for round in 0..20 {
        let ep = format!("inproc://pub-lone-{round}");
        let (publ, sub) = pair(&ctx, SocketType::Pub, SocketType::Sub, &ep);
        sub.set_option(SUBSCRIBE, b"").unwrap();
        for _ in 0..1000 {
            publ.send(b"sync", 0).unwrap();
            if sub.recv(DONTWAIT).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(sub);
        for _ in 0..10 {
            publ.send(b"after", 0).unwrap();
        }
        drop(publ);
    }
    ctx.term().unwrap();
}

#[test]
fn rep_reply_to_a_requester_that_left_succeeds_and_is_dropped() {
    // libzmq 4.3.4 and 4.3.5 (probed with pyzmq): the reply's send returns 0 over inproc
    // and tcp once the REQ is gone, and the REP takes the next request as usual.
    let ctx = Context::new();
    for ep in endpoints("rep-left") {
        let (rep, req) = pair(&ctx, SocketType::Rep, SocketType::Req, &ep);
        req.send(b"question", 0).unwrap();
        assert_eq!(rep.recv(0).unwrap().data(), b"question", "{ep}");
        drop(req);
        std::thread::sleep(Duration::from_millis(100));
        rep.send(b"answer", 0).unwrap();
        let req2 = ctx.socket(SocketType::Req).unwrap();
        req2.set_int(RCVTIMEO, 5000).unwrap();
        req2.set_int(LINGER, 0).unwrap();
        req2.connect(&last_endpoint(&rep)).unwrap();
        req2.send(b"again", 0).unwrap();
        assert_eq!(rep.recv(0).unwrap().data(), b"again", "{ep}");
        rep.send(b"answer 2", 0).unwrap();
        assert_eq!(req2.recv(0).unwrap().data(), b"answer 2", "{ep}");
    }
}

#[test]
fn router_raw_is_refused_once_the_router_has_peers() {
    // Its pattern becomes a STREAM's; peers attached as ZMTP ones would be lost to it.
    // (libzmq takes the option then and keeps routing those peers: documented as a
    // difference.) Before any peer it is taken.
    const ROUTER_RAW: i32 = 41;
    let ctx = Context::new();
    let (router, dealer) = pair(
        &ctx,
        SocketType::Router,
        SocketType::Dealer,
        "inproc://raw-late",
    );
    dealer.send(b"hi", 0).unwrap();
    assert_eq!(router.recv_multipart(0).unwrap().len(), 2);
    assert_eq!(router.set_int(ROUTER_RAW, 1), Err(Error::InvalidArgument));
    let fresh = ctx.socket(SocketType::Router).unwrap();
    fresh.set_int(ROUTER_RAW, 1).unwrap();
    fresh.set_int(ROUTER_RAW, 0).unwrap();
}
