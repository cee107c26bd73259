//! Arbitrary first bytes from the peer, for every mechanism and role. The
//! engine's verdict on the 64-byte greeting (or a ZMTP 2.0 peer's 12 bytes,
//! RFC 15) is compared with a reference model of the RFCs' rules, both on every
//! prefix and on the whole greeting, and so is what it sends back: the
//! signature first, our major version once the peer's signature is in, the
//! rest once the peer's version is.
//!
//! Input: [mechanism/role] [4 chunk bytes] bytes...
#![no_main]

use ferromq_fuzz::*;
use ferromq_zmtp::{MechanismConfig, ProtocolError, SocketType};
use libfuzzer_sys::fuzz_target;

fn mechanism(b: u8) -> MechanismConfig {
    let (server, client) = curve_keys();
    match b % 5 {
        0 => MechanismConfig::Null,
        1 => MechanismConfig::PlainServer,
        2 => plain_client(b"user", b"pass"),
        3 => MechanismConfig::CurveServer { keys: server },
        _ => MechanismConfig::CurveClient {
            keys: client,
            server_key: server.public,
        },
    }
}

/// What the reference says about a prefix: Some(error?) once decided.
fn model(g: &[u8], ours: &MechanismConfig) -> Option<bool> {
    if g.first().is_some_and(|&b| b != 0xFF) || g.get(9).is_some_and(|&b| b & 1 == 0) {
        return Some(true);
    }
    match g.get(10) {
        None => return None,
        // ZMTP 2.0: no security, so NULL only; then its socket type number must be
        // one a DEALER talks to (REP 4, DEALER 5, ROUTER 6).
        Some(1) if *ours != MechanismConfig::Null => return Some(true),
        Some(1) => return g.get(11).map(|t| !matches!(t, 4..=6)),
        Some(&m) if m < 3 => return Some(true),
        _ => {}
    }
    if g.len() < 64 {
        return None;
    }
    if g[32] > 1 {
        return Some(true);
    }
    let mut field = [0u8; 20];
    field[..ours.name().len()].copy_from_slice(ours.name().as_bytes());
    Some(g[12..32] != field)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mech = mechanism(input.byte());
    let chunker = Chunker::from_input(&mut input);
    let bytes = input.rest();
    let (first, rest) = bytes.split_at(bytes.len().min(64));

    let mut e = Checked::new(config(SocketType::Dealer, mech.clone(), None));
    let mut fed = 0;
    for (i, chunk) in chunker.split(first).into_iter().enumerate() {
        e.give(chunk, chunker.use_buffer(i));
        fed += chunk.len();
        let events = e.drain(&mut no_zap);
        // (A ZMTP 2.0 greeting is 12 bytes: what follows it in the chunk is traffic.)
        assert!(
            events.is_empty() || first[..fed].get(10) == Some(&1),
            "{events:?}"
        );
        match model(&first[..fed], &mech) {
            Some(true) => {
                let err = e.failed.clone().expect("model says the greeting is bad");
                assert!(matches!(
                    err,
                    ProtocolError::BadSignature
                        | ProtocolError::UnsupportedVersion { .. }
                        | ProtocolError::InvalidAsServer(_)
                        | ProtocolError::MechanismMismatch { .. }
                        | ProtocolError::UnknownSocketType(_)
                        | ProtocolError::IncompatibleSocketType { .. }
                ));
                break;
            }
            Some(false) if first[10] == 1 => {
                // Our socket type, then our routing id ("fuzz") as the first frame
                // (queued whatever the bytes after the greeting then did).
                assert_eq!(&e.engine.output()[11..18], b"\x05\x00\x04fuzz");
                break;
            }
            Some(false) => {
                assert!(e.failed.is_none(), "{:?}", e.failed);
                // NULL queues READY, a PLAIN/CURVE client its HELLO; servers wait.
                let grew = e.engine.output().len() > 64;
                assert_eq!(grew, !mech.is_server());
            }
            None => {
                assert!(e.failed.is_none(), "{:?}", e.failed);
                let sent = match first[..fed].get(10) {
                    None if fed < 10 => 10,
                    None => 11,
                    Some(1) => 12,
                    Some(_) => 64,
                };
                assert_eq!(e.engine.output().len(), sent);
            }
        }
    }
    // Then anything at all: must not panic, and the invariants of Checked hold.
    e.feed_chunked(&first[fed..], &chunker, &mut accept_all);
    e.feed_chunked(rest, &chunker, &mut accept_all);
});
