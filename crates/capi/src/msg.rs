//! Messages: `zmq_msg_*`, plus the legacy `zmq_sendmsg` / `zmq_recvmsg`.
//!
//! A `zmq_msg_t` is 64 bytes of caller-owned memory (usually on the stack). We keep a
//! `ferromq::Msg` in it, written with `ptr::write` by the `init` calls and dropped in place
//! by `zmq_msg_close`. A `Msg` is plain data that may be moved bytewise, so bindings that
//! `memcpy` a `zmq_msg_t` keep working, as with libzmq.

use crate::errno::{could_hold, fail, ffi, CResult, Errno};
use crate::socket::{size_result, sock_ref};
use bytes::Bytes;
use ferromq::Msg;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

/// The C `zmq_msg_t`: 64 opaque bytes, pointer-aligned.
#[repr(C, align(8))]
pub struct zmq_msg_t {
    _opaque: [u8; 64],
}

const _: () = assert!(std::mem::size_of::<Msg>() <= std::mem::size_of::<zmq_msg_t>());
const _: () = assert!(std::mem::align_of::<Msg>() <= std::mem::align_of::<zmq_msg_t>());

/// `zmq_free_fn`: releases a buffer given to `zmq_msg_init_data`.
pub type zmq_free_fn = unsafe extern "C" fn(data: *mut c_void, hint: *mut c_void);

const ZMQ_MORE: c_int = 1;
const ZMQ_SRCFD: c_int = 2;
const ZMQ_SHARED: c_int = 3;

/// Borrows the initialised message inside a `zmq_msg_t`; EFAULT for NULL.
///
/// # Safety
/// `p` must be NULL or a `zmq_msg_t` initialised by one of the `zmq_msg_init*` calls and
/// not closed since, with no other live reference to it during `'a`.
pub(crate) unsafe fn msg_mut<'a>(p: *mut zmq_msg_t) -> CResult<&'a mut Msg> {
    if p.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: the contract says p holds a live Msg; zmq_msg_t is large and aligned enough
    // (checked at compile time above).
    Ok(unsafe { &mut *(p as *mut Msg) })
}

/// `msg_mut` for the calls libzmq refuses on a closed message with EFAULT (close, send,
/// receive, copy, move); the others treat a closed message as an empty one (where
/// libzmq asserts, as in `zmq_msg_size` and `zmq_msg_data`).
///
/// # Safety
/// As `msg_mut`.
pub(crate) unsafe fn open_msg_mut<'a>(p: *mut zmq_msg_t) -> CResult<&'a mut Msg> {
    // SAFETY: forwarded caller contract.
    let m = unsafe { msg_mut(p)? };
    if m.is_closed() {
        return fail(libc::EFAULT);
    }
    Ok(m)
}

/// Shared-reference form of `msg_mut`.
///
/// # Safety
/// As `msg_mut`, except that other shared references may exist.
unsafe fn msg_ref<'a>(p: *const zmq_msg_t) -> CResult<&'a Msg> {
    if p.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: as in msg_mut.
    Ok(unsafe { &*(p as *const Msg) })
}

/// Stores a new message in caller memory, without reading or dropping what was there.
///
/// # Safety
/// `p` must be NULL or valid for writing a `zmq_msg_t`.
unsafe fn msg_init_with(p: *mut zmq_msg_t, msg: Msg) -> CResult<c_int> {
    if p.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: p is writable, large and aligned enough for a Msg; previous contents are
    // treated as uninitialised (libzmq's init calls do not close either).
    unsafe { ptr::write(p as *mut Msg, msg) };
    Ok(0)
}

/// Initialises an empty message.
///
/// # Safety
/// `msg` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init(msg: *mut zmq_msg_t) -> c_int {
    // SAFETY: forwarded caller contract.
    ffi(-1, || unsafe { msg_init_with(msg, Msg::new()) })
}

/// Initialises a message of `size` bytes (contents unspecified; zeroed here) to be filled
/// through `zmq_msg_data`.
///
/// # Safety
/// `msg` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_size(msg: *mut zmq_msg_t, size: usize) -> c_int {
    ffi(-1, || {
        if !could_hold(size) {
            return fail(libc::ENOMEM);
        }
        // SAFETY: forwarded caller contract.
        unsafe { msg_init_with(msg, Msg::zeroed_for_fill(size)) }
    })
}

/// Draft: initialises a message holding a copy of `buf`.
///
/// # Safety
/// `msg` must be NULL or writable; `buf` NULL (with size 0) or readable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_buffer(
    msg: *mut zmq_msg_t,
    buf: *const c_void,
    size: usize,
) -> c_int {
    ffi(-1, || {
        let data: &[u8] = if size == 0 {
            &[]
        } else if buf.is_null() {
            return fail(libc::EFAULT);
        } else if !could_hold(size) {
            return fail(libc::ENOMEM);
        } else {
            // SAFETY: non-NULL and readable for size bytes per the contract.
            unsafe { std::slice::from_raw_parts(buf as *const u8, size) }
        };
        // SAFETY: forwarded caller contract.
        unsafe { msg_init_with(msg, Msg::copy_from(data)) }
    })
}

/// A caller's buffer lent to a message by `zmq_msg_init_data`; handed back through the
/// free function when the last reference to the body goes away.
struct LentBuffer {
    data: *mut u8,
    len: usize,
    ffn: Option<zmq_free_fn>,
    hint: *mut c_void,
}

// SAFETY: the buffer is only read through shared references while lent, and libzmq's
// contract allows the free function to be called from any thread (libzmq calls it from
// its I/O threads), so the pointers may move between threads.
unsafe impl Send for LentBuffer {}

impl AsRef<[u8]> for LentBuffer {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: zmq_msg_init_data's contract: data stays readable for len bytes until
        // the free function is called, which happens only in Drop below.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl Drop for LentBuffer {
    fn drop(&mut self) {
        if let Some(ffn) = self.ffn {
            // SAFETY: the caller-supplied release function, called exactly once with the
            // pointer and hint it was registered with.
            unsafe { ffn(self.data as *mut c_void, self.hint) };
        }
    }
}

/// Initialises a message that borrows `data` without copying; `ffn(data, hint)` is called
/// once the library no longer needs it (NULL `ffn`: the buffer is never released).
///
/// Bodies of up to 30 bytes are copied into the message instead, and for those `ffn` runs
/// before this call returns.
///
/// # Safety
/// `msg` must be NULL or writable; `data` readable for `size` bytes until `ffn` is called
/// (forever if `ffn` is NULL); `ffn` must be safe to call from any thread.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_init_data(
    msg: *mut zmq_msg_t,
    data: *mut c_void,
    size: usize,
    ffn: Option<zmq_free_fn>,
    hint: *mut c_void,
) -> c_int {
    ffi(-1, || {
        if msg.is_null() {
            return fail(libc::EFAULT);
        }
        if data.is_null() && size != 0 {
            return fail(libc::EFAULT);
        }
        if size > isize::MAX as usize {
            // No buffer is that long; libzmq takes it and crashes when it is read.
            return fail(libc::EINVAL);
        }
        let lent = LentBuffer {
            data: data as *mut u8,
            len: size,
            ffn,
            hint,
        };
        // Never inlined: the free function must run only when the last copy is closed.
        // Without one the body is constant, and libzmq reports it ZMQ_SHARED.
        let body = if ffn.is_none() {
            Msg::from_constant(Bytes::from_owner(lent))
        } else {
            Msg::from_shared(Bytes::from_owner(lent))
        };
        // SAFETY: forwarded caller contract.
        unsafe { msg_init_with(msg, body) }
    })
}

/// Sends a message: on success its content is taken (the message is left empty, to be
/// closed or reused) and its size returned; on failure it is left unchanged.
///
/// # Safety
/// `msg` must be NULL or an initialised message; `socket` NULL or a live socket pointer.
pub(crate) unsafe fn msg_send(msg: *mut zmq_msg_t, socket: *mut c_void, flags: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        // SAFETY: forwarded caller contract.
        let slot = unsafe { open_msg_mut(msg)? };
        let m = std::mem::take(slot);
        let size = m.len();
        match sock.send_msg(m, flags) {
            Ok(()) => Ok(size_result(size)),
            Err((e, m)) => {
                *slot = m;
                Err(Errno::from(e))
            }
        }
    })
}

/// Receives a frame into an initialised message (its previous content is released);
/// returns the frame's size.
///
/// # Safety
/// As `msg_send`.
pub(crate) unsafe fn msg_recv(msg: *mut zmq_msg_t, socket: *mut c_void, flags: c_int) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { recv_into(msg, socket, |sock, out| sock.recv_msg_into(flags, out)) }
}

/// Stores what `recv` takes from the socket in `msg`; returns its size.
///
/// # Safety
/// As `msg_send`.
unsafe fn recv_into(
    msg: *mut zmq_msg_t,
    socket: *mut c_void,
    recv: impl FnOnce(&ferromq::Socket, &mut Msg) -> ferromq::Result<()>,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        // SAFETY: forwarded caller contract.
        let slot = unsafe { open_msg_mut(msg)? };
        // Received in place: returning the frame cost a store-forwarding stall at the
        // copy into `slot` (see `Queue::pop_into`).
        recv(sock, slot)?;
        Ok(size_result(slot.len()))
    })
}

/// Sends a message (see `msg_send`).
///
/// # Safety
/// As `msg_send`.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_send(
    msg: *mut zmq_msg_t,
    socket: *mut c_void,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { msg_send(msg, socket, flags) }
}

/// Receives into a message (see `msg_recv`).
///
/// # Safety
/// As `msg_send`.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_recv(
    msg: *mut zmq_msg_t,
    socket: *mut c_void,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { msg_recv(msg, socket, flags) }
}

/// ferromq extension (not in libzmq, not declared in zmq.h): `zmq_msg_recv` that waits at
/// most `timeout_us` microseconds instead of `ZMQ_RCVTIMEO` (0 = do not wait), then fails
/// with EAGAIN; a negative timeout gives EINVAL. For bindings that wait on `ZMQ_FD` from an
/// event loop: a short wait here takes a reply due within microseconds without a poll
/// wake-up. Find it with `dlsym`; libzmq does not have it.
///
/// # Safety
/// As `msg_send`.
#[no_mangle]
pub unsafe extern "C" fn ferromq_msg_recv_within(
    msg: *mut zmq_msg_t,
    socket: *mut c_void,
    flags: c_int,
    timeout_us: c_int,
) -> c_int {
    if timeout_us < 0 {
        return ffi(-1, || fail(libc::EINVAL));
    }
    let wait = std::time::Duration::from_micros(timeout_us as u64);
    // SAFETY: forwarded caller contract.
    unsafe {
        recv_into(msg, socket, |sock, out| {
            sock.recv_msg_within_into(flags, wait, out)
        })
    }
}

/// Old argument order of `zmq_msg_send`.
///
/// # Safety
/// As `msg_send`.
#[no_mangle]
pub unsafe extern "C" fn zmq_sendmsg(
    socket: *mut c_void,
    msg: *mut zmq_msg_t,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { msg_send(msg, socket, flags) }
}

/// Old argument order of `zmq_msg_recv`.
///
/// # Safety
/// As `msg_send`.
#[no_mangle]
pub unsafe extern "C" fn zmq_recvmsg(
    socket: *mut c_void,
    msg: *mut zmq_msg_t,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { msg_recv(msg, socket, flags) }
}

/// Releases a message's content. The message is left empty and marked closed: closing it
/// again, sending it, receiving into it, copying or moving it fail with EFAULT (as in
/// libzmq) until an `init` call.
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_close(msg: *mut zmq_msg_t) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let slot = unsafe { open_msg_mut(msg)? };
        // Take it out, put the closed mark back before dropping, so that a panic in a free
        // function still leaves a valid message.
        let old = std::mem::replace(slot, Msg::closed());
        drop(old);
        Ok(0)
    })
}

/// Moves `src`'s content to `dest` (whose old content is released); `src` becomes empty.
///
/// # Safety
/// Both must be NULL or initialised messages.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_move(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    ffi(-1, || {
        if dest.is_null() || src.is_null() {
            return fail(libc::EFAULT);
        }
        if dest == src {
            // SAFETY: a live message per the contract (EFAULT if closed).
            return unsafe { open_msg_mut(src) }.map(|_| 0);
        }
        // SAFETY: distinct live messages per the contract, so the two borrows don't alias.
        let (d, s) = unsafe { (open_msg_mut(dest)?, open_msg_mut(src)?) };
        *d = std::mem::take(s);
        Ok(0)
    })
}

/// Makes `dest` share `src`'s content (no copy of the bytes); `dest`'s old content is
/// released.
///
/// # Safety
/// Both must be NULL or initialised messages.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_copy(dest: *mut zmq_msg_t, src: *mut zmq_msg_t) -> c_int {
    ffi(-1, || {
        if dest.is_null() || src.is_null() {
            return fail(libc::EFAULT);
        }
        if dest == src {
            // SAFETY: a live message per the contract (EFAULT if closed).
            return unsafe { open_msg_mut(src) }.map(|_| 0);
        }
        // SAFETY: distinct live messages per the contract, so the two borrows don't alias.
        let (d, s) = unsafe { (open_msg_mut(dest)?, open_msg_mut(src)?) };
        *d = s.share();
        Ok(0)
    })
}

/// Pointer to the message's bytes (writable, per libzmq's contract).
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_data(msg: *mut zmq_msg_t) -> *mut c_void {
    ffi(ptr::null_mut(), || {
        // SAFETY: forwarded caller contract.
        let m = unsafe { msg_mut(msg)? };
        Ok(m.data_ptr() as *mut c_void)
    })
}

/// The message's size in bytes (0 for NULL).
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_size(msg: *const zmq_msg_t) -> usize {
    // SAFETY: forwarded caller contract.
    ffi(0, || Ok(unsafe { msg_ref(msg)? }.len()))
}

/// 1 if more frames of the same message follow this one.
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_more(msg: *const zmq_msg_t) -> c_int {
    // SAFETY: forwarded caller contract.
    ffi(0, || Ok(unsafe { msg_ref(msg)? }.more() as c_int))
}

/// Reads an integer property: ZMQ_MORE; ZMQ_SRCFD, the descriptor of the tcp or ipc
/// connection the message came in on (-1 with EINVAL for others); ZMQ_SHARED, 1 if
/// `zmq_msg_copy` made the body shared with a copy; EINVAL for others.
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_get(msg: *const zmq_msg_t, property: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let m = unsafe { msg_ref(msg)? };
        match property {
            ZMQ_MORE => Ok(m.more() as c_int),
            ZMQ_SRCFD => m
                .metadata()
                .and_then(|meta| meta.source_fd())
                .ok_or(Errno(libc::EINVAL)),
            ZMQ_SHARED => Ok(m.shares_body() as c_int),
            _ => fail(libc::EINVAL),
        }
    })
}

/// No property is settable (EINVAL), as in libzmq.
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set(msg: *mut zmq_msg_t, _property: c_int, _val: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { msg_mut(msg)? };
        fail(libc::EINVAL)
    })
}

/// A connection property of a received message ("Socket-Type", "Routing-Id",
/// "Peer-Address", "User-Id", ...); NULL with EINVAL if it has none. The string stays
/// valid while the message (or a copy of it) lives: it is stored, NUL-terminated, in
/// the connection's metadata that the message shares.
///
/// # Safety
/// `msg` must be NULL or an initialised message; `property` NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_gets(
    msg: *const zmq_msg_t,
    property: *const c_char,
) -> *const c_char {
    ffi(ptr::null(), || {
        // SAFETY: forwarded caller contract.
        let m = unsafe { msg_ref(msg)? };
        // SAFETY: forwarded caller contract.
        let name = unsafe { crate::c_str(property)? };
        m.metadata()
            .and_then(|meta| meta.get_cstr(name))
            .map(|c| c.as_ptr())
            .ok_or(Errno(libc::EINVAL))
    })
}

/// Draft (SERVER/CLIENT routing ids): not supported (ENOTSUP).
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set_routing_id(msg: *mut zmq_msg_t, _routing_id: u32) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { msg_mut(msg)? };
        fail(libc::ENOTSUP)
    })
}

/// Draft: messages carry no routing id here; returns 0 (libzmq's "none").
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_routing_id(msg: *mut zmq_msg_t) -> u32 {
    ffi(0, || {
        // SAFETY: forwarded caller contract.
        unsafe { msg_mut(msg)? };
        Ok(0)
    })
}

/// Draft (RADIO/DISH groups): not supported (ENOTSUP).
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_set_group(msg: *mut zmq_msg_t, _group: *const c_char) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { msg_mut(msg)? };
        fail(libc::ENOTSUP)
    })
}

/// Draft: messages carry no group here; returns "" (libzmq's "none").
///
/// # Safety
/// `msg` must be NULL or an initialised message.
#[no_mangle]
pub unsafe extern "C" fn zmq_msg_group(msg: *mut zmq_msg_t) -> *const c_char {
    ffi(ptr::null(), || {
        // SAFETY: forwarded caller contract.
        unsafe { msg_mut(msg)? };
        Ok(c"".as_ptr())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn msg_fits_in_zmq_msg_t() {
        assert!(std::mem::size_of::<Msg>() <= 64);
        assert!(std::mem::align_of::<Msg>() <= 8);
        assert_eq!(std::mem::size_of::<zmq_msg_t>(), 64);
    }

    static FREED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn count_free(_data: *mut c_void, hint: *mut c_void) {
        FREED.fetch_add(hint as usize, Ordering::SeqCst);
    }

    #[test]
    fn init_data_is_zero_copy_and_freed_once() {
        let mut buf = vec![7u8; 100];
        let mut m = MaybeUninit::<zmq_msg_t>::uninit();
        let mut c = MaybeUninit::<zmq_msg_t>::uninit();
        // SAFETY: test-local buffers, valid for the whole test; the message is closed
        // before `buf` goes away.
        unsafe {
            let p = buf.as_mut_ptr() as *mut c_void;
            assert_eq!(
                zmq_msg_init_data(m.as_mut_ptr(), p, 100, Some(count_free), 1 as _),
                0
            );
            assert_eq!(zmq_msg_data(m.as_mut_ptr()), p);
            assert_eq!(zmq_msg_size(m.as_ptr()), 100);
            zmq_msg_init(c.as_mut_ptr());
            assert_eq!(zmq_msg_copy(c.as_mut_ptr(), m.as_mut_ptr()), 0);
            zmq_msg_close(m.as_mut_ptr());
            assert_eq!(FREED.load(Ordering::SeqCst), 0);
            assert_eq!(zmq_msg_size(c.as_ptr()), 100);
            zmq_msg_close(c.as_mut_ptr());
            assert_eq!(FREED.load(Ordering::SeqCst), 1);
            // Closing twice is refused (EFAULT, as libzmq) and frees nothing again.
            assert_eq!(zmq_msg_close(c.as_mut_ptr()), -1);
            assert_eq!(crate::errno::errno(), libc::EFAULT);
        }
        assert_eq!(FREED.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn move_leaves_source_empty() {
        let mut a = MaybeUninit::<zmq_msg_t>::uninit();
        let mut b = MaybeUninit::<zmq_msg_t>::uninit();
        // SAFETY: test-local messages, initialised before use and closed at the end.
        unsafe {
            zmq_msg_init_buffer(a.as_mut_ptr(), b"hello".as_ptr() as _, 5);
            zmq_msg_init(b.as_mut_ptr());
            assert_eq!(zmq_msg_move(b.as_mut_ptr(), a.as_mut_ptr()), 0);
            assert_eq!(zmq_msg_size(a.as_ptr()), 0);
            assert_eq!(zmq_msg_size(b.as_ptr()), 5);
            assert_eq!(zmq_msg_get(b.as_ptr(), ZMQ_MORE), 0);
            zmq_msg_close(a.as_mut_ptr());
            zmq_msg_close(b.as_mut_ptr());
        }
    }
}
