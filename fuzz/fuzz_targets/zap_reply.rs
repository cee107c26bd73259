//! ZAP replies (RFC 27) as the ZAP handler could send them: arbitrary frame
//! lists through `ferromq::fuzz_parse_zap_reply`, compared with a reference
//! model of libzmq's validation and error codes.
//!
//! Input: frames, each [length byte] [bytes], until the input ends (at most 12).
#![no_main]

use ferromq_fuzz::{parse_metadata, Input};
use ferromq_zmtp::{codes, ZapVerdict};
use libfuzzer_sys::fuzz_target;

fn model(f: &[&[u8]]) -> Result<(u16, Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>), u32> {
    if f.len() != 7 || !f[0].is_empty() {
        return Err(codes::ZAP_MALFORMED_REPLY);
    }
    if f[1] != b"1.0" {
        return Err(codes::ZAP_BAD_VERSION);
    }
    if f[2] != b"1" {
        return Err(codes::ZAP_BAD_REQUEST_ID);
    }
    let status = match f[3] {
        b"200" => 200,
        b"300" => 300,
        b"400" => 400,
        b"500" => 500,
        _ => return Err(codes::ZAP_INVALID_STATUS_CODE),
    };
    let props = parse_metadata(f[6]).ok_or(codes::ZAP_INVALID_METADATA)?;
    Ok((status, f[5].to_vec(), props))
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut frames = Vec::new();
    while !input.is_empty() && frames.len() < 12 {
        frames.push(input.short_bytes());
    }
    let got = ferromq::fuzz_parse_zap_reply(&frames);
    match (model(&frames), got) {
        (Err(a), Err(b)) => assert_eq!(a, b),
        (
            Ok((200, user, props)),
            Ok(ZapVerdict::Accept {
                user_id,
                properties,
            }),
        ) => {
            assert_eq!(&user_id[..], &user[..]);
            assert_eq!(properties.len(), props.len());
            for ((n1, v1), (n2, v2)) in properties.iter().zip(&props) {
                assert_eq!(n1, &String::from_utf8_lossy(n2));
                assert_eq!(&v1[..], &v2[..]);
            }
        }
        (Ok((s, _, _)), Ok(ZapVerdict::Reject { status })) => {
            assert_ne!(s, 200);
            assert_eq!(s, status);
        }
        (m, g) => panic!("model {m:?} but parse_reply {g:?}"),
    }
});
