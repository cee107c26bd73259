//! Publish/subscribe semantics across the two libraries: prefix filtering, unsubscribe,
//! reference-counted subscriptions, the subscription messages an XPUB reports, XPUB_VERBOSE
//! and user messages travelling upstream from XSUB to XPUB.
//!
//! Every scenario runs with ferromq as publisher and libzmq as subscriber, the reverse,
//! and libzmq on both sides (`reference`), which validates the scenario itself.

use ferromq_interop::{parts, show, zmq, Harness, Lib, Peer, SocketType, Transport};
use SocketType::*;

/// Generates the three library combinations for a scenario `fn(publisher_lib, sub_lib)`.
macro_rules! combos {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_publisher_libzmq_subscriber() {
                $scenario(Lib::Ferro, Lib::Zmq);
            }
            #[test]
            fn libzmq_publisher_ferro_subscriber() {
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
    prefix_filtering => prefix_filtering;
    filtering_over_ipc => filtering_over_ipc;
    unsubscribe_stops_delivery => unsubscribe_stops_delivery;
    duplicate_subscriptions_are_counted => duplicate_subscriptions_are_counted;
    xpub_reports_sub_subscriptions => xpub_reports_sub_subscriptions;
    xpub_reports_xsub_subscriptions => xpub_reports_xsub_subscriptions;
    xpub_not_verbose_reports_first_subscription_only => xpub_not_verbose;
    xpub_verbose_reports_duplicates => xpub_verbose;
    xpub_reports_last_unsubscribe_only => xpub_last_unsubscribe;
    xsub_user_messages_reach_xpub => xsub_user_messages_reach_xpub;
    multiple_subscribers_get_their_topics => multiple_subscribers;
    sub_sends_each_subscription_once => sub_sends_each_subscription_once;
    xpub_reports_unsubscribe_when_subscriber_leaves => xpub_subscriber_leaves;
}

/// A publisher of `pub_kind` from `pub_lib` bound on tcp and a subscriber of `sub_kind`
/// from `sub_lib` connected to it.
fn connected(
    h: &Harness,
    pub_lib: Lib,
    pub_kind: SocketType,
    sub_lib: Lib,
    sub_kind: SocketType,
    t: Transport,
) -> (Peer, Peer) {
    let p = h.peer(pub_lib, pub_kind);
    let s = h.peer(sub_lib, sub_kind);
    let ep = h.bind(p.s.as_ref(), t);
    s.s.connect(&ep)
        .unwrap_or_else(|e| panic!("{s}: connect {ep}: {e:?}"));
    (p, s)
}

fn subscribe(s: &Peer, topic: &[u8]) {
    s.s.set_bytes(zmq::SUBSCRIBE, topic)
        .unwrap_or_else(|e| panic!("{s}: SUBSCRIBE {}: {e:?}", show(topic)));
}

fn unsubscribe(s: &Peer, topic: &[u8]) {
    s.s.set_bytes(zmq::UNSUBSCRIBE, topic)
        .unwrap_or_else(|e| panic!("{s}: UNSUBSCRIBE {}: {e:?}", show(topic)));
}

fn shown(m: &[Vec<u8>]) -> Vec<String> {
    m.iter().map(|p| show(p)).collect()
}

/// Receives messages (skipping probes listed in `skip`) until one equal to `end`, and
/// returns those before it.
fn collect_until(s: &Peer, end: &[Vec<u8>], skip: &[&[u8]]) -> Vec<Vec<Vec<u8>>> {
    let mut got = Vec::new();
    loop {
        let m = s.recv_skipping(skip);
        if m == end {
            return got;
        }
        got.push(m);
        assert!(got.len() < 1000, "{s}: end marker never arrived");
    }
}

fn filtering(pub_lib: Lib, sub_lib: Lib, t: Transport) {
    let h = Harness::new();
    let (p, s) = connected(&h, pub_lib, Pub, sub_lib, Sub, t);
    // "A" last: once the "A..." probe arrives, "BC" (sent before it) is in place too.
    subscribe(&s, b"BC");
    subscribe(&s, b"\x00bin");
    subscribe(&s, b"A");
    p.await_subscription_with(&s, b"A-probe");

    let sent: Vec<Vec<Vec<u8>>> = vec![
        parts(&[b"A", b"1"]),
        parts(&[b"B", b"2"]),
        parts(&[b"BC", b"3"]),
        parts(&[b"BCD", b"4"]),
        parts(&[b"C", b"5"]),
        parts(&[b"", b"6"]),
        parts(&[b"a", b"7 (case matters)"]),
        parts(&[b"ABC"]),
        parts(&[b"Bc", b"8"]),
        parts(&[b"X", b"A (only the first frame is matched)"]),
        parts(&[b"\x00bin\xff", b"9"]),
        parts(&[b"\x00bi", b"10"]),
        parts(&[b"BCA", b"", b"", b"11"]),
    ];
    for m in &sent {
        p.send(m);
    }
    let end = parts(&[b"A-end"]);
    p.send(&end);
    let want: Vec<Vec<Vec<u8>>> = sent
        .iter()
        .filter(|m| {
            let topic = &m[0];
            [&b"A"[..], b"BC", b"\x00bin"]
                .iter()
                .any(|prefix| topic.starts_with(prefix))
        })
        .cloned()
        .collect();
    let got = collect_until(&s, &end, &[b"A-probe"]);
    assert_eq!(
        got.iter().map(|m| shown(m)).collect::<Vec<_>>(),
        want.iter().map(|m| shown(m)).collect::<Vec<_>>(),
        "{p} -> {s}: messages after prefix filtering"
    );
}

fn prefix_filtering(pub_lib: Lib, sub_lib: Lib) {
    filtering(pub_lib, sub_lib, Transport::Tcp);
}

fn filtering_over_ipc(pub_lib: Lib, sub_lib: Lib) {
    filtering(pub_lib, sub_lib, Transport::Ipc);
}

fn unsubscribe_stops_delivery(pub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let (p, s) = connected(&h, pub_lib, Pub, sub_lib, Sub, Transport::Tcp);
    subscribe(&s, b"B");
    subscribe(&s, b"A");
    p.await_subscription_with(&s, b"A-probe");
    p.send_strs(&[b"A", b"before"]);
    s.expect(&parts(&[b"A", b"before"]), &p);

    // Queue "A" messages at the subscriber, then cancel "A": libzmq's SUB filters what
    // it hands out, so even those already queued must not be delivered.
    p.send_strs(&[b"A", b"queued"]);
    p.send_strs(&[b"B", b"marker"]);
    std::thread::sleep(std::time::Duration::from_millis(100));
    unsubscribe(&s, b"A");
    for i in 0..20u8 {
        p.send_strs(&[b"A", b"after", &[i]]);
    }
    p.send_strs(&[b"B", b"end"]);
    let got = collect_until(&s, &parts(&[b"B", b"end"]), &[b"A-probe"]);
    assert_eq!(
        got.iter().map(|m| shown(m)).collect::<Vec<_>>(),
        vec![shown(&parts(&[b"B", b"marker"]))],
        "{p} -> {s}: delivered after UNSUBSCRIBE A"
    );
}

fn duplicate_subscriptions_are_counted(pub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let (p, s) = connected(&h, pub_lib, Pub, sub_lib, Sub, Transport::Tcp);
    subscribe(&s, b"A");
    subscribe(&s, b"A");
    p.await_subscription_with(&s, b"A-probe");
    // One of two identical subscriptions removed: "A" must stay subscribed.
    unsubscribe(&s, b"A");
    // Whatever the subscriber sent upstream for that is ordered before "Z".
    subscribe(&s, b"Z");
    p.await_subscription_with(&s, b"Z-probe");
    p.send_strs(&[b"A", b"still subscribed"]);
    p.send_strs(&[b"Z", b"end"]);
    let got = collect_until(&s, &parts(&[b"Z", b"end"]), &[b"A-probe", b"Z-probe"]);
    assert_eq!(
        got.iter().map(|m| shown(m)).collect::<Vec<_>>(),
        vec![shown(&parts(&[b"A", b"still subscribed"]))],
        "{p} -> {s}: subscribe A twice, unsubscribe once"
    );

    // The second UNSUBSCRIBE removes it.
    unsubscribe(&s, b"A");
    p.send_strs(&[b"A", b"gone"]);
    p.send_strs(&[b"Z", b"end2"]);
    let got = collect_until(&s, &parts(&[b"Z", b"end2"]), &[b"A-probe", b"Z-probe"]);
    assert!(
        got.is_empty(),
        "{p} -> {s}: after the second UNSUBSCRIBE got {:?}",
        got.iter().map(|m| shown(m)).collect::<Vec<_>>()
    );
}

fn xpub_reports_sub_subscriptions(xpub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let (x, s) = connected(&h, xpub_lib, XPub, sub_lib, Sub, Transport::Tcp);
    subscribe(&s, b"news");
    x.expect_subscription(&s, b"\x01news");
    subscribe(&s, b"");
    x.expect_subscription(&s, b"\x01");
    subscribe(&s, b"\x00\x01\xffbin");
    x.expect_subscription(&s, b"\x01\x00\x01\xffbin");
    unsubscribe(&s, b"news");
    x.expect_subscription(&s, b"\x00news");
    unsubscribe(&s, b"");
    x.expect_subscription(&s, b"\x00");

    // Only the binary subscription is left: the XPUB must filter by it.
    x.send_strs(&[b"news", b"filtered out"]);
    x.send_strs(&[b"\x00\x01\xffbinary", b"delivered"]);
    s.expect(&parts(&[b"\x00\x01\xffbinary", b"delivered"]), &x);
}

fn xpub_reports_xsub_subscriptions(xpub_lib: Lib, xsub_lib: Lib) {
    let h = Harness::new();
    let (x, s) = connected(&h, xpub_lib, XPub, xsub_lib, XSub, Transport::Tcp);
    s.send_strs(&[b"\x01news"]);
    x.expect_subscription(&s, b"\x01news");
    s.send_strs(&[b"\x01sport"]);
    x.expect_subscription(&s, b"\x01sport");
    s.send_strs(&[b"\x00sport"]);
    x.expect_subscription(&s, b"\x00sport");
    x.send_strs(&[b"sport", b"cancelled"]);
    x.send_strs(&[b"news", b"kept"]);
    s.expect(&parts(&[b"news", b"kept"]), &x);
}

/// Two subscribers (of `sub_lib`) on one XPUB (of `xpub_lib`) both subscribe "dup", then
/// a topic of their own ("s0"/"s1") that marks the end of what they sent. Returns how
/// many "\x01dup" the XPUB reported.
fn dup_subscriptions(
    h: &Harness,
    xpub_lib: Lib,
    sub_lib: Lib,
    verbose: bool,
) -> (usize, Peer, Vec<Peer>) {
    let x = h.peer(xpub_lib, XPub);
    x.s.set_int(zmq::XPUB_VERBOSE, verbose as i32)
        .expect("XPUB_VERBOSE");
    let ep = h.bind(x.s.as_ref(), Transport::Tcp);
    let subs: Vec<Peer> = (0..2)
        .map(|i| {
            let s = h.peer(sub_lib, Sub);
            // Subscribed before connecting, so once the XPUB reports it the connection
            // is up and later subscriptions travel on it exactly once (this keeps the
            // scenario independent of `sub_sends_each_subscription_once`).
            subscribe(&s, format!("c{i}").as_bytes());
            s.s.connect(&ep).expect("connect");
            x.expect_subscription(&s, format!("\x01c{i}").as_bytes());
            s
        })
        .collect();
    let mut dups = 0;
    for (i, s) in subs.iter().enumerate() {
        subscribe(s, b"dup");
        subscribe(s, format!("s{i}").as_bytes());
        // Each subscriber's messages arrive in order: once its marker is reported, its
        // "dup" has been processed.
        loop {
            let m = x.next_subscription(s);
            if m == b"\x01dup" {
                dups += 1;
            } else {
                assert_eq!(
                    show(&m),
                    format!("\\x01s{i}"),
                    "{x}: unexpected subscription"
                );
                break;
            }
        }
    }
    (dups, x, subs)
}

fn xpub_not_verbose(xpub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let (dups, x, subs) = dup_subscriptions(&h, xpub_lib, sub_lib, false);
    assert_eq!(
        dups, 1,
        "{x} without XPUB_VERBOSE: reports of \\x01dup from two {}",
        subs[0]
    );
}

fn xpub_verbose(xpub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let (dups, x, subs) = dup_subscriptions(&h, xpub_lib, sub_lib, true);
    assert_eq!(
        dups, 2,
        "{x} with XPUB_VERBOSE: reports of \\x01dup from two {}",
        subs[0]
    );
}

fn xpub_last_unsubscribe(xpub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let (_, x, subs) = dup_subscriptions(&h, xpub_lib, sub_lib, true);
    for (i, s) in subs.iter().enumerate() {
        unsubscribe(s, b"dup");
        subscribe(s, format!("u{i}").as_bytes());
        let mut cancels = 0;
        loop {
            let m = x.next_subscription(s);
            if m == b"\x00dup" {
                cancels += 1;
            } else {
                assert_eq!(
                    show(&m),
                    format!("\\x01u{i}"),
                    "{x}: unexpected subscription"
                );
                break;
            }
        }
        let want = if i == 0 { 0 } else { 1 };
        assert_eq!(
            cancels,
            want,
            "{x}: \\x00dup reports after {} of 2 subscribers cancelled",
            i + 1
        );
    }
}

fn xsub_user_messages_reach_xpub(xpub_lib: Lib, xsub_lib: Lib) {
    let h = Harness::new();
    let (x, s) = connected(&h, xpub_lib, XPub, xsub_lib, XSub, Transport::Tcp);
    s.send_strs(&[b"\x01"]);
    x.expect_subscription(&s, b"\x01");
    // Neither frame starts with 0 or 1, so neither is a (un)subscription.
    let up = parts(&[b"", b"upstream", b"message"]);
    s.send(&up);
    x.expect(&up, &s);
    let up2 = parts(&[b"hello upstream"]);
    s.send(&up2);
    x.expect(&up2, &s);
    // And downstream still works.
    x.send_strs(&[b"down"]);
    s.expect(&parts(&[b"down"]), &x);
}

fn multiple_subscribers(pub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let p = h.peer(pub_lib, Pub);
    let ep = h.bind(p.s.as_ref(), Transport::Tcp);
    let topics: [&[u8]; 3] = [b"red", b"green", b"re"];
    let subs: Vec<Peer> = topics
        .iter()
        .map(|t| {
            let s = h.peer(sub_lib, Sub);
            subscribe(&s, t);
            subscribe(&s, b"sync");
            s.s.connect(&ep).expect("connect");
            s
        })
        .collect();
    for s in &subs {
        p.await_subscription_with(s, b"sync");
    }
    let sent = [&b"red"[..], b"green", b"blue", b"reddish", b"r"];
    for t in sent {
        p.send_strs(&[t, b"body"]);
    }
    p.send_strs(&[b"sync-end"]);
    for (s, topic) in subs.iter().zip(topics) {
        let got = collect_until(s, &parts(&[b"sync-end"]), &[b"sync"]);
        let want: Vec<Vec<String>> = sent
            .iter()
            .filter(|t| t.starts_with(topic))
            .map(|t| shown(&parts(&[t, b"body"])))
            .collect();
        assert_eq!(
            got.iter().map(|m| shown(m)).collect::<Vec<_>>(),
            want,
            "{p} -> {s} subscribed to {}",
            show(topic)
        );
    }
}

/// A SUB that subscribes while its connection is still being established must send
/// each subscription once, as libzmq does: a verbose XPUB reports every copy.
fn sub_sends_each_subscription_once(xpub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let x = h.peer(xpub_lib, XPub);
    x.s.set_int(zmq::XPUB_VERBOSE, 1).expect("XPUB_VERBOSE");
    let s = h.peer(sub_lib, Sub);
    // Connect before anything listens (ipc path known in advance), subscribe, then bind:
    // the subscriptions are certainly made before the handshake.
    let ep = h.bind_endpoint(Transport::Ipc);
    s.s.connect(&ep).expect("connect");
    subscribe(&s, b"a");
    subscribe(&s, b"b");
    x.s.bind(&ep).expect("bind");
    x.expect_subscription(&s, b"\x01a");
    x.expect_subscription(&s, b"\x01b");
    subscribe(&s, b"end");
    let mut extra = Vec::new();
    loop {
        let m = x.next_subscription(&s);
        if m == b"\x01end" {
            break;
        }
        extra.push(show(&m));
    }
    assert!(
        extra.is_empty(),
        "{x} (XPUB_VERBOSE) got extra subscription messages from {s}: {extra:?}"
    );
}

/// When a subscriber disconnects, an XPUB reports "\x00topic" for each topic nobody else
/// is subscribed to any more (and nothing for topics others still hold).
fn xpub_subscriber_leaves(xpub_lib: Lib, sub_lib: Lib) {
    let h = Harness::new();
    let x = h.peer(xpub_lib, XPub);
    let ep = h.bind(x.s.as_ref(), Transport::Tcp);
    let stay = h.peer(sub_lib, Sub);
    subscribe(&stay, b"shared");
    stay.s.connect(&ep).expect("connect");
    x.expect_subscription(&stay, b"\x01shared");

    // The leaving subscriber lives in its own context so it can really go away.
    let (leaving, own_ctx) = match sub_lib {
        Lib::Ferro => {
            let c = ferromq::Context::new();
            let s = c.socket(Sub).expect("socket");
            (Peer::new(Box::new(s), Sub), Some(c))
        }
        Lib::Zmq => (h.peer(Lib::Zmq, Sub), None),
    };
    ferromq_interop::configure(leaving.s.as_ref());
    subscribe(&leaving, b"shared");
    subscribe(&leaving, b"own");
    leaving.s.connect(&ep).expect("connect");
    // "shared" is already known: only "own" is reported.
    x.expect_subscription(&leaving, b"\x01own");
    drop(leaving);
    if let Some(c) = own_ctx {
        c.term().expect("ferromq term");
    }
    x.expect_subscription(&stay, b"\x00own");
    // "shared" is still held by `stay`: nothing more, and `stay` still gets data.
    x.send_strs(&[b"shared", b"data"]);
    stay.expect(&parts(&[b"shared", b"data"]), &x);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(
        x.try_recv().is_none(),
        "{x}: unexpected subscription message after a subscriber left"
    );
}
