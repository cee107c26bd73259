//! The per-connection ZMTP state machine: greeting, NULL handshake, traffic.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::command;
use crate::curve::CurveCodec;
use crate::error::ProtocolError;
use crate::frame::{self, Limits, MAX_HEADER_LEN};
use crate::greeting::{self, PeerGreeting, GREETING_LEN};
use crate::input::{InputBuffer, DIRECT_MIN};
use crate::mechanism::{Handshake, MechanismConfig, Progress, ZapRequest, ZapVerdict};
use crate::socket_type::SocketType;

/// Command frames may always be at least this large, whatever
/// [`EngineConfig::max_msg_size`] says, so a small message limit cannot make
/// the peer's READY unacceptable.
pub(crate) const MIN_COMMAND_LIMIT: u64 = 64 * 1024;

/// Static configuration of one connection.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Our socket type, announced as `Socket-Type` and checked against the
    /// peer's.
    pub socket_type: SocketType,
    /// Sent as the `Identity` property in READY (sent for every socket type;
    /// may be empty).
    pub routing_id: Bytes,
    /// The security mechanism and our role in it; the peer must announce
    /// the same mechanism.
    pub mechanism: MechanismConfig,
    /// NULL only: ask ZAP ([`Event::ZapRequest`]) before sending READY, as
    /// libzmq does when `ZMQ_ZAP_DOMAIN` is set.
    pub null_zap: bool,
    /// Message frames larger than this are a protocol error
    /// (`ZMQ_MAXMSGSIZE`); `None` means unlimited, which still refuses bodies
    /// above `isize::MAX` bytes. Command frames are limited to
    /// `max(max_msg_size, 64 KiB)` so a small
    /// limit cannot make the peer's READY unacceptable.
    pub max_msg_size: Option<u64>,
}

/// What the handshake learned about the peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerInfo {
    /// The peer's `Socket-Type`, already checked compatible with ours.
    pub socket_type: SocketType,
    /// The `Identity` property if present and non-empty.
    pub routing_id: Option<Bytes>,
    /// All READY properties in the order sent, names as sent.
    pub properties: Vec<(String, Bytes)>,
    /// The negotiated ZMTP minor version: 0 for a ZMTP 3.0 (or 2.0) peer, 1
    /// for a peer announcing 3.1 or any later version.
    pub minor_version: u8,
    /// The User-Id a ZAP handler assigned, if any and non-empty.
    pub user_id: Option<Bytes>,
    /// 3 for a ZMTP 3.x (or later) peer; 2 for a ZMTP 2.0 peer (RFC 15: its socket type came in the
    /// greeting, its routing id as the first frame; it has no metadata, no commands, so
    /// no heartbeats, and takes subscriptions as messages).
    pub major_version: u8,
    /// Properties a ZAP handler attached to the peer.
    pub zap_properties: Vec<(String, Bytes)>,
}

impl PeerInfo {
    /// True for a ZMTP 2.0 peer (RFC 15).
    pub fn is_zmtp2(&self) -> bool {
        self.major_version < 3
    }
}

/// Something the peer did, as decoded by [`Engine::poll_event`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Handshake complete. Emitted exactly once, before any other event.
    Ready(PeerInfo),
    /// One message frame; `more` is its MORE flag.
    Message {
        /// Whether further frames of the same message follow.
        more: bool,
        /// The frame body.
        body: Bytes,
    },
    /// A ZMTP 3.1 SUBSCRIBE command with its topic. (A 3.0 peer sends
    /// subscriptions as messages starting with byte 1; those arrive as
    /// [`Event::Message`].)
    Subscribe(Bytes),
    /// A ZMTP 3.1 CANCEL command with its topic (3.0: message starting with
    /// byte 0).
    Cancel(Bytes),
    /// A PING; the matching PONG has already been queued to the output.
    Ping {
        /// The peer's time-to-live hint, in deciseconds (0 = none).
        ttl: u16,
        /// The ping context (at most 16 bytes; longer ones are truncated).
        context: Bytes,
    },
    /// A PONG answering one of our PINGs.
    Pong {
        /// The context echoed from our PING.
        context: Bytes,
    },
    /// The handshake is paused until the caller passes the ZAP handler's
    /// decision to [`Engine::zap_reply`]. Only servers (and NULL with
    /// [`EngineConfig::null_zap`]) ask.
    ZapRequest(ZapRequest),
    /// The peer sent an ERROR command; the caller must close the connection.
    /// Afterwards the engine ignores all input.
    PeerError {
        /// The peer's reason text (lossily decoded).
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for the peer's 64-byte greeting (or a ZMTP 2.0 peer's 12 bytes).
    Greeting,
    /// A ZMTP 2.0 peer's greeting is done, our routing id frame queued: waiting for its
    /// routing id frame, which ends the handshake.
    Zmtp2RoutingId(SocketType),
    /// Greeting done, our READY queued, waiting for the peer's READY.
    Handshake,
    /// Handshake complete.
    Traffic,
    /// The peer sent ERROR; input is ignored.
    Closed,
    /// We detected a protocol error; input is ignored.
    Failed(ProtocolError),
}

/// One ZMTP connection, without I/O.
///
/// Bytes received from the peer go in through [`input_buffer`] +
/// [`input_filled`] (or [`feed`]); decoded events come out of [`poll_event`];
/// bytes for the peer accumulate in [`output`] until [`consume_output`].
///
/// [`input_buffer`]: Engine::input_buffer
/// [`input_filled`]: Engine::input_filled
/// [`feed`]: Engine::feed
/// [`poll_event`]: Engine::poll_event
/// [`output`]: Engine::output
/// [`consume_output`]: Engine::consume_output
#[derive(Debug)]
pub struct Engine {
    cfg: EngineConfig,
    state: State,
    input: InputBuffer,
    /// Bytes still missing for the greeting or frame being received.
    need: usize,
    out: BytesMut,
    peer_greeting: Option<PeerGreeting>,
    peer: Option<PeerInfo>,
    handshake: Handshake,
    /// Set once a CURVE handshake completes: every frame is boxed from then on.
    curve: Option<Box<CurveCodec>>,
    /// A ZAP decision is pending; input is held until it arrives.
    waiting_zap: bool,
    /// What ZAP said about the peer (user id, properties).
    zap_accepted: Option<(Bytes, Vec<(String, Bytes)>)>,
    /// An event produced outside `poll_event` (by `zap_reply`), returned next.
    pending: Option<Event>,
    /// (more, command) of the frame whose large body is being received directly.
    direct: Option<(bool, bool)>,
    /// Our major version (after the signature) is queued: the peer's signature is in.
    major_sent: bool,
    /// The greeting's last part (after [`greeting::PREFIX_LEN`] bytes) is queued.
    greeting_done: bool,
}

impl Engine {
    /// Creates the engine and queues the start of our greeting: the signature
    /// (0xFF, the routing id's length + 1 as 8 bytes, 0x7F). Major version 3
    /// follows once the peer's signature is in, and the rest (minor version 1,
    /// the mechanism name zero-padded to 20 bytes, as-server, 31 zero bytes)
    /// once the peer's major version is; a ZMTP 2.0 peer gets our socket type
    /// number instead. The same three writes as libzmq's.
    pub fn new(cfg: EngineConfig) -> Engine {
        let mut out = BytesMut::with_capacity(256);
        out.put_slice(&greeting::encode_prefix(cfg.routing_id.len())[..greeting::SIGNATURE_LEN]);
        let handshake = Handshake::new(&cfg.mechanism, cfg.null_zap);
        Engine {
            cfg,
            state: State::Greeting,
            input: InputBuffer::default(),
            need: GREETING_LEN,
            out,
            peer_greeting: None,
            peer: None,
            handshake,
            curve: None,
            waiting_zap: false,
            zap_accepted: None,
            pending: None,
            direct: None,
            major_sent: false,
            greeting_done: false,
        }
    }

    /// Returns spare input space for the caller to read into directly, then
    /// report with [`input_filled`]: at least `min` bytes of the receive
    /// buffer (which grows while reads keep filling it), or, while a large
    /// frame body (32 KiB or more) is being received, the rest of that body in
    /// its own allocation, ending exactly where the body ends (so it is never
    /// copied; the next call returns the receive buffer again).
    ///
    /// [`input_filled`]: Engine::input_filled
    pub fn input_buffer(&mut self, min: usize) -> &mut [u8] {
        let hint = if self.is_dead() { 0 } else { self.need };
        self.input.spare(min, hint)
    }

    /// Bytes still to come of a large frame body being received directly (see
    /// [`input_buffer`](Engine::input_buffer)); None when no such body is in progress.
    pub fn body_missing(&self) -> Option<usize> {
        self.direct?;
        self.input.body_missing().filter(|&n| n > 0)
    }

    /// While a large frame body is being received directly (see
    /// [`input_buffer`](Engine::input_buffer)): lets `read` append the next bytes to the
    /// body's own allocation, given as a vector and the most bytes it may append, so a
    /// caller reading from a socket can read into its spare capacity without the zeroing
    /// a `&mut [u8]` needs. Then call [`poll_event`](Engine::poll_event) as after
    /// [`input_filled`](Engine::input_filled). Returns None (and does not call `read`)
    /// when no such body is in progress: use `input_buffer` then.
    ///
    /// # Panics
    /// If `read` appends more than allowed or removes bytes already there.
    pub fn read_body_with<R>(&mut self, read: impl FnOnce(&mut Vec<u8>, usize) -> R) -> Option<R> {
        if self.is_dead() {
            return None;
        }
        self.input.read_body_with(read)
    }

    /// Marks the first `n` bytes of the slice last returned by
    /// [`input_buffer`](Engine::input_buffer) as received. Once the
    /// engine has failed or the peer sent ERROR, input is discarded.
    ///
    /// # Panics
    /// If `n` exceeds the length of that slice.
    pub fn input_filled(&mut self, n: usize) {
        self.input.commit(n);
        if self.is_dead() {
            self.input.release();
        }
    }

    /// Copies `data` into the input; equivalent to `input_buffer` + copy +
    /// `input_filled`.
    pub fn feed(&mut self, data: &[u8]) {
        if !self.is_dead() {
            self.input.extend(data);
        }
    }

    /// Parses buffered input and returns the next event, or `Ok(None)` when
    /// more input is needed.
    ///
    /// The greeting and the peer's READY are consumed internally; our READY is
    /// queued to the output as soon as the peer's greeting is validated.
    /// Unknown commands after the handshake are ignored (forward
    /// compatibility). Message bodies are zero-copy slices of the input buffer
    /// (copy small ones you keep for long, or they pin it).
    ///
    /// After an `Err` the engine is dead: every further call returns the same
    /// error again and input is discarded. After [`Event::PeerError`] every
    /// further call returns `Ok(None)`.
    pub fn poll_event(&mut self) -> Result<Option<Event>, ProtocolError> {
        if let State::Failed(e) = &self.state {
            return Err(e.clone());
        }
        let result = self.step();
        if let Err(e) = &result {
            self.state = State::Failed(e.clone());
            self.input.release();
        }
        result
    }

    fn step(&mut self) -> Result<Option<Event>, ProtocolError> {
        if let Some(event) = self.pending.take() {
            return Ok(Some(event));
        }
        loop {
            match self.state {
                State::Closed | State::Failed(_) => return Ok(None),
                State::Greeting => {
                    if !self.read_greeting()? {
                        return Ok(None);
                    }
                    if let Some(event) = self.pending.take() {
                        return Ok(Some(event));
                    }
                }
                State::Zmtp2RoutingId(socket_type) => {
                    // RFC 15: a 2.0 peer's routing id is one short frame.
                    let short = Limits {
                        message: 255,
                        command: 255,
                    };
                    let Some((_, is_command, body)) = self.read_frame(short)? else {
                        return Ok(None);
                    };
                    if is_command {
                        return Err(unexpected(b""));
                    }
                    return Ok(Some(self.zmtp2_ready(socket_type, body)));
                }
                State::Handshake if self.waiting_zap => return Ok(None),
                State::Handshake | State::Traffic => {
                    let Some((more, is_command, body)) = self.read_frame(self.limits())? else {
                        return Ok(None);
                    };
                    let event = if let Some(codec) = self.curve.as_mut() {
                        let (more, is_command, body) = codec.read(&body)?;
                        if is_command {
                            self.on_command(body)?
                        } else {
                            // The outer frame's limit was a command's if the peer flagged
                            // it as one: hold the message to its own limit here.
                            let size = body.len() as u64;
                            match self.cfg.max_msg_size {
                                Some(max) if size > max => {
                                    return Err(ProtocolError::FrameTooLarge { size, max })
                                }
                                _ => Some(Event::Message { more, body }),
                            }
                        }
                    } else if is_command {
                        self.on_command(body)?
                    } else if self.state == State::Handshake {
                        return Err(ProtocolError::MessageBeforeReady);
                    } else {
                        Some(Event::Message { more, body })
                    };
                    if event.is_some() {
                        return Ok(event);
                    }
                }
            }
        }
    }

    /// Our READY/INITIATE metadata: Socket-Type, and Identity from the socket types that
    /// have routing ids to announce (REQ, DEALER, ROUTER: RFC 23, and what libzmq sends).
    fn our_metadata(&self) -> Vec<u8> {
        let socket_type = ("Socket-Type", self.cfg.socket_type.name().as_bytes());
        match self.cfg.socket_type {
            SocketType::Req | SocketType::Dealer | SocketType::Router => {
                command::encode_metadata(&[socket_type, ("Identity", &self.cfg.routing_id)])
            }
            _ => command::encode_metadata(&[socket_type]),
        }
    }

    /// Turns handshake progress into the event to report, if any.
    fn progress(&mut self, p: Progress) -> Result<Option<Event>, ProtocolError> {
        match p {
            Progress::Continue => Ok(None),
            Progress::Zap(request) => {
                self.waiting_zap = true;
                Ok(Some(Event::ZapRequest(request)))
            }
            Progress::Done(meta, codec) => {
                let mut info = self.accept_ready(&meta)?;
                if let Some((user_id, props)) = self.zap_accepted.take() {
                    info.user_id = Some(user_id).filter(|u| !u.is_empty());
                    info.zap_properties = props;
                }
                self.curve = codec;
                self.peer = Some(info.clone());
                self.state = State::Traffic;
                if self.input.is_empty() {
                    // Most connections idle after the handshake: hold no receive buffer
                    // until traffic comes.
                    self.input.release();
                }
                Ok(Some(Event::Ready(info)))
            }
        }
    }

    /// Gives the engine the ZAP handler's decision on the request it
    /// reported as [`Event::ZapRequest`]. On acceptance the handshake goes
    /// on (call [`poll_event`](Engine::poll_event) next: the READY event may
    /// already be due); on rejection the engine fails with
    /// [`ProtocolError::AuthFailed`], after queuing an ERROR for status 400/500.
    /// Ignored when no decision is pending.
    pub fn zap_reply(&mut self, verdict: ZapVerdict) {
        if !self.waiting_zap || self.is_dead() {
            return;
        }
        self.waiting_zap = false;
        match verdict {
            ZapVerdict::Accept {
                user_id,
                properties,
            } => {
                self.zap_accepted = Some((user_id, properties));
                let meta = self.our_metadata();
                let result = self
                    .handshake
                    .zap_accepted(&meta, &mut self.out)
                    .and_then(|p| self.progress(p));
                match result {
                    Ok(event) => self.pending = event,
                    Err(e) => self.fail(e),
                }
            }
            ZapVerdict::Reject { status } => {
                if status != 300 {
                    let reason = status.to_string();
                    if self.cfg.mechanism == MechanismConfig::PlainServer {
                        command::write_libzmq_plain_error(&mut self.out, &reason);
                    } else {
                        command::write_error(&mut self.out, &reason);
                    }
                }
                self.fail(ProtocolError::AuthFailed { status });
            }
        }
    }

    fn fail(&mut self, e: ProtocolError) {
        self.state = State::Failed(e);
        self.input.release();
    }

    /// Appends a command, boxed once CURVE traffic has started.
    fn write_command(&mut self, name: &[u8], parts: &[&[u8]]) {
        match self.curve.as_mut() {
            Some(codec) => {
                let mut all: Vec<&[u8]> = Vec::with_capacity(parts.len() + 2);
                let len = [name.len() as u8];
                all.push(&len);
                all.push(name);
                all.extend_from_slice(parts);
                codec.write(&mut self.out, false, true, &all);
            }
            None => command::write_command(&mut self.out, name, parts),
        }
    }

    fn read_greeting(&mut self) -> Result<bool, ProtocolError> {
        let got = self.input.data().len();
        let peer_major = greeting::peer_major(self.input.data())?;
        if !self.major_sent && got >= greeting::SIGNATURE_LEN {
            self.out.put_u8(greeting::OUR_MAJOR);
            self.major_sent = true;
        }
        let Some(major) = peer_major else {
            self.need = greeting::PREFIX_LEN - got;
            return Ok(false);
        };
        if major == greeting::ZMTP2_REVISION {
            return self.read_zmtp2_greeting();
        }
        if !self.greeting_done && major >= greeting::OUR_MAJOR {
            let full =
                greeting::encode(&self.cfg.mechanism.field(), self.cfg.mechanism.is_server());
            self.out.put_slice(&full[greeting::PREFIX_LEN..]);
            self.greeting_done = true;
        }
        let data = self.input.data();
        let Some(peer) = greeting::parse(data)? else {
            self.need = GREETING_LEN - data.len();
            return Ok(false);
        };
        let ours = self.cfg.mechanism.field();
        if peer.mechanism != ours {
            return Err(ProtocolError::MechanismMismatch {
                ours: greeting::mechanism_name(&ours),
                peer: greeting::mechanism_name(&peer.mechanism),
            });
        }
        self.input.consume(GREETING_LEN);
        self.peer_greeting = Some(peer);
        self.state = State::Handshake;
        let meta = self.our_metadata();
        let p = self.handshake.start(&meta, &mut self.out);
        self.pending = self.progress(p)?;
        Ok(true)
    }

    fn limits(&self) -> Limits {
        let cap = isize::MAX as u64;
        // A CURVE MESSAGE adds its name, nonce, tag and flags to the frame.
        let overhead = if self.curve.is_some() { 33 } else { 0 };
        let message = self
            .cfg
            .max_msg_size
            .map_or(cap, |m| m.saturating_add(overhead).min(cap));
        Limits {
            message,
            command: message.max(MIN_COMMAND_LIMIT),
        }
    }

    /// Returns the next complete frame as (more, command, body), refusing bodies above
    /// `limits` from the header alone.
    fn read_frame(&mut self, limits: Limits) -> Result<Option<(bool, bool, Bytes)>, ProtocolError> {
        if let Some((more, command)) = self.direct {
            let Some(body) = self.input.finish_body() else {
                self.need = self.input.body_missing().unwrap_or(0);
                return Ok(None);
            };
            self.direct = None;
            self.need = 0;
            return Ok(Some((more, command, body)));
        }
        let data = self.input.data();
        let Some(h) = frame::decode_header(data, limits)? else {
            self.need = MAX_HEADER_LEN.saturating_sub(data.len());
            return Ok(None);
        };
        let total = h.header_len + h.body_len;
        if data.len() < total {
            if h.body_len >= DIRECT_MIN {
                // Receive the rest straight into the body's own allocation.
                self.input.begin_body(h.header_len, h.body_len);
                self.direct = Some((h.more, h.command));
                self.need = self.input.body_missing().unwrap_or(0);
            } else {
                self.need = total - data.len();
            }
            return Ok(None);
        }
        self.need = 0;
        let body = self.input.take(h.header_len, h.body_len);
        Ok(Some((h.more, h.command, body)))
    }

    /// Hands every complete message frame at the head of the input whose body is at most
    /// `max_body` bytes to `sink` as `(more, body)`, without copying it out of the receive
    /// buffer; stops at anything else (a command, a larger or incomplete frame, a pending
    /// event), which [`poll_event`](Engine::poll_event) then returns as usual. Only in the
    /// traffic phase of an unencrypted connection (otherwise it takes nothing). Returns how
    /// many frames it took.
    ///
    /// This is the receive fast path: a consumer that copies small bodies into storage of
    /// its own anyway saves an allocation (or reference count) per frame.
    pub fn take_messages(
        &mut self,
        max_body: usize,
        sink: &mut dyn FnMut(bool, &[u8]),
    ) -> Result<usize, ProtocolError> {
        if self.state != State::Traffic
            || self.curve.is_some()
            || self.pending.is_some()
            || self.direct.is_some()
        {
            return Ok(0);
        }
        let limits = self.limits();
        let mut taken = 0;
        loop {
            let data = self.input.data();
            let h = match frame::decode_header(data, limits) {
                Ok(Some(h)) => h,
                // Incomplete, or an error poll_event will report.
                _ => break,
            };
            let total = h.header_len + h.body_len;
            if h.command || h.body_len > max_body || data.len() < total {
                break;
            }
            sink(h.more, &data[h.header_len..total]);
            self.input.consume(total);
            taken += 1;
        }
        Ok(taken)
    }

    fn on_command(&mut self, body: Bytes) -> Result<Option<Event>, ProtocolError> {
        if body.starts_with(command::LIBZMQ_PLAIN_ERROR) {
            let data = body.slice(command::LIBZMQ_PLAIN_ERROR.len()..);
            return self.peer_error(&data);
        }
        let handshake = self.state == State::Handshake;
        let (name, data) = match command::split(&body) {
            Ok(split) => split,
            // libzmq looks for the commands it expects by their first bytes: during the
            // handshake anything else, even a name that overruns the body, is unexpected.
            Err(_) if handshake => return Err(unexpected(b"")),
            Err(e) => return Err(e),
        };
        match name {
            command::ERROR => self.peer_error(&data),
            _ if handshake => {
                let meta = self.our_metadata();
                let p = self
                    .handshake
                    .on_command(name, &body, data, &meta, &mut self.out)?;
                self.progress(p)
            }
            command::READY => Err(unexpected(name)),
            command::PING => {
                let (ttl, context) = command::parse_ping(&data)?;
                self.write_command(command::PONG, &[&context]);
                Ok(Some(Event::Ping { ttl, context }))
            }
            command::PONG => Ok(Some(Event::Pong { context: data })),
            command::SUBSCRIBE => Ok(Some(Event::Subscribe(data))),
            command::CANCEL => Ok(Some(Event::Cancel(data))),
            _ => Ok(None),
        }
    }

    fn peer_error(&mut self, data: &[u8]) -> Result<Option<Event>, ProtocolError> {
        let reason = command::parse_error_reason(data)?;
        self.state = State::Closed;
        self.input.release();
        Ok(Some(Event::PeerError { reason }))
    }

    fn accept_ready(&self, data: &Bytes) -> Result<PeerInfo, ProtocolError> {
        let properties = command::parse_metadata(data)?;
        let find = |key: &str| {
            properties
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(key))
                .map(|(_, value)| value)
        };
        let type_name = find("Socket-Type").ok_or(ProtocolError::MissingSocketType)?;
        let socket_type = SocketType::from_name(type_name).ok_or_else(|| {
            ProtocolError::UnknownSocketType(String::from_utf8_lossy(type_name).into_owned())
        })?;
        if !self.cfg.socket_type.is_compatible(socket_type) {
            return Err(ProtocolError::IncompatibleSocketType {
                ours: self.cfg.socket_type,
                peer: socket_type,
            });
        }
        let routing_id = find("Identity").filter(|v| !v.is_empty()).cloned();
        let minor_version = self
            .peer_greeting
            .as_ref()
            .map_or(0, PeerGreeting::negotiated_minor);
        Ok(PeerInfo {
            socket_type,
            routing_id,
            properties,
            minor_version,
            user_id: None,
            zap_properties: Vec::new(),
            major_version: 3,
        })
    }

    fn is_dead(&self) -> bool {
        matches!(self.state, State::Closed | State::Failed(_))
    }

    /// Returns whether the handshake has completed (the [`Event::Ready`] has
    /// been returned). Stays true after a later error.
    pub fn is_ready(&self) -> bool {
        self.peer.is_some()
    }

    /// Returns what the handshake learned about the peer, once ready.
    pub fn peer(&self) -> Option<&PeerInfo> {
        self.peer.as_ref()
    }

    /// Queues one message frame (short header if `body.len() <= 255`, long
    /// otherwise); `more` sets the MORE flag. Must only be called once
    /// [`is_ready`](Engine::is_ready) (debug assertion).
    pub fn send_message(&mut self, more: bool, body: &[u8]) {
        debug_assert!(self.is_ready(), "send_message before the handshake");
        if let Some(codec) = self.curve.as_mut() {
            codec.write(&mut self.out, more, false, &[body]);
            return;
        }
        let (header, n) = frame::encode_header(more, false, body.len());
        self.out.reserve(n + body.len());
        self.out.put_slice(&header[..n]);
        self.out.put_slice(body);
    }

    /// Returns the header of a message frame of `len` bytes: the buffer and
    /// how many of its bytes are used (2 for `len <= 255`, else 9). Nothing is
    /// queued; a caller writing a large body itself (e.g. with `writev`) must
    /// first flush [`output`](Engine::output) to keep the stream ordered, and
    /// must not do so when [`is_encrypted`](Engine::is_encrypted).
    pub fn frame_header(more: bool, len: usize) -> ([u8; 9], usize) {
        frame::encode_header(more, false, len)
    }

    /// Whether the peer gets ZMTP 3.1 SUBSCRIBE/CANCEL commands rather than
    /// 3.0 subscription messages.
    fn peer_speaks_31(&self) -> bool {
        self.peer_greeting
            .as_ref()
            .is_some_and(|g| g.negotiated_minor() >= 1)
    }

    fn send_subscription(&mut self, name: &[u8], flag: u8, topic: &[u8]) {
        debug_assert!(self.is_ready(), "subscription before the handshake");
        if self.peer_speaks_31() {
            self.write_command(name, &[topic]);
        } else if let Some(codec) = self.curve.as_mut() {
            codec.write(&mut self.out, false, false, &[&[flag], topic]);
        } else {
            let (header, n) = frame::encode_header(false, false, 1 + topic.len());
            self.out.reserve(n + 1 + topic.len());
            self.out.put_slice(&header[..n]);
            self.out.put_u8(flag);
            self.out.put_slice(topic);
        }
    }

    /// Queues a subscription to `topic`: a SUBSCRIBE command for a ZMTP 3.1
    /// peer, or for a 3.0 peer a single-frame message `[1, topic...]`. Must
    /// only be called once ready (debug assertion).
    pub fn send_subscribe(&mut self, topic: &[u8]) {
        self.send_subscription(command::SUBSCRIBE, 1, topic);
    }

    /// Queues a cancellation of `topic`: a CANCEL command for a ZMTP 3.1
    /// peer, or for a 3.0 peer a single-frame message `[0, topic...]`. Must
    /// only be called once ready (debug assertion).
    pub fn send_cancel(&mut self, topic: &[u8]) {
        self.send_subscription(command::CANCEL, 0, topic);
    }

    /// Queues a PING with a TTL hint in deciseconds (0 = none) and a context
    /// the peer echoes in its PONG. The context is limited to 16 bytes (debug
    /// assertion; truncated in release builds). Must only be called once ready
    /// (debug assertion). Sent whatever the peer's version; ZMTP 3.0 peers may
    /// not understand it.
    pub fn send_ping(&mut self, ttl_deciseconds: u16, context: &[u8]) {
        debug_assert!(self.is_ready(), "send_ping before the handshake");
        debug_assert!(context.len() <= command::MAX_PING_CONTEXT);
        let context = &context[..context.len().min(command::MAX_PING_CONTEXT)];
        self.write_command(command::PING, &[&ttl_deciseconds.to_be_bytes(), context]);
    }

    /// Queues an ERROR command with `reason` (truncated to 255 bytes at a
    /// character boundary). The caller should flush the output and then close
    /// the connection. Meant for after the greeting: before the peer's major
    /// version has arrived only the start of ours is out, and a peer reads the
    /// ERROR as the rest of it.
    pub fn send_error(&mut self, reason: &str) {
        if self.curve.is_some() {
            let mut end = reason.len().min(255);
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            self.write_command(command::ERROR, &[&[end as u8], &reason.as_bytes()[..end]]);
        } else {
            command::write_error(&mut self.out, reason);
        }
    }

    /// Whether traffic is boxed (a CURVE handshake completed): frames can then
    /// only be queued through the engine, never written around it.
    pub fn is_encrypted(&self) -> bool {
        self.curve.is_some()
    }

    /// Returns the bytes waiting to be written to the peer.
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// Removes the first `n` bytes of [`output`](Engine::output), which the
    /// caller has written.
    ///
    /// # Panics
    /// If `n` exceeds the output length.
    pub fn consume_output(&mut self, n: usize) {
        assert!(n <= self.out.len(), "consume_output({n}) beyond output");
        self.out.advance(n);
    }

    /// Takes all bytes waiting to be written, as one piece (no copy), for a caller that
    /// writes something of its own after them (a large body in place, see
    /// [`frame_header`](Engine::frame_header)).
    pub fn take_output(&mut self) -> Bytes {
        self.out.split().freeze()
    }

    /// Makes room for `n` bytes of output, and returns the room there is: for a caller
    /// about to encode a large batch. An empty buffer whose allocation is too small is
    /// replaced by one of exactly `n` bytes (grown step by step, it would leave each
    /// smaller allocation behind in the allocator, resident); a large enough one is reused
    /// from its start. With output pending it reserves as `BytesMut` does.
    pub fn reserve_output(&mut self, n: usize) -> usize {
        if self.out.is_empty() && !self.out.try_reclaim(n) {
            self.out = BytesMut::with_capacity(n);
        } else {
            self.out.reserve(n);
        }
        self.out.capacity()
    }

    /// Bytes the output buffer takes from its current start without growing (for the
    /// tests of `shrink_output`; the core tracks what it reserved itself).
    #[cfg(test)]
    pub(crate) fn output_capacity(&self) -> usize {
        self.out.capacity()
    }

    /// Moves the pending output into a buffer with room for only `spare` more bytes and
    /// lets go of the old one (freed once no output taken with `take_output` still shares
    /// it): for a caller whose peer stopped taking bytes, so that a large batch's buffer is
    /// not held for as long as the peer stalls.
    pub fn shrink_output(&mut self, spare: usize) {
        let mut smaller = BytesMut::with_capacity(self.out.len() + spare);
        smaller.extend_from_slice(&self.out);
        self.out = smaller;
    }

    /// Returns whether any bytes are waiting to be written.
    pub fn has_output(&self) -> bool {
        !self.out.is_empty()
    }
}

fn unexpected(name: &[u8]) -> ProtocolError {
    ProtocolError::UnexpectedCommand {
        command: String::from_utf8_lossy(name).into_owned(),
    }
}

#[path = "zmtp2.rs"]
mod zmtp2;

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
