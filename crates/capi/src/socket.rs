//! Sockets: creation, options, bind/connect, byte-buffer send/receive, iovec calls,
//! monitoring, and the draft socket calls.

use crate::c_str;
use crate::ctx::ctx_ref;
use crate::errno::{could_hold, fail, ffi, CResult, Errno};
use bytes::Bytes;
use ferromq::{Msg, OptionValue, Socket, SocketType, DONTWAIT, SNDMORE};
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use zeroize::Zeroizing;

/// Marks a live socket handle.
const SOCK_TAG: u32 = 0xcafe_f00d;

/// What a C socket pointer points to (tag first, see `CtxHandle`).
#[repr(C)]
pub(crate) struct SockHandle {
    tag: u32,
    pub(crate) sock: Socket,
}

/// Borrows the socket behind a C pointer; ENOTSOCK for NULL or a non-socket pointer.
///
/// # Safety
/// `p` must be NULL or a pointer obtained from this library that has not been freed.
pub(crate) unsafe fn sock_ref<'a>(p: *mut c_void) -> CResult<&'a Socket> {
    if p.is_null() {
        return fail(libc::ENOTSOCK);
    }
    // SAFETY: per the contract `p` points to one of our live, tag-first handles; only a
    // matching tag lets us use the rest as a SockHandle.
    let h = unsafe { &*(p as *const SockHandle) };
    if h.tag != SOCK_TAG {
        return fail(libc::ENOTSOCK);
    }
    Ok(&h.sock)
}

/// A C `int` result for a byte count (libzmq clips sizes above INT_MAX).
pub(crate) fn size_result(n: usize) -> c_int {
    n.min(c_int::MAX as usize) as c_int
}

/// Creates a socket; EFAULT for a bad context, EINVAL for an unknown type.
///
/// # Safety
/// `context` must be NULL or a live context pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket(context: *mut c_void, kind: c_int) -> *mut c_void {
    ffi(ptr::null_mut(), || {
        // SAFETY: forwarded caller contract.
        let h = unsafe { ctx_ref(context)? };
        let Some(kind) = SocketType::from_raw(kind) else {
            // libzmq: ETERM and EMFILE come before EINVAL for the type.
            h.ctx.socket_room()?;
            return Err(Errno(libc::EINVAL));
        };
        let sock = h.ctx.socket(kind)?;
        let handle = Box::new(SockHandle {
            tag: SOCK_TAG,
            sock,
        });
        Ok(Box::into_raw(handle) as *mut c_void)
    })
}

/// Closes and frees a socket (pending messages linger in the background per ZMQ_LINGER).
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zmq_close(socket: *mut c_void) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        // SAFETY: the tag matched, so the pointer came from Box::into_raw in zmq_socket and
        // is still live; the caller gives up its use.
        let mut boxed = unsafe { Box::from_raw(socket as *mut SockHandle) };
        boxed.tag = 0;
        boxed.sock.close();
        drop(boxed);
        Ok(0)
    })
}

/// Options that libzmq answers at the socket level: their buffers need only be at least
/// `sizeof(int)` long. Every other `int` option needs exactly `sizeof(int)`, and 64-bit
/// options exactly 8 bytes, as libzmq's option table requires.
const AT_LEAST_INT: [c_int; 4] = [
    13, /* RCVMORE */
    14, /* FD */
    15, /* EVENTS */
    81, /* THREAD_SAFE */
];

/// The bytes `zmq_getsockopt` writes for `value` into a buffer of `cap` bytes, or EINVAL
/// if the buffer size is wrong for the option. Strings include their NUL terminator. The
/// bytes are wiped when dropped, refused or not: the value may be a password or a key.
pub(crate) fn encode_option(
    option: c_int,
    value: OptionValue,
    cap: usize,
) -> CResult<Zeroizing<Vec<u8>>> {
    let (bytes, fits) = match value {
        OptionValue::Int(v) => {
            let fits = if AT_LEAST_INT.contains(&option) {
                cap >= 4
            } else {
                cap == 4
            };
            (v.to_ne_bytes().to_vec(), fits)
        }
        OptionValue::Int64(v) => (v.to_ne_bytes().to_vec(), cap == 8),
        OptionValue::Uint64(v) => (v.to_ne_bytes().to_vec(), cap == 8),
        OptionValue::Binary(b) => (b.to_vec(), cap >= b.len()),
        // libzmq: exactly 32 bytes gives the raw key, exactly 41 the Z85 text + NUL.
        OptionValue::CurveKey(k) if cap == 32 => (k.to_vec(), true),
        OptionValue::CurveKey(k) => {
            let mut text = ferromq_zmtp::z85::encode(&k)
                .expect("32 bytes is a multiple of 4")
                .into_bytes();
            text.push(0);
            (text, cap == 41)
        }
        OptionValue::Str(mut v) => {
            v.push(0);
            let fits = cap >= v.len();
            (v, fits)
        }
    };
    let bytes = Zeroizing::new(bytes);
    if fits {
        Ok(bytes)
    } else {
        fail(libc::EINVAL)
    }
}

/// Sets a socket option from a raw buffer.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `optval` must be NULL (with length 0)
/// or readable for `optvallen` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_setsockopt(
    socket: *mut c_void,
    option: c_int,
    optval: *const c_void,
    optvallen: usize,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        use ferromq::options::id::{
            BINDTODEVICE, IPC_FILTER_GID, IPC_FILTER_PID, IPC_FILTER_UID, PLAIN_PASSWORD,
            PLAIN_USERNAME, SOCKS_PROXY, TCP_ACCEPT_FILTER,
        };
        let val: &[u8] = if optvallen == 0 {
            // These are emptied (or, for PLAIN, the mechanism reset) by NULL only; libzmq
            // refuses a pointer with no value. The core's setters take a slice, which
            // cannot say which of the two it was.
            if !optval.is_null()
                && matches!(
                    option,
                    IPC_FILTER_PID
                        | IPC_FILTER_UID
                        | IPC_FILTER_GID
                        | TCP_ACCEPT_FILTER
                        | PLAIN_USERNAME
                        | PLAIN_PASSWORD
                        | SOCKS_PROXY
                        | BINDTODEVICE
                )
            {
                return fail(libc::EINVAL);
            }
            &[]
        } else if optval.is_null() || !could_hold(optvallen) {
            // (No value is that long: no option's length check would take it.)
            return fail(libc::EINVAL);
        } else {
            // SAFETY: non-NULL and readable for optvallen bytes per the contract.
            unsafe { std::slice::from_raw_parts(optval as *const u8, optvallen) }
        };
        sock.set_option(option, val)?;
        Ok(0)
    })
}

/// Reads a socket option into a raw buffer; `*optvallen` is the buffer size on entry and
/// the value's size on return.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `optvallen` must be valid and `optval`
/// writable for `*optvallen` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_getsockopt(
    socket: *mut c_void,
    option: c_int,
    optval: *mut c_void,
    optvallen: *mut usize,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        if optval.is_null() || optvallen.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: non-NULL and valid per the contract.
        let len = unsafe { &mut *optvallen };
        let cap = *len;
        let bytes = encode_option(option, sock.get_option(option)?, cap)?;
        // SAFETY: encode_option checked bytes.len() <= cap, the writable buffer size; the
        // rest of the buffer is zeroed, as libzmq does (a caller may read 8 bytes back for
        // a 4-byte value).
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), optval as *mut u8, bytes.len());
            ptr::write_bytes((optval as *mut u8).add(bytes.len()), 0, cap - bytes.len());
        }
        *len = bytes.len();
        Ok(0)
    })
}

/// Shared body of bind/connect/unbind/disconnect.
///
/// # Safety
/// As for those functions.
unsafe fn endpoint_call(
    socket: *mut c_void,
    endpoint: *const c_char,
    op: fn(&Socket, &str) -> ferromq::Result<()>,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        // SAFETY: forwarded caller contract.
        let ep = unsafe { c_str(endpoint)? };
        op(sock, ep)?;
        Ok(0)
    })
}

/// Binds to `tcp://`, `ipc://` or `inproc://` endpoints.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `endpoint` NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn zmq_bind(socket: *mut c_void, endpoint: *const c_char) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { endpoint_call(socket, endpoint, Socket::bind) }
}

/// Connects to an endpoint.
///
/// # Safety
/// As `zmq_bind`.
#[no_mangle]
pub unsafe extern "C" fn zmq_connect(socket: *mut c_void, endpoint: *const c_char) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { endpoint_call(socket, endpoint, Socket::connect) }
}

/// Stops listening on a bound endpoint (ENOENT if it is not bound).
///
/// # Safety
/// As `zmq_bind`.
#[no_mangle]
pub unsafe extern "C" fn zmq_unbind(socket: *mut c_void, endpoint: *const c_char) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { endpoint_call(socket, endpoint, Socket::unbind) }
}

/// Drops a connection (ENOENT if not connected to that endpoint).
///
/// # Safety
/// As `zmq_bind`.
#[no_mangle]
pub unsafe extern "C" fn zmq_disconnect(socket: *mut c_void, endpoint: *const c_char) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { endpoint_call(socket, endpoint, Socket::disconnect) }
}

/// More `iovec`s than any array can hold (a slice of them would be undefined behaviour).
const MAX_IOVECS: usize = isize::MAX as usize / std::mem::size_of::<libc::iovec>();

/// Borrows a C buffer; NULL is only allowed with length 0 (EFAULT otherwise), and no
/// length beyond `isize::MAX` (ENOMEM, as libzmq's failed copy).
///
/// # Safety
/// `buf` must be NULL or readable for `len` bytes that outlive `'a`.
pub(crate) unsafe fn in_buf<'a>(buf: *const c_void, len: usize) -> CResult<&'a [u8]> {
    if len == 0 {
        Ok(&[])
    } else if !could_hold(len) {
        // No buffer is that long (a slice of it would be undefined behaviour), or no
        // memory could hold its copy: libzmq's copy fails to allocate.
        fail(libc::ENOMEM)
    } else if buf.is_null() {
        fail(libc::EFAULT)
    } else {
        // SAFETY: non-NULL and readable for len bytes per the contract.
        Ok(unsafe { std::slice::from_raw_parts(buf as *const u8, len) })
    }
}

/// Sends one frame copied from `buf`; returns its size.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `buf` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_send(
    socket: *mut c_void,
    buf: *const c_void,
    len: usize,
    flags: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        // SAFETY: forwarded caller contract.
        let data = unsafe { in_buf(buf, len)? };
        // `send` reads the caller's bytes in place while it runs (large frames), as
        // zmq_send's contract allows, and copies them only if still needed on return.
        sock.send(data, flags).map_err(Errno::from)?;
        Ok(size_result(len))
    })
}

/// Like `zmq_send`, but the frame is made of the caller's buffer itself, not a copy, as
/// libzmq's is: an inproc receiver gets that very buffer, and the frame reports
/// ZMQ_SHARED.
///
/// # Safety
/// As `zmq_send`, and the buffer must be constant memory: neither changed nor freed while
/// the library may still read it (libzmq's contract for this call).
#[no_mangle]
pub unsafe extern "C" fn zmq_send_const(
    socket: *mut c_void,
    buf: *const c_void,
    len: usize,
    flags: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        let data: &'static [u8] = if len == 0 && !buf.is_null() {
            // SAFETY: an empty slice at a non-NULL pointer reads nothing. It keeps the
            // caller's pointer, which libzmq hands on for an empty frame too.
            unsafe { std::slice::from_raw_parts(buf.cast(), 0) }
        } else {
            // SAFETY: forwarded caller contract; the borrow may be 'static because the
            // buffer is constant memory that outlives every frame made of it (above).
            unsafe { in_buf(buf, len)? }
        };
        sock.send_msg(Msg::from_constant(Bytes::from_static(data)), flags)
            .map_err(|(e, _)| Errno::from(e))?;
        Ok(size_result(len))
    })
}

/// Receives one frame into `buf`, copying at most `len` bytes; returns the frame's full
/// size (larger than `len` when the frame was truncated).
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `buf` writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_recv(
    socket: *mut c_void,
    buf: *mut c_void,
    len: usize,
    flags: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        if buf.is_null() && len > 0 {
            return fail(libc::EFAULT);
        }
        // Received in place, as zmq_msg_recv does (see `Socket::recv_msg_into`).
        let mut msg = ferromq::Msg::new();
        sock.recv_msg_into(flags, &mut msg)?;
        let data = msg.data();
        let n = data.len().min(len);
        // SAFETY: n <= len, the writable size of buf (non-NULL whenever n > 0).
        unsafe { ptr::copy_nonoverlapping(data.as_ptr(), buf as *mut u8, n) };
        Ok(size_result(data.len()))
    })
}

/// Sends `count` buffers as frames. As in libzmq, every frame but the last is sent with
/// the caller's `flags` (pass ZMQ_SNDMORE to make one multipart message); the last is sent
/// without ZMQ_SNDMORE. Returns the last frame's size.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `iov` must hold `count` valid entries.
#[no_mangle]
pub unsafe extern "C" fn zmq_sendiov(
    socket: *mut c_void,
    iov: *mut libc::iovec,
    count: usize,
    flags: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        if iov.is_null() || count == 0 || count > MAX_IOVECS {
            return fail(libc::EINVAL);
        }
        // SAFETY: non-NULL and holding `count` entries per the contract.
        let iovs = unsafe { std::slice::from_raw_parts(iov, count) };
        let mut rc = 0;
        for (i, v) in iovs.iter().enumerate() {
            // SAFETY: each entry describes a readable buffer per the contract.
            let data = unsafe { in_buf(v.iov_base, v.iov_len)? };
            let f = if i + 1 == count {
                flags & !SNDMORE
            } else {
                flags
            };
            sock.send_msg(Msg::copy_from(data), f)
                .map_err(|(e, _)| Errno::from(e))?;
            rc = size_result(data.len());
        }
        Ok(rc)
    })
}

/// Receives up to `*count` frames of one message into buffers allocated with `malloc`
/// (the caller frees them with `free`); sets `*count` to the frames received and returns
/// that number too, as libzmq 4.3.4 does. Frames beyond `*count` stay queued.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `count` valid, and `iov` writable for
/// `*count` entries.
#[no_mangle]
pub unsafe extern "C" fn zmq_recviov(
    socket: *mut c_void,
    iov: *mut libc::iovec,
    count: *mut usize,
    flags: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        if iov.is_null() || count.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: non-NULL and valid per the contract.
        let count = unsafe { &mut *count };
        if *count == 0 || *count > MAX_IOVECS {
            return fail(libc::EINVAL);
        }
        // SAFETY: writable for *count entries per the contract.
        let iovs = unsafe { std::slice::from_raw_parts_mut(iov, *count) };
        let mut received = 0;
        for slot in iovs.iter_mut() {
            // The first frame may wait (per flags); later ones are already here.
            let f = if received == 0 {
                flags
            } else {
                flags | DONTWAIT
            };
            let msg = match sock.recv_msg(f) {
                Ok(m) => m,
                Err(e) if received == 0 => return Err(e.into()),
                Err(_) => break,
            };
            let data = msg.data();
            // SAFETY: plain allocation; the caller owns and frees it. malloc(0) may give
            // NULL, which is a valid "empty" buffer here.
            let p = unsafe { libc::malloc(data.len()) } as *mut u8;
            if p.is_null() && !data.is_empty() {
                return fail(libc::ENOMEM);
            }
            // SAFETY: p was just allocated with room for data.len() bytes.
            unsafe { ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
            slot.iov_base = p as *mut c_void;
            slot.iov_len = data.len();
            received += 1;
            if !msg.more() {
                break;
            }
        }
        *count = received;
        // Frames, not bytes: libzmq's manual says bytes, its code and its test_iov count
        // frames.
        Ok(received as c_int)
    })
}

/// Publishes the socket's events on a PAIR socket bound at an `inproc://` endpoint; a NULL
/// endpoint stops monitoring.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `endpoint` NULL or a C string.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor(
    socket: *mut c_void,
    endpoint: *const c_char,
    events: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        let ep = if endpoint.is_null() {
            None
        } else {
            // SAFETY: forwarded caller contract.
            Some(unsafe { c_str(endpoint)? })
        };
        sock.monitor(ep, events as u32)?;
        Ok(0)
    })
}

/// Draft: versioned monitor. Version 1 with a PAIR monitor socket is `zmq_socket_monitor`;
/// version 2 (the 64-bit event format) and other monitor socket types are not supported
/// (ENOTSUP); other versions are EINVAL.
///
/// # Safety
/// As `zmq_socket_monitor`.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor_versioned(
    socket: *mut c_void,
    endpoint: *const c_char,
    events: u64,
    event_version: c_int,
    kind: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        match event_version {
            1 if kind == SocketType::Pair.as_raw() => {}
            1 | 2 => return fail(libc::ENOTSUP),
            _ => return fail(libc::EINVAL),
        }
        // SAFETY: forwarded caller contract.
        let rc = unsafe { zmq_socket_monitor(socket, endpoint, events as u32 as c_int) };
        if rc < 0 {
            return fail(crate::errno::errno());
        }
        Ok(0)
    })
}

/// Draft: pipe statistics events are not supported (ENOTSUP).
///
/// # Safety
/// `socket` must be NULL or a live socket pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_monitor_pipes_stats(socket: *mut c_void) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        fail(libc::ENOTSUP)
    })
}

/// Draft (RADIO/DISH groups): no socket type supports it (ENOTSUP).
///
/// # Safety
/// `socket` must be NULL or a live socket pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_join(socket: *mut c_void, _group: *const c_char) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        fail(libc::ENOTSUP)
    })
}

/// Draft (RADIO/DISH groups): no socket type supports it (ENOTSUP).
///
/// # Safety
/// `socket` must be NULL or a live socket pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_leave(socket: *mut c_void, _group: *const c_char) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        fail(libc::ENOTSUP)
    })
}

/// Draft (PEER sockets): not supported; returns routing id 0 with ENOTSUP.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_connect_peer(socket: *mut c_void, _endpoint: *const c_char) -> u32 {
    ffi(0, || {
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        fail(libc::ENOTSUP)
    })
}

/// Draft (ROUTER peer state): not supported (ENOTSUP).
///
/// # Safety
/// `socket` must be NULL or a live socket pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_socket_get_peer_state(
    socket: *mut c_void,
    _routing_id: *const c_void,
    _routing_id_size: usize,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        fail(libc::ENOTSUP)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn int_options_need_exact_size() {
        assert_eq!(
            *encode_option(23, OptionValue::Int(7), 4).unwrap(),
            7i32.to_ne_bytes()
        );
        assert!(encode_option(23, OptionValue::Int(7), 8).is_err());
        assert!(encode_option(23, OptionValue::Int(7), 2).is_err());
    }

    #[test]
    fn socket_level_ints_accept_larger_buffers() {
        for opt in [13, 14, 15] {
            assert_eq!(encode_option(opt, OptionValue::Int(1), 8).unwrap().len(), 4);
            assert!(encode_option(opt, OptionValue::Int(1), 3).is_err());
        }
    }

    #[test]
    fn wide_options_need_eight_bytes() {
        assert_eq!(
            encode_option(22, OptionValue::Int64(-1), 8).unwrap().len(),
            8
        );
        assert!(encode_option(22, OptionValue::Int64(-1), 16).is_err());
        assert!(encode_option(4, OptionValue::Uint64(0), 4).is_err());
    }

    #[test]
    fn strings_include_terminator() {
        let v = encode_option(32, OptionValue::Str(b"tcp://a:1".to_vec()), 64).unwrap();
        assert_eq!(*v, b"tcp://a:1\0");
        assert_eq!(
            *encode_option(32, OptionValue::Str(Vec::new()), 1).unwrap(),
            b"\0"
        );
        assert!(encode_option(32, OptionValue::Str(b"abc".to_vec()), 3).is_err());
    }

    #[test]
    fn a_string_with_a_spare_byte_is_terminated_in_place() {
        let mut v = Vec::with_capacity(3);
        v.extend_from_slice(b"pw");
        let before = v.as_ptr();
        let out = encode_option(27, OptionValue::Str(v), 64).unwrap();
        // No copy of a password is left behind unwiped: the NUL went into the spare byte.
        assert_eq!(out.as_ptr(), before);
        assert_eq!(*out, b"pw\0");
    }

    #[test]
    fn binary_fits_or_fails() {
        let id = Bytes::from_static(b"peer");
        assert_eq!(
            *encode_option(5, OptionValue::Binary(id.clone()), 255).unwrap(),
            b"peer"
        );
        assert!(encode_option(5, OptionValue::Binary(id), 3).is_err());
        assert!(encode_option(5, OptionValue::Binary(Bytes::new()), 0)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn sizes_are_clipped_to_int() {
        assert_eq!(size_result(5), 5);
        assert_eq!(size_result(usize::MAX), c_int::MAX);
    }
}
