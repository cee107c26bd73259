//! A PLAIN server: a valid client greeting, then fuzzed commands (HELLO,
//! INITIATE, ERROR, anything). ZAP requests get a fuzz-chosen verdict. The
//! server must never become ready without a ZAP acceptance of the credentials
//! it reported.
//!
//! Input: [type/limit] [8 verdict bytes] [4 chunk bytes] commands...
#![no_main]

use ferromq_fuzz::*;
use ferromq_zmtp::{Event, MechanismConfig, ZapVerdict};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let b0 = input.byte();
    let ours = ZMTP_TYPES[usize::from(b0 & 0x0F) % ZMTP_TYPES.len()];
    let max = max_msg_size(b0 >> 4);
    let mut vin = Input::new(input.take(8));
    let chunker = Chunker::from_input(&mut input);
    let commands = input.rest();

    let mut e = Checked::new(config(ours, MechanismConfig::PlainServer, max));
    let mut stream = greeting("PLAIN", false, 3, 1);
    stream.extend_from_slice(commands);
    let mut accepted = false;
    let mut zap = |req: &ferromq_zmtp::ZapRequest| {
        assert_eq!(req.mechanism, "PLAIN");
        assert_eq!(req.credentials.len(), 2);
        assert!(req.credentials.iter().all(|c| c.len() <= 255));
        let v = verdict(&mut vin);
        accepted = matches!(v, ZapVerdict::Accept { .. });
        v
    };
    let events = e.feed_chunked(&stream, &chunker, &mut zap);
    assert!(e.zap_requests.len() <= 1);
    if e.ready.is_some() {
        assert!(accepted, "PLAIN server ready without a ZAP acceptance");
        let ready_at = events
            .iter()
            .position(|ev| matches!(ev, Event::Ready(_)))
            .unwrap();
        let zap_at = events
            .iter()
            .position(|ev| matches!(ev, Event::ZapRequest(_)))
            .unwrap();
        assert!(zap_at < ready_at);
    }
    // What the server wrote parses as frames (greeting, WELCOME, READY, ERROR, PONG).
    let out = e.take_output();
    for r in frame_ranges(&out[64..]) {
        let f = &out[64..][r];
        assert!(
            f[0] == 0x04 || f[0] == 0x06,
            "server sends only commands here"
        );
    }
});
