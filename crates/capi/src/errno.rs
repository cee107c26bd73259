//! errno handling and the panic boundary shared by every exported function.
//!
//! libzmq reports failures by returning -1 (or NULL) and setting the C library's `errno`,
//! which C code reads directly and `zmq_errno()` returns. We do the same: the thread's real
//! `errno` is written through the C library's errno location, as the very last step before
//! returning to C so nothing we drop on the way out can clobber it.

use std::os::raw::c_int;
use std::panic::{self, AssertUnwindSafe};

/// A failure to report to C: the errno value to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Errno(pub(crate) c_int);

impl From<ferromq::Error> for Errno {
    fn from(e: ferromq::Error) -> Errno {
        Errno(e.errno())
    }
}

/// Result of the body of an exported function.
pub(crate) type CResult<T> = Result<T, Errno>;

/// Bodies from this size on are first tried as an allocation that may fail (see
/// `could_hold`).
const HOLD_PROBE_MIN: usize = 1 << 30;

/// Whether a body of `len` bytes could be allocated now. A Rust allocation that fails
/// aborts the process (`catch_unwind` does not catch it) where libzmq's `malloc` returns
/// ENOMEM, which only a length no memory can hold makes happen: such lengths are tried
/// first (reserving address space only; nothing is touched or kept). Never true past
/// `isize::MAX`, the longest any Rust slice may be, which callers forming a slice of a
/// C buffer rely on.
pub(crate) fn could_hold(len: usize) -> bool {
    len <= isize::MAX as usize
        && (len < HOLD_PROBE_MIN || Vec::<u8>::new().try_reserve_exact(len).is_ok())
}

/// Shorthand for an early error return.
pub(crate) fn fail<T>(code: c_int) -> CResult<T> {
    Err(Errno(code))
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn errno_location() -> *mut c_int {
    // SAFETY: returns the calling thread's errno slot; no preconditions.
    unsafe { libc::__errno_location() }
}

#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
fn errno_location() -> *mut c_int {
    // SAFETY: returns the calling thread's errno slot; no preconditions.
    unsafe { libc::__error() }
}

/// Sets the calling thread's C `errno`.
pub(crate) fn set_errno(code: c_int) {
    // SAFETY: the errno location is valid, aligned and thread-local for the whole life of
    // the calling thread.
    unsafe { *errno_location() = code };
}

/// Reads the calling thread's C `errno`.
pub(crate) fn errno() -> c_int {
    // SAFETY: as in `set_errno`.
    unsafe { *errno_location() }
}

/// Runs the body of an exported function: `Ok(v)` returns `v`; `Err(errno)` sets errno and
/// returns `failure`. A panic never crosses into C: it is caught, errno is set to EINVAL
/// and `failure` is returned.
pub(crate) fn ffi<T>(failure: T, body: impl FnOnce() -> CResult<T>) -> T {
    // AssertUnwindSafe: after a panic the only state we touch again is the core's, whose
    // locks tolerate poisoning; the half-finished call itself reports failure.
    let code = match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => return value,
        Ok(Err(Errno(code))) => code,
        Err(payload) => {
            // Dropping the payload could itself panic (a panicking Drop inside it); keep
            // that from unwinding further too.
            let _ = panic::catch_unwind(AssertUnwindSafe(move || drop(payload)));
            libc::EINVAL
        }
    };
    set_errno(code);
    failure
}

/// `ffi` for functions with no return value: errors only set errno.
pub(crate) fn ffi_void(body: impl FnOnce() -> CResult<()>) {
    ffi((), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_length_past_isize_max_could_be_held() {
        assert!(could_hold(0));
        assert!(could_hold(HOLD_PROBE_MIN - 1));
        assert!(!could_hold(isize::MAX as usize + 1));
        assert!(!could_hold(usize::MAX));
    }

    #[test]
    fn errors_set_errno_and_return_failure() {
        set_errno(0);
        let r = ffi(-1, || fail::<i32>(libc::ENOTSOCK));
        assert_eq!(r, -1);
        assert_eq!(errno(), libc::ENOTSOCK);
    }

    #[test]
    fn success_leaves_errno_alone() {
        set_errno(1234);
        assert_eq!(ffi(-1, || Ok(7)), 7);
        assert_eq!(errno(), 1234);
    }

    #[test]
    fn panics_become_einval() {
        set_errno(0);
        let prev = panic::take_hook();
        panic::set_hook(Box::new(|_| {}));
        let r = ffi(-1, || -> CResult<i32> { panic!("boom") });
        panic::set_hook(prev);
        assert_eq!(r, -1);
        assert_eq!(errno(), libc::EINVAL);
    }

    #[test]
    fn core_errors_map_to_libzmq_errno() {
        assert_eq!(Errno::from(ferromq::Error::Again), Errno(libc::EAGAIN));
        assert_eq!(
            Errno::from(ferromq::Error::Terminated),
            Errno(ferromq::error::ETERM)
        );
    }
}
