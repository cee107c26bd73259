//! A PLAIN client: a valid server greeting, then fuzzed commands (WELCOME,
//! READY, ERROR, anything). The client sends HELLO with its credentials, must
//! only send INITIATE after WELCOME, and must only become ready after that.
//!
//! Input: [type/limit] [4 chunk bytes] commands...
#![no_main]

use ferromq_fuzz::*;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let b0 = input.byte();
    let ours = ZMTP_TYPES[usize::from(b0 & 0x0F) % ZMTP_TYPES.len()];
    let max = max_msg_size(b0 >> 4);
    let chunker = Chunker::from_input(&mut input);
    let commands = input.rest();

    let mut e = Checked::new(config(ours, plain_client(b"admin", b"secret"), max));
    let mut stream = greeting("PLAIN", true, 3, 1);
    stream.extend_from_slice(commands);
    e.feed_chunked(&stream, &chunker, &mut no_zap);

    let out = e.take_output();
    assert!(
        out.len() > 64,
        "a valid greeting makes the client say HELLO"
    );
    {
        let frames: Vec<&[u8]> = frame_ranges(&out[64..])
            .into_iter()
            .map(|r| &out[64..][r])
            .collect();
        assert_eq!(frames[0], &command(b"HELLO", b"\x05admin\x06secret")[..]);
        let initiate = frames.iter().any(|f| f.get(2..11) == Some(b"\x08INITIATE"));
        if e.ready.is_some() {
            assert!(initiate, "ready without sending INITIATE");
        }
    }
});
