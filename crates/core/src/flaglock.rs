//! A lock that is a flag: acquire is one compare-and-swap, release one plain store.
//!
//! For state that one thread takes on every operation and other threads only rarely
//! (a socket's state: its owner on every send and receive, the I/O thread when a
//! connection comes or goes; one side of an spsc queue). A mutex's release must be an
//! atomic read-modify-write, to learn whether a sleeper needs waking; on x86 that is a
//! full barrier, which waits until every earlier store has reached the cache. A sender
//! that had just written a queue slot on a line the receiving core holds waited there for
//! the line to come over (about half of an inproc sender's time). A plain release store
//! does not wait. The price: a waiter cannot sleep, so it spins briefly, then yields its
//! CPU until the flag clears. Only use it where holders never block while holding it.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// Spins this many times on a held flag before yielding the CPU between looks.
const SPINS: u32 = 64;

/// A value behind a flag lock (see the module documentation for when to use one).
pub(crate) struct FlagLock<S> {
    held: AtomicBool,
    state: UnsafeCell<S>,
}

// SAFETY: the state is only reached through a FlagGuard, and at most one exists at a time
// (the `held` flag); the state moves between threads with the lock, so S: Send suffices.
unsafe impl<S: Send> Sync for FlagLock<S> {}

impl<S> FlagLock<S> {
    /// An unlocked lock around `state`.
    pub(crate) fn new(state: S) -> Self {
        FlagLock {
            held: AtomicBool::new(false),
            state: UnsafeCell::new(state),
        }
    }

    /// Takes the lock, spinning then yielding while another thread holds it.
    #[inline]
    pub(crate) fn lock(&self) -> FlagGuard<'_, S> {
        if self
            .held
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        FlagGuard { lock: self }
    }

    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut spins = 0;
        loop {
            if !self.held.load(Ordering::Relaxed)
                && self
                    .held
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// The state, through exclusive access (no locking needed).
    pub(crate) fn get_mut(&mut self) -> &mut S {
        self.state.get_mut()
    }
}

/// Access to a [`FlagLock`]'s state; releases the lock when dropped.
pub(crate) struct FlagGuard<'a, S> {
    lock: &'a FlagLock<S>,
}

impl<S> Deref for FlagGuard<'_, S> {
    type Target = S;
    fn deref(&self) -> &S {
        // SAFETY: we hold the lock, so no other reference to the state exists.
        unsafe { &*self.lock.state.get() }
    }
}

impl<S> DerefMut for FlagGuard<'_, S> {
    fn deref_mut(&mut self) -> &mut S {
        // SAFETY: we hold the lock, so no other reference to the state exists.
        unsafe { &mut *self.lock.state.get() }
    }
}

impl<S> Drop for FlagGuard<'_, S> {
    #[inline]
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::FlagLock;
    use std::sync::Arc;

    #[test]
    fn excludes_other_threads() {
        let lock = Arc::new(FlagLock::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        // A non-atomic read-modify-write: lost updates if two run at once.
                        let mut g = lock.lock();
                        let v = *g;
                        std::hint::black_box(&v);
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), 80_000);
    }
}
