//! Caller-driven I/O: an application thread does a connection's traffic I/O itself when
//! that saves a wake-up of the I/O thread (DESIGN.md, "Caller-driven I/O"). On a VM a
//! wake-up of a sleeping thread costs 20-30 µs, more than the whole protocol work.
//!
//! - Send: a message queued on a connection whose writer side was idle is written by the
//!   sending thread at once (one syscall, no I/O-thread wake), unless the sender is
//!   streaming: this connection, or any connection by this thread, was written inline a
//!   moment ago, or the thread turned to this connection from another without waiting
//!   for input in between. Then the I/O thread batches (one write per batch).
//! - Receive: a receive that finds nothing queued reads the connection itself, also while
//!   it spins before sleeping, so a reply is taken from the kernel by the thread that
//!   waits for it. While it waits it also writes what the kernel had no room for yet (a
//!   large request taken in part), polling for room as well as input. Its claim on the
//!   descriptor outlasts the wait by up to 20 ms (`Conn::release_claim`), for the next
//!   receive of a thread that receives in a loop.
//! - The I/O thread reads such a connection one batch at a time (see `Conn::ready`), so
//!   a receiving thread's own reads are not shut out by a long drain.
//!
//! A connection's state sits behind a mutex the I/O thread also takes. Application threads
//! `try_lock` it while they may hold their socket's lock (which the I/O thread takes
//! while it holds a connection's), and otherwise wait for it only to begin or end a claim
//! (the I/O thread holds it briefly).
//! Whatever only the reactor may do (close, reconnect, timers) is handed to it by
//! scheduling the connection.

use super::conn::Conn;
use super::reactor::ReactorShared;
use crate::signal::{SelfServe, Watched, MAX_SELF_SERVED};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Instant;

/// A connection flushed inline less than this long ago, or by a thread that flushed any
/// connection inline less than this long ago, is streaming: leave the next message to the
/// I/O thread's batch. Shorter than any round trip (a reply cannot arrive sooner),
/// longer than a sender's gap between two queued messages (well under 1 µs).
const STREAMING_GAP_NS: u64 = 3_000;

/// A thread that handed output to another connection less than this long ago and has not
/// waited for input since is streaming over several connections (see `streaming`).
/// Long: what it measures is how often a connection goes idle, and that grows as writes
/// batch (one `send` per 250-500 messages to 100 SUBs once the I/O thread writes them
/// all, an idle connection every ~100 µs); a short window flipped back to inline writes.
const STREAMING_WINDOW_NS: u64 = 1_000_000;

/// This thread's last output to tcp/ipc connections.
#[derive(Clone, Copy)]
struct ThreadOutput {
    /// When it last finished an inline flush, on any connection (`now_ns`).
    inline_ns: u64,
    /// When it last handed an idle connection output (`now_ns`).
    ns: u64,
    /// Which connection that was (its `ConnHandle`'s address; only compared).
    conn: usize,
    /// The thread waited for input (or found none) since (`note_wait`).
    waited: bool,
}

/// No output yet: as after a wait.
const NO_OUTPUT: ThreadOutput = ThreadOutput {
    inline_ns: 0,
    ns: 0,
    conn: 0,
    waited: true,
};

/// A thread that wrote a large message to a connection inline and comes back with the
/// next one within this long is streaming large messages to it: its writes may hold
/// back the bytes past their last whole segment (`tail_hold`). Well over a sender's own
/// time between two sends; under any round trip.
const HOLD_STREAM_GAP_NS: u64 = 20_000;

/// This thread's last inline write of a large message (`output_ready_large`).
struct LargeOutput {
    /// The connection (`ConnHandle::id`; 0: none since the thread last waited for input).
    conn: usize,
    /// When that write ended (`now_ns`).
    ns: u64,
    /// The connection, if that write held bytes back: they go out when the thread
    /// waits for input (`note_wait`).
    held: Option<Weak<ConnHandle>>,
}

/// Set (never cleared) when a thread first records a large write in `LARGE_OUTPUT`.
static LARGE_OUTPUT_SEEN: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's last inline write of a large message (see `output_ready_large`).
    static LARGE_OUTPUT: std::cell::RefCell<LargeOutput> = const {
        std::cell::RefCell::new(LargeOutput { conn: 0, ns: 0, held: None })
    };

    /// This thread's last output (see `streaming`). Per thread, not per connection: a
    /// thread streaming to several connections (a PUB's subscribers, one DEALER per peer)
    /// comes back to each one only after writing to all the others, so each connection
    /// alone looks idle.
    static THREAD_OUTPUT: Cell<ThreadOutput> = const { Cell::new(NO_OUTPUT) };
}

/// The calling thread receives: what it sends next may answer what it got, so its next
/// large message is not part of a stream (see `output_ready_large`), however soon it
/// comes (a REQ whose reply was already queued sent its next request within the stream
/// gap). Bytes its last write held back (`tail_hold`) are written now: the thread turns
/// to other work.
#[inline]
pub(crate) fn note_receive() {
    // Most programs never write a large message inline: they skip the thread-local
    // lookup (a call into the dynamic loader from a shared library; 4 % of an inproc
    // ROUTER's receive instructions). A thread that set its `LARGE_OUTPUT` set this first.
    if !LARGE_OUTPUT_SEEN.load(Ordering::Relaxed) {
        return;
    }
    // `try_with`: a receive from another thread-local's destructor finds this one gone.
    let held = LARGE_OUTPUT.try_with(|l| {
        let mut l = l.borrow_mut();
        l.conn = 0;
        l.held.take()
    });
    if let Ok(Some(held)) = held {
        write_held(held);
    }
}

/// Times a sending thread gave its CPU away for room (for tests). On one CPU a large
/// message (or a long run of small ones, see `write_along`) that found the kernel without
/// room for all of it yields (`signal::yield_on_one_cpu`): the thread that would make room
/// (the reader, in this process or another) runs only when this one stops, so give it the
/// CPU now rather than after queueing a whole scheduler slice more. Queueing on filled the
/// peer's window (zero-window episodes and tail loss probes over tcp; pinned to one CPU,
/// PUSH/PULL tcp 128 KiB 13.7K msg/s, with the yield 20.2K, libzmq 20.7K:
/// `docs/results/2026-12-07-single-cpu.md`). With more CPUs the reader runs meanwhile.
static YIELDS_FOR_ROOM: AtomicU64 = AtomicU64::new(0);

/// How many times sending threads gave their CPU away because a connection had no room
/// for a large message (only on one CPU; for tests).
pub fn yields_for_room() -> u64 {
    YIELDS_FOR_ROOM.load(Ordering::Relaxed)
}

/// Writes what a connection's streaming write held back, from this thread if the
/// connection is free, else by the I/O thread.
#[cold]
fn write_held(conn: Weak<ConnHandle>) {
    if let Some(c) = conn.upgrade() {
        if c.try_flush(false) != Some(true) {
            c.schedule();
        }
    }
}

/// The calling thread is about to wait for input, or found none to read (a receive that
/// would block, a poll for input about to sleep, `ZMQ_EVENTS` of a receiving socket
/// without POLLIN: what a proxy or an event loop does before it waits on the sockets'
/// descriptors). Not a send blocked at the HWM: that thread is still streaming. What it sends next
/// answers what comes (a reply, a forwarded request): not part of a stream, it goes out
/// at once. Without this, a proxy forwarding one request at a time between two
/// connections wrote through the I/O thread, 10 µs more per round trip.
/// Also does what `note_receive` does.
pub(crate) fn note_wait() {
    THREAD_OUTPUT.with(|t| {
        let mut last = t.get();
        last.waited = true;
        t.set(last);
    });
    note_receive();
}

/// True if output handed at `now` to connection `conn` (last flushed inline at
/// `conn_inline_ns`) is part of a stream, given the thread's previous output `last`: the
/// I/O thread's batch takes it rather than a `send` of its own from this thread.
/// A thread sending each message to another of 100 connections, judged by the first two
/// rules alone, still wrote inline every few µs: one message per `send` (and a peek), and
/// the connection it wrote was idle again for its next message. The third rule makes
/// such a thread leave them all to the I/O thread; it never applies to a thread writing
/// one connection, which the first two rules alone decide, as before it.
fn streaming(now: u64, conn: usize, conn_inline_ns: u64, last: ThreadOutput) -> bool {
    now.saturating_sub(conn_inline_ns) < STREAMING_GAP_NS
        || now.saturating_sub(last.inline_ns) < STREAMING_GAP_NS
        || (!last.waited && last.conn != conn && now.saturating_sub(last.ns) < STREAMING_WINDOW_NS)
}

pub(super) fn now_ns() -> u64 {
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
    /// The connection may hold a claim left in place (`Conn::release_claim`): set under
    /// its lock whenever that changes here; a stale `true` only costs a lock.
    idle_claim: AtomicBool,
}

impl ConnHandle {
    pub(super) fn new(token: usize, shared: Arc<ReactorShared>, conn: Conn) -> Arc<ConnHandle> {
        let handle = Arc::new(ConnHandle {
            token,
            shared,
            conn: Mutex::new(conn),
            last_inline_ns: AtomicU64::new(0),
            idle_claim: AtomicBool::new(false),
        });
        handle.lock().handle = Arc::downgrade(&handle);
        handle
    }

    /// The I/O thread's access.
    pub(super) fn lock(&self) -> MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The I/O thread's access when it can do without: None if another thread holds the
    /// connection.
    pub(super) fn try_lock(&self) -> Option<MutexGuard<'_, Conn>> {
        match self.conn.try_lock() {
            Ok(c) => Some(c),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// The I/O thread should look at this connection.
    pub(crate) fn schedule(&self) {
        self.shared.schedule(self.token);
    }

    /// The socket queued output while the connection's writer side was idle: write it now
    /// from this thread, or leave it to the I/O thread.
    pub(crate) fn output_ready(&self) {
        let now = now_ns();
        let conn = self.id();
        let last = THREAD_OUTPUT.with(|t| {
            let last = t.get();
            t.set(ThreadOutput {
                ns: now,
                conn,
                waited: false,
                ..last
            });
            last
        });
        let conn_inline_ns = self.last_inline_ns.load(Ordering::Relaxed);
        if streaming(now, conn, conn_inline_ns, last) {
            self.schedule();
        } else {
            self.flush_or_schedule();
        }
    }

    /// Tells this connection from others (`ThreadOutput::conn`).
    fn id(&self) -> usize {
        self as *const ConnHandle as usize
    }

    /// Like `output_ready` for a large message (`pipe::WRITE_ALONG_MIN` and up): written
    /// from this thread whatever the streaming gap. Its copy into the kernel is the work,
    /// a batch would not save any of it, and handing it to the I/O thread costs a wake-up
    /// that on 2 cores takes the receiving thread's core (tcp 64 KiB in one process: the
    /// I/O thread woken for every other message preempted the receiver ~5,000 times per
    /// 8,192 messages). The I/O thread still gets what the kernel had no room for.
    ///
    /// The thread's next large message to the same connection, within
    /// `HOLD_STREAM_GAP_NS` and with no wait for input between, is part of a stream: its
    /// write may hold back the bytes past its last whole segment (`tail_hold`).
    pub(crate) fn output_ready_large(&self) {
        let id = self.id();
        let now = now_ns();
        let hold = LARGE_OUTPUT
            .try_with(|l| {
                let l = l.borrow();
                l.conn == id && now.saturating_sub(l.ns) < HOLD_STREAM_GAP_NS
            })
            .unwrap_or(false);
        let Ok(mut conn) = self.conn.try_lock() else {
            self.schedule();
            return;
        };
        let writes = conn.writes();
        let done = conn.flush_inline(hold);
        let full = conn.waits_for_room();
        // Only a write makes the next message part of a stream (it skips the look for a
        // closed peer): a flush that found the peer gone wrote nothing.
        let wrote = conn.writes() != writes;
        let held = conn.holds_tail().then(|| conn.handle.clone());
        drop(conn);
        let end = self.note_inline_flush();
        if !LARGE_OUTPUT_SEEN.load(Ordering::Relaxed) {
            LARGE_OUTPUT_SEEN.store(true, Ordering::Relaxed);
        }
        let before = LARGE_OUTPUT.try_with(|l| {
            std::mem::replace(
                &mut *l.borrow_mut(),
                LargeOutput {
                    conn: if wrote { id } else { 0 },
                    ns: end,
                    held,
                },
            )
        });
        if let Ok(LargeOutput {
            conn: other,
            held: Some(other_held),
            ..
        }) = before
        {
            // The thread moved on to another connection: what the last one holds goes out
            // now, not at its timer (a ROUTER streaming to one worker, then another, then
            // waiting for their replies).
            if other != id {
                write_held(other_held);
            }
        }
        self.after_streaming_write(done, full);
    }

    /// After this thread's write of a large message (or of a long run of small ones):
    /// the I/O thread gets what is left for it (`done` false), and on one CPU a write
    /// that left output waiting for room (`full`, or not `done`) yields. A flush that
    /// finds the kernel full counts as done (the poller waits for room), so `done` alone
    /// missed the common case: a stream's next message, queued behind the last one's
    /// rest, went through `write_along`, found no room and returned without yielding; the
    /// sender then copied every body it lent into its queue for a whole scheduler slice
    /// (pinned, PUB/SUB tcp 64 KiB: 20-44K msg/s by run, ~3,900 bodies copied whole in the
    /// slow runs; `docs/results/2026-12-07-one-cpu-full-socket.md`).
    fn after_streaming_write(&self, done: bool, full: bool) {
        if !done {
            self.schedule();
        }
        if !done || full {
            crate::signal::yield_on_one_cpu(&YIELDS_FOR_ROOM);
        }
    }

    /// Notes that this thread just ended an inline flush of this connection (for the
    /// streaming gap); returns when (`now_ns`).
    fn note_inline_flush(&self) -> u64 {
        let now = now_ns();
        self.last_inline_ns.store(now, Ordering::Relaxed);
        THREAD_OUTPUT.with(|t| {
            t.set(ThreadOutput {
                inline_ns: now,
                ..t.get()
            })
        });
        now
    }

    /// Writes what is queued from this thread (noting when, for the streaming gap); the I/O
    /// thread gets what is left, or all of it if another thread holds the connection.
    fn flush_or_schedule(&self) {
        if let Some(done) = self.try_flush(false) {
            self.note_inline_flush();
            if done {
                return;
            }
        }
        self.schedule();
    }

    /// Writes what is queued from this thread, unless another thread holds the
    /// connection (None). Some(true) when nothing is left for the I/O thread to do.
    fn try_flush(&self, hold: bool) -> Option<bool> {
        Some(self.conn.try_lock().ok()?.flush_inline(hold))
    }

    /// A large message, or a long run of small ones, was queued while the connection was
    /// already writing: write from this thread as well if the connection is free right now
    /// (the I/O thread is busy elsewhere, e.g. reading); otherwise it is the I/O thread's.
    /// `large`: the message just queued is large (see `after_streaming_write`).
    pub(crate) fn write_along(&self, large: bool) {
        let Ok(mut conn) = self.conn.try_lock() else {
            return;
        };
        let done = conn.flush_inline(false);
        // A run of small messages yields only when left to the I/O thread, as before:
        // yielding whenever the kernel was full cost 64 B ipc streams on one CPU 5-20 %.
        let full = large && conn.waits_for_room();
        drop(conn);
        self.after_streaming_write(done, full);
    }

    /// The socket found nothing to receive: read the connection from this thread (and
    /// write what waits for room, if this thread claimed it), unless the I/O thread is
    /// busy with it.
    pub(crate) fn pull(&self) -> Pulled {
        let Ok(mut conn) = self.conn.try_lock() else {
            return Pulled::Busy;
        };
        let done = conn.pull_inline();
        let pulled = if conn.is_claimed() {
            Pulled::Claimed {
                write: conn.wants_write(),
                body_missing: conn.body_missing(),
            }
        } else {
            Pulled::Unclaimed
        };
        drop(conn);
        if !done {
            self.schedule();
        }
        pulled
    }

    /// The socket is about to wait for input: take the descriptor off the I/O thread's
    /// poller so that data arriving while this thread waits (and reads it itself) does not
    /// also wake the I/O thread, and output still waiting for room is written by this
    /// thread too. Returns what to wait on and the bytes still to come of a large body
    /// being read (if any), or None if the connection cannot be claimed now. A claim the
    /// last wait left in place is taken over. Every claim must be given back with
    /// `release` (which may leave it in place a while, see `Conn::release_claim`).
    pub(crate) fn claim(&self) -> Option<(Watched, Option<usize>)> {
        // Waits for the lock (held briefly: a batch read, a write) rather than sleep
        // without the claim: the I/O thread would read what arrives, and wake this
        // thread for it, until a later wait happens to find the lock free (tcp 64 KiB in
        // one process: such runs moved ~15 % fewer messages, the sender paying a wake-up
        // of the I/O thread in most of its writes).
        let mut conn = self.lock();
        let fd = conn.claim();
        self.idle_claim
            .store(conn.has_idle_claim(), Ordering::Relaxed);
        let fd = fd?;
        let watched = Watched {
            fd,
            write: conn.wants_write(),
        };
        Some((watched, conn.body_missing()))
    }

    /// The waiting thread is done with its claim: it stays in place if the connection is
    /// in plain traffic (see `Conn::release_claim`), else the I/O thread watches the
    /// descriptor again. Blocks on the connection's lock: call it without holding the
    /// socket's.
    pub(crate) fn release(&self) {
        let mut conn = self.lock();
        let timer = conn.release_claim();
        self.idle_claim
            .store(conn.has_idle_claim(), Ordering::Relaxed);
        drop(conn);
        if timer {
            self.schedule();
        }
    }

    /// Writes that held bytes back for the next one, and whether bytes are held now (for
    /// tests: see `tail_hold`).
    pub(crate) fn held_tail(&self) -> (u64, bool) {
        let c = self.lock();
        (c.held_writes(), c.holds_tail())
    }

    /// Reads that took bytes made by the I/O thread while the connection was claimed
    /// (for tests).
    pub(crate) fn claimed_io_reads(&self) -> u64 {
        self.lock().claimed_io_reads()
    }

    /// Reads by the I/O thread that returned bytes (for tests).
    pub(crate) fn io_reads(&self) -> u64 {
        self.lock().io_reads()
    }

    /// True while a claim is left in place unheld (looked at under the lock).
    pub(crate) fn has_idle_claim(&self) -> bool {
        self.lock().has_idle_claim()
    }

    /// Gives a claim left in place back to the I/O thread (the thread now waits another
    /// way, or not at all). A claim held by a waiting thread stays. Blocks on the
    /// connection's lock if a claim may be in place: call it without holding the socket's.
    pub(crate) fn end_idle_claim(&self) {
        if !self.idle_claim.load(Ordering::Relaxed) {
            return;
        }
        let mut conn = self.lock();
        conn.end_idle_claim();
        self.idle_claim
            .store(conn.has_idle_claim(), Ordering::Relaxed);
    }
}

/// What [`ConnHandle::pull`] found.
pub(crate) enum Pulled {
    /// Another thread held the connection: nothing done, nothing learnt.
    Busy,
    /// Still claimed by this thread; `write`: output waits for room; `body_missing`: bytes
    /// still to come of a large body being read.
    Claimed {
        write: bool,
        body_missing: Option<usize>,
    },
    /// Not claimed (any more): the I/O thread watches it.
    Unclaimed,
}

/// The connections a receiving thread reads itself while it waits: each one it could
/// claim is off the I/O thread's poller until this is dropped, and may stay off a little
/// longer for the thread's next wait (`ConnHandle::release`; dropping blocks briefly on
/// each connection's lock: never do it while holding the socket's lock). Holding the
/// handles keeps their descriptors open while a sleep polls them.
pub(crate) struct Served {
    conns: [Option<Arc<ConnHandle>>; MAX_SELF_SERVED],
    /// What each claimed connection waits for (None: not claimed by this thread).
    watched: [Option<Watched>; MAX_SELF_SERVED],
    /// The `Some`s of `watched`, packed for the poll.
    polls: [Watched; MAX_SELF_SERVED],
    npolls: usize,
    /// Bytes still to come of the large bodies being read on the claimed connections, as
    /// of the last claim or pull (None: no body in progress).
    body_missing: [Option<usize>; MAX_SELF_SERVED],
}

impl Served {
    /// Claims what it can of `sources` (at most [`MAX_SELF_SERVED`] are used).
    pub(crate) fn claim(sources: &[Weak<ConnHandle>]) -> Served {
        let none = Watched {
            fd: -1,
            write: false,
        };
        let mut s = Served {
            conns: Default::default(),
            watched: [None; MAX_SELF_SERVED],
            polls: [none; MAX_SELF_SERVED],
            npolls: 0,
            body_missing: [None; MAX_SELF_SERVED],
        };
        for (i, w) in sources.iter().take(MAX_SELF_SERVED).enumerate() {
            let Some(c) = w.upgrade() else { continue };
            if let Some((watched, missing)) = c.claim() {
                s.watched[i] = Some(watched);
                s.body_missing[i] = missing;
            }
            s.conns[i] = Some(c);
        }
        s.pack();
        s
    }

    fn pack(&mut self) {
        self.npolls = 0;
        for w in self.watched.iter().flatten() {
            self.polls[self.npolls] = *w;
            self.npolls += 1;
        }
    }
}

impl SelfServe for Served {
    fn pull(&mut self) {
        let mut changed = false;
        let per_conn = self.conns.iter().zip(self.watched.iter_mut());
        for ((c, watched), missing) in per_conn.zip(self.body_missing.iter_mut()) {
            let Some(c) = c else { continue };
            match (c.pull(), watched.as_mut()) {
                (
                    Pulled::Claimed {
                        write,
                        body_missing,
                    },
                    Some(w),
                ) => {
                    *missing = body_missing;
                    if w.write != write {
                        w.write = write;
                        changed = true;
                    }
                }
                (Pulled::Unclaimed, Some(_)) => {
                    // The I/O thread took it back (or it closed): stop polling it.
                    *watched = None;
                    *missing = None;
                    changed = true;
                }
                _ => {}
            }
        }
        if changed {
            self.pack();
        }
    }

    fn fds(&self) -> &[Watched] {
        &self.polls[..self.npolls]
    }

    fn body_missing(&self) -> Option<usize> {
        // Saturating: a peer may announce a frame of up to isize::MAX bytes.
        self.body_missing
            .iter()
            .flatten()
            .copied()
            .reduce(usize::saturating_add)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        for (c, watched) in self.conns.iter().zip(&self.watched) {
            if let (Some(c), Some(_)) = (c, watched) {
                c.release();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: usize = 1;
    const B: usize = 2;
    const US: u64 = 1_000;

    /// Last handed output to `conn` at `ns`; no inline flush lately.
    fn out(ns: u64, conn: usize, waited: bool) -> ThreadOutput {
        ThreadOutput {
            inline_ns: 0,
            ns,
            conn,
            waited,
        }
    }

    #[test]
    fn a_connection_or_thread_that_just_wrote_inline_is_streaming() {
        let now = 10_000 * US;
        assert!(streaming(now, A, now - US, NO_OUTPUT));
        let flushed = ThreadOutput {
            inline_ns: now - US,
            ..NO_OUTPUT
        };
        // Whatever the connection, and after a wait too (a reply cannot come that fast).
        assert!(streaming(now, A, 0, flushed));
    }

    #[test]
    fn one_connection_is_decided_by_its_inline_writes_alone() {
        // A request every round trip (tens of µs) on one connection: inline each time,
        // whether or not the thread was seen to wait.
        let now = 10_000 * US;
        assert!(!streaming(
            now,
            A,
            now - 40 * US,
            out(now - 40 * US, A, false)
        ));
        assert!(!streaming(
            now,
            A,
            now - 40 * US,
            out(now - 40 * US, A, true)
        ));
        assert!(!streaming(now, A, 0, NO_OUTPUT));
        // Handed output a moment ago (to the I/O thread), no inline write since: inline.
        assert!(!streaming(now, A, now - 40 * US, out(now - US, A, false)));
    }

    #[test]
    fn turning_to_another_connection_without_waiting_is_streaming() {
        let now = 10_000 * US;
        assert!(streaming(now, A, 0, out(now - 40 * US, B, false)));
        assert!(streaming(now, A, 0, out(now - 900 * US, B, false)));
        // Past the window the thread paused: write at once.
        assert!(!streaming(now, A, 0, out(now - 2_000 * US, B, false)));
    }

    #[test]
    fn a_thread_that_waited_for_input_writes_its_answer_at_once() {
        let now = 10_000 * US;
        THREAD_OUTPUT.with(|t| t.set(out(now - 40 * US, B, false)));
        assert!(streaming(now, A, 0, THREAD_OUTPUT.with(Cell::get)));
        note_wait();
        assert!(!streaming(now, A, 0, THREAD_OUTPUT.with(Cell::get)));
    }

    /// Where `note_wait` is called from (`Socket::events`, a receive that would block).
    #[test]
    fn finding_no_input_counts_as_a_wait_on_receiving_sockets_only() {
        use crate::{Context, SocketType};
        let waited = || THREAD_OUTPUT.with(Cell::get).waited;
        let streaming_output = || THREAD_OUTPUT.with(|t| t.set(out(1, B, false)));
        let ctx = Context::new();
        let pull = ctx.socket(SocketType::Pull).unwrap();
        let push = ctx.socket(SocketType::Push).unwrap();
        pull.bind("inproc://assist-note-wait").unwrap();
        push.connect("inproc://assist-note-wait").unwrap();

        // A PUSH never has input: asking it for POLLOUT in a send loop is no wait.
        streaming_output();
        push.events().unwrap();
        assert!(!waited());
        streaming_output();
        pull.events().unwrap();
        assert!(waited());
        streaming_output();
        assert!(pull.recv(crate::DONTWAIT).is_err());
        assert!(waited());

        // A receiving socket with input queued: no wait.
        push.send(b"x", 0).unwrap();
        streaming_output();
        assert_eq!(pull.events().unwrap() & crate::POLLIN, crate::POLLIN);
        assert!(!waited());
        assert_eq!(pull.recv(0).unwrap().data(), b"x");

        // A blocking receive that times out waited; a zmq_poll for input about to sleep
        // too, one for POLLOUT only does not.
        pull.set_int(crate::options::id::RCVTIMEO, 1).unwrap();
        streaming_output();
        assert!(pull.recv(0).is_err());
        assert!(waited());
        streaming_output();
        let mut serve = crate::PollServe::new();
        serve.watch(&push);
        assert!(!waited());
        serve.add(&pull);
        assert!(waited());
        drop(serve);
        // A DEALER reads, but a wait for its POLLOUT alone is no wait for input.
        let dealer = ctx.socket(SocketType::Dealer).unwrap();
        let peer = ctx.socket(SocketType::Dealer).unwrap();
        peer.bind("inproc://assist-note-wait-out").unwrap();
        dealer.connect("inproc://assist-note-wait-out").unwrap();
        streaming_output();
        let ev = dealer.wait_events(crate::POLLOUT, None).unwrap();
        assert_eq!(ev & crate::POLLOUT, crate::POLLOUT);
        assert!(!waited());
        streaming_output();
        dealer.events().unwrap();
        assert!(waited());
        drop((push, pull, dealer, peer));
        ctx.term().unwrap();
    }

    /// A send that waits for room at the HWM is still part of a stream.
    #[test]
    fn a_send_blocked_at_the_high_water_mark_is_no_wait_for_input() {
        use crate::{Context, SocketType};
        let waited = || THREAD_OUTPUT.with(Cell::get).waited;
        let ctx = Context::new();
        let dealer = ctx.socket(SocketType::Dealer).unwrap();
        dealer.set_int(crate::options::id::SNDHWM, 1).unwrap();
        dealer.set_int(crate::options::id::SNDTIMEO, 5).unwrap();
        let peer = ctx.socket(SocketType::Dealer).unwrap();
        peer.set_int(crate::options::id::RCVHWM, 1).unwrap();
        peer.bind("inproc://assist-hwm-wait").unwrap();
        dealer.connect("inproc://assist-hwm-wait").unwrap();
        THREAD_OUTPUT.with(|t| t.set(out(1, B, false)));
        let mut refused = false;
        for _ in 0..16 {
            if dealer.send(b"x", 0).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused, "the HWM never blocked the sender");
        assert!(!waited());
        drop((dealer, peer));
        ctx.term().unwrap();
    }
}
