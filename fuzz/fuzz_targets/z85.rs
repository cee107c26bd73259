//! Z85 (RFC 32): decoding arbitrary text must agree with a reference decoder,
//! and whatever decodes must encode back to the same text; encoding arbitrary
//! bytes cut to a multiple of 4 must decode back to them.
//!
//! Input: [mode] bytes...
#![no_main]

use ferromq_zmtp::z85;
use libfuzzer_sys::fuzz_target;

const ALPHABET: &str =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

fn reference_decode(text: &str) -> Option<Vec<u8>> {
    let chars: Vec<char> = text.chars().collect();
    if text.len() % 5 != 0 || chars.len() != text.len() {
        return None;
    }
    let mut out = Vec::new();
    for group in chars.chunks(5) {
        let mut v: u64 = 0;
        for c in group {
            v = v * 85 + ALPHABET.find(*c)? as u64;
        }
        out.extend_from_slice(&u32::try_from(v).ok()?.to_be_bytes());
    }
    Some(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let text = String::from_utf8_lossy(rest);
        let decoded = z85::decode(&text);
        assert_eq!(decoded, reference_decode(&text));
        if let Some(bytes) = decoded {
            assert_eq!(bytes.len(), text.len() / 5 * 4);
            assert_eq!(z85::encode(&bytes).as_deref(), Some(&*text));
        }
    } else {
        assert_eq!(z85::encode(rest).is_some(), rest.len() % 4 == 0);
        let whole = &rest[..rest.len() / 4 * 4];
        let text = z85::encode(whole).expect("multiple of 4");
        assert_eq!(text.len(), whole.len() / 4 * 5);
        assert!(text.chars().all(|c| ALPHABET.contains(c)));
        assert_eq!(z85::decode(&text).as_deref(), Some(whole));
    }
});
