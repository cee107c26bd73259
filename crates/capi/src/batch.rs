//! ferromq's batch extensions (not in `zmq.h`, not in libzmq): many one-frame sends or
//! many frame receives per call, under one socket lock, for bindings whose per-call cost
//! (a foreign-function hop, a lock) is a large part of a small message's. Bindings find
//! them with `dlsym` and fall back to the standard calls on another libzmq.

use crate::errno::{fail, ffi, Errno};
use crate::msg::zmq_msg_t;
use crate::socket::{in_buf, sock_ref};
use ferromq::Msg;
use std::os::raw::{c_int, c_void};
use std::ptr;

/// ferromq's extension (not in `zmq.h`): sends `count` one-frame messages, the i-th
/// copied from `bufs[i]` (`lens[i]` bytes), as `count` calls of `zmq_send` with
/// `ZMQ_DONTWAIT` would, but under one lock, and waking whoever reads the messages (a
/// connection's writer, an inproc peer) once at the end instead of at nearly every
/// message (for bindings with batch APIs, found with `dlsym`). Returns how many were
/// queued, stopping at the first that found no room or failed; -1 with `EAGAIN` if the
/// first found no room, or with the first message's own error. `EINVAL` for a negative
/// count, `EFAULT` for NULL arrays.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; for `count > 0`, `bufs` and `lens`
/// must point to `count` elements, each `bufs[i]` readable for `lens[i]` bytes.
#[no_mangle]
pub unsafe extern "C" fn ferromq_send_many(
    socket: *mut c_void,
    bufs: *const *const c_void,
    lens: *const usize,
    count: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        let Ok(n) = usize::try_from(count) else {
            return fail(libc::EINVAL);
        };
        if n == 0 {
            return Ok(0);
        }
        if bufs.is_null() || lens.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: both arrays hold `count` elements per the contract (checked non-NULL).
        let (bufs, lens) = unsafe {
            (
                std::slice::from_raw_parts(bufs, n),
                std::slice::from_raw_parts(lens, n),
            )
        };
        let mut bodies = Vec::with_capacity(n);
        for (&b, &len) in bufs.iter().zip(lens) {
            // SAFETY: each buffer is readable for its length per the contract.
            bodies.push(unsafe { in_buf(b, len)? });
        }
        let sent = sock.send_many(&bodies).map_err(Errno::from)?;
        Ok(sent as c_int)
    })
}

/// ferromq's extension (not in `zmq.h`): receives the frames already queued, up to
/// `count` of them, into `msgs[0..n)`, as `n` calls of `zmq_msg_recv` with `ZMQ_DONTWAIT`
/// would, but under one lock. The slots are written without releasing what they held: pass
/// uninitialised or closed messages; the caller closes the `n` it gets. A call may end
/// inside a multipart message (`zmq_msg_more` on the last frame, or `ZMQ_RCVMORE`, says so).
/// Returns `n` ≥ 1; -1 with `EAGAIN` when nothing was queued (after reading the socket's
/// connections once and arming `ZMQ_FD`, as a DONTWAIT receive does), or with the error a
/// receive would report. `EINVAL` for `count < 1`, `EFAULT` for a NULL `msgs`.
///
/// # Safety
/// `socket` must be NULL or a live socket pointer; `msgs` writable for `count` messages.
#[no_mangle]
pub unsafe extern "C" fn ferromq_recv_msgs(
    socket: *mut c_void,
    msgs: *mut zmq_msg_t,
    count: c_int,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let sock = unsafe { sock_ref(socket)? };
        let max = match usize::try_from(count) {
            Ok(n) if n > 0 => n,
            _ => return fail(libc::EINVAL),
        };
        if msgs.is_null() {
            return fail(libc::EFAULT);
        }
        let mut n = 0usize;
        sock.recv_many(|m| {
            // SAFETY: n < max, so slot n is within the `count` writable messages; a
            // zmq_msg_t holds a Msg (size and alignment checked in msg.rs), and the slot's
            // old content is not read or dropped, as the contract says.
            unsafe { ptr::write(msgs.add(n) as *mut Msg, m) };
            n += 1;
            n < max
        })
        .map_err(Errno::from)?;
        Ok(n as c_int)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::{zmq_ctx_new, zmq_ctx_term};
    use crate::msg::{zmq_msg_close, zmq_msg_data, zmq_msg_more, zmq_msg_size};
    use crate::socket::{zmq_bind, zmq_close, zmq_connect, zmq_recv, zmq_send, zmq_socket};
    use crate::zmq_errno;
    use ferromq::SNDMORE as ZMQ_SNDMORE;
    use std::mem::MaybeUninit;

    #[test]
    fn send_many_reads_each_buffer_and_checks_its_arguments() {
        let bodies: [&[u8]; 3] = [b"one", b"", b"three"];
        let bufs: Vec<*const c_void> = bodies.iter().map(|b| b.as_ptr().cast()).collect();
        let lens: Vec<usize> = bodies.iter().map(|b| b.len()).collect();
        let ctx = zmq_ctx_new();
        // SAFETY: a live context and sockets made here; every buffer and length array
        // holds what the count says; NUL-terminated endpoints.
        unsafe {
            let pull = zmq_socket(ctx, 7);
            let push = zmq_socket(ctx, 8);
            assert_eq!(zmq_bind(pull, c"inproc://capi-send-many".as_ptr()), 0);
            assert_eq!(zmq_connect(push, c"inproc://capi-send-many".as_ptr()), 0);
            assert_eq!(
                ferromq_send_many(push, bufs.as_ptr(), lens.as_ptr(), -1),
                -1
            );
            assert_eq!(zmq_errno(), libc::EINVAL);
            assert_eq!(
                ferromq_send_many(push, std::ptr::null(), lens.as_ptr(), 1),
                -1
            );
            assert_eq!(zmq_errno(), libc::EFAULT);
            assert_eq!(ferromq_send_many(push, bufs.as_ptr(), lens.as_ptr(), 3), 3);
            let mut got = [0u8; 8];
            for want in bodies {
                let n = zmq_recv(pull, got.as_mut_ptr().cast(), got.len(), 0);
                assert_eq!(&got[..n as usize], want);
            }
            assert_eq!(zmq_close(push), 0);
            assert_eq!(zmq_close(pull), 0);
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }

    #[test]
    fn recv_msgs_moves_queued_frames_and_checks_its_arguments() {
        let ctx = zmq_ctx_new();
        // SAFETY: sockets and messages made here; `slots` holds the count passed; each
        // message the call filled is closed once.
        unsafe {
            let pull = zmq_socket(ctx, 7);
            let push = zmq_socket(ctx, 8);
            assert_eq!(zmq_bind(pull, c"inproc://capi-recv-msgs".as_ptr()), 0);
            assert_eq!(zmq_connect(push, c"inproc://capi-recv-msgs".as_ptr()), 0);
            let mut slots: [MaybeUninit<zmq_msg_t>; 4] = [const { MaybeUninit::uninit() }; 4];
            let p = slots.as_mut_ptr().cast::<zmq_msg_t>();
            assert_eq!(ferromq_recv_msgs(pull, p, 4), -1);
            assert_eq!(zmq_errno(), libc::EAGAIN);
            assert_eq!(ferromq_recv_msgs(pull, p, 0), -1);
            assert_eq!(zmq_errno(), libc::EINVAL);
            assert_eq!(ferromq_recv_msgs(pull, ptr::null_mut(), 4), -1);
            assert_eq!(zmq_errno(), libc::EFAULT);
            assert_eq!(ferromq_recv_msgs(ptr::null_mut(), p, 4), -1);
            assert_eq!(zmq_errno(), libc::ENOTSOCK);
            // "a" | "b","cc","ddd" (three frames) | "e"
            for (body, flags) in [
                (&b"a"[..], 0),
                (b"b", ZMQ_SNDMORE),
                (b"cc", ZMQ_SNDMORE),
                (b"ddd", 0),
                (b"e", 0),
            ] {
                let n = body.len();
                assert_eq!(zmq_send(push, body.as_ptr().cast(), n, flags), n as c_int);
            }
            let frame = |i: usize| {
                let m = p.add(i);
                let bytes =
                    std::slice::from_raw_parts(zmq_msg_data(m) as *const u8, zmq_msg_size(m));
                (bytes.to_vec(), zmq_msg_more(m) == 1)
            };
            // Three slots: the call ends inside the second message.
            assert_eq!(ferromq_recv_msgs(pull, p, 3), 3);
            let got: Vec<_> = (0..3).map(frame).collect();
            assert_eq!(
                got,
                [
                    (b"a".to_vec(), false),
                    (b"b".to_vec(), true),
                    (b"cc".to_vec(), true)
                ]
            );
            for i in 0..3 {
                assert_eq!(zmq_msg_close(p.add(i)), 0);
            }
            assert_eq!(ferromq_recv_msgs(pull, p, 4), 2);
            assert_eq!(
                (frame(0), frame(1)),
                ((b"ddd".to_vec(), false), (b"e".to_vec(), false))
            );
            for i in 0..2 {
                assert_eq!(zmq_msg_close(p.add(i)), 0);
            }
            assert_eq!(ferromq_recv_msgs(pull, p, 4), -1);
            assert_eq!(zmq_errno(), libc::EAGAIN);
            assert_eq!(zmq_close(push), 0);
            assert_eq!(zmq_close(pull), 0);
            assert_eq!(zmq_ctx_term(ctx), 0);
        }
    }
}
