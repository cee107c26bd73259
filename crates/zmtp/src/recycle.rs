//! Allocations of large received bodies, reused.
//!
//! A large body is read straight into an allocation of its own (see `input.rs`). Freshly
//! allocated, those pages are cold: glibc serves 128 KiB and more with `mmap`, or trims
//! them off its heap after the free, so every body costs page faults and cache misses in
//! the thread that reads the socket, and the free an unmap (TLB shootdown) on the other.
//! When the receiver drops a body, its allocation comes back here instead, and the next
//! body of about the same size is read into it while it is still warm.
//!
//! Retention is bounded: at most [`KEEP`] allocations and [`KEEP_BYTES`] bytes.

use bytes::Bytes;
use std::sync::Mutex;

/// Bodies smaller than this use plain allocations (malloc's own heap reuses them well).
pub(crate) const RECYCLE_MIN: usize = 32 * 1024;
/// Bodies larger than this are not kept.
const RECYCLE_MAX: usize = 1 << 20;
/// Most allocations kept.
const KEEP: usize = 8;
/// Most bytes kept.
const KEEP_BYTES: usize = 2 << 20;

/// Allocations waiting for reuse, most recently returned last (the warmest).
pub(crate) struct Recycler {
    spare: Mutex<Vec<Vec<u8>>>,
}

/// The process-wide recycler.
pub(crate) static RECYCLER: Recycler = Recycler::new();

impl Recycler {
    pub(crate) const fn new() -> Recycler {
        Recycler {
            spare: Mutex::new(Vec::new()),
        }
    }

    fn spare(&self) -> std::sync::MutexGuard<'_, Vec<Vec<u8>>> {
        self.spare.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A kept allocation for `len` body bytes placed `pad(address)` bytes in (see
    /// `input::body_pad`): one whose capacity holds that, and at most a quarter more than
    /// `len + max_pad` (so a reused buffer wastes little). Empty; None if none fits.
    pub(crate) fn take_for(
        &self,
        len: usize,
        max_pad: usize,
        pad: impl Fn(usize) -> usize,
    ) -> Option<Vec<u8>> {
        if !(RECYCLE_MIN..=RECYCLE_MAX).contains(&len) {
            return None;
        }
        let most = (len + max_pad) + (len + max_pad) / 4;
        let fits = |v: &Vec<u8>| {
            let cap = v.capacity();
            cap <= most && cap >= len + pad(v.as_ptr() as usize)
        };
        let mut list = self.spare();
        let i = list.iter().rposition(fits)?;
        Some(list.swap_remove(i))
    }

    /// A received body as `Bytes`; a large body's allocation returns here for reuse when
    /// the last reference is dropped.
    pub(crate) fn wrap(&'static self, body: Vec<u8>) -> Bytes {
        if (RECYCLE_MIN..=RECYCLE_MAX).contains(&body.capacity()) {
            Bytes::from_owner(Returning { body, to: self })
        } else {
            Bytes::from(body)
        }
    }

    fn give_back(&self, mut v: Vec<u8>) {
        v.clear();
        let mut list = self.spare();
        let kept: usize = list.iter().map(Vec::capacity).sum();
        if list.len() < KEEP && kept + v.capacity() <= KEEP_BYTES {
            list.push(v);
        }
    }
}

/// A body that gives its allocation back when dropped.
struct Returning {
    body: Vec<u8>,
    to: &'static Recycler,
}

impl AsRef<[u8]> for Returning {
    fn as_ref(&self) -> &[u8] {
        &self.body
    }
}

impl Drop for Returning {
    fn drop(&mut self) {
        self.to.give_back(std::mem::take(&mut self.body));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_body_is_reused_for_the_next_of_its_size() {
        let r: &'static Recycler = Box::leak(Box::new(Recycler::new()));
        let no_pad = |_| 0;
        assert!(r.take_for(200_000, 0, no_pad).is_none(), "nothing kept yet");
        let mut body = Vec::with_capacity(200_000);
        let ptr = body.as_ptr();
        body.extend(std::iter::repeat_n(1u8, 200_000));
        let bytes = r.wrap(body);
        assert_eq!(bytes.len(), 200_000);
        let clone = bytes.clone();
        drop(bytes);
        assert!(r.spare().is_empty(), "kept while referenced");
        assert_eq!(clone[199_999], 1);
        drop(clone);
        assert!(
            r.take_for(100_000, 0, no_pad).is_none(),
            "a much smaller request does not take a big buffer"
        );
        assert!(
            r.take_for(199_000, 2_000, |_| 1_001).is_none(),
            "a buffer too small for the body after its pad is left"
        );
        let again = r.take_for(190_000, 0, no_pad).expect("kept");
        assert_eq!(again.as_ptr(), ptr, "the warm allocation came back");
        assert!(again.is_empty());
    }

    #[test]
    fn small_and_huge_bodies_are_not_kept_and_retention_is_bounded() {
        let r: &'static Recycler = Box::leak(Box::new(Recycler::new()));
        drop(r.wrap(Vec::with_capacity(RECYCLE_MIN - 1)));
        drop(r.wrap(Vec::with_capacity(RECYCLE_MAX + 1)));
        assert!(r.spare().is_empty());
        let many: Vec<Bytes> = (0..2 * KEEP)
            .map(|_| r.wrap(Vec::with_capacity(RECYCLE_MAX / 2)))
            .collect();
        drop(many);
        let list = r.spare();
        assert!(!list.is_empty() && list.len() <= KEEP);
        assert!(list.iter().map(Vec::capacity).sum::<usize>() <= KEEP_BYTES);
    }
}
