//! The frame decoder after a valid NULL handshake: arbitrary bytes in arbitrary
//! chunkings. The engine's events are compared with an independent reference
//! decoder written from RFC 23/37 (`reference` in src/lib.rs), and everything
//! the engine wrote (greeting, READY, PONGs) must be accepted by a second,
//! honest engine.
//!
//! Input: [socket type + version] [max_msg_size selector] [4 chunk bytes] stream...
#![no_main]

use ferromq_fuzz::*;
use ferromq_zmtp::{Event, MechanismConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let b0 = input.byte();
    let ours = ZMTP_TYPES[usize::from(b0 & 0x0F) % ZMTP_TYPES.len()];
    let minor = (b0 >> 4) & 1;
    let max = max_msg_size(input.byte());
    let chunker = Chunker::from_input(&mut input);
    let stream = input.rest();

    let mut e = Checked::null_ready(ours, minor, max, false);

    let events = e.feed_chunked(stream, &chunker, &mut no_zap);
    let Reference {
        events: expected,
        error,
        ..
    } = reference(stream, max);
    assert_eq!(events, expected);
    assert_eq!(e.failed.is_some(), error, "{:?}", e.failed);

    // Everything the engine wrote must make sense to an honest peer.
    let pongs = expected
        .iter()
        .filter(|ev| matches!(ev, Event::Ping { .. }))
        .count();
    let mut peer = Checked::new(config(compatible_peer(ours), MechanismConfig::Null, None));
    let out = e.take_output();
    peer.give(&out, true);
    let seen = peer.drain(&mut no_zap);
    assert!(peer.failed.is_none(), "{:?}", peer.failed);
    assert!(matches!(seen.first(), Some(Event::Ready(_))));
    assert_eq!(seen.len(), 1 + pongs);
});
