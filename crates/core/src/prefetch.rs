//! Asking for a cache line in a writable state before writing it.
//!
//! A sending thread writes ring slots and pooled bodies whose lines the receiving thread
//! read last (chunks and blocks are recycled), so each first write waits for the other
//! core to give the line up; the next locked instruction (the socket lock, the publish)
//! then waits for that write. Asking a few messages ahead overlaps those waits with the
//! work in between.

/// Hints that the cache line at `p` will be written soon (x86 `prefetchw`; nothing
/// elsewhere or under Miri). Any address is allowed: a prefetch never faults and changes
/// no memory.
#[inline(always)]
pub(crate) fn for_write<T>(p: *const T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetchw` only hints the cache: it reads no value, writes nothing, never
    // faults (not even on an unmapped address) and leaves the flags and the stack alone.
    // CPUs that lack it run the encoding as a no-op hint.
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}
