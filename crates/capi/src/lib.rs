//! The C ABI of ferromq: `libzmq.so.5`, a drop-in replacement for libzmq 4.3.5.
//!
//! Every function declared in `include/zmq.h` is exported here under its libzmq name, with
//! libzmq's argument conventions, return values and `errno` codes. This is the only crate of
//! the workspace with FFI `unsafe`.
//!
//! Conventions shared by all modules:
//! - every exported body runs inside [`errno::ffi`], which turns errors into `-1`/`NULL`
//!   plus `errno`, and catches panics so that none ever unwinds into C;
//! - handles given to C are boxed Rust values whose first field is a tag, checked on every
//!   call (`ENOTSOCK` for sockets, `EFAULT` for the other handle types, as libzmq does);
//! - the safety contract of each exported function is the one libzmq documents for it:
//!   pointers must be NULL (where that is reported as an error) or valid for the access the
//!   function's documentation describes, and handles must not be used after being freed.

#![deny(unsafe_op_in_unsafe_fn)]
// C types keep their zmq.h names (zmq_msg_t, zmq_free_fn, ...).
#![allow(non_camel_case_types)]

mod batch;
mod ctx;
mod errno;
mod msg;
mod poll;
mod poller;
mod proxy;
mod socket;
mod timers;
mod util;

use crate::errno::{fail, ffi, CResult};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

/// Borrows a C string argument as UTF-8. NULL or invalid UTF-8 gives EINVAL.
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const c_char) -> CResult<&'a str> {
    if p.is_null() {
        return fail(libc::EINVAL);
    }
    // SAFETY: non-NULL, and the caller guarantees NUL termination and lifetime.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|_| errno::Errno(libc::EINVAL))
}

/// Reports the library version: 4.3.5, the libzmq API level implemented.
///
/// # Safety
/// Each pointer must be NULL or valid for writing an `int`.
#[no_mangle]
pub unsafe extern "C" fn zmq_version(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) {
    for (p, v) in [(major, 4), (minor, 3), (patch, 5)] {
        if !p.is_null() {
            // SAFETY: non-NULL and writable per the caller's contract.
            unsafe { *p = v };
        }
    }
}

/// The calling thread's `errno`, as set by the last failing call.
#[no_mangle]
pub extern "C" fn zmq_errno() -> c_int {
    errno::errno()
}

/// A static, NUL-terminated description of an errno value (libzmq's own codes get
/// libzmq's wording, every other code the C library's `strerror` text).
#[no_mangle]
pub extern "C" fn zmq_strerror(errnum: c_int) -> *const c_char {
    use ferromq::error::{EFSM, EMTHREAD, ENOCOMPATPROTO, ETERM};
    let own: Option<&'static CStr> = match errnum {
        EFSM => Some(c"Operation cannot be accomplished in current state"),
        ENOCOMPATPROTO => Some(c"The protocol is not compatible with the socket type"),
        ETERM => Some(c"Context was terminated"),
        EMTHREAD => Some(c"No thread available"),
        // libzmq words this one itself on every platform.
        libc::EHOSTUNREACH => Some(c"Host unreachable"),
        _ => None,
    };
    match own {
        Some(s) => s.as_ptr(),
        // SAFETY: strerror accepts any value and returns a NUL-terminated string owned by
        // the C library (libzmq hands out the same pointer).
        None => unsafe { libc::strerror(errnum) },
    }
}

/// Answers 1 if the named optional capability is built in, 0 otherwise.
fn has_capability(name: &[u8]) -> bool {
    match name {
        // ipc:// is implemented. "draft" stays 0: the poller functions are exported (bindings
        // probe for them), but the draft socket types are not implemented, and bindings
        // that see "draft" = 1 would try to create them.
        b"ipc" | b"curve" => true,
        // pgm, tipc, norm, vmci, ws, wss, gssapi and anything unknown: not built in.
        _ => false,
    }
}

/// Capability probe: `zmq_has("ipc")`, `zmq_has("curve")`, ...
///
/// # Safety
/// `capability` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zmq_has(capability: *const c_char) -> c_int {
    ffi(0, || {
        if capability.is_null() {
            return Ok(0);
        }
        // SAFETY: non-NULL and NUL-terminated per the caller's contract.
        let name = unsafe { CStr::from_ptr(capability) };
        Ok(has_capability(name.to_bytes()) as c_int)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities() {
        assert!(has_capability(b"ipc"));
        assert!(has_capability(b"curve"));
        assert!(!has_capability(b"tcp"));
        assert!(!has_capability(b"pgm"));
    }

    #[test]
    fn strerror_covers_own_and_os_codes() {
        // SAFETY: zmq_strerror always returns a valid static C string.
        let own = unsafe { CStr::from_ptr(zmq_strerror(ferromq::error::ETERM)) };
        assert_eq!(own.to_str().unwrap(), "Context was terminated");
        // SAFETY: as above.
        let os = unsafe { CStr::from_ptr(zmq_strerror(libc::EAGAIN)) };
        assert!(!os.to_bytes().is_empty());
    }
}
