//! The fixed 64-byte ZMTP 3.x greeting: encoding and incremental validation.
//!
//! Layout (RFC 23/37): signature `0xFF`, 8 padding bytes, `0x7F` (bytes
//! 0..10); major version (10); minor version (11); mechanism name, ASCII,
//! zero-padded to 20 bytes (12..32); as-server (32); 31 filler bytes (33..64).
//!
//! A ZMTP 2.0 peer (RFC 15, libzmq 3.2) sends the same signature, then its
//! revision 1 where the major version stands and its socket type number, 12
//! bytes in all. So the greeting goes out in three steps, as libzmq sends it:
//! the signature first (which an unversioned ZMTP 1.0 peer would read as an
//! empty identity frame), our major version once the peer's signature is in,
//! the rest once the peer's version is known (for a 2.0 peer: only our socket
//! type).

use crate::error::ProtocolError;

/// Total greeting length.
pub(crate) const GREETING_LEN: usize = 64;
/// The signature: sent first, alone, and all of the peer's greeting that must be in
/// before our major version goes out.
pub(crate) const SIGNATURE_LEN: usize = 10;
/// Bytes sent before the peer's version is known: the signature and our major version.
pub(crate) const PREFIX_LEN: usize = 11;
/// The revision byte (where 3.x has its major version) of a ZMTP 2.0 peer.
pub(crate) const ZMTP2_REVISION: u8 = 1;
/// A ZMTP 2.0 greeting: signature, revision, socket type.
pub(crate) const ZMTP2_GREETING_LEN: usize = 12;
/// Length of the zero-padded mechanism field.
pub(crate) const MECHANISM_LEN: usize = 20;

const MAJOR_POS: usize = 10;
const MINOR_POS: usize = 11;
const MECHANISM_POS: usize = 12;
const AS_SERVER_POS: usize = 32;

/// The major/minor version we announce: ZMTP 3.1.
pub(crate) const OUR_MAJOR: u8 = 3;
pub(crate) const OUR_MINOR: u8 = 1;

/// What the peer's greeting announced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PeerGreeting {
    pub(crate) major: u8,
    pub(crate) minor: u8,
    pub(crate) mechanism: [u8; MECHANISM_LEN],
    pub(crate) as_server: bool,
}

impl PeerGreeting {
    /// The minor version both sides speak: 1 (ZMTP 3.1 rules) for peers
    /// announcing 3.1 or anything later, 0 for a 3.0 peer.
    pub(crate) fn negotiated_minor(&self) -> u8 {
        if self.major > OUR_MAJOR {
            OUR_MINOR
        } else {
            self.minor.min(OUR_MINOR)
        }
    }
}

/// Pads a mechanism name to the 20-byte greeting field. Names longer than 20
/// bytes are truncated (no defined mechanism is).
pub(crate) fn mechanism_field(name: &[u8]) -> [u8; MECHANISM_LEN] {
    let mut field = [0u8; MECHANISM_LEN];
    let n = name.len().min(MECHANISM_LEN);
    field[..n].copy_from_slice(&name[..n]);
    field
}

/// Returns a mechanism field as text without its zero padding.
pub(crate) fn mechanism_name(field: &[u8; MECHANISM_LEN]) -> String {
    let end = field.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// Encodes our full greeting: version 3.1, zero padding and filler.
pub(crate) fn encode(mechanism: &[u8; MECHANISM_LEN], as_server: bool) -> [u8; GREETING_LEN] {
    let mut g = [0u8; GREETING_LEN];
    g[0] = 0xFF;
    g[9] = 0x7F;
    g[MAJOR_POS] = OUR_MAJOR;
    g[MINOR_POS] = OUR_MINOR;
    g[MECHANISM_POS..MECHANISM_POS + MECHANISM_LEN].copy_from_slice(mechanism);
    g[AS_SERVER_POS] = u8::from(as_server);
    g
}

/// The first [`PREFIX_LEN`] bytes of our greeting. The padding carries
/// `routing_id_len + 1` as a 64-bit big-endian number, as libzmq's does: an
/// unversioned ZMTP 1.0 peer reads the signature as the length of an identity
/// frame (RFC 23 leaves the padding to the sender).
pub(crate) fn encode_prefix(routing_id_len: usize) -> [u8; PREFIX_LEN] {
    let mut p = [0u8; PREFIX_LEN];
    p[0] = 0xFF;
    p[1..9].copy_from_slice(&(routing_id_len as u64 + 1).to_be_bytes());
    p[9] = 0x7F;
    p[MAJOR_POS] = OUR_MAJOR;
    p
}

/// The peer's major version (ZMTP 2.0: its revision) once `buf` holds it;
/// `Ok(None)` before. Fails as soon as the signature is seen to be wrong
/// (byte 0 not 0xFF, or bit 0 of byte 9 clear: unversioned ZMTP 1.0 or not
/// ZMTP at all).
pub(crate) fn peer_major(buf: &[u8]) -> Result<Option<u8>, ProtocolError> {
    if buf.first().is_some_and(|&b| b != 0xFF) || buf.get(9).is_some_and(|&b| b & 0x01 == 0) {
        return Err(ProtocolError::BadSignature);
    }
    Ok(buf.get(MAJOR_POS).copied())
}

/// Validates as much of the peer's greeting as `buf` holds.
///
/// Returns `Ok(None)` while fewer than 64 bytes are available and the prefix
/// is still plausible, and an error as soon as the bytes that prove otherwise
/// have arrived: byte 0 not 0xFF or bit 0 of byte 9 clear (unversioned
/// ZMTP 1.0 or garbage), major version below 3, as-server not 0/1. The
/// padding and filler are not interpreted. The mechanism is returned, not
/// compared.
pub(crate) fn parse(buf: &[u8]) -> Result<Option<PeerGreeting>, ProtocolError> {
    if let Some(major) = peer_major(buf)? {
        if major < OUR_MAJOR {
            return Err(ProtocolError::UnsupportedVersion { major });
        }
    }
    if buf.len() < GREETING_LEN {
        return Ok(None);
    }
    let as_server = match buf[AS_SERVER_POS] {
        0 => false,
        1 => true,
        other => return Err(ProtocolError::InvalidAsServer(other)),
    };
    let mut mechanism = [0u8; MECHANISM_LEN];
    mechanism.copy_from_slice(&buf[MECHANISM_POS..MECHANISM_POS + MECHANISM_LEN]);
    Ok(Some(PeerGreeting {
        major: buf[MAJOR_POS],
        minor: buf[MINOR_POS],
        mechanism,
        as_server,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn null() -> [u8; MECHANISM_LEN] {
        mechanism_field(b"NULL")
    }

    #[test]
    fn encoded_greeting_layout() {
        let g = encode(&null(), false);
        assert_eq!(g[0], 0xFF);
        assert_eq!(&g[1..9], &[0u8; 8]);
        assert_eq!(g[9], 0x7F);
        assert_eq!((g[10], g[11]), (3, 1));
        assert_eq!(&g[12..16], b"NULL");
        assert_eq!(&g[16..32], &[0u8; 16]);
        assert_eq!(g[32], 0);
        assert_eq!(&g[33..], &[0u8; 31]);
        assert_eq!(encode(&null(), true)[32], 1);
    }

    #[test]
    fn parses_own_greeting_at_any_split() {
        let g = encode(&null(), false);
        for n in 0..GREETING_LEN {
            assert_eq!(parse(&g[..n]), Ok(None), "prefix {n}");
        }
        let peer = parse(&g).unwrap().unwrap();
        assert_eq!(peer.major, 3);
        assert_eq!(peer.minor, 1);
        assert_eq!(mechanism_name(&peer.mechanism), "NULL");
        assert!(!peer.as_server);
        assert_eq!(peer.negotiated_minor(), 1);
    }

    #[test]
    fn rejects_bad_signature_early() {
        assert_eq!(parse(b"G"), Err(ProtocolError::BadSignature));
        // ZMTP 1.0 long identity frame: 0xFF + 8-byte length + flags 0x00.
        let mut v1 = [0u8; 10];
        v1[0] = 0xFF;
        v1[8] = 5;
        assert_eq!(parse(&v1[..9]), Ok(None));
        assert_eq!(parse(&v1), Err(ProtocolError::BadSignature));
    }

    #[test]
    fn rejects_old_versions_and_bad_as_server() {
        let mut g = encode(&null(), false);
        g[10] = 2;
        assert_eq!(
            parse(&g[..11]),
            Err(ProtocolError::UnsupportedVersion { major: 2 })
        );
        let mut g = encode(&null(), false);
        g[32] = 7;
        assert_eq!(parse(&g), Err(ProtocolError::InvalidAsServer(7)));
    }

    #[test]
    fn version_negotiation() {
        let mut g = encode(&null(), false);
        g[11] = 0;
        assert_eq!(parse(&g).unwrap().unwrap().negotiated_minor(), 0);
        g[10] = 4;
        assert_eq!(parse(&g).unwrap().unwrap().negotiated_minor(), 1);
        g[10] = 3;
        g[11] = 7;
        assert_eq!(parse(&g).unwrap().unwrap().negotiated_minor(), 1);
    }

    #[test]
    fn prefix_is_the_greeting_start_with_libzmqs_padding() {
        let p = encode_prefix(0);
        assert_eq!(&p[..], &[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3]);
        let p = encode_prefix(255);
        assert_eq!(&p[1..9], &[0, 0, 0, 0, 0, 0, 1, 0]);
        assert_eq!(parse(&p), Ok(None));
        assert_eq!(peer_major(&p[..10]), Ok(None));
        assert_eq!(peer_major(&p), Ok(Some(3)));
        assert_eq!(
            peer_major(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 1]),
            Ok(Some(1))
        );
        assert_eq!(peer_major(&[0x01]), Err(ProtocolError::BadSignature));
    }

    #[test]
    fn mechanism_helpers() {
        assert_eq!(mechanism_name(&mechanism_field(b"PLAIN")), "PLAIN");
        assert_eq!(mechanism_name(&[0u8; MECHANISM_LEN]), "");
        assert_eq!(mechanism_field(&[b'A'; 30]), [b'A'; MECHANISM_LEN]);
    }
}
