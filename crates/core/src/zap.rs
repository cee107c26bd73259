//! The client side of ZAP (RFC 27): a connection's handshake asks the handler bound at
//! `inproc://zeromq.zap.01` in the same context, over a private inproc pipe.

use crate::msg::Msg;
use crate::pattern::PeerMeta;
use crate::pipe::{Pipe, Waker};
use crate::socket::SocketShared;
use ferromq_zmtp::{codes, Bytes, SocketType, ZapRequest, ZapVerdict};
use std::sync::{Arc, Weak};

/// The inproc name ZAP handlers bind to.
pub(crate) const ENDPOINT: &str = "zeromq.zap.01";

/// One request in flight to the handler.
pub(crate) struct ZapClient {
    pipe: Arc<Pipe>,
    handler: Weak<SocketShared>,
    handler_pipe: u64,
    reply: Vec<Msg>,
}

/// What the connection needs to describe itself in a request.
pub(crate) struct RequestInfo<'a> {
    pub(crate) domain: &'a [u8],
    pub(crate) address: &'a str,
    pub(crate) routing_id: &'a [u8],
}

impl ZapClient {
    /// Connects to the handler of `sock`'s context and sends `req`. `None` if no handler
    /// is bound. `waker` is woken when the reply arrives.
    pub(crate) fn start(
        sock: &SocketShared,
        req: &ZapRequest,
        info: &RequestInfo<'_>,
        waker: Waker,
    ) -> Option<ZapClient> {
        let handler = {
            let st = sock.ctx.lock();
            st.inproc.get(ENDPOINT).and_then(Weak::upgrade)
        }?;
        if handler.lock().closed {
            return None;
        }
        let (mine, theirs) = Pipe::pair(0, 0);
        let handler_pipe = theirs.id;
        mine.inq.set_reader(waker);
        let meta = PeerMeta {
            socket_type: SocketType::Dealer,
            routing_id: None,
            connect_routing_id: None,
            props: None,
        };
        if !handler.attach_pipe(theirs, Some(&meta)) {
            return None;
        }
        let mut frames: Vec<&[u8]> = vec![
            b"",
            b"1.0",
            b"1",
            info.domain,
            info.address.as_bytes(),
            info.routing_id,
            req.mechanism.as_bytes(),
        ];
        frames.extend(req.credentials.iter().map(|c| &c[..]));
        let last = frames.len() - 1;
        let mut batch: Vec<Msg> = frames
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut m = Msg::copy_from(f);
                m.set_more(i != last);
                m
            })
            .collect();
        let _ = mine.out.push_batch(&mut batch);
        Some(ZapClient {
            pipe: mine,
            handler: Arc::downgrade(&handler),
            handler_pipe,
            reply: Vec::new(),
        })
    }

    /// The handler's decision once its whole reply has arrived: `Some(Ok)` with the
    /// verdict, `Some(Err(code))` with a `ZMQ_PROTOCOL_ERROR_ZAP_*` code for a malformed
    /// reply, `None` while incomplete (for good if the handler went away).
    pub(crate) fn poll(&mut self) -> Option<Result<ZapVerdict, u32>> {
        while let Some(m) = self.pipe.inq.pop() {
            let more = m.more();
            self.reply.push(m);
            if !more {
                return Some(parse_reply(&self.reply));
            }
        }
        // A handler that went away without replying leaves the handshake waiting, as
        // with libzmq 4.3.4 (the handshake timeout or the peer ends it): failing it at
        // once had the peer reconnect and, with the handler gone, be let in.
        None
    }
}

impl Drop for ZapClient {
    fn drop(&mut self) {
        self.pipe.close();
        if let Some(h) = self.handler.upgrade() {
            h.detach_pipe(self.handler_pipe);
        }
    }
}

/// Checks a reply as libzmq does: empty delimiter, version "1.0", request id "1", a
/// status code of 200/300/400/500, status text, user id, metadata.
pub(crate) fn parse_reply(frames: &[Msg]) -> Result<ZapVerdict, u32> {
    if frames.len() != 7 || !frames[0].is_empty() {
        return Err(codes::ZAP_MALFORMED_REPLY);
    }
    if frames[1].data() != b"1.0" {
        return Err(codes::ZAP_BAD_VERSION);
    }
    if frames[2].data() != b"1" {
        return Err(codes::ZAP_BAD_REQUEST_ID);
    }
    let status = match frames[3].data() {
        b"200" => 200,
        b"300" => 300,
        b"400" => 400,
        b"500" => 500,
        _ => return Err(codes::ZAP_INVALID_STATUS_CODE),
    };
    let properties = parse_metadata(frames[6].data()).ok_or(codes::ZAP_INVALID_METADATA)?;
    if status != 200 {
        return Ok(ZapVerdict::Reject { status });
    }
    Ok(ZapVerdict::Accept {
        user_id: Bytes::copy_from_slice(frames[5].data()),
        properties,
    })
}

/// Fuzzing entry point: [`parse_reply`] on frames given as byte slices.
#[doc(hidden)]
pub fn fuzz_parse_zap_reply(frames: &[&[u8]]) -> Result<ZapVerdict, u32> {
    let msgs: Vec<Msg> = frames.iter().map(|f| Msg::copy_from(f)).collect();
    parse_reply(&msgs)
}

/// ZMTP metadata: `name-len(1) name value-len(4, BE) value`, repeated.
fn parse_metadata(mut data: &[u8]) -> Option<Vec<(String, Bytes)>> {
    let mut props = Vec::new();
    while let Some((&n, rest)) = data.split_first() {
        let n = usize::from(n);
        if n == 0 || rest.len() < n + 4 {
            return None;
        }
        let name = String::from_utf8_lossy(&rest[..n]).into_owned();
        let len = u32::from_be_bytes(rest[n..n + 4].try_into().ok()?) as usize;
        let rest = &rest[n + 4..];
        if rest.len() < len {
            return None;
        }
        props.push((name, Bytes::copy_from_slice(&rest[..len])));
        data = &rest[len..];
    }
    Some(props)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(parts: &[&[u8]]) -> Vec<Msg> {
        parts.iter().map(|p| Msg::copy_from(p)).collect()
    }

    #[test]
    fn reply_validation_follows_libzmq_codes() {
        let ok = reply(&[
            b"",
            b"1.0",
            b"1",
            b"200",
            b"OK",
            b"user",
            b"\x01k\x00\x00\x00\x01v",
        ]);
        match parse_reply(&ok) {
            Ok(ZapVerdict::Accept {
                user_id,
                properties,
            }) => {
                assert_eq!(&user_id[..], b"user");
                assert_eq!(properties[0].0, "k");
            }
            other => panic!("{other:?}"),
        }
        let denied = reply(&[b"", b"1.0", b"1", b"400", b"no", b"", b""]);
        assert_eq!(parse_reply(&denied), Ok(ZapVerdict::Reject { status: 400 }));
        let cases: [(&[&[u8]], u32); 5] = [
            (
                &[b"", b"1.0", b"1", b"200", b"OK", b""],
                codes::ZAP_MALFORMED_REPLY,
            ),
            (
                &[b"x", b"1.0", b"1", b"200", b"OK", b"", b""],
                codes::ZAP_MALFORMED_REPLY,
            ),
            (
                &[b"", b"2.0", b"1", b"200", b"OK", b"", b""],
                codes::ZAP_BAD_VERSION,
            ),
            (
                &[b"", b"1.0", b"7", b"200", b"OK", b"", b""],
                codes::ZAP_BAD_REQUEST_ID,
            ),
            (
                &[b"", b"1.0", b"1", b"201", b"OK", b"", b""],
                codes::ZAP_INVALID_STATUS_CODE,
            ),
        ];
        for (parts, code) in cases {
            assert_eq!(parse_reply(&reply(parts)), Err(code), "{parts:?}");
        }
        let bad_meta = reply(&[b"", b"1.0", b"1", b"200", b"OK", b"", b"\x05ab"]);
        assert_eq!(parse_reply(&bad_meta), Err(codes::ZAP_INVALID_METADATA));
    }
}
