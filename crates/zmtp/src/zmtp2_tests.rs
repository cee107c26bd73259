//! The engine against hand-crafted ZMTP 2.0 (RFC 15) peers.

use super::*;

/// A ZMTP 2.0 peer's greeting: signature, revision 1, socket type number.
fn zmtp2_greeting(socket_type: u8) -> Vec<u8> {
    vec![0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1, socket_type]
}

#[test]
fn zmtp2_peer_gets_our_type_and_routing_id_then_trades_frames() {
    let mut e = Engine::new(config(SocketType::Router, b"me"));
    let g = zmtp2_greeting(SocketType::Dealer.as_raw() as u8);
    e.feed(&g[..11]);
    assert_eq!(e.poll_event(), Ok(None));
    // Our socket type completes our greeting (12 bytes), nothing of 3.x follows.
    assert_eq!(e.output().len(), greeting::ZMTP2_GREETING_LEN);
    assert_eq!(e.output()[11], SocketType::Router.as_raw() as u8);
    e.feed(&g[11..]);
    assert_eq!(e.poll_event(), Ok(None));
    assert!(!e.is_ready());
    // Then our routing id as a plain frame.
    assert_eq!(&e.output()[12..], b"\x00\x02me");
    // The peer's routing id frame ends the handshake; a message follows.
    e.feed(b"\x00\x03abc\x01\x01x\x00\x01y");
    let Ok(Some(Event::Ready(info))) = e.poll_event() else {
        panic!("not ready");
    };
    assert_eq!(info.major_version, 2);
    assert_eq!(info.socket_type, SocketType::Dealer);
    assert_eq!(info.routing_id.as_deref(), Some(&b"abc"[..]));
    assert!(info.properties.is_empty());
    let frames: Vec<_> = std::iter::from_fn(|| e.poll_event().unwrap()).collect();
    assert_eq!(
        frames,
        vec![
            Event::Message {
                more: true,
                body: Bytes::from_static(b"x")
            },
            Event::Message {
                more: false,
                body: Bytes::from_static(b"y")
            },
        ]
    );
    // Subscriptions and our messages go out as ZMTP 2.0 frames (no commands).
    let before = e.output().len();
    e.send_subscribe(b"t");
    assert_eq!(&e.output()[before..], b"\x00\x02\x01t");
}

#[test]
fn zmtp2_peer_with_an_empty_routing_id_has_none() {
    let mut e = Engine::new(config(SocketType::Pull, b""));
    e.feed(&zmtp2_greeting(SocketType::Push.as_raw() as u8));
    e.feed(b"\x00\x00");
    let Ok(Some(Event::Ready(info))) = e.poll_event() else {
        panic!("not ready");
    };
    assert_eq!((info.routing_id, info.major_version), (None, 2));
    assert_eq!(&e.output()[12..], b"\x00\x00");
}

#[test]
fn zmtp2_peer_is_refused_with_security_zap_or_an_unfitting_type() {
    let mut plain = secure(SocketType::Dealer, plain_client(b"u", b"p"));
    plain.feed(&zmtp2_greeting(SocketType::Router.as_raw() as u8));
    assert_eq!(
        plain.poll_event(),
        Err(ProtocolError::UnsupportedVersion { major: 1 })
    );
    assert_eq!(
        plain.output().len(),
        greeting::PREFIX_LEN,
        "no socket type sent"
    );
    let mut cfg = config(SocketType::Pull, b"");
    cfg.null_zap = true;
    let mut zap = Engine::new(cfg);
    zap.feed(&zmtp2_greeting(SocketType::Push.as_raw() as u8));
    assert!(zap.poll_event().is_err());
    let mut pull = Engine::new(config(SocketType::Pull, b""));
    pull.feed(&zmtp2_greeting(SocketType::Pull.as_raw() as u8));
    assert!(matches!(
        pull.poll_event(),
        Err(ProtocolError::IncompatibleSocketType { .. })
    ));
    let mut unknown = Engine::new(config(SocketType::Pull, b""));
    unknown.feed(&zmtp2_greeting(99));
    assert!(matches!(
        unknown.poll_event(),
        Err(ProtocolError::UnknownSocketType(_))
    ));
    // Revision 0 (ZMTP 1.0 with a signature) and 2 stay unsupported.
    for rev in [0u8, 2] {
        let mut e = Engine::new(config(SocketType::Pull, b""));
        let mut g = zmtp2_greeting(SocketType::Push.as_raw() as u8);
        g[10] = rev;
        e.feed(&g);
        assert_eq!(
            e.poll_event(),
            Err(ProtocolError::UnsupportedVersion { major: rev })
        );
    }
}

#[test]
fn zmtp2_command_in_place_of_the_routing_id_is_refused() {
    let mut e = Engine::new(config(SocketType::Pull, b""));
    e.feed(&zmtp2_greeting(SocketType::Push.as_raw() as u8));
    e.feed(&command_frame(b"READY", b""));
    assert!(matches!(
        e.poll_event(),
        Err(ProtocolError::UnexpectedCommand { .. })
    ));
}

#[test]
fn zmtp2_routing_id_longer_than_a_short_frame_is_refused_from_its_header() {
    let mut e = Engine::new(config(SocketType::Router, b""));
    e.feed(&zmtp2_greeting(SocketType::Dealer.as_raw() as u8));
    // A long frame header announcing 1 GiB: refused before any of it is buffered.
    e.feed(&[0x02, 0, 0, 0, 0, 0x40, 0, 0, 0]);
    assert!(matches!(
        e.poll_event(),
        Err(ProtocolError::FrameTooLarge { max: 255, .. })
    ));
    // 255 bytes is still a routing id.
    let mut e = Engine::new(config(SocketType::Router, b""));
    e.feed(&zmtp2_greeting(SocketType::Dealer.as_raw() as u8));
    e.feed(&[0x00, 255]);
    e.feed(&[b'r'; 255]);
    let Ok(Some(Event::Ready(info))) = e.poll_event() else {
        panic!("not ready");
    };
    assert_eq!(info.routing_id.map(|r| r.len()), Some(255));
}
