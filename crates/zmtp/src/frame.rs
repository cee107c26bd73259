//! ZMTP 3.x frame headers.
//!
//! A frame is a flags byte (bit 0 MORE, bit 1 LONG, bit 2 COMMAND, bits 3..7
//! reserved and zero), a size (1 byte, or 8 bytes big-endian when LONG) and
//! the body.

use crate::error::ProtocolError;

pub(crate) const FLAG_MORE: u8 = 0x01;
pub(crate) const FLAG_LONG: u8 = 0x02;
pub(crate) const FLAG_COMMAND: u8 = 0x04;
const FLAGS_RESERVED: u8 = !(FLAG_MORE | FLAG_LONG | FLAG_COMMAND);

/// Largest header: flags + 8-byte size.
pub(crate) const MAX_HEADER_LEN: usize = 9;

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    pub(crate) more: bool,
    pub(crate) command: bool,
    /// Bytes taken by flags and size (2 or 9).
    pub(crate) header_len: usize,
    /// Announced body size; already checked against the limits.
    pub(crate) body_len: usize,
}

/// Size limits applied to announced body sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Largest message frame body.
    pub(crate) message: u64,
    /// Largest command frame body.
    pub(crate) command: u64,
}

/// Decodes a frame header from the start of `buf`.
///
/// Returns `Ok(None)` if the header is incomplete. Errors are reported as soon
/// as the bytes proving them are present: reserved flag bits or COMMAND with
/// MORE after the first byte, an oversized body after the size field (so no
/// body byte ever needs to be buffered for a rejected frame).
pub(crate) fn decode_header(
    buf: &[u8],
    limits: Limits,
) -> Result<Option<FrameHeader>, ProtocolError> {
    let Some(&flags) = buf.first() else {
        return Ok(None);
    };
    if flags & FLAGS_RESERVED != 0 {
        return Err(ProtocolError::ReservedFlags(flags));
    }
    let more = flags & FLAG_MORE != 0;
    let command = flags & FLAG_COMMAND != 0;
    if command && more {
        return Err(ProtocolError::CommandWithMore);
    }
    let (size, header_len) = if flags & FLAG_LONG != 0 {
        let Some(bytes) = buf.get(1..MAX_HEADER_LEN) else {
            return Ok(None);
        };
        let mut be = [0u8; 8];
        be.copy_from_slice(bytes);
        (u64::from_be_bytes(be), MAX_HEADER_LEN)
    } else {
        let Some(&len) = buf.get(1) else {
            return Ok(None);
        };
        (u64::from(len), 2)
    };
    let max = if command {
        limits.command
    } else {
        limits.message
    };
    if size > max {
        return Err(ProtocolError::FrameTooLarge { size, max });
    }
    let body_len = usize::try_from(size).map_err(|_| ProtocolError::FrameTooLarge {
        size,
        max: usize::MAX as u64,
    })?;
    Ok(Some(FrameHeader {
        more,
        command,
        header_len,
        body_len,
    }))
}

/// Encodes a frame header: a short header (2 bytes) when `len <= 255`, a long
/// one (9 bytes) otherwise. Returns the buffer and the number of bytes used.
pub(crate) fn encode_header(
    more: bool,
    command: bool,
    len: usize,
) -> ([u8; MAX_HEADER_LEN], usize) {
    let mut h = [0u8; MAX_HEADER_LEN];
    let mut flags = 0;
    if more {
        flags |= FLAG_MORE;
    }
    if command {
        flags |= FLAG_COMMAND;
    }
    if let Ok(short) = u8::try_from(len) {
        h[0] = flags;
        h[1] = short;
        (h, 2)
    } else {
        h[0] = flags | FLAG_LONG;
        h[1..].copy_from_slice(&(len as u64).to_be_bytes());
        (h, MAX_HEADER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNLIMITED: Limits = Limits {
        message: u64::MAX,
        command: u64::MAX,
    };

    #[test]
    fn short_and_long_round_trip() {
        for (more, command, len) in [
            (false, false, 0),
            (true, false, 1),
            (false, true, 255),
            (true, false, 256),
            (false, false, 1 << 20),
        ] {
            let (h, n) = encode_header(more, command, len);
            assert_eq!(n, if len <= 255 { 2 } else { 9 });
            let d = decode_header(&h[..n], UNLIMITED).unwrap().unwrap();
            assert_eq!(
                d,
                FrameHeader {
                    more,
                    command,
                    header_len: n,
                    body_len: len
                }
            );
            // Every strict prefix is incomplete, not an error.
            for k in 0..n {
                assert_eq!(decode_header(&h[..k], UNLIMITED), Ok(None));
            }
        }
    }

    #[test]
    fn exact_wire_bytes() {
        assert_eq!(encode_header(true, false, 3).0[..2], [0x01, 3]);
        assert_eq!(encode_header(false, true, 5).0[..2], [0x04, 5]);
        assert_eq!(
            encode_header(false, false, 256).0,
            [0x02, 0, 0, 0, 0, 0, 0, 1, 0]
        );
    }

    #[test]
    fn rejects_reserved_bits_and_command_more() {
        for bit in 3..8 {
            let flags = 1u8 << bit;
            assert_eq!(
                decode_header(&[flags], UNLIMITED),
                Err(ProtocolError::ReservedFlags(flags))
            );
        }
        assert_eq!(
            decode_header(&[0x05], UNLIMITED),
            Err(ProtocolError::CommandWithMore)
        );
    }

    #[test]
    fn enforces_limits_from_header_alone() {
        let limits = Limits {
            message: 100,
            command: 1000,
        };
        assert_eq!(
            decode_header(&[0x00, 101], limits),
            Err(ProtocolError::FrameTooLarge {
                size: 101,
                max: 100
            })
        );
        assert!(decode_header(&[0x04, 200], limits).unwrap().is_some());
        let mut huge = [0xFFu8; 9];
        huge[0] = FLAG_LONG;
        assert_eq!(
            decode_header(&huge, limits),
            Err(ProtocolError::FrameTooLarge {
                size: u64::MAX,
                max: 100
            })
        );
    }
}
