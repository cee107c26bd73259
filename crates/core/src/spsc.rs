//! A single-producer/single-consumer queue of values in linked chunks (the shape of
//! libzmq's `yqueue`/`ypipe`): unbounded, no allocation in steady state (the reader hands
//! each chunk it finished back to the writer as a spare, up to `SPARES` of them), and no
//! lock shared between the
//! two sides. The writer fills slots privately and makes them visible with one release
//! store (`publish`); the reader caches the published position and only re-reads it when it
//! has consumed everything it knew about, so the two sides exchange one cache line per batch
//! rather than per value.
//!
//! Each side's private state sits behind its own lock. Only one thread ever takes each in
//! normal operation (the socket's owner or the I/O thread), so the lock is uncontended and
//! its cache line stays with that thread; it is what makes the API safe to call from any
//! thread (a rare cross-side call, such as the writer discarding a queue, just takes the
//! reader's lock). Extra per-side state (`W`, `R`) rides in the same locks.
//!
//! Sleeping readers: a reader that found nothing sets the `WAITING` bit in the published
//! word with a compare-and-swap against the position it saw; the writer publishes with a
//! swap and so learns, in the same atomic operation, whether the reader is waiting for a
//! wake (libzmq's ypipe does the same with its `c` pointer). One of the two always sees
//! the other: both act on one location. No fence, and no second shared cache line.

use crate::flaglock::{FlagGuard, FlagLock};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

/// In `published`: the reader waits to be woken by the next publish.
const WAITING: u64 = 1 << 63;

/// How `arm_after_spin` watches the published word before asking for a wake. Both last
/// about 128 pauses (1-6 µs by the CPU's pause latency); they differ in how often they
/// look. Each look pulls the word's cache line over to the reader's core, and the
/// writer's next publish (an atomic swap) then stalls until it has the line back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Watch {
    /// 16 looks, 8 pauses apart: a reply in a request-reply exchange is taken within
    /// ~0.1 µs of its publish.
    Eager,
    /// 2 looks, 64 pauses apart: a consumer of a stream lets the writer publish several
    /// values between two looks, so the writer stalls once per batch, not per value
    /// (inproc PUB/SUB 64 B +50 %, PAIR +60 % on the Intel host). Once per receive, on
    /// the first inproc queue whose reader took every value it knew of, the receive also
    /// waits one such interval (`pause`) before it re-reads the word: re-reading at once
    /// found one new value at a time while the writer kept publishing, a line transfer
    /// per value again (a further +15-30 %).
    Patient,
}

impl Watch {
    /// (looks, pauses before each look)
    fn pace(self) -> (usize, usize) {
        match self {
            Watch::Eager => (16, 8),
            Watch::Patient => (2, 64),
        }
    }

    /// Spins for one interval between two looks.
    pub(crate) fn pause(self) {
        for _ in 0..self.pace().1 {
            std::hint::spin_loop();
        }
    }
}

/// How many slots ahead of its write the writer asks for a slot's line.
const WRITE_AHEAD: usize = 4;
/// Values per chunk (a chunk of 64-byte messages is 4 KiB).
const CHUNK: usize = 64;
/// Finished chunks kept for reuse (a queue whose depth swings by up to this many chunks
/// allocates nothing; VecDeque, before, kept its peak capacity for ever).
const SPARES: usize = 8;

/// Chunks the reader finished with, for the writer (touched once per chunk by each side).
struct Spares<T> {
    chunks: [ChunkPtr<T>; SPARES],
    len: usize,
}

/// One value's cell, cache-line aligned: a 64-byte message then fills exactly one line
/// (instead of straddling two, which the reader would miss on twice).
#[repr(align(64))]
struct Slot<T>(UnsafeCell<MaybeUninit<T>>);

struct Chunk<T> {
    slots: [Slot<T>; CHUNK],
    next: AtomicPtr<Chunk<T>>,
}

impl<T> Chunk<T> {
    fn alloc() -> *mut Chunk<T> {
        Box::into_raw(Box::new(Chunk {
            slots: [const { Slot(UnsafeCell::new(MaybeUninit::uninit())) }; CHUNK],
            next: AtomicPtr::new(ptr::null_mut()),
        }))
    }
}

/// A chunk pointer held by one side.
struct ChunkPtr<T>(*mut Chunk<T>);

// SAFETY: a ChunkPtr is only dereferenced by the side whose mutex owns it; the chunk's
// slots hold `T`s that move between threads, which is fine when T: Send.
unsafe impl<T: Send> Send for ChunkPtr<T> {}

/// Pads to a cache-line pair so the writer's and the reader's hot fields never share one.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The writer's private state.
pub(crate) struct WriteSide<T, W> {
    chunk: ChunkPtr<T>,
    /// Next position to write (positions count values since creation).
    pos: u64,
    /// State the owner keeps beside the writer's (same lock).
    pub(crate) extra: W,
}

/// The reader's private state.
pub(crate) struct ReadSide<T, R> {
    chunk: ChunkPtr<T>,
    /// Next position to read.
    pos: u64,
    /// The last `published` value seen.
    known: u64,
    /// State the owner keeps beside the reader's (same lock).
    pub(crate) extra: R,
}

/// The queue. `W` and `R` are extra per-side state kept under the sides' locks.
pub(crate) struct Spsc<T, W, R> {
    write: Padded<FlagLock<WriteSide<T, W>>>,
    read: Padded<FlagLock<ReadSide<T, R>>>,
    /// Values the reader may take: every position below this one is initialised; plus
    /// the WAITING bit.
    published: Padded<AtomicU64>,
    /// A chunk the reader finished with, for the writer to reuse.
    spares: Mutex<Spares<T>>,
}

impl<T: Send, W, R> Spsc<T, W, R> {
    /// A queue whose reader counts as waiting until it first looks (so the first publish
    /// reports a wake).
    pub(crate) fn new(w: W, r: R) -> Self {
        let first = Chunk::alloc();
        Spsc {
            write: Padded(FlagLock::new(WriteSide {
                chunk: ChunkPtr(first),
                pos: 0,
                extra: w,
            })),
            read: Padded(FlagLock::new(ReadSide {
                chunk: ChunkPtr(first),
                pos: 0,
                known: 0,
                extra: r,
            })),
            published: Padded(AtomicU64::new(WAITING)),
            spares: Mutex::new(Spares {
                chunks: [const { ChunkPtr(ptr::null_mut()) }; SPARES],
                len: 0,
            }),
        }
    }

    fn take_spare(&self) -> *mut Chunk<T> {
        let mut s = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        if s.len == 0 {
            return ptr::null_mut();
        }
        s.len -= 1;
        let i = s.len;
        std::mem::replace(&mut s.chunks[i], ChunkPtr(ptr::null_mut())).0
    }

    /// Keeps a chunk the reader finished (every slot read out), or frees it.
    fn put_spare(&self, c: ChunkPtr<T>) {
        let mut s = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        if s.len < SPARES {
            let i = s.len;
            s.chunks[i] = c;
            s.len += 1;
        } else {
            drop(s);
            // SAFETY: the reader moved past the chunk and the writer left it long ago;
            // nobody else references it and its slots are empty.
            drop(unsafe { Box::from_raw(c.0) });
        }
    }

    /// The reader asked for a wake at the next publish (the writer has not published since).
    #[inline]
    pub(crate) fn reader_waiting(&self) -> bool {
        self.published.load(Ordering::Acquire) & WAITING != 0
    }

    /// Marks the reader as waiting (a new reader that has not looked yet).
    pub(crate) fn set_waiting(&self) {
        self.published.fetch_or(WAITING, Ordering::AcqRel);
    }

    /// Takes the writer's side.
    #[inline]
    pub(crate) fn writer(&self) -> Writer<'_, T, W, R> {
        Writer {
            q: self,
            g: self.write.lock(),
        }
    }

    /// Takes the reader's side.
    #[inline]
    pub(crate) fn reader(&self) -> Reader<'_, T, W, R> {
        Reader {
            q: self,
            g: self.read.lock(),
        }
    }
}

/// The writer's side, locked.
pub(crate) struct Writer<'a, T: Send, W, R> {
    q: &'a Spsc<T, W, R>,
    g: FlagGuard<'a, WriteSide<T, W>>,
}

impl<T: Send, W, R> Writer<'_, T, W, R> {
    /// Writes a value, invisible to the reader until `publish`.
    #[inline]
    pub(crate) fn push(&mut self, v: T) {
        self.push_with(|slot| slot.write(v));
    }

    /// Like `push`, with the value built by `fill` in its slot rather than moved in (a
    /// value built elsewhere and moved is stored field by field, then reloaded as whole
    /// blocks whose loads miss store forwarding). `fill` must return the slot it was
    /// given, initialised (`MaybeUninit::write` does both); anything else panics.
    #[inline]
    pub(crate) fn push_with(&mut self, fill: impl FnOnce(&mut MaybeUninit<T>) -> &mut T) {
        let g = &mut *self.g;
        let idx = (g.pos % CHUNK as u64) as usize;
        if idx == 0 && g.pos != 0 {
            // The current chunk is full: continue in the spare one, or a new one.
            let mut next = self.q.take_spare();
            if next.is_null() {
                next = Chunk::alloc();
            } else {
                // SAFETY: the reader gave this chunk up (it moved past every slot of it,
                // all of which it read out) before putting it in `spares`; the mutex
                // ordered that before our taking it, which made it ours alone.
                unsafe { (*next).next.store(ptr::null_mut(), Ordering::Relaxed) };
            }
            // SAFETY: g.chunk is the writer's current chunk, alive until the reader leaves
            // it, which needs a position in `next` to be published first.
            unsafe { (*g.chunk.0).next.store(next, Ordering::Relaxed) };
            g.chunk = ChunkPtr(next);
        }
        // SAFETY: slot `pos` lies at or beyond `published`, so the reader does not touch it
        // until we publish; it is uninitialised (never written, or read out by the reader
        // before the chunk came back as a spare), and only this writer reaches it.
        let slot = unsafe { &mut *(*g.chunk.0).slots[idx].0.get() };
        let at = slot.as_ptr();
        // A `&mut T` at the slot's address can only exist once the slot holds a value.
        assert!(
            ptr::eq(fill(slot), at),
            "push_with: the slot was not filled"
        );
        g.pos += 1;
        if idx + WRITE_AHEAD < CHUNK {
            // The reader last had that line (chunks are recycled): ask for it now rather
            // than when its value is written (see `prefetch`).
            // SAFETY: the chunk is the writer's current one, alive (see above); only an
            // address is formed, nothing is read or written through it.
            crate::prefetch::for_write(unsafe { (*g.chunk.0).slots[idx + WRITE_AHEAD].0.get() });
        }
    }

    /// Makes every value written so far visible to the reader. Returns true if the reader
    /// was waiting for a wake (the caller wakes it; the bit is cleared).
    #[inline]
    pub(crate) fn publish(&mut self) -> bool {
        // Release: the slot writes (and chunk links) happen-before a reader that sees it.
        // Acquire: pairs with the reader's arming (nothing is read under it, but keeps the
        // swap a plain AcqRel read-modify-write).
        self.q.published.swap(self.g.pos, Ordering::AcqRel) & WAITING != 0
    }
}

impl<T: Send, W, R> Deref for Writer<'_, T, W, R> {
    type Target = W;
    fn deref(&self) -> &W {
        &self.g.extra
    }
}

impl<T: Send, W, R> DerefMut for Writer<'_, T, W, R> {
    fn deref_mut(&mut self) -> &mut W {
        &mut self.g.extra
    }
}

/// The reader's side, locked.
pub(crate) struct Reader<'a, T: Send, W, R> {
    q: &'a Spsc<T, W, R>,
    g: FlagGuard<'a, ReadSide<T, R>>,
}

impl<T: Send, W, R> Reader<'_, T, W, R> {
    /// True if a published value is waiting (re-reads the published position only when
    /// everything known was consumed).
    #[inline]
    pub(crate) fn available(&mut self) -> bool {
        let g = &mut *self.g;
        if g.pos < g.known {
            return true;
        }
        g.known = self.q.published.load(Ordering::Acquire) & !WAITING;
        g.pos < g.known
    }

    /// Having found nothing: asks the writer for a wake at its next publish. Returns true
    /// (without arming) if something was published meanwhile.
    #[inline]
    pub(crate) fn arm(&mut self) -> bool {
        let g = &mut *self.g;
        let seen = self.q.published.load(Ordering::Acquire);
        if seen & !WAITING != g.pos {
            g.known = seen & !WAITING;
            return g.pos < g.known;
        }
        match self.q.published.compare_exchange(
            seen,
            seen | WAITING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => false,
            Err(now) => {
                // Only the writer changes the word, and only by publishing more.
                g.known = now & !WAITING;
                g.pos < g.known
            }
        }
    }

    /// `arm`, after watching the published word for a moment first: a reader that keeps up
    /// with a streaming writer would otherwise ask for a wake at every value, and each
    /// publish would then pay for waking it (the swap finds WAITING, the owner notifies);
    /// on a host where a cache line is slow to cross cores that halved inproc throughput.
    /// Only for a thread about to block anyway (a blocking receive): the look spins.
    pub(crate) fn arm_after_spin(&mut self, watch: Watch) -> bool {
        let pos = self.g.pos;
        for _ in 0..watch.pace().0 {
            watch.pause();
            let seen = self.q.published.load(Ordering::Acquire);
            if seen & !WAITING != pos {
                self.g.known = seen & !WAITING;
                return true;
            }
        }
        self.arm()
    }

    /// True when every value this reader knew to be published was taken: the next `pop`
    /// re-reads the published word.
    #[inline]
    pub(crate) fn exhausted(&self) -> bool {
        self.g.pos >= self.g.known
    }

    /// Takes the next published value.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        if !self.available() {
            return None;
        }
        let g = &mut *self.g;
        let idx = (g.pos % CHUNK as u64) as usize;
        if idx == 0 && g.pos != 0 {
            // SAFETY: position `pos` is published, so the writer linked the next chunk
            // before its Release store of `published`, which our Acquire load saw.
            let next = unsafe { (*g.chunk.0).next.load(Ordering::Relaxed) };
            let done = std::mem::replace(&mut g.chunk, ChunkPtr(next));
            // Every slot of `done` was read out and the writer moved on: hand it back.
            self.q.put_spare(done);
        }
        // SAFETY: pos < published: the writer initialised this slot and will not touch it
        // again until the chunk comes back as a spare, after we read it out here.
        let v = unsafe { (*(*g.chunk.0).slots[idx].0.get()).assume_init_read() };
        g.pos += 1;
        Some(v)
    }
}

impl<T: Send, W, R> Deref for Reader<'_, T, W, R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.g.extra
    }
}

impl<T: Send, W, R> DerefMut for Reader<'_, T, W, R> {
    fn deref_mut(&mut self) -> &mut R {
        &mut self.g.extra
    }
}

impl<T, W, R> Drop for Spsc<T, W, R> {
    fn drop(&mut self) {
        let r = self.read.0.get_mut();
        let w = self.write.0.get_mut();
        // Drop every value written and not read (published or not), freeing chunks as
        // they are passed; the writer's chunk is the last one.
        // Both sides' chunks are linked from the reader's to the writer's; each side's
        // chunk is the one holding the position before its next one.
        let mut chunk = r.chunk.0;
        for pos in r.pos..w.pos {
            let idx = (pos % CHUNK as u64) as usize;
            if idx == 0 && pos != 0 {
                // SAFETY: exclusive access (&mut self); `chunk` holds positions before
                // `pos`, all dropped, and its successor was linked when `pos` was written.
                let next = unsafe { (*chunk).next.load(Ordering::Relaxed) };
                // SAFETY: nothing else references a chunk behind both sides.
                drop(unsafe { Box::from_raw(chunk) });
                chunk = next;
            }
            // SAFETY: positions in [r.pos, w.pos) hold initialised values not yet read.
            unsafe { (*(*chunk).slots[idx].0.get()).assume_init_drop() };
        }
        debug_assert_eq!(chunk, w.chunk.0);
        // SAFETY: the writer's current chunk (also the reader's by now), owned by nobody else.
        drop(unsafe { Box::from_raw(chunk) });
        let spares = self.spares.get_mut().unwrap_or_else(|e| e.into_inner());
        for c in &spares.chunks[..spares.len] {
            // SAFETY: a spare belongs to the queue alone; its slots are empty.
            drop(unsafe { Box::from_raw(c.0) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_spinning_arm_asks_for_a_wake_only_when_nothing_came() {
        for watch in [Watch::Eager, Watch::Patient] {
            spinning_arm(watch);
        }
    }

    fn spinning_arm(watch: Watch) {
        let q: Spsc<u32, (), ()> = Spsc::new((), ());
        // The first reader look clears the initial WAITING.
        assert!(q.reader().pop().is_none());
        assert!(!q.reader().arm_after_spin(watch));
        assert!(
            q.writer().publish(),
            "armed: the next publish wakes the reader"
        );
        // Published while the reader was not looking: taken, not armed.
        q.writer().push(7);
        q.writer().publish();
        let mut r = q.reader();
        assert!(r.arm_after_spin(watch));
        assert_eq!(r.pop(), Some(7));
        drop(r);
        q.writer().push(8);
        assert!(!q.writer().publish(), "not armed: no wake owed");
        // A writer publishing during the look (another thread) is caught by it or wakes
        // the reader it armed: either way the value is not lost.
        let q = Arc::new(Spsc::<u32, (), ()>::new((), ()));
        assert_eq!(q.reader().pop(), None);
        let w = {
            let q = q.clone();
            std::thread::spawn(move || {
                let mut wg = q.writer();
                wg.push(9);
                wg.publish()
            })
        };
        let mut r = q.reader();
        let caught = r.arm_after_spin(watch);
        drop(r);
        let woke = w.join().unwrap();
        assert!(caught || woke, "published {caught} / woken {woke}");
        assert_eq!(q.reader().pop(), Some(9));
    }

    #[test]
    fn values_cross_chunks_in_order_and_only_once_published() {
        let q: Spsc<Box<u64>, (), ()> = Spsc::new((), ());
        for round in 0..3u64 {
            let n = CHUNK as u64 * 2 + 5;
            q.writer().push(Box::new(round * 1000));
            assert!(!q.reader().available(), "unpublished values stay hidden");
            q.writer().publish();
            assert!(q.reader().available());
            for i in 1..n {
                q.writer().push(Box::new(round * 1000 + i));
                q.writer().publish();
            }
            let mut r = q.reader();
            for i in 0..n {
                assert_eq!(*r.pop().unwrap(), round * 1000 + i);
            }
            assert!(r.pop().is_none());
        }
    }

    #[test]
    fn drop_releases_unread_values() {
        let marker = Arc::new(());
        for unread in [0usize, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK] {
            for read in [0usize, 1, CHUNK, CHUNK + 3] {
                let q: Spsc<Arc<()>, (), ()> = Spsc::new((), ());
                let mut w = q.writer();
                for _ in 0..read + unread {
                    w.push(marker.clone());
                }
                // Publish only part: the rest is written but unpublished.
                w.publish();
                w.push(marker.clone());
                drop(w);
                for _ in 0..read {
                    q.reader().pop().unwrap();
                }
                drop(q);
                assert_eq!(Arc::strong_count(&marker), 1, "unread={unread} read={read}");
            }
        }
    }

    #[test]
    fn two_threads() {
        let n: u64 = if cfg!(miri) {
            3 * CHUNK as u64 + 7
        } else {
            200_000
        };
        let q: Arc<Spsc<Box<u64>, (), ()>> = Arc::new(Spsc::new((), ()));
        let q2 = q.clone();
        let t = std::thread::spawn(move || {
            for i in 0..n {
                let mut w = q2.writer();
                w.push(Box::new(i));
                if i % 3 != 1 {
                    w.publish();
                }
            }
            q2.writer().publish();
        });
        let mut next = 0;
        while next < n {
            if let Some(v) = q.reader().pop() {
                assert_eq!(*v, next);
                next += 1;
            } else {
                std::thread::yield_now();
            }
        }
        t.join().unwrap();
        assert!(q.reader().pop().is_none());
    }
}
