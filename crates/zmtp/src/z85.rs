//! Z85 (ZeroMQ RFC 32): a printable encoding of binary data, 5 characters per
//! 4 bytes, used for CURVE keys (`zmq_z85_encode` / `zmq_z85_decode`).
//!
//! Each 4-byte group is read as a big-endian 32-bit number and written as 5
//! base-85 digits, most significant first, using the alphabet below.

const ALPHABET: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Maps an ASCII byte to its digit value, or 0xFF if it is not in the
/// alphabet.
const DECODE: [u8; 256] = {
    let mut table = [0xFFu8; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Encodes `data` as Z85. Returns `None` unless `data.len()` is a multiple
/// of 4 (RFC 32 leaves padding to the caller). Empty input encodes to "".
pub fn encode(data: &[u8]) -> Option<String> {
    if data.len() % 4 != 0 {
        return None;
    }
    let mut text = String::with_capacity(data.len() / 4 * 5);
    for chunk in data.chunks_exact(4) {
        let mut value = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let mut digits = [0u8; 5];
        for digit in digits.iter_mut().rev() {
            *digit = ALPHABET[(value % 85) as usize];
            value /= 85;
        }
        // Every alphabet byte is ASCII.
        text.extend(digits.iter().map(|&b| char::from(b)));
    }
    Some(text)
}

/// Decodes Z85 text. Returns `None` unless `text.len()` is a multiple of 5,
/// every character is in the Z85 alphabet, and no 5-character group exceeds
/// `u32::MAX`.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.len() % 5 != 0 {
        return None;
    }
    let mut data = Vec::with_capacity(bytes.len() / 5 * 4);
    for group in bytes.chunks_exact(5) {
        let mut value: u64 = 0;
        for &c in group {
            let digit = DECODE[usize::from(c)];
            if digit == 0xFF {
                return None;
            }
            value = value * 85 + u64::from(digit);
        }
        let value = u32::try_from(value).ok()?;
        data.extend_from_slice(&value.to_be_bytes());
    }
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: [u8; 8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];

    #[test]
    fn rfc_test_vector() {
        assert_eq!(encode(&HELLO).as_deref(), Some("HelloWorld"));
        assert_eq!(decode("HelloWorld").as_deref(), Some(&HELLO[..]));
    }

    #[test]
    fn rejects_bad_lengths_and_characters() {
        assert_eq!(encode(&[1, 2, 3]), None);
        assert_eq!(decode("Hello1"), None);
        assert_eq!(decode("Hell\""), None);
        assert_eq!(decode("Hell~"), None);
        assert_eq!(decode("héllo"), None);
        // "%nSc0" is u32::MAX; "%nSc1" is one more and must be refused.
        assert_eq!(decode("%nSc0").as_deref(), Some(&[0xFF; 4][..]));
        assert_eq!(decode("%nSc1"), None);
        assert_eq!(decode("#####"), None);
    }

    #[test]
    fn round_trips_curve_sized_keys() {
        assert_eq!(encode(&[]).as_deref(), Some(""));
        assert_eq!(decode("").as_deref(), Some(&[][..]));
        let key: Vec<u8> = (0..32u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(11))
            .collect();
        let text = encode(&key).unwrap();
        assert_eq!(text.len(), 40);
        assert_eq!(decode(&text).unwrap(), key);
        assert_eq!(encode(&[0, 0, 0, 0]).as_deref(), Some("00000"));
    }
}
