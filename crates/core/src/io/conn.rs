//! One tcp/ipc connection in the I/O thread: moves bytes between the stream and its ZMTP
//! engine, and messages between the engine and the socket's pipe, in batches (one read or
//! write syscall for as many frames as fit, one pipe lock per batch).

use super::assist::ConnHandle;
use super::codec::Codec;
use super::reactor::{ReactorShared, Timer};
use super::stream::Stream;
use super::tail_hold::{HeldTailDue, TailHold, HOLD_FLUSH_AFTER};
use super::writeq::{WriteQueue, IN_PLACE_MIN};
use crate::monitor::event;
use crate::msg::{Metadata, Msg};
use crate::options::mechanism;
use crate::options::Options;
use crate::pattern::{cancel_msg, subscribe_msg, PeerMeta};
use crate::pipe::{Pipe, Waker};
use crate::socket::SocketShared;
use crate::transport::socks::SocksClient;
use crate::transport::{ipc, tcp};
use crate::zap::{RequestInfo, ZapClient};
use ferromq_zmtp::{
    Bytes, Engine, EngineConfig, Event, PeerInfo, ProtocolError, SocketType, ZapRequest, ZapVerdict,
};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Most bytes of messages taken from the pipe for one write.
const WRITE_BATCH: usize = 256 * 1024;
/// The same over a Unix socket for messages copied into the engine's output buffer
/// (under `IN_PLACE_MIN`): its send buffer (~208 KiB by default) never takes a full
/// `WRITE_BATCH`, so every batch ended in a short write and a wait for room; PUSH/PULL
/// ipc 256 B-1 KiB ran 20-40 % faster with 128 KiB. Bodies written in place keep
/// `WRITE_BATCH` (their 64 KiB+ cells did not move), and so does tcp, whose send buffer
/// grows with the stream (1 KiB there was a few percent slower with 128 KiB).
const UNIX_COPY_BATCH: usize = 128 * 1024;

/// Bytes of messages a write batch takes before it asks the kernel how much room the
/// socket has (`Stream::send_room`) and takes no more than that. Without the bound, a
/// PUB whose subscriber stopped reading held a whole encoded 256 KiB batch the kernel
/// never took (on top of its HWM's messages; libzmq's encoder takes 8 KiB at a time):
/// PUB RSS 1,556-1,840 KiB at 1 KiB messages against libzmq's 1,340-1,440.
const ROOM_PROBE_BATCH: usize = 16 * 1024;

/// Output buffer capacity a connection keeps while its peer takes no bytes (see
/// `Conn::release_output`).
const SPARE_OUTPUT_MAX: usize = 128 * 1024;
/// How long a write may find the kernel full, with no write taken since, before a large
/// output buffer is given up.
const RELEASE_OUTPUT_AFTER: Duration = Duration::from_millis(20);

/// Messages under this size make a stream the I/O thread leaves to its receiving thread
/// (`Conn::defer_read`). In the C perf pair over tcp that was +45 % at 64 B (median of 14
/// runs, and no run in the slow mode) but -4 % at 1500 B and -7 % at 64 KiB.
const DEFER_MSG_MAX: usize = 256;

/// Input left to the receiving thread is read by the I/O thread after this long if the
/// receiver did not take it (the reactor's poll has millisecond resolution).
const READ_DEFER_FALLBACK: Duration = Duration::from_millis(1);

/// A claim left in place after its thread's wait (`Conn::release_claim`) goes back to the
/// poller once unheld for this long. What arrives meanwhile waits in the kernel for that
/// thread (PINGs too: well under any heartbeat timeout); a thread that waits another way
/// ends its claims at once (`end_idle_claim`). Not shorter: arming the timer wakes the I/O
/// thread, and a REP server answering a request every few ms would wake it twice per
/// request with 1 ms.
const CLAIM_IDLE: Duration = Duration::from_millis(20);

/// A claim is left in place only for a thread that came back for it within this long of
/// releasing the one before (a receive loop: microseconds) and then waited less than
/// `CLAIM_HELD_MAX` (messages streaming in). Any other thread gives its claims back at
/// once, as before (a server doing work between requests; a subscriber whose ticks are
/// far apart; a receive that timed out): leaving them would cost the I/O thread a wake-up
/// to arm the timer and another when it fires, per message.
const CLAIM_REUSE_GAP: Duration = Duration::from_micros(100);
const CLAIM_HELD_MAX: Duration = Duration::from_millis(1);

/// What the reactor's poller watches on this connection's descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Watch {
    /// Readability and writability: while connecting, and while output waits for room.
    ReadWrite,
    /// Readability only, the normal state (a writable socket would wake the reactor for
    /// nothing).
    Read,
    /// Nothing: an application thread waiting for input reads it itself (`claim`), so
    /// arriving data does not also wake the reactor.
    Claimed,
}

/// Why a connection ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Close {
    /// Our side closes it (unbind, disconnect, socket close, linger done): no reconnect.
    Shutdown,
    /// A STREAM socket closed it with an empty frame: no reconnect either, and a
    /// connect's pipe goes with it (libzmq's raw session ends with its pipe).
    StreamClosed,
    /// The peer closed or the stream failed.
    Disconnected,
    /// A non-blocking connect failed.
    ConnectFailed,
    /// A non-blocking connect was refused (ECONNREFUSED: nobody listens there), which
    /// ZMQ_RECONNECT_STOP can make the last attempt.
    ConnectRefused,
    /// Handshake or heartbeat timed out.
    Timeout,
    /// The peer broke the protocol (libzmq's ZMQ_PROTOCOL_ERROR_* code).
    Protocol(u32),
    /// The peer ended the handshake in a way libzmq reports as a bare disconnect (an
    /// ERROR command, an incompatible socket type).
    Refused,
    /// Authentication failed with this ZAP status code (ours, or the peer's ERROR).
    Auth(u16),
    /// The handshake could not go on for a local reason (an errno), e.g. PLAIN with no
    /// ZAP handler to ask.
    NoDetail(i32),
}

pub(super) struct Conn {
    /// The reactor's key for this connection, and how to reach the reactor.
    token: usize,
    shared: Arc<ReactorShared>,
    /// Timers this connection asked for; the reactor moves them into its own list after
    /// every call (and is scheduled to do so after an application thread's call).
    pub(super) timers: Vec<(Instant, Timer)>,
    /// Why an application thread's I/O found the connection over: reported to the reactor
    /// (which closes it) at its next look, since only it may close connections.
    deferred_close: Option<Close>,
    /// Closed by the reactor: application threads holding the handle must not touch it.
    dead: bool,
    /// This connection's own handle (for the wakers of its pipes).
    pub(super) handle: Weak<ConnHandle>,
    /// What the poller watches (the reactor registers new connections read-write).
    watch: Watch,
    pub(super) stream: Stream,
    pub(super) socket: Arc<SocketShared>,
    pub(super) connector: Option<usize>,
    pub(super) listener: Option<usize>,
    opts: Options,
    endpoint: String,
    engine: Codec,
    /// I/O end of the socket's pipe: `inq` holds what the socket sends, `out` what it gets.
    pipe: Option<Arc<Pipe>>,
    /// The socket-side pipe id (for detach / activation).
    sock_pipe: Option<u64>,
    /// The pipe outlives this connection (made by connect, reused after reconnect).
    persistent_pipe: bool,
    connecting: bool,
    handshaked: bool,
    read_paused: bool,
    lingering: bool,
    meta: Option<Arc<Metadata>>,
    in_batch: Vec<Msg>,
    out_batch: Vec<Msg>,
    /// The last message taken for writing was written in place (see `UNIX_COPY_BATCH`).
    in_place_last: bool,
    /// The last frame taken for writing had more frames after it.
    out_mid_message: bool,
    /// An application thread's ipc flush skipped the look for a closed peer
    /// (`flush_inline`): until something is written, the batch taken is given back to
    /// the queue if the peer turns out gone.
    peer_unchecked: bool,
    /// The most output buffer a bulk batch reserved since the buffer was last shrunk (the
    /// buffer's own capacity shrinks as written bytes are consumed from its front).
    output_reserved: usize,
    /// Successful writes so far (to tell a stalled peer from one that only lags).
    writes: u64,
    /// A `Timer::ReleaseOutput` is pending, armed when `writes` had this value.
    release_armed: Option<u64>,
    /// An ipc connection's send buffer was raised for large messages (`ipc::IPC_LARGE`).
    send_buffer_raised: bool,
    /// Large bodies written in place, and what the engine encoded before them.
    writeq: WriteQueue,
    /// Bytes past the last whole tcp segment held back for the next write (`tail_hold`).
    tail: TailHold,
    last_recv: Instant,
    /// When the last PING with a HEARTBEAT_TIMEOUT running went out (None: none yet).
    ping_sent: Option<Instant>,
    peer_ttl: Option<Duration>,
    /// A ZAP request waiting for the handler's reply.
    zap: Option<ZapClient>,
    /// errno of the failed read that ended the connection (EPIPE for an orderly close),
    /// reported with HANDSHAKE_FAILED_NO_DETAIL as libzmq does.
    read_errno: i32,
    /// The poller reported the peer's FIN: read to EOF.
    fin_seen: bool,
    /// STREAM: the application sent an empty frame to close this connection; it closes
    /// once what was encoded before it is written.
    close_asked: bool,
    /// The thread that claimed the connection is doing its I/O (`pull_inline`): output
    /// that finds no room stays with it rather than going back to the poller.
    claimer_io: bool,
    /// The claim is held: an application thread is inside a wait that polls the
    /// descriptor. A claim not held stays in place after such a wait (`release_claim`).
    claim_held: bool,
    /// When the last holder let go of its claim.
    claim_left: Instant,
    /// The last claim came within `CLAIM_REUSE_GAP` of the release before it.
    claim_quick: bool,
    /// When the claim was last taken (or taken over).
    claim_since: Instant,
    /// A `Timer::ClaimIdle` is pending.
    claim_timer: bool,
    /// A `read(once)` stopped after a batch that filled its buffer: more may be waiting
    /// (the poller is edge-triggered and will not say so again).
    input_left: bool,
    /// The last batch the I/O thread decoded was of small messages and found the receiving
    /// thread busy (not waiting for it): the next input may be left to that thread.
    leave_to_reader: bool,
    /// The running read is an application thread's (`pull_inline`).
    in_pull: bool,
    /// The I/O thread left input to the receiving thread (see `defer_read`) at this time,
    /// and the receiving thread has not read the connection since.
    read_deferred: Option<Instant>,
    /// Reads that took bytes so far (to tell a fallback read that found input from one
    /// that found the kernel empty).
    reads: u64,
    /// Reads that took bytes made by the I/O thread while an application thread had
    /// the connection claimed (for tests: who reads a connection is not otherwise
    /// visible).
    claimed_io_reads: u64,
    /// Reads by the I/O thread that returned bytes, claimed or not (for tests).
    io_reads: u64,
    /// A `Timer::ReadDeferred` is pending.
    deferred_timer: bool,
    /// The last `ready` left input to the receiving thread.
    just_deferred: bool,
    /// The receiving thread left deferred input unread for `READ_DEFER_FALLBACK`: the I/O
    /// thread reads as usual until then (or until that thread reads the connection itself),
    /// and then tries leaving input to it again.
    reader_away: Option<Instant>,
    /// A connect through a SOCKS5 proxy (`ZMQ_SOCKS_PROXY`): the exchange with the proxy,
    /// held while `connecting` until the proxy has connected us to the destination.
    /// (Boxed: every connection carries the field, few ever use it.)
    socks: Option<Box<SocksClient>>,
}

impl Conn {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        shared: Arc<ReactorShared>,
        token: usize,
        stream: Stream,
        socket: Arc<SocketShared>,
        opts: Options,
        endpoint: String,
        connector: Option<usize>,
        listener: Option<usize>,
        pipe: Option<(Arc<Pipe>, u64)>,
        connecting: bool,
    ) -> Conn {
        let engine = if socket.kind == SocketType::Stream || opts.raw_socket {
            Codec::raw()
        } else {
            Codec::Zmtp(Box::new(Engine::new(EngineConfig {
                socket_type: socket.kind,
                routing_id: opts.routing_id.clone(),
                mechanism: opts.security.mechanism_config(),
                // libzmq asks ZAP about NULL peers only when a domain is set.
                null_zap: opts.security.mechanism == mechanism::NULL && !opts.zap_domain.is_empty(),
                max_msg_size: u64::try_from(opts.maxmsgsize).ok(),
            })))
        };
        let persistent_pipe = pipe.is_some();
        let (pipe, sock_pipe) = match pipe {
            Some((p, id)) => (Some(p), Some(id)),
            None => (None, None),
        };
        Conn {
            token,
            shared,
            timers: Vec::new(),
            deferred_close: None,
            dead: false,
            handle: Weak::new(),
            watch: Watch::ReadWrite,
            stream,
            socket,
            connector,
            listener,
            opts,
            endpoint,
            engine,
            pipe,
            sock_pipe,
            persistent_pipe,
            connecting,
            handshaked: false,
            read_paused: false,
            lingering: false,
            meta: None,
            in_batch: Vec::new(),
            out_batch: Vec::new(),
            in_place_last: false,
            out_mid_message: false,
            peer_unchecked: false,
            output_reserved: 0,
            writes: 0,
            release_armed: None,
            send_buffer_raised: false,
            writeq: WriteQueue::default(),
            tail: TailHold::default(),
            last_recv: Instant::now(),
            ping_sent: None,
            peer_ttl: None,
            zap: None,
            read_errno: libc::EPIPE,
            fin_seen: false,
            close_asked: false,
            claimer_io: false,
            claim_held: false,
            claim_left: Instant::now(),
            claim_quick: false,
            claim_since: Instant::now(),
            claim_timer: false,
            input_left: false,
            leave_to_reader: false,
            in_pull: false,
            read_deferred: None,
            reads: 0,
            deferred_timer: false,
            claimed_io_reads: 0,
            io_reads: 0,
            just_deferred: false,
            reader_away: None,
            socks: None,
        }
    }

    /// This connecting stream goes to a SOCKS5 proxy, which `client` asks to connect it
    /// on to the destination before the ZMTP greeting.
    pub(super) fn through_socks(&mut self, client: SocksClient) {
        self.socks = Some(Box::new(client));
    }

    /// Moves the SOCKS exchange on as far as the stream allows: true once the proxy has
    /// connected us (or there is no proxy). Reads exactly what the proxy's replies hold,
    /// so the destination's first bytes stay in the kernel for the engine.
    fn socks_step(&mut self) -> Result<bool, Close> {
        let Some(client) = self.socks.as_mut() else {
            return Ok(true);
        };
        loop {
            while !client.output().is_empty() {
                match self.stream.write(client.output()) {
                    Ok(n) => client.consume_output(n),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => return Err(Close::ConnectFailed),
                }
            }
            if client.is_done() {
                self.socks = None;
                return Ok(true);
            }
            let mut buf = [0u8; 64];
            let want = client.wanted().min(buf.len());
            match self.stream.read(&mut buf[..want]) {
                Ok(0) => return Err(Close::ConnectFailed),
                Ok(n) => client.input(&buf[..n]).map_err(|_| Close::ConnectFailed)?,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Err(Close::ConnectFailed),
            }
        }
    }

    /// Made by a connector of a closed socket: deliver the queue, then close.
    pub(super) fn linger_from_start(&mut self) {
        self.lingering = true;
    }

    /// The last `ready` read one batch of an assisted connection and more may be waiting:
    /// the reactor must look again (the poller is edge-triggered and will not say so).
    pub(super) fn input_left(&self) -> bool {
        self.input_left
    }

    /// The poller saw the peer's FIN (read-closed): the next read must go on to EOF.
    pub(super) fn peer_closed(&mut self) {
        self.fin_seen = true;
    }

    pub(super) fn is_lingering(&self) -> bool {
        self.lingering
    }

    /// The stream is connected: start the handshake clock and send the greeting.
    pub(super) fn started(&mut self) {
        if self.opts.handshake_ivl > 0 {
            self.timers.push((
                Instant::now() + Duration::from_millis(self.opts.handshake_ivl as u64),
                Timer::Handshake(self.token),
            ));
        }
        if self.engine.is_raw() {
            // STREAM: no handshake; the peer is "ready" as soon as it is connected.
            let _ = self.process();
        }
        let _ = self.flush();
    }

    /// Readiness (or a scheduled wake-up from the pipe): make progress both ways.
    pub(super) fn ready(&mut self, readable: bool, writable: bool) -> Result<(), Close> {
        self.input_left = false;
        self.just_deferred = false;
        if let Some(why) = self.deferred_close.take() {
            return Err(why);
        }
        if self.connecting {
            if !writable && !readable {
                return Ok(());
            }
            match self.stream.take_error() {
                Ok(Some(e)) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {
                    return Err(Close::ConnectRefused)
                }
                Ok(Some(_)) | Err(_) => return Err(Close::ConnectFailed),
                Ok(None) => {}
            }
            if !self.stream.is_connected() || !self.socks_step()? {
                return Ok(());
            }
            self.connecting = false;
            if let Stream::Tcp(t) = &self.stream {
                tcp::tune(t, &self.opts);
            }
            let fd = self.stream.as_raw_fd();
            self.socket
                .emit(event::CONNECTED, fd as u32, &self.endpoint);
            self.started();
        }
        self.poll_zap()?;
        self.resume_reading()?;
        if readable && (!self.lingering || !self.handshaked) {
            // A connection application threads also read: one batch per look, then come
            // back (the reactor looks again when `input_left`), so that the connection's
            // lock is free between batches and a receiving thread's own read can get in.
            // Reading on until the kernel is empty kept it from doing so while a fast
            // sender refilled the socket; the I/O thread then did every read (into fresh
            // pages, as the queue grew) and tcp PUSH/PULL 256 KiB ran at 2-6K msg/s in a
            // third of the runs instead of ~14K.
            if self.watch == Watch::Claimed && (self.claim_held || self.claim_timer) {
                // An application thread claimed the connection and reads what comes: the
                // poll of a thread waiting on it reports it, a thread that left its claim
                // in place reads it on its next receive, or the 20 ms timer gives the
                // descriptor back to the poller. This look came for something else
                // (timers to collect: a claim left in place schedules one), and a read
                // here, with its reads-again while input was left, had the I/O thread take
                // every message from under a streaming receiver's claim for long stretches
                // (ipc PUSH/PULL 64 KiB: half the messages in some runs, fresh pages and a
                // third busy thread on two cores). A claim with neither (the poller refused
                // the descriptor back) is read here as before.
            } else if self.defer_read() {
                self.just_deferred = true;
                if self.read_deferred.is_none() {
                    self.defer_now(Instant::now());
                }
            } else {
                self.clear_deferral();
                self.read(self.assistable())?;
            }
        } else if readable && self.fin_seen {
            // Lingering (the socket closed) and the peer ended its stream: see
            // `start_linger`.
            return Err(Close::Disconnected);
        }
        self.flush()
    }

    /// Whether the I/O thread should leave this readiness to the receiving thread: one
    /// that reads its connections itself whenever its queue runs empty (its socket has at
    /// most `MAX_SELF_SERVED` of them), is not waiting now (it would need this thread's
    /// read), and had not taken all of the I/O thread's last batch of small messages when
    /// it came. The I/O thread reading too put the two threads on both sides of the
    /// queue: once it was ahead, the receiver never found its queue empty and took each
    /// small message across cores at nearly twice the CPU (the C perf pair's slow speed,
    /// 3-5M against ~7.5M msg/s at 64 B; `docs/results/2026-11-27-leave-to-reader.md`).
    /// Not for a receiver that waits through readiness (zmq_poll, ZMQ_EVENTS): between
    /// its polls the I/O thread's reads beside it pay (`Queue::reader_polls`).
    fn defer_read(&self) -> bool {
        self.assistable()
            && !self.engine.is_raw()
            && !self.fin_seen
            && !self.read_paused
            && self.watch != Watch::Claimed
            && self.leave_to_reader
            && self.socket.reads_own_conns()
            && !self.reader_waiting()
            && !self.pipe.as_ref().is_some_and(|p| p.out.reader_polls())
            && self.reader_away.is_none_or(|until| Instant::now() >= until)
    }

    /// Input is left to the receiving thread from `now`; the fallback timer reads it if
    /// that thread does not.
    fn defer_now(&mut self, now: Instant) {
        self.read_deferred = Some(now);
        if let Some(p) = &self.pipe {
            p.out.set_left_to_reader(true);
        }
        if !self.deferred_timer {
            self.deferred_timer = true;
            self.timers
                .push((now + READ_DEFER_FALLBACK, Timer::ReadDeferred(self.token)));
        }
    }

    /// Input is no longer left to the receiving thread (someone reads it now).
    fn clear_deferral(&mut self) {
        if self.read_deferred.take().is_some() {
            if let Some(p) = &self.pipe {
                p.out.set_left_to_reader(false);
            }
        }
    }

    /// The socket-side queue of a connection whose input the I/O thread left to the
    /// receiving thread at this look (None: it read, or there was nothing to leave).
    pub(super) fn deferred_queue(&self) -> Option<Arc<Pipe>> {
        if self.read_deferred.is_some() && self.just_deferred {
            self.pipe.clone()
        } else {
            None
        }
    }

    /// The socket's receiving side found its queue empty and waits for the next batch.
    pub(super) fn reader_waiting(&self) -> bool {
        self.pipe.as_ref().is_some_and(|p| p.out.reader_waiting())
    }

    /// Reads and decodes until the kernel has no more (or, with `once`, after one read:
    /// an application thread pulling for its receive takes one batch and goes back to
    /// its messages; reading on while a fast sender refills the socket would only queue
    /// ever more before it returns). A `once` read that filled its buffer sets
    /// `input_left`.
    fn read(&mut self, once: bool) -> Result<(), Close> {
        loop {
            if self.read_paused {
                return Ok(());
            }
            // A large body comes straight into its own allocation; anything else into
            // the engine's receive buffer.
            let stream = &mut self.stream;
            let (result, offered) = match self
                .engine
                .read_body_with(|v, max| (stream.read_append(v, max), max))
            {
                Some(r) => r,
                None => {
                    let buf = self.engine.input_buffer(1);
                    let offered = buf.len();
                    let r = stream.read(buf);
                    if let Ok(n) = r {
                        self.engine.input_filled(n);
                    }
                    (r, offered)
                }
            };
            match result {
                Ok(0) => return Err(Close::Disconnected),
                Ok(n) => {
                    self.reads += 1;
                    self.io_reads += u64::from(!self.in_pull);
                    self.claimed_io_reads +=
                        u64::from(!self.in_pull && self.watch == Watch::Claimed);
                    if self.opts.heartbeat_ivl > 0 || self.peer_ttl.is_some() {
                        self.last_recv = Instant::now();
                    }
                    self.process()?;
                    // A short read means the kernel buffer is empty: save a syscall,
                    // unless the peer's FIN is pending (edge-triggered: no new event
                    // would report it).
                    if n < offered / 2 && !self.fin_seen {
                        return Ok(());
                    }
                    if once {
                        self.input_left = true;
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.read_errno = e.raw_os_error().unwrap_or(libc::EPIPE);
                    return Err(Close::Disconnected);
                }
            }
        }
    }

    /// Input waits for room in the queue (`read_paused`): if there is some now, decodes
    /// what is buffered and lets reads go on.
    fn resume_reading(&mut self) -> Result<(), Close> {
        if self.read_paused {
            if let Some(p) = &self.pipe {
                if p.out.reserve() {
                    self.read_paused = false;
                    self.process()?;
                }
            }
        }
        Ok(())
    }

    /// Decodes buffered input into the pipe, stopping at the socket's receive HWM.
    fn process(&mut self) -> Result<(), Close> {
        if let Some(p) = &self.pipe {
            if self.handshaked && !p.out.reserve() {
                self.read_paused = true;
                return Ok(());
            }
        }
        loop {
            // Fast path: small message frames, copied straight from the receive buffer
            // into their messages (no per-frame allocation or reference count).
            let (meta, batch) = (&self.meta, &mut self.in_batch);
            let fast = self.engine.take_messages(&mut |more, body| {
                // Built in the batch, not pushed there (see `Msg::write_copy`).
                batch.reserve(1);
                let len = batch.len();
                let m = Msg::write_copy(&mut batch.spare_capacity_mut()[0], body);
                m.set_more(more);
                if meta.is_some() {
                    m.set_metadata(meta.clone());
                }
                // SAFETY: the element at `len`, within the reserved capacity, was just
                // initialised by `write_copy`.
                unsafe { batch.set_len(len + 1) };
            });
            if let Err(e) = fast {
                self.push_batch();
                return Err(Close::Protocol(e.protocol_error_code()));
            }
            match self.engine.poll_event() {
                Ok(None) => break,
                Ok(Some(ev)) => match ev {
                    Event::Message { more, body } => {
                        let mut m = Msg::from_bytes(body);
                        m.set_more(more);
                        if self.meta.is_some() {
                            m.set_metadata(self.meta.clone());
                        }
                        self.in_batch.push(m);
                    }
                    Event::Subscribe(t) => self.in_batch.push(subscribe_msg(&t)),
                    Event::Cancel(t) => self.in_batch.push(cancel_msg(&t)),
                    Event::Ready(peer) => self.handshake_done(&peer),
                    Event::Ping { ttl, .. } => {
                        if ttl > 0 {
                            let first = self.peer_ttl.is_none();
                            self.peer_ttl = Some(Duration::from_millis(ttl as u64 * 100));
                            self.last_recv = Instant::now();
                            if first && self.opts.heartbeat_ivl <= 0 {
                                self.timers.push((
                                    Instant::now() + Duration::from_millis(ttl as u64 * 100),
                                    Timer::Heartbeat(self.token),
                                ));
                            }
                        }
                    }
                    Event::Pong { .. } => {}
                    Event::ZapRequest(req) => self.start_zap(&req)?,
                    Event::PeerError { reason } => {
                        // A ZAP status code from the server is an authentication failure.
                        return Err(match reason.as_str() {
                            "300" | "400" | "500" if !self.handshaked => {
                                Close::Auth(reason.parse().unwrap_or(400))
                            }
                            _ => Close::Refused,
                        });
                    }
                },
                Err(e) => {
                    self.push_batch();
                    return Err(match e {
                        // libzmq reports these as a plain disconnect, not a protocol
                        // failure (the second: a ZMTP 2.0 peer of a socket with security
                        // or ZAP).
                        ProtocolError::IncompatibleSocketType { .. }
                        | ProtocolError::UnsupportedVersion { major: 1 } => Close::Refused,
                        ProtocolError::AuthFailed { status } => Close::Auth(status),
                        e => Close::Protocol(e.protocol_error_code()),
                    });
                }
            }
        }
        self.push_batch();
        Ok(())
    }

    /// The engine needs a ZAP decision: ask the context's handler, or apply libzmq's
    /// rule for a context without one (CURVE and NULL pass unless ZAP_ENFORCE_DOMAIN;
    /// PLAIN fails).
    fn start_zap(&mut self, req: &ZapRequest) -> Result<(), Close> {
        let address = self.stream.peer_address();
        let info = RequestInfo {
            domain: &self.opts.zap_domain,
            address: &address,
            routing_id: &self.opts.routing_id,
        };
        let waker = Waker::Reactor(self.shared.clone(), self.token);
        match ZapClient::start(&self.socket, req, &info, waker) {
            Some(z) => self.zap = Some(z),
            None if req.mechanism == "PLAIN" || self.opts.zap_enforce_domain => {
                return Err(Close::NoDetail(libc::EFAULT));
            }
            None => self.engine.zap_reply(ZapVerdict::Accept {
                user_id: Bytes::new(),
                properties: Vec::new(),
            }),
        }
        Ok(())
    }

    /// Hands the ZAP handler's reply to the engine once it has arrived.
    fn poll_zap(&mut self) -> Result<(), Close> {
        let Some(reply) = self.zap.as_mut().and_then(ZapClient::poll) else {
            return Ok(());
        };
        self.zap = None;
        match reply {
            Ok(verdict) => {
                self.engine.zap_reply(verdict);
                self.process()
            }
            Err(code) => Err(Close::Protocol(code)),
        }
    }

    fn push_batch(&mut self) {
        if let Some(p) = &self.pipe {
            let small = self
                .in_batch
                .last()
                .is_some_and(|m| m.len() < DEFER_MSG_MAX);
            let woke = p.out.push_batch(&mut self.in_batch);
            if !self.in_pull {
                // Only a stream of small messages is left to the receiving thread (see
                // `defer_read`); for larger ones the kernel's copy dominates, and it pays
                // to have the I/O thread make it beside the receiver's work.
                self.leave_to_reader = small && !woke;
            }
        } else {
            self.in_batch.clear();
        }
    }

    fn handshake_done(&mut self, peer: &PeerInfo) {
        self.handshaked = true;
        // libzmq's precedence for a repeated name (first wins): Peer-Address, then what
        // ZAP said (User-Id, its properties), then the peer's own READY properties.
        let text = |v: &Bytes| String::from_utf8_lossy(v).into_owned();
        let mut props: Vec<(String, String)> = Vec::new();
        let addr = self.stream.peer_address();
        if !addr.is_empty() {
            props.push(("Peer-Address".to_string(), addr));
        }
        if let Some(user) = &peer.user_id {
            props.push(("User-Id".to_string(), text(user)));
        }
        for (k, v) in peer.zap_properties.iter().chain(&peer.properties) {
            props.push((k.clone(), text(v)));
        }
        let meta = Metadata::new(props).with_source_fd(self.stream.as_raw_fd());
        self.meta = Some(Arc::new(meta));
        let meta = PeerMeta {
            socket_type: peer.socket_type,
            routing_id: peer.routing_id.clone(),
            connect_routing_id: if self.connector.is_some() {
                self.opts.connect_routing_id.clone()
            } else {
                None
            },
            props: self.meta.clone(),
        };
        // STREAM keeps the I/O thread as its only driver (its empty-frame close and raw
        // reads have no inline path).
        let waker = if self.engine.is_raw() {
            Waker::Reactor(self.shared.clone(), self.token)
        } else {
            Waker::Conn(self.handle.clone())
        };
        match (&self.pipe, self.sock_pipe) {
            (Some(p), Some(sock_id)) => {
                p.inq.set_reader(waker.clone());
                p.out.set_writer(waker);
                self.socket.pipe_activated(sock_id, &meta);
            }
            _ => {
                let (sock_end, io_end) =
                    Pipe::pair(self.opts.sndhwm as usize, self.opts.rcvhwm as usize);
                io_end.inq.set_reader(waker.clone());
                io_end.out.set_writer(waker);
                self.sock_pipe = Some(sock_end.id);
                self.pipe = Some(io_end);
                self.socket.attach_pipe(sock_end, Some(&meta));
            }
        }
        // A ZMTP 2.0 peer has no commands, so no PINGs; libzmq 4.3 reports no handshake
        // event for it either.
        if peer.is_zmtp2() {
            return;
        }
        self.socket
            .emit(event::HANDSHAKE_SUCCEEDED, 0, &self.endpoint);
        if self.opts.heartbeat_ivl > 0 {
            self.timers.push((
                Instant::now() + Duration::from_millis(self.opts.heartbeat_ivl as u64),
                Timer::Heartbeat(self.token),
            ));
        }
    }

    /// Writes pending output, refilling it from the pipe in batches.
    fn flush(&mut self) -> Result<(), Close> {
        if self.connecting {
            return Ok(());
        }
        // The last write held bytes back: take more messages before writing again (and
        // so does this flush, of a stream's next message, if bytes are held).
        let mut held = self.tail.allowed && self.tail.holding();
        loop {
            if !held && (!self.writeq.is_empty() || self.engine.has_output()) {
                let written = if self.writeq.is_empty() {
                    self.stream
                        .write(self.engine.output())
                        .map(|n| (n, false))
                        .inspect(|&(n, _)| self.engine.consume_output(n))
                } else {
                    let hold = self.tail.segment(&self.stream);
                    self.writeq.write(&mut self.stream, &mut self.engine, hold)
                };
                match written {
                    Ok((_, kept)) => {
                        self.writes += 1;
                        self.peer_unchecked = false;
                        if !kept {
                            self.tail.wrote();
                        } else {
                            held = true;
                            let now = Instant::now();
                            if self.tail.held(now) {
                                self.timers
                                    .push((now + HOLD_FLUSH_AFTER, Timer::HeldTail(self.token)));
                            }
                        }
                        continue;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        self.tail.wrote();
                        if self.close_asked {
                            // A STREAM close to a peer that does not read: close now and
                            // drop the rest (libzmq ends the connection with its pipe),
                            // rather than hold the descriptor for as long as it stalls.
                            return Err(Close::StreamClosed);
                        }
                        self.arm_release_output();
                        // Have the poller report when there is room (this also takes the
                        // descriptor back from an application thread's claim), unless the
                        // claiming thread itself is writing: it polls for room instead.
                        if !self.claimer_io {
                            self.set_watch(Watch::ReadWrite);
                        }
                        return Ok(());
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => {
                        if self.peer_unchecked {
                            // The first write of a batch of large bodies, refused whole:
                            // they go back in front of the queue for the next connection.
                            if let Some(p) = &self.pipe {
                                p.inq.put_back(self.writeq.take_bodies().into_iter());
                            }
                        }
                        return Err(Close::Disconnected);
                    }
                }
            }
            if self.close_asked {
                return Err(Close::StreamClosed);
            }
            if self.fin_seen {
                // The peer's end is known: this connection is about to close, and what is
                // still queued waits for the next one rather than going into this one.
                return Ok(());
            }
            let Some(p) = self.pipe.as_ref().filter(|_| self.handshaked) else {
                self.output_drained();
                return Ok(());
            };
            let batch = match self.stream {
                Stream::Unix(_) if !self.in_place_last => UNIX_COPY_BATCH,
                _ => WRITE_BATCH,
            };
            // Everything taken before is written: the writer may count it as read.
            p.inq.credit_taken();
            // tcp bulk: encode no more than the kernel has room for, so that a peer that
            // stopped reading leaves little encoded output held here (ipc accounts its
            // send queue another way: `Stream::send_room` has nothing to say there).
            let probe = matches!(self.stream, Stream::Tcp(_)) && batch > ROOM_PROBE_BATCH;
            let first = if probe { ROOM_PROBE_BATCH } else { batch };
            let mut taken = p.inq.pop_batch(&mut self.out_batch, first);
            if probe && taken >= ROOM_PROBE_BATCH {
                // Large bodies written in place leave no encoded copy behind: no need to
                // ask (a syscall per 64 KiB message of a sender writing each inline).
                let limit = if self.batch_returnable() {
                    batch
                } else {
                    self.stream
                        .send_room()
                        .map_or(batch, |room| room.clamp(ROOM_PROBE_BATCH, batch))
                };
                if limit > taken {
                    taken += p.inq.pop_batch(&mut self.out_batch, limit - taken);
                }
            }
            if self.peer_unchecked && !self.out_batch.is_empty() && !self.batch_returnable() {
                // Encoded frames could not be given back: look for a closed peer now.
                self.peer_unchecked = false;
                if self.stream.peer_closed_now() {
                    p.inq.put_back(self.out_batch.drain(..));
                    self.fin_seen = true;
                    return Ok(());
                }
            }
            if let Some(last) = self.out_batch.last() {
                self.out_mid_message = last.more();
            }
            if taken >= ROOM_PROBE_BATCH {
                self.reserve_for_batch();
            }
            if self.out_batch.is_empty() {
                if self.lingering {
                    return Err(Close::Shutdown);
                }
                self.output_drained();
                return Ok(());
            }
            held = false;
            for m in self.out_batch.drain(..) {
                if self.engine.is_raw() && m.is_empty() {
                    // STREAM: an empty frame asks to close the connection, after what came
                    // before it (a reply, then the close, in one batch: the reply was lost).
                    // What follows it is dropped, as libzmq ends the pipe there.
                    self.close_asked = true;
                    break;
                }
                if m.len() >= ipc::IPC_LARGE && !self.send_buffer_raised {
                    if let Stream::Unix(u) = &self.stream {
                        ipc::raise_send_buffer(u);
                    }
                    self.send_buffer_raised = true;
                }
                if m.is_command() {
                    match m.data().split_first() {
                        Some((1, topic)) => self.engine.send_subscribe(topic),
                        Some((_, topic)) => self.engine.send_cancel(topic),
                        None => {}
                    }
                } else if m.len() >= IN_PLACE_MIN && self.engine.writes_in_place() {
                    self.in_place_last = true;
                    self.writeq.push_large(&mut self.engine, m.more(), m);
                } else if let Some(loan) = m.loan() {
                    // Encoded (a CURVE box) straight from the sender's bytes.
                    self.in_place_last = false;
                    self.engine.send_message(m.more(), loan.read().bytes());
                } else {
                    self.in_place_last = false;
                    self.engine.send_message(m.more(), m.data());
                }
            }
        }
    }

    /// Every frame of the batch taken goes out as a large body written in place, which
    /// the write queue keeps as a message until written (see `peer_unchecked`).
    fn batch_returnable(&self) -> bool {
        self.engine.writes_in_place()
            && !self.engine.is_raw()
            && self
                .out_batch
                .iter()
                .all(|m| !m.is_command() && m.len() >= IN_PLACE_MIN)
    }

    /// Reserves the engine's output for the frames of the batch it will copy (bodies
    /// written in place take none) in one allocation, when that is more than a small
    /// batch's worth (smaller ones grow it as they go).
    fn reserve_for_batch(&mut self) {
        let in_place = self.engine.writes_in_place();
        let overhead = self.engine.frame_overhead();
        let copied: usize = self
            .out_batch
            .iter()
            .filter(|m| !(in_place && m.len() >= IN_PLACE_MIN))
            .map(|m| m.len() + overhead)
            .sum();
        if copied > ROOM_PROBE_BATCH {
            let room = self.engine.reserve_output(copied);
            self.output_reserved = self.output_reserved.max(room);
        }
    }

    /// A write found the kernel full while the output buffer is one a large batch grew:
    /// have the reactor look again in `RELEASE_OUTPUT_AFTER` (see `release_output`). Not
    /// at once: a peer that only lags takes the bytes within that time, and freeing the
    /// buffer at each would-block would allocate it again for every batch.
    fn arm_release_output(&mut self) {
        if self.output_reserved > SPARE_OUTPUT_MAX
            && self.release_armed.is_none()
            && matches!(self.stream, Stream::Tcp(_))
        {
            // ipc batches are not bounded by the room (`Stream::send_room`): the encoded
            // output behind a stalled ipc peer is a whole batch, nothing spare to free.
            self.release_armed = Some(self.writes);
            self.timers.push((
                Instant::now() + RELEASE_OUTPUT_AFTER,
                Timer::ReleaseOutput(self.token),
            ));
        }
    }

    /// `Timer::ReleaseOutput`: if nothing was written since it was armed and the output
    /// buffer is mostly spare room, move what is pending into a small buffer (a peer that
    /// stopped reading would otherwise keep the whole batch's memory held). If the peer
    /// took bytes meanwhile but the output waits for room again, look again later.
    fn release_output(&mut self) {
        let Some(armed) = self.release_armed.take() else {
            return;
        };
        if armed != self.writes {
            if self.wants_write() {
                self.arm_release_output();
            }
            return;
        }
        let keep = self.engine.output().len() + ROOM_PROBE_BATCH;
        if self.output_reserved > SPARE_OUTPUT_MAX && self.output_reserved > 2 * keep {
            self.engine.shrink_output(ROOM_PROBE_BATCH);
            self.output_reserved = keep;
        }
    }

    /// Everything queued is written: stop watching for writability (the reactor was
    /// registered read-write for the connect, or a write found the socket full).
    fn output_drained(&mut self) {
        if self.watch == Watch::ReadWrite && !self.connecting {
            self.set_watch(Watch::Read);
        }
    }

    /// Changes what the poller watches (from any thread; the poller is thread-safe).
    fn set_watch(&mut self, want: Watch) {
        if self.watch == want || self.dead {
            return;
        }
        let registry = &self.shared.registry;
        let token = mio::Token(self.token);
        let both = mio::Interest::READABLE | mio::Interest::WRITABLE;
        let source = self.stream.source();
        let r = match (self.watch, want) {
            (_, Watch::Claimed) => registry.deregister(source),
            (Watch::Claimed, Watch::Read) => {
                registry.register(source, token, mio::Interest::READABLE)
            }
            (Watch::Claimed, Watch::ReadWrite) => registry.register(source, token, both),
            (_, Watch::Read) => registry.reregister(source, token, mio::Interest::READABLE),
            (_, Watch::ReadWrite) => registry.reregister(source, token, both),
        };
        if r.is_ok() {
            self.watch = want;
            // A claim, held or not, ends whenever the poller takes the descriptor back.
            self.claim_held &= want == Watch::Claimed;
        }
    }

    /// An application thread about to wait for input takes the descriptor off the poller
    /// and reads it itself (returns it), if the connection is in plain traffic with
    /// nothing pending for the reactor. Output waiting for room (a large message the
    /// kernel took only part of) is then that thread's to write too: handing it to the
    /// I/O thread would cost a wake-up of each thread per message.
    /// A claim left in place by the last wait is taken over (no poller change).
    pub(super) fn claim(&mut self) -> Option<std::os::fd::RawFd> {
        if self.watch == Watch::Claimed && self.claim_held {
            return None;
        }
        let plain = self.assistable() && !self.read_paused && !self.fin_seen;
        if !plain {
            self.unclaim();
            return None;
        }
        if self.watch != Watch::Claimed {
            self.set_watch(Watch::Claimed);
        }
        let now = Instant::now();
        self.claim_quick = now.duration_since(self.claim_left) < CLAIM_REUSE_GAP;
        self.claim_since = now;
        self.claim_held = self.watch == Watch::Claimed;
        self.claim_held.then(|| self.stream.as_raw_fd())
    }

    /// The holder's wait is over. The claim stays in place if its thread came back for it
    /// quickly and waited briefly (`CLAIM_REUSE_GAP`, `CLAIM_HELD_MAX`) and the connection
    /// is in plain traffic with nothing for the poller to watch: a thread receiving in a
    /// loop comes
    /// back within microseconds, and ending each claim (two `epoll_ctl`, and a wake-up of
    /// the I/O thread for what arrives before the next one) cost ipc PUSH/PULL 64 KiB a
    /// quarter of its CPU time. The I/O thread takes the descriptor back once the claim
    /// has gone unheld for `CLAIM_IDLE` (`Timer::ClaimIdle`); a thread that turns to
    /// waiting another way ends it first (`end_idle_claim`). True if a timer was asked
    /// for (the reactor must collect it: schedule the connection).
    pub(super) fn release_claim(&mut self) -> bool {
        if self.watch != Watch::Claimed {
            return false;
        }
        self.claim_held = false;
        self.claim_left = Instant::now();
        let brief = self.claim_left.duration_since(self.claim_since) < CLAIM_HELD_MAX;
        let plain = self.assistable() && !self.read_paused && !self.fin_seen;
        if !self.claim_quick || !brief || !plain || self.wants_write() {
            self.unclaim();
            return false;
        }
        if self.claim_timer {
            return false;
        }
        self.claim_timer = true;
        self.timers
            .push((self.claim_left + CLAIM_IDLE, Timer::ClaimIdle(self.token)));
        true
    }

    /// Ends a claim left in place (not one a waiting thread holds).
    pub(super) fn end_idle_claim(&mut self) {
        if !self.claim_held {
            self.unclaim();
        }
    }

    /// True while a claim is left in place unheld.
    pub(super) fn has_idle_claim(&self) -> bool {
        self.watch == Watch::Claimed && !self.claim_held
    }

    /// Writes that took bytes so far.
    pub(super) fn writes(&self) -> u64 {
        self.writes
    }

    /// Writes that held bytes back so far (for tests).
    pub(super) fn held_writes(&self) -> u64 {
        self.tail.held_writes
    }

    /// Bytes are held back for the next write (`tail_hold`), none waiting for room.
    pub(super) fn holds_tail(&self) -> bool {
        self.tail.holding() && self.wants_write()
    }

    /// Output waits for room in the kernel, not only bytes held back on purpose.
    pub(super) fn waits_for_room(&self) -> bool {
        self.wants_write() && !self.tail.holding()
    }

    /// Encoded output waits for room in the kernel.
    pub(super) fn wants_write(&self) -> bool {
        !self.writeq.is_empty() || self.engine.has_output()
    }

    /// Bytes still to come of a large message body being read (None: none in progress).
    pub(super) fn body_missing(&self) -> Option<usize> {
        self.engine.body_missing()
    }

    /// Reads that took bytes made by the I/O thread while the connection was claimed.
    pub(super) fn claimed_io_reads(&self) -> u64 {
        self.claimed_io_reads
    }

    /// Reads by the I/O thread that returned bytes (for tests).
    pub(super) fn io_reads(&self) -> u64 {
        self.io_reads
    }

    /// True while an application thread's claim holds.
    pub(super) fn is_claimed(&self) -> bool {
        self.watch == Watch::Claimed
    }

    /// The claiming thread is done: the poller watches the descriptor again (and reports
    /// at once whatever arrived meanwhile), for room too if output still waits for it.
    pub(super) fn unclaim(&mut self) {
        self.claim_held = false;
        if self.watch == Watch::Claimed {
            let want = if self.wants_write() {
                Watch::ReadWrite
            } else {
                Watch::Read
            };
            self.set_watch(want);
        }
    }

    /// A STREAM socket asked to close this connection (an empty frame was taken).
    pub(super) fn stream_close_asked(&self) -> bool {
        self.close_asked
    }

    /// The stream is connected and its handshake not done yet (a raw STREAM connection
    /// has none to do).
    pub(super) fn in_handshake(&self) -> bool {
        !self.connecting && !self.handshaked && !self.engine.is_raw()
    }

    /// A raw STREAM connection that was connected: libzmq 4.3.4 and 4.3.5 count its every
    /// end as one before the handshake (ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED stops it).
    pub(super) fn raw_connected(&self) -> bool {
        !self.connecting && self.engine.is_raw()
    }

    /// True when an application thread may do this connection's traffic I/O itself: the
    /// handshake is done and nothing the reactor must see (closing, lingering, a pending
    /// ZAP reply, a paused read) is in progress.
    fn assistable(&self) -> bool {
        !self.dead
            && self.handshaked
            && !self.connecting
            && !self.lingering
            && self.zap.is_none()
            && self.deferred_close.is_none()
    }

    /// An application thread's flush (its send queued a message and this connection's
    /// writer side was idle). False if the reactor must take over: the connection is not
    /// in plain traffic, it failed (the reason is kept for the reactor), or it asked for
    /// timers.
    /// `hold`: the thread streams large messages to this connection, and the write may
    /// hold back the bytes past its last whole segment (see `tail_hold`).
    pub(super) fn flush_inline(&mut self, hold: bool) -> bool {
        if !self.assistable() || self.fin_seen {
            return false;
        }
        // Over ipc, with nothing of an earlier batch pending, the look for a closed peer
        // (a syscall, ~4 % of a 64 KiB sender's time) waits until the batch is taken: a
        // batch of large bodies is written without it, since a Unix socket refuses a write
        // to a closed peer whole (EPIPE) and the bodies can then be given back.
        self.peer_unchecked = matches!(self.stream, Stream::Unix(_))
            && self.writeq.is_empty()
            && !self.engine.has_output()
            && !self.out_mid_message;
        // A stream's next message (`hold`: this thread wrote this connection microseconds
        // ago) is written without the look (~3 % of a tcp 64 KiB sender's time): a peer
        // that closes mid-stream loses what the last writes put in the kernel anyway,
        // and its reset fails the next write or two.
        if !self.peer_unchecked && !hold && self.stream.peer_closed_now() {
            return false;
        }
        self.tail.allowed = hold;
        let flushed = self.flush();
        self.tail.allowed = false;
        self.peer_unchecked = false;
        match flushed {
            Err(why) => {
                self.deferred_close = Some(why);
                false
            }
            // The look after taking the batch found the peer gone (`fin_seen`): the
            // reactor reads the end and closes.
            Ok(()) => !self.fin_seen && self.timers.is_empty(),
        }
    }

    /// An application thread's read (its receive found nothing queued): reads what the
    /// kernel has, decodes it into the pipe and writes what the input produced (PONGs).
    /// False if the reactor must look at the connection now (it failed, or asked for
    /// timers); outside plain traffic this does nothing and leaves it to the reactor's
    /// own readiness events.
    pub(super) fn pull_inline(&mut self) -> bool {
        // The queue had no room for input and this thread has since taken from it: read on
        // now. The reactor's look for that room (`room_ready`) may have found this thread
        // holding the connection and come only `BUSY_RETRY` later, with the kernel full.
        if self.read_paused && self.assistable() {
            if let Err(why) = self.resume_reading() {
                self.deferred_close = Some(why);
            }
        }
        if self.assistable() && !self.read_paused && self.deferred_close.is_none() {
            // Only a thread inside its wait polls for room; one that left its claim in
            // place (a non-blocking receive) hands output that finds none to the poller.
            self.claimer_io = self.watch == Watch::Claimed && self.claim_held;
            self.in_pull = true;
            let had_deferral = self.read_deferred.is_some();
            self.clear_deferral();
            self.reader_away = None;
            let result = self.read(true);
            self.in_pull = false;
            if self.input_left && had_deferral {
                // This read took one batch and left the rest, whose poller edge went to a
                // look that left it to this thread: it stays left to this thread's next
                // read, with the fallback timer if that never comes.
                self.input_left = false;
                self.defer_now(Instant::now());
            }
            let result = result.and_then(|()| self.flush());
            self.claimer_io = false;
            if let Err(why) = result {
                self.deferred_close = Some(why);
            }
        }
        if self.read_paused || self.deferred_close.is_some() {
            // The reactor resumes or closes it: it must watch the descriptor again.
            self.unclaim();
        }
        self.dead || (self.deferred_close.is_none() && self.timers.is_empty())
    }

    /// The socket closed: deliver what is queued within `linger` ms. `Some(why)`: close
    /// now, for that reason.
    pub(super) fn start_linger(&mut self, linger: i32) -> Option<Close> {
        if linger == 0 {
            return Some(Close::Shutdown);
        }
        // Not yet handshaked: keep going; the queue is flushed once the handshake is done.
        self.lingering = true;
        if linger > 0 {
            self.timers.push((
                Instant::now() + Duration::from_millis(linger as u64),
                Timer::Linger(self.token),
            ));
        }
        if !self.handshaked {
            return None;
        }
        // A peer that ended its stream (seen now, or by the flush) ends the connection as a
        // disconnect: a lingering connection reads no more, so no later event would end
        // it, and what it holds cannot reach that peer (a connector reconnects to deliver
        // its queue, as libzmq's session does). libzmq drops the connection on that end of
        // stream as well.
        if self.fin_seen {
            return Some(Close::Disconnected);
        }
        match self.flush() {
            Err(why) => Some(why),
            Ok(()) if self.fin_seen => Some(Close::Disconnected),
            Ok(()) => None,
        }
    }

    pub(super) fn timer(&mut self, kind: Timer, now: Instant) -> Result<(), Close> {
        match kind {
            Timer::Handshake(_) if !self.handshaked => Err(Close::Timeout),
            Timer::ConnectTimeout(_) if self.connecting => Err(Close::ConnectFailed),
            Timer::Linger(_) => Err(Close::Shutdown),
            Timer::ReleaseOutput(_) => {
                self.release_output();
                Ok(())
            }
            Timer::HeldTail(_) => match self.tail.due(now) {
                HeldTailDue::Later(at) => {
                    self.timers.push((at, Timer::HeldTail(self.token)));
                    Ok(())
                }
                HeldTailDue::Flush => self.flush(),
            },
            Timer::ClaimIdle(_) => {
                self.claim_timer = false;
                // A held claim asks for this timer again when its wait ends: a thread
                // blocked in a receive for hours costs no wake-ups meanwhile.
                if self.watch != Watch::Claimed || self.claim_held {
                    return Ok(());
                }
                let due = self.claim_left + CLAIM_IDLE;
                if now < due {
                    self.claim_timer = true;
                    self.timers.push((due, Timer::ClaimIdle(self.token)));
                } else {
                    // The thread went away: watch the descriptor again (the poller
                    // reports at once what arrived meanwhile).
                    self.unclaim();
                    if self.watch == Watch::Claimed {
                        // The poller refused it: try again rather than leave it unwatched.
                        self.claim_timer = true;
                        self.timers
                            .push((now + CLAIM_IDLE, Timer::ClaimIdle(self.token)));
                    }
                }
                Ok(())
            }
            Timer::ReadDeferred(_) => {
                // The receiving thread did not come back for what was left to it (it
                // stopped receiving, or waits in a way that does not read): read it here,
                // and go on reading as usual for as long again (read-ahead up to the HWM,
                // PINGs answered, as libzmq), or until that thread reads it itself.
                self.deferred_timer = false;
                let Some(since) = self.read_deferred else {
                    return Ok(());
                };
                if now < since + READ_DEFER_FALLBACK {
                    // Left again after the receiving thread's last read: it is keeping up.
                    self.deferred_timer = true;
                    self.timers
                        .push((since + READ_DEFER_FALLBACK, Timer::ReadDeferred(self.token)));
                    return Ok(());
                }
                self.clear_deferral();
                if self.watch != Watch::Claimed && !self.lingering {
                    self.input_left = false;
                    let reads = self.reads;
                    self.read(self.assistable())?;
                    if self.reads != reads {
                        // Input was waiting: its reader is away.
                        self.reader_away = Some(now + READ_DEFER_FALLBACK);
                    }
                    return self.flush();
                }
                Ok(())
            }
            Timer::Heartbeat(_) => {
                if self
                    .peer_ttl
                    .is_some_and(|ttl| now.duration_since(self.last_recv) > ttl)
                {
                    return Err(Close::Timeout);
                }
                let period = if self.opts.heartbeat_ivl > 0 {
                    let ttl = (self.opts.heartbeat_ttl / 100).clamp(0, u16::MAX as i32) as u16;
                    self.engine.send_ping(ttl, b"");
                    // As libzmq: a timeout runs from each PING unless the one before is
                    // still unanswered; anything that comes in answers it.
                    let timeout = self.opts.effective_heartbeat_timeout();
                    let answered = self.ping_sent.is_none_or(|sent| self.last_recv >= sent);
                    if timeout > 0 && answered {
                        self.ping_sent = Some(now);
                        self.timers.push((
                            now + Duration::from_millis(timeout as u64),
                            Timer::HeartbeatTimeout(self.token),
                        ));
                    }
                    Duration::from_millis(self.opts.heartbeat_ivl as u64)
                } else {
                    self.peer_ttl.unwrap_or(Duration::from_secs(1))
                };
                self.timers
                    .push((now + period, Timer::Heartbeat(self.token)));
                self.flush()
            }
            // The timer of an earlier PING finds a later one's, not yet due: nothing to do.
            Timer::HeartbeatTimeout(_) => match self.ping_sent {
                Some(sent)
                    if self.last_recv < sent
                        && now.duration_since(sent)
                            >= Duration::from_millis(
                                self.opts.effective_heartbeat_timeout().max(0) as u64,
                            ) =>
                {
                    Err(Close::Timeout)
                }
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// One non-blocking attempt to write what the engine has queued (an ERROR before
    /// closing); whatever does not fit is dropped with the connection.
    fn flush_handshake_output(&mut self) {
        while self.engine.has_output() {
            match self.stream.write(self.engine.output()) {
                Ok(n) if n > 0 => self.engine.consume_output(n),
                _ => return,
            }
        }
    }

    /// The connection is gone: report it and release the pipe.
    pub(super) fn closed(&mut self, why: Close) {
        if why == Close::Shutdown && self.holds_tail() {
            // Our own close, disconnect or unbind: the end of a message already sent, held
            // back only to fill a segment (`tail_hold`), would be in the kernel without
            // the hold. One write of what is queued, nothing more from the pipe.
            let _ = self.writeq.write(&mut self.stream, &mut self.engine, None);
        }
        self.dead = true;
        let fd = self.stream.as_raw_fd() as u32;
        if matches!(why, Close::Auth(_))
            || (matches!(why, Close::Protocol(_) | Close::Refused) && !self.handshaked)
        {
            // Let the peer see our greeting and READY (so it can name the failure too, or
            // find the socket types incompatible itself and report no handshake failure,
            // as libzmq's peers do) or our ERROR.
            self.flush_handshake_output();
        }
        // The peer sees the end before our monitor reports it (the descriptor itself is
        // closed when the last handle to this connection goes, which may be a moment later).
        self.stream.shutdown();
        match why {
            // libzmq reports a failed attempt as the socket being closed.
            Close::ConnectFailed | Close::ConnectRefused => {
                self.socket.emit(event::CLOSED, fd, &self.endpoint)
            }
            // Our own unbind/disconnect/close: libzmq reports CLOSED for the endpoint only.
            Close::Shutdown | Close::StreamClosed => {}
            Close::Protocol(code) => {
                if !self.handshaked {
                    self.socket
                        .emit(event::HANDSHAKE_FAILED_PROTOCOL, code, &self.endpoint);
                }
                self.socket.emit(event::DISCONNECTED, fd, &self.endpoint);
            }
            Close::Auth(status) => {
                self.socket
                    .emit(event::HANDSHAKE_FAILED_AUTH, status as u32, &self.endpoint);
                self.socket.emit(event::DISCONNECTED, fd, &self.endpoint);
            }
            Close::NoDetail(errno) => {
                self.socket.emit(
                    event::HANDSHAKE_FAILED_NO_DETAIL,
                    errno as u32,
                    &self.endpoint,
                );
                self.socket.emit(event::DISCONNECTED, fd, &self.endpoint);
            }
            Close::Refused => self.socket.emit(event::DISCONNECTED, fd, &self.endpoint),
            Close::Disconnected | Close::Timeout => {
                if !self.connecting {
                    // libzmq has no security mechanism on a ZMTP 2.0 connection, which its
                    // monitor takes for a handshake never finished: every end of one is
                    // reported as a handshake failure too.
                    if (!self.handshaked || self.engine.is_zmtp2()) && !self.engine.is_raw() {
                        // libzmq: the errno of the failure (EPIPE for an orderly close,
                        // EAGAIN when HANDSHAKE_IVL ran out).
                        let errno = if why == Close::Timeout {
                            libc::EAGAIN
                        } else {
                            self.read_errno
                        };
                        self.socket.emit(
                            event::HANDSHAKE_FAILED_NO_DETAIL,
                            errno as u32,
                            &self.endpoint,
                        );
                    }
                    self.socket.emit(event::DISCONNECTED, fd, &self.endpoint);
                }
            }
        }
        if let Some(p) = self.pipe.take() {
            // What was taken and not written is lost with the connection; a pipe kept for
            // the next one must not count it as still queued.
            p.inq.credit_taken();
            p.inq.set_reader(Waker::Nobody);
            p.out.set_writer(Waker::Nobody);
            p.out.abort_partial();
            if let Some(id) = self.sock_pipe {
                if !self.persistent_pipe {
                    self.socket.detach_pipe(id);
                } else if self.engine.is_raw() && self.handshaked {
                    // A STREAM connect keeps its pipe (and routing id) for the next
                    // connection; the socket announces this one's end.
                    self.socket.pipe_deactivated(id);
                }
            }
        }
    }
}
