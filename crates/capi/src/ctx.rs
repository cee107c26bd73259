//! Contexts: `zmq_ctx_*`, and the pre-3.2 `zmq_init` / `zmq_term`.

use crate::errno::{fail, ffi, CResult, Errno};
use ferromq::Context;
use std::os::raw::{c_int, c_void};
use std::ptr;

/// Marks a live context handle.
const CTX_TAG: u32 = 0xabad_cafe;

/// What a C context pointer points to. `repr(C)` keeps the tag first, so a pointer to any
/// of our handle types can be told apart by reading it.
#[repr(C)]
pub(crate) struct CtxHandle {
    tag: u32,
    pub(crate) ctx: Context,
}

/// Borrows the context behind a C pointer; EFAULT for NULL or a non-context pointer.
///
/// # Safety
/// `p` must be NULL or a pointer obtained from this library that has not been freed.
pub(crate) unsafe fn ctx_ref<'a>(p: *mut c_void) -> CResult<&'a CtxHandle> {
    if p.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: per the contract `p` points to one of our live, tag-first handles, so the
    // tag can be read; only a matching tag lets us use the rest as a CtxHandle.
    let h = unsafe { &*(p as *const CtxHandle) };
    if h.tag != CTX_TAG {
        return fail(libc::EFAULT);
    }
    Ok(h)
}

fn new_handle(ctx: Context) -> *mut c_void {
    Box::into_raw(Box::new(CtxHandle { tag: CTX_TAG, ctx })) as *mut c_void
}

/// Creates a context.
#[no_mangle]
pub extern "C" fn zmq_ctx_new() -> *mut c_void {
    ffi(ptr::null_mut(), || Ok(new_handle(Context::new())))
}

/// Old name of `zmq_ctx_new` taking the I/O thread count; EINVAL if negative.
#[no_mangle]
pub extern "C" fn zmq_init(io_threads: c_int) -> *mut c_void {
    ffi(ptr::null_mut(), || {
        if io_threads < 0 {
            return fail(libc::EINVAL);
        }
        let ctx = Context::new();
        ctx.set(ferromq::ctx_opt::IO_THREADS, io_threads)?;
        Ok(new_handle(ctx))
    })
}

/// Terminates and frees a context: blocks until all its sockets are closed. If a signal
/// interrupts the wait, returns -1 with EINTR and the context stays valid (call again).
///
/// # Safety
/// `context` must be NULL or a live context pointer; it is freed on success.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_term(context: *mut c_void) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let h = unsafe { ctx_ref(context)? };
        h.ctx.term()?;
        // SAFETY: the tag matched, so `context` came from Box::into_raw in `new_handle`,
        // and libzmq's contract says nobody uses it after a successful term.
        let mut boxed = unsafe { Box::from_raw(context as *mut CtxHandle) };
        boxed.tag = 0;
        drop(boxed);
        Ok(0)
    })
}

/// Old name of `zmq_ctx_term`.
///
/// # Safety
/// As `zmq_ctx_term`.
#[no_mangle]
pub unsafe extern "C" fn zmq_term(context: *mut c_void) -> c_int {
    // SAFETY: same contract.
    unsafe { zmq_ctx_term(context) }
}

/// Old name of `zmq_ctx_term`.
///
/// # Safety
/// As `zmq_ctx_term`.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_destroy(context: *mut c_void) -> c_int {
    // SAFETY: same contract.
    unsafe { zmq_ctx_term(context) }
}

/// Makes blocking calls on the context's sockets fail with ETERM; does not free anything.
///
/// # Safety
/// `context` must be NULL or a live context pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_shutdown(context: *mut c_void) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let h = unsafe { ctx_ref(context)? };
        h.ctx.shutdown();
        Ok(0)
    })
}

fn einval(_: ferromq::Error) -> Errno {
    Errno(libc::EINVAL)
}

/// Sets a context option; EINVAL for an unknown option or a bad value.
///
/// # Safety
/// `context` must be NULL or a live context pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_set(context: *mut c_void, option: c_int, optval: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let h = unsafe { ctx_ref(context)? };
        h.ctx.set(option, optval).map_err(einval)?;
        Ok(0)
    })
}

/// Reads a context option; -1 with EINVAL for an unknown option.
///
/// # Safety
/// `context` must be NULL or a live context pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_get(context: *mut c_void, option: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let h = unsafe { ctx_ref(context)? };
        h.ctx.get(option).map_err(einval)
    })
}

/// Draft: sets a context option given as a buffer. Only `int`-sized values are supported
/// (ZMQ_THREAD_NAME_PREFIX as a string is not: EINVAL).
///
/// # Safety
/// `context` as for `zmq_ctx_set`; `optval` must be valid for `optvallen` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_set_ext(
    context: *mut c_void,
    option: c_int,
    optval: *const c_void,
    optvallen: usize,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let h = unsafe { ctx_ref(context)? };
        if optval.is_null() || optvallen != std::mem::size_of::<c_int>() {
            return fail(libc::EINVAL);
        }
        // SAFETY: non-NULL and at least an int's worth of readable bytes; read_unaligned
        // because a C buffer need not be aligned.
        let value = unsafe { ptr::read_unaligned(optval as *const c_int) };
        h.ctx.set(option, value).map_err(einval)?;
        Ok(0)
    })
}

/// Draft: reads a context option into a buffer (`int` options only).
///
/// # Safety
/// `context` as for `zmq_ctx_get`; `optvallen` must be valid, and `optval` writable for
/// `*optvallen` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_ctx_get_ext(
    context: *mut c_void,
    option: c_int,
    optval: *mut c_void,
    optvallen: *mut usize,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let h = unsafe { ctx_ref(context)? };
        if optval.is_null() || optvallen.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: non-NULL and valid per the contract.
        let len = unsafe { &mut *optvallen };
        if *len < std::mem::size_of::<c_int>() {
            return fail(libc::EINVAL);
        }
        let value = h.ctx.get(option).map_err(einval)?;
        // SAFETY: the buffer holds at least an int (checked above); it may be unaligned.
        unsafe { ptr::write_unaligned(optval as *mut c_int, value) };
        *len = std::mem::size_of::<c_int>();
        Ok(0)
    })
}
