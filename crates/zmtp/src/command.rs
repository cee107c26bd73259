//! ZMTP command bodies: `name-length name data`, and the data formats of the
//! commands the NULL mechanism and ZMTP 3.1 define (READY, ERROR, PING, PONG,
//! SUBSCRIBE, CANCEL).

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::ProtocolError;
use crate::frame;

pub(crate) const READY: &[u8] = b"READY";
pub(crate) const ERROR: &[u8] = b"ERROR";
pub(crate) const PING: &[u8] = b"PING";
pub(crate) const PONG: &[u8] = b"PONG";
pub(crate) const SUBSCRIBE: &[u8] = b"SUBSCRIBE";
pub(crate) const CANCEL: &[u8] = b"CANCEL";

/// How libzmq 4.x's PLAIN mechanism spells the ERROR command: its C source writes
/// the prefix as `"\x05ERROR"`, which the C compiler reads as the single byte 0x5E
/// followed by "RROR". libzmq PLAIN clients only understand this form, and PLAIN
/// servers only send it, so PLAIN sends it and every mechanism accepts it.
pub(crate) const LIBZMQ_PLAIN_ERROR: &[u8] = b"\x5eRROR";

/// Largest PING context (RFC 37).
pub(crate) const MAX_PING_CONTEXT: usize = 16;

fn malformed(name: &[u8]) -> ProtocolError {
    ProtocolError::MalformedCommand {
        command: String::from_utf8_lossy(name).into_owned(),
    }
}

/// Splits a command frame body into its name and its data (a zero-copy slice
/// of `body`). Fails if the body is empty, the name is empty, or the name
/// length runs past the body.
pub(crate) fn split(body: &Bytes) -> Result<(&[u8], Bytes), ProtocolError> {
    let Some((&len, rest)) = body.split_first() else {
        return Err(malformed(b""));
    };
    let len = usize::from(len);
    if len == 0 || rest.len() < len {
        return Err(malformed(b""));
    }
    Ok((&rest[..len], body.slice(1 + len..)))
}

/// Parses READY metadata: a sequence of `name-length(1) name
/// value-length(4, big-endian) value`. Values are zero-copy slices of `data`.
/// Names must be 1..=255 bytes; any truncation is `InvalidMetadata`.
pub(crate) fn parse_metadata(data: &Bytes) -> Result<Vec<(String, Bytes)>, ProtocolError> {
    let mut props = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let name_len = usize::from(data[pos]);
        pos += 1;
        if name_len == 0 || data.len() - pos < name_len + 4 {
            return Err(ProtocolError::InvalidMetadata);
        }
        let name = String::from_utf8_lossy(&data[pos..pos + name_len]).into_owned();
        pos += name_len;
        let mut be = [0u8; 4];
        be.copy_from_slice(&data[pos..pos + 4]);
        pos += 4;
        let value_len = u32::from_be_bytes(be) as usize;
        if data.len() - pos < value_len {
            return Err(ProtocolError::InvalidMetadata);
        }
        props.push((name, data.slice(pos..pos + value_len)));
        pos += value_len;
    }
    Ok(props)
}

/// Parses ERROR data: `reason-length(1) reason`. Bytes after the reason are
/// ignored; a missing or truncated reason is malformed. The reason is decoded
/// lossily as UTF-8.
pub(crate) fn parse_error_reason(data: &[u8]) -> Result<String, ProtocolError> {
    let Some((&len, rest)) = data.split_first() else {
        return Err(malformed(ERROR));
    };
    let reason = rest
        .get(..usize::from(len))
        .ok_or_else(|| malformed(ERROR))?;
    Ok(String::from_utf8_lossy(reason).into_owned())
}

/// Parses PING data: `ttl(2, big-endian) context`. Like libzmq, a context
/// longer than 16 bytes is truncated to 16 rather than rejected.
pub(crate) fn parse_ping(data: &Bytes) -> Result<(u16, Bytes), ProtocolError> {
    if data.len() < 2 {
        return Err(malformed(PING));
    }
    let ttl = u16::from_be_bytes([data[0], data[1]]);
    let end = data.len().min(2 + MAX_PING_CONTEXT);
    Ok((ttl, data.slice(2..end)))
}

/// Appends a command frame `name` whose data is the concatenation of `parts`.
/// `name` must be 1..=255 bytes.
pub(crate) fn write_command(out: &mut BytesMut, name: &[u8], parts: &[&[u8]]) {
    debug_assert!(!name.is_empty() && name.len() <= 255);
    let body_len = 1 + name.len() + parts.iter().map(|p| p.len()).sum::<usize>();
    let (header, n) = frame::encode_header(false, true, body_len);
    out.reserve(n + body_len);
    out.put_slice(&header[..n]);
    out.put_u8(name.len() as u8);
    out.put_slice(name);
    for part in parts {
        out.put_slice(part);
    }
}

/// Encodes metadata properties in order (the READY/INITIATE format).
/// Property names longer than 255 bytes or values longer than `u32::MAX`
/// bytes are not supported (debug assertion); callers only pass short, fixed
/// names.
pub(crate) fn encode_metadata(props: &[(&str, &[u8])]) -> Vec<u8> {
    let mut meta = Vec::with_capacity(64);
    for (name, value) in props {
        debug_assert!(!name.is_empty() && name.len() <= 255);
        meta.push(name.len() as u8);
        meta.extend_from_slice(name.as_bytes());
        meta.extend_from_slice(&(value.len() as u32).to_be_bytes());
        meta.extend_from_slice(value);
    }
    meta
}

/// Appends a READY command carrying `props` in order.
#[cfg(test)]
pub(crate) fn write_ready(out: &mut BytesMut, props: &[(&str, &[u8])]) {
    write_command(out, READY, &[&encode_metadata(props)]);
}

/// Appends an ERROR command in libzmq's PLAIN spelling ([`LIBZMQ_PLAIN_ERROR`]).
/// The reason must be at most 255 bytes (it is a ZAP status code).
pub(crate) fn write_libzmq_plain_error(out: &mut BytesMut, reason: &str) {
    let reason = &reason.as_bytes()[..reason.len().min(255)];
    let body_len = LIBZMQ_PLAIN_ERROR.len() + 1 + reason.len();
    let (header, n) = frame::encode_header(false, true, body_len);
    out.reserve(n + body_len);
    out.put_slice(&header[..n]);
    out.put_slice(LIBZMQ_PLAIN_ERROR);
    out.put_u8(reason.len() as u8);
    out.put_slice(reason);
}

/// Appends an ERROR command. The reason is truncated to 255 bytes (at a
/// UTF-8 character boundary).
pub(crate) fn write_error(out: &mut BytesMut, reason: &str) {
    let mut end = reason.len().min(255);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    write_command(out, ERROR, &[&[end as u8], &reason.as_bytes()[..end]]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_name_and_data() {
        let body = Bytes::from_static(b"\x04PINGxyz");
        let (name, data) = split(&body).unwrap();
        assert_eq!(name, b"PING");
        assert_eq!(&data[..], b"xyz");
        assert!(split(&Bytes::new()).is_err());
        assert!(split(&Bytes::from_static(b"\x00")).is_err());
        assert_eq!(
            split(&Bytes::from_static(b"\x09SUB")),
            Err(ProtocolError::MalformedCommand {
                command: String::new()
            })
        );
    }

    #[test]
    fn ready_round_trip_matches_rfc_example() {
        let mut out = BytesMut::new();
        write_ready(&mut out, &[("Socket-Type", b"DEALER"), ("Identity", b"")]);
        // RFC 37 worked example: a 41-byte READY body.
        assert_eq!(&out[..2], &[0x04, 41]);
        assert_eq!(&out[2..8], b"\x05READY");
        assert_eq!(&out[8..20], b"\x0bSocket-Type");
        assert_eq!(&out[20..30], b"\x00\x00\x00\x06DEALER");
        assert_eq!(&out[30..], b"\x08Identity\x00\x00\x00\x00");
        let body = Bytes::copy_from_slice(&out[2..]);
        let (name, data) = split(&body).unwrap();
        assert_eq!(name, READY);
        let props = parse_metadata(&data).unwrap();
        assert_eq!(props.len(), 2);
        assert_eq!(props[0].0, "Socket-Type");
        assert_eq!(&props[0].1[..], b"DEALER");
        assert_eq!(props[1].0, "Identity");
        assert!(props[1].1.is_empty());
    }

    #[test]
    fn metadata_truncation_is_invalid() {
        let good = b"\x01A\x00\x00\x00\x02hi";
        assert!(parse_metadata(&Bytes::from_static(good)).is_ok());
        for n in 1..good.len() {
            let data = Bytes::copy_from_slice(&good[..n]);
            assert_eq!(
                parse_metadata(&data),
                Err(ProtocolError::InvalidMetadata),
                "{n}"
            );
        }
        let empty_name = Bytes::from_static(b"\x00\x00\x00\x00\x00");
        assert_eq!(
            parse_metadata(&empty_name),
            Err(ProtocolError::InvalidMetadata)
        );
        assert_eq!(parse_metadata(&Bytes::new()), Ok(vec![]));
    }

    #[test]
    fn error_reason() {
        assert_eq!(parse_error_reason(b"\x03bad").unwrap(), "bad");
        assert_eq!(parse_error_reason(b"\x00").unwrap(), "");
        assert!(parse_error_reason(b"").is_err());
        assert_eq!(
            parse_error_reason(b"\x05bad"),
            Err(ProtocolError::MalformedCommand {
                command: "ERROR".into()
            })
        );
        let mut out = BytesMut::new();
        let long = "é".repeat(200); // 400 bytes
        write_error(&mut out, &long);
        // Truncated to 254 bytes (the last whole character before byte 255);
        // the 261-byte body needs a long command header.
        assert_eq!(&out[..9], &[0x06, 0, 0, 0, 0, 0, 0, 1, 5]);
        assert_eq!(&out[9..16], b"\x05ERROR\xfe");
        assert_eq!(out.len(), 9 + 1 + 5 + 1 + 254);
        let body = Bytes::copy_from_slice(&out[9..]);
        let (_, data) = split(&body).unwrap();
        assert_eq!(parse_error_reason(&data).unwrap(), "é".repeat(127));
    }

    #[test]
    fn ping_parsing() {
        let (ttl, ctx) = parse_ping(&Bytes::from_static(b"\x01\x02abc")).unwrap();
        assert_eq!(ttl, 0x0102);
        assert_eq!(&ctx[..], b"abc");
        let long = Bytes::from(vec![7u8; 40]);
        assert_eq!(parse_ping(&long).unwrap().1.len(), MAX_PING_CONTEXT);
        assert!(parse_ping(&Bytes::from_static(b"\x01")).is_err());
    }
}
