//! The C API's argument handling, called through the exported `extern "C"`
//! symbols exactly as a C program would: option numbers and value lengths for
//! `zmq_setsockopt`/`zmq_getsockopt` and the context options, buffer sizes,
//! Z85 and CURVE key strings, message properties, monitor endpoints and socket
//! types. Every buffer handed over is exactly as large as libzmq's contract asks
//! (so AddressSanitizer reports any write past it). Checked:
//!
//! * every call returns 0 (or a pointer) or -1 (NULL) with errno set: a failure
//!   never leaves errno untouched, a success never returns another value;
//! * a plain `int` option given a length other than 4 fails with EINVAL, and one
//!   that was set reads back as set, through a 4-byte buffer;
//! * `zmq_getsockopt` never reports more bytes than the buffer holds, and a string
//!   option comes back NUL-terminated;
//! * a context option that was set reads back as set;
//! * Z85: encoding succeeds exactly for multiples of 4 bytes, decoding then
//!   re-encoding gives the text back; `zmq_curve_public` accepts only 40-character
//!   keys;
//! * the context terminates at the end (nothing left open keeps it alive).
//!
//! Input: [socket type] then operations, each an operation byte and its
//! arguments (see `run_op`).
#![no_main]

use ferromq_fuzz::Input;
use libfuzzer_sys::fuzz_target;
use std::ffi::{c_char, c_int, c_void, CString};
use std::ptr;
// Links the C ABI crate, whose `#[no_mangle]` functions the block below declares.
use zmq as _;

#[repr(C, align(8))]
struct ZmqMsg([u8; 64]);

extern "C" {
    fn zmq_ctx_new() -> *mut c_void;
    fn zmq_ctx_term(ctx: *mut c_void) -> c_int;
    fn zmq_ctx_set(ctx: *mut c_void, option: c_int, value: c_int) -> c_int;
    fn zmq_ctx_get(ctx: *mut c_void, option: c_int) -> c_int;
    fn zmq_ctx_set_ext(ctx: *mut c_void, option: c_int, val: *const c_void, len: usize) -> c_int;
    fn zmq_ctx_get_ext(ctx: *mut c_void, option: c_int, val: *mut c_void, len: *mut usize)
        -> c_int;
    fn zmq_socket(ctx: *mut c_void, kind: c_int) -> *mut c_void;
    fn zmq_close(sock: *mut c_void) -> c_int;
    fn zmq_setsockopt(sock: *mut c_void, option: c_int, val: *const c_void, len: usize) -> c_int;
    fn zmq_getsockopt(sock: *mut c_void, option: c_int, val: *mut c_void, len: *mut usize)
        -> c_int;
    fn zmq_socket_monitor(sock: *mut c_void, endpoint: *const c_char, events: c_int) -> c_int;
    fn zmq_z85_encode(dest: *mut c_char, data: *const u8, size: usize) -> *mut c_char;
    fn zmq_z85_decode(dest: *mut u8, string: *const c_char) -> *mut u8;
    fn zmq_curve_public(public: *mut c_char, secret: *const c_char) -> c_int;
    fn zmq_msg_init_size(msg: *mut ZmqMsg, size: usize) -> c_int;
    fn zmq_msg_close(msg: *mut ZmqMsg) -> c_int;
    fn zmq_msg_size(msg: *const ZmqMsg) -> usize;
    fn zmq_msg_get(msg: *const ZmqMsg, property: c_int) -> c_int;
    fn zmq_msg_set(msg: *mut ZmqMsg, property: c_int, value: c_int) -> c_int;
    fn zmq_msg_gets(msg: *const ZmqMsg, property: *const c_char) -> *const c_char;
    fn zmq_has(capability: *const c_char) -> c_int;
}

/// Socket options stored as a plain `int` that read back as set (SNDHWM, RCVHWM,
/// LINGER, RECONNECT_IVL, BACKLOG, RCVTIMEO, SNDTIMEO).
const PLAIN_INTS: [c_int; 7] = [23, 24, 17, 18, 19, 27, 28];
/// Socket options whose value is a C string (LAST_ENDPOINT, PLAIN_USERNAME,
/// PLAIN_PASSWORD, ZAP_DOMAIN, SOCKS_PROXY, BINDTODEVICE, SOCKS_USERNAME,
/// SOCKS_PASSWORD).
const STRINGS: [c_int; 8] = [32, 45, 46, 55, 68, 92, 99, 100];
/// Context options that read back as set (IO_THREADS, MAX_SOCKETS,
/// THREAD_SCHED_POLICY, MAX_MSGSZ).
const CTX_READ_BACK: [c_int; 4] = [1, 2, 4, 5];

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn clear_errno() {
    // SAFETY: the calling thread's errno slot is always valid.
    unsafe { *libc::__errno_location() = 0 };
}

/// Checks an int-returning call: 0 on success, else -1 with errno set.
fn checked(what: &str, rc: c_int) -> bool {
    match rc {
        0 => true,
        -1 => {
            assert_ne!(errno(), 0, "{what} failed without setting errno");
            false
        }
        other => panic!("{what} returned {other}"),
    }
}

/// A C string made of the bytes before the first NUL.
fn c_string(bytes: &[u8]) -> CString {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end]).expect("no NUL before end")
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    // SAFETY (all calls in this target): every pointer passed is NULL where the
    // API allows it, or points to a live buffer of the size libzmq documents;
    // sockets and messages are used only between their creation and close.
    let ctx = unsafe { zmq_ctx_new() };
    assert!(!ctx.is_null());
    let kind = c_int::from(input.byte() % 12);
    let sock = unsafe { zmq_socket(ctx, kind) };
    assert!(!sock.is_null(), "socket type {kind}");
    let mut ops = 0;
    while !input.is_empty() && ops < 24 {
        ops += 1;
        clear_errno();
        run_op(&mut input, ctx, sock);
    }
    // Stop any monitor the input started; the socket's close must release the rest.
    unsafe { zmq_socket_monitor(sock, ptr::null(), 0) };
    assert_eq!(unsafe { zmq_close(sock) }, 0);
    assert_eq!(unsafe { zmq_ctx_term(ctx) }, 0, "errno {}", errno());
});

fn run_op(input: &mut Input<'_>, ctx: *mut c_void, sock: *mut c_void) {
    match input.byte() % 10 {
        // [option] [flags] [len] [value]: setsockopt, NULL value if flags bit 0.
        0 => {
            let opt = input.option_number();
            let null = input.byte() & 1 != 0;
            let value = input.short_bytes();
            let p = if null {
                ptr::null()
            } else {
                value.as_ptr().cast()
            };
            let ok = checked("zmq_setsockopt", unsafe {
                zmq_setsockopt(sock, opt, p, value.len())
            });
            if null && !value.is_empty() {
                assert!(
                    !ok,
                    "option {opt}: NULL value of {} bytes accepted",
                    value.len()
                );
            }
            if PLAIN_INTS.contains(&opt) && value.len() != 4 {
                assert!(!ok, "int option {opt} took {} bytes", value.len());
                assert_eq!(errno(), libc::EINVAL);
            }
            if ok && PLAIN_INTS.contains(&opt) {
                let mut out = [0u8; 4];
                let mut len = 4usize;
                let rc = unsafe { zmq_getsockopt(sock, opt, out.as_mut_ptr().cast(), &mut len) };
                assert!(checked("zmq_getsockopt", rc), "int option {opt} unreadable");
                assert_eq!((len, &out[..]), (4, value), "int option {opt}");
            }
        }
        // [option] [capacity]: getsockopt into a buffer of exactly that size.
        1 => {
            let opt = input.option_number();
            let cap = usize::from(input.byte());
            let mut buf = vec![0u8; cap];
            let mut len = cap;
            let p = if cap == 0 {
                ptr::null_mut()
            } else {
                buf.as_mut_ptr().cast()
            };
            let rc = unsafe { zmq_getsockopt(sock, opt, p, &mut len) };
            if checked("zmq_getsockopt", rc) {
                assert!(len <= cap, "option {opt}: {len} bytes reported into {cap}");
                if STRINGS.contains(&opt) {
                    assert!(
                        len >= 1 && buf[len - 1] == 0,
                        "option {opt} not NUL-terminated"
                    );
                }
            }
        }
        // [option] [i32]: zmq_ctx_set, then zmq_ctx_get.
        2 => {
            let opt = input.option_number();
            let value =
                i32::from_be_bytes([input.byte(), input.byte(), input.byte(), input.byte()]);
            let set = checked("zmq_ctx_set", unsafe { zmq_ctx_set(ctx, opt, value) });
            clear_errno();
            let got = unsafe { zmq_ctx_get(ctx, opt) };
            // THREAD_SCHED_POLICY (4) is -1 as a value by default, and THREAD_NAME_PREFIX
            // (9) reads back any int it was given, -1 included, as in libzmq.
            if got == -1 && opt != 4 && opt != 9 {
                assert_ne!(errno(), 0, "zmq_ctx_get failed without setting errno");
            }
            if set && CTX_READ_BACK.contains(&opt) {
                assert_eq!(got, value, "context option {opt}");
            }
        }
        // [option] [len] [value] [capacity]: the buffer forms of the context options.
        3 => {
            let opt = input.option_number();
            let value = input.short_bytes();
            let ok = checked("zmq_ctx_set_ext", unsafe {
                zmq_ctx_set_ext(ctx, opt, value.as_ptr().cast(), value.len())
            });
            assert!(
                !ok || value.len() == 4,
                "context option {opt} took {} bytes",
                value.len()
            );
            let cap = usize::from(input.byte() % 16);
            let mut buf = vec![0u8; cap.max(1)];
            let mut len = cap;
            let rc = unsafe { zmq_ctx_get_ext(ctx, opt, buf.as_mut_ptr().cast(), &mut len) };
            if checked("zmq_ctx_get_ext", rc) {
                assert!(len <= cap, "context option {opt}: {len} bytes into {cap}");
            }
        }
        // [len] [bytes] [len] [text]: Z85 both ways.
        4 => {
            let bytes = input.short_bytes();
            let mut text = vec![0u8; bytes.len() * 5 / 4 + 1];
            let r =
                unsafe { zmq_z85_encode(text.as_mut_ptr().cast(), bytes.as_ptr(), bytes.len()) };
            assert_eq!(
                r.is_null(),
                bytes.len() % 4 != 0,
                "encode of {} bytes",
                bytes.len()
            );
            if r.is_null() {
                assert_eq!(errno(), libc::EINVAL);
            } else {
                assert_eq!(text.last(), Some(&0));
            }
            let given = c_string(input.short_bytes());
            let n = given.as_bytes().len();
            let mut decoded = vec![0u8; (n * 4 / 5).max(1)];
            let r = unsafe { zmq_z85_decode(decoded.as_mut_ptr(), given.as_ptr()) };
            if r.is_null() {
                assert_eq!(errno(), libc::EINVAL);
            } else {
                assert_eq!(n % 5, 0, "decoded a {n}-character text");
                let mut again = vec![0u8; n + 1];
                let size = n * 4 / 5;
                let e =
                    unsafe { zmq_z85_encode(again.as_mut_ptr().cast(), decoded.as_ptr(), size) };
                assert!(!e.is_null());
                assert_eq!(&again[..n], given.as_bytes(), "Z85 round trip");
            }
        }
        // [len] [text]: zmq_curve_public.
        5 => {
            let secret = c_string(input.short_bytes());
            let mut public = [0u8; 41];
            let ok = checked("zmq_curve_public", unsafe {
                zmq_curve_public(public.as_mut_ptr().cast(), secret.as_ptr())
            });
            if ok {
                assert_eq!(
                    secret.as_bytes().len(),
                    40,
                    "a key of another length accepted"
                );
                assert_eq!(public[40], 0);
            }
        }
        // [size] [property] [len] [name]: a message's properties.
        6 => {
            let mut msg = ZmqMsg([0; 64]);
            let size = usize::from(input.byte()) * 17;
            assert!(checked("zmq_msg_init_size", unsafe {
                zmq_msg_init_size(&mut msg, size)
            }));
            assert_eq!(unsafe { zmq_msg_size(&msg) }, size);
            let prop = input.option_number();
            let got = unsafe { zmq_msg_get(&msg, prop) };
            // ZMQ_SRCFD (2) of a local message is -1 as a value, as in libzmq.
            if got == -1 && prop != 2 {
                assert_ne!(errno(), 0, "zmq_msg_get failed without setting errno");
            }
            clear_errno();
            assert!(!checked("zmq_msg_set", unsafe {
                zmq_msg_set(&mut msg, prop, 1)
            }));
            let name = c_string(input.short_bytes());
            clear_errno();
            // A message that never crossed a connection has no metadata.
            let s = unsafe { zmq_msg_gets(&msg, name.as_ptr()) };
            assert!(s.is_null(), "property {name:?} of a local message");
            assert_eq!(errno(), libc::EINVAL);
            assert!(checked("zmq_msg_close", unsafe { zmq_msg_close(&mut msg) }));
        }
        // [events i32] [len] [endpoint]: zmq_socket_monitor (stopped again on success).
        7 => {
            let events =
                i32::from_be_bytes([input.byte(), input.byte(), input.byte(), input.byte()]);
            let endpoint = c_string(input.short_bytes());
            let ok = checked("zmq_socket_monitor", unsafe {
                zmq_socket_monitor(sock, endpoint.as_ptr(), events)
            });
            if ok {
                assert!(
                    endpoint.as_bytes().starts_with(b"inproc://"),
                    "{endpoint:?}"
                );
                assert!(checked("zmq_socket_monitor stop", unsafe {
                    zmq_socket_monitor(sock, ptr::null(), 0)
                }));
            }
        }
        // [i32] [len] [name]: zmq_socket with any type, zmq_has with any name.
        8 => {
            let kind = i32::from_be_bytes([input.byte(), input.byte(), input.byte(), input.byte()]);
            let s = unsafe { zmq_socket(ctx, kind) };
            if s.is_null() {
                assert_ne!(errno(), 0, "zmq_socket failed without setting errno");
            } else {
                assert!((0..=11).contains(&kind), "socket type {kind} accepted");
                assert_eq!(unsafe { zmq_close(s) }, 0);
            }
            let name = c_string(input.short_bytes());
            let has = unsafe { zmq_has(name.as_ptr()) };
            assert!(has == 0 || has == 1);
        }
        // [option] [len] [value]: setsockopt on a closed socket handle is not
        // allowed by the contract; instead, NULL handles everywhere.
        _ => {
            let opt = input.option_number();
            let value = input.short_bytes();
            let rc =
                unsafe { zmq_setsockopt(ptr::null_mut(), opt, value.as_ptr().cast(), value.len()) };
            assert_eq!((rc, errno()), (-1, libc::ENOTSOCK));
            let mut len = 4usize;
            let mut out = [0u8; 4];
            clear_errno();
            let rc =
                unsafe { zmq_getsockopt(ptr::null_mut(), opt, out.as_mut_ptr().cast(), &mut len) };
            assert_eq!((rc, errno()), (-1, libc::ENOTSOCK));
            clear_errno();
            let rc = unsafe { zmq_ctx_set(ptr::null_mut(), opt, 1) };
            assert_eq!((rc, errno()), (-1, libc::EFAULT));
        }
    }
}
