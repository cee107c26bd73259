//! The I/O thread's loop: listeners, connectors (with reconnect backoff), connections,
//! timers, and the command queue application threads feed.

use super::assist::ConnHandle;
use super::conn::{Close, Conn};
use super::stream::{Listener, Stream};
use super::tail_hold::HOLD_FLUSH_AFTER;
use super::thread_setup::{block_signals, IoThreadOptions};
use super::{BindRequest, ConnectRequest};
use crate::error::{Error, Result};
use crate::monitor::event;
use crate::options::Options;
use crate::pattern::PeerMeta;
use crate::pipe::Pipe;
use crate::signal::{Signal, Wait};
use crate::socket::SocketShared;
use crate::transport::socks::{self, SocksClient};
use crate::transport::{adopt_listener, ipc, tcp, Endpoint};
use mio::{Events, Interest, Poll, Token};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const WAKER: Token = Token(0);

enum Command {
    Bind {
        token: usize,
        listener: Listener,
        socket: Arc<SocketShared>,
        endpoint: String,
        opts: Options,
    },
    Connect {
        token: usize,
        req: ConnectRequest,
        pipe: Option<(Arc<Pipe>, u64)>,
    },
    Remove {
        token: usize,
        ack: std::sync::mpsc::Sender<()>,
    },
    CloseSocket {
        socket: Arc<SocketShared>,
        linger: i32,
        ack: Option<std::sync::mpsc::Sender<()>>,
    },
    Stop,
}

/// Initial room in the scheduled-connections list and its swap partner: enough for a
/// busy context's connections without growing (growing is a one-time cost, but it would
/// fall on whichever thread first outruns the I/O thread).
const SCHEDULED_CAP: usize = 64;

/// State shared between the I/O thread and application threads.
pub(crate) struct ReactorShared {
    waker: mio::Waker,
    /// The poller's registry, for connections whose interest changes outside the I/O
    /// thread (an application thread's claim, or its flush meeting a full socket).
    pub(super) registry: mio::Registry,
    commands: Mutex<Vec<Command>>,
    scheduled: Mutex<Vec<usize>>,
    next_token: AtomicUsize,
    thread: Mutex<Option<JoinHandle<()>>>,
    stop_sent: std::sync::atomic::AtomicBool,
    /// Set by the I/O thread when it has finished (all lingering data sent or dropped).
    exited: std::sync::atomic::AtomicBool,
    done: Signal,
    /// The process that started the I/O thread: a child forked from it has no such thread
    /// (see `forked`).
    pid: u32,
}

impl ReactorShared {
    /// Starts the I/O thread, named and scheduled as `thread` says.
    pub(crate) fn start(thread: IoThreadOptions) -> std::io::Result<Arc<ReactorShared>> {
        let poll = Poll::new()?;
        let waker = mio::Waker::new(poll.registry(), WAKER)?;
        let registry = poll.registry().try_clone()?;
        let shared = Arc::new(ReactorShared {
            waker,
            registry,
            commands: Mutex::new(Vec::new()),
            scheduled: Mutex::new(Vec::with_capacity(SCHEDULED_CAP)),
            next_token: AtomicUsize::new(1),
            thread: Mutex::new(None),
            stop_sent: std::sync::atomic::AtomicBool::new(false),
            exited: std::sync::atomic::AtomicBool::new(false),
            done: Signal::new()?,
            pid: std::process::id(),
        });
        let s2 = shared.clone();
        let handle = std::thread::Builder::new()
            .name(thread.thread_name())
            .spawn(move || {
                block_signals();
                thread.apply_to_current_thread();
                let shared = s2.clone();
                Reactor::new(poll, s2).run();
                shared.exited.store(true, Ordering::SeqCst);
                shared.done.notify();
            })?;
        *shared.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
        Ok(shared)
    }

    fn lock_cmds(&self) -> MutexGuard<'_, Vec<Command>> {
        self.commands.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn command(&self, c: Command) {
        if self.forked() {
            // Nothing would run it, and the poller and its waker are the parent's.
            return;
        }
        self.lock_cmds().push(c);
        let _ = self.waker.wake();
    }

    /// True in a child forked from the process that started the I/O thread: the child
    /// has no I/O thread, so waiting for one would hang. As libzmq, it may still close
    /// the sockets and end the context it inherited (zmq_ctx_term gives EINTR).
    pub(crate) fn forked(&self) -> bool {
        std::process::id() != self.pid
    }

    fn token(&self) -> usize {
        self.next_token.fetch_add(1, Ordering::Relaxed)
    }

    /// Asks the I/O thread to look at connection `token` (its pipe changed).
    pub(crate) fn schedule(&self, token: usize) {
        // No `forked` look here: it is a getpid per wake on the message path, and in a
        // forked child a wake only reaches the parent's poller as a spurious one.
        let mut s = self.scheduled.lock().unwrap_or_else(|e| e.into_inner());
        let first = s.is_empty();
        // A connection already last in line needs no second entry; skipping it keeps the
        // list (and its capacity) small while the I/O thread is behind.
        if s.last() != Some(&token) {
            s.push(token);
        }
        drop(s);
        if first {
            let _ = self.waker.wake();
        }
    }

    /// Creates the listener now (so errors are synchronous) and hands it to the I/O thread.
    /// Returns the token and the resolved endpoint (for ZMQ_LAST_ENDPOINT).
    pub(crate) fn bind(&self, req: BindRequest) -> Result<(usize, String)> {
        let (listener, endpoint) = match &req.endpoint {
            Endpoint::Tcp { host, port, .. } => {
                let std_l = if req.opts.use_fd >= 0 {
                    // ZMQ_USE_FD: the caller's listening socket; the address is not even
                    // resolved, as in libzmq (the endpoint is the socket's own).
                    let families = [libc::AF_INET, libc::AF_INET6];
                    std::net::TcpListener::from(adopt_listener(req.opts.use_fd, &families)?)
                } else {
                    tcp::listen(tcp::bind_addr(host, port, &req.opts)?, &req.opts)?
                };
                std_l.set_nonblocking(true)?;
                let local = std_l.local_addr()?;
                let l = mio::net::TcpListener::from_std(std_l);
                (Listener::Tcp(l), tcp::endpoint_string(&local))
            }
            Endpoint::Ipc(path) if req.opts.use_fd >= 0 => {
                // ZMQ_USE_FD: the caller's listening socket, and its file (if any) stays
                // the caller's: not removed at bind or close, as in libzmq. The endpoint
                // is the socket's own address, whatever the bind named (libzmq 4.3.4).
                let fd = adopt_listener(req.opts.use_fd, &[libc::AF_UNIX])?;
                let std_l = std::os::unix::net::UnixListener::from(fd);
                std_l.set_nonblocking(true)?;
                let own = std_l.local_addr().ok().and_then(|a| ipc::address_path(&a));
                let l = mio::net::UnixListener::from_std(std_l);
                let endpoint = ipc::endpoint_string(own.as_deref().unwrap_or(path));
                (Listener::Unix(l, String::new()), endpoint)
            }
            Endpoint::Ipc(path) => {
                let path = if path == "*" {
                    ipc::wildcard_path()
                } else {
                    path.clone()
                };
                // Whatever is at the path (a stale socket file from an earlier run, or a
                // file made to reserve the name) would make bind fail: libzmq 4.3.4 removes
                // it, whatever it is, and so do we.
                if !path.starts_with('@') {
                    let _ = std::fs::remove_file(&path);
                }
                let (l, owned_path) = match path.strip_prefix('@') {
                    // Linux abstract namespace: no file to create or remove.
                    Some(name) => (ipc::bind_abstract(name)?, String::new()),
                    None => (mio::net::UnixListener::bind(&path)?, path.clone()),
                };
                (Listener::Unix(l, owned_path), ipc::endpoint_string(&path))
            }
            Endpoint::Inproc(_) => return Err(Error::InvalidArgument),
        };
        let token = self.token();
        self.command(Command::Bind {
            token,
            listener,
            socket: req.socket,
            endpoint: endpoint.clone(),
            opts: req.opts,
        });
        Ok((token, endpoint))
    }

    /// Starts connecting in the background. Unless ZMQ_IMMEDIATE is set, the socket gets its
    /// pipe at once so messages can be queued before the connection is up.
    pub(crate) fn connect(&self, req: ConnectRequest) -> Result<(usize, Option<u64>)> {
        let pipe = if req.opts.immediate {
            None
        } else {
            let (sock_end, io_end) = Pipe::pair(req.opts.sndhwm as usize, req.opts.rcvhwm as usize);
            let sock_id = sock_end.id;
            // With CONNECT_ROUTING_ID the peer is addressable at once, as in libzmq.
            let meta = req.opts.connect_routing_id.clone().map(|rid| PeerMeta {
                socket_type: req.socket.kind,
                routing_id: None,
                connect_routing_id: Some(rid),
                props: None,
            });
            if !req.socket.attach_pipe(sock_end, meta.as_ref()) {
                return Err(Error::NotSocket);
            }
            Some((io_end, sock_id))
        };
        let token = self.token();
        let sock_pipe = pipe.as_ref().map(|(_, id)| *id);
        self.command(Command::Connect { token, req, pipe });
        Ok((token, sock_pipe))
    }

    /// Closes a listener or connector (unbind/disconnect).
    pub(crate) fn remove(&self, token: usize) {
        // Wait until the listener's port is released (or the connection dropped), so the
        // endpoint can be bound again at once.
        if self.forked() {
            return;
        }
        let (ack, done) = std::sync::mpsc::channel();
        self.command(Command::Remove { token, ack });
        let _ = done.recv();
    }

    /// The socket closed: stop its listeners and connectors; its connections deliver what
    /// is queued within `linger` ms (-1 = no limit) and then close.
    /// The socket's monitor is stopped once its endpoints are closed (CLOSED events first,
    /// then MONITOR_STOPPED, as libzmq orders them).
    pub(crate) fn close_socket(&self, socket: Arc<SocketShared>, linger: i32, has_listeners: bool) {
        // A socket with tcp/ipc listeners waits until their ports are released, so they can
        // be bound again at once. (Never from the I/O thread itself: the sockets it closes,
        // monitors, have no listeners.)
        if has_listeners && !self.forked() {
            let (ack, done) = std::sync::mpsc::channel();
            self.command(Command::CloseSocket {
                socket,
                linger,
                ack: Some(ack),
            });
            let _ = done.recv();
        } else {
            self.command(Command::CloseSocket {
                socket,
                linger,
                ack: None,
            });
        }
    }

    /// Context termination: waits for lingering connections, then stops the thread.
    /// A signal interrupts the wait (`Interrupted`); calling again resumes it. In a forked
    /// child it does not wait and gives `Interrupted` (libzmq's EINTR there).
    pub(crate) fn drain_and_stop(&self) -> Result<()> {
        if self.forked() {
            return Err(Error::Interrupted);
        }
        if !self.stop_sent.swap(true, Ordering::SeqCst) {
            self.command(Command::Stop);
        }
        loop {
            let seen = self.done.generation();
            if self.exited.load(Ordering::SeqCst) {
                break;
            }
            if self.done.wait(seen, None) == Wait::Interrupted {
                return Err(Error::Interrupted);
            }
        }
        let h = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = h {
            let _ = h.join();
        }
        Ok(())
    }
}

struct ListenerEntry {
    listener: Listener,
    socket: Arc<SocketShared>,
    endpoint: String,
    opts: Options,
}

struct Connector {
    req: ConnectRequest,
    /// (the I/O end of the socket's pipe, the socket-side pipe id); kept across reconnects.
    pipe: Option<(Arc<Pipe>, u64)>,
    ivl: i32,
    conn: Option<usize>,
    /// The socket closed with LINGER != 0: keep trying to deliver until this deadline
    /// (None = no limit) or until the pipe is empty.
    lingering: Option<Option<Instant>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    Reconnect(usize),
    Handshake(usize),
    Heartbeat(usize),
    /// A PING's HEARTBEAT_TIMEOUT ends: the connection closes if nothing came since.
    HeartbeatTimeout(usize),
    Linger(usize),
    /// A connection whose writes found the kernel full looks whether its peer stalled.
    ReleaseOutput(usize),
    /// A connection whose writes held bytes back for the next one (`tail_hold`) writes
    /// them if its stream has stopped.
    HeldTail(usize),
    /// A connection whose reads were left to its receiving thread (`Conn::read_deferred`)
    /// reads what that thread has not come back for.
    ReadDeferred(usize),
    /// A claim left in place by an application thread goes back to the poller once that
    /// thread has not held it for a while (`Conn::release_claim`).
    ClaimIdle(usize),
    /// A tcp connect that has not completed within ZMQ_CONNECT_TIMEOUT is given up (and
    /// retried after the reconnect interval, as libzmq does).
    ConnectTimeout(usize),
}

struct Reactor {
    poll: Poll,
    shared: Arc<ReactorShared>,
    listeners: HashMap<usize, ListenerEntry>,
    connectors: HashMap<usize, Connector>,
    conns: HashMap<usize, Arc<ConnHandle>>,
    timers: Vec<(Instant, Timer)>,
    /// The other half of `ReactorShared::scheduled` (swapped, so neither side allocates).
    sched_buf: Vec<usize>,
    /// Connections whose last look read one batch and left input (`Conn::input_left`):
    /// looked at again in this thread's next round, without waking itself through
    /// `ReactorShared::schedule`. `again_buf` is its swap partner.
    again: Vec<usize>,
    again_buf: Vec<usize>,
    /// `run_timers`' list of due timers (kept, so firing allocates nothing).
    due_buf: Vec<Timer>,
    /// Connections scheduled while an application thread held them: that thread is doing
    /// their I/O now, and its flushes and reads schedule them again for what they leave
    /// (its claims and releases do not: what they meet waits for this list), so the
    /// reactor looks at them after `BUSY_RETRY` rather than wait for the lock (a sender
    /// writing each large message takes it again within a microsecond of letting it go:
    /// a reactor waiting for it was woken at each release, ~5 times per look).
    busy: Vec<usize>,
    /// When to look at `busy` (None: it is empty).
    busy_at: Option<Instant>,
    stopping: bool,
}

/// Whether the reactor waits for a connection's lock that an application thread holds.
#[derive(Clone, Copy)]
enum LockWait {
    Wait,
    IfFree,
}

/// An application thread held the connection: nothing was done.
struct Busy;

/// How long a connection scheduled while an application thread held it waits for the
/// reactor's next look (`Reactor::busy`). The poller's timeout has millisecond resolution.
const BUSY_RETRY: Duration = Duration::from_millis(1);

impl Reactor {
    fn new(poll: Poll, shared: Arc<ReactorShared>) -> Reactor {
        Reactor {
            poll,
            shared,
            listeners: HashMap::new(),
            connectors: HashMap::new(),
            conns: HashMap::new(),
            timers: Vec::new(),
            sched_buf: Vec::with_capacity(SCHEDULED_CAP),
            again: Vec::new(),
            again_buf: Vec::new(),
            due_buf: Vec::new(),
            busy: Vec::new(),
            busy_at: None,
            stopping: false,
        }
    }

    fn run(mut self) {
        let mut events = Events::with_capacity(256);
        loop {
            let now = Instant::now();
            let timeout = if self.again.is_empty() {
                self.timers
                    .iter()
                    .map(|(t, _)| *t)
                    .chain(self.busy_at)
                    .map(|t| t.saturating_duration_since(now))
                    .min()
            } else {
                Some(Duration::ZERO)
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    break;
                }
            }
            for ev in events.iter() {
                let t = ev.token().0;
                if t == 0 {
                    continue;
                }
                if self.listeners.contains_key(&t) {
                    self.accept(t);
                } else {
                    if ev.is_read_closed() {
                        if let Some(c) = self.conns.get(&t) {
                            c.lock().peer_closed();
                        }
                    }
                    self.conn_ready(t, ev.is_readable() || ev.is_read_closed(), ev.is_writable());
                }
            }
            self.run_commands();
            self.run_scheduled();
            self.run_again();
            self.run_busy();
            self.run_timers();
            if self.stopping && self.conns.is_empty() && self.connectors.is_empty() {
                break;
            }
        }
        // Dropping the entries closes every descriptor.
    }

    /// Runs `f` on connection `token` (None if it is gone), then takes the timers it asked
    /// for into the reactor's list.
    fn with_conn<R>(&mut self, token: usize, f: impl FnOnce(&mut Conn) -> R) -> Option<R> {
        self.with_conn_as(token, LockWait::Wait, f).unwrap_or(None)
    }

    /// `with_conn`, waiting for the connection's lock or not (`Err(Busy)`: an application
    /// thread holds it).
    fn with_conn_as<R>(
        &mut self,
        token: usize,
        how: LockWait,
        f: impl FnOnce(&mut Conn) -> R,
    ) -> std::result::Result<Option<R>, Busy> {
        let Some(handle) = self.conns.get(&token) else {
            return Ok(None);
        };
        let mut conn = match how {
            LockWait::Wait => handle.lock(),
            LockWait::IfFree => handle.try_lock().ok_or(Busy)?,
        };
        let r = f(&mut conn);
        self.timers.append(&mut conn.timers);
        Ok(Some(r))
    }

    /// The tokens of the connections for which `pred` holds.
    fn conns_where(&self, pred: impl Fn(&Conn) -> bool) -> Vec<usize> {
        self.conns
            .iter()
            .filter(|(_, h)| pred(&h.lock()))
            .map(|(t, _)| *t)
            .collect()
    }

    fn run_commands(&mut self) {
        let cmds = std::mem::take(&mut *self.shared.lock_cmds());
        for c in cmds {
            match c {
                Command::Bind {
                    token,
                    mut listener,
                    socket,
                    endpoint,
                    opts,
                } => {
                    let fd = listener.fd();
                    let registered = self.poll.registry().register(
                        listener.source(),
                        Token(token),
                        Interest::READABLE,
                    );
                    match registered {
                        Ok(()) => {
                            socket.emit(event::LISTENING, fd as u32, &endpoint);
                            self.listeners.insert(
                                token,
                                ListenerEntry {
                                    listener,
                                    socket,
                                    endpoint,
                                    opts,
                                },
                            );
                        }
                        Err(e) => {
                            socket.emit(event::BIND_FAILED, 0, &endpoint);
                            if e.kind() == std::io::ErrorKind::AlreadyExists {
                                // A ZMQ_USE_FD descriptor bound twice: a live listener
                                // owns it, and closing it here would end that one.
                                std::mem::forget(listener);
                            }
                        }
                    }
                }
                Command::Connect { token, req, pipe } => {
                    let ivl = req.opts.reconnect_ivl;
                    self.connectors.insert(
                        token,
                        Connector {
                            req,
                            pipe,
                            ivl,
                            conn: None,
                            lingering: None,
                        },
                    );
                    self.start_connect(token);
                }
                Command::Remove { token, ack } => {
                    self.remove(token);
                    let _ = ack.send(());
                }
                Command::CloseSocket {
                    socket,
                    linger,
                    ack,
                } => {
                    self.close_socket(socket.id, linger);
                    crate::monitor::socket_closed(&socket);
                    if let Some(a) = ack {
                        let _ = a.send(());
                    }
                }
                Command::Stop => {
                    self.stopping = true;
                    let ls: Vec<usize> = self.listeners.keys().copied().collect();
                    for t in ls {
                        self.remove(t);
                    }
                    // Connectors of closed sockets keep trying within their LINGER; others go.
                    let cs: Vec<usize> = self
                        .connectors
                        .iter()
                        .filter(|(_, c)| c.lingering.is_none())
                        .map(|(t, _)| *t)
                        .collect();
                    for t in cs {
                        self.drop_connector(t, false);
                    }
                    // Connections of closed sockets are already lingering; any others go now.
                    let ids = self.conns_where(|c| !c.is_lingering());
                    for t in ids {
                        self.close_conn(t, Close::Shutdown);
                    }
                }
            }
        }
    }

    fn remove(&mut self, token: usize) {
        if let Some(mut l) = self.listeners.remove(&token) {
            let _ = self.poll.registry().deregister(l.listener.source());
            l.socket
                .emit(event::CLOSED, l.listener.fd() as u32, &l.endpoint);
            // libzmq's unbind also closes the connections accepted on that endpoint.
            let ids = self.conns_where(|c| c.listener == Some(token));
            for t in ids {
                self.close_conn(t, Close::Shutdown);
            }
        } else if self.connectors.contains_key(&token) {
            self.drop_connector(token, true);
        }
    }

    /// Forgets a connector; `detach` also removes its pipe from the socket (disconnect).
    fn drop_connector(&mut self, token: usize, detach: bool) {
        if let Some(c) = self.connectors.remove(&token) {
            if let Some(ct) = c.conn {
                if detach {
                    self.close_conn(ct, Close::Shutdown);
                } else if let Some(conn) = self.conns.get(&ct) {
                    conn.lock().connector = None;
                }
            }
            self.timers.retain(|(_, t)| *t != Timer::Reconnect(token));
            if detach {
                if let Some((_, sock_pipe)) = c.pipe {
                    c.req.socket.detach_pipe(sock_pipe);
                }
            }
        }
    }

    fn close_socket(&mut self, socket_id: u64, linger: i32) {
        let ls: Vec<usize> = self
            .listeners
            .iter()
            .filter(|(_, l)| l.socket.id == socket_id)
            .map(|(t, _)| *t)
            .collect();
        for t in ls {
            if let Some(mut l) = self.listeners.remove(&t) {
                let _ = self.poll.registry().deregister(l.listener.source());
                l.socket
                    .emit(event::CLOSED, l.listener.fd() as u32, &l.endpoint);
            }
        }
        let cs: Vec<usize> = self
            .connectors
            .iter()
            .filter(|(_, c)| c.req.socket.id == socket_id)
            .map(|(t, _)| *t)
            .collect();
        for t in cs {
            let keep = linger != 0
                && self.connectors[&t]
                    .pipe
                    .as_ref()
                    .is_some_and(|(p, _)| !p.inq.is_empty());
            if keep {
                let deadline =
                    (linger > 0).then(|| Instant::now() + Duration::from_millis(linger as u64));
                if let Some(c) = self.connectors.get_mut(&t) {
                    c.lingering = Some(deadline);
                }
                if let Some(d) = deadline {
                    // Give up at the deadline even if the next retry is later.
                    self.timers.push((d, Timer::Reconnect(t)));
                }
            } else {
                self.drop_connector(t, false);
            }
        }
        let conns = self.conns_where(|c| c.socket.id == socket_id);
        for t in conns {
            if let Some(why) = self.with_conn(t, |c| c.start_linger(linger)).flatten() {
                self.close_conn(t, why);
            }
        }
    }

    fn start_connect(&mut self, ctoken: usize) {
        let Some(c) = self.connectors.get_mut(&ctoken) else {
            return;
        };
        if c.conn.is_some() {
            // Already connecting or connected (a linger deadline check found it busy).
            return;
        }
        if let Some(deadline) = c.lingering {
            let empty = c.pipe.as_ref().is_none_or(|(p, _)| p.inq.is_empty());
            if empty || deadline.is_some_and(|d| d <= Instant::now()) {
                self.drop_connector(ctoken, false);
                return;
            }
        }
        let socket = c.req.socket.clone();
        let mut socks = None;
        let stream = match &c.req.endpoint {
            Endpoint::Tcp { host, port, .. } if !c.req.opts.socks_proxy.is_empty() => {
                // To the proxy, which is then asked for the destination (by name if it is
                // one: the proxy resolves it, as with libzmq).
                let opts = &c.req.opts;
                match port.parse() {
                    Ok(port) => {
                        let (user, password) = (&opts.socks_username, &opts.socks_password.0);
                        socks = Some(SocksClient::new(host, port, user, password));
                        socks::proxy_addr(&opts.socks_proxy, opts)
                            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
                            .and_then(|(addr, source)| tcp::connect(addr, source, opts))
                            .map(Stream::Tcp)
                    }
                    Err(_) => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
                }
            }
            Endpoint::Tcp { host, port, source } => {
                let opts = &c.req.opts;
                let source = source.as_deref().map(|s| tcp::source_addr(s, opts));
                tcp::connect_addr(host, port, opts)
                    .and_then(|addr| Ok((addr, source.transpose()?)))
                    .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
                    .and_then(|(addr, source)| tcp::connect(addr, source, opts))
                    .map(Stream::Tcp)
            }
            Endpoint::Ipc(path) => match ipc::connect(path) {
                Ok(s) => Ok(Stream::Unix(s)),
                Err((e, fd)) => {
                    // libzmq reports the failed attempt's socket closed, then the retry.
                    if let Some(fd) = fd {
                        socket.emit(event::CLOSED, fd as u32, &c.req.endpoint_str);
                    }
                    Err(e)
                }
            },
            Endpoint::Inproc(_) => return,
        };
        let endpoint = c.req.endpoint_str.clone();
        match stream {
            Ok(mut s) => {
                let token = self.shared.token();
                if self
                    .poll
                    .registry()
                    .register(
                        s.source(),
                        Token(token),
                        Interest::READABLE | Interest::WRITABLE,
                    )
                    .is_err()
                {
                    self.schedule_reconnect(ctoken);
                    return;
                }
                // A Unix socket connects at once; libzmq reports a delay for tcp only.
                if matches!(s, Stream::Tcp(_)) {
                    socket.emit(event::CONNECT_DELAYED, libc::EINPROGRESS as u32, &endpoint);
                }
                let c = self.connectors.get_mut(&ctoken).expect("present");
                c.conn = Some(token);
                let lingering = c.lingering.is_some();
                let mut conn = Conn::new(
                    self.shared.clone(),
                    token,
                    s,
                    socket,
                    c.req.opts.clone(),
                    endpoint,
                    Some(ctoken),
                    None,
                    c.pipe.clone(),
                    true,
                );
                if lingering {
                    conn.linger_from_start();
                }
                if let Some(client) = socks {
                    conn.through_socks(client);
                }
                let timeout = c.req.opts.connect_timeout;
                if timeout > 0 && matches!(c.req.endpoint, Endpoint::Tcp { .. }) {
                    self.timers.push((
                        Instant::now() + Duration::from_millis(timeout as u64),
                        Timer::ConnectTimeout(token),
                    ));
                }
                self.conns
                    .insert(token, ConnHandle::new(token, self.shared.clone(), conn));
            }
            // (A Unix socket without a listener refuses at once: libzmq 4.3.4 retries
            // that whatever ZMQ_RECONNECT_STOP says.)
            Err(_) => self.schedule_reconnect(ctoken),
        }
    }

    /// Ends a connect for good, as libzmq 4.3.4 does when the peer broke the protocol or
    /// turned us down (mechanism or socket type mismatch, authentication refused) and,
    /// with ZMQ_RECONNECT_STOP_CONN_REFUSED, when nobody listened: no reconnect, and its
    /// queue goes with it. The connector itself stays, so that zmq_disconnect still knows
    /// the endpoint; the caller removes it where libzmq forgets the endpoint too.
    fn end_connect(&mut self, ctoken: usize) {
        let Some(c) = self.connectors.get_mut(&ctoken) else {
            return;
        };
        c.conn = None;
        if let Some((_, sock_pipe)) = c.pipe.take() {
            c.req.socket.detach_pipe(sock_pipe);
        }
        if c.lingering.is_some() {
            // Its socket is closed: nothing is left to deliver.
            self.drop_connector(ctoken, false);
        }
    }

    fn schedule_reconnect(&mut self, ctoken: usize) {
        let Some(c) = self.connectors.get_mut(&ctoken) else {
            return;
        };
        c.conn = None;
        // No interval (0 or -1): no retry, as libzmq.
        if c.req.opts.reconnect_ivl <= 0 || (self.stopping && c.lingering.is_none()) {
            return;
        }
        let ivl = c.ivl.max(1);
        // libzmq waits the interval plus up to one more RECONNECT_IVL at random, so that
        // peers that lost the same server do not all come back in the same millisecond.
        let delay = ivl.saturating_add(reconnect_jitter(c.req.opts.reconnect_ivl));
        c.req
            .socket
            .emit(event::CONNECT_RETRIED, delay as u32, &c.req.endpoint_str);
        self.timers.push((
            Instant::now() + Duration::from_millis(delay as u64),
            Timer::Reconnect(ctoken),
        ));
        let max = c.req.opts.reconnect_ivl_max;
        if max > 0 {
            c.ivl = (c.ivl.saturating_mul(2)).min(max);
        }
    }

    fn accept(&mut self, token: usize) {
        loop {
            let Some(l) = self.listeners.get_mut(&token) else {
                return;
            };
            match l.listener.accept() {
                Ok(mut s) => {
                    let allowed = match &s {
                        Stream::Unix(u) => ipc::peer_allowed(u, &l.opts.ipc_filters),
                        Stream::Tcp(t) => tcp::peer_allowed(t, &l.opts.tcp_accept_filters),
                    };
                    if !allowed {
                        // Closed unaccepted (dropped), reported as libzmq does: an
                        // ACCEPT_FAILED, whose value there is a stale errno (0 over ipc).
                        l.socket.emit(event::ACCEPT_FAILED, 0, &l.endpoint);
                        continue;
                    }
                    let socket = l.socket.clone();
                    let opts = l.opts.clone();
                    let endpoint = l.endpoint.clone();
                    if let Stream::Tcp(t) = &s {
                        tcp::tune(t, &opts);
                    }
                    let ct = self.shared.token();
                    if self
                        .poll
                        .registry()
                        .register(
                            s.source(),
                            Token(ct),
                            Interest::READABLE | Interest::WRITABLE,
                        )
                        .is_err()
                    {
                        continue;
                    }
                    use std::os::fd::AsRawFd;
                    socket.emit(event::ACCEPTED, s.as_raw_fd() as u32, &endpoint);
                    let conn = Conn::new(
                        self.shared.clone(),
                        ct,
                        s,
                        socket,
                        opts,
                        endpoint,
                        None,
                        Some(token),
                        None,
                        false,
                    );
                    self.conns
                        .insert(ct, ConnHandle::new(ct, self.shared.clone(), conn));
                    self.with_conn(ct, |c| c.started());
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let l = &self.listeners[&token];
                    l.socket.emit(
                        event::ACCEPT_FAILED,
                        e.raw_os_error().unwrap_or(0) as u32,
                        &l.endpoint,
                    );
                    return;
                }
            }
        }
    }

    fn conn_ready(&mut self, token: usize, readable: bool, writable: bool) {
        let _ = self.conn_ready_as(token, readable, writable, LockWait::Wait);
    }

    /// `conn_ready`, waiting for the connection's lock or not (`Err(Busy)`: nothing done).
    fn conn_ready_as(
        &mut self,
        token: usize,
        readable: bool,
        writable: bool,
        how: LockWait,
    ) -> std::result::Result<(), Busy> {
        let result = self.with_conn_as(token, how, |c| {
            c.ready(readable, writable)
                .map(|()| (c.input_left(), c.deferred_queue()))
        })?;
        match result {
            Some(Err(why)) => self.close_conn(token, why),
            // A short list (connections streaming right now): a scan keeps each once.
            Some(Ok((true, _))) if !self.again.contains(&token) => self.again.push(token),
            Some(Ok((_, Some(pipe)))) => {
                // The read was left to the receiving thread, which was not waiting. If it
                // began to wait while we held the connection (its own read then found the
                // lock taken), it may sleep without reading: look at its wait
                // request again now that the lock is free, without taking the lock (so
                // that its next try cannot fail on us). Its request (a locked RMW on the
                // queue's word) comes before its try-lock; this fence orders our unlock
                // before the look, so one of the two sees the other.
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
                if pipe.out.reader_waiting() {
                    // Reads now: a waiting reader is never left input.
                    self.conn_ready(token, true, false);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Reads on where the last round left input behind (see `Reactor::again`).
    fn run_again(&mut self) {
        let mut list = std::mem::take(&mut self.again_buf);
        std::mem::swap(&mut list, &mut self.again);
        for &t in &list {
            self.conn_ready(t, true, false);
        }
        list.clear();
        self.again_buf = list;
    }

    fn run_scheduled(&mut self) {
        // Swap buffers rather than take: an empty Vec left behind would make the next
        // schedule() allocate on the application's thread, once per wake.
        let mut list = std::mem::take(&mut self.sched_buf);
        std::mem::swap(
            &mut list,
            &mut *self
                .shared
                .scheduled
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        list.sort_unstable();
        list.dedup();
        for &t in &list {
            if self.conns.contains_key(&t)
                && self.conn_ready_as(t, true, true, LockWait::IfFree).is_err()
                && !self.busy.contains(&t)
            {
                self.busy.push(t);
            }
        }
        list.clear();
        self.sched_buf = list;
        if !self.busy.is_empty() && self.busy_at.is_none() {
            self.busy_at = Some(Instant::now() + BUSY_RETRY);
        }
    }

    /// Looks at the connections that were busy when scheduled (`Reactor::busy`), waiting
    /// for their locks this time, once `BUSY_RETRY` has passed.
    fn run_busy(&mut self) {
        match self.busy_at {
            Some(at) if at <= Instant::now() => self.busy_at = None,
            _ => return,
        }
        let list = std::mem::take(&mut self.busy);
        for &t in &list {
            if self.conns.contains_key(&t) {
                self.conn_ready(t, true, true);
            }
        }
        self.busy = list;
        self.busy.clear();
    }

    fn run_timers(&mut self) {
        let now = Instant::now();
        // A kept buffer: timers fire while messages stream (`Timer::ReadDeferred`), and
        // the steady state allocates nothing.
        let mut due = std::mem::take(&mut self.due_buf);
        due.extend(
            self.timers
                .iter()
                .filter(|(t, _)| *t <= now)
                .map(|(_, k)| *k),
        );
        self.timers.retain(|(t, _)| *t > now);
        for k in due.drain(..) {
            match k {
                Timer::Reconnect(c) => self.start_connect(c),
                Timer::Handshake(t)
                | Timer::Heartbeat(t)
                | Timer::HeartbeatTimeout(t)
                | Timer::Linger(t)
                | Timer::ReleaseOutput(t)
                | Timer::HeldTail(t)
                | Timer::ReadDeferred(t)
                | Timer::ClaimIdle(t)
                | Timer::ConnectTimeout(t) => {
                    // A stream's held bytes go out with its thread's next write: while that
                    // thread holds the connection, look again a period later rather than
                    // wait behind a sender that takes the lock again at once (tcp 64 KiB:
                    // ~5 futex wakes per firing, each taking the receiving thread's core).
                    // (Only this timer is looked at `IfFree`: the re-arm below is its own.)
                    let how = match k {
                        Timer::HeldTail(_) => LockWait::IfFree,
                        _ => LockWait::Wait,
                    };
                    match self.with_conn_as(t, how, |c| c.timer(k, now).map(|()| c.input_left())) {
                        Ok(Some(Err(why))) => self.close_conn(t, why),
                        // A read that left input (one batch; edge-triggered, so no new
                        // event would say so) goes on in the next round.
                        Ok(Some(Ok(true))) if !self.again.contains(&t) => self.again.push(t),
                        Ok(_) => {}
                        Err(Busy) => self.timers.push((now + HOLD_FLUSH_AFTER, k)),
                    }
                }
            }
        }
        self.due_buf = due;
    }

    fn close_conn(&mut self, token: usize, why: Close) {
        let Some(handle) = self.conns.remove(&token) else {
            return;
        };
        let mut conn = handle.lock();
        self.timers.retain(|(_, t)| {
            !matches!(t, Timer::Handshake(x) | Timer::Heartbeat(x) | Timer::HeartbeatTimeout(x)
                | Timer::Linger(x)
                | Timer::ReleaseOutput(x) | Timer::HeldTail(x) | Timer::ReadDeferred(x)
                | Timer::ClaimIdle(x)
                | Timer::ConnectTimeout(x)
                if *x == token)
        });
        let _ = self.poll.registry().deregister(conn.stream.source());
        let connector = conn.connector;
        let ended_in_handshake = conn.in_handshake() || conn.raw_connected();
        // A STREAM connection this socket asked to close ends its connect, whatever ended
        // it first (the peer's end, a failed write), as libzmq's raw session ends with its
        // pipe at the close.
        let why = if conn.stream_close_asked() && why != Close::Shutdown {
            Close::StreamClosed
        } else {
            why
        };
        conn.closed(why);
        drop(conn);
        if let Some(ct) = connector {
            if let Some(c) = self.connectors.get_mut(&ct) {
                c.conn = None;
                if c.lingering.is_some() && matches!(why, Close::Shutdown | Close::StreamClosed) {
                    self.drop_connector(ct, false);
                } else if matches!(
                    why,
                    Close::Protocol(_) | Close::Auth(_) | Close::Refused | Close::StreamClosed
                ) || (ended_in_handshake
                    && matches!(why, Close::Disconnected | Close::Timeout)
                    && c.stops_when_handshake_fails())
                {
                    // (ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED: a peer that dropped or stalled
                    // the handshake counts as one that broke the protocol, as in libzmq,
                    // and so does the end of any STREAM connection.)
                    self.end_connect(ct);
                } else if why == Close::ConnectRefused && c.stops_when_refused() {
                    // libzmq forgets this one altogether: zmq_disconnect gives ENOENT.
                    self.end_connect(ct);
                    if let Some(c) = self.connectors.remove(&ct) {
                        c.req.socket.forget_connect(ct);
                    }
                } else if c.req.opts.reconnect_ivl <= 0
                    && c.lingering.is_none()
                    && !matches!(
                        why,
                        Close::Shutdown | Close::ConnectFailed | Close::ConnectRefused
                    )
                {
                    // An established connection that ended, with no reconnect interval:
                    // libzmq ends the connect as zmq_disconnect would (its pipe goes, so a
                    // PAIR may connect again; zmq_disconnect then gives ENOENT).
                    self.end_connect(ct);
                    if let Some(c) = self.connectors.remove(&ct) {
                        c.req.socket.forget_connect(ct);
                    }
                } else if why != Close::Shutdown {
                    self.schedule_reconnect(ct);
                }
            }
        }
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        let ids: Vec<usize> = self.conns.keys().copied().collect();
        for t in ids {
            self.close_conn(t, Close::Shutdown);
        }
    }
}

/// ZMQ_RECONNECT_STOP's bit for "no reconnect once a connect is refused".
const RECONNECT_STOP_CONN_REFUSED: i32 = 1;
/// ZMQ_RECONNECT_STOP's bit for "no reconnect once a handshake failed".
const RECONNECT_STOP_HANDSHAKE_FAILED: i32 = 2;

impl Connector {
    /// ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED: a connection that ends before its handshake
    /// is done is the last attempt.
    fn stops_when_handshake_fails(&self) -> bool {
        self.req.opts.reconnect_stop & RECONNECT_STOP_HANDSHAKE_FAILED != 0
    }

    /// ZMQ_RECONNECT_STOP_CONN_REFUSED: a refused tcp connect is the last attempt.
    fn stops_when_refused(&self) -> bool {
        self.req.opts.reconnect_stop & RECONNECT_STOP_CONN_REFUSED != 0
    }
}

/// A random wait in `0..reconnect_ivl` ms added to each reconnect interval (0 if the
/// system's random source fails: the interval alone is still correct).
fn reconnect_jitter(reconnect_ivl: i32) -> i32 {
    let mut b = [0u8; 4];
    if reconnect_ivl <= 1 || getrandom::getrandom(&mut b).is_err() {
        return 0;
    }
    (u32::from_ne_bytes(b) % reconnect_ivl as u32) as i32
}
