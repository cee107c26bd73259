//! A single-producer/single-consumer queue of values in linked chunks (the shape of
//! libzmq's `yqueue`/`ypipe`): unbounded, no allocation in steady state (the reader hands
//! each chunk it finished back to the writer as a spare, up to `SPARE_SLOTS` slots of
//! them), chunks that grow as the queue deepens (`FIRST_CHUNK` up to `MAX_CHUNK` slots),
//! and no lock shared between the two sides. The writer fills slots privately and makes
//! them visible with one release store (`publish`); the reader caches the published
//! position and only re-reads it when it has consumed everything it knew about, so the two
//! sides exchange one cache line per batch rather than per value.
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
/// Slots in a queue's first chunk (4 KiB of 64-byte messages): what an idle queue costs.
const FIRST_CHUNK: usize = 64;
/// Each chunk the writer has to allocate (no spare left: the queue is deepening) has
/// twice the slots of its previous allocation, up to this many (16 KiB of 64-byte
/// messages, as libzmq's chunks); the size never shrinks back (a reused spare may be
/// smaller). With fixed 64-slot chunks a deep queue cost a malloc and a
/// cross-thread free every 64 values, and the two threads queued on the allocator's
/// arena lock (a PUB with 200 inproc subscribers: 100-120K futex calls for 10M
/// deliveries).
const MAX_CHUNK: usize = 256;
/// Finished chunks kept for reuse hold at most this many slots together, the largest
/// chunks first: a queue whose depth swings by up to this much allocates nothing once its
/// spares settled (as before chunks grew; VecDeque, before that, kept its peak capacity
/// for ever). A drained queue keeps at most `MAX_CHUNK + SPARE_SLOTS` slots (48 KiB of
/// 64-byte messages; 36 KiB before chunks grew, libzmq 32 KiB).
const SPARE_SLOTS: usize = 512;
/// Room for as many spares as the slot budget can hold.
const SPARES: usize = SPARE_SLOTS / FIRST_CHUNK;

/// Chunks the reader finished with, for the writer (touched once per chunk by each side).
struct Spares<T> {
    /// The first `len` hold chunks, largest first.
    chunks: [ChunkPtr<T>; SPARES],
    len: usize,
}

/// One value's cell, cache-line aligned: a 64-byte message then fills exactly one line
/// (instead of straddling two, which the reader would miss on twice).
#[repr(align(64))]
struct Slot<T>(UnsafeCell<MaybeUninit<T>>);

struct Chunk<T> {
    next: AtomicPtr<Chunk<T>>,
    slots: Box<[Slot<T>]>,
}

impl<T> Chunk<T> {
    /// A chunk of `cap` empty slots (nothing is written into them).
    fn alloc(cap: usize) -> *mut Chunk<T> {
        #[cfg(test)]
        tests::ALLOCATED.with(|n| n.set(n.get() + 1));
        // SAFETY: a Slot is a cell of `MaybeUninit<T>`, for which uninitialised bytes are
        // a valid value.
        let slots = unsafe { Box::<[Slot<T>]>::new_uninit_slice(cap).assume_init() };
        Box::into_raw(Box::new(Chunk {
            next: AtomicPtr::new(ptr::null_mut()),
            slots,
        }))
    }
}

/// A chunk pointer held by one side.
struct ChunkPtr<T>(*mut Chunk<T>);

impl<T> ChunkPtr<T> {
    /// The chunk's number of slots.
    ///
    /// # Safety
    /// The chunk is alive.
    unsafe fn cap(&self) -> usize {
        // SAFETY: alive (caller); only the slice's length is read.
        let slots: &[Slot<T>] = unsafe { &(*self.0).slots };
        slots.len()
    }
}

// SAFETY: a ChunkPtr is only dereferenced by the side whose lock owns it, under the
// spares' mutex, or in `Drop` (exclusive); the chunk's slots hold `T`s that move between
// threads, which is fine when T: Send.
unsafe impl<T: Send> Send for ChunkPtr<T> {}

/// One side's place in its current chunk: the chunk, its first slot and its length
/// (copied out of the chunk so that a value's slot is found without reading the chunk's
/// header), and the index of the side's next slot in it.
struct Cursor<T> {
    chunk: ChunkPtr<T>,
    slots: *const Slot<T>,
    cap: usize,
    idx: usize,
}

// SAFETY: as ChunkPtr: `slots` points into `chunk`, dereferenced only by the side that
// owns the cursor (under its lock).
unsafe impl<T: Send> Send for Cursor<T> {}

impl<T> Cursor<T> {
    /// At the first slot of `c`.
    ///
    /// # Safety
    /// `c` is a live chunk.
    unsafe fn at(c: *mut Chunk<T>) -> Self {
        // SAFETY: a live chunk (caller); its slice lives as long as it does. A shared
        // reference: the other side may be using slots of it (through their cells).
        let slots: &[Slot<T>] = unsafe { &(*c).slots };
        Cursor {
            chunk: ChunkPtr(c),
            slots: slots.as_ptr(),
            cap: slots.len(),
            idx: 0,
        }
    }

    /// The slot at `idx`, for `idx < cap`.
    ///
    /// # Safety
    /// The chunk is alive and `idx < cap`.
    #[inline]
    unsafe fn slot(&self, idx: usize) -> *mut MaybeUninit<T> {
        debug_assert!(idx < self.cap);
        // SAFETY: idx < cap, the slice's length, and the chunk is alive (caller).
        unsafe { (*self.slots.add(idx)).0.get() }
    }
}

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
    at: Cursor<T>,
    /// Next position to write (positions count values since creation).
    pos: u64,
    /// Slots of the next chunk the writer allocates.
    grow: usize,
    /// State the owner keeps beside the writer's (same lock).
    pub(crate) extra: W,
}

/// The reader's private state.
pub(crate) struct ReadSide<T, R> {
    at: Cursor<T>,
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
    /// Chunks the reader finished with, for the writer to reuse.
    spares: Mutex<Spares<T>>,
}

impl<T: Send, W, R> Spsc<T, W, R> {
    /// A queue whose reader counts as waiting until it first looks (so the first publish
    /// reports a wake).
    pub(crate) fn new(w: W, r: R) -> Self {
        let first = Chunk::alloc(FIRST_CHUNK);
        Spsc {
            write: Padded(FlagLock::new(WriteSide {
                // SAFETY: just allocated.
                at: unsafe { Cursor::at(first) },
                pos: 0,
                grow: 2 * FIRST_CHUNK,
                extra: w,
            })),
            read: Padded(FlagLock::new(ReadSide {
                // SAFETY: just allocated.
                at: unsafe { Cursor::at(first) },
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

    /// Keeps a chunk the reader finished (every slot read out) among the spares, which
    /// keep the largest chunks that fit `SPARE_SLOTS`; frees what does not fit.
    fn put_spare(&self, c: ChunkPtr<T>) {
        let mut all = [const { ChunkPtr(ptr::null_mut()) }; SPARES + 1];
        let mut s = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        let n = s.len;
        for (to, from) in all.iter_mut().zip(&mut s.chunks[..n]) {
            *to = std::mem::replace(from, ChunkPtr(ptr::null_mut()));
        }
        all[n] = c;
        // SAFETY (the `cap` calls here): the spares and the chunk the reader just left are
        // alive, the queue's alone until freed below.
        all[..=n].sort_unstable_by_key(|c| std::cmp::Reverse(unsafe { c.cap() }));
        s.len = 0;
        let mut kept_slots = 0;
        // Kept ones go back to the spares; the rest gather at the front of `all`.
        let mut unkept = 0;
        for i in 0..=n {
            let p = std::mem::replace(&mut all[i], ChunkPtr(ptr::null_mut()));
            // SAFETY: as above.
            let k = unsafe { p.cap() };
            if s.len < SPARES && kept_slots + k <= SPARE_SLOTS {
                let at = s.len;
                s.chunks[at] = p;
                s.len += 1;
                kept_slots += k;
            } else {
                all[unkept] = p;
                unkept += 1;
            }
        }
        drop(s);
        for p in &all[..unkept] {
            // SAFETY: the reader moved past the chunk and the writer left it long ago (or
            // it was a spare, the queue's alone); nobody else references it and its slots
            // are empty.
            drop(unsafe { Box::from_raw(p.0) });
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
        if g.at.idx == g.at.cap {
            // The current chunk is full: continue in a spare one, or a new, larger one.
            let mut next = self.q.take_spare();
            if next.is_null() {
                next = Chunk::alloc(g.grow);
                g.grow = (2 * g.grow).min(MAX_CHUNK);
            } else {
                // SAFETY: the reader gave this chunk up (it moved past every slot of it,
                // all of which it read out) before putting it in `spares`; the mutex
                // ordered that before our taking it, which made it ours alone.
                unsafe { (*next).next.store(ptr::null_mut(), Ordering::Relaxed) };
            }
            // SAFETY: g.at's chunk is the writer's current one, alive until the reader
            // leaves it, which needs a position in `next` to be published first.
            unsafe { (*g.at.chunk.0).next.store(next, Ordering::Relaxed) };
            // SAFETY: `next` is a fresh chunk or a spare, ours alone (see above).
            g.at = unsafe { Cursor::at(next) };
        }
        let idx = g.at.idx;
        // SAFETY: idx < cap (checked above) in the writer's live chunk. Slot `pos` lies at
        // or beyond `published`, so the reader does not touch it until we publish; it is
        // uninitialised (never written, or read out by the reader before the chunk came
        // back as a spare), and only this writer reaches it.
        let slot = unsafe { &mut *g.at.slot(idx) };
        let at = slot.as_ptr();
        // A `&mut T` at the slot's address can only exist once the slot holds a value.
        assert!(
            ptr::eq(fill(slot), at),
            "push_with: the slot was not filled"
        );
        g.pos += 1;
        g.at.idx = idx + 1;
        if idx + WRITE_AHEAD < g.at.cap {
            // The reader last had that line (chunks are recycled): ask for it now rather
            // than when its value is written (see `prefetch`).
            // SAFETY: the chunk is the writer's current one, alive (see above), and the
            // index is below its length; only an address is formed, nothing is read or
            // written through it.
            crate::prefetch::for_write(unsafe { g.at.slot(idx + WRITE_AHEAD) });
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
        if g.at.idx == g.at.cap {
            // SAFETY: position `pos` is published, so the writer linked the next chunk
            // before its Release store of `published`, which our Acquire load saw.
            let next = unsafe { (*g.at.chunk.0).next.load(Ordering::Relaxed) };
            debug_assert!(!next.is_null());
            // SAFETY: the chunk the writer linked stays alive until we hand it back.
            let done = std::mem::replace(&mut g.at, unsafe { Cursor::at(next) });
            // Every slot of `done` was read out and the writer moved on: hand it back.
            self.q.put_spare(done.chunk);
        }
        // SAFETY: idx < cap in the reader's live chunk; pos < published: the writer
        // initialised this slot and will not touch it again until the chunk comes back as
        // a spare, after we read it out here.
        let v = unsafe { (*g.at.slot(g.at.idx)).assume_init_read() };
        g.at.idx += 1;
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
        // Exclusive access (&mut self): the chunks from the reader's to the writer's are
        // alive and linked, and nothing else references them.
        // SAFETY: the reader's chunk is alive.
        let mut at = unsafe { Cursor::at(r.at.chunk.0) };
        at.idx = r.at.idx;
        // Moves `at` to the next chunk, freeing the one it leaves.
        let advance = |at: &mut Cursor<T>| {
            // SAFETY: `at` is short of the writer's chunk, so its chunk is alive and linked.
            let next = unsafe { (*at.chunk.0).next.load(Ordering::Relaxed) };
            // SAFETY: a linked chunk up to the writer's is alive.
            let done = std::mem::replace(at, unsafe { Cursor::at(next) });
            // SAFETY: every value in the chunk left was dropped or read; nobody else
            // references it.
            drop(unsafe { Box::from_raw(done.chunk.0) });
        };
        for _ in r.pos..w.pos {
            if at.idx == at.cap {
                advance(&mut at);
            }
            // SAFETY: idx < cap in a live chunk; positions in [r.pos, w.pos) hold
            // initialised values not yet read.
            unsafe { (*at.slot(at.idx)).assume_init_drop() };
            at.idx += 1;
        }
        // Normally at the writer's chunk now; a push whose `fill` panicked had already
        // linked and entered a further (empty) chunk.
        while at.chunk.0 != w.at.chunk.0 {
            advance(&mut at);
        }
        // SAFETY: the writer's current chunk, owned by nobody else.
        drop(unsafe { Box::from_raw(at.chunk.0) });
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
    use std::cell::Cell;
    use std::sync::Arc;

    thread_local! {
        /// Chunks allocated by this thread (tests push from the test's own thread).
        pub(super) static ALLOCATED: Cell<usize> = const { Cell::new(0) };
    }

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
            // Across the first chunk, two grown ones and full-size ones (64 + 128 + 256 +
            // 256...); later rounds run through the spares.
            let n = FIRST_CHUNK as u64 * 15 + 5;
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
            drop(r);
            assert_spares_within_budget(&q);
        }
    }

    /// The spares hold at most `SPARE_SLOTS` slots together.
    fn assert_spares_within_budget<T: Send>(q: &Spsc<T, (), ()>) {
        let spares = q.spares.lock().unwrap();
        let kept = &spares.chunks[..spares.len];
        // SAFETY: spares are live chunks owned by the queue (locked).
        let slots = kept.iter().map(|c| unsafe { c.cap() }).sum::<usize>();
        assert!(slots <= SPARE_SLOTS, "{slots} slots kept");
    }

    #[test]
    fn a_queue_swinging_within_the_spare_budget_allocates_nothing() {
        let q: Spsc<u64, (), ()> = Spsc::new((), ());
        let swing = |k: u64| {
            let mut w = q.writer();
            for i in 0..k {
                w.push(i);
            }
            w.publish();
            drop(w);
            for i in 0..k {
                assert_eq!(q.reader().pop(), Some(i));
            }
        };
        // Swings up to the depth the spares can hold: once the spares have settled (the
        // largest chunks kept), no more allocations, whatever the order of depths.
        let depths = [
            SPARE_SLOTS,
            1,
            100,
            300,
            200,
            SPARE_SLOTS,
            450,
            63,
            64,
            65,
            256,
        ];
        let k = |i: usize| depths[i % depths.len()] as u64;
        for i in 0..2 * depths.len() {
            swing(k(i));
        }
        let before = ALLOCATED.with(|n| n.get());
        let rounds = if cfg!(miri) { 2 } else { 20 };
        for i in 0..rounds * depths.len() {
            swing(k(i * 7));
            assert_spares_within_budget(&q);
        }
        let after = ALLOCATED.with(|n| n.get());
        assert_eq!(after, before, "chunks allocated again");
    }

    /// The chunks from the reader's to the writer's, by length.
    fn chunk_lengths<T: Send>(q: &Spsc<T, (), ()>) -> Vec<usize> {
        let r = q.reader();
        let w = q.writer();
        let mut c = r.g.at.chunk.0;
        let mut lens = Vec::new();
        loop {
            assert!(!c.is_null(), "the writer's chunk not reached: {lens:?}");
            // SAFETY: both sides are locked; every chunk from the reader's to the writer's
            // is alive and linked.
            lens.push(unsafe { ChunkPtr(c).cap() });
            if c == w.g.at.chunk.0 {
                return lens;
            }
            // SAFETY: as above.
            c = unsafe { (*c).next.load(Ordering::Relaxed) };
        }
    }

    #[test]
    fn a_deepening_queue_grows_its_chunks_and_keeps_few_spares() {
        let q: Spsc<u64, (), ()> = Spsc::new((), ());
        let n = if cfg!(miri) { 2_000 } else { 10_000 };
        let mut w = q.writer();
        for i in 0..n {
            w.push(i);
        }
        w.publish();
        drop(w);
        let lens = chunk_lengths(&q);
        assert_eq!(lens[..3], [64, 128, 256]);
        assert!(lens[3..].iter().all(|&l| l == MAX_CHUNK), "{lens:?}");
        let grown = 64 + 128 + 256;
        let full = (n as usize - grown).div_ceil(MAX_CHUNK) * MAX_CHUNK;
        assert_eq!(lens.iter().sum::<usize>(), grown + full);
        for i in 0..n {
            assert_eq!(q.reader().pop(), Some(i));
        }
        assert_spares_within_budget(&q);
        assert!(
            q.spares.lock().unwrap().len > 0,
            "the small chunks are kept"
        );
    }

    #[test]
    fn drop_releases_unread_values() {
        let marker = Arc::new(());
        // Chunk ends (64, 64 + 128, 64 + 128 + 256) and their neighbours, for the reader
        // and (with what was read) the writer.
        let (reads, unreads): (&[usize], &[usize]) = if cfg!(miri) {
            (&[0, 63, 64, 65, 192, 448], &[0, 1, 64])
        } else {
            (
                &[0, 1, 63, 64, 65, 191, 192, 193, 447, 448, 449],
                &[0, 1, 63, 64, 65, 128, 256, 512],
            )
        };
        for &unread in unreads {
            for &read in reads {
                for unpublished in [0, 1] {
                    let q: Spsc<Arc<()>, (), ()> = Spsc::new((), ());
                    let mut w = q.writer();
                    for _ in 0..read + unread {
                        w.push(marker.clone());
                    }
                    w.publish();
                    // Written but not published.
                    for _ in 0..unpublished {
                        w.push(marker.clone());
                    }
                    drop(w);
                    for _ in 0..read {
                        q.reader().pop().unwrap();
                    }
                    drop(q);
                    assert_eq!(
                        Arc::strong_count(&marker),
                        1,
                        "unread={unread} read={read} unpublished={unpublished}"
                    );
                }
            }
        }
    }

    #[test]
    fn two_threads() {
        let n: u64 = if cfg!(miri) {
            3 * FIRST_CHUNK as u64 + 7
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
