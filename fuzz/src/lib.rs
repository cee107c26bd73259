//! Helpers shared by the fuzz targets: a tiny independent ZMTP encoder (so the
//! targets do not depend on `ferromq-zmtp`'s private code), a way to split fuzz
//! input into arbitrary chunks, and [`Checked`], an [`Engine`] wrapper that
//! asserts the engine's documented invariants after every call.

use ferromq_zmtp::curve::KeyPair;
use ferromq_zmtp::{
    Bytes, Engine, EngineConfig, Event, MechanismConfig, ProtocolError, SocketType, ZapRequest,
    ZapVerdict,
};

/// All ZMTP socket types (STREAM is never spoken over ZMTP).
pub const ZMTP_TYPES: [SocketType; 11] = [
    SocketType::Pair,
    SocketType::Pub,
    SocketType::Sub,
    SocketType::Req,
    SocketType::Rep,
    SocketType::Dealer,
    SocketType::Router,
    SocketType::Pull,
    SocketType::Push,
    SocketType::XPub,
    SocketType::XSub,
];

/// A socket type the engine under test accepts for `ours`.
pub fn compatible_peer(ours: SocketType) -> SocketType {
    ZMTP_TYPES
        .iter()
        .copied()
        .find(|t| ours.is_compatible(*t))
        .expect("every ZMTP type has a compatible peer")
}

/// Reads bytes off the front of the fuzz input; returns 0 once it is empty.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Wraps the fuzz input.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }
    /// One byte (0 when exhausted).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }
    /// Two bytes, big-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.byte(), self.byte()])
    }
    /// Up to `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }
    /// A socket or context option number: a byte below 0x80 is the number itself
    /// (covering every libzmq option), otherwise 4 more bytes give an arbitrary i32.
    pub fn option_number(&mut self) -> i32 {
        let sel = self.byte();
        if sel < 0x80 {
            i32::from(sel)
        } else {
            i32::from_be_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
        }
    }
    /// A length byte followed by that many bytes.
    pub fn short_bytes(&mut self) -> &'a [u8] {
        let n = usize::from(self.byte());
        self.take(n)
    }
    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Cuts a byte stream into chunks whose sizes cycle through a 4-byte pattern
/// taken from the fuzz input (a pattern byte of 0 means "everything left").
#[derive(Clone, Copy)]
pub struct Chunker {
    pattern: [u8; 4],
}

impl Chunker {
    /// Takes the 4 pattern bytes from the input.
    pub fn from_input(input: &mut Input<'_>) -> Self {
        Chunker {
            pattern: [input.byte(), input.byte(), input.byte(), input.byte()],
        }
    }
    /// Splits `data` into chunks.
    pub fn split<'d>(&self, data: &'d [u8]) -> Vec<&'d [u8]> {
        let mut out = Vec::new();
        let mut rest = data;
        let mut i = 0;
        while !rest.is_empty() {
            let p = self.pattern[i % 4];
            i += 1;
            let n = if p == 0 {
                rest.len()
            } else {
                usize::from(p).min(rest.len())
            };
            let (head, tail) = rest.split_at(n);
            out.push(head);
            rest = tail;
        }
        out
    }
    /// Whether chunk `i` goes through `input_buffer`/`input_filled` rather than `feed`.
    pub fn use_buffer(&self, i: usize) -> bool {
        self.pattern[i % 4] & 0x80 != 0
    }
}

// ----- An independent ZMTP 3.x encoder -----

/// A 64-byte greeting.
pub fn greeting(mechanism: &str, as_server: bool, major: u8, minor: u8) -> Vec<u8> {
    let mut g = vec![0u8; 64];
    g[0] = 0xFF;
    g[9] = 0x7F;
    g[10] = major;
    g[11] = minor;
    g[12..12 + mechanism.len()].copy_from_slice(mechanism.as_bytes());
    g[32] = u8::from(as_server);
    g
}

fn frame(flags: u8, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(body.len() + 9);
    if body.len() <= 255 {
        f.push(flags);
        f.push(body.len() as u8);
    } else {
        f.push(flags | 0x02);
        f.extend_from_slice(&(body.len() as u64).to_be_bytes());
    }
    f.extend_from_slice(body);
    f
}

/// A command frame `name data`.
pub fn command(name: &[u8], data: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(1 + name.len() + data.len());
    body.push(name.len() as u8);
    body.extend_from_slice(name);
    body.extend_from_slice(data);
    frame(0x04, &body)
}

/// A message frame.
pub fn message(more: bool, body: &[u8]) -> Vec<u8> {
    frame(u8::from(more), body)
}

/// READY/INITIATE metadata.
pub fn metadata(props: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut m = Vec::new();
    for (name, value) in props {
        m.push(name.len() as u8);
        m.extend_from_slice(name);
        m.extend_from_slice(&(value.len() as u32).to_be_bytes());
        m.extend_from_slice(value);
    }
    m
}

/// A reference metadata parser: `None` when malformed.
pub fn parse_metadata(mut data: &[u8]) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut props = Vec::new();
    while !data.is_empty() {
        let n = usize::from(data[0]);
        if n == 0 || data.len() < 1 + n + 4 {
            return None;
        }
        let name = data[1..1 + n].to_vec();
        let len = u32::from_be_bytes(data[1 + n..5 + n].try_into().unwrap()) as usize;
        let rest = &data[5 + n..];
        if rest.len() < len {
            return None;
        }
        props.push((name, rest[..len].to_vec()));
        data = &rest[len..];
    }
    Some(props)
}

/// Splits a stream (after the greeting) into complete frames, as byte ranges.
/// A trailing incomplete frame is returned as the last range.
pub fn frame_ranges(stream: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < stream.len() {
        let flags = stream[pos];
        let (len, hlen) = if flags & 0x02 != 0 {
            match stream.get(pos + 1..pos + 9) {
                Some(b) => (u64::from_be_bytes(b.try_into().unwrap()), 9),
                None => (u64::MAX, 9),
            }
        } else {
            match stream.get(pos + 1) {
                Some(&b) => (u64::from(b), 2),
                None => (u64::MAX, 2),
            }
        };
        let end = (pos as u64)
            .saturating_add(hlen)
            .saturating_add(len)
            .min(stream.len() as u64) as usize;
        out.push(pos..end);
        pos = end;
    }
    out
}

/// A frame body the reference decoder reached: where it starts in the stream and
/// how long its header says it is (its end may lie past the end of the stream).
#[derive(Clone, Copy, Debug)]
pub struct BodySpan {
    /// Offset of the body's first byte.
    pub start: usize,
    /// Announced body length.
    pub len: u64,
}

impl BodySpan {
    /// Offset just past the body (saturating).
    pub fn end(&self) -> u64 {
        (self.start as u64).saturating_add(self.len)
    }
}

/// What the reference decoder makes of a traffic-phase stream.
pub struct Reference {
    /// The events, in order.
    pub events: Vec<Event>,
    /// Whether a protocol error follows them.
    pub error: bool,
    /// Every frame body reached before an error, ERROR or the end of the stream,
    /// including a last incomplete one.
    pub bodies: Vec<BodySpan>,
}

/// An independent decoder of the traffic phase, written from RFC 23/37 (what the
/// engine must report after a NULL handshake, given its `max_msg_size`).
pub fn reference(stream: &[u8], max: Option<u64>) -> Reference {
    let msg_limit = max.unwrap_or(isize::MAX as u64);
    let cmd_limit = msg_limit.max(64 * 1024);
    let mut r = Reference {
        events: Vec::new(),
        error: false,
        bodies: Vec::new(),
    };
    let mut pos = 0;
    while pos < stream.len() {
        let flags = stream[pos];
        if flags & 0xF8 != 0 || flags & 0x05 == 0x05 {
            r.error = true;
            return r;
        }
        let (size, hlen) = if flags & 0x02 != 0 {
            let Some(b) = stream.get(pos + 1..pos + 9) else {
                return r;
            };
            (u64::from_be_bytes(b.try_into().unwrap()), 9)
        } else {
            let Some(&b) = stream.get(pos + 1) else {
                return r;
            };
            (u64::from(b), 2)
        };
        let command = flags & 0x04 != 0;
        if size > if command { cmd_limit } else { msg_limit } {
            r.error = true;
            return r;
        }
        let start = pos + hlen;
        r.bodies.push(BodySpan { start, len: size });
        if ((stream.len() - start) as u64) < size {
            return r;
        }
        let body = &stream[start..start + size as usize];
        pos = start + size as usize;
        if !command {
            r.events.push(Event::Message {
                more: flags & 1 != 0,
                body: Bytes::copy_from_slice(body),
            });
            continue;
        }
        let error_reason = |data: &[u8]| -> Option<String> {
            let (&n, rest) = data.split_first()?;
            rest.get(..usize::from(n))
                .map(|r| String::from_utf8_lossy(r).into_owned())
        };
        // libzmq's PLAIN error ("^RROR") and ERROR both end the conversation.
        let error_data = body
            .strip_prefix(b"\x5eRROR")
            .or_else(|| body.strip_prefix(b"\x05ERROR"));
        if let Some(data) = error_data {
            match error_reason(data) {
                Some(reason) => r.events.push(Event::PeerError { reason }),
                None => r.error = true,
            }
            return r;
        }
        let Some((&n, rest)) = body.split_first() else {
            r.error = true;
            return r;
        };
        let n = usize::from(n);
        if n == 0 || rest.len() < n {
            r.error = true;
            return r;
        }
        let (name, data) = rest.split_at(n);
        match name {
            b"READY" => {
                r.error = true;
                return r;
            }
            b"PING" => {
                if data.len() < 2 {
                    r.error = true;
                    return r;
                }
                r.events.push(Event::Ping {
                    ttl: u16::from_be_bytes([data[0], data[1]]),
                    context: Bytes::copy_from_slice(&data[2..data.len().min(18)]),
                });
            }
            b"PONG" => r.events.push(Event::Pong {
                context: Bytes::copy_from_slice(data),
            }),
            b"SUBSCRIBE" => r
                .events
                .push(Event::Subscribe(Bytes::copy_from_slice(data))),
            b"CANCEL" => r.events.push(Event::Cancel(Bytes::copy_from_slice(data))),
            _ => {}
        }
    }
    r
}

/// Fixed CURVE keys: (server, client). Derived from constant secrets so the
/// targets are reproducible apart from the engines' own random transient keys.
pub fn curve_keys() -> (KeyPair, KeyPair) {
    (
        KeyPair::from_secret([0x11; 32]),
        KeyPair::from_secret([0x22; 32]),
    )
}

/// An engine configuration.
pub fn config(
    socket_type: SocketType,
    mechanism: MechanismConfig,
    max_msg_size: Option<u64>,
) -> EngineConfig {
    EngineConfig {
        socket_type,
        routing_id: Bytes::from_static(b"fuzz"),
        mechanism,
        null_zap: false,
        max_msg_size,
    }
}

/// A message-size limit chosen by one input byte.
pub fn max_msg_size(b: u8) -> Option<u64> {
    match b % 8 {
        0 | 1 => None,
        2 => Some(0),
        3 => Some(1),
        4 => Some(255),
        5 => Some(256),
        6 => Some(1024),
        _ => Some(u64::from(b)),
    }
}

/// A ZAP verdict chosen by the fuzz input.
pub fn verdict(input: &mut Input<'_>) -> ZapVerdict {
    match input.byte() % 5 {
        0 | 1 => {
            let user_id = Bytes::copy_from_slice(input.short_bytes());
            let n = input.byte() % 3;
            let properties = (0..n)
                .map(|_| {
                    let name = String::from_utf8_lossy(input.short_bytes()).into_owned();
                    (name, Bytes::copy_from_slice(input.short_bytes()))
                })
                .collect();
            ZapVerdict::Accept {
                user_id,
                properties,
            }
        }
        2 => ZapVerdict::Reject { status: 300 },
        3 => ZapVerdict::Reject { status: 400 },
        _ => ZapVerdict::Reject {
            status: if input.byte() & 1 == 0 {
                500
            } else {
                input.u16()
            },
        },
    }
}

/// An [`Engine`] whose every call is checked against its documented contract:
///
/// * after an `Err`, every `poll_event` returns that same error, whatever is fed;
/// * after [`Event::PeerError`], every `poll_event` returns `Ok(None)`;
/// * `Ready` comes exactly once, before any traffic event, and `is_ready`/`peer`
///   agree with it; no `ZapRequest` after it;
/// * while a ZAP decision is pending, nothing else is reported;
/// * a message body never exceeds the configured `max_msg_size`; a PING
///   context never exceeds 16 bytes;
/// * a rejecting ZAP verdict makes the next call fail with `AuthFailed`;
/// * `poll_event` stops returning events after a bounded number of calls.
pub struct Checked {
    /// The engine under test.
    pub engine: Engine,
    max_msg_size: Option<u64>,
    /// The error the engine reported, if any.
    pub failed: Option<ProtocolError>,
    /// Whether the peer sent ERROR.
    pub peer_closed: bool,
    /// The Ready event, once seen.
    pub ready: Option<ferromq_zmtp::PeerInfo>,
    zap_pending: bool,
    /// Bytes fed since the last drained poll, bounding the events they can yield.
    fed_since_poll: usize,
    /// The accepted ZAP verdict (user id, properties), to compare with Ready.
    accepted: Option<(Bytes, Vec<(String, Bytes)>)>,
    /// ZAP requests seen.
    pub zap_requests: Vec<ZapRequest>,
}

impl Checked {
    /// Wraps a fresh engine.
    pub fn new(cfg: EngineConfig) -> Self {
        let max_msg_size = cfg.max_msg_size;
        let engine = Engine::new(cfg);
        // The greeting's signature; our major version waits for the peer's signature,
        // the rest for the peer's version.
        assert_eq!(
            engine.output().len(),
            10,
            "greeting start queued at creation"
        );
        Checked {
            engine,
            max_msg_size,
            failed: None,
            peer_closed: false,
            ready: None,
            zap_pending: false,
            fed_since_poll: 0,
            accepted: None,
            zap_requests: Vec::new(),
        }
    }

    /// An engine of type `ours` that has completed a NULL handshake with a compatible
    /// ZMTP 3.`minor` peer (greeting and READY given through `input_buffer` if
    /// `through_buffer`, else `feed`), its Ready event checked.
    pub fn null_ready(ours: SocketType, minor: u8, max: Option<u64>, through_buffer: bool) -> Self {
        let mut e = Checked::new(config(ours, MechanismConfig::Null, max));
        let mut hello = greeting("NULL", false, 3, minor);
        hello.extend(command(
            b"READY",
            &metadata(&[(b"Socket-Type", compatible_peer(ours).name().as_bytes())]),
        ));
        e.give(&hello, through_buffer);
        let events = e.drain(&mut no_zap);
        assert!(matches!(events.as_slice(), [Event::Ready(_)]), "{events:?}");
        assert_eq!(e.ready.as_ref().unwrap().minor_version, minor);
        e
    }

    /// Whether the engine has failed or the peer closed.
    pub fn is_dead(&self) -> bool {
        self.failed.is_some() || self.peer_closed
    }

    /// Gives bytes to the engine, through `feed` or through
    /// `input_buffer` + `input_filled`.
    pub fn give(&mut self, data: &[u8], through_buffer: bool) {
        self.fed_since_poll += data.len();
        if through_buffer {
            let spare = self.engine.input_buffer(data.len());
            assert!(spare.len() >= data.len(), "input_buffer smaller than asked");
            spare[..data.len()].copy_from_slice(data);
            self.engine.input_filled(data.len());
        } else {
            self.engine.feed(data);
        }
    }

    /// Polls until `Ok(None)` or an error, answering ZAP requests with `zap`.
    /// Returns the events.
    pub fn drain(&mut self, zap: &mut dyn FnMut(&ZapRequest) -> ZapVerdict) -> Vec<Event> {
        let mut events = Vec::new();
        // Each event consumes at least two input bytes, except Ready (one) and a
        // ZapRequest plus what a verdict releases: this bound is generous.
        let budget = self.fed_since_poll + 16;
        self.fed_since_poll = 0;
        for _ in 0..budget {
            match self.poll_once() {
                Some(Event::ZapRequest(req)) => {
                    let v = zap(&req);
                    self.answer(v);
                    events.push(Event::ZapRequest(req));
                }
                Some(e) => events.push(e),
                None => return events,
            }
        }
        panic!("poll_event kept returning events beyond {budget} calls");
    }

    /// Gives the ZAP verdict and checks its immediate effect.
    pub fn answer(&mut self, v: ZapVerdict) {
        assert!(self.zap_pending, "answer without a pending request");
        self.zap_pending = false;
        if let ZapVerdict::Accept {
            user_id,
            properties,
        } = &v
        {
            self.accepted = Some((user_id.clone(), properties.clone()));
        }
        let reject = match &v {
            ZapVerdict::Reject { status } => Some(*status),
            ZapVerdict::Accept { .. } => None,
        };
        let out_before = self.engine.output().len();
        self.engine.zap_reply(v);
        // A second reply is ignored.
        self.engine.zap_reply(ZapVerdict::Reject { status: 500 });
        if let Some(status) = reject {
            let r = self.engine.poll_event();
            assert_eq!(r, Err(ProtocolError::AuthFailed { status }));
            if status == 300 {
                assert_eq!(self.engine.output().len(), out_before, "300 sends nothing");
            } else {
                assert!(self.engine.output().len() > out_before, "ERROR queued");
            }
            self.failed = Some(ProtocolError::AuthFailed { status });
        }
    }

    /// One checked `poll_event`; `None` when it returned `Ok(None)` or `Err`.
    pub fn poll_once(&mut self) -> Option<Event> {
        let was_ready = self.engine.is_ready();
        let r = self.engine.poll_event();
        if let Some(e) = &self.failed {
            assert_eq!(r.as_ref(), Err(e), "a failed engine must keep failing");
            return None;
        }
        if self.peer_closed {
            assert_eq!(r, Ok(None), "after PeerError the engine stays silent");
            return None;
        }
        if self.zap_pending {
            assert_eq!(r, Ok(None), "nothing is reported while ZAP decides");
            return None;
        }
        match r {
            Err(e) => {
                assert_eq!(self.engine.is_ready(), was_ready);
                // Once failed, the same error comes back, even after more input.
                assert_eq!(self.engine.poll_event().as_ref(), Err(&e));
                self.engine.feed(b"\x00\x01x");
                let spare = self.engine.input_buffer(3);
                spare[..3].copy_from_slice(b"\x04\x01x");
                self.engine.input_filled(3);
                assert_eq!(self.engine.poll_event().as_ref(), Err(&e));
                self.failed = Some(e);
                None
            }
            Ok(None) => None,
            Ok(Some(event)) => {
                self.check_event(&event);
                Some(event)
            }
        }
    }

    fn check_event(&mut self, event: &Event) {
        match event {
            Event::Ready(info) => {
                assert!(self.ready.is_none(), "second Ready");
                assert!(self.engine.is_ready());
                assert_eq!(self.engine.peer(), Some(info));
                assert!(info.minor_version <= 1);
                if let Some(id) = &info.routing_id {
                    assert!(!id.is_empty());
                }
                if let Some((user_id, props)) = &self.accepted {
                    let expect = Some(user_id.clone()).filter(|u| !u.is_empty());
                    assert_eq!(info.user_id, expect);
                    assert_eq!(&info.zap_properties, props);
                } else {
                    assert_eq!(info.user_id, None);
                }
                self.ready = Some(info.clone());
            }
            Event::ZapRequest(req) => {
                assert!(self.ready.is_none(), "ZapRequest after Ready");
                assert!(!self.engine.is_ready());
                self.zap_pending = true;
                self.zap_requests.push(req.clone());
            }
            Event::PeerError { reason } => {
                assert!(reason.len() <= 255 * 3, "reason length bounded by its byte");
                self.peer_closed = true;
            }
            Event::Message { body, .. } => {
                assert!(self.ready.is_some(), "message before Ready");
                if let Some(max) = self.max_msg_size {
                    assert!(body.len() as u64 <= max, "message above max_msg_size");
                }
            }
            Event::Ping { context, .. } => {
                assert!(self.ready.is_some(), "PING before Ready");
                assert!(context.len() <= 16, "PING context above 16 bytes");
            }
            Event::Subscribe(_) | Event::Cancel(_) | Event::Pong { .. } => {
                assert!(self.ready.is_some(), "command event before Ready");
            }
        }
    }

    /// One checked `take_messages(max_body, ..)`: returns the frames it lent, as
    /// `Event::Message`s. It takes nothing from a dead engine, before Ready or while
    /// ZAP decides, and never a body above `max_body` or `max_msg_size`.
    pub fn take_messages(&mut self, max_body: usize) -> Vec<Event> {
        let mut taken = Vec::new();
        let r = self.engine.take_messages(max_body, &mut |more, body| {
            taken.push(Event::Message {
                more,
                body: Bytes::copy_from_slice(body),
            });
        });
        if let Some(e) = &self.failed {
            assert!(taken.is_empty(), "take_messages took from a failed engine");
            assert!(matches!(&r, Ok(0)) || r.as_ref() == Err(e), "{r:?}");
            return taken;
        }
        match r {
            Ok(n) => assert_eq!(n, taken.len(), "count differs from the frames lent"),
            Err(e) => {
                assert!(taken.is_empty(), "frames lent before an error");
                // Like poll_event: from now on the engine keeps failing.
                self.failed = Some(e);
                return taken;
            }
        }
        if self.peer_closed || self.zap_pending || self.ready.is_none() {
            assert!(taken.is_empty(), "take_messages took outside traffic");
        }
        for ev in &taken {
            if let Event::Message { body, .. } = ev {
                assert!(body.len() <= max_body, "lent a body above max_body");
            }
            self.check_event(ev);
        }
        taken
    }

    /// Feeds `data` cut by `chunker`, draining after each chunk.
    pub fn feed_chunked(
        &mut self,
        data: &[u8],
        chunker: &Chunker,
        zap: &mut dyn FnMut(&ZapRequest) -> ZapVerdict,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        for (i, chunk) in chunker.split(data).into_iter().enumerate() {
            self.give(chunk, chunker.use_buffer(i));
            events.extend(self.drain(zap));
        }
        events
    }

    /// Takes all queued output.
    pub fn take_output(&mut self) -> Vec<u8> {
        let out = self.engine.output().to_vec();
        self.engine.consume_output(out.len());
        assert!(!self.engine.has_output());
        out
    }
}

/// A ZAP handler that must never be asked.
pub fn no_zap(req: &ZapRequest) -> ZapVerdict {
    panic!("unexpected ZAP request {req:?}")
}

/// Two honest engines connected back to back, pumping bytes until neither has
/// anything to say. `a_to_b` may rewrite each frame A sends (the greeting is frame 0).
pub fn pump(
    a: &mut Checked,
    b: &mut Checked,
    zap_a: &mut dyn FnMut(&ZapRequest) -> ZapVerdict,
    zap_b: &mut dyn FnMut(&ZapRequest) -> ZapVerdict,
    a_to_b: &mut dyn FnMut(Vec<u8>) -> Vec<u8>,
) -> (Vec<Event>, Vec<Event>) {
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    for _ in 0..32 {
        let out_a = a.take_output();
        let out_b = b.take_output();
        if out_a.is_empty() && out_b.is_empty() {
            break;
        }
        if !out_a.is_empty() {
            let rewritten = a_to_b(out_a);
            b.give(&rewritten, false);
        }
        eb.extend(b.drain(zap_b));
        if !out_b.is_empty() {
            a.give(&out_b, true);
        }
        ea.extend(a.drain(zap_a));
    }
    (ea, eb)
}

/// Accepts every ZAP request.
pub fn accept_all(_: &ZapRequest) -> ZapVerdict {
    ZapVerdict::Accept {
        user_id: Bytes::new(),
        properties: Vec::new(),
    }
}

/// A PLAIN client configuration.
pub fn plain_client(username: &[u8], password: &[u8]) -> MechanismConfig {
    MechanismConfig::PlainClient {
        username: username.to_vec(),
        password: zeroize::Zeroizing::new(password.to_vec()),
    }
}

/// One rewrite of a frame on its way from the honest peer to the engine under test.
#[derive(Clone, Copy, Debug)]
struct Mutation {
    frame: u8,
    op: u8,
    pos: u16,
    value: u8,
}

fn reencode(flags: u8, body: &[u8]) -> Vec<u8> {
    frame(flags & !0x02, body)
}

impl Mutation {
    fn apply(&self, f: Vec<u8>, is_greeting: bool, out: &mut Vec<u8>) {
        let hlen = if is_greeting {
            0
        } else if f[0] & 0x02 != 0 {
            9
        } else {
            2
        };
        let body = &f[hlen..];
        let at = |len: usize| usize::from(self.pos) % len.max(1);
        let x = self.value.max(1);
        match self.op % 6 {
            0 => {
                let mut f = f.clone();
                let i = at(f.len());
                f[i] ^= x;
                out.extend(f);
            }
            1 if !body.is_empty() => {
                let mut b = body.to_vec();
                let i = at(b.len());
                b[i] ^= x;
                out.extend(if is_greeting { b } else { reencode(f[0], &b) });
            }
            2 if !body.is_empty() && !is_greeting => {
                out.extend(reencode(f[0], &body[..at(body.len())]));
            }
            3 if !is_greeting => {
                let mut b = body.to_vec();
                b.extend(std::iter::repeat(self.value).take(usize::from(self.pos % 64) + 1));
                out.extend(reencode(f[0], &b));
            }
            4 => {
                out.extend_from_slice(&f);
                out.extend(f);
            }
            5 => {}
            _ => out.extend(f),
        }
    }
}

/// Splits a stream the honest peer wrote into its greeting and frames, and
/// applies the mutations aimed at each frame (numbered from 0 = greeting).
struct Rewriter {
    mutations: Vec<Mutation>,
    next_frame: usize,
    /// Whether any mutation was applied.
    hit: bool,
    /// The greeting after its first 11 bytes so far, held back until whole. It goes out
    /// in three steps (signature; major version once the peer's signature is in; the
    /// rest once the peer's version is), so the first 11 bytes pass at once, unchanged,
    /// and the greeting's mutations apply to the rest.
    greeting: Vec<u8>,
    /// How many of the greeting's first 11 bytes have passed.
    prefix_passed: usize,
}

/// The greeting's first bytes, which pass the rewriter unchanged: signature, major version.
const PREFIX: usize = 11;

impl Rewriter {
    fn rewrite(&mut self, stream: Vec<u8>) -> Vec<u8> {
        let mut frames: Vec<(Vec<u8>, bool)> = Vec::new();
        let mut rest = &stream[..];
        let mut out = Vec::with_capacity(stream.len());
        if self.next_frame == 0 {
            let pass = (PREFIX - self.prefix_passed).min(rest.len());
            out.extend_from_slice(&rest[..pass]);
            self.prefix_passed += pass;
            rest = &rest[pass..];
            let take = (64 - PREFIX - self.greeting.len()).min(rest.len());
            self.greeting.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.greeting.len() < 64 - PREFIX {
                return out;
            }
            frames.push((std::mem::take(&mut self.greeting), true));
        }
        for r in frame_ranges(rest) {
            frames.push((rest[r].to_vec(), false));
        }
        for (f, is_greeting) in frames {
            let n = self.next_frame;
            self.next_frame += 1;
            match self.mutations.iter().find(|m| usize::from(m.frame) == n) {
                Some(m) => {
                    self.hit = true;
                    m.apply(f, is_greeting, &mut out);
                }
                None => out.extend(f),
            }
        }
        out
    }
}

/// The CURVE targets. Raw mode: a valid greeting, then arbitrary bytes (boxes
/// cannot be forged, but every length and state check is reachable). Structured
/// mode: an honest peer engine runs a real handshake with the engine under test
/// and then sends messages; selected frames on the way are rewritten (byte flips,
/// truncation, extension, replay, drop). Checked:
///
/// * with no rewrite, both sides become ready and every message arrives intact;
/// * the server only ever asks ZAP about the client's real public key;
/// * whatever is rewritten, the messages delivered are a subsequence, in order,
///   of those sent: nothing forged, altered, reordered or replayed;
/// * the invariants of [`Checked`] on both engines.
///
/// Input: [mode/type/limit] [8 verdict bytes] [4 chunk bytes] then, raw: bytes;
/// structured: [mutation count] 5 bytes per mutation, then message payloads.
pub fn curve_target(data: &[u8], server_under_test: bool) {
    let mut input = Input::new(data);
    let b0 = input.byte();
    let structured = b0 & 0x80 != 0;
    let ours = ZMTP_TYPES[usize::from(b0 & 0x0F) % ZMTP_TYPES.len()];
    let max = if b0 & 0x40 != 0 { Some(64) } else { None };
    let vin = std::cell::RefCell::new(Input::new(input.take(8)));
    let chunker = Chunker::from_input(&mut input);
    let (server_keys, client_keys) = curve_keys();
    let server_cfg = MechanismConfig::CurveServer {
        keys: server_keys.clone(),
    };
    let client_cfg = MechanismConfig::CurveClient {
        keys: client_keys.clone(),
        server_key: server_keys.public,
    };
    let (mine, theirs) = if server_under_test {
        (server_cfg, client_cfg)
    } else {
        (client_cfg, server_cfg)
    };
    let mut b = Checked::new(config(ours, mine, max));
    let client_public = client_keys.public;
    // Whichever side is the server answers ZAP from the fuzz input.
    let verdicts = std::cell::RefCell::new(Vec::new());
    let zap = |req: &ZapRequest| {
        assert_eq!(req.mechanism, "CURVE");
        assert_eq!(req.credentials.len(), 1);
        assert_eq!(
            &req.credentials[0][..],
            &client_public[..],
            "ZAP asked about a forged key"
        );
        let v = verdict(&mut vin.borrow_mut());
        verdicts.borrow_mut().push(v.clone());
        v
    };

    if !structured {
        let mut stream = greeting("CURVE", !server_under_test, 3, 1);
        stream.extend_from_slice(input.rest());
        b.feed_chunked(&stream, &chunker, &mut { zap });
        return;
    }

    let n = usize::from(input.byte() % 5);
    let mutations = (0..n)
        .map(|_| Mutation {
            frame: input.byte() % 8,
            op: input.byte(),
            pos: input.u16(),
            value: input.byte(),
        })
        .collect();
    let mut rw = Rewriter {
        mutations,
        next_frame: 0,
        hit: false,
        greeting: Vec::new(),
        prefix_passed: 0,
    };
    let mut a = Checked::new(config(compatible_peer(ours), theirs, None));
    {
        let (mut zap_a, mut zap_b) = (zap, zap);
        let mut rewrite = |s: Vec<u8>| rw.rewrite(s);
        pump(&mut a, &mut b, &mut zap_a, &mut zap_b, &mut rewrite);
    }
    let verdicts = verdicts.into_inner();
    assert!(verdicts.len() <= 1);
    let accepted = verdicts
        .iter()
        .all(|v| matches!(v, ZapVerdict::Accept { .. }));
    if !rw.hit && accepted {
        assert!(
            a.ready.is_some() && b.ready.is_some(),
            "{:?} {:?}",
            a.failed,
            b.failed
        );
    }
    let server = if server_under_test { &b } else { &a };
    if server.ready.is_some() {
        assert!(
            server.zap_requests.len() == 1 && accepted,
            "CURVE server ready without a ZAP acceptance"
        );
    }

    if a.ready.is_none() || a.is_dead() {
        return;
    }
    // Traffic from the honest peer, rewritten on the way.
    let mut sent: Vec<(bool, Vec<u8>)> = Vec::new();
    for (i, p) in chunker.split(input.rest()).into_iter().take(6).enumerate() {
        let more = chunker.use_buffer(i);
        a.engine.send_message(more, p);
        sent.push((more, p.to_vec()));
    }
    a.engine.send_ping(7, b"ctx");
    let mut rewrite = |s: Vec<u8>| rw.rewrite(s);
    let (_, eb) = pump(&mut a, &mut b, &mut no_zap, &mut no_zap, &mut rewrite);
    let mut it = sent.iter();
    let mut delivered = 0;
    for ev in &eb {
        if let Event::Message { more, body } = ev {
            delivered += 1;
            assert!(
                it.any(|(m, s)| m == more && &s[..] == &body[..]),
                "delivered a message that was never sent, or out of order"
            );
        }
    }
    if !rw.hit && b.ready.is_some() && max.is_none() {
        assert_eq!(delivered, sent.len(), "an untouched message was lost");
        assert!(eb.iter().any(|ev| matches!(ev, Event::Ping { .. })));
    }
}
