//! The frame decoder after a valid NULL handshake: arbitrary bytes in arbitrary
//! chunkings. The engine's events are compared with an independent reference
//! decoder written from RFC 23/37, and everything the engine wrote (greeting,
//! READY, PONGs) must be accepted by a second, honest engine.
//!
//! Input: [socket type + version] [max_msg_size selector] [4 chunk bytes] stream...
#![no_main]

use ferromq_fuzz::*;
use ferromq_zmtp::{Bytes, Event, MechanismConfig};
use libfuzzer_sys::fuzz_target;

/// What the reference decoder expects: the events, then whether it ends in an error.
fn reference(stream: &[u8], max: Option<u64>) -> (Vec<Event>, bool) {
    let msg_limit = max.unwrap_or(isize::MAX as u64);
    let cmd_limit = msg_limit.max(64 * 1024);
    let mut events = Vec::new();
    let mut pos = 0;
    while pos < stream.len() {
        let flags = stream[pos];
        if flags & 0xF8 != 0 || flags & 0x05 == 0x05 {
            return (events, true);
        }
        let (size, hlen) = if flags & 0x02 != 0 {
            let Some(b) = stream.get(pos + 1..pos + 9) else {
                return (events, false);
            };
            (u64::from_be_bytes(b.try_into().unwrap()), 9)
        } else {
            let Some(&b) = stream.get(pos + 1) else {
                return (events, false);
            };
            (u64::from(b), 2)
        };
        let command = flags & 0x04 != 0;
        if size > if command { cmd_limit } else { msg_limit } {
            return (events, true);
        }
        let start = pos + hlen;
        if ((stream.len() - start) as u64) < size {
            return (events, false);
        }
        let body = &stream[start..start + size as usize];
        pos = start + size as usize;
        if !command {
            events.push(Event::Message {
                more: flags & 1 != 0,
                body: Bytes::copy_from_slice(body),
            });
            continue;
        }
        let error_reason = |data: &[u8]| -> Option<String> {
            let (&n, rest) = data.split_first()?;
            rest.get(..usize::from(n))
                .map(|r| String::from_utf8_lossy(r).into_owned())
        };
        if let Some(data) = body.strip_prefix(b"\x5eRROR") {
            match error_reason(data) {
                Some(reason) => {
                    events.push(Event::PeerError { reason });
                    return (events, false);
                }
                None => return (events, true),
            }
        }
        let Some((&n, rest)) = body.split_first() else {
            return (events, true);
        };
        let n = usize::from(n);
        if n == 0 || rest.len() < n {
            return (events, true);
        }
        let (name, data) = rest.split_at(n);
        match name {
            b"ERROR" => match error_reason(data) {
                Some(reason) => {
                    events.push(Event::PeerError { reason });
                    return (events, false);
                }
                None => return (events, true),
            },
            b"READY" => return (events, true),
            b"PING" => {
                if data.len() < 2 {
                    return (events, true);
                }
                events.push(Event::Ping {
                    ttl: u16::from_be_bytes([data[0], data[1]]),
                    context: Bytes::copy_from_slice(&data[2..data.len().min(18)]),
                });
            }
            b"PONG" => events.push(Event::Pong {
                context: Bytes::copy_from_slice(data),
            }),
            b"SUBSCRIBE" => events.push(Event::Subscribe(Bytes::copy_from_slice(data))),
            b"CANCEL" => events.push(Event::Cancel(Bytes::copy_from_slice(data))),
            _ => {}
        }
    }
    (events, false)
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let b0 = input.byte();
    let ours = ZMTP_TYPES[usize::from(b0 & 0x0F) % ZMTP_TYPES.len()];
    let minor = (b0 >> 4) & 1;
    let max = max_msg_size(input.byte());
    let chunker = Chunker::from_input(&mut input);
    let stream = input.rest();

    let peer_type = compatible_peer(ours);
    let mut e = Checked::new(config(ours, MechanismConfig::Null, max));
    let mut hello = greeting("NULL", false, 3, minor);
    hello.extend(command(
        b"READY",
        &metadata(&[(b"Socket-Type", peer_type.name().as_bytes())]),
    ));
    e.give(&hello, false);
    let events = e.drain(&mut no_zap);
    assert!(matches!(events.as_slice(), [Event::Ready(_)]), "{events:?}");
    assert_eq!(e.ready.as_ref().unwrap().minor_version, minor);

    let events = e.feed_chunked(stream, &chunker, &mut no_zap);
    let (expected, error) = reference(stream, max);
    assert_eq!(events, expected);
    assert_eq!(e.failed.is_some(), error, "{:?}", e.failed);

    // Everything the engine wrote must make sense to an honest peer.
    let pongs = expected
        .iter()
        .filter(|ev| matches!(ev, Event::Ping { .. }))
        .count();
    let mut peer = Checked::new(config(peer_type, MechanismConfig::Null, None));
    let out = e.take_output();
    peer.give(&out, true);
    let seen = peer.drain(&mut no_zap);
    assert!(peer.failed.is_none(), "{:?}", peer.failed);
    assert!(matches!(seen.first(), Some(Event::Ready(_))));
    assert_eq!(seen.len(), 1 + pongs);
});
