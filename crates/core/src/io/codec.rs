//! What a connection speaks: ZMTP through the sans-IO engine, or raw bytes (STREAM
//! sockets). Both offer the engine's buffer-oriented interface so the connection code does
//! not care which it drives.

use ferromq_zmtp::{Bytes, Engine, Event, PeerInfo, ProtocolError, SocketType, ZapVerdict};

/// Read size for raw (STREAM) connections.
const RAW_READ: usize = 64 * 1024;

/// Raw TCP for STREAM sockets: every read is one message; sends are written verbatim.
pub(super) struct RawCodec {
    input: Vec<u8>,
    filled: usize,
    output: Vec<u8>,
    written: usize,
    announced: bool,
}

/// ZMTP or raw.
pub(super) enum Codec {
    Zmtp(Box<Engine>),
    Raw(RawCodec),
}

impl Codec {
    pub(super) fn raw() -> Codec {
        Codec::Raw(RawCodec {
            input: Vec::new(),
            filled: 0,
            output: Vec::new(),
            written: 0,
            announced: false,
        })
    }

    pub(super) fn input_buffer(&mut self, min: usize) -> &mut [u8] {
        match self {
            Codec::Zmtp(e) => e.input_buffer(min),
            Codec::Raw(r) => {
                // Every read is one message: offer a good chunk whatever `min` says.
                let want = min.max(RAW_READ);
                if r.input.len() < r.filled + want {
                    r.input.resize(r.filled + want, 0);
                }
                &mut r.input[r.filled..]
            }
        }
    }

    /// The traffic fast path (`Engine::take_messages`): small message frames handed to
    /// `sink` as borrowed bodies. Raw streams have none.
    pub(super) fn take_messages(
        &mut self,
        sink: &mut dyn FnMut(bool, &[u8]),
    ) -> Result<usize, ProtocolError> {
        match self {
            Codec::Zmtp(e) => e.take_messages(crate::pool::MAX, sink),
            Codec::Raw(_) => Ok(0),
        }
    }

    /// `Engine::read_body_with` (raw streams have no frames: None).
    pub(super) fn read_body_with<R>(
        &mut self,
        read: impl FnOnce(&mut Vec<u8>, usize) -> R,
    ) -> Option<R> {
        match self {
            Codec::Zmtp(e) => e.read_body_with(read),
            Codec::Raw(_) => None,
        }
    }

    /// `Engine::body_missing` (raw streams: None).
    pub(super) fn body_missing(&self) -> Option<usize> {
        match self {
            Codec::Zmtp(e) => e.body_missing(),
            Codec::Raw(_) => None,
        }
    }

    pub(super) fn input_filled(&mut self, n: usize) {
        match self {
            Codec::Zmtp(e) => e.input_filled(n),
            Codec::Raw(r) => r.filled += n,
        }
    }

    pub(super) fn poll_event(&mut self) -> Result<Option<Event>, ProtocolError> {
        match self {
            Codec::Zmtp(e) => e.poll_event(),
            Codec::Raw(r) => {
                if !r.announced {
                    r.announced = true;
                    return Ok(Some(Event::Ready(PeerInfo {
                        socket_type: SocketType::Stream,
                        routing_id: None,
                        properties: Vec::new(),
                        minor_version: 0,
                        user_id: None,
                        zap_properties: Vec::new(),
                        major_version: 3,
                    })));
                }
                if r.filled == 0 {
                    return Ok(None);
                }
                let body = Bytes::copy_from_slice(&r.input[..r.filled]);
                r.filled = 0;
                Ok(Some(Event::Message { more: false, body }))
            }
        }
    }

    pub(super) fn send_message(&mut self, more: bool, body: &[u8]) {
        match self {
            Codec::Zmtp(e) => e.send_message(more, body),
            Codec::Raw(r) => r.output.extend_from_slice(body),
        }
    }

    pub(super) fn send_subscribe(&mut self, topic: &[u8]) {
        if let Codec::Zmtp(e) = self {
            e.send_subscribe(topic)
        }
    }

    pub(super) fn send_cancel(&mut self, topic: &[u8]) {
        if let Codec::Zmtp(e) = self {
            e.send_cancel(topic)
        }
    }

    pub(super) fn send_ping(&mut self, ttl: u16, context: &[u8]) {
        if let Codec::Zmtp(e) = self {
            e.send_ping(ttl, context)
        }
    }

    pub(super) fn output(&self) -> &[u8] {
        match self {
            Codec::Zmtp(e) => e.output(),
            Codec::Raw(r) => &r.output[r.written..],
        }
    }

    pub(super) fn consume_output(&mut self, n: usize) {
        match self {
            Codec::Zmtp(e) => e.consume_output(n),
            Codec::Raw(r) => {
                r.written += n;
                if r.written == r.output.len() {
                    r.output.clear();
                    r.written = 0;
                }
            }
        }
    }

    /// See `Engine::reserve_output`. STREAM's raw output: nothing reserved, 0.
    pub(super) fn reserve_output(&mut self, n: usize) -> usize {
        match self {
            Codec::Zmtp(e) => e.reserve_output(n),
            Codec::Raw(_) => 0,
        }
    }

    /// Bytes of encoding per frame beyond its body, at most: the frame header, and with
    /// CURVE the MESSAGE command's name, nonce, MAC and flags.
    pub(super) fn frame_overhead(&self) -> usize {
        match self {
            Codec::Zmtp(e) if e.is_encrypted() => 9 + 8 + 8 + 16 + 1 + 9,
            _ => 9,
        }
    }

    /// See `Engine::shrink_output` (STREAM's raw output: no-op).
    pub(super) fn shrink_output(&mut self, spare: usize) {
        if let Codec::Zmtp(e) = self {
            e.shrink_output(spare)
        }
    }

    pub(super) fn has_output(&self) -> bool {
        match self {
            Codec::Zmtp(e) => e.has_output(),
            Codec::Raw(r) => r.written < r.output.len(),
        }
    }

    pub(super) fn zap_reply(&mut self, verdict: ZapVerdict) {
        if let Codec::Zmtp(e) = self {
            e.zap_reply(verdict)
        }
    }

    /// True if large message bodies may be written around the engine (plain ZMTP
    /// traffic: CURVE must box every frame, and raw streams have no frames).
    pub(super) fn writes_in_place(&self) -> bool {
        matches!(self, Codec::Zmtp(e) if !e.is_encrypted())
    }

    /// Takes everything encoded so far, to be written before what comes next.
    pub(super) fn take_output(&mut self) -> Option<Bytes> {
        match self {
            Codec::Zmtp(e) if e.has_output() => Some(e.take_output()),
            _ => None,
        }
    }

    pub(super) fn is_raw(&self) -> bool {
        matches!(self, Codec::Raw(_))
    }

    /// True once the handshake found a ZMTP 2.0 peer (RFC 15).
    pub(super) fn is_zmtp2(&self) -> bool {
        match self {
            Codec::Zmtp(e) => e.peer().is_some_and(PeerInfo::is_zmtp2),
            Codec::Raw(_) => false,
        }
    }
}
