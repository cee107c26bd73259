//! Caller-driven I/O: an application thread does a connection's traffic I/O itself when
//! that saves a wake-up of the I/O thread (DESIGN.md, "Caller-driven I/O"). On a VM a
//! wake-up of a sleeping thread costs 20-30 µs, more than the whole protocol work.
//!
//! - Send: a message queued on a connection whose writer side was idle is written by the
//!   sending thread at once (one syscall, no I/O-thread wake), unless this connection was
//!   written inline a moment ago: then the sender is streaming, and the I/O thread batches
//!   (one write per batch, as before).
//! - Receive: a receive that finds nothing queued reads the connection itself, also while
//!   it spins before sleeping, so a reply is taken from the kernel by the thread that
//!   waits for it.
//!
//! A connection's state sits behind a mutex the I/O thread also takes. Application threads
//! only ever `try_lock` it: they may hold their socket's lock, which the I/O thread takes
//! while it holds a connection's, and they must never wait for the I/O thread anyway.
//! Whatever only the reactor may do (close, reconnect, timers) is handed to it by
//! scheduling the connection.

use super::conn::Conn;
use super::reactor::ReactorShared;
use crate::signal::{SelfServe, MAX_SELF_SERVED};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Instant;

/// A connection flushed inline less than this long ago is streaming: leave the next
/// message to the I/O thread's batch. Shorter than any round trip (a reply cannot arrive
/// sooner), longer than a sender's gap between two queued messages (well under 1 µs).
const STREAMING_GAP_NS: u64 = 3_000;

fn now_ns() -> u64 {
    static BASE: OnceLock<Instant> = OnceLock::new();
    BASE.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A connection shared between the I/O thread (its owner) and application threads.
pub(crate) struct ConnHandle {
    token: usize,
    shared: Arc<ReactorShared>,
    conn: Mutex<Conn>,
    /// When an application thread last finished an inline flush (`now_ns`).
    last_inline_ns: AtomicU64,
}

impl ConnHandle {
    pub(super) fn new(token: usize, shared: Arc<ReactorShared>, conn: Conn) -> Arc<ConnHandle> {
        let handle = Arc::new(ConnHandle {
            token,
            shared,
            conn: Mutex::new(conn),
            last_inline_ns: AtomicU64::new(0),
        });
        handle.lock().handle = Arc::downgrade(&handle);
        handle
    }

    /// The I/O thread's access.
    pub(super) fn lock(&self) -> MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The I/O thread should look at this connection.
    pub(crate) fn schedule(&self) {
        self.shared.schedule(self.token);
    }

    /// The socket queued output while the connection's writer side was idle: write it now
    /// from this thread, or leave it to the I/O thread.
    pub(crate) fn output_ready(&self) {
        let since = now_ns().saturating_sub(self.last_inline_ns.load(Ordering::Relaxed));
        if since >= STREAMING_GAP_NS {
            if let Some(done) = self.try_flush() {
                self.last_inline_ns.store(now_ns(), Ordering::Relaxed);
                if done {
                    return;
                }
            }
        }
        self.schedule();
    }

    /// Writes what is queued from this thread, unless another thread holds the
    /// connection (None). Some(true) when nothing is left for the I/O thread to do.
    fn try_flush(&self) -> Option<bool> {
        Some(self.conn.try_lock().ok()?.flush_inline())
    }

    /// A large message was queued while the connection was already writing: write from
    /// this thread as well if the connection is free right now (the I/O thread is busy
    /// elsewhere, e.g. reading); otherwise it is the I/O thread's.
    pub(crate) fn write_along(&self) {
        if self.try_flush() == Some(false) {
            self.schedule();
        }
    }

    /// The socket found nothing to receive: read the connection from this thread, unless
    /// the I/O thread is busy with it. Returns whether this thread's claim (if it made
    /// one) still holds; when the lock is busy it cannot tell and says yes.
    pub(crate) fn pull(&self) -> bool {
        let Ok(mut conn) = self.conn.try_lock() else {
            return true;
        };
        let done = conn.pull_inline();
        let claimed = conn.is_claimed();
        drop(conn);
        if !done {
            self.schedule();
        }
        claimed
    }

    /// The socket is about to wait for input: take the descriptor off the I/O thread's
    /// poller so that data arriving while this thread waits (and reads it itself) does not
    /// also wake the I/O thread. Returns the descriptor to wait on, or None if the
    /// connection cannot be claimed now. Every claim must be ended with `unclaim`.
    pub(crate) fn claim(&self) -> Option<RawFd> {
        self.conn.try_lock().ok()?.claim()
    }

    /// Gives the descriptor back to the I/O thread. Blocks on the connection's lock: call
    /// it without holding the socket's.
    pub(crate) fn unclaim(&self) {
        self.lock().unclaim();
    }
}

/// The connections a receiving thread reads itself while it waits: each one it could
/// claim is off the I/O thread's poller until this is dropped (dropping blocks briefly on
/// each connection's lock: never do it while holding the socket's lock). Holding the
/// handles keeps their descriptors open while a sleep polls them.
pub(crate) struct Served {
    conns: [Option<Arc<ConnHandle>>; MAX_SELF_SERVED],
    claimed: [bool; MAX_SELF_SERVED],
    fds: [RawFd; MAX_SELF_SERVED],
    nfds: usize,
}

impl Served {
    /// Claims what it can of `sources` (at most [`MAX_SELF_SERVED`] are used).
    pub(crate) fn claim(sources: &[Weak<ConnHandle>]) -> Served {
        let mut s = Served {
            conns: Default::default(),
            claimed: [false; MAX_SELF_SERVED],
            fds: [-1; MAX_SELF_SERVED],
            nfds: 0,
        };
        for (i, w) in sources.iter().take(MAX_SELF_SERVED).enumerate() {
            let Some(c) = w.upgrade() else { continue };
            if let Some(fd) = c.claim() {
                s.claimed[i] = true;
                s.fds[s.nfds] = fd;
                s.nfds += 1;
            }
            s.conns[i] = Some(c);
        }
        s
    }

    fn refresh_fds(&mut self) {
        self.nfds = 0;
        for (c, &claimed) in self.conns.iter().zip(&self.claimed) {
            if let (Some(c), true) = (c, claimed) {
                self.fds[self.nfds] = c.lock().stream_fd();
                self.nfds += 1;
            }
        }
    }
}

impl SelfServe for Served {
    fn pull(&mut self) {
        let mut lost = false;
        for (c, claimed) in self.conns.iter().zip(self.claimed.iter_mut()) {
            if let Some(c) = c {
                if !c.pull() && *claimed {
                    // The I/O thread took it back (or it closed): stop polling it.
                    *claimed = false;
                    lost = true;
                }
            }
        }
        if lost {
            self.refresh_fds();
        }
    }

    fn fds(&self) -> &[RawFd] {
        &self.fds[..self.nfds]
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        for (c, &claimed) in self.conns.iter().zip(&self.claimed) {
            if let (Some(c), true) = (c, claimed) {
                c.unclaim();
            }
        }
    }
}
