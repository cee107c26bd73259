//! `Signal`: how a socket's owner thread learns that something changed (a message arrived,
//! room appeared, a peer attached). A generation counter plus one eventfd, which serves
//! both blocking calls (they `poll` it, so a signal interrupts them with EINTR, as libzmq's
//! do) and `ZMQ_FD` users (edge-triggered: readable after a change since `ZMQ_EVENTS` was
//! last read). The fd is written only when somebody is waiting on it.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// Outcome of [`Signal::wait`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// The generation changed: look for work again.
    Changed,
    /// The deadline passed.
    TimedOut,
    /// A signal interrupted the wait (EINTR).
    Interrupted,
}

/// Most `spin_loop` rounds before a blocking wait sleeps (about 5 µs: a pause is ~30 ns on
/// current x86; longer spins cost a peer sharing our core more than they save).
const SPIN: u32 = 150;
/// With no spin budget left, every PROBE-th wait spins once more (a power of two).
const PROBE: u32 = 16;

/// A wake-up channel for one socket.
pub(crate) struct Signal {
    generation: AtomicU64,
    waiters: AtomicU64,
    fd: RawFd,
    fd_armed: AtomicBool,
    /// Pause rounds `spin` does now (see `spin`; owner thread only, Relaxed).
    spin_budget: AtomicU32,
    spin_probe: AtomicU32,
}

impl Signal {
    pub(crate) fn new() -> std::io::Result<Signal> {
        // SAFETY: plain syscall creating a new descriptor; no pointers involved.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Signal {
            generation: AtomicU64::new(0),
            waiters: AtomicU64::new(0),
            fd,
            fd_armed: AtomicBool::new(false),
            spin_budget: AtomicU32::new(SPIN),
            spin_probe: AtomicU32::new(0),
        })
    }

    /// The current generation; read it *before* checking for work, then `wait` for a change.
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Announces a change: bumps the generation and writes the fd if anyone waits on it.
    pub(crate) fn notify(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let waiting = self.waiters.load(Ordering::SeqCst) > 0;
        let armed = self.fd_armed.swap(false, Ordering::SeqCst);
        if waiting || armed {
            self.write_fd();
        }
    }

    fn write_fd(&self) {
        let one: u64 = 1;
        // SAFETY: self.fd is our eventfd, open for the Signal's lifetime; 8 valid bytes.
        unsafe { libc::write(self.fd, &one as *const u64 as *const libc::c_void, 8) };
    }

    fn drain_fd(&self) {
        let mut buf: u64 = 0;
        // SAFETY: self.fd is our non-blocking eventfd; the buffer is 8 writable bytes.
        unsafe { libc::read(self.fd, &mut buf as *mut u64 as *mut libc::c_void, 8) };
    }

    /// Spins briefly for the generation to move from `seen` (a peer about to deliver is
    /// cheaper to wait for on the CPU than through a sleep, and its wake then costs no
    /// syscall: nobody waits on the fd). True if it moved.
    ///
    /// Adaptive, as glibc's adaptive mutexes: a spin that caught the change keeps the full
    /// budget; one that did not halves it, so on oversubscribed cores (where a failed spin
    /// holds a CPU the peer needs) waiters soon go straight to sleep. At zero budget every
    /// PROBE-th wait spins fully again, to notice when spinning pays again.
    #[inline]
    pub(crate) fn spin(&self, seen: u64) -> bool {
        let mut budget = self.spin_budget.load(Ordering::Relaxed);
        if budget == 0 {
            let n = self.spin_probe.load(Ordering::Relaxed).wrapping_add(1);
            self.spin_probe.store(n, Ordering::Relaxed);
            if n & (PROBE - 1) != 0 {
                return false;
            }
            budget = SPIN;
        }
        for _ in 0..budget {
            if self.generation.load(Ordering::Relaxed) != seen {
                self.spin_budget.store(SPIN, Ordering::Relaxed);
                // Pairs with notify's SeqCst increment.
                return self.generation.load(Ordering::SeqCst) != seen;
            }
            std::hint::spin_loop();
        }
        self.spin_budget.store(budget / 2, Ordering::Relaxed);
        false
    }

    /// Blocks until the generation differs from `seen`, `deadline` passes, or a signal
    /// arrives.
    pub(crate) fn wait(&self, seen: u64, deadline: Option<Instant>) -> Wait {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            if self.generation.load(Ordering::SeqCst) != seen {
                break Wait::Changed;
            }
            let timeout_ms: i32 = match deadline {
                None => -1,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break Wait::TimedOut;
                    }
                    let ms = (d - now).as_micros().div_ceil(1000);
                    ms.min(i32::MAX as u128) as i32
                }
            };
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd on our own descriptor.
            let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
            if rc < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    break Wait::Interrupted;
                }
            } else if rc > 0 {
                self.drain_fd();
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        if result != Wait::Changed && self.fd_armed.load(Ordering::SeqCst) {
            // We may have drained a write meant for a ZMQ_FD poller; hand it back.
            self.write_fd();
        }
        result
    }

    /// The eventfd for `ZMQ_FD`.
    pub(crate) fn fd(&self) -> RawFd {
        self.fd
    }

    /// Called when a send or recv would block (EAGAIN): arms `ZMQ_FD` so the next change
    /// makes it readable. libzmq drains its mailbox in every send/recv, so bindings that
    /// wait on `ZMQ_FD` right after EAGAIN, without reading `ZMQ_EVENTS`, are woken.
    /// `seen` is the generation read before the attempt: a change since then (which found
    /// the fd unarmed) makes the fd readable at once, so no wake-up is lost.
    pub(crate) fn arm(&self, seen: u64) {
        self.fd_armed.store(true, Ordering::SeqCst);
        if self.generation.load(Ordering::SeqCst) != seen
            && self.fd_armed.swap(false, Ordering::SeqCst)
        {
            self.write_fd();
        }
    }

    /// Called when the owner reads `ZMQ_EVENTS`: drains the eventfd and arms it so the next
    /// change makes it readable again (edge-triggered, as libzmq's).
    pub(crate) fn rearm(&self) {
        self.drain_fd();
        // Arm after draining: a change after this point writes the fd again.
        self.fd_armed.store(true, Ordering::SeqCst);
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor and nobody uses it after drop.
        unsafe { libc::close(self.fd) };
    }
}
