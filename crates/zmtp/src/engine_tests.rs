//! Unit tests of the engine against hand-crafted peer bytes.

use super::*;

fn config(socket_type: SocketType, routing_id: &'static [u8]) -> EngineConfig {
    EngineConfig {
        socket_type,
        routing_id: Bytes::from_static(routing_id),
        mechanism: MechanismConfig::Null,
        null_zap: false,
        max_msg_size: None,
    }
}

fn peer_greeting(minor: u8) -> Vec<u8> {
    let mut g = greeting::encode(&greeting::mechanism_field(b"NULL"), false).to_vec();
    g[11] = minor;
    g
}

fn command_frame(name: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    command::write_command(&mut out, name, &[data]);
    out.to_vec()
}

fn metadata(props: &[(&str, &[u8])]) -> Vec<u8> {
    let mut meta = Vec::new();
    for (name, value) in props {
        meta.push(name.len() as u8);
        meta.extend_from_slice(name.as_bytes());
        meta.extend_from_slice(&(value.len() as u32).to_be_bytes());
        meta.extend_from_slice(value);
    }
    meta
}

type Props<'a> = &'a [(&'a str, &'a [u8])];

/// An engine that has completed the handshake with a hand-crafted PUB peer.
fn ready_sub(max_msg_size: Option<u64>) -> Engine {
    let mut cfg = config(SocketType::Sub, b"");
    cfg.max_msg_size = max_msg_size;
    let mut e = Engine::new(cfg);
    e.feed(&peer_greeting(1));
    e.feed(&command_frame(
        b"READY",
        &metadata(&[("Socket-Type", b"PUB")]),
    ));
    assert!(matches!(e.poll_event(), Ok(Some(Event::Ready(_)))));
    e
}

#[test]
fn ready_is_queued_only_after_a_valid_greeting() {
    let mut e = Engine::new(config(SocketType::Dealer, b"me"));
    // The signature (padding: routing id length + 1); the major version waits for the
    // peer's signature, the rest for the peer's version, as libzmq's.
    assert_eq!(e.output(), &[0xFF, 0, 0, 0, 0, 0, 0, 0, 3, 0x7F]);
    let g = peer_greeting(1);
    e.feed(&g[..9]);
    assert_eq!(e.poll_event(), Ok(None));
    assert_eq!(e.output().len(), greeting::SIGNATURE_LEN);
    e.feed(&g[9..10]);
    assert_eq!(e.poll_event(), Ok(None));
    assert_eq!(e.output().len(), greeting::PREFIX_LEN);
    assert_eq!(e.output()[10], 3, "our major version");
    e.feed(&g[10..63]);
    assert_eq!(e.poll_event(), Ok(None));
    assert_eq!(e.output().len(), GREETING_LEN);
    e.feed(&g[63..]);
    assert_eq!(e.poll_event(), Ok(None));
    assert!(!e.is_ready());
    let expected = command_frame(
        b"READY",
        &metadata(&[("Socket-Type", b"DEALER"), ("Identity", b"me")]),
    );
    assert_eq!(&e.output()[GREETING_LEN..], &expected[..]);
}

#[test]
fn only_req_dealer_and_router_announce_an_identity() {
    // RFC 23 and libzmq: the other socket types send Socket-Type alone.
    for (kind, identity) in [
        (SocketType::Req, true),
        (SocketType::Dealer, true),
        (SocketType::Router, true),
        (SocketType::Pair, false),
        (SocketType::Push, false),
        (SocketType::Sub, false),
        (SocketType::Rep, false),
    ] {
        let mut e = Engine::new(config(kind, b""));
        e.feed(&peer_greeting(1));
        assert_eq!(e.poll_event(), Ok(None));
        let mut props: Vec<(&str, &[u8])> = vec![("Socket-Type", kind.name().as_bytes())];
        if identity {
            props.push(("Identity", b""));
        }
        let expected = command_frame(b"READY", &metadata(&props));
        assert_eq!(&e.output()[GREETING_LEN..], &expected[..], "{kind:?}");
    }
}

#[test]
fn property_names_are_case_insensitive() {
    let mut e = Engine::new(config(SocketType::Router, b""));
    e.feed(&peer_greeting(1));
    let meta = metadata(&[
        ("socket-TYPE", b"REQ"),
        ("IDENTITY", b"abc"),
        ("X-Extra", b"1"),
    ]);
    e.feed(&command_frame(b"READY", &meta));
    let Ok(Some(Event::Ready(info))) = e.poll_event() else {
        panic!("no Ready");
    };
    assert_eq!(info.socket_type, SocketType::Req);
    assert_eq!(info.routing_id.as_deref(), Some(&b"abc"[..]));
    assert_eq!(info.properties.len(), 3);
    assert_eq!(info.properties[2].0, "X-Extra");
    assert_eq!(e.peer(), Some(&info));
}

#[test]
fn ready_metadata_is_validated() {
    let cases: [(Props, ProtocolError); 3] = [
        (&[("Identity", b"x")], ProtocolError::MissingSocketType),
        (
            &[("Socket-Type", b"SERVER")],
            ProtocolError::UnknownSocketType("SERVER".into()),
        ),
        (
            &[("Socket-Type", b"SUB")],
            ProtocolError::IncompatibleSocketType {
                ours: SocketType::Sub,
                peer: SocketType::Sub,
            },
        ),
    ];
    for (props, expected) in cases {
        let mut e = Engine::new(config(SocketType::Sub, b""));
        e.feed(&peer_greeting(1));
        e.feed(&command_frame(b"READY", &metadata(props)));
        assert_eq!(e.poll_event(), Err(expected));
    }
    let mut e = Engine::new(config(SocketType::Sub, b""));
    e.feed(&peer_greeting(1));
    e.feed(&command_frame(b"READY", b"\x0bSocket-Type\x00\x00"));
    assert_eq!(e.poll_event(), Err(ProtocolError::InvalidMetadata));
}

#[test]
fn errors_are_sticky_and_input_is_discarded() {
    let mut e = Engine::new(config(SocketType::Pair, b""));
    e.feed(b"\x00garbage");
    assert_eq!(e.poll_event(), Err(ProtocolError::BadSignature));
    e.feed(&peer_greeting(1));
    assert_eq!(e.poll_event(), Err(ProtocolError::BadSignature));
    let n = e.input_buffer(16).len();
    e.input_filled(n);
    assert!(e.input_buffer(0).is_empty());
    assert_eq!(e.poll_event(), Err(ProtocolError::BadSignature));
}

#[test]
fn commands_in_the_wrong_state_are_refused() {
    let mut e = Engine::new(config(SocketType::Sub, b""));
    e.feed(&peer_greeting(1));
    e.feed(&command_frame(b"PING", b"\x00\x00"));
    assert_eq!(
        e.poll_event(),
        Err(ProtocolError::UnexpectedCommand {
            command: "PING".into()
        })
    );

    // A name that overruns its body, in the greeting's wake: libzmq's handshake looks
    // for the commands it expects by their first bytes, so this is unexpected too (after
    // the handshake it is malformed: `malformed_commands_are_refused`).
    let mut e = Engine::new(config(SocketType::Sub, b""));
    let mut input = peer_greeting(1);
    input.extend_from_slice(&[0x04, 5, 9, b'J', b'U', b'N', b'K']);
    e.feed(&input);
    assert_eq!(
        e.poll_event().unwrap_err().protocol_error_code(),
        crate::codes::ZMTP_UNEXPECTED_COMMAND
    );

    let mut e = ready_sub(None);
    e.feed(&command_frame(
        b"READY",
        &metadata(&[("Socket-Type", b"PUB")]),
    ));
    let err = e.poll_event().unwrap_err();
    assert_eq!(
        err.protocol_error_code(),
        crate::codes::ZMTP_UNEXPECTED_COMMAND
    );
    assert!(e.is_ready());
}

#[test]
fn unknown_commands_after_handshake_are_ignored() {
    let mut e = ready_sub(None);
    e.feed(&command_frame(b"X-FUTURE", b"whatever"));
    e.feed(&[0x00, 2, b'h', b'i']);
    assert_eq!(
        e.poll_event(),
        Ok(Some(Event::Message {
            more: false,
            body: Bytes::from_static(b"hi")
        }))
    );
    assert_eq!(e.poll_event(), Ok(None));
}

#[test]
fn malformed_commands_are_refused() {
    let mut e = ready_sub(None);
    e.feed(&command_frame(b"PING", b"\x01"));
    let err = e.poll_event().unwrap_err();
    assert_eq!(
        err,
        ProtocolError::MalformedCommand {
            command: "PING".into()
        }
    );
    let mut e = ready_sub(None);
    e.feed(&[0x04, 3, 9, b'A', b'B']);
    assert_eq!(
        e.poll_event().unwrap_err().protocol_error_code(),
        crate::codes::ZMTP_MALFORMED_COMMAND_UNSPECIFIED
    );
    let mut e = ready_sub(None);
    e.feed(&command_frame(b"ERROR", b"\x09short"));
    assert_eq!(
        e.poll_event().unwrap_err().protocol_error_code(),
        crate::codes::ZMTP_MALFORMED_COMMAND_ERROR
    );
}

#[test]
fn peer_error_closes_the_engine() {
    let mut e = Engine::new(config(SocketType::Sub, b""));
    e.feed(&peer_greeting(1));
    e.feed(&command_frame(b"ERROR", b"\x06denied"));
    e.feed(&command_frame(
        b"READY",
        &metadata(&[("Socket-Type", b"PUB")]),
    ));
    assert_eq!(
        e.poll_event(),
        Ok(Some(Event::PeerError {
            reason: "denied".into()
        }))
    );
    assert_eq!(e.poll_event(), Ok(None));
    assert!(!e.is_ready());
}

#[test]
fn small_message_limit_does_not_block_the_handshake() {
    let mut e = ready_sub(Some(4));
    e.feed(&[0x00, 4, 1, 2, 3, 4]);
    assert!(matches!(e.poll_event(), Ok(Some(Event::Message { .. }))));
    e.feed(&[0x01, 5]);
    assert_eq!(
        e.poll_event(),
        Err(ProtocolError::FrameTooLarge { size: 5, max: 4 })
    );
}

#[test]
fn ping_context_is_echoed_and_truncated_like_libzmq() {
    let mut e = ready_sub(None);
    let before = e.output().len();
    let mut data = vec![0x00, 0x0A];
    data.extend_from_slice(&[b'c'; 20]);
    e.feed(&command_frame(b"PING", &data));
    let Ok(Some(Event::Ping { ttl, context })) = e.poll_event() else {
        panic!("no Ping");
    };
    assert_eq!(ttl, 10);
    assert_eq!(&context[..], &[b'c'; 16]);
    assert_eq!(
        &e.output()[before..],
        &command_frame(b"PONG", &[b'c'; 16])[..]
    );
}

#[test]
fn large_bodies_are_received_in_place() {
    let mut e = ready_sub(None);
    let (h, n) = Engine::frame_header(false, 40_000);
    let buf = e.input_buffer(8192);
    buf[..n].copy_from_slice(&h[..n]);
    buf[n..n + 100].fill(7);
    assert_eq!(e.body_missing(), None, "nothing read yet");
    e.input_filled(n + 100);
    assert_eq!(e.poll_event(), Ok(None));
    assert_eq!(e.body_missing(), Some(39_900), "the rest is on its way");
    // The rest of the body: handed out as its own buffer, ending at the body's end.
    let buf = e.input_buffer(65536);
    assert_eq!(buf.len(), 39_900);
    buf.fill(8);
    let start = buf.as_ptr() as usize;
    e.input_filled(39_900);
    assert_eq!(e.body_missing(), None, "complete");
    let Ok(Some(Event::Message { body, more: false })) = e.poll_event() else {
        panic!("no Message");
    };
    assert_eq!(body.len(), 40_000);
    assert_eq!(body.as_ptr() as usize + 100, start, "not copied");
    assert!(body[..100].iter().all(|&b| b == 7) && body[100..].iter().all(|&b| b == 8));
    // Then the ordinary buffer again.
    e.feed(&[0x00, 1, 9]);
    let Ok(Some(Event::Message { body, .. })) = e.poll_event() else {
        panic!("no Message");
    };
    assert_eq!(&body[..], &[9]);
}

/// Bodies under 32 KiB are read with whatever follows them into the shared buffer and
/// copied out: one read for several 16 KiB messages beats a read per body (plus one for
/// the header after it) as a direct body costs.
#[test]
fn mid_sized_bodies_are_read_with_what_follows() {
    let mut e = ready_sub(None);
    let (h, n) = Engine::frame_header(false, 16_000);
    let mut stream = Vec::new();
    for i in 0..20u8 {
        stream.extend_from_slice(&h[..n]);
        stream.extend(std::iter::repeat_n(i, 16_000));
    }
    stream.extend_from_slice(&[0x00, 1, b'!']);
    let (mut off, mut reads, mut bodies) = (0, 0, Vec::new());
    while off < stream.len() {
        // A reader that always fills what it is offered (a streaming peer).
        let buf = e.input_buffer(1);
        let k = buf.len().min(stream.len() - off);
        buf[..k].copy_from_slice(&stream[off..off + k]);
        e.input_filled(k);
        (off, reads) = (off + k, reads + 1);
        while let Ok(Some(Event::Message { body, .. })) = e.poll_event() {
            bodies.push(body);
        }
    }
    assert_eq!(bodies.len(), 21);
    for (i, body) in bodies[..20].iter().enumerate() {
        assert_eq!(body.len(), 16_000);
        assert!(body.iter().all(|&b| b == i as u8));
    }
    assert_eq!(&bodies[20][..], b"!");
    assert!(reads < 10, "{reads} reads for 20 bodies");
}

#[test]
fn take_messages_lends_small_bodies_and_stops_at_anything_else() {
    let mut e = ready_sub(None);
    e.feed(&[0x01, 2, b'a', b'b', 0x00, 1, b'c']);
    e.feed(&command_frame(b"PING", &[0, 0]));
    e.feed(&[0x00, 3, b'x', b'y', b'z']);
    let (h, n) = Engine::frame_header(false, 300);
    e.feed(&h[..n]);
    e.feed(&[5u8; 300]);
    e.feed(&[0x00, 2, b'q']); // incomplete
    let mut got: Vec<(bool, Vec<u8>)> = Vec::new();
    let mut sink = |more: bool, body: &[u8]| got.push((more, body.to_vec()));
    assert_eq!(e.take_messages(256, &mut sink), Ok(2));
    // The command stops it; poll_event answers it.
    assert_eq!(e.take_messages(256, &mut sink), Ok(0));
    assert!(matches!(e.poll_event(), Ok(Some(Event::Ping { .. }))));
    // A body above the limit stops it too.
    assert_eq!(e.take_messages(256, &mut sink), Ok(1));
    let Ok(Some(Event::Message { body, .. })) = e.poll_event() else {
        panic!("no Message");
    };
    assert_eq!(body.len(), 300);
    assert_eq!(e.take_messages(256, &mut sink), Ok(0), "incomplete frame");
    e.feed(b"r");
    assert_eq!(e.take_messages(256, &mut sink), Ok(1));
    assert_eq!(
        got,
        vec![
            (true, b"ab".to_vec()),
            (false, b"c".to_vec()),
            (false, b"xyz".to_vec()),
            (false, b"qr".to_vec()),
        ]
    );
}

#[test]
fn output_is_consumed_incrementally() {
    let mut e = Engine::new(config(SocketType::Pair, b""));
    assert!(e.has_output());
    let first = e.output()[..4].to_vec();
    e.consume_output(4);
    assert_eq!(e.output().len(), greeting::SIGNATURE_LEN - 4);
    assert_eq!(first[0], 0xFF);
    e.consume_output(greeting::SIGNATURE_LEN - 4);
    assert!(!e.has_output());
    e.send_error("bye");
    assert_eq!(e.output(), b"\x04\x0a\x05ERROR\x03bye");
}

// ----- PLAIN and CURVE between two engines -----

use crate::curve::KeyPair;
use zeroize::Zeroizing;

fn secure(socket_type: SocketType, mechanism: MechanismConfig) -> Engine {
    Engine::new(EngineConfig {
        socket_type,
        routing_id: Bytes::new(),
        mechanism,
        null_zap: false,
        max_msg_size: None,
    })
}

/// Moves output both ways until neither side has anything to say; returns
/// the events each side produced.
fn pump(a: &mut Engine, b: &mut Engine) -> (Vec<Event>, Vec<Event>) {
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    for _ in 0..16 {
        let out_a = a.output().to_vec();
        a.consume_output(out_a.len());
        let out_b = b.output().to_vec();
        b.consume_output(out_b.len());
        b.feed(&out_a);
        a.feed(&out_b);
        while let Ok(Some(e)) = a.poll_event() {
            ea.push(e);
        }
        while let Ok(Some(e)) = b.poll_event() {
            eb.push(e);
        }
        if !a.has_output() && !b.has_output() && out_a.is_empty() && out_b.is_empty() {
            break;
        }
    }
    (ea, eb)
}

fn plain_client(user: &[u8], pass: &[u8]) -> MechanismConfig {
    MechanismConfig::PlainClient {
        username: user.to_vec(),
        password: Zeroizing::new(pass.to_vec()),
    }
}

#[test]
fn plain_handshake_asks_zap_then_carries_user_id() {
    let mut client = secure(SocketType::Dealer, plain_client(b"admin", b"secret"));
    let mut server = secure(SocketType::Router, MechanismConfig::PlainServer);
    let (ec, es) = pump(&mut client, &mut server);
    assert!(ec.is_empty());
    assert_eq!(
        es,
        vec![Event::ZapRequest(ZapRequest {
            mechanism: "PLAIN",
            credentials: vec![Bytes::from_static(b"admin"), Bytes::from_static(b"secret")],
        })]
    );
    server.zap_reply(ZapVerdict::Accept {
        user_id: Bytes::from_static(b"the-admin"),
        properties: vec![("Hello".into(), Bytes::from_static(b"World"))],
    });
    let (ec, es) = pump(&mut client, &mut server);
    let Event::Ready(info) = &es[0] else {
        panic!("{es:?}")
    };
    assert_eq!(info.socket_type, SocketType::Dealer);
    assert_eq!(info.user_id.as_deref(), Some(&b"the-admin"[..]));
    assert_eq!(info.zap_properties[0].0, "Hello");
    assert!(matches!(&ec[0], Event::Ready(i) if i.socket_type == SocketType::Router));
    client.send_message(false, b"ping");
    let (_, es) = pump(&mut client, &mut server);
    assert_eq!(
        es,
        vec![Event::Message {
            more: false,
            body: Bytes::from_static(b"ping")
        }]
    );
}

#[test]
fn plain_refusal_sends_error_with_status() {
    let mut client = secure(SocketType::Dealer, plain_client(b"admin", b"wrong"));
    let mut server = secure(SocketType::Router, MechanismConfig::PlainServer);
    pump(&mut client, &mut server);
    server.zap_reply(ZapVerdict::Reject { status: 400 });
    assert_eq!(
        server.poll_event(),
        Err(ProtocolError::AuthFailed { status: 400 })
    );
    // libzmq's PLAIN spelling of ERROR: 0x5E "RROR", reason "400".
    assert_eq!(server.output(), b"\x04\x09\x5eRROR\x03400");
    let (ec, _) = pump(&mut client, &mut server);
    assert_eq!(
        ec,
        vec![Event::PeerError {
            reason: "400".into()
        }]
    );
    // 300 is a temporary failure: no ERROR is sent.
    let mut client = secure(SocketType::Dealer, plain_client(b"a", b"b"));
    let mut server = secure(SocketType::Router, MechanismConfig::PlainServer);
    pump(&mut client, &mut server);
    server.zap_reply(ZapVerdict::Reject { status: 300 });
    assert!(!server.has_output());
}

fn curve_pair(server_keys: &KeyPair, server_key_seen_by_client: [u8; 32]) -> (Engine, Engine) {
    let client = secure(
        SocketType::Req,
        MechanismConfig::CurveClient {
            keys: KeyPair::generate().unwrap(),
            server_key: server_key_seen_by_client,
        },
    );
    let server = secure(
        SocketType::Rep,
        MechanismConfig::CurveServer {
            keys: server_keys.clone(),
        },
    );
    (client, server)
}

#[test]
fn curve_handshake_and_boxed_traffic() {
    let server_keys = KeyPair::generate().unwrap();
    let client_keys = KeyPair::generate().unwrap();
    let mut client = secure(
        SocketType::Dealer,
        MechanismConfig::CurveClient {
            keys: client_keys.clone(),
            server_key: server_keys.public,
        },
    );
    let mut server = secure(
        SocketType::Router,
        MechanismConfig::CurveServer {
            keys: server_keys.clone(),
        },
    );
    // HELLO is exactly 200 bytes of body.
    let (ec, es) = pump(&mut client, &mut server);
    assert!(ec.is_empty());
    assert_eq!(
        es,
        vec![Event::ZapRequest(ZapRequest {
            mechanism: "CURVE",
            credentials: vec![Bytes::copy_from_slice(&client_keys.public)],
        })]
    );
    server.zap_reply(ZapVerdict::Accept {
        user_id: Bytes::new(),
        properties: vec![],
    });
    let (ec, es) = pump(&mut client, &mut server);
    assert!(matches!(&es[0], Event::Ready(i) if i.user_id.is_none()));
    assert!(matches!(&ec[0], Event::Ready(_)));
    assert!(client.is_encrypted() && server.is_encrypted());

    for i in 0..3u8 {
        client.send_message(true, &[i; 10]);
        client.send_message(false, b"tail");
    }
    let wire = client.output().to_vec();
    assert!(
        !wire.windows(4).any(|w| w == b"tail"),
        "payload must not be visible"
    );
    let (_, es) = pump(&mut client, &mut server);
    assert_eq!(es.len(), 6);
    assert_eq!(
        es[4],
        Event::Message {
            more: true,
            body: Bytes::from(vec![2u8; 10])
        }
    );
    server.send_subscribe(b"topic");
    server.send_ping(10, b"ctx");
    let (ec, es) = pump(&mut client, &mut server);
    assert_eq!(ec[0], Event::Subscribe(Bytes::from_static(b"topic")));
    assert!(matches!(&ec[1], Event::Ping { ttl: 10, .. }));
    assert_eq!(
        es,
        vec![Event::Pong {
            context: Bytes::from_static(b"ctx")
        }]
    );
}

#[test]
fn curve_wrong_server_key_fails_cryptographically() {
    let server_keys = KeyPair::generate().unwrap();
    let other = KeyPair::generate().unwrap();
    let (mut client, mut server) = curve_pair(&server_keys, other.public);
    let (ec, es) = pump(&mut client, &mut server);
    assert!(ec.is_empty() && es.is_empty());
    assert_eq!(server.poll_event(), Err(ProtocolError::Cryptographic));
    assert_eq!(
        client.poll_event(),
        Ok(None),
        "client still waits for WELCOME"
    );
    assert_eq!(
        ProtocolError::Cryptographic.protocol_error_code(),
        crate::codes::ZMTP_CRYPTOGRAPHIC
    );
}

#[test]
fn curve_tampered_and_replayed_frames_are_refused() {
    let server_keys = KeyPair::generate().unwrap();
    let (mut client, mut server) = curve_pair(&server_keys, server_keys.public);
    pump(&mut client, &mut server);
    server.zap_reply(ZapVerdict::Accept {
        user_id: Bytes::new(),
        properties: vec![],
    });
    pump(&mut client, &mut server);
    client.send_message(false, b"once");
    let frame = client.output().to_vec();
    client.consume_output(frame.len());
    server.feed(&frame);
    assert!(matches!(
        server.poll_event(),
        Ok(Some(Event::Message { .. }))
    ));
    server.feed(&frame);
    assert_eq!(server.poll_event(), Err(ProtocolError::InvalidSequence));

    let (mut client, mut server) = curve_pair(&server_keys, server_keys.public);
    pump(&mut client, &mut server);
    server.zap_reply(ZapVerdict::Accept {
        user_id: Bytes::new(),
        properties: vec![],
    });
    pump(&mut client, &mut server);
    client.send_message(false, b"flip");
    let mut frame = client.output().to_vec();
    client.consume_output(frame.len());
    let last = frame.len() - 1;
    frame[last] ^= 1;
    server.feed(&frame);
    assert_eq!(server.poll_event(), Err(ProtocolError::Cryptographic));
}

/// A CURVE MESSAGE box sent in a frame flagged as a command (whose size limit is the
/// larger command limit) still has its payload held to max_msg_size. Found by the
/// curve_server fuzz target: the payload above the limit was delivered.
#[test]
fn curve_message_in_a_command_frame_keeps_the_message_limit() {
    let server_keys = KeyPair::generate().unwrap();
    let (mut client, _) = curve_pair(&server_keys, server_keys.public);
    let mut server = Engine::new(EngineConfig {
        socket_type: SocketType::Rep,
        routing_id: Bytes::new(),
        mechanism: MechanismConfig::CurveServer {
            keys: server_keys.clone(),
        },
        null_zap: false,
        max_msg_size: Some(8),
    });
    pump(&mut client, &mut server);
    server.zap_reply(ZapVerdict::Accept {
        user_id: Bytes::new(),
        properties: vec![],
    });
    pump(&mut client, &mut server);
    assert!(server.is_ready());
    client.send_message(false, &[7u8; 8]);
    client.send_message(false, &[7u8; 20]);
    let mut wire = client.output().to_vec();
    client.consume_output(wire.len());
    // Both boxes go as short frames (flags, size, body); the second one is marked a
    // command (flag bit 2).
    let second = 2 + usize::from(wire[1]);
    wire[second] |= 0x04;
    server.feed(&wire);
    assert_eq!(
        server.poll_event(),
        Ok(Some(Event::Message {
            more: false,
            body: Bytes::from(vec![7u8; 8])
        }))
    );
    assert_eq!(
        server.poll_event(),
        Err(ProtocolError::FrameTooLarge { size: 20, max: 8 })
    );
}

#[test]
fn null_with_zap_withholds_ready_until_accepted() {
    let mut a = secure(SocketType::Pair, MechanismConfig::Null);
    let mut b = Engine::new(EngineConfig {
        socket_type: SocketType::Pair,
        routing_id: Bytes::new(),
        mechanism: MechanismConfig::Null,
        null_zap: true,
        max_msg_size: None,
    });
    let (ea, eb) = pump(&mut a, &mut b);
    assert!(ea.is_empty(), "a must not be ready before b's ZAP: {ea:?}");
    assert!(matches!(&eb[..], [Event::ZapRequest(r)] if r.mechanism == "NULL"));
    b.zap_reply(ZapVerdict::Accept {
        user_id: Bytes::new(),
        properties: vec![],
    });
    let (ea, eb) = pump(&mut a, &mut b);
    assert!(matches!(&ea[..], [Event::Ready(_)]));
    assert!(matches!(&eb[..], [Event::Ready(_)]));
}

#[test]
fn mechanism_mismatch_between_plain_and_curve() {
    let keys = KeyPair::generate().unwrap();
    let mut client = secure(SocketType::Dealer, plain_client(b"u", b"p"));
    let mut server = secure(SocketType::Router, MechanismConfig::CurveServer { keys });
    // Signatures, then major versions, crossing.
    server.feed(&client.output()[..greeting::SIGNATURE_LEN]);
    assert_eq!(server.poll_event(), Ok(None));
    client.feed(&server.output()[..greeting::PREFIX_LEN]);
    assert_eq!(client.poll_event(), Ok(None));
    server.feed(&client.output()[greeting::SIGNATURE_LEN..greeting::PREFIX_LEN]);
    assert_eq!(server.poll_event(), Ok(None));
    assert_eq!(server.output()[32], 1, "server announces as-server");
    let g = server.output()[greeting::PREFIX_LEN..].to_vec();
    client.feed(&g);
    assert!(matches!(
        client.poll_event(),
        Err(ProtocolError::MechanismMismatch { .. })
    ));
}

#[test]
fn take_output_hands_over_what_was_encoded_so_far() {
    let mut e = Engine::new(config(SocketType::Pair, b""));
    let greeting = e.take_output();
    assert_eq!(greeting.len(), greeting::SIGNATURE_LEN);
    assert!(!e.has_output());
    e.send_error("x");
    assert_eq!(e.output(), b"\x04\x08\x05ERROR\x01x");
    assert_eq!(
        greeting[0], 0xFF,
        "the taken bytes are unchanged by later output"
    );
}

/// Found by the frame_decoder_large fuzz target: `feed` running past the end of a body
/// received directly looped for ever (the finished body left no space to copy into).
#[test]
fn feed_can_run_past_a_directly_received_body() {
    let mut e = ready_sub(None);
    let (h, n) = Engine::frame_header(false, 40_000);
    e.feed(&h[..n]);
    e.feed(&[3u8; 100]);
    assert_eq!(e.poll_event(), Ok(None), "the body goes direct");
    let mut rest = vec![3u8; 39_900];
    rest.extend_from_slice(&[0x00, 5, b'a', b'b', b'c', b'd', b'e']);
    rest.extend_from_slice(&[0x00, 5, b'v', b'w', b'x', b'y', b'z']);
    e.feed(&rest);
    let Ok(Some(Event::Message { body, .. })) = e.poll_event() else {
        panic!("no large message");
    };
    assert_eq!(body.len(), 40_000);
    assert!(body.iter().all(|&b| b == 3));
    let mut small = Vec::new();
    while let Ok(Some(Event::Message { body, .. })) = e.poll_event() {
        small.push(body.to_vec());
    }
    assert_eq!(small, vec![b"abcde".to_vec(), b"vwxyz".to_vec()]);
}

/// Found by the same target: once a direct body was filled, `input_buffer` handed out
/// an empty slice until the next `poll_event` (a reader would take 0 bytes for EOF).
#[test]
fn input_buffer_is_never_empty_after_a_filled_body() {
    let mut e = ready_sub(None);
    let (h, n) = Engine::frame_header(true, 40_000);
    e.feed(&h[..n]);
    assert_eq!(e.poll_event(), Ok(None));
    let buf = e.input_buffer(1);
    assert_eq!(buf.len(), 40_000);
    e.input_filled(40_000);
    let buf = e.input_buffer(1);
    assert!(!buf.is_empty());
    buf[..3].copy_from_slice(&[0x00, 1, b'!']);
    e.input_filled(3);
    assert!(matches!(
        e.poll_event(),
        Ok(Some(Event::Message { more: true, ref body })) if body.len() == 40_000
    ));
    assert!(matches!(
        e.poll_event(),
        Ok(Some(Event::Message { more: false, ref body })) if &body[..] == b"!"
    ));
}

/// Shrinking the output buffer behind a stalled peer keeps every pending byte, in order,
/// gives up the spare room, and encoding goes on after it.
#[test]
fn shrinking_the_output_keeps_what_is_pending() {
    let mut e = ready_sub(None);
    let greeting_and_ready = e.output().len();
    e.consume_output(greeting_and_ready);
    assert!(e.reserve_output(256 * 1024) >= 256 * 1024);
    for i in 0..200u8 {
        e.send_message(false, &[i; 1000]); // 9-byte header: 1,009 bytes a frame
    }
    e.consume_output(150 * 1009 + 500); // the kernel took part of the 151st frame
    let pending = e.output().to_vec();
    assert_eq!(pending.len(), 50 * 1009 - 500);
    e.shrink_output(16);
    assert_eq!(e.output(), &pending[..]);
    assert!(e.output_capacity() < pending.len() + 1024);
    e.send_message(false, b"next");
    let out = e.output();
    assert_eq!(&out[..pending.len()], &pending[..]);
    assert_eq!(&out[pending.len()..], &[0x00, 4, b'n', b'e', b'x', b't']);
}

#[path = "zmtp2_tests.rs"]
mod zmtp2;
