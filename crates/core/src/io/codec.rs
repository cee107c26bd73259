//! What a connection speaks: ZMTP through the sans-IO engine, or raw bytes (STREAM
//! sockets). Both offer the engine's buffer-oriented interface so the connection code does
//! not care which it drives.

use ferromq_zmtp::{Bytes, Engine, Event, PeerInfo, ProtocolError, SocketType, ZapVerdict};

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
                if r.input.len() < r.filled + min {
                    r.input.resize(r.filled + min, 0);
                }
                &mut r.input[r.filled..]
            }
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

    pub(super) fn is_raw(&self) -> bool {
        matches!(self, Codec::Raw(_))
    }
}
