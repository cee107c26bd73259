//! `Context`: owns the sockets, the inproc name registry and the I/O thread.

use crate::error::{Error, Result};
use crate::io::{IoThreadOptions, ReactorShared};
use crate::signal::{Signal, Wait};
use crate::socket::{Socket, SocketShared};
use crate::spsc::Padded;
use ferromq_zmtp::SocketType;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

/// Context option numbers (libzmq's).
#[allow(missing_docs)]
pub mod opt {
    pub const IO_THREADS: i32 = 1;
    pub const MAX_SOCKETS: i32 = 2;
    pub const SOCKET_LIMIT: i32 = 3;
    pub const THREAD_PRIORITY: i32 = 3;
    pub const THREAD_SCHED_POLICY: i32 = 4;
    pub const MAX_MSGSZ: i32 = 5;
    pub const MSG_T_SIZE: i32 = 6;
    pub const THREAD_AFFINITY_CPU_ADD: i32 = 7;
    pub const THREAD_AFFINITY_CPU_REMOVE: i32 = 8;
    pub const THREAD_NAME_PREFIX: i32 = 9;
    pub const ZERO_COPY_RECV: i32 = 10;
    pub const IPV6: i32 = 42;
    pub const BLOCKY: i32 = 70;
}

pub(crate) struct CtxState {
    pub(crate) terminating: bool,
    pub(crate) sockets: HashMap<u64, Weak<SocketShared>>,
    /// inproc names bound, to the binding socket.
    pub(crate) inproc: HashMap<String, Weak<SocketShared>>,
    /// inproc connects waiting for a bind: the binder's ends of their pipes.
    pub(crate) inproc_pending: HashMap<String, Vec<crate::transport::inproc::Pending>>,
    io_threads: i32,
    max_sockets: i32,
    ipv6: bool,
    blocky: bool,
    max_msgsz: i32,
    zero_copy_recv: bool,
    /// ZMQ_THREAD_*: how the I/O thread is started.
    thread: IoThreadOptions,
}

pub(crate) struct CtxShared {
    state: Mutex<CtxState>,
    /// Mirror of `CtxState::terminating`, read on every send/recv without the lock. On a
    /// cache line of its own: read per frame by every application thread, it must not
    /// share one with whatever the allocator put next to the context (unpadded, this
    /// load missed the cache on most sends and receives: perf annotate, 2026-11-25).
    terminating: Padded<AtomicBool>,
    /// Notified when a socket closes (term waits on it, interruptibly).
    closed_signal: Signal,
    reactor: OnceLock<Arc<ReactorShared>>,
}

impl CtxShared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, CtxState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The I/O thread, started on first use.
    pub(crate) fn reactor(&self) -> Result<Arc<ReactorShared>> {
        if let Some(r) = self.reactor.get() {
            return Ok(r.clone());
        }
        let thread = self.lock().thread.clone();
        let r = ReactorShared::start(thread).map_err(|e| Error::from_io(&e))?;
        Ok(self.reactor.get_or_init(|| r).clone())
    }

    /// The I/O thread if it was ever started.
    pub(crate) fn reactor_if_started(&self) -> Option<Arc<ReactorShared>> {
        self.reactor.get().cloned()
    }

    pub(crate) fn is_terminating(&self) -> bool {
        self.terminating.load(Ordering::Acquire)
    }

    pub(crate) fn socket_closed(&self, id: u64) {
        let mut st = self.lock();
        st.sockets.remove(&id);
        drop(st);
        self.closed_signal.notify();
    }
}

/// A ZeroMQ context: the factory of sockets. Cheap to clone; all clones are the same
/// context. Dropping the last clone does not terminate it — call [`Context::term`].
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<CtxShared>,
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

impl Context {
    /// A new context with libzmq's defaults (one I/O thread, 1023 sockets).
    pub fn new() -> Context {
        Context {
            inner: Arc::new(CtxShared {
                state: Mutex::new(CtxState {
                    terminating: false,
                    sockets: HashMap::new(),
                    inproc: HashMap::new(),
                    inproc_pending: HashMap::new(),
                    io_threads: 1,
                    max_sockets: 1023,
                    ipv6: false,
                    blocky: true,
                    max_msgsz: i32::MAX,
                    zero_copy_recv: true,
                    thread: IoThreadOptions::default(),
                }),
                terminating: Padded(AtomicBool::new(false)),
                closed_signal: Signal::new().expect("eventfd for the context"),
                reactor: OnceLock::new(),
            }),
        }
    }

    /// Whether a socket could be created now: `Terminated` after `term`/`shutdown`,
    /// `TooManySockets` at ZMQ_MAX_SOCKETS. (libzmq looks at these before the socket
    /// type, so a bad type in a full or ended context gets their errno.)
    pub fn socket_room(&self) -> Result<()> {
        Self::room_in(&self.inner.lock())
    }

    fn room_in(st: &CtxState) -> Result<()> {
        if st.terminating {
            return Err(Error::Terminated);
        }
        if st.sockets.len() >= st.max_sockets.max(0) as usize {
            return Err(Error::TooManySockets);
        }
        Ok(())
    }

    /// Creates a socket of the given type. Fails with `Terminated` after `term`/`shutdown`
    /// and `TooManySockets` beyond ZMQ_MAX_SOCKETS.
    pub fn socket(&self, kind: SocketType) -> Result<Socket> {
        let st = self.inner.lock();
        Self::room_in(&st)?;
        let (ipv6, blocky) = (st.ipv6, st.blocky);
        drop(st);
        let sock = Socket::create(self.inner.clone(), kind, ipv6, blocky)?;
        self.inner
            .lock()
            .sockets
            .insert(sock.id(), Arc::downgrade(&sock.inner));
        Ok(sock)
    }

    /// Sets a context option (ZMQ_IO_THREADS, ZMQ_MAX_SOCKETS, ZMQ_IPV6, ZMQ_BLOCKY, ...);
    /// `InvalidArgument` for an unknown option or a value libzmq refuses. The ZMQ_THREAD_*
    /// options apply to the I/O thread when it starts (the first tcp/ipc bind or connect).
    pub fn set(&self, option: i32, value: i32) -> Result<()> {
        let mut st = self.inner.lock();
        match option {
            opt::IO_THREADS if value >= 0 => st.io_threads = value,
            opt::MAX_SOCKETS if value >= 1 => st.max_sockets = value,
            opt::IPV6 if value >= 0 => st.ipv6 = value != 0,
            opt::BLOCKY if value >= 0 => st.blocky = value != 0,
            opt::MAX_MSGSZ if value >= 0 => st.max_msgsz = value,
            opt::ZERO_COPY_RECV if value >= 0 => st.zero_copy_recv = value != 0,
            // The defaults (-1) cannot be set back: libzmq takes values >= 0 only.
            opt::THREAD_PRIORITY if value >= 0 => st.thread.priority = value,
            opt::THREAD_SCHED_POLICY if value >= 0 => st.thread.sched_policy = value,
            opt::THREAD_AFFINITY_CPU_ADD if value >= 0 => {
                st.thread.affinity.insert(value);
            }
            opt::THREAD_AFFINITY_CPU_REMOVE if value >= 0 => {
                // A CPU that was not added: EINVAL, as libzmq.
                if !st.thread.affinity.remove(&value) {
                    return Err(Error::InvalidArgument);
                }
            }
            opt::THREAD_NAME_PREFIX => st.thread.name_prefix = Some(value),
            _ => return Err(Error::InvalidArgument),
        }
        Ok(())
    }

    /// Reads a context option.
    pub fn get(&self, option: i32) -> Result<i32> {
        let st = self.inner.lock();
        Ok(match option {
            opt::IO_THREADS => st.io_threads,
            opt::MAX_SOCKETS => st.max_sockets,
            opt::SOCKET_LIMIT => 65535,
            opt::IPV6 => st.ipv6 as i32,
            opt::BLOCKY => st.blocky as i32,
            opt::MAX_MSGSZ => st.max_msgsz,
            opt::MSG_T_SIZE => 64,
            opt::ZERO_COPY_RECV => st.zero_copy_recv as i32,
            opt::THREAD_SCHED_POLICY => st.thread.sched_policy,
            opt::THREAD_NAME_PREFIX => st.thread.name_prefix.unwrap_or(0),
            _ => return Err(Error::InvalidArgument),
        })
    }

    /// Makes blocking calls on this context's sockets return `Terminated` and refuses new
    /// sockets; does not wait. Sockets must still be closed.
    pub fn shutdown(&self) {
        let sockets: Vec<Arc<SocketShared>> = {
            let mut st = self.inner.lock();
            st.terminating = true;
            self.inner.terminating.store(true, Ordering::Release);
            st.sockets.values().filter_map(|w| w.upgrade()).collect()
        };
        for s in sockets {
            s.signal.notify();
        }
    }

    /// Terminates the context: shuts it down, waits until every socket is closed, then
    /// waits for lingering messages to be sent (each socket's LINGER bounds that), and
    /// stops the I/O thread. Returns `Interrupted` if a signal arrives while waiting.
    pub fn term(&self) -> Result<()> {
        self.shutdown();
        if self.inner.reactor.get().is_some_and(|r| r.forked()) {
            // A forked child: the sockets it inherited need the parent's I/O thread to
            // close; libzmq gives EINTR here too.
            return Err(Error::Interrupted);
        }
        loop {
            let seen = self.inner.closed_signal.generation();
            {
                let mut st = self.inner.lock();
                st.sockets.retain(|_, w| w.strong_count() > 0);
                if st.sockets.is_empty() {
                    break;
                }
            }
            let deadline = Instant::now() + Duration::from_millis(100);
            if self.inner.closed_signal.wait(seen, Some(deadline)) == Wait::Interrupted {
                return Err(Error::Interrupted);
            }
        }
        match self.inner.reactor.get() {
            Some(r) => r.drain_and_stop(),
            None => Ok(()),
        }
    }
}
