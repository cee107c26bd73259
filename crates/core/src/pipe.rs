//! Pipes: a pair of one-way message queues between a socket and one peer (another socket
//! for inproc, a connection's engine for tcp/ipc). Each queue has a high-water mark counted
//! in messages, and wakes its reader when it becomes readable and its writer when room
//! appears after it was full — one wake per transition, never per message.

use crate::io::ReactorShared;
use crate::msg::Msg;
use crate::signal::Signal;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

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
}

impl Waker {
    fn wake(&self) {
        match self {
            Waker::Nobody => {}
            Waker::Socket(s) => s.notify(),
            Waker::Reactor(r, token) => r.schedule(*token),
        }
    }
}

#[derive(Default)]
struct Inner {
    frames: VecDeque<Msg>,
    /// Messages whose last frame is in the queue.
    complete: usize,
    /// Messages started (first frame pushed) and not yet fully popped.
    messages: usize,
    /// True while the writer is in the middle of a multipart message.
    writing_more: bool,
    hwm: usize,
    writer_blocked: bool,
    writer_closed: bool,
    reader_closed: bool,
    /// ZMQ_CONFLATE: keep only the newest message, no high-water mark.
    conflate: bool,
    reader: Waker,
    writer: Waker,
}

impl Inner {
    /// Empties the queue (conflation: the newest message replaces the older ones).
    fn drop_all(&mut self) {
        self.frames.clear();
        self.complete = 0;
        self.messages = 0;
    }
}

/// A one-way queue of message frames.
pub(crate) struct Queue {
    inner: Mutex<Inner>,
}

/// Why a push was refused.
pub(crate) enum PushError {
    /// At the high-water mark; try again when woken.
    Full(Msg),
    /// The reader is gone.
    Closed(Msg),
}

impl Queue {
    /// A queue holding at most `hwm` messages (0 = unlimited).
    pub(crate) fn new(hwm: usize) -> Arc<Queue> {
        Arc::new(Queue {
            inner: Mutex::new(Inner {
                hwm,
                ..Default::default()
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_reader(&self, w: Waker) {
        self.lock().reader = w;
    }

    pub(crate) fn set_writer(&self, w: Waker) {
        self.lock().writer = w;
    }

    pub(crate) fn set_hwm(&self, hwm: usize) {
        self.lock().hwm = hwm;
    }

    /// ZMQ_CONFLATE: from now on a new message replaces whatever is queued.
    pub(crate) fn set_conflate(&self) {
        let mut g = self.lock();
        g.conflate = true;
        g.hwm = 0;
    }

    /// True if a new message may be started now (or a multipart message continued). When
    /// not, the writer is marked blocked so the reader's next pop below the mark wakes it:
    /// a caller that checks before pushing (ROUTER) waits for exactly that wake-up.
    pub(crate) fn can_write(&self) -> bool {
        let mut g = self.lock();
        if g.reader_closed {
            return false;
        }
        if g.writing_more || g.hwm == 0 || g.messages < g.hwm {
            return true;
        }
        g.writer_blocked = true;
        false
    }

    /// For the I/O thread before decoding more input: true if a new message fits; if not,
    /// marks the writer blocked so the reader's next pop below the mark wakes it.
    pub(crate) fn reserve(&self) -> bool {
        let mut g = self.lock();
        if g.reader_closed || g.writing_more || g.hwm == 0 || g.messages < g.hwm {
            return true;
        }
        g.writer_blocked = true;
        false
    }

    /// Drops a half-written message at the tail (its writer's connection died; the next
    /// connection must not continue it).
    pub(crate) fn abort_partial(&self) {
        let mut g = self.lock();
        if g.writing_more {
            while g.frames.back().is_some_and(|m| m.more()) {
                g.frames.pop_back();
            }
            g.writing_more = false;
            g.messages = g.complete;
        }
    }

    /// Appends a frame. Only the first frame of a message is checked against the HWM, so a
    /// multipart message is never split by it.
    pub(crate) fn push(&self, msg: Msg) -> Result<(), PushError> {
        let mut g = self.lock();
        if g.reader_closed {
            return Err(PushError::Closed(msg));
        }
        if !g.writing_more {
            if g.hwm != 0 && g.messages >= g.hwm {
                g.writer_blocked = true;
                return Err(PushError::Full(msg));
            }
            if g.conflate {
                g.drop_all();
            }
            g.messages += 1;
        }
        let more = msg.more();
        g.writing_more = more;
        g.frames.push_back(msg);
        if !more {
            g.complete += 1;
            if g.complete == 1 {
                let w = g.reader.clone();
                drop(g);
                w.wake();
            }
        }
        Ok(())
    }

    /// Appends frames in one lock, ignoring the HWM (the caller checked `can_write` at a
    /// message boundary). Used by the I/O thread for a batch decoded from one read.
    pub(crate) fn push_batch(&self, batch: &mut Vec<Msg>) {
        if batch.is_empty() {
            return;
        }
        let mut g = self.lock();
        let was_empty = g.complete == 0;
        for msg in batch.drain(..) {
            if !g.writing_more {
                if g.conflate {
                    g.drop_all();
                }
                g.messages += 1;
            }
            let more = msg.more();
            g.writing_more = more;
            if !more {
                g.complete += 1;
            }
            g.frames.push_back(msg);
        }
        if was_empty && g.complete > 0 {
            let w = g.reader.clone();
            drop(g);
            w.wake();
        }
    }

    /// True if at least one whole message is waiting.
    pub(crate) fn readable(&self) -> bool {
        self.lock().complete > 0
    }

    /// Takes the next frame, if a whole message (or the rest of one being read) is queued.
    pub(crate) fn pop(&self) -> Option<Msg> {
        let mut g = self.lock();
        let msg = Self::pop_locked(&mut g)?;
        let wake = Self::after_pop(&mut g, &msg);
        if let Some(w) = wake {
            drop(g);
            w.wake();
        }
        Some(msg)
    }

    fn pop_locked(g: &mut Inner) -> Option<Msg> {
        if g.complete == 0 {
            return None;
        }
        g.frames.pop_front()
    }

    fn after_pop(g: &mut Inner, msg: &Msg) -> Option<Waker> {
        if msg.more() {
            return None;
        }
        g.complete -= 1;
        g.messages -= 1;
        if g.writer_blocked && (g.hwm == 0 || g.messages <= g.hwm / 2) {
            g.writer_blocked = false;
            return Some(g.writer.clone());
        }
        None
    }

    /// Takes up to `max_bytes` worth of whole frames in one lock (the I/O thread's batch).
    pub(crate) fn pop_batch(&self, out: &mut Vec<Msg>, max_bytes: usize) {
        let mut g = self.lock();
        let mut bytes = 0;
        let mut wake = None;
        while bytes < max_bytes {
            let Some(msg) = Self::pop_locked(&mut g) else {
                break;
            };
            bytes += msg.len() + 9;
            if let Some(w) = Self::after_pop(&mut g, &msg) {
                wake = Some(w);
            }
            out.push(msg);
        }
        drop(g);
        if let Some(w) = wake {
            w.wake();
        }
    }

    /// The writer is done: no more frames will come. A half-written message is dropped
    /// (its receiver must never see part of a message).
    pub(crate) fn close_writer(&self) {
        let mut g = self.lock();
        if g.writing_more {
            // The unfinished tail is the run of MORE frames after the last message end.
            while g.frames.back().is_some_and(|m| m.more()) {
                g.frames.pop_back();
            }
            g.writing_more = false;
            g.messages = g.complete;
        }
        g.writer_closed = true;
        let w = g.reader.clone();
        drop(g);
        w.wake();
    }

    /// The reader is done: pending frames are discarded and later pushes fail.
    pub(crate) fn close_reader(&self) {
        let mut g = self.lock();
        g.reader_closed = true;
        g.frames.clear();
        g.complete = 0;
        g.messages = 0;
        let w = g.writer.clone();
        drop(g);
        w.wake();
    }

    /// Drops every queued frame (a subscriber's queue before it is replayed).
    pub(crate) fn clear(&self) {
        let mut g = self.lock();
        g.frames.clear();
        g.complete = 0;
        g.messages = 0;
        g.writing_more = false;
        let blocked = std::mem::take(&mut g.writer_blocked);
        let w = g.writer.clone();
        drop(g);
        if blocked {
            w.wake();
        }
    }

    /// True once nothing more can be read: the writer closed and everything was read, or
    /// the reader itself gave up.
    pub(crate) fn is_finished(&self) -> bool {
        let g = self.lock();
        g.reader_closed || (g.writer_closed && g.complete == 0)
    }

    pub(crate) fn is_reader_closed(&self) -> bool {
        self.lock().reader_closed
    }

    /// Frames waiting (for LINGER decisions).
    pub(crate) fn is_empty(&self) -> bool {
        self.lock().frames.is_empty()
    }
}

static NEXT_PIPE_ID: AtomicU64 = AtomicU64::new(1);

/// A socket's view of one peer: the queue it writes to and the queue it reads from.
pub(crate) struct Pipe {
    /// Unique for the process; used by patterns to name pipes.
    pub(crate) id: u64,
    pub(crate) out: Arc<Queue>,
    pub(crate) inq: Arc<Queue>,
}

impl Pipe {
    /// Creates the two ends of a pipe: (this side, the peer's side).
    pub(crate) fn pair(hwm_out: usize, hwm_in: usize) -> (Arc<Pipe>, Arc<Pipe>) {
        let a_to_b = Queue::new(hwm_out);
        let b_to_a = Queue::new(hwm_in);
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
