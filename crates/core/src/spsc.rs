//! A single-producer/single-consumer queue of values in linked chunks (the shape of
//! libzmq's `yqueue`/`ypipe`): unbounded, no allocation in steady state (the reader hands
//! each chunk it finished back to the writer as a spare), and no lock shared between the
//! two sides. The writer fills slots privately and makes them visible with one release
//! store (`publish`); the reader caches the published position and only re-reads it when it
//! has consumed everything it knew about, so the two sides exchange one cache line per batch
//! rather than per value.
//!
//! Each side's private state sits behind its own mutex. Only one thread ever takes each in
//! normal operation (the socket's owner or the I/O thread), so the lock is uncontended and
//! its cache line stays with that thread; it is what makes the API safe to call from any
//! thread (a rare cross-side call, such as the writer discarding a queue, just takes the
//! reader's lock). `side extra` state (`W`, `R`) rides in the same locks.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Values per chunk (a chunk of 64-byte messages is 4 KiB).
const CHUNK: usize = 64;

struct Chunk<T> {
    slots: [UnsafeCell<MaybeUninit<T>>; CHUNK],
    next: AtomicPtr<Chunk<T>>,
}

impl<T> Chunk<T> {
    fn alloc() -> *mut Chunk<T> {
        Box::into_raw(Box::new(Chunk {
            slots: [const { UnsafeCell::new(MaybeUninit::uninit()) }; CHUNK],
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
    write: Padded<Mutex<WriteSide<T, W>>>,
    read: Padded<Mutex<ReadSide<T, R>>>,
    /// Values the reader may take: every position below this one is initialised.
    published: Padded<AtomicU64>,
    /// A chunk the reader finished with, for the writer to reuse.
    spare: AtomicPtr<Chunk<T>>,
}

impl<T: Send, W, R> Spsc<T, W, R> {
    pub(crate) fn new(w: W, r: R) -> Self {
        let first = Chunk::alloc();
        Spsc {
            write: Padded(Mutex::new(WriteSide {
                chunk: ChunkPtr(first),
                pos: 0,
                extra: w,
            })),
            read: Padded(Mutex::new(ReadSide {
                chunk: ChunkPtr(first),
                pos: 0,
                known: 0,
                extra: r,
            })),
            published: Padded(AtomicU64::new(0)),
            spare: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Takes the writer's side.
    #[inline]
    pub(crate) fn writer(&self) -> Writer<'_, T, W, R> {
        Writer {
            q: self,
            g: self.write.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// Takes the reader's side.
    #[inline]
    pub(crate) fn reader(&self) -> Reader<'_, T, W, R> {
        Reader {
            q: self,
            g: self.read.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// The writer's side, locked.
pub(crate) struct Writer<'a, T: Send, W, R> {
    q: &'a Spsc<T, W, R>,
    g: MutexGuard<'a, WriteSide<T, W>>,
}

impl<T: Send, W, R> Writer<'_, T, W, R> {
    /// Writes a value, invisible to the reader until `publish`.
    #[inline]
    pub(crate) fn push(&mut self, v: T) {
        let g = &mut *self.g;
        let idx = (g.pos % CHUNK as u64) as usize;
        if idx == 0 && g.pos != 0 {
            // The current chunk is full: continue in the spare one, or a new one.
            let mut next = self.q.spare.swap(ptr::null_mut(), Ordering::Acquire);
            if next.is_null() {
                next = Chunk::alloc();
            } else {
                // SAFETY: the reader gave this chunk up (it moved past every slot of it,
                // all of which it read out) before swapping it into `spare`, with Release;
                // our Acquire swap made it ours alone.
                unsafe { (*next).next.store(ptr::null_mut(), Ordering::Relaxed) };
            }
            // SAFETY: g.chunk is the writer's current chunk, alive until the reader leaves
            // it, which needs a position in `next` to be published first.
            unsafe { (*g.chunk.0).next.store(next, Ordering::Relaxed) };
            g.chunk = ChunkPtr(next);
        }
        // SAFETY: slot `pos` lies at or beyond `published`, so the reader does not touch it
        // until we publish; it is uninitialised (never written, or read out by the reader
        // before the chunk came back as a spare).
        unsafe { (*(*g.chunk.0).slots[idx].get()).write(v) };
        g.pos += 1;
    }

    /// Makes every value written so far visible to the reader.
    #[inline]
    pub(crate) fn publish(&mut self) {
        // Release: the slot writes (and chunk links) happen-before a reader that sees it.
        self.q.published.store(self.g.pos, Ordering::Release);
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
    g: MutexGuard<'a, ReadSide<T, R>>,
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
        g.known = self.q.published.load(Ordering::Acquire);
        g.pos < g.known
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
            let old = self.q.spare.swap(done.0, Ordering::AcqRel);
            if !old.is_null() {
                // SAFETY: `old` was a spare nobody else references (the writer takes
                // spares with a swap, so it did not have this one); its slots are empty.
                drop(unsafe { Box::from_raw(old) });
            }
        }
        // SAFETY: pos < published: the writer initialised this slot and will not touch it
        // again until the chunk comes back as a spare, after we read it out here.
        let v = unsafe { (*(*g.chunk.0).slots[idx].get()).assume_init_read() };
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
        let r = self.read.0.get_mut().unwrap_or_else(|e| e.into_inner());
        let w = self.write.0.get_mut().unwrap_or_else(|e| e.into_inner());
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
            unsafe { (*(*chunk).slots[idx].get()).assume_init_drop() };
        }
        debug_assert_eq!(chunk, w.chunk.0);
        // SAFETY: the writer's current chunk (also the reader's by now), owned by nobody else.
        drop(unsafe { Box::from_raw(chunk) });
        let spare = *self.spare.get_mut();
        if !spare.is_null() {
            // SAFETY: a spare belongs to the queue alone.
            drop(unsafe { Box::from_raw(spare) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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
        let n: u64 = if cfg!(miri) { 3 * CHUNK as u64 + 7 } else { 200_000 };
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
