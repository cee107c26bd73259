//! Bodies too big to live inline and small enough to pool (`INLINE_CAP` < len ≤ `MAX`) are
//! copied into a per-thread block by bumping an offset, instead of one `malloc` each (and a
//! `free` on the receiving thread, which for glibc means a cross-thread free into the
//! sender's arena, under its lock). A block is reference-counted: each body in it holds one
//! reference, and the thread filling it holds a large bias it gives up when it moves on, so
//! filling costs no atomic operation and releasing a body costs one `fetch_sub`. The block
//! is freed when the last body in it is gone.
//!
//! Two size classes: bodies up to 256 bytes share 8 KiB blocks, bodies up to 8 KiB share
//! 64 KiB blocks (a 1 KiB message otherwise pays the same arena-lock fight as a 64-byte
//! one). The cost is retention: one long-lived body keeps its whole block alive.
//!
//! Freed blocks go to a small per-class free list (a mutex taken once per block, not per
//! body) rather than back to malloc, which for 64 KiB chunks would trim and re-fault the
//! sender's heap over and over.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How far past a new body the filling thread asks for the block's line (four 64-byte
/// bodies).
const WRITE_AHEAD: usize = 256;
/// Free blocks kept per block size.
const FREE_KEEP: usize = 16;
/// Largest body given a block of its own (recycled through the free lists, never shared).
pub(crate) const SOLO_MAX: usize = 256 * 1024;
/// Largest solo block: the largest body, its header, rounding.
const SOLO_BLOCK_MAX: usize = solo_block_size(SOLO_MAX);

/// The size of a solo block for a body of `len` bytes: header and body, rounded up to the
/// block alignment. Not a power of two: a 64 KiB body in a 128 KiB block would be a
/// separate mapping whose header page plus sixteen body pages make seventeen resident
/// pages, where blocks of just this size are packed by malloc (about sixteen).
const fn solo_block_size(len: usize) -> usize {
    (len + DATA_OFF + BLOCK_ALIGN - 1) & !(BLOCK_ALIGN - 1)
}

/// A free block (no references; contents dead).
struct FreeBlock(NonNull<Header>);

// SAFETY: a free block is plain memory owned by whoever holds the FreeBlock.
unsafe impl Send for FreeBlock {}

/// Free blocks by class: 8 KiB, 16 KiB, ... 512 KiB. A block's class is its size rounded
/// up to a power of two; shared blocks are exactly that size, solo blocks only as large as
/// their body needs (see `copy_solo`).
static FREE: [Mutex<Vec<FreeBlock>>; 7] = [const { Mutex::new(Vec::new()) }; 7];

fn free_list(size: usize) -> &'static Mutex<Vec<FreeBlock>> {
    debug_assert!((SMALL_BLOCK / 2 + 1..=SOLO_BLOCK_MAX).contains(&size));
    let class = size.next_power_of_two().max(SMALL_BLOCK);
    &FREE[(class.trailing_zeros() - SMALL_BLOCK.trailing_zeros()) as usize]
}

/// A block of at least `need` bytes and its size: a recycled one from `need`'s class if
/// the one on top is large enough, else a new one of exactly `need` bytes. Its header
/// must be written.
fn get_block(need: usize) -> (NonNull<Header>, usize) {
    let reused = free_list(need)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pop();
    if let Some(FreeBlock(b)) = reused {
        // SAFETY: we own the free block; its header still holds the size it was made with
        // (nobody writes a free block).
        let size = unsafe { b.as_ref() }.size;
        if size >= need {
            return (b, size);
        }
        // SAFETY: the block came from `alloc(layout(size))` and is unreferenced.
        unsafe { dealloc(b.as_ptr().cast(), layout(size)) };
    }
    // SAFETY: non-zero size layout.
    let p = unsafe { alloc(layout(need)) } as *mut Header;
    match NonNull::new(p) {
        Some(b) => (b, need),
        None => handle_alloc_error(layout(need)),
    }
}

/// Largest pooled body.
pub(crate) const MAX: usize = 8192;
/// Largest body of the small class.
const SMALL_MAX: usize = 256;
/// Block sizes, header included.
const SMALL_BLOCK: usize = 8192;
const LARGE_BLOCK: usize = 65536;
/// The filling thread's references (more than a block can ever hand out: bodies take at
/// least 8 bytes).
const BIAS: usize = LARGE_BLOCK;

#[repr(C, align(64))]
struct Header {
    refs: AtomicUsize,
    /// The block's size (its layout, for the free).
    size: usize,
    /// Bodies share it (a filling thread's block), so a receiving thread that drops one
    /// body is likely to drop the next from it too (see `Held`). False for a solo block.
    shared: bool,
}

const DATA_OFF: usize = std::mem::size_of::<Header>();

/// Alignment of every block (the header's).
const BLOCK_ALIGN: usize = 64;

fn layout(size: usize) -> Layout {
    // Valid: non-zero size, power-of-two alignment.
    Layout::from_size_align(size, BLOCK_ALIGN).expect("valid layout")
}

/// A body in a block: `len` bytes at `off` from the block start. Owns one reference.
pub(crate) struct PoolRef {
    block: NonNull<Header>,
    off: u32,
    len: u32,
}

// SAFETY: a PoolRef owns one reference to its block (an atomic count) and reads bytes
// nobody writes any more except through `as_mut_ptr`, which the C ABI contract reserves
// for the message's owner; moving it to or sharing it with another thread is fine.
unsafe impl Send for PoolRef {}
// SAFETY: as above; `&PoolRef` only reads.
unsafe impl Sync for PoolRef {}

struct Filling {
    /// Block size of this class.
    size: usize,
    block: Cell<Option<NonNull<Header>>>,
    used: Cell<usize>,
    handed: Cell<usize>,
}

impl Filling {
    /// Gives up the current block (its bodies keep it alive).
    fn retire(&self) {
        if let Some(b) = self.block.take() {
            // SAFETY: we hold BIAS references to `b`, so it is alive.
            unsafe { release(b, BIAS - self.handed.get()) };
        }
    }
}

impl Drop for Filling {
    fn drop(&mut self) {
        self.retire();
    }
}

thread_local! {
    static SMALL: Filling = const {
        Filling { size: SMALL_BLOCK, block: Cell::new(None), used: Cell::new(0), handed: Cell::new(0) }
    };
    static LARGE: Filling = const {
        Filling { size: LARGE_BLOCK, block: Cell::new(None), used: Cell::new(0), handed: Cell::new(0) }
    };
}

/// Drops `n` references to `b`, freeing it with the last.
///
/// # Safety
/// The caller owns at least `n` references to the live block `b`.
unsafe fn release(b: NonNull<Header>, n: usize) {
    // SAFETY: b is alive while we hold references (caller contract).
    let prev = unsafe { b.as_ref() }.refs.fetch_sub(n, Ordering::Release);
    if prev == n {
        // SAFETY: that was the last reference, so we own the block (still allocated).
        let header = unsafe { b.as_ref() };
        // Acquire: every other holder's use of the block happens-before the free. A load
        // rather than a fence (as std's Arc under ThreadSanitizer): TSan does not model
        // fences, and on x86 both cost nothing.
        let _ = header.refs.load(Ordering::Acquire);
        let size = header.size;
        let mut list = free_list(size).lock().unwrap_or_else(|e| e.into_inner());
        if list.len() < FREE_KEEP {
            list.push(FreeBlock(b));
        } else {
            drop(list);
            // SAFETY: the block came from `alloc(layout(size))` and is unreferenced.
            unsafe { dealloc(b.as_ptr().cast(), layout(size)) };
        }
    }
}

impl PoolRef {
    /// Copies `data` (INLINE_CAP < len ≤ MAX) into this thread's block. `None` if the
    /// thread is exiting (its block is gone); the caller falls back to the heap.
    #[inline]
    pub(crate) fn copy_from(data: &[u8]) -> Option<PoolRef> {
        Self::place(data.len(), Some(data))
    }

    /// `len` zero bytes (INLINE_CAP < len ≤ MAX) in this thread's block, for a caller that
    /// fills them through `as_mut_ptr`. `None` as for `copy_from`.
    pub(crate) fn zeroed(len: usize) -> Option<PoolRef> {
        Self::place(len, None)
    }

    /// A body of `len` bytes in this thread's block: a copy of `src`, or zeros.
    #[inline(always)]
    fn place(len: usize, src: Option<&[u8]>) -> Option<PoolRef> {
        debug_assert!(len <= MAX);
        // Keep bodies 8-aligned (cheap copies, aligned data pointers for C callers).
        let room = (len + 7) & !7;
        let class = if len <= SMALL_MAX { &SMALL } else { &LARGE };
        class
            .try_with(|f| {
                let mut used = f.used.get();
                let block = match f.block.get() {
                    Some(b) if used + room <= f.size => b,
                    _ => {
                        f.retire();
                        // A block of this class's size is exactly f.size bytes.
                        let (b, size) = get_block(f.size);
                        // SAFETY: a fresh or free block of `size` bytes, aligned for Header,
                        // referenced by nobody.
                        unsafe {
                            b.as_ptr().write(Header {
                                refs: AtomicUsize::new(BIAS),
                                size,
                                shared: true,
                            })
                        };
                        f.block.set(Some(b));
                        f.handed.set(0);
                        used = DATA_OFF;
                        b
                    }
                };
                // SAFETY: [used, used + len) lies inside the block (checked above) and no
                // other body covers it: offsets only grow while this thread fills it.
                unsafe {
                    let at = block.as_ptr().cast::<u8>().add(used);
                    match src {
                        Some(data) => std::ptr::copy_nonoverlapping(data.as_ptr(), at, len),
                        None => std::ptr::write_bytes(at, 0, len),
                    }
                };
                f.used.set(used + room);
                f.handed.set(f.handed.get() + 1);
                if used + room + WRITE_AHEAD < f.size {
                    // A recycled block's lines were last read by a receiving thread: ask
                    // for the one a few bodies on now (see `prefetch`).
                    crate::prefetch::for_write(
                        block
                            .as_ptr()
                            .cast::<u8>()
                            .wrapping_add(used + room + WRITE_AHEAD),
                    );
                }
                PoolRef {
                    block,
                    off: used as u32,
                    len: len as u32,
                }
            })
            .ok()
    }

    /// Copies a large body (MAX < len ≤ SOLO_MAX) into a block of its own, recycled
    /// through the free lists (malloc would trim and re-fault such chunks).
    pub(crate) fn copy_solo(data: &[u8]) -> PoolRef {
        debug_assert!(data.len() <= SOLO_MAX);
        let (b, size) = get_block(solo_block_size(data.len()));
        // SAFETY: a block of `size` bytes nobody references; the body fits after the
        // header (size >= len + DATA_OFF).
        unsafe {
            b.as_ptr().write(Header {
                refs: AtomicUsize::new(1),
                size,
                shared: false,
            });
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                b.as_ptr().cast::<u8>().add(DATA_OFF),
                data.len(),
            );
        }
        PoolRef {
            block: b,
            off: DATA_OFF as u32,
            len: data.len() as u32,
        }
    }

    /// The body.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: the block is alive while we hold a reference; [off, off+len) was written
        // before this PoolRef was made (and moved here with a happens-before edge).
        unsafe {
            std::slice::from_raw_parts(
                self.block.as_ptr().cast::<u8>().add(self.off as usize),
                self.len as usize,
            )
        }
    }

    /// Raw pointer to the body (C callers may write through it: `zmq_msg_data`).
    pub(crate) fn as_mut_ptr(&self) -> *mut u8 {
        // SAFETY: in bounds of the live block.
        unsafe { self.block.as_ptr().cast::<u8>().add(self.off as usize) }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Adds `n` references to this body's block with one atomic add, for `n` clones
    /// about to be made (a PUB's fan-out: one locked add per clone, on the line the
    /// receivers release on, was 15 % of the sending thread's samples at 8 SUBs).
    ///
    /// # Safety
    /// The caller then makes exactly `n` values that each own one of these references
    /// (bitwise copies of this `PoolRef`, or of a `Msg` holding it).
    pub(crate) unsafe fn add_refs(&self, n: usize) {
        if n == 0 {
            return;
        }
        // SAFETY: we hold a reference, so the block is alive.
        unsafe { self.block.as_ref() }
            .refs
            .fetch_add(n, Ordering::Relaxed);
    }
}

impl Clone for PoolRef {
    fn clone(&self) -> PoolRef {
        // SAFETY: we hold a reference, so the block is alive.
        unsafe { self.block.as_ref() }
            .refs
            .fetch_add(1, Ordering::Relaxed);
        PoolRef {
            block: self.block,
            off: self.off,
            len: self.len,
        }
    }
}

impl Drop for PoolRef {
    #[inline]
    fn drop(&mut self) {
        let b = self.block;
        // Within a thread-local's destructor this one may be gone: release at once.
        if HELD.try_with(|h| h.take(b)).is_err() {
            // SAFETY: we own one reference.
            unsafe { release(b, 1) };
        }
    }
}

/// References to one shared block that the thread dropped but has not given back yet.
/// A receiving thread drops its bodies in the order they were filled, tens to hundreds
/// from each block; counting them here and releasing them with one `fetch_sub` when the
/// thread drops a body of another block (or exits) saves a locked instruction per
/// message, which also stalled the loads after it (an inproc receive took 15 % longer
/// with it). Retention: at most one shared block per thread stays alive longer (until
/// that thread drops a body of another block, or exits).
struct Held {
    block: Cell<Option<NonNull<Header>>>,
    refs: Cell<usize>,
}

impl Held {
    /// Takes over the reference of a dropped body of block `b`.
    #[inline]
    fn take(&self, b: NonNull<Header>) {
        if self.block.get() == Some(b) {
            self.refs.set(self.refs.get() + 1);
            return;
        }
        // SAFETY: the dropped body holds a reference, so `b` is alive; `shared` is
        // written once, before the block is handed to any body.
        if !unsafe { b.as_ref() }.shared {
            // A solo block: no other body to batch with.
            // SAFETY: the dropped body's reference.
            unsafe { release(b, 1) };
            return;
        }
        let old = self.block.replace(Some(b));
        let n = self.refs.replace(1);
        if let Some(old) = old {
            // SAFETY: this thread holds n references to `old` (counted here).
            unsafe { release(old, n) };
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(b) = self.block.take() {
            // SAFETY: the references counted here.
            unsafe { release(b, self.refs.get()) };
        }
    }
}

thread_local! {
    static HELD: Held = const { Held { block: Cell::new(None), refs: Cell::new(0) } };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_survive_their_block_being_retired_and_cross_threads() {
        let mut keep = Vec::new();
        let n = if cfg!(miri) { 60 } else { 2000 };
        for i in 0..n {
            let len = 47 + (i * 37) % (MAX - 46);
            let body: Vec<u8> = (0..len).map(|j| (i + j) as u8).collect();
            let r = PoolRef::copy_from(&body).unwrap();
            assert_eq!(r.as_slice(), &body[..]);
            if i % 7 == 0 {
                keep.push((r.clone(), body));
            }
        }
        let t = std::thread::spawn(move || {
            for (r, body) in &keep {
                assert_eq!(r.as_slice(), &body[..]);
            }
            drop(keep);
            // This thread's own block, released at thread exit.
            let _ = PoolRef::copy_from(&[1u8; 100]).unwrap();
        });
        let lens: &[usize] = if cfg!(miri) {
            &[MAX + 1]
        } else {
            &[MAX + 1, 40_000, SOLO_MAX - DATA_OFF, SOLO_MAX]
        };
        for &len in lens {
            let body: Vec<u8> = (0..len).map(|j| j as u8).collect();
            let a = PoolRef::copy_solo(&body);
            let b = a.clone();
            drop(a);
            assert_eq!(b.as_slice(), &body[..]);
        }
        t.join().unwrap();
    }

    fn refs_of(b: NonNull<Header>) -> usize {
        // SAFETY: the caller keeps a body of `b` alive.
        unsafe { b.as_ref() }.refs.load(Ordering::Acquire)
    }

    #[test]
    fn dropped_bodies_are_given_back_per_block_and_at_thread_exit() {
        // Bodies of at least two shared blocks, filled on this thread.
        let bodies: Vec<PoolRef> = (0..100)
            .map(|i| PoolRef::copy_from(&[i as u8; 200]).unwrap())
            .collect();
        let first = bodies[0].block;
        let second = bodies
            .iter()
            .map(|r| r.block)
            .find(|&b| b != first)
            .unwrap();
        let (mut rest, others): (Vec<PoolRef>, Vec<PoolRef>) =
            bodies.into_iter().partition(|r| r.block == first);
        let (mut rest_second, others): (Vec<PoolRef>, Vec<PoolRef>) =
            others.into_iter().partition(|r| r.block == second);
        drop(others);
        // One body of each block stays here, keeping it alive to look at.
        let keep_first = rest.pop().unwrap();
        let keep_second = rest_second.pop().unwrap();
        let (before_first, before_second) = (refs_of(first), refs_of(second));
        let (to_first, to_second) = (rest.len(), rest_second.len());
        assert!(to_first > 10 && to_second > 10);
        // Steps of the dropping thread, each acknowledged before the next.
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let (gone_tx, gone_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            drop(rest);
            // Held, not given back yet: the thread has not dropped another block's body.
            gone_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            drop(rest_second);
            gone_tx.send(()).unwrap();
            go_rx.recv().unwrap();
        });
        gone_rx.recv().unwrap();
        assert_eq!(refs_of(first), before_first, "held by the dropping thread");
        go_tx.send(()).unwrap();
        gone_rx.recv().unwrap();
        assert_eq!(
            refs_of(first),
            before_first - to_first,
            "given back at the next block"
        );
        assert_eq!(
            refs_of(second),
            before_second,
            "the second block's are held now"
        );
        go_tx.send(()).unwrap();
        t.join().unwrap();
        assert_eq!(
            refs_of(second),
            before_second - to_second,
            "given back at thread exit"
        );
        drop((keep_first, keep_second));
    }

    #[test]
    fn a_recycled_solo_block_is_used_only_if_large_enough() {
        // 40,000 and 60,000 byte bodies share the 64 KiB class; their blocks are sized
        // to fit (not rounded up to the class), so the smaller one must not be handed to
        // the larger body (Miri and ASan see an overflow if it is).
        for (first, second) in [(40_000, 60_000), (60_000, 40_000), (MAX + 1, 16_000)] {
            let a: Vec<u8> = (0..first).map(|j| j as u8).collect();
            drop(PoolRef::copy_solo(&a));
            let b: Vec<u8> = (0..second).map(|j| (j * 3) as u8).collect();
            let r = PoolRef::copy_solo(&b);
            assert_eq!(r.as_slice(), &b[..]);
            assert!(solo_block_size(second) >= second + DATA_OFF);
        }
        assert_eq!(solo_block_size(65_536) % BLOCK_ALIGN, 0);
        assert!(solo_block_size(65_536) < 65_536 + 2 * BLOCK_ALIGN);
    }
}
