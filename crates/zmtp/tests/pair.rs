//! Two engines (or an engine and hand-crafted bytes) talking in memory.

use ferromq_zmtp::{
    codes, Bytes, Engine, EngineConfig, Event, MechanismConfig, ProtocolError, SocketType,
};

fn config(socket_type: SocketType, routing_id: &'static [u8]) -> EngineConfig {
    EngineConfig {
        socket_type,
        routing_id: Bytes::from_static(routing_id),
        null_zap: false,
        mechanism: MechanismConfig::Null,
        max_msg_size: None,
    }
}

/// Moves at most `chunk` bytes at a time of `from`'s output into `to`
/// through `input_buffer`/`input_filled`, as a socket driver would. Returns
/// whether anything moved.
fn transfer(from: &mut Engine, to: &mut Engine, chunk: usize) -> bool {
    let mut moved = false;
    while from.has_output() {
        let n = from.output().len().min(chunk);
        let buf = to.input_buffer(chunk.min(64 * 1024));
        let n = n.min(buf.len());
        buf[..n].copy_from_slice(&from.output()[..n]);
        to.input_filled(n);
        from.consume_output(n);
        moved = true;
    }
    moved
}

fn drain(e: &mut Engine, events: &mut Vec<Event>) -> Result<(), ProtocolError> {
    while let Some(ev) = e.poll_event()? {
        events.push(ev);
    }
    Ok(())
}

/// Runs both engines until neither has output left, collecting events.
fn pump_chunked(
    a: &mut Engine,
    b: &mut Engine,
    chunk: usize,
) -> Result<(Vec<Event>, Vec<Event>), ProtocolError> {
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    loop {
        let moved_ab = transfer(a, b, chunk);
        drain(b, &mut eb)?;
        let moved_ba = transfer(b, a, chunk);
        drain(a, &mut ea)?;
        if !moved_ab && !moved_ba {
            return Ok((ea, eb));
        }
    }
}

fn pump(a: &mut Engine, b: &mut Engine) -> (Vec<Event>, Vec<Event>) {
    pump_chunked(a, b, usize::MAX).expect("protocol error")
}

fn connected(ta: SocketType, tb: SocketType) -> (Engine, Engine) {
    let mut a = Engine::new(config(ta, b""));
    let mut b = Engine::new(config(tb, b""));
    let (ea, eb) = pump(&mut a, &mut b);
    assert!(matches!(ea[..], [Event::Ready(_)]), "{ea:?}");
    assert!(matches!(eb[..], [Event::Ready(_)]), "{eb:?}");
    (a, b)
}

fn hand_greeting(major: u8, minor: u8, mechanism: &[u8]) -> Vec<u8> {
    let mut g = vec![0u8; 64];
    g[0] = 0xFF;
    g[9] = 0x7F;
    g[10] = major;
    g[11] = minor;
    g[12..12 + mechanism.len()].copy_from_slice(mechanism);
    g
}

fn hand_command(name: &[u8], data: &[u8]) -> Vec<u8> {
    let len = 1 + name.len() + data.len();
    assert!(len <= 255);
    let mut f = vec![0x04, len as u8, name.len() as u8];
    f.extend_from_slice(name);
    f.extend_from_slice(data);
    f
}

fn hand_ready(socket_type: &str) -> Vec<u8> {
    let mut meta = vec![11];
    meta.extend_from_slice(b"Socket-Type");
    meta.extend_from_slice(&(socket_type.len() as u32).to_be_bytes());
    meta.extend_from_slice(socket_type.as_bytes());
    hand_command(b"READY", &meta)
}

fn message(more: bool, body: &[u8]) -> Event {
    Event::Message {
        more,
        body: Bytes::copy_from_slice(body),
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

#[test]
fn handshake_reports_peer_info() {
    let mut a = Engine::new(config(SocketType::Dealer, b"client-1"));
    let mut b = Engine::new(config(SocketType::Router, b""));
    assert!(!a.is_ready() && a.peer().is_none());
    let (ea, eb) = pump(&mut a, &mut b);
    let [Event::Ready(pa)] = &ea[..] else {
        panic!("{ea:?}")
    };
    let [Event::Ready(pb)] = &eb[..] else {
        panic!("{eb:?}")
    };
    assert_eq!(pa.socket_type, SocketType::Router);
    assert_eq!(pa.routing_id, None);
    assert_eq!(pa.minor_version, 1);
    assert_eq!(pb.socket_type, SocketType::Dealer);
    assert_eq!(pb.routing_id.as_deref(), Some(&b"client-1"[..]));
    assert!(pb
        .properties
        .iter()
        .any(|(k, v)| k == "Socket-Type" && &v[..] == b"DEALER"));
    assert!(a.is_ready() && b.is_ready());
    assert_eq!(b.peer(), Some(pb));
}

#[test]
fn messages_of_all_sizes_pass_byte_exact() {
    let (mut a, mut b) = connected(SocketType::Push, SocketType::Pull);
    let sizes = [0, 1, 255, 256, 1 << 20];
    for &n in &sizes {
        a.send_message(false, &pattern(n));
    }
    let (_, eb) = pump(&mut a, &mut b);
    let expected: Vec<Event> = sizes.iter().map(|&n| message(false, &pattern(n))).collect();
    assert_eq!(eb, expected);
}

#[test]
fn large_message_through_small_reads() {
    let (mut a, mut b) = connected(SocketType::Pair, SocketType::Pair);
    let body = pattern(3 << 20);
    a.send_message(true, &body);
    a.send_message(false, b"tail");
    let (_, eb) = pump_chunked(&mut a, &mut b, 64 * 1024).unwrap();
    assert_eq!(eb, vec![message(true, &body), message(false, b"tail")]);
}

#[test]
fn multipart_more_flags_are_preserved() {
    let (mut a, mut b) = connected(SocketType::Dealer, SocketType::Router);
    a.send_message(true, b"");
    a.send_message(true, b"part2");
    a.send_message(false, b"part3");
    b.send_message(false, b"reply");
    let (ea, eb) = pump(&mut a, &mut b);
    assert_eq!(
        eb,
        vec![
            message(true, b""),
            message(true, b"part2"),
            message(false, b"part3")
        ]
    );
    assert_eq!(ea, vec![message(false, b"reply")]);
}

#[test]
fn caller_written_frame_header() {
    let (a, mut b) = connected(SocketType::Push, SocketType::Pull);
    let body = pattern(300);
    let (h, n) = Engine::frame_header(true, body.len());
    assert_eq!(&h[..n], &[0x03, 0, 0, 0, 0, 0, 0, 1, 44]);
    assert_eq!(&Engine::frame_header(false, 5).0[..2], &[0x00, 5]);
    b.feed(&h[..n]);
    b.feed(&body);
    assert_eq!(b.poll_event(), Ok(Some(message(true, &body))));
    assert!(!a.has_output());
}

#[test]
fn subscriptions_between_31_peers_are_commands() {
    let (mut sub, mut publ) = connected(SocketType::Sub, SocketType::XPub);
    sub.send_subscribe(b"topic");
    sub.send_cancel(b"");
    let (_, ep) = pump(&mut sub, &mut publ);
    assert_eq!(
        ep,
        vec![
            Event::Subscribe(Bytes::from_static(b"topic")),
            Event::Cancel(Bytes::new())
        ]
    );
}

#[test]
fn subscriptions_to_a_30_peer_are_messages() {
    let mut sub = Engine::new(config(SocketType::Sub, b""));
    sub.feed(&hand_greeting(3, 0, b"NULL"));
    sub.feed(&hand_ready("PUB"));
    let Ok(Some(Event::Ready(info))) = sub.poll_event() else {
        panic!("no Ready")
    };
    assert_eq!(info.minor_version, 0);
    let before = sub.output().len();
    sub.send_subscribe(b"abc");
    sub.send_cancel(b"abc");
    assert_eq!(
        &sub.output()[before..],
        &[0x00, 4, 1, b'a', b'b', b'c', 0x00, 4, 0, b'a', b'b', b'c']
    );
    // The 3.0 peer's own subscription messages arrive as plain messages.
    sub.feed(&[0x00, 2, 1, b'x']);
    assert_eq!(sub.poll_event(), Ok(Some(message(false, &[1, b'x']))));
}

#[test]
fn ping_pong_round_trip() {
    let (mut a, mut b) = connected(SocketType::Req, SocketType::Rep);
    a.send_ping(50, b"ctx");
    let (ea, eb) = pump(&mut a, &mut b);
    assert_eq!(
        eb,
        vec![Event::Ping {
            ttl: 50,
            context: Bytes::from_static(b"ctx")
        }]
    );
    assert_eq!(
        ea,
        vec![Event::Pong {
            context: Bytes::from_static(b"ctx")
        }]
    );
}

#[test]
fn one_byte_at_a_time() {
    let mut a = Engine::new(config(SocketType::Dealer, b"id"));
    let mut b = Engine::new(config(SocketType::Dealer, b""));
    let (ea, eb) = pump_chunked(&mut a, &mut b, 1).unwrap();
    assert_eq!((ea.len(), eb.len()), (1, 1));
    a.send_message(true, b"x");
    a.send_message(false, &pattern(2000));
    b.send_ping(1, b"");
    let (ea, eb) = pump_chunked(&mut a, &mut b, 1).unwrap();
    let pong = Event::Pong {
        context: Bytes::new(),
    };
    let expected = vec![message(true, b"x"), message(false, &pattern(2000)), pong];
    assert!(eb == expected, "unexpected events at b");
    assert!(matches!(ea[..], [Event::Ping { ttl: 1, .. }]), "{ea:?}");
}

#[test]
fn garbage_is_refused_before_any_message() {
    let mut e = Engine::new(config(SocketType::Rep, b""));
    e.feed(b"GET / HTTP/1.1\r\n");
    let err = e.poll_event().unwrap_err();
    assert_eq!(err, ProtocolError::BadSignature);
    assert_eq!(err.protocol_error_code(), codes::ZMTP_UNSPECIFIED);
    e.feed(b"Host: x\r\n\r\n");
    assert_eq!(e.poll_event(), Err(ProtocolError::BadSignature));
    // The start of our greeting (the signature) is still queued; neither the rest of
    // it nor a READY was ever added.
    assert_eq!(e.output().len(), 10);
}

#[test]
fn old_versions_are_refused() {
    // (1 is ZMTP 2.0's revision: spoken, see the engine's tests.)
    for major in [0, 2] {
        let mut e = Engine::new(config(SocketType::Pair, b""));
        // Only signature + version byte: refused without waiting for more.
        e.feed(&hand_greeting(major, 0, b"NULL")[..11]);
        assert_eq!(
            e.poll_event(),
            Err(ProtocolError::UnsupportedVersion { major })
        );
    }
}

#[test]
fn mechanism_mismatch_is_refused() {
    let mut e = Engine::new(config(SocketType::Pair, b""));
    e.feed(&hand_greeting(3, 1, b"PLAIN"));
    let err = e.poll_event().unwrap_err();
    assert_eq!(
        err,
        ProtocolError::MechanismMismatch {
            ours: "NULL".into(),
            peer: "PLAIN".into()
        }
    );
    assert_eq!(err.protocol_error_code(), codes::ZMTP_MECHANISM_MISMATCH);
}

#[test]
fn incompatible_socket_types_are_refused() {
    let mut push = Engine::new(config(SocketType::Push, b""));
    let mut publ = Engine::new(config(SocketType::Pub, b""));
    // PUSH sees PUB's READY first (signatures cross in the first exchange, major
    // versions in the second; PUB's greeting completes first, as PUB reads first).
    let err = pump_chunked(&mut push, &mut publ, usize::MAX).unwrap_err();
    assert_eq!(err.protocol_error_code(), codes::ZMTP_INVALID_METADATA);
    assert_eq!(
        err,
        ProtocolError::IncompatibleSocketType {
            ours: SocketType::Push,
            peer: SocketType::Pub
        }
    );
    // PUSH had queued its READY before failing; PUB refuses it too.
    transfer(&mut push, &mut publ, usize::MAX);
    assert_eq!(
        publ.poll_event(),
        Err(ProtocolError::IncompatibleSocketType {
            ours: SocketType::Pub,
            peer: SocketType::Push
        })
    );
    assert!(!publ.is_ready() && !push.is_ready());
}

#[test]
fn huge_frame_refused_from_header_alone() {
    for (limit, max) in [(Some(1 << 20), 1 << 20), (None, isize::MAX as u64)] {
        let mut cfg = config(SocketType::Pull, b"");
        cfg.max_msg_size = limit;
        let mut e = Engine::new(cfg);
        e.feed(&hand_greeting(3, 1, b"NULL"));
        e.feed(&hand_ready("PUSH"));
        assert!(matches!(e.poll_event(), Ok(Some(Event::Ready(_)))));
        e.feed(&[0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(
            e.poll_event(),
            Err(ProtocolError::FrameTooLarge {
                size: u64::MAX,
                max
            })
        );
        // Nothing is buffered after the failure.
        assert!(e.input_buffer(0).is_empty());
    }
}

#[test]
fn announced_large_frame_reserves_bounded_space() {
    let mut e = Engine::new(config(SocketType::Pull, b""));
    e.feed(&hand_greeting(3, 1, b"NULL"));
    e.feed(&hand_ready("PUSH"));
    assert!(matches!(e.poll_event(), Ok(Some(Event::Ready(_)))));
    e.feed(&[0x02, 0, 0, 0, 0x40, 0, 0, 0, 0]); // 1 GiB body announced
    assert_eq!(e.poll_event(), Ok(None));
    let len = e.input_buffer(64 * 1024).len();
    assert!((64 * 1024..16 << 20).contains(&len), "{len}");
}

#[test]
fn message_limit_is_inclusive() {
    let mut cfg = config(SocketType::Pull, b"");
    cfg.max_msg_size = Some(300);
    let mut pull = Engine::new(cfg);
    let mut push = Engine::new(config(SocketType::Push, b""));
    pump(&mut push, &mut pull);
    push.send_message(false, &pattern(300));
    let (_, ep) = pump(&mut push, &mut pull);
    assert_eq!(ep, vec![message(false, &pattern(300))]);
    push.send_message(false, &pattern(301));
    let err = pump_chunked(&mut push, &mut pull, usize::MAX).unwrap_err();
    assert_eq!(
        err,
        ProtocolError::FrameTooLarge {
            size: 301,
            max: 300
        }
    );
}

#[test]
fn reserved_flag_bits_are_refused() {
    let (mut a, mut b) = connected(SocketType::Pair, SocketType::Pair);
    b.feed(&[0x80, 0]);
    assert_eq!(b.poll_event(), Err(ProtocolError::ReservedFlags(0x80)));
    a.feed(&[0x05, 0]);
    assert_eq!(a.poll_event(), Err(ProtocolError::CommandWithMore));
}

#[test]
fn traffic_before_ready_is_refused() {
    let mut e = Engine::new(config(SocketType::XSub, b""));
    e.feed(&hand_greeting(3, 1, b"NULL"));
    e.feed(&hand_command(b"SUBSCRIBE", b"a"));
    let err = e.poll_event().unwrap_err();
    assert_eq!(
        err,
        ProtocolError::UnexpectedCommand {
            command: "SUBSCRIBE".into()
        }
    );
    assert_eq!(err.protocol_error_code(), codes::ZMTP_UNEXPECTED_COMMAND);

    let mut e = Engine::new(config(SocketType::Pair, b""));
    e.feed(&hand_greeting(3, 1, b"NULL"));
    e.feed(&[0x00, 1, b'm']);
    assert_eq!(e.poll_event(), Err(ProtocolError::MessageBeforeReady));
}

#[test]
fn peer_error_is_reported() {
    let (mut a, mut b) = connected(SocketType::Pair, SocketType::Pair);
    a.send_error("go away");
    let (_, eb) = pump(&mut a, &mut b);
    assert_eq!(
        eb,
        vec![Event::PeerError {
            reason: "go away".into()
        }]
    );
    b.feed(&[0x00, 1, b'm']);
    assert_eq!(b.poll_event(), Ok(None));
}
