//! `Socket`: the application's handle. Sending and receiving go through the socket type's
//! pattern; bind/connect hand endpoints to the transports.

use crate::ctx::CtxShared;
use crate::error::{Error, Result};
use crate::flaglock::{FlagGuard, FlagLock};
use crate::io::{BindRequest, ConnHandle, ConnectRequest, Served};
use crate::monitor::{self, Monitor};
use crate::msg::Msg;
use crate::options::{id, OptionValue, Options};
use crate::pattern::{new_pattern, Pattern, PeerMeta, SliceFrames};
use crate::pipe::{Pipe, Waker};
use crate::signal::{Signal, Wait, MAX_SELF_SERVED};
use crate::transport::{inproc, split_host_port, tcp, Endpoint};
use ferromq_zmtp::SocketType;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// A socket's signal and a generation of it seen by a waiter.
pub(crate) type SignalMark = (Arc<Signal>, u64);

/// `send`/`recv` flag: do not block; fail with `Again` instead.
pub const DONTWAIT: i32 = 1;
/// `send` flag: more frames of this message follow.
pub const SNDMORE: i32 = 2;

/// ZMQ_POLLIN bit of `events()`.
pub const POLLIN: i16 = 1;
/// ZMQ_POLLOUT bit of `events()`.
pub const POLLOUT: i16 = 2;

static NEXT_SOCKET_ID: AtomicU64 = AtomicU64::new(1);

/// Where a socket is bound or connected, so unbind/disconnect/close can undo it.
pub(crate) enum Attachment {
    Inproc {
        name: String,
    },
    InprocConnect {
        pipe: u64,
    },
    /// A listener or connector in the I/O thread; `pipe` is the socket-side pipe a
    /// connector made at connect time (detached at once on disconnect).
    Io {
        token: usize,
        pipe: Option<u64>,
    },
}

pub(crate) struct SocketState {
    pub(crate) opts: Options,
    pub(crate) pattern: Box<dyn Pattern>,
    pub(crate) pipes: HashMap<u64, Arc<Pipe>>,
    /// endpoint string (as given and as resolved) -> what it created.
    pub(crate) binds: Vec<(String, String, Attachment)>,
    pub(crate) connects: Vec<(String, Attachment)>,
    rcvmore: bool,
    sending_more: bool,
    pub(crate) closed: bool,
    /// Spare buffer for `conn_sources` (kept so a blocking receive does not allocate).
    sources_buf: Vec<Weak<ConnHandle>>,
}

/// At most this many connections are read by a receiving thread itself; a socket with more
/// peers leaves reading to the I/O thread (one failed read each would cost more than it
/// saves).
const MAX_PULL_SOURCES: usize = MAX_SELF_SERVED;

impl SocketState {
    /// The tcp/ipc connections this socket's receive may read itself, in `buf` (cleared);
    /// none if there are too many. Weak: a connection the reactor closes meanwhile must
    /// go (and its descriptor close) at once, not when a long blocking receive ends.
    fn conn_sources(&mut self, mut buf: Vec<Weak<ConnHandle>>) -> Vec<Weak<ConnHandle>> {
        buf.clear();
        if buf.capacity() == 0 {
            buf = std::mem::take(&mut self.sources_buf);
        }
        if self.pipes.len() <= MAX_PULL_SOURCES {
            buf.extend(self.pipes.values().filter_map(|p| p.inq.writer_conn()));
        }
        buf
    }
}

fn pull_all(sources: &[Weak<ConnHandle>]) {
    for c in sources {
        if let Some(c) = c.upgrade() {
            c.pull();
        }
    }
}

/// Gives the claims the thread's last waits left in place back to the I/O thread (see
/// `ConnHandle::end_idle_claim`).
fn end_idle_claims(sources: &[Weak<ConnHandle>]) {
    for c in sources {
        if let Some(c) = c.upgrade() {
            c.end_idle_claim();
        }
    }
}

pub(crate) struct SocketShared {
    pub(crate) id: u64,
    pub(crate) kind: SocketType,
    pub(crate) ctx: Arc<CtxShared>,
    pub(crate) signal: Arc<Signal>,
    state: FlagLock<SocketState>,
    pub(crate) monitor: Mutex<Option<Monitor>>,
    /// The frames its pattern takes as bytes (`Pattern::slice_frames`).
    slice_frames: SliceFrames,
    /// The socket has at most `MAX_PULL_SOURCES` pipes, so a receive that finds nothing
    /// reads their connections itself (kept beside the lock for the I/O thread).
    reads_own_conns: AtomicBool,
    /// A wait of this socket's claimed connections since the last `end_idle_claims`: some
    /// may still be claimed (a hint that spares `events()` the walk when none can be).
    claimed_since_end: AtomicBool,
}

impl SocketShared {
    /// The socket's state. A flag lock, not a mutex: the owner takes it on every call and
    /// other threads rarely; nobody blocks while holding it (see `flaglock`).
    #[inline]
    pub(crate) fn lock(&self) -> FlagGuard<'_, SocketState> {
        self.state.lock()
    }

    /// A receive on this socket that finds nothing reads its tcp/ipc connections itself
    /// (see `SocketState::conn_sources`).
    pub(crate) fn reads_own_conns(&self) -> bool {
        self.reads_own_conns.load(Ordering::Relaxed)
    }

    fn pipes_changed(&self, st: &SocketState) {
        self.reads_own_conns
            .store(st.pipes.len() <= MAX_PULL_SOURCES, Ordering::Relaxed);
    }

    /// Hands a new pipe to the pattern and wakes the owner; this socket's ZMQ_CONFLATE
    /// applies to both of the pipe's queues.
    pub(crate) fn attach_pipe(&self, pipe: Arc<Pipe>, meta: Option<&PeerMeta>) -> bool {
        self.attach(pipe, meta, true)
    }

    /// Like [`attach_pipe`](Self::attach_pipe) for the bound end of an inproc pipe: the
    /// connecting socket's ZMQ_CONFLATE governs both queues and this socket's is ignored,
    /// as in libzmq (a conflating PULL bound on inproc keeps every message there).
    pub(crate) fn attach_bound_inproc_pipe(&self, pipe: Arc<Pipe>, meta: &PeerMeta) -> bool {
        self.attach(pipe, Some(meta), false)
    }

    fn attach(&self, pipe: Arc<Pipe>, meta: Option<&PeerMeta>, own_conflate: bool) -> bool {
        let mut st = self.lock();
        if st.closed {
            drop(st);
            pipe.close();
            return false;
        }
        pipe.inq.set_reader(Waker::Socket(self.signal.clone()));
        pipe.out.set_writer(Waker::Socket(self.signal.clone()));
        // ZMQ_CONFLATE applies to these socket types only (as in libzmq).
        if own_conflate
            && st.opts.conflate
            && matches!(
                self.kind,
                SocketType::Dealer
                    | SocketType::Pull
                    | SocketType::Push
                    | SocketType::Pub
                    | SocketType::Sub
            )
        {
            pipe.inq.set_conflate();
            pipe.out.set_conflate();
        }
        st.pipes.insert(pipe.id, pipe.clone());
        self.pipes_changed(&st);
        st.pattern.attach(pipe, meta);
        drop(st);
        self.signal.notify();
        true
    }

    /// A connect-side pipe's connection ended; the pipe stays for the next one.
    pub(crate) fn pipe_deactivated(&self, pipe_id: u64) {
        let mut st = self.lock();
        if st.pipes.contains_key(&pipe_id) {
            st.pattern.deactivated(pipe_id);
        }
        drop(st);
        self.signal.notify();
    }

    /// A connect-side pipe's connection finished its handshake.
    pub(crate) fn pipe_activated(&self, pipe_id: u64, meta: &PeerMeta) {
        let mut st = self.lock();
        if st.pipes.contains_key(&pipe_id) {
            st.pattern.activated(pipe_id, meta);
        }
        drop(st);
        self.signal.notify();
    }

    /// This socket gives up a pipe (disconnect): its peer sees the pipe end.
    pub(crate) fn drop_pipe(&self, pipe_id: u64) {
        let mut st = self.lock();
        if let Some(p) = st.pipes.remove(&pipe_id) {
            self.pipes_changed(&st);
            st.pattern.detach(pipe_id);
            p.close();
        }
        drop(st);
        self.signal.notify();
    }

    /// Forgets the connect whose I/O-thread connector is `token` (it ended for good, and
    /// libzmq then answers zmq_disconnect with ENOENT).
    pub(crate) fn forget_connect(&self, token: usize) {
        self.lock()
            .connects
            .retain(|(_, att)| !matches!(att, Attachment::Io { token: t, .. } if *t == token));
    }

    /// The peer behind a pipe is gone for good.
    pub(crate) fn detach_pipe(&self, pipe_id: u64) {
        let mut st = self.lock();
        if let Some(p) = st.pipes.remove(&pipe_id) {
            self.pipes_changed(&st);
            p.out.close_reader();
            p.inq.close_writer();
            st.pattern.detach(pipe_id);
        }
        drop(st);
        self.signal.notify();
    }

    /// Sends a monitor event if a monitor wants it.
    pub(crate) fn emit(&self, event: u16, value: u32, endpoint: &str) {
        let guard = self.monitor.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = guard.as_ref() {
            m.emit(event, value, endpoint);
        }
    }

    pub(crate) fn options(&self) -> Options {
        self.lock().opts.clone()
    }
}

/// What `unbind` and `disconnect` check before they look for the endpoint, as libzmq
/// 4.3.4 (probed): `split_endpoint`'s checks, then a scheme libzmq knows
/// (EPROTONOSUPPORT; a known one this build lacks is simply not found).
fn check_endpoint_to_end(endpoint: &str) -> Result<()> {
    let (scheme, _) = crate::transport::split_endpoint(endpoint)?;
    if LIBZMQ_SCHEMES.contains(&scheme) {
        Ok(())
    } else {
        Err(Error::ProtocolNotSupported)
    }
}

/// The transports Debian's libzmq is built with: ours, and those we lack (its unbind of
/// one of them that was never bound is ENOENT, not EPROTONOSUPPORT).
const LIBZMQ_SCHEMES: [&str; 9] = [
    "tcp", "ipc", "inproc", "udp", "pgm", "epgm", "norm", "tipc", "ws",
];

/// A ZeroMQ socket. `Send` (it may move between threads) but, as in libzmq, not for use
/// from two threads at once. Closed on drop (with the LINGER option's semantics).
pub struct Socket {
    pub(crate) inner: Arc<SocketShared>,
}

impl std::fmt::Debug for Socket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Socket")
            .field("type", &self.inner.kind)
            .finish()
    }
}

impl Socket {
    pub(crate) fn create(
        ctx: Arc<CtxShared>,
        kind: SocketType,
        ipv6: bool,
        blocky: bool,
    ) -> Result<Socket> {
        let signal = Arc::new(Signal::new().map_err(|e| Error::from_io(&e))?);
        let pattern = new_pattern(kind, &signal)?;
        let slice_frames = pattern.slice_frames();
        let mut opts = Options {
            ipv6,
            ..Options::default()
        };
        if !blocky || matches!(kind, SocketType::Sub | SocketType::XSub) {
            // libzmq: ZMQ_BLOCKY 0 on the context makes new sockets' LINGER 0; a closing
            // subscriber never waits to send its subscriptions.
            opts.linger = 0;
        }
        Ok(Socket {
            inner: Arc::new(SocketShared {
                id: NEXT_SOCKET_ID.fetch_add(1, Ordering::Relaxed),
                kind,
                ctx,
                signal,
                state: FlagLock::new(SocketState {
                    opts,
                    pattern,
                    pipes: HashMap::new(),
                    binds: Vec::new(),
                    connects: Vec::new(),
                    rcvmore: false,
                    sending_more: false,
                    closed: false,
                    sources_buf: Vec::new(),
                }),
                monitor: Mutex::new(None),
                slice_frames,
                reads_own_conns: AtomicBool::new(true),
                claimed_since_end: AtomicBool::new(false),
            }),
        })
    }

    pub(crate) fn id(&self) -> u64 {
        self.inner.id
    }

    /// The socket type.
    pub fn kind(&self) -> SocketType {
        self.inner.kind
    }

    fn deadline(timeout_ms: i32) -> Option<Instant> {
        if timeout_ms < 0 {
            None
        } else {
            Some(Instant::now() + Duration::from_millis(timeout_ms as u64))
        }
    }

    /// Sends one frame; `SNDMORE` in `flags` marks more frames to follow. On failure the
    /// frame is handed back with the error (`Again` when it would block under DONTWAIT or
    /// SNDTIMEO, `Terminated`, `State`, `NotSupported`, `HostUnreachable`, `Interrupted`).
    pub fn send_msg(&self, mut msg: Msg, flags: i32) -> std::result::Result<(), (Error, Msg)> {
        msg.set_more(flags & SNDMORE != 0);
        if flags & SNDMORE == 0 {
            // Once per message, at its last frame: the hint is per thread and a
            // thread-local access costs a call (a ROUTER's routing-id frame paid one).
            crate::pipe::note_send();
        }
        // First try apart from the waiting loop, so that a send with room sets none of the
        // loop's state up (callgrind: fewer instructions per frame at 64 B). It repeats the
        // loop's first lines by hand: a shared helper returning an enum cost 7 % more
        // instructions per message and a larger frame again.
        {
            let mut st = self.inner.lock();
            if !st.closed && !self.inner.ctx.is_terminating() {
                let more = msg.more();
                match st.pattern.send(msg) {
                    Ok(()) => {
                        st.sending_more = more;
                        return Ok(());
                    }
                    Err((Error::Again, m)) => msg = m,
                    Err(e) => return Err(e),
                }
            }
        }
        self.send_msg_wait(msg, flags)
    }

    /// Sends each of `bodies` as a one-frame message, as that many `send` calls with
    /// DONTWAIT would, but under one lock and waking each reader at most once, at the end
    /// (see `pipe::defer_reader_wakes`). Stops at the first message that finds no room or
    /// fails; returns how many were queued. `Again` if the first found no room; another
    /// error only if the first failed. A batch stopped by a full queue arms `ZMQ_FD`, as a
    /// DONTWAIT send that finds no room does, also after a short count.
    pub fn send_many(&self, bodies: &[&[u8]]) -> Result<usize> {
        let sig = &self.inner.signal;
        let seen = sig.generation();
        crate::pipe::note_send();
        let sent = {
            let mut st = self.inner.lock();
            if st.closed {
                return Err(Error::NotSocket);
            }
            if self.inner.ctx.is_terminating() {
                return Err(Error::Terminated);
            }
            crate::pipe::defer_reader_wakes(|| {
                let mut n = 0;
                let slices = self.takes_slice(false);
                for body in bodies {
                    if slices && body.len() < crate::loan::LEND_MIN {
                        // As in `send`: built in its queue slot when the pattern can.
                        match st.pattern.send_slice(body, false) {
                            Some(Ok(())) => {
                                st.sending_more = false;
                                n += 1;
                                continue;
                            }
                            Some(Err(Error::Again)) | None => {}
                            Some(Err(e)) if n == 0 => return Err(e),
                            Some(Err(e)) => return Ok((n, Some(e))),
                        }
                    }
                    match st.pattern.send(Msg::copy_from(body)) {
                        Ok(()) => {
                            st.sending_more = false;
                            n += 1;
                        }
                        Err((e, _)) if n == 0 => return Err(e),
                        Err((e, _)) => return Ok((n, Some(e))),
                    }
                }
                Ok((n, None))
            })
        };
        // Each DONTWAIT send that finds no room arms ZMQ_FD, whether it was the first of
        // the batch or not (a caller may wait on the fd right after a short count).
        match sent {
            Err(Error::Again) | Ok((_, Some(Error::Again))) => sig.arm(seen),
            _ => {}
        }
        sent.map(|(n, _)| n)
    }

    /// Receives queued frames without blocking, as repeated `recv_msg(DONTWAIT)` calls
    /// would, but under one lock: each frame goes to `take`, which returns whether to go
    /// on (false: stop after this frame). Stops too when nothing more is queued. Returns
    /// how many frames `take` got; when nothing was queued, the first frame is waited for
    /// as a DONTWAIT `recv_msg` does (the connections are read once, `ZMQ_FD` armed) and
    /// `Again` is returned if none came. `take` runs under the socket's lock: it must not
    /// call into this socket. A batch may stop inside a multipart message; `rcvmore`
    /// says so, and the rest is received as usual.
    pub fn recv_many(&self, mut take: impl FnMut(Msg) -> bool) -> Result<usize> {
        crate::io::note_receive();
        let mut n = 0;
        {
            let mut st = self.inner.lock();
            if !st.closed && !self.inner.ctx.is_terminating() {
                loop {
                    match st.pattern.recv() {
                        Ok(m) => {
                            st.rcvmore = m.more();
                            n += 1;
                            if !take(m) {
                                return Ok(n);
                            }
                        }
                        Err(Error::Again) => break,
                        Err(e) if n == 0 => return Err(e),
                        Err(_) => return Ok(n),
                    }
                }
            }
        }
        if n != 0 {
            return Ok(n);
        }
        // Nothing queued: the waiting path of a DONTWAIT receive (its first look was ours).
        take(self.recv_msg_wait(DONTWAIT, None)?);
        Ok(1)
    }

    /// `send_msg` once the first try found no room (or the socket closed): retries until
    /// the frame goes, the deadline passes or the socket fails.
    #[inline(never)]
    fn send_msg_wait(&self, mut msg: Msg, flags: i32) -> std::result::Result<(), (Error, Msg)> {
        let sig = &self.inner.signal;
        let mut deadline: Option<Option<Instant>> = None;
        loop {
            let seen = sig.generation();
            let timeout = {
                let mut st = self.inner.lock();
                if st.closed {
                    return Err((Error::NotSocket, msg));
                }
                if self.inner.ctx.is_terminating() {
                    return Err((Error::Terminated, msg));
                }
                let more = msg.more();
                match st.pattern.send(msg) {
                    Ok(()) => {
                        st.sending_more = more;
                        return Ok(());
                    }
                    Err((Error::Again, m)) => msg = m,
                    Err(e) => return Err(e),
                }
                st.opts.sndtimeo
            };
            if flags & DONTWAIT != 0 || timeout == 0 {
                sig.arm(seen);
                return Err((Error::Again, msg));
            }
            if deadline.is_none() {
                // This thread now waits for room, not input: what its last receive left
                // claimed goes back to the I/O thread.
                self.end_idle_claims();
            }
            let d = *deadline.get_or_insert_with(|| Self::deadline(timeout));
            // Sleep without spinning: room at the HWM comes back only once the reader has
            // taken half the queue (the low-water mark), which is never soon, and a spin
            // here takes the core from the threads (reader, I/O) that make that room:
            // tcp PUSH/PULL 64 B at HWM 1000 went from 3.7M to 4.4M msg/s without it.
            match sig.wait(seen, d) {
                Wait::Changed => {}
                Wait::TimedOut => return Err((Error::Again, msg)),
                Wait::Interrupted => return Err((Error::Interrupted, msg)),
            }
        }
    }

    /// Receives one frame (check `more()` on it, or `rcvmore`). Blocks unless DONTWAIT,
    /// up to RCVTIMEO.
    ///
    /// When nothing is queued, the calling thread reads the socket's tcp/ipc connections
    /// itself (`io::assist`) before it gives up or sleeps, and again while it spins.
    pub fn recv_msg(&self, flags: i32) -> Result<Msg> {
        self.recv_msg_until(flags, None)
    }

    /// Receives one frame as `recv_msg` does, but waits at most `wait` instead of RCVTIMEO
    /// (`Again` after that). For callers with an event loop of their own: a short wait here
    /// catches a reply that is due within microseconds without a wake-up through the
    /// socket's `ZMQ_FD`. The wait is spun (up to 1 ms, reading the connections between
    /// looks; not with `FERROMQ_SPIN_US=0`), then slept: the caller chooses how long, and
    /// keeps its own policy of when a wait pays.
    pub fn recv_msg_within(&self, flags: i32, wait: Duration) -> Result<Msg> {
        self.recv_msg_until(flags, Some(Instant::now() + wait))
    }

    /// `recv_msg` into `out`, dropping what it held; on error `out` is untouched. Saves
    /// the moves of a returned frame (see `Queue::pop_into`); `zmq_msg_recv` uses it.
    pub fn recv_msg_into(&self, flags: i32, out: &mut Msg) -> Result<()> {
        self.recv_msg_until_into(flags, None, out)
    }

    /// `recv_msg_within` into `out`, as [`recv_msg_into`](Self::recv_msg_into).
    pub fn recv_msg_within_into(&self, flags: i32, wait: Duration, out: &mut Msg) -> Result<()> {
        self.recv_msg_until_into(flags, Some(Instant::now() + wait), out)
    }

    /// `recv_msg` with an optional deadline that replaces RCVTIMEO.
    fn recv_msg_until(&self, flags: i32, until: Option<Instant>) -> Result<Msg> {
        let mut m = Msg::new();
        self.recv_msg_until_into(flags, until, &mut m)?;
        Ok(m)
    }

    /// `recv_msg_until` into `out`.
    fn recv_msg_until_into(&self, flags: i32, until: Option<Instant>, out: &mut Msg) -> Result<()> {
        crate::io::note_receive();
        // First try apart from the waiting loop, as in `send_msg`: a queued frame is taken
        // without setting up the loop's state (connection list, self-served set, deadline).
        {
            let mut st = self.inner.lock();
            if !st.closed && !self.inner.ctx.is_terminating() {
                // A receive that would block next may watch an empty queue for a moment
                // before asking for a wake (see `pipe::spin_before_arm`). Not inside a
                // message: its frames were queued together, the next one is there.
                let blocking = flags & DONTWAIT == 0
                    && !st.rcvmore
                    && (until.is_some() || st.opts.rcvtimeo != 0);
                let got = if blocking {
                    crate::pipe::spin_before_arm(|| st.pattern.recv_into(out))
                } else {
                    st.pattern.recv_into(out)
                };
                match got {
                    Ok(()) => {
                        st.rcvmore = out.more();
                        return Ok(());
                    }
                    Err(Error::Again) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        *out = self.recv_msg_wait(flags, until)?;
        Ok(())
    }

    /// `recv_msg_until` once the first try found nothing (or the socket closed): reads the
    /// connections, spins, sleeps, retries.
    #[inline(never)]
    fn recv_msg_wait(&self, flags: i32, until: Option<Instant>) -> Result<Msg> {
        let sig = &self.inner.signal;
        let mut deadline: Option<Option<Instant>> = None;
        let mut sources = Vec::new();
        let mut pulled = false;
        let mut served: Option<Served> = None;
        let result = loop {
            let seen = sig.generation();
            let timeout = {
                let mut st = self.inner.lock();
                if st.closed {
                    break Err(Error::NotSocket);
                }
                if self.inner.ctx.is_terminating() {
                    break Err(Error::Terminated);
                }
                match st.pattern.recv() {
                    Ok(m) => {
                        st.rcvmore = m.more();
                        break Ok(m);
                    }
                    Err(Error::Again) => {}
                    Err(e) => break Err(e),
                }
                if !pulled {
                    sources = st.conn_sources(std::mem::take(&mut sources));
                }
                st.opts.rcvtimeo
            };
            if !pulled {
                // Once per call: fetch from the kernel before giving up or sleeping.
                pulled = true;
                pull_all(&sources);
                if sig.generation() != seen {
                    continue;
                }
            }
            // Found nothing: what this thread sends next answers what comes, not part of
            // a stream (see `io::note_wait`), whether it waits here or elsewhere.
            crate::io::note_wait();
            if flags & DONTWAIT != 0 || (until.is_none() && timeout == 0) {
                sig.arm(seen);
                break Err(Error::Again);
            }
            let d = *deadline.get_or_insert_with(|| until.or_else(|| Self::deadline(timeout)));
            let io = served.get_or_insert_with(|| self.claim(&sources));
            let waited = match until {
                // The caller picked this wait to avoid a wake-up through its event loop
                // (50-60 µs on a VM): spin it all, as it asked. The adaptive budget (at
                // most 50 µs) fell short of a 64 KiB round trip between two Node.js
                // processes, whose every reply then came through a sleep: 66-70 µs
                // one-way instead of 36-37 µs.
                Some(u) => {
                    let left = u.saturating_duration_since(Instant::now());
                    sig.block_spinning(seen, d, left.as_nanos() as u64, io)
                }
                None => sig.block(seen, d, io),
            };
            match waited {
                Wait::Changed => {}
                Wait::TimedOut => {
                    if until.is_some() {
                        // The caller waits on ZMQ_FD next: a message from now on signals it.
                        sig.arm(seen);
                    }
                    break Err(Error::Again);
                }
                Wait::Interrupted => break Err(Error::Interrupted),
            }
        };
        // Ends or leaves the claims (outside the socket's lock).
        drop(served);
        if result.is_err() {
            // Nothing received: the thread turns elsewhere (an event loop, a poll, other
            // work); it will not come back for the connections soon.
            end_idle_claims(&sources);
        }
        self.give_back_sources(sources);
        result
    }

    /// Sends a byte slice as one frame (copied).
    pub fn send(&self, data: &[u8], flags: i32) -> Result<()> {
        let more = flags & SNDMORE != 0;
        // A copied frame is built in its queue slot, not built here and moved down (a
        // ROUTER's routing id is never built). Another pattern, or a frame that must wait,
        // goes the general way.
        if self.takes_slice(more) && data.len() < crate::loan::LEND_MIN {
            if !more {
                // Once per message, as in `send_msg`.
                crate::pipe::note_send();
            }
            let mut st = self.inner.lock();
            if !st.closed && !self.inner.ctx.is_terminating() {
                match st.pattern.send_slice(data, more) {
                    Some(Ok(())) => {
                        st.sending_more = more;
                        return Ok(());
                    }
                    Some(Err(Error::Again)) | None => {}
                    Some(Err(e)) => return Err(e),
                }
            }
        }
        if data.len() >= crate::loan::LEND_MIN {
            // Lent, not copied: a connection that writes it before this returns never
            // copies it (see `loan`).
            return crate::loan::with_lent(data, |m| self.send_msg(m, flags).map_err(|(e, _)| e));
        }
        self.send_msg(Msg::copy_from(data), flags)
            .map_err(|(e, _)| e)
    }

    /// Whether this socket's pattern takes a frame as bytes (`Pattern::send_slice`) with
    /// `more` as given.
    #[inline]
    fn takes_slice(&self, more: bool) -> bool {
        let f = self.inner.slice_frames;
        if more {
            f.more
        } else {
            f.last
        }
    }

    /// Receives one frame's bytes.
    pub fn recv(&self, flags: i32) -> Result<Msg> {
        self.recv_msg(flags)
    }

    /// Receives all frames of one message.
    pub fn recv_multipart(&self, flags: i32) -> Result<Vec<Msg>> {
        let mut parts = vec![self.recv_msg(flags)?];
        while parts.last().is_some_and(|m| m.more()) {
            parts.push(self.recv_msg(flags & !DONTWAIT)?);
        }
        Ok(parts)
    }

    /// Sends all frames as one message.
    pub fn send_multipart<I, T>(&self, parts: I, flags: i32) -> Result<()>
    where
        I: IntoIterator<Item = T>,
        T: Into<Msg>,
    {
        let mut it = parts.into_iter().peekable();
        while let Some(p) = it.next() {
            let f = if it.peek().is_some() {
                flags | SNDMORE
            } else {
                flags & !SNDMORE
            };
            self.send_msg(p.into(), f).map_err(|(e, _)| e)?;
        }
        Ok(())
    }

    /// ZMQ_POLLIN / ZMQ_POLLOUT readiness now. Also re-arms the `fd()` edge. Without
    /// POLLIN on a socket that reads, the calling thread counts as about to wait for
    /// input: its next message to a tcp/ipc connection is written at once rather than
    /// batched as part of a stream.
    ///
    /// Finding nothing to receive, it gives the connections the thread's last receive left
    /// claimed back to the I/O thread: the caller is about to wait on `fd()`, which only
    /// the I/O thread's reads make readable.
    pub fn events(&self) -> Result<i16> {
        let ev = self.events_marking(true)?;
        if ev & POLLIN == 0 && self.reads_input() {
            self.end_idle_claims();
        }
        Ok(ev)
    }

    /// False for the socket types that never receive (PUB, PUSH): their POLLIN is always
    /// clear, and asking about it is no wait for input.
    fn reads_input(&self) -> bool {
        !matches!(self.kind(), SocketType::Pub | SocketType::Push)
    }

    /// `events()` for `zmq_poll`, which claims the socket's connections itself before it
    /// sleeps: claims left in place stay.
    pub fn events_polled(&self) -> Result<i16> {
        self.events_marking(true)
    }

    /// How many of this socket's connections hold a claim left in place by a wait of
    /// this thread's that is over (see `ConnHandle::release`). For tests.
    #[doc(hidden)]
    pub fn idle_claims(&self) -> usize {
        self.sum_over_conns(|c| u64::from(c.has_idle_claim())) as usize
    }

    /// Writes on this socket's connections that held bytes back for the next one, and
    /// how many connections hold such bytes now (see `io::tail_hold`). For tests.
    #[doc(hidden)]
    pub fn held_tail(&self) -> (u64, usize) {
        let conns = self.conns_by(|p| p.out.reader_conn());
        let looks = conns.iter().map(|c| c.held_tail());
        looks.fold((0, 0), |(w, n), (writes, held)| {
            (w + writes, n + usize::from(held))
        })
    }

    /// How many reads that took bytes the I/O thread made on this socket's connections
    /// while a receiving thread had them claimed (see `ConnHandle::claim`). For tests.
    #[doc(hidden)]
    pub fn claimed_io_reads(&self) -> u64 {
        self.sum_over_conns(ConnHandle::claimed_io_reads)
    }

    /// How many reads by the I/O thread returned bytes on this socket's tcp/ipc
    /// connections, claimed or not. For tests.
    #[doc(hidden)]
    pub fn io_thread_reads(&self) -> u64 {
        self.sum_over_conns(ConnHandle::io_reads)
    }

    /// `count` summed over this socket's tcp/ipc connections (also those above the
    /// number its receive reads itself).
    fn sum_over_conns(&self, count: impl Fn(&ConnHandle) -> u64) -> u64 {
        let conns = self.conns_by(|p| p.inq.writer_conn());
        conns.iter().map(|c| count(c)).sum()
    }

    /// This socket's connections, as `conn` finds one on each pipe (for tests); looked
    /// up outside the socket's lock.
    fn conns_by(&self, conn: impl Fn(&Pipe) -> Option<Weak<ConnHandle>>) -> Vec<Arc<ConnHandle>> {
        let conns: Vec<_> = {
            let st = self.inner.lock();
            st.pipes.values().filter_map(|p| conn(p)).collect()
        };
        conns.iter().filter_map(Weak::upgrade).collect()
    }

    /// `Served::claim` of this socket's connections (`sources`), noted for
    /// `end_idle_claims`.
    fn claim(&self, sources: &[Weak<ConnHandle>]) -> Served {
        if !sources.is_empty() {
            self.inner.claimed_since_end.store(true, Ordering::Relaxed);
        }
        Served::claim(sources)
    }

    /// Gives the connections a wait of this thread's left claimed (it reads them itself
    /// while it waits, and for up to 20 ms after) back to the I/O thread at once: for a
    /// caller that turns to waiting another way (`zmq_poll` on the socket's ZMQ_FD, a
    /// poll that found nothing).
    pub fn end_idle_claims(&self) {
        if !self.inner.claimed_since_end.swap(false, Ordering::Relaxed) {
            return;
        }
        let sources = {
            let mut st = self.inner.lock();
            if st.closed {
                return;
            }
            st.conn_sources(Vec::new())
        };
        end_idle_claims(&sources);
        self.give_back_sources(sources);
    }

    /// `events()`; `input_wanted`: the caller asks about POLLIN (not a wait for POLLOUT
    /// only), so finding none marks the thread as waiting for input.
    fn events_marking(&self, input_wanted: bool) -> Result<i16> {
        self.inner.signal.rearm();
        let ev = self.events_now(None)?;
        self.note_no_input(ev, input_wanted);
        Ok(ev)
    }

    /// Events `ev` have no POLLIN that the caller (`input_wanted`) asked about: nothing to
    /// read, as before a wait on ZMQ_FD (see `io::note_wait`). Not for a socket that never
    /// reads: a send loop asking for POLLOUT is no wait.
    #[inline]
    fn note_no_input(&self, ev: i16, input_wanted: bool) {
        if input_wanted && ev & POLLIN == 0 && self.reads_input() {
            crate::io::note_wait();
        }
    }

    /// `events()` without draining or arming the descriptor while the application has
    /// not been given it (`fd()`): for a caller that waits on the descriptor only after a
    /// look with `events()` (`zmq_poll` finding a socket ready returns at once). Once the
    /// application holds it, this is `events()`: libzmq's `zmq_poll` reads ZMQ_EVENTS of
    /// every socket, and a program waiting on ZMQ_FD may rely on that.
    ///
    /// `input_wanted`: the caller asks about POLLIN and will not sleep (`zmq_poll` with
    /// timeout 0 in an event loop). Finding none, the thread counts as waiting for input
    /// (see `events`): what its last large write held back goes out now, not at the I/O
    /// thread's timer a millisecond later.
    pub fn events_peek(&self, input_wanted: bool) -> Result<i16> {
        if self.inner.signal.fd_exposed() {
            return self.events_polled();
        }
        let ev = self.events_now(None)?;
        self.note_no_input(ev, input_wanted);
        Ok(ev)
    }

    /// Waits until `events()` has a bit of `mask` or `until` passes (None: no limit), and
    /// returns `events()` then (0 bits of `mask` on a timeout). Meanwhile this thread reads
    /// the socket's connections itself, as a blocking receive does, instead of sleeping
    /// until the I/O thread has read them: `zmq_poll` on one socket costs no more wake-ups
    /// than `zmq_recv`. Errors: `Interrupted` (a signal), `Terminated`, `NotSocket`.
    pub fn wait_events(&self, mask: i16, until: Option<Instant>) -> Result<i16> {
        let ev = self.events_marking(mask & POLLIN != 0)?;
        if ev & mask != 0 {
            return Ok(ev);
        }
        self.wait_events_slow(mask, until)
    }

    /// `wait_events` once the first look found nothing.
    #[inline(never)]
    fn wait_events_slow(&self, mask: i16, until: Option<Instant>) -> Result<i16> {
        let sig = &self.inner.signal;
        // `events()` armed `fd()`; a change while this thread waits (its own reads too)
        // must not write it. The final `events()` below drains and re-arms it.
        sig.disarm();
        let mut sources = Vec::new();
        let mut pulled = false;
        let mut served: Option<Served> = None;
        let mut timed_out = false;
        let result = loop {
            let seen = sig.generation();
            match self.events_now(Some(&mut sources)) {
                Ok(ev) if ev & mask != 0 => break Ok(()),
                Ok(_) => {}
                Err(e) => break Err(e),
            }
            if !pulled {
                pulled = true;
                pull_all(&sources);
                if sig.generation() != seen {
                    continue;
                }
            }
            let io = served.get_or_insert_with(|| self.claim(&sources));
            match sig.block(seen, until, io) {
                Wait::Changed => {}
                Wait::TimedOut => {
                    timed_out = true;
                    break Ok(());
                }
                Wait::Interrupted => break Err(Error::Interrupted),
            }
        };
        drop(served);
        if timed_out || result.is_err() {
            end_idle_claims(&sources);
        }
        self.give_back_sources(sources);
        result.and_then(|()| self.events_marking(mask & POLLIN != 0))
    }

    /// Reads this socket's connections from the calling thread (as a receive that finds
    /// nothing does) and claims them for its coming sleep (`PollServe`). The bool: the
    /// socket's state moved meanwhile (look at `events()` before sleeping). The claims are
    /// given back when the `Served` is dropped (see `ConnHandle::release`), which must
    /// happen without this socket's lock held.
    /// The mark: this socket's signal and its generation after the reads (see `mark`).
    pub(crate) fn pull_and_claim(&self) -> (bool, Served, SignalMark) {
        let sig = &self.inner.signal;
        let seen = sig.generation();
        let sources = {
            let mut st = self.inner.lock();
            if st.closed {
                Vec::new()
            } else {
                st.conn_sources(Vec::new())
            }
        };
        pull_all(&sources);
        let served = self.claim(&sources);
        self.give_back_sources(sources);
        let now = sig.generation();
        (now != seen, served, (sig.clone(), now))
    }

    /// This socket's signal and its generation now: a waiter that looked at `events()`
    /// before taking it knows that anything it saw not yet moves the generation later.
    pub(crate) fn mark(&self) -> SignalMark {
        let sig = &self.inner.signal;
        (sig.clone(), sig.generation())
    }

    /// Hands a sources buffer (from `conn_sources`) back to the socket for the next wait,
    /// so that waits do not allocate. Takes the socket's lock: call it without holding it.
    fn give_back_sources(&self, mut sources: Vec<Weak<ConnHandle>>) {
        if sources.capacity() > 0 {
            sources.clear();
            self.inner.lock().sources_buf = sources;
        }
    }

    /// Readiness without re-arming `fd()`. When nothing is there to receive, also fills
    /// `sources` (if given and empty) with the connections a waiting thread may read itself.
    fn events_now(&self, sources: Option<&mut Vec<Weak<ConnHandle>>>) -> Result<i16> {
        let mut st = self.inner.lock();
        if st.closed {
            return Err(Error::NotSocket);
        }
        if self.inner.ctx.is_terminating() {
            return Err(Error::Terminated);
        }
        let mut ev = 0;
        if st.pattern.can_recv() {
            ev |= POLLIN;
        }
        if st.pattern.can_send() {
            ev |= POLLOUT;
        }
        if let Some(sources) = sources.filter(|s| ev & POLLIN == 0 && s.is_empty()) {
            *sources = st.conn_sources(std::mem::take(sources));
        }
        Ok(ev)
    }

    /// The file descriptor for ZMQ_FD: readable when `events()` may have changed since
    /// it was last read, and after a send or receive that failed with `Again`.
    pub fn fd(&self) -> i32 {
        // A caller that waits on it relies on the I/O thread's reads.
        self.end_idle_claims();
        self.inner.signal.expose_fd()
    }

    /// The same descriptor, for a waiter that reads `events()` before each wait (which
    /// arms it): unlike `fd()`, an `Again` need not arm it from now on.
    pub fn wait_fd(&self) -> i32 {
        self.inner.signal.fd()
    }

    /// Binds to an endpoint (`tcp://`, `ipc://`, `inproc://`).
    pub fn bind(&self, endpoint: &str) -> Result<()> {
        let ep = Endpoint::parse(endpoint)?;
        self.check_open()?;
        if let Endpoint::Tcp {
            source: Some(src), ..
        } = &ep
        {
            // libzmq resolves a bind's source part as a local address (ENODEV, EINVAL),
            // then binds the destination alone.
            let (host, port) = split_host_port(src).ok_or(Error::InvalidArgument)?;
            tcp::bind_addr(host, port, &self.inner.options())?;
        }
        let resolved = match &ep {
            Endpoint::Inproc(name) => {
                inproc::bind(&self.inner, name)?;
                (
                    endpoint.to_string(),
                    Attachment::Inproc { name: name.clone() },
                )
            }
            _ => {
                let reactor = self.inner.ctx.reactor()?;
                let opts = self.inner.options();
                let (token, resolved) = reactor.bind(BindRequest {
                    socket: self.inner.clone(),
                    endpoint: ep.clone(),
                    opts,
                })?;
                (resolved, Attachment::Io { token, pipe: None })
            }
        };
        let mut st = self.inner.lock();
        st.opts.last_endpoint = resolved.0.clone();
        st.binds
            .push((endpoint.to_string(), resolved.0, resolved.1));
        Ok(())
    }

    /// Connects to an endpoint. tcp/ipc connect in the background and reconnect with
    /// backoff; inproc may connect before the peer binds.
    pub fn connect(&self, endpoint: &str) -> Result<()> {
        let ep = Endpoint::parse(endpoint)?;
        self.check_open()?;
        let att = match &ep {
            Endpoint::Inproc(name) => {
                let pipe = inproc::connect(&self.inner, name)?;
                Attachment::InprocConnect { pipe }
            }
            _ => {
                if let Endpoint::Tcp { .. } = &ep {
                    // libzmq's check alone: an address that passes it but cannot be
                    // reached (port 0 or past 65535, no host) is tried and retried.
                    let addr = endpoint.split_once("://").map_or("", |(_, a)| a);
                    if !tcp::plausible_connect_address(addr) {
                        return Err(Error::InvalidArgument);
                    }
                }
                let reactor = self.inner.ctx.reactor()?;
                let opts = self.inner.options();
                let (token, pipe) = reactor.connect(ConnectRequest {
                    socket: self.inner.clone(),
                    endpoint: ep.clone(),
                    endpoint_str: endpoint.to_string(),
                    opts,
                })?;
                Attachment::Io { token, pipe }
            }
        };
        let mut st = self.inner.lock();
        st.opts.last_endpoint = endpoint.to_string();
        st.connects.push((endpoint.to_string(), att));
        // ZMQ_CONNECT_ROUTING_ID names the peer of one connect, as in libzmq (which takes
        // it when the connect's pipe is attached): the next connect's peer gets its own.
        st.opts.connect_routing_id = None;
        Ok(())
    }

    /// Stops listening on a bound endpoint (ENOENT if it was not bound; EINVAL or
    /// EPROTONOSUPPORT for a string that is no endpoint, see `check_endpoint_to_end`).
    pub fn unbind(&self, endpoint: &str) -> Result<()> {
        self.check_open()?;
        check_endpoint_to_end(endpoint)?;
        // A numeric tcp address names the endpoint its bind reports (with ZMQ_IPV6,
        // 127.0.0.1 is bound as [::ffff:127.0.0.1]).
        let numeric = match Endpoint::parse(endpoint) {
            Ok(Endpoint::Tcp {
                host,
                port,
                source: None,
            }) => tcp::bound_name(&host, &port, &self.inner.options()),
            _ => None,
        };
        let att = {
            let mut st = self.inner.lock();
            let pos = st
                .binds
                .iter()
                // By the resolved address only, as libzmq 4.3.4 (probed): "tcp://*:5555",
                // "tcp://127.0.0.1:*" and "ipc://*" name no endpoint there (ENOENT), even
                // when given to bind as such; "tcp://0.0.0.0:5555" does.
                .position(|(_, resolved, _)| {
                    resolved == endpoint || numeric.as_deref() == Some(resolved.as_str())
                })
                .ok_or(Error::NoEntry)?;
            st.binds.remove(pos).2
        };
        self.undo(att);
        Ok(())
    }

    /// Drops a connection made with `connect` (ENOENT if there is none; EINVAL or
    /// EPROTONOSUPPORT for a string that is no endpoint, see `check_endpoint_to_end`).
    pub fn disconnect(&self, endpoint: &str) -> Result<()> {
        self.check_open()?;
        check_endpoint_to_end(endpoint)?;
        let att = {
            let mut st = self.inner.lock();
            let pos = st
                .connects
                .iter()
                .position(|(given, _)| given == endpoint)
                .ok_or(Error::NoEntry)?;
            st.connects.remove(pos).1
        };
        self.undo(att);
        Ok(())
    }

    fn undo(&self, att: Attachment) {
        match att {
            Attachment::Inproc { name } => inproc::unbind(&self.inner, &name),
            Attachment::InprocConnect { pipe } => {
                inproc::cancel_pending(&self.inner, pipe);
                self.inner.drop_pipe(pipe);
            }
            Attachment::Io { token, pipe } => {
                // Stop routing to the peer now, not when the I/O thread gets to it; what
                // came from it and was not read yet goes too (libzmq terminates the pipe
                // without delay: test_spec_pushpull receives nothing more from it).
                if let Some(p) = pipe {
                    self.inner.drop_pipe(p);
                }
                if let Ok(r) = self.inner.ctx.reactor() {
                    r.remove(token);
                }
            }
        }
    }

    fn check_open(&self) -> Result<()> {
        if self.inner.lock().closed {
            return Err(Error::NotSocket);
        }
        if self.inner.ctx.is_terminating() {
            return Err(Error::Terminated);
        }
        Ok(())
    }

    /// Sets an option by libzmq number; `val` is the raw bytes libzmq would receive.
    pub fn set_option(&self, opt: i32, val: &[u8]) -> Result<()> {
        let mut st = self.inner.lock();
        if st.closed {
            return Err(Error::NotSocket);
        }
        if opt == id::INVERT_MATCHING {
            // Generic (readable on every socket), acted on by the pub/sub patterns.
            st.opts.set(opt, val)?;
            let _ = st.pattern.set_option(opt, val);
            return Ok(());
        }
        if opt == id::ROUTER_RAW && self.inner.kind == SocketType::Router {
            // Applies to the connections made after it, as in libzmq. Its pattern becomes a
            // STREAM's, so one that already has peers is refused (libzmq takes it and goes
            // on routing those peers' ZMTP messages in the raw socket's way).
            if crate::options::pattern_bool_value(val)? && !st.opts.raw_socket {
                if !st.pipes.is_empty() {
                    return Err(Error::InvalidArgument);
                }
                st.pattern = crate::pattern::router_raw();
                st.opts.raw_socket = true;
            }
            return Ok(());
        }
        if opt == id::CONNECT_ROUTING_ID
            && !matches!(
                self.inner.kind,
                SocketType::Router | SocketType::Stream | SocketType::Rep
            )
        {
            return Err(Error::InvalidArgument);
        }
        if let Some(r) = st.pattern.set_option(opt, val) {
            return r;
        }
        if st.opts.set(opt, val)? {
            // The pipes there are follow a new watermark, as in libzmq (a queue between
            // two sockets is their two parts added up, see `pipe::combined_hwm`).
            if opt == id::SNDHWM || opt == id::RCVHWM {
                let (snd, rcv) = (st.opts.sndhwm as usize, st.opts.rcvhwm as usize);
                for p in st.pipes.values() {
                    if opt == id::SNDHWM {
                        p.out.set_writer_part(snd);
                    } else {
                        p.inq.set_reader_part(rcv);
                    }
                }
            }
            return Ok(());
        }
        Err(Error::InvalidArgument)
    }

    /// ZMQ_LAST_ENDPOINT as a string: what the last `bind` resolved to (a wildcard port
    /// replaced by the one the kernel chose, `ipc://*` by the path made) or the last
    /// `connect`'s endpoint; "" before either. NotSocket once closed.
    pub fn last_endpoint(&self) -> Result<String> {
        let st = self.inner.lock();
        if st.closed {
            return Err(Error::NotSocket);
        }
        Ok(st.opts.last_endpoint.clone())
    }

    /// Reads an option by libzmq number.
    pub fn get_option(&self, opt: i32) -> Result<OptionValue> {
        if opt == id::EVENTS {
            return self.events().map(|e| OptionValue::Int(e as i32));
        }
        let st = self.inner.lock();
        if st.closed {
            return Err(Error::NotSocket);
        }
        match opt {
            id::TYPE => return Ok(OptionValue::Int(self.inner.kind.as_raw())),
            id::RCVMORE => return Ok(OptionValue::Int(st.rcvmore as i32)),
            id::FD => {
                drop(st);
                return Ok(OptionValue::Int(self.fd()));
            }
            _ => {}
        }
        if let Some(v) = st.pattern.get_option(opt) {
            return Ok(v);
        }
        st.opts.get(opt).ok_or(Error::InvalidArgument)
    }

    /// Convenience: sets an `int` option.
    pub fn set_int(&self, opt: i32, v: i32) -> Result<()> {
        self.set_option(opt, &v.to_ne_bytes())
    }

    /// Convenience: reads an `int` option.
    pub fn get_int(&self, opt: i32) -> Result<i32> {
        match self.get_option(opt)? {
            OptionValue::Int(v) => Ok(v),
            _ => Err(Error::InvalidArgument),
        }
    }

    /// Starts (or with `None`, stops) publishing monitor events for `events` (a bit mask of
    /// ZMQ_EVENT_*, at most 0xFFFF: `InvalidArgument` beyond) on a PAIR socket bound at the
    /// given inproc endpoint.
    pub fn monitor(&self, endpoint: Option<&str>, events: u32) -> Result<()> {
        self.check_open()?;
        // Events past the 16-bit set have no place in the version-1 event frame; libzmq
        // refuses them, stopping the monitor (NULL endpoint) or not.
        if events > 0xFFFF {
            return Err(Error::InvalidArgument);
        }
        monitor::start(&self.inner, endpoint, events)
    }

    /// Closes the socket: pending outbound messages are kept for up to LINGER ms (forever
    /// with -1) while the I/O thread delivers them; the call itself does not block.
    pub fn close(&self) {
        let (linger, pipes, binds, connects) = {
            let mut st = self.inner.lock();
            if st.closed {
                return;
            }
            st.closed = true;
            (
                st.opts.linger,
                std::mem::take(&mut st.pipes),
                std::mem::take(&mut st.binds),
                std::mem::take(&mut st.connects),
            )
        };
        let mut has_listeners = false;
        for (_, _, att) in binds {
            match &att {
                Attachment::Inproc { name } => inproc::unbind(&self.inner, name),
                Attachment::Io { .. } => has_listeners = true,
                Attachment::InprocConnect { .. } => {}
            }
        }
        let reactor = self.inner.ctx.reactor_if_started();
        if let Some(r) = &reactor {
            r.close_socket(self.inner.clone(), linger, has_listeners);
        }
        // Connects need nothing more: inproc ones are among `pipes`, tcp/ipc connectors
        // were stopped (or set to linger) by close_socket.
        drop(connects);
        for (_, p) in pipes {
            // Inproc peers keep what was already queued for them (as libzmq's do, which is
            // how a monitor's last event survives its socket); io pipes are flushed by the
            // reactor within the linger period, or dropped with their connection.
            p.out.close_writer();
            p.inq.close_reader();
        }
        if reactor.is_none() {
            monitor::socket_closed(&self.inner);
        }
        self.inner.signal.notify();
        self.inner.ctx.socket_closed(self.inner.id);
    }

    /// True when the socket type can receive a `recv` now without blocking.
    pub fn rcvmore(&self) -> bool {
        self.inner.lock().rcvmore
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.close();
    }
}
