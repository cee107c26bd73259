//! Bodies too big to live inline and small enough to pool (`INLINE_CAP` < len ≤ `MAX`) are
//! copied into a per-thread block by bumping an offset, instead of one `malloc` each (and a
//! `free` on the receiving thread, which for glibc means a cross-thread free into the
//! sender's arena, under its lock). A block is reference-counted: each body in it holds one
//! reference, and the thread filling it holds a large bias it gives up when it moves on, so
//! filling costs no atomic operation and releasing a body costs one `fetch_sub`. The block
//! is freed when the last body in it is gone.
//!
//! The cost is retention: one long-lived body keeps its whole block (`BLOCK` bytes) alive.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// Largest pooled body.
pub(crate) const MAX: usize = 256;
/// Block size, header included.
const BLOCK: usize = 8192;
/// The filling thread's references (more than a block can ever hand out).
const BIAS: usize = BLOCK;

#[repr(C, align(64))]
struct Header {
    refs: AtomicUsize,
}

const DATA_OFF: usize = std::mem::size_of::<Header>();

fn layout() -> Layout {
    // SAFETY-free: constant, valid (non-zero size, power-of-two alignment).
    Layout::from_size_align(BLOCK, 64).expect("valid layout")
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
    static FILLING: Filling = const {
        Filling { block: Cell::new(None), used: Cell::new(0), handed: Cell::new(0) }
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
        // Acquire: every other holder's use of the block happens-before the free.
        fence(Ordering::Acquire);
        // SAFETY: that was the last reference; the block came from `alloc(layout())`.
        unsafe { dealloc(b.as_ptr().cast(), layout()) };
    }
}

impl PoolRef {
    /// Copies `data` (INLINE_CAP < len ≤ MAX) into this thread's block. `None` if the
    /// thread is exiting (its block is gone); the caller falls back to the heap.
    pub(crate) fn copy_from(data: &[u8]) -> Option<PoolRef> {
        debug_assert!(data.len() <= MAX);
        let len = data.len();
        // Keep bodies 8-aligned (cheap copies, aligned data pointers for C callers).
        let room = (len + 7) & !7;
        FILLING
            .try_with(|f| {
                let mut used = f.used.get();
                let block = match f.block.get() {
                    Some(b) if used + room <= BLOCK => b,
                    _ => {
                        f.retire();
                        // SAFETY: non-zero size layout.
                        let p = unsafe { alloc(layout()) } as *mut Header;
                        let Some(b) = NonNull::new(p) else {
                            handle_alloc_error(layout())
                        };
                        // SAFETY: fresh allocation, aligned for Header.
                        unsafe { b.as_ptr().write(Header { refs: AtomicUsize::new(BIAS) }) };
                        f.block.set(Some(b));
                        f.handed.set(0);
                        used = DATA_OFF;
                        b
                    }
                };
                // SAFETY: [used, used + len) lies inside the block (checked above) and no
                // other body covers it: offsets only grow while this thread fills it.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        block.as_ptr().cast::<u8>().add(used),
                        len,
                    )
                };
                f.used.set(used + room);
                f.handed.set(f.handed.get() + 1);
                PoolRef {
                    block,
                    off: used as u32,
                    len: len as u32,
                }
            })
            .ok()
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
        // SAFETY: we own one reference.
        unsafe { release(self.block, 1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_survive_their_block_being_retired_and_cross_threads() {
        let mut keep = Vec::new();
        for i in 0..2000usize {
            let len = 47 + i % (MAX - 46);
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
        t.join().unwrap();
    }
}
