//! Pipes: a pair of one-way message queues between a socket and one peer (another socket
//! for inproc, a connection's engine for tcp/ipc). Each queue has a high-water mark counted
//! in messages, and wakes its reader when it becomes readable while the reader waits, and
//! its writer when room appears after it was full — never per message.

use crate::io::{ConnHandle, ReactorShared};
use crate::msg::Msg;
use crate::signal::Signal;
use crate::spsc::{Padded, Spsc, Watch, Writer};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// A message at least this large, queued for a busy connection, is also written by the
/// thread that queued it (when nobody else is writing): copying it to the kernel costs
/// more than the lock and the syscall, and the I/O thread's core is better spent on the
/// connections' reads.
const WRITE_ALONG_MIN: usize = 32 * 1024;
/// Smaller messages are written along too when the connection has fallen this many
/// messages behind (only a writer allowed past a mark this high gets there: HWM 0), every
/// `WRITE_ALONG_EVERY`-th message: the I/O thread alone did not keep up with a sender
/// that never blocks, and on 2 cores a third busy thread only takes turns with the two.
const WRITE_ALONG_BACKLOG: u64 = 2048;
const WRITE_ALONG_EVERY: u64 = 256;

/// What this thread's receives and sends tell its next queue pops, kept in one
/// thread-local (each thread-local access in a shared library is a `__tls_get_addr` call;
/// three separate ones cost five calls per receive).
#[derive(Clone, Copy)]
struct RecvHints {
    /// Set around a blocking receive's first look (`spin_before_arm`): the first empty
    /// queue it finds that no tcp/ipc connection writes (inproc) watches for a publish
    /// before arming (`Reader::arm_after_spin`) with this `Watch` (None: arm at once).
    /// Once per look, so a fair queue over many idle pipes spins once, not per pipe. A
    /// connection's queue does not spin: the receiving thread reads the connection
    /// itself next (tcp 64 B was 2-6 % slower).
    spin: Option<Watch>,
    /// Set around a blocking receive's first look when its watch is patient: the first
    /// inproc queue it pops (not a connection's, not a conflating one) whose reader has
    /// taken every value it knew of waits one look interval before re-reading the
    /// published word (`Watch::Patient`). Once per look. The pause holds the socket's and
    /// the reader's locks, as the watch that may follow it does.
    pause: bool,
    /// This thread tried to send a message (on any socket) since its last blocking
    /// receive (`note_send`). A guess, per thread: such a thread is taken to be in a
    /// request-reply exchange, its next receive waiting for an answer rather than for the
    /// next value of a stream, so it watches eagerly. True at first, so a thread's first
    /// receive is eager.
    sent: bool,
}

/// Reads and updates this thread's hints with one thread-local access.
#[inline]
fn with_hints<R>(f: impl FnOnce(&mut RecvHints) -> R) -> R {
    RECV_HINTS.with(|c| {
        let mut h = c.get();
        let r = f(&mut h);
        c.set(h);
        r
    })
}

thread_local! {
    static RECV_HINTS: Cell<RecvHints> = const {
        Cell::new(RecvHints { spin: None, pause: false, sent: true })
    };
    /// Readers a batch send (`defer_reader_wakes`) owes a wake, or None outside one.
    static DEFERRED_WAKES: RefCell<Option<Vec<Waker>>> = const { RefCell::new(None) };
}

/// Runs `f` (a batch of sends) with every reader wake it causes held back until `f`
/// returns, then delivered once per reader. A reader that drains faster than the sender
/// queues (a connection's writer after a Node.js `sendMany`) was woken at nearly every
/// message: a wake-up each, and a write of a few messages each.
///
/// Nested, the inner batch's wakes join the outer's.
pub(crate) fn defer_reader_wakes<R>(f: impl FnOnce() -> R) -> R {
    struct Deliver(Option<Vec<Waker>>);
    impl Drop for Deliver {
        fn drop(&mut self) {
            let owed = DEFERRED_WAKES
                .with(|d| d.borrow_mut().take())
                .unwrap_or_default();
            match self.0.take() {
                Some(mut outer) => {
                    for w in owed {
                        owe_once(&mut outer, w);
                    }
                    DEFERRED_WAKES.with(|d| *d.borrow_mut() = Some(outer));
                }
                None => {
                    for w in owed {
                        w.data_ready();
                    }
                }
            }
        }
    }
    let outer = DEFERRED_WAKES.with(|d| d.borrow_mut().replace(Vec::new()));
    let _deliver = Deliver(outer);
    f()
}

/// Times a sending thread gave its CPU to an inproc reader it woke (for tests). On one CPU
/// a large message published to a reader waiting for it yields to that reader
/// (`signal::yield_on_one_cpu`), which takes it while its body is in cache. The waiting
/// reader yields at every look (see `signal::spin_until`), so without this the sender kept
/// the CPU for a whole slice and queued hundreds of fresh bodies first (pinned to one CPU,
/// PUSH/PULL inproc 64 KiB, 1,000 messages: 82K msg/s, with the yield 210K, libzmq 131K;
/// `2026-12-07-single-cpu.md`). Small messages are left to batch.
static YIELDS_TO_READER: AtomicU64 = AtomicU64::new(0);

/// How many times sending threads gave their CPU to an inproc reader they woke for a large
/// message (only on one CPU; for tests).
pub fn yields_to_reader() -> u64 {
    YIELDS_TO_READER.load(Ordering::Relaxed)
}

/// Adds `w` to the wakes `owed`, unless the same reader is owed one already.
fn owe_once(owed: &mut Vec<Waker>, w: Waker) {
    if !owed.iter().any(|o| o.same_as(&w)) {
        owed.push(w);
    }
}

/// Runs `f` (a pattern's receive) letting the first empty queue it pops spin briefly
/// before it arms: for a thread that would block next if nothing came. The spin is eager
/// if the thread sent something since its last such receive, patient otherwise (see
/// `watch_on` for one CPU).
pub(crate) fn spin_before_arm<R>(f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            with_hints(|h| {
                h.spin = None;
                h.pause = false;
            });
        }
    }
    with_hints(|h| {
        let watch = if std::mem::replace(&mut h.sent, false) {
            Watch::Eager
        } else {
            Watch::Patient
        };
        h.spin = Some(watch);
        h.pause = watch == Watch::Patient;
    });
    let _reset = Reset;
    f()
}

/// The watch an empty inproc queue gets before a blocking receive arms it, given the one
/// `spin_before_arm` chose and whether the process has `one_cpu`. On one CPU a thread
/// waiting for an answer (an eager watch: it sent since its last receive) does not
/// watch: the peer cannot answer while we do (the wait that follows yields the CPU to it
/// at once; pinned to one CPU, REQ/REP inproc 64 B 1.99 -> 0.86 µs, libzmq 1.73,
/// `2026-12-07-single-cpu.md`). A stream's consumer, which does not send, watches
/// patiently as before (not watching there either measured within the noise). Decided
/// here, where the queue was found empty, to keep the look off the receive path.
fn watch_on(watch: Watch, one_cpu: bool) -> Option<Watch> {
    if watch == Watch::Eager && one_cpu {
        None
    } else {
        Some(watch)
    }
}

/// The calling thread sends a message (see `spin_before_arm`).
#[inline]
pub(crate) fn note_send() {
    with_hints(|h| h.sent = true);
}

/// Who to wake when a queue changes.
#[derive(Clone, Default)]
pub(crate) enum Waker {
    /// Nobody listens (yet).
    #[default]
    Nobody,
    /// A socket's owner thread.
    Socket(Arc<Signal>),
    /// A connection in the I/O thread, by token.
    Reactor(Arc<ReactorShared>, usize),
    /// A tcp/ipc connection that application threads may drive themselves (see
    /// `io::assist`): output for it may be written by the thread that queued it, and a
    /// reader of its input may read its socket. Weak: the connection's own pipes hold it.
    Conn(Weak<ConnHandle>),
}

impl Waker {
    /// True if both wake the same reader or writer.
    fn same_as(&self, other: &Waker) -> bool {
        match (self, other) {
            (Waker::Nobody, Waker::Nobody) => true,
            (Waker::Socket(a), Waker::Socket(b)) => Arc::ptr_eq(a, b),
            (Waker::Reactor(a, t), Waker::Reactor(b, u)) => Arc::ptr_eq(a, b) && t == u,
            (Waker::Conn(a), Waker::Conn(b)) => a.ptr_eq(b),
            _ => false,
        }
    }

    /// The queue has something for this reader.
    fn data_ready(&self) {
        match self {
            Waker::Nobody => {}
            Waker::Socket(s) => s.notify(),
            Waker::Reactor(r, token) => r.schedule(*token),
            Waker::Conn(c) => {
                if let Some(c) = c.upgrade() {
                    c.output_ready();
                }
            }
        }
    }

    /// The queue has room (or news) for this writer.
    fn room_ready(&self) {
        match self {
            Waker::Nobody => {}
            Waker::Socket(s) => s.notify(),
            Waker::Reactor(r, token) => r.schedule(*token),
            Waker::Conn(c) => {
                if let Some(c) = c.upgrade() {
                    c.schedule();
                }
            }
        }
    }
}

/// The writer's private state (under the ring's writer lock).
#[derive(Default)]
struct WriterState {
    /// Frames of the message being written: published together with its last frame, so a
    /// reader never sees part of a message.
    partial: Vec<Msg>,
    /// True while the writer is in the middle of a multipart message.
    writing_more: bool,
    /// Messages started (first frame pushed) since the queue was made.
    started: u64,
    /// The last `Queue::finished` value read.
    finished_seen: u64,
}

/// The reader's private state (under the ring's reader lock).
#[derive(Default)]
struct ReaderState {
    /// Messages whose last frame was popped.
    finished: u64,
    /// The `finished` count of the next credit to the writer (`reached_credit`), kept so
    /// the count is not divided by the step at every message.
    credit_at: u64,
    /// The credit step `credit_at` was counted in (0 before the first message).
    credit_step: u64,
    /// Frames a connection took and gave back unwritten (`Queue::put_back`): the front of
    /// the queue, read before the ring.
    returned: VecDeque<Msg>,
}

/// ZMQ_CONFLATE queues: keep only the newest message (rare; locked).
#[derive(Default)]
struct Conflated {
    frames: VecDeque<Msg>,
    complete: usize,
    writing_more: bool,
}

/// Who to wake (rarely needed: only on transitions).
#[derive(Default)]
struct Wakers {
    reader: Waker,
    writer: Waker,
}

/// How many messages the reader finishes between two credits to the writer under a mark
/// of `hwm`: libzmq's low-water mark, (hwm + 1) / 2. libzmq's reader tells the writer of
/// messages read only every that many, so the writer counts up to that many messages the
/// reader already took as still queued; ours counts the same way, so a blocked or
/// dropping writer holds as many messages as libzmq's (a slow subscriber's PUB holds
/// 500-1000 of 1000, not always 1000).
fn credit_step(hwm: u64) -> u64 {
    hwm.div_ceil(2).max(1)
}

/// `finished` as the writer may count it: rounded down to a whole credit.
fn credited(finished: u64, step: u64) -> u64 {
    finished - finished % step
}

/// No blocked writer (see `Queue::wake_writer_at`).
const NOT_BLOCKED: u64 = u64::MAX;

/// A one-way queue of message frames: a lock-free single-producer/single-consumer ring
/// (`spsc::Spsc`) with the pipe's rules on top.
///
/// - The writer wakes the reader only when the reader said it is about to wait (the ring's
///   WAITING bit, set when it found the queue empty): no wake or syscall per message while
///   the reader keeps up.
/// - The high-water mark counts messages: the writer compares the messages it started with
///   the reader's `finished` count in whole credits (`credit_step`), which it re-reads
///   only when its cached copy says full. A writer at the mark records when to be woken
///   (`wake_writer_at`, at the next credit).
/// - The blocked-writer record is a Dekker pair (store; SeqCst fence; load the other
///   side's variable), so one of the two sides always sees the other.
pub(crate) struct Queue {
    ring: Spsc<Msg, WriterState, ReaderState>,
    /// Messages fully read (the reader's `ReaderState::finished`, published).
    finished: Padded<AtomicU64>,
    /// The `finished` count at which to wake a writer blocked at the HWM, or NOT_BLOCKED.
    wake_writer_at: AtomicU64,
    hwm: AtomicUsize,
    /// The writing socket's ZMQ_SNDHWM and the reading socket's ZMQ_RCVHWM that `hwm`
    /// is made of (`NO_PART` for a side that is not a socket: a connection's), kept so
    /// that either socket changing its option re-sizes the queue, as in libzmq.
    /// (Changed under this lock, so that two sockets changing theirs at once leave the
    /// sum of both.)
    parts: Mutex<(usize, usize)>,
    reader_closed: AtomicBool,
    writer_closed: AtomicBool,
    /// ZMQ_CONFLATE: new messages go to `conflated` (the ring keeps anything pushed before).
    conflate: AtomicBool,
    conflated: Mutex<Conflated>,
    wakers: Mutex<Wakers>,
    /// The writer waker is a connection (`Waker::Conn`), a hint read without the lock.
    conn_writer: AtomicBool,
    /// The writing connection left input in the kernel to this queue's reader (it reads
    /// the connection itself; see `Conn::defer_read`). A reader that arms here without
    /// reading (ZMQ_EVENTS) has the connection looked at instead.
    left_to_reader: AtomicBool,
    /// The reader has waited for this connection-fed queue through readiness
    /// (ZMQ_EVENTS / zmq_poll) rather than a blocking receive: the connection's input is
    /// not left to it (it reads the connection only inside zmq_poll's wait).
    reader_polls: AtomicBool,
}

/// Why a push was refused.
pub(crate) enum PushError {
    /// At the high-water mark; try again when woken.
    Full(Msg),
    /// The reader is gone.
    Closed(Msg),
}

/// Why a `push_copy` was refused (the bytes stay the caller's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PushRefused {
    /// At the high-water mark; try again when woken.
    Full,
    /// The reader is gone.
    Closed,
}

/// A queue's writer side, locked.
type QueueWriter<'a> = Writer<'a, Msg, WriterState, ReaderState>;

impl Queue {
    /// A queue holding at most `hwm` messages (0 = unlimited), all of it the writer's
    /// part.
    #[cfg(test)]
    pub(crate) fn new(hwm: usize) -> Arc<Queue> {
        Queue::with_parts(hwm, NO_PART)
    }

    /// A queue bounded by the writer's and the reader's parts (`NO_PART`: that side
    /// has none), see `combined_hwm`.
    fn with_parts(writer_part: usize, reader_part: usize) -> Arc<Queue> {
        Arc::new(Queue {
            ring: Spsc::new(WriterState::default(), ReaderState::default()),
            finished: Padded(AtomicU64::new(0)),
            wake_writer_at: AtomicU64::new(NOT_BLOCKED),
            hwm: AtomicUsize::new(combined_hwm(writer_part, reader_part)),
            parts: Mutex::new((writer_part, reader_part)),
            reader_closed: AtomicBool::new(false),
            writer_closed: AtomicBool::new(false),
            conflate: AtomicBool::new(false),
            conflated: Mutex::new(Conflated::default()),
            wakers: Mutex::new(Wakers::default()),
            conn_writer: AtomicBool::new(false),
            left_to_reader: AtomicBool::new(false),
            reader_polls: AtomicBool::new(false),
        })
    }

    fn wakers(&self) -> MutexGuard<'_, Wakers> {
        self.wakers.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn conflated(&self) -> MutexGuard<'_, Conflated> {
        self.conflated.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake_reader(&self) {
        self.wake_reader_for(false);
    }

    /// Wakes the reader; `large`: the value just published is a large message, which a
    /// connection writes from this thread at once (see `ConnHandle::output_ready_large`).
    fn wake_reader_for(&self, large: bool) {
        let w = self.wakers().reader.clone();
        let w = DEFERRED_WAKES.with(|d| match d.borrow_mut().as_mut() {
            Some(owed) => {
                owe_once(owed, w);
                None
            }
            None => Some(w),
        });
        match w {
            Some(Waker::Conn(c)) if large => {
                if let Some(c) = c.upgrade() {
                    c.output_ready_large();
                }
            }
            Some(w) => {
                w.data_ready();
                if large {
                    crate::signal::yield_on_one_cpu(&YIELDS_TO_READER);
                }
            }
            None => {}
        }
    }

    fn wake_writer(&self) {
        let w = self.wakers().writer.clone();
        w.room_ready();
    }

    /// The connection reading this queue, if it is a tcp/ipc connection's (for tests).
    pub(crate) fn reader_conn(&self) -> Option<Weak<ConnHandle>> {
        match &self.wakers().reader {
            Waker::Conn(c) => Some(c.clone()),
            _ => None,
        }
    }

    /// The connection writing into this queue, if application threads may read for it.
    pub(crate) fn writer_conn(&self) -> Option<Weak<ConnHandle>> {
        if !self.conn_writer.load(Ordering::Relaxed) {
            // inproc: no lock taken on a receive that finds its queues empty.
            return None;
        }
        match &self.wakers().writer {
            Waker::Conn(c) => Some(c.clone()),
            _ => None,
        }
    }

    pub(crate) fn set_reader(&self, w: Waker) {
        self.wakers().reader = w;
        // A new reader has not looked yet: the next message wakes it.
        self.ring.set_waiting();
    }

    pub(crate) fn set_writer(&self, w: Waker) {
        self.conn_writer
            .store(matches!(w, Waker::Conn(_)), Ordering::Relaxed);
        self.wakers().writer = w;
    }

    /// The writing socket's ZMQ_SNDHWM is now `hwm`: the queue's mark follows.
    pub(crate) fn set_writer_part(&self, hwm: usize) {
        self.update_hwm(|parts| parts.0 = hwm);
    }

    /// The reading socket's ZMQ_RCVHWM is now `hwm`: the queue's mark follows.
    pub(crate) fn set_reader_part(&self, hwm: usize) {
        self.update_hwm(|parts| parts.1 = hwm);
    }

    fn update_hwm(&self, change: impl FnOnce(&mut (usize, usize))) {
        let mut parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut parts);
        if !self.is_conflate() {
            self.set_hwm(combined_hwm(parts.0, parts.1));
        }
    }

    fn set_hwm(&self, hwm: usize) {
        self.hwm.store(hwm, Ordering::SeqCst);
        // A writer blocked under the old mark re-checks under the new one.
        if self.wake_writer_at.swap(NOT_BLOCKED, Ordering::SeqCst) != NOT_BLOCKED {
            self.wake_writer();
        }
    }

    /// ZMQ_CONFLATE: from now on a new message replaces whatever is queued.
    pub(crate) fn set_conflate(&self) {
        self.conflate.store(true, Ordering::SeqCst);
        self.set_hwm(0);
    }

    fn is_conflate(&self) -> bool {
        self.conflate.load(Ordering::Relaxed)
    }

    /// Writer side: true if a new message fits under the HWM. When it does not and
    /// `block`, registers for a wake when the reader has made room.
    fn has_room(&self, w: &mut WriterState, block: bool) -> bool {
        let hwm = self.hwm.load(Ordering::Relaxed) as u64;
        if hwm == 0 || w.started - w.finished_seen < hwm {
            return true;
        }
        let step = credit_step(hwm);
        w.finished_seen = credited(self.finished.load(Ordering::Acquire), step);
        if w.started - w.finished_seen < hwm {
            return true;
        }
        if !block {
            return false;
        }
        // Wake me at the first credit that leaves room (`step` messages of it, half the
        // mark, as libzmq's low-water mark).
        let at = ((w.started - hwm) / step + 1) * step;
        self.wake_writer_at.store(at, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.hwm.load(Ordering::Relaxed) as u64 != hwm {
            // The mark changed meanwhile (`set_hwm`, which may have looked for a blocked
            // writer before this one registered, so no wake would come): this message
            // goes, the next ones count under the new mark.
            return true;
        }
        w.finished_seen = credited(self.finished.load(Ordering::Relaxed), step);
        // Room appeared meanwhile: go on (a wake may still come; it is harmless).
        w.started - w.finished_seen < hwm
    }

    /// Whether the reader's `finished` count, just raised, reached a new whole credit
    /// (`credit_step`; the writer's count of room moves only then). A division only at
    /// each credit, not at every message (two divisions per message were a quarter of
    /// `pop_into`'s own instructions). A mark changed by `set_hwm` counts as a
    /// credit: the blocked-writer check then runs.
    #[inline]
    fn reached_credit(&self, r: &mut ReaderState) -> bool {
        let hwm = self.hwm.load(Ordering::Relaxed) as u64;
        if hwm == 0 {
            // No mark, no credits (`after_finish` returns at once): not even the one
            // division per message a step of 1 would cost.
            return false;
        }
        let step = credit_step(hwm);
        if r.finished < r.credit_at && r.credit_step == step {
            return false;
        }
        r.credit_step = step;
        r.credit_at = credited(r.finished, step) + step;
        true
    }

    /// After the reader finished messages (`credit`: they reached a new credit, see
    /// `reached_credit`): wakes a writer blocked at the HWM if there is room enough now.
    #[inline]
    fn after_finish(&self, finished: u64, credit: bool) {
        self.finished.store(finished, Ordering::Release);
        let hwm = self.hwm.load(Ordering::Relaxed) as u64;
        if hwm == 0 {
            // Nobody blocks without a mark; set_hwm wakes writers blocked under an old one.
            return;
        }
        // The writer counts room in whole credits, so room only appears when the credited
        // count moves; a blocked writer waits for exactly such a step. Between steps the
        // fence below (a fifth of a PULL's receive at the default mark) is skipped,
        // unless a writer is registered already (one that blocked under a mark this
        // thread has not seen yet still gets its check at every message).
        if !credit && self.wake_writer_at.load(Ordering::Relaxed) == NOT_BLOCKED {
            return;
        }
        fence(Ordering::SeqCst);
        let at = self.wake_writer_at.load(Ordering::Relaxed);
        if finished >= at
            && self
                .wake_writer_at
                .compare_exchange(at, NOT_BLOCKED, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.wake_writer();
        }
    }

    /// True if a new message may be started now (or a multipart message continued). When
    /// not, the writer is marked blocked so the reader's next pop below the mark wakes it:
    /// a caller that checks before pushing (ROUTER) waits for exactly that wake-up.
    pub(crate) fn can_write(&self) -> bool {
        if self.reader_closed.load(Ordering::Acquire) {
            return false;
        }
        if self.is_conflate() || self.hwm.load(Ordering::Relaxed) == 0 {
            // No mark: always room, and no writer state to look at under its lock (a
            // ROUTER_MANDATORY send asks at every message).
            return true;
        }
        let mut w = self.ring.writer();
        w.writing_more || self.has_room(&mut w, true)
    }

    /// For the I/O thread before decoding more input: true if a new message fits; if not,
    /// marks the writer blocked so the reader's pop below the low-water mark wakes it.
    pub(crate) fn reserve(&self) -> bool {
        if self.reader_closed.load(Ordering::Acquire) || self.is_conflate() {
            return true;
        }
        let mut w = self.ring.writer();
        w.writing_more || self.has_room(&mut w, true)
    }

    /// Drops a half-written message at the tail (its writer's connection died; the next
    /// connection must not continue it).
    pub(crate) fn abort_partial(&self) {
        {
            let mut w = self.ring.writer();
            if w.writing_more {
                w.partial.clear();
                w.writing_more = false;
                w.started -= 1;
            }
        }
        let mut c = self.conflated();
        if c.writing_more {
            while c.frames.back().is_some_and(|m| m.more()) {
                c.frames.pop_back();
            }
            c.writing_more = false;
        }
    }

    /// Appends a frame. Only the first frame of a message is checked against the HWM, so a
    /// multipart message is never split by it.
    pub(crate) fn push(&self, mut msg: Msg) -> Result<(), PushError> {
        if self.reader_closed.load(Ordering::Acquire) {
            return Err(PushError::Closed(msg));
        }
        if msg.loan().is_some() && !matches!(self.wakers().reader, Waker::Conn(_)) {
            // A lent body stays lent only on its way to a connection its sender may write
            // itself (see `loan`); any other reader would have it copied later anyway, by
            // the lender waiting for it or from another thread's cache.
            msg.unlend();
        }
        if self.is_conflate() {
            self.push_conflated(msg);
            return Ok(());
        }
        let mut w = self.ring.writer();
        if !self.start_frame(&mut w) {
            return Err(PushError::Full(msg));
        }
        if msg.more() {
            w.writing_more = true;
            w.partial.push(msg);
            return Ok(());
        }
        let len = msg.len();
        self.finish_message(w, len, |slot| slot.write(msg));
        Ok(())
    }

    /// `push` of a message's last (or only) frame, a copy of `data` built in its ring slot
    /// instead of built by the caller and moved in. Refused as `push` would refuse it;
    /// then nothing changed.
    pub(crate) fn push_copy(&self, data: &[u8]) -> Result<(), PushRefused> {
        if self.reader_closed.load(Ordering::Acquire) {
            return Err(PushRefused::Closed);
        }
        if self.is_conflate() {
            self.push_conflated(Msg::copy_from(data));
            return Ok(());
        }
        let mut w = self.ring.writer();
        if !self.start_frame(&mut w) {
            return Err(PushRefused::Full);
        }
        self.finish_message(w, data.len(), |slot| Msg::write_copy(slot, data));
        Ok(())
    }

    /// Counts a new message against the HWM at its first frame; false if it does not fit
    /// (the writer is then registered for a wake).
    #[inline(always)]
    fn start_frame(&self, w: &mut QueueWriter<'_>) -> bool {
        if !w.writing_more {
            if !self.has_room(w, true) {
                return false;
            }
            w.started += 1;
        }
        true
    }

    /// Queues the pending frames of a message and its last frame (of `len` bytes, built by
    /// `fill` in its slot), publishes them and wakes or helps the reader.
    #[inline(always)]
    fn finish_message(
        &self,
        mut w: QueueWriter<'_>,
        len: usize,
        fill: impl FnOnce(&mut MaybeUninit<Msg>) -> &mut Msg,
    ) {
        w.writing_more = false;
        let large = len >= WRITE_ALONG_MIN;
        let write_along = large
            || (w.started.is_multiple_of(WRITE_ALONG_EVERY)
                && w.started
                    .saturating_sub(self.finished.load(Ordering::Relaxed))
                    >= WRITE_ALONG_BACKLOG);
        Self::push_pending(&mut w);
        w.push_with(fill);
        let wake = w.publish();
        drop(w);
        if wake {
            self.wake_reader_for(large);
        } else if write_along {
            self.write_along(large);
        }
    }

    /// A large message was queued behind others, or many small ones are, so its connection
    /// is streaming: the queueing thread writes too when the connection is free (see
    /// `ConnHandle::write_along`).
    fn write_along(&self, large: bool) {
        let reader = match &self.wakers().reader {
            Waker::Conn(c) => c.clone(),
            _ => return,
        };
        if let Some(c) = reader.upgrade() {
            c.write_along(large);
        }
    }

    /// Writes the pending frames of a message (all but its last) into the ring.
    #[inline]
    fn push_pending(w: &mut QueueWriter<'_>) {
        if !w.partial.is_empty() {
            let mut parts = std::mem::take(&mut w.partial);
            for m in parts.drain(..) {
                w.push(m);
            }
            // Keep the buffer (and its capacity) for the next multipart message.
            w.partial = parts;
        }
    }

    fn push_conflated(&self, msg: Msg) {
        let mut c = self.conflated();
        if !c.writing_more {
            c.frames.clear();
            c.complete = 0;
        }
        let more = msg.more();
        c.writing_more = more;
        c.frames.push_back(msg);
        if !more {
            c.complete += 1;
            drop(c);
            self.wake_reader();
        }
    }

    /// Appends frames in one go, ignoring the HWM (the caller checked `reserve` at a
    /// message boundary). Used by the I/O thread for a batch decoded from one read.
    /// True if the reader was waiting for it (found the queue empty and asked for a wake).
    pub(crate) fn push_batch(&self, batch: &mut Vec<Msg>) -> bool {
        if batch.is_empty() {
            return false;
        }
        if self.is_conflate() {
            for m in batch.drain(..) {
                self.push_conflated(m);
            }
            return false;
        }
        let mut w = self.ring.writer();
        let mut whole = false;
        for msg in batch.drain(..) {
            if !w.writing_more {
                w.started += 1;
            }
            if msg.more() {
                w.writing_more = true;
                w.partial.push(msg);
            } else {
                w.writing_more = false;
                Self::push_pending(&mut w);
                w.push(msg);
                whole = true;
            }
        }
        if whole && w.publish() {
            drop(w);
            self.wake_reader();
            return true;
        }
        false
    }

    /// The reader found this queue empty and waits for the next publish (a look at the
    /// published word; the reader's lock is not taken).
    pub(crate) fn reader_waiting(&self) -> bool {
        self.ring.reader_waiting()
    }

    /// True if the reader already knows of a queued frame, so the next `pop` returns it.
    /// Looks only at the reader's own state: never at the writer's published word (whose
    /// cache line a look would pull over), never arming a wake.
    #[inline]
    pub(crate) fn has_known(&self) -> bool {
        !self.reader_closed.load(Ordering::Relaxed) && !self.ring.reader().exhausted()
    }

    /// True if at least one whole message is waiting. When not, the next message wakes
    /// the reader (ZMQ_EVENTS / ZMQ_FD rely on this).
    pub(crate) fn readable(&self) -> bool {
        if self.reader_closed.load(Ordering::Acquire) {
            return false;
        }
        let mut r = self.ring.reader();
        if r.available() {
            return true;
        }
        if self.is_conflate() && self.conflated().complete > 0 {
            return true;
        }
        if r.arm() {
            return true;
        }
        drop(r);
        // Armed: if input was left to this reader in the kernel, it will not read it from
        // here; have the I/O thread do it. The fence pairs with the reactor's after a
        // deferral (it sets the flag, then looks for the wait this arm just asked for).
        // Only a connection leaves input, so an inproc queue skips the fence.
        if self.conn_writer.load(Ordering::Relaxed) {
            if !self.reader_polls.load(Ordering::Relaxed) {
                self.reader_polls.store(true, Ordering::Relaxed);
            }
            fence(Ordering::SeqCst);
            if self.left_to_reader.load(Ordering::Relaxed) {
                if let Some(c) = self.writer_conn().and_then(|w| w.upgrade()) {
                    c.schedule();
                }
            }
        }
        self.is_conflate() && self.conflated().complete > 0
    }

    /// The reader has armed this queue through readiness (see `reader_polls`).
    pub(crate) fn reader_polls(&self) -> bool {
        self.reader_polls.load(Ordering::Relaxed)
    }

    /// The writing connection left input to this queue's reader (true) or read it (false).
    pub(crate) fn set_left_to_reader(&self, left: bool) {
        if self.left_to_reader.load(Ordering::Relaxed) != left {
            self.left_to_reader.store(left, Ordering::Relaxed);
        }
    }

    /// Takes the next frame, if a whole message (or the rest of one being read) is queued.
    #[inline]
    pub(crate) fn pop(&self) -> Option<Msg> {
        let mut m = Msg::new();
        self.pop_into(&mut m).then_some(m)
    }

    /// [`pop`](Self::pop) into `out`, dropping what it held; false, `out` untouched, if
    /// nothing is queued. The receive path hands one destination down instead of
    /// returning the frame through every level: each by-value return was stored field by
    /// field and then read as whole 16-byte blocks, a store-forwarding stall per level.
    #[inline]
    pub(crate) fn pop_into(&self, out: &mut Msg) -> bool {
        self.pop_into_known(out).is_some()
    }

    /// [`pop_into`](Self::pop_into) that also tells, for a message's last frame, whether
    /// the reader already knows of a next whole message (`Some(true)`): a ROUTER then
    /// hands out that message's routing id without taking the reader's lock to look
    /// (see `FairQueue::peek_known`). `Some(false)` for any other frame taken.
    #[inline(always)]
    pub(crate) fn pop_into_known(&self, out: &mut Msg) -> Option<bool> {
        if self.reader_closed.load(Ordering::Relaxed) {
            return None;
        }
        let mut r = self.ring.reader();
        if r.exhausted()
            && !self.conn_writer.load(Ordering::Relaxed)
            && !self.is_conflate()
            && with_hints(|h| std::mem::replace(&mut h.pause, false))
        {
            Watch::Patient.pause();
        }
        let msg = match r.pop() {
            Some(m) => m,
            None => {
                if self.is_conflate() {
                    drop(r);
                    return self.pop_conflated().map(|m| {
                        *out = m;
                        false
                    });
                }
                // Not on a connection's queue: its reader reads the socket itself first.
                let watch = if self.conn_writer.load(Ordering::Relaxed) {
                    None
                } else {
                    with_hints(|h| h.spin.take())
                        .and_then(|w| watch_on(w, crate::signal::one_cpu()))
                };
                let published = match watch {
                    Some(w) => r.arm_after_spin(w),
                    None => r.arm(),
                };
                if !published {
                    return None;
                }
                r.pop()?
            }
        };
        let mut known_next = false;
        if !msg.more() {
            known_next = !r.exhausted();
            r.finished += 1;
            let finished = r.finished;
            let credit = self.reached_credit(&mut r);
            drop(r);
            self.after_finish(finished, credit);
        }
        // The frame goes in before the old one is dropped, not held on the stack across
        // that call (the reload after it drew a third of this function's samples).
        drop(std::mem::replace(out, msg));
        Some(known_next)
    }

    fn pop_conflated(&self) -> Option<Msg> {
        let mut c = self.conflated();
        if c.complete == 0 {
            drop(c);
            // push_conflated wakes the reader at every message.
            return None;
        }
        let msg = c.frames.pop_front()?;
        if !msg.more() {
            c.complete -= 1;
        }
        Some(msg)
    }

    /// Takes up to `max_bytes` worth of whole frames at once (the I/O thread's batch).
    /// The writer gets no credit for them yet: `credit_taken` gives it once they are
    /// written (a batch the kernel has no room for still counts toward the HWM, as
    /// libzmq's does: its encoder takes 8 KiB at a time; a PUB behind a subscriber that
    /// stopped reading held a whole unwritten 256 KiB batch beyond its mark).
    /// Returns the bytes taken (body lengths plus 9 per frame).
    pub(crate) fn pop_batch(&self, out: &mut Vec<Msg>, max_bytes: usize) -> usize {
        if self.is_conflate() {
            let mut bytes = 0;
            while bytes < max_bytes {
                let Some(m) = self.pop() else { break };
                bytes += m.len() + 9;
                out.push(m);
            }
            return bytes;
        }
        if self.reader_closed.load(Ordering::Relaxed) {
            return 0;
        }
        let mut r = self.ring.reader();
        let mut bytes = 0;
        while bytes < max_bytes {
            let msg = match r.returned.pop_front().or_else(|| r.pop()) {
                Some(m) => m,
                None => {
                    if !r.arm() {
                        break;
                    }
                    match r.pop() {
                        Some(m) => m,
                        None => break,
                    }
                }
            };
            bytes += msg.len() + 9;
            if !msg.more() {
                r.finished += 1;
            }
            out.push(msg);
        }
        bytes
    }

    /// Puts frames `pop_batch` took back in front of the queue, in their order, for the
    /// next `pop_batch`: a connection that found its peer gone before it wrote any of
    /// them leaves them to the next connection, as libzmq's queue keeps them. Call before
    /// `credit_taken`: they count as queued again.
    pub(crate) fn put_back(&self, frames: impl DoubleEndedIterator<Item = Msg>) {
        if self.is_conflate() {
            // Only the newest message is kept: these come back only if nothing newer came
            // (a conflating queue does not count messages against a mark).
            let mut c = self.conflated();
            if c.frames.is_empty() && !c.writing_more {
                for m in frames {
                    if !m.more() {
                        c.complete += 1;
                    }
                    c.frames.push_back(m);
                }
            }
            return;
        }
        let mut r = self.ring.reader();
        for m in frames.rev() {
            if !m.more() {
                r.finished -= 1;
            }
            r.returned.push_front(m);
        }
    }

    /// Gives the writer credit for every message `pop_batch` took (they are written, or
    /// will never be: the connection is gone).
    pub(crate) fn credit_taken(&self) {
        let mut r = self.ring.reader();
        let finished = r.finished;
        if finished != self.finished.load(Ordering::Relaxed) {
            let credit = self.reached_credit(&mut r);
            drop(r);
            self.after_finish(finished, credit);
        }
    }

    /// The writer is done: no more frames will come. A half-written message is dropped
    /// (its receiver must never see part of a message).
    pub(crate) fn close_writer(&self) {
        {
            let mut w = self.ring.writer();
            if w.writing_more {
                w.partial.clear();
                w.writing_more = false;
                w.started -= 1;
            }
        }
        {
            let mut c = self.conflated();
            if c.writing_more {
                while c.frames.back().is_some_and(|m| m.more()) {
                    c.frames.pop_back();
                }
                c.writing_more = false;
            }
        }
        self.writer_closed.store(true, Ordering::Release);
        self.wake_reader();
    }

    /// Pops and drops every published frame; returns true if any was there.
    fn discard_published(&self) -> bool {
        let mut r = self.ring.reader();
        let start = r.finished;
        let mut any = false;
        while let Some(m) = r.pop() {
            any = true;
            if !m.more() {
                r.finished += 1;
            }
        }
        let finished = r.finished;
        drop(r);
        if finished != start {
            self.finished.store(finished, Ordering::Release);
        }
        let mut c = self.conflated();
        c.frames.clear();
        c.complete = 0;
        any
    }

    /// The reader is done: pending frames are discarded and later pushes fail.
    pub(crate) fn close_reader(&self) {
        self.reader_closed.store(true, Ordering::SeqCst);
        self.discard_published();
        self.wake_writer();
    }

    /// Drops every queued frame (a subscriber's queue before it is replayed). Called by the
    /// writer.
    pub(crate) fn clear(&self) {
        {
            let mut w = self.ring.writer();
            if w.writing_more {
                w.partial.clear();
                w.writing_more = false;
                w.started -= 1;
            }
        }
        self.discard_published();
        if self.wake_writer_at.swap(NOT_BLOCKED, Ordering::SeqCst) != NOT_BLOCKED {
            self.wake_writer();
        }
    }

    /// True once nothing more can be read: the writer closed and everything was read, or
    /// the reader itself gave up.
    pub(crate) fn is_finished(&self) -> bool {
        if self.reader_closed.load(Ordering::Acquire) {
            return true;
        }
        if !self.writer_closed.load(Ordering::Acquire) {
            return false;
        }
        !self.ring.reader().available() && self.conflated().complete == 0
    }

    pub(crate) fn is_reader_closed(&self) -> bool {
        self.reader_closed.load(Ordering::Acquire)
    }

    /// Nothing waiting to be read (for LINGER decisions).
    pub(crate) fn is_empty(&self) -> bool {
        if self.reader_closed.load(Ordering::Acquire) {
            return true;
        }
        let mut r = self.ring.reader();
        !r.available() && r.returned.is_empty() && self.conflated().frames.is_empty()
    }
}

static NEXT_PIPE_ID: AtomicU64 = AtomicU64::new(1);

/// Hashes pipe ids, which this process hands out itself (a counter, never chosen by a
/// peer): one multiplication instead of SipHash on the per-message lookups of ROUTER.
#[derive(Default, Clone, Copy)]
pub(crate) struct PipeIdHasher(u64);

impl std::hash::Hasher for PipeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        // Fibonacci hashing: consecutive ids spread over the table's high bits.
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A side of a queue that is not a socket (a connection's), so has no part in its mark.
pub(crate) const NO_PART: usize = usize::MAX;

/// A queue's mark from its two sides' parts: their sum between two sockets (inproc, as
/// libzmq), or the one socket's part; 0 (unlimited) if a socket's part is 0.
fn combined_hwm(writer_part: usize, reader_part: usize) -> usize {
    match (writer_part, reader_part) {
        (NO_PART, NO_PART) => 0,
        (NO_PART, one) | (one, NO_PART) => one,
        (0, _) | (_, 0) => 0,
        (w, r) => w + r,
    }
}

/// A map keyed by pipe id.
pub(crate) type PipeMap<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<PipeIdHasher>>;

/// A socket's view of one peer: the queue it writes to and the queue it reads from.
pub(crate) struct Pipe {
    /// Unique for the process; used by patterns to name pipes.
    pub(crate) id: u64,
    pub(crate) out: Arc<Queue>,
    pub(crate) inq: Arc<Queue>,
}

impl Pipe {
    /// Creates the two ends of a pipe: (this side, the peer's side). `hwm_out` and
    /// `hwm_in` are this side's ZMQ_SNDHWM and ZMQ_RCVHWM, the parts it has in the two
    /// queues; the peer's side has none until `set_writer_part` / `set_reader_part`
    /// give it its own (inproc).
    pub(crate) fn pair(hwm_out: usize, hwm_in: usize) -> (Arc<Pipe>, Arc<Pipe>) {
        let a_to_b = Queue::with_parts(hwm_out, NO_PART);
        let b_to_a = Queue::with_parts(NO_PART, hwm_in);
        let a = Arc::new(Pipe {
            id: NEXT_PIPE_ID.fetch_add(1, Ordering::Relaxed),
            out: a_to_b.clone(),
            inq: b_to_a.clone(),
        });
        let b = Arc::new(Pipe {
            id: NEXT_PIPE_ID.fetch_add(1, Ordering::Relaxed),
            out: b_to_a,
            inq: a_to_b,
        });
        (a, b)
    }

    /// Both directions closed from this side.
    pub(crate) fn close(&self) {
        self.out.close_writer();
        self.inq.close_reader();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferred_wakes_come_once_at_the_end_of_the_outermost_batch() {
        let sig = Arc::new(crate::signal::Signal::new().unwrap());
        let (q1, q2) = (Queue::new(0), Queue::new(0));
        // A new reader has not looked yet: its queue's next publish owes it a wake.
        q1.set_reader(Waker::Socket(sig.clone()));
        q2.set_reader(Waker::Socket(sig.clone()));
        let before = sig.generation();
        defer_reader_wakes(|| {
            assert!(q1.push(Msg::copy_from(b"a")).is_ok());
            defer_reader_wakes(|| assert!(q2.push(Msg::copy_from(b"b")).is_ok()));
            assert_eq!(sig.generation(), before, "held back, the inner batch's too");
        });
        assert_eq!(sig.generation(), before + 1, "one wake for the one reader");
        // Outside a batch a wake goes out at once.
        q1.set_reader(Waker::Socket(sig.clone()));
        assert!(q1.push(Msg::copy_from(b"c")).is_ok());
        assert_eq!(sig.generation(), before + 2);
    }

    #[test]
    fn a_queue_between_two_sockets_holds_both_parts_and_follows_either_change() {
        assert_eq!(combined_hwm(NO_PART, NO_PART), 0);
        assert_eq!(combined_hwm(7, NO_PART), 7);
        assert_eq!(combined_hwm(NO_PART, 7), 7);
        assert_eq!(combined_hwm(0, 7), 0, "a socket without a mark: none");
        let (writer, reader) = Pipe::pair(1, 1);
        reader.inq.set_reader_part(1);
        let fill = |q: &Queue| {
            let mut n = 0;
            while n < 100 && q.push_copy(b"m") == Ok(()) {
                n += 1;
            }
            n
        };
        assert_eq!(fill(&writer.out), 2, "1 + 1");
        writer.out.set_writer_part(5);
        assert_eq!(fill(&writer.out), 4, "5 + 1, two queued already");
        reader.inq.set_reader_part(3);
        assert_eq!(fill(&writer.out), 2, "5 + 3");
        writer.out.set_writer_part(0);
        assert_eq!(fill(&writer.out), 100, "no mark");
        writer.out.set_conflate();
        writer.out.set_writer_part(1);
        assert_eq!(
            writer.out.hwm.load(Ordering::SeqCst),
            0,
            "conflate keeps none"
        );
    }

    #[test]
    fn a_copied_last_frame_follows_its_message_and_is_refused_as_a_frame_would_be() {
        let q = Queue::new(2);
        let mut head = Msg::copy_from(b"head");
        head.set_more(true);
        assert!(q.push(head).is_ok());
        let body = [7u8; 100];
        assert_eq!(
            q.push_copy(&body),
            Ok(()),
            "a last frame, mid-message: no mark"
        );
        assert_eq!(q.push_copy(b"two"), Ok(()));
        assert_eq!(
            q.push_copy(b"three"),
            Err(PushRefused::Full),
            "two at a mark of two"
        );
        let got: Vec<(Vec<u8>, bool)> = std::iter::from_fn(|| q.pop())
            .map(|m| (m.data().to_vec(), m.more()))
            .collect();
        assert_eq!(
            got,
            [
                (b"head".to_vec(), true),
                (body.to_vec(), false),
                (b"two".to_vec(), false)
            ],
            "every frame once, in order, the refused one not at all"
        );
        assert_eq!(q.push_copy(b"four"), Ok(()), "room again once read");
        q.close_reader();
        assert_eq!(q.push_copy(b"five"), Err(PushRefused::Closed));
    }

    #[test]
    fn frames_put_back_come_first_in_order_and_stay_counted() {
        let q = Queue::new(4);
        for m in [&b"a1"[..], b"a2", b"b", b"c"] {
            let mut msg = Msg::copy_from(m);
            msg.set_more(m == b"a1");
            assert!(q.push(msg).is_ok());
        }
        assert!(
            q.push(Msg::copy_from(b"d")).is_ok(),
            "3 messages of 4 queued"
        );
        let mut batch = Vec::new();
        q.pop_batch(&mut batch, 11 + 11 + 10);
        assert_eq!(batch.len(), 3, "a1, a2, b");
        // The connection's write was refused: the batch goes back; nothing was credited.
        q.put_back(batch.drain(..));
        assert!(
            q.push(Msg::copy_from(b"e")).is_err(),
            "still 4 queued: no room"
        );
        assert!(!q.is_empty());
        q.credit_taken();
        assert!(
            q.push(Msg::copy_from(b"e")).is_err(),
            "crediting gives nothing back"
        );
        q.pop_batch(&mut batch, usize::MAX);
        let got: Vec<&[u8]> = batch.iter().map(|m| m.data()).collect();
        assert_eq!(got, [&b"a1"[..], b"a2", b"b", b"c", b"d"]);
        assert!(
            batch[0].more() && !batch[1].more(),
            "frames keep their flags"
        );
        q.credit_taken();
        assert!(q.is_empty());
        assert!(q.push(Msg::copy_from(b"e")).is_ok(), "written: room again");
    }

    #[test]
    fn a_conflating_queue_takes_back_only_its_newest_message() {
        let q = Queue::new(0);
        q.set_conflate();
        let mut batch = Vec::new();
        assert!(q.push(Msg::copy_from(b"old")).is_ok());
        q.pop_batch(&mut batch, usize::MAX);
        q.put_back(batch.drain(..));
        q.pop_batch(&mut batch, usize::MAX);
        assert_eq!(batch.len(), 1, "nothing newer: it comes back");
        assert_eq!(batch[0].data(), b"old");
        assert!(q.push(Msg::copy_from(b"new")).is_ok());
        q.put_back(batch.drain(..));
        q.pop_batch(&mut batch, usize::MAX);
        let got: Vec<&[u8]> = batch.iter().map(|m| m.data()).collect();
        assert_eq!(got, [&b"new"[..]], "a newer message replaced it");
        assert!(q.is_empty());
    }

    #[test]
    fn a_batch_taken_for_writing_counts_toward_the_mark_until_credited() {
        let q = Queue::new(4);
        let fill = || {
            let mut n = 0;
            while q.push(Msg::copy_from(b"x")).is_ok() {
                n += 1;
                assert!(n <= 100, "the mark never held");
            }
            n
        };
        assert_eq!(fill(), 4);
        let mut batch = Vec::new();
        q.pop_batch(&mut batch, usize::MAX);
        assert_eq!(batch.len(), 4, "the connection took everything queued");
        assert_eq!(fill(), 0, "not written yet: still counted");
        q.credit_taken();
        assert_eq!(fill(), 4, "written: room for a whole mark again");
        // Crediting twice gives nothing more.
        q.credit_taken();
        assert_eq!(fill(), 0);
    }

    #[test]
    fn a_receive_waiting_for_an_answer_on_one_cpu_does_not_watch() {
        assert_eq!(watch_on(Watch::Eager, true), None);
        assert_eq!(watch_on(Watch::Patient, true), Some(Watch::Patient));
        assert_eq!(watch_on(Watch::Eager, false), Some(Watch::Eager));
        assert_eq!(watch_on(Watch::Patient, false), Some(Watch::Patient));
    }

    #[test]
    fn a_receive_watches_eagerly_only_after_a_send() {
        let watch_of_next_receive = || spin_before_arm(|| with_hints(|h| (h.spin, h.pause)));
        // A fresh thread's first receive, then one in a stream of receives.
        std::thread::spawn(move || {
            assert_eq!(watch_of_next_receive(), (Some(Watch::Eager), false));
            assert_eq!(watch_of_next_receive(), (Some(Watch::Patient), true));
            assert_eq!(watch_of_next_receive(), (Some(Watch::Patient), true));
            note_send();
            assert_eq!(watch_of_next_receive(), (Some(Watch::Eager), false));
            assert_eq!(with_hints(|h| h.spin), None, "reset after the receive");
            assert!(!with_hints(|h| h.pause));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_patient_receive_pauses_once_and_loses_nothing() {
        std::thread::spawn(move || {
            let (idle, busy, conflating) = (Queue::new(0), Queue::new(0), Queue::new(0));
            conflating.set_conflate();
            assert!(idle.pop().is_none() && busy.pop().is_none(), "first looks");
            for m in [&b"1"[..], b"2", b"3"] {
                assert!(busy.push(Msg::copy_from(m)).is_ok());
            }
            assert!(busy.pop().is_some_and(|m| m.data() == b"1"));
            // This thread's first receive (eager), then one patient receive over several
            // queues, as a fair queue makes it.
            spin_before_arm(|| ());
            let got = spin_before_arm(|| {
                assert!(with_hints(|h| h.pause), "a receive that did not send");
                // Values this reader already knows of: taken without the pause.
                let two = busy.pop();
                assert!(with_hints(|h| h.pause), "not spent on known values");
                assert!(conflating.pop().is_none());
                assert!(with_hints(|h| h.pause), "not spent on a conflating queue");
                assert!(idle.pop().is_none());
                assert!(
                    !with_hints(|h| h.pause),
                    "spent on the first exhausted queue"
                );
                // The busy queue is still read after the pause was spent elsewhere.
                (two, busy.pop())
            });
            assert!(got.0.is_some_and(|m| m.data() == b"2"));
            assert!(got.1.is_some_and(|m| m.data() == b"3"));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_read_out_queue_wakes_its_reader_at_the_next_publish_and_at_close() {
        // XPUB reads its subscribers' queues only when its signal moved: every frame
        // published after a read-out, and the writer's close, must move it.
        let q = Queue::new(0);
        let sig = Arc::new(Signal::new().unwrap());
        q.set_reader(Waker::Socket(sig.clone()));
        for _ in 0..3 {
            let seen = sig.generation();
            assert!(q.push(Msg::copy_from(b"sub")).is_ok());
            assert!(sig.moved_from(seen));
            while q.pop().is_some() {}
        }
        let seen = sig.generation();
        q.close_writer();
        assert!(sig.moved_from(seen));
    }
}
