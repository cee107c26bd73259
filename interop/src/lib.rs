//! Helpers for talking to a real libzmq loaded with dlopen.
//!
//! The interop tests run ferromq sockets against sockets of the system's libzmq
//! (Debian's `libzmq.so.5`, or the library named by `FERROMQ_INTEROP_LIBZMQ`). The
//! library is loaded at run time so the test binary never links against it: ferromq's own
//! drop-in `libzmq.so.5` can therefore never be picked up by accident.
//!
//! Layers:
//! - [`LibZmq`]: the loaded library (function pointers only).
//! - [`ZmqContext`] / [`ZmqSocket`]: safe RAII handles over libzmq's `void *`.
//! - [`AnySocket`]: one trait over both a ferromq [`ferromq::Socket`] and a [`ZmqSocket`],
//!   so table-driven tests can put either library on either side.
//! - [`Harness`]: one context of each library plus a private temp dir for ipc paths.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub use ferromq::SocketType;

/// libzmq's constants used by the tests (values from `zmq.h`, identical in ferromq).
pub mod zmq {
    /// `ZMQ_ROUTING_ID`
    pub const ROUTING_ID: i32 = 5;
    /// `ZMQ_SUBSCRIBE`
    pub const SUBSCRIBE: i32 = 6;
    /// `ZMQ_UNSUBSCRIBE`
    pub const UNSUBSCRIBE: i32 = 7;
    /// `ZMQ_LINGER`
    pub const LINGER: i32 = 17;
    /// `ZMQ_RECONNECT_IVL`
    pub const RECONNECT_IVL: i32 = 18;
    /// `ZMQ_RCVTIMEO`
    pub const RCVTIMEO: i32 = 27;
    /// `ZMQ_SNDTIMEO`
    pub const SNDTIMEO: i32 = 28;
    /// `ZMQ_LAST_ENDPOINT`
    pub const LAST_ENDPOINT: i32 = 32;
    /// `ZMQ_ROUTER_MANDATORY`
    pub const ROUTER_MANDATORY: i32 = 33;
    /// `ZMQ_XPUB_VERBOSE`
    pub const XPUB_VERBOSE: i32 = 40;
    /// `ZMQ_CONNECT_ROUTING_ID`
    pub const CONNECT_ROUTING_ID: i32 = 61;
    /// `ZMQ_PLAIN_SERVER`
    pub const PLAIN_SERVER: i32 = 44;
    /// `ZMQ_PLAIN_USERNAME`
    pub const PLAIN_USERNAME: i32 = 45;
    /// `ZMQ_PLAIN_PASSWORD`
    pub const PLAIN_PASSWORD: i32 = 46;
    /// `ZMQ_CURVE_SERVER`
    pub const CURVE_SERVER: i32 = 47;
    /// `ZMQ_CURVE_PUBLICKEY`
    pub const CURVE_PUBLICKEY: i32 = 48;
    /// `ZMQ_CURVE_SECRETKEY`
    pub const CURVE_SECRETKEY: i32 = 49;
    /// `ZMQ_CURVE_SERVERKEY`
    pub const CURVE_SERVERKEY: i32 = 50;
    /// `ZMQ_ZAP_DOMAIN`
    pub const ZAP_DOMAIN: i32 = 55;
    /// `ZMQ_EVENT_DISCONNECTED`
    pub const EVENT_DISCONNECTED: u16 = 0x0200;
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL`
    pub const EVENT_HANDSHAKE_FAILED_NO_DETAIL: u16 = 0x0800;
    /// `ZMQ_EVENT_HANDSHAKE_SUCCEEDED`
    pub const EVENT_HANDSHAKE_SUCCEEDED: u16 = 0x1000;
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`
    pub const EVENT_HANDSHAKE_FAILED_PROTOCOL: u16 = 0x2000;
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`
    pub const EVENT_HANDSHAKE_FAILED_AUTH: u16 = 0x4000;
    /// `ZMQ_DONTWAIT`
    pub const DONTWAIT: i32 = 1;
    /// `ZMQ_SNDMORE`
    pub const SNDMORE: i32 = 2;
}

/// Default library path (Debian/Ubuntu multiarch location of libzmq3-dev's runtime).
pub const DEFAULT_LIBZMQ: &str = "/usr/lib/x86_64-linux-gnu/libzmq.so.5";

/// Environment variable overriding [`DEFAULT_LIBZMQ`].
pub const LIBZMQ_ENV: &str = "FERROMQ_INTEROP_LIBZMQ";

/// How long a receiving socket waits before a test declares the peer broken.
pub const RECV_TIMEOUT_MS: i32 = 5000;

/// An errno value from either library, printed with its name and libzmq's wording.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

/// libzmq's `EFSM` (operation not valid in the socket's state).
pub const EFSM: i32 = 156_384_763;
/// libzmq's `ETERM`.
pub const ETERM: i32 = 156_384_765;

impl Errno {
    fn name(self) -> &'static str {
        match self.0 {
            libc::EAGAIN => "EAGAIN",
            libc::EINTR => "EINTR",
            libc::EINVAL => "EINVAL",
            libc::ENOTSOCK => "ENOTSOCK",
            libc::ENOTSUP => "ENOTSUP",
            libc::EHOSTUNREACH => "EHOSTUNREACH",
            libc::EADDRINUSE => "EADDRINUSE",
            libc::ENOENT => "ENOENT",
            libc::EPROTONOSUPPORT => "EPROTONOSUPPORT",
            EFSM => "EFSM",
            ETERM => "ETERM",
            _ => "errno",
        }
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}: {})",
            self.name(),
            self.0,
            ferromq::error::strerror(self.0)
        )
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl From<ferromq::Error> for Errno {
    fn from(e: ferromq::Error) -> Errno {
        Errno(e.errno())
    }
}

/// `zmq_msg_t`: 64 opaque bytes, pointer aligned.
#[repr(C, align(8))]
struct RawMsg([u8; 64]);

type CtxNewFn = unsafe extern "C" fn() -> *mut c_void;
type CtxTermFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type SocketFn = unsafe extern "C" fn(*mut c_void, c_int) -> *mut c_void;
type CloseFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type SetsockoptFn = unsafe extern "C" fn(*mut c_void, c_int, *const c_void, usize) -> c_int;
type GetsockoptFn = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void, *mut usize) -> c_int;
type EndpointFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type MonitorFn = unsafe extern "C" fn(*mut c_void, *const c_char, c_int) -> c_int;
type SendFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> c_int;
type MsgFn = unsafe extern "C" fn(*mut RawMsg) -> c_int;
type MsgRecvFn = unsafe extern "C" fn(*mut RawMsg, *mut c_void, c_int) -> c_int;
type MsgDataFn = unsafe extern "C" fn(*mut RawMsg) -> *mut c_void;
type MsgSizeFn = unsafe extern "C" fn(*const RawMsg) -> usize;
type MsgMoreFn = unsafe extern "C" fn(*const RawMsg) -> c_int;
type MsgGetsFn = unsafe extern "C" fn(*const RawMsg, *const c_char) -> *const c_char;
type ErrnoFn = unsafe extern "C" fn() -> c_int;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int);

/// The functions of a libzmq loaded with `dlopen`. The library is never unloaded, so the
/// pointers stay valid for the life of the process.
pub struct LibZmq {
    path: String,
    ctx_new: CtxNewFn,
    ctx_term: CtxTermFn,
    socket: SocketFn,
    close: CloseFn,
    setsockopt: SetsockoptFn,
    getsockopt: GetsockoptFn,
    bind: EndpointFn,
    connect: EndpointFn,
    unbind: EndpointFn,
    disconnect: EndpointFn,
    send: SendFn,
    msg_init: MsgFn,
    msg_recv: MsgRecvFn,
    msg_data: MsgDataFn,
    msg_size: MsgSizeFn,
    msg_more: MsgMoreFn,
    msg_close: MsgFn,
    msg_gets: MsgGetsFn,
    errno: ErrnoFn,
    version: VersionFn,
    socket_monitor: MonitorFn,
}

fn dlerror_string() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc that stays
    // valid until the next dl* call on this thread; we copy it out immediately.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown dlerror".to_string()
        } else {
            CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// Looks up `name` in `handle` and reinterprets it as a function pointer of type `T`.
///
/// # Safety
/// `T` must be an `extern "C" fn` type matching the C prototype of `name`.
unsafe fn symbol<T: Copy>(handle: *mut c_void, name: &str) -> Result<T, String> {
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    let cname = CString::new(name).expect("symbol names have no NUL");
    // SAFETY: handle came from a successful dlopen and is never closed; cname is a valid
    // NUL-terminated string.
    let p = unsafe { libc::dlsym(handle, cname.as_ptr()) };
    if p.is_null() {
        return Err(format!("symbol {name} not found: {}", dlerror_string()));
    }
    // SAFETY: p is a non-null code address for `name`; the caller guarantees T is a
    // function pointer type of the same size with the right signature.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}

static LIBZMQ: OnceLock<Result<LibZmq, String>> = OnceLock::new();

impl LibZmq {
    /// The library path the tests use: `$FERROMQ_INTEROP_LIBZMQ` or [`DEFAULT_LIBZMQ`].
    pub fn configured_path() -> String {
        std::env::var(LIBZMQ_ENV).unwrap_or_else(|_| DEFAULT_LIBZMQ.to_string())
    }

    /// Loads libzmq from `path` (`RTLD_NOW | RTLD_LOCAL`) and resolves every function the
    /// wrapper needs.
    pub fn load(path: &str) -> Result<LibZmq, String> {
        let cpath = CString::new(path).map_err(|_| format!("bad path {path:?}"))?;
        // SAFETY: cpath is a valid C string; dlopen has no other preconditions.
        let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!("dlopen({path}) failed: {}", dlerror_string()));
        }
        // SAFETY (for every `symbol` call below): each type alias matches the prototype
        // of the named function in zmq.h (void * for sockets/contexts, zmq_msg_t * for
        // messages, size_t as usize, int as c_int).
        unsafe {
            Ok(LibZmq {
                path: path.to_string(),
                ctx_new: symbol(handle, "zmq_ctx_new")?,
                ctx_term: symbol(handle, "zmq_ctx_term")?,
                socket: symbol(handle, "zmq_socket")?,
                close: symbol(handle, "zmq_close")?,
                setsockopt: symbol(handle, "zmq_setsockopt")?,
                getsockopt: symbol(handle, "zmq_getsockopt")?,
                bind: symbol(handle, "zmq_bind")?,
                connect: symbol(handle, "zmq_connect")?,
                unbind: symbol(handle, "zmq_unbind")?,
                disconnect: symbol(handle, "zmq_disconnect")?,
                send: symbol(handle, "zmq_send")?,
                msg_init: symbol(handle, "zmq_msg_init")?,
                msg_recv: symbol(handle, "zmq_msg_recv")?,
                msg_data: symbol(handle, "zmq_msg_data")?,
                msg_size: symbol(handle, "zmq_msg_size")?,
                msg_more: symbol(handle, "zmq_msg_more")?,
                msg_close: symbol(handle, "zmq_msg_close")?,
                msg_gets: symbol(handle, "zmq_msg_gets")?,
                errno: symbol(handle, "zmq_errno")?,
                version: symbol(handle, "zmq_version")?,
                socket_monitor: symbol(handle, "zmq_socket_monitor")?,
            })
        }
    }

    /// The process-wide library, loaded on first use. Panics (failing the test) with an
    /// explanation when it cannot be loaded: these tests never skip silently.
    pub fn get() -> &'static LibZmq {
        let loaded = LIBZMQ.get_or_init(|| LibZmq::load(&LibZmq::configured_path()));
        match loaded {
            Ok(lib) => lib,
            Err(e) => panic!(
                "interop tests need a real libzmq: {e}. Install Debian's libzmq3-dev \
                 (provides {DEFAULT_LIBZMQ}) or point {LIBZMQ_ENV} at a libzmq.so.5"
            ),
        }
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `zmq_version`: (major, minor, patch).
    pub fn version(&self) -> (i32, i32, i32) {
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: zmq_version writes three ints through valid pointers.
        unsafe { (self.version)(&mut a, &mut b, &mut c) };
        (a, b, c)
    }

    /// `zmq_errno`: the calling thread's last libzmq error.
    pub fn errno(&self) -> Errno {
        // SAFETY: zmq_errno takes no arguments and only reads errno.
        Errno(unsafe { (self.errno)() })
    }

    /// `zmq_ctx_new`.
    pub fn ctx_new(&'static self) -> ZmqContext {
        // SAFETY: zmq_ctx_new has no preconditions.
        let raw = unsafe { (self.ctx_new)() };
        assert!(!raw.is_null(), "zmq_ctx_new failed: {:?}", self.errno());
        ZmqContext {
            inner: Arc::new(CtxInner { lib: self, raw }),
        }
    }
}

struct CtxInner {
    lib: &'static LibZmq,
    raw: *mut c_void,
}

// SAFETY: libzmq contexts are thread safe: zmq_socket and zmq_ctx_term may be called
// from any thread.
unsafe impl Send for CtxInner {}
// SAFETY: as above; shared references only ever call thread-safe context functions.
unsafe impl Sync for CtxInner {}

impl Drop for CtxInner {
    fn drop(&mut self) {
        // Every ZmqSocket holds an Arc to this, so all sockets are closed by now and
        // zmq_ctx_term only waits for their linger periods.
        loop {
            // SAFETY: raw is a live context; this is the only term call for it.
            let rc = unsafe { (self.lib.ctx_term)(self.raw) };
            if rc == 0 || self.lib.errno().0 != libc::EINTR {
                break;
            }
        }
    }
}

/// A libzmq context; terminated when it and all its sockets are dropped.
#[derive(Clone)]
pub struct ZmqContext {
    inner: Arc<CtxInner>,
}

impl ZmqContext {
    /// `zmq_socket`. The socket starts with `ZMQ_LINGER` 0 so that dropping a test's
    /// context never waits for an unreachable peer; tests that need linger set it.
    pub fn socket(&self, kind: SocketType) -> Result<ZmqSocket, Errno> {
        let lib = self.inner.lib;
        // SAFETY: the context is live (we hold a reference to it).
        let raw = unsafe { (lib.socket)(self.inner.raw, kind.as_raw()) };
        if raw.is_null() {
            return Err(lib.errno());
        }
        let s = ZmqSocket {
            ctx: self.inner.clone(),
            raw,
        };
        s.set_int(zmq::LINGER, 0)?;
        Ok(s)
    }

    /// `zmq_ctx_term` now (drops the caller's handle; sockets still open keep the context
    /// alive until they are dropped).
    pub fn term(self) {}
}

/// A libzmq socket, closed on drop.
pub struct ZmqSocket {
    ctx: Arc<CtxInner>,
    raw: *mut c_void,
}

// SAFETY: a libzmq socket may migrate between threads provided a full memory barrier
// separates the uses; moving a value to another thread (spawn, channel) provides one.
// ZmqSocket is not Sync, so it is never used from two threads at once.
unsafe impl Send for ZmqSocket {}

impl fmt::Debug for ZmqSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ZmqSocket({:p})", self.raw)
    }
}

impl ZmqSocket {
    fn lib(&self) -> &'static LibZmq {
        self.ctx.lib
    }

    fn check(&self, rc: c_int) -> Result<c_int, Errno> {
        if rc < 0 {
            Err(self.lib().errno())
        } else {
            Ok(rc)
        }
    }

    /// `zmq_setsockopt` with raw bytes.
    pub fn setsockopt(&self, opt: i32, val: &[u8]) -> Result<(), Errno> {
        // SAFETY: raw is a live socket; val points to val.len() readable bytes.
        let rc = unsafe { (self.lib().setsockopt)(self.raw, opt, val.as_ptr().cast(), val.len()) };
        self.check(rc).map(drop)
    }

    /// `zmq_setsockopt` for an `int` option.
    pub fn set_int(&self, opt: i32, v: i32) -> Result<(), Errno> {
        self.setsockopt(opt, &v.to_ne_bytes())
    }

    /// `zmq_getsockopt` into a buffer of `cap` bytes; returns the bytes libzmq wrote.
    pub fn getsockopt(&self, opt: i32, cap: usize) -> Result<Vec<u8>, Errno> {
        let mut buf = vec![0u8; cap];
        let mut len = cap;
        // SAFETY: buf has `len` writable bytes and libzmq updates len to the size used.
        let rc =
            unsafe { (self.lib().getsockopt)(self.raw, opt, buf.as_mut_ptr().cast(), &mut len) };
        self.check(rc)?;
        buf.truncate(len);
        Ok(buf)
    }

    /// `ZMQ_LAST_ENDPOINT` as a string (without its terminating NUL).
    pub fn last_endpoint(&self) -> Result<String, Errno> {
        let mut v = self.getsockopt(zmq::LAST_ENDPOINT, 1024)?;
        if let Some(nul) = v.iter().position(|&b| b == 0) {
            v.truncate(nul);
        }
        Ok(String::from_utf8_lossy(&v).into_owned())
    }

    fn endpoint_call(&self, f: EndpointFn, ep: &str) -> Result<(), Errno> {
        let c = CString::new(ep).map_err(|_| Errno(libc::EINVAL))?;
        // SAFETY: raw is a live socket and c a valid C string.
        let rc = unsafe { f(self.raw, c.as_ptr()) };
        self.check(rc).map(drop)
    }

    /// `zmq_bind`.
    pub fn bind(&self, ep: &str) -> Result<(), Errno> {
        self.endpoint_call(self.lib().bind, ep)
    }

    /// `zmq_connect`.
    pub fn connect(&self, ep: &str) -> Result<(), Errno> {
        self.endpoint_call(self.lib().connect, ep)
    }

    /// `zmq_unbind`.
    pub fn unbind(&self, ep: &str) -> Result<(), Errno> {
        self.endpoint_call(self.lib().unbind, ep)
    }

    /// `zmq_disconnect`.
    pub fn disconnect(&self, ep: &str) -> Result<(), Errno> {
        self.endpoint_call(self.lib().disconnect, ep)
    }

    /// `zmq_socket_monitor`: publish `events` on the inproc endpoint `ep`.
    pub fn monitor(&self, ep: &str, events: i32) -> Result<(), Errno> {
        let c = CString::new(ep).expect("endpoint has no NUL");
        // SAFETY: the socket is live; c is a valid NUL-terminated string.
        let rc = unsafe { (self.lib().socket_monitor)(self.raw, c.as_ptr(), events) };
        if rc == 0 {
            Ok(())
        } else {
            Err(self.lib().errno())
        }
    }

    /// `zmq_send` of one frame.
    pub fn send(&self, data: &[u8], flags: i32) -> Result<(), Errno> {
        // SAFETY: raw is a live socket; data points to data.len() readable bytes which
        // libzmq copies before returning.
        let rc = unsafe { (self.lib().send)(self.raw, data.as_ptr().cast(), data.len(), flags) };
        let n = self.check(rc)?;
        assert_eq!(n as usize, data.len(), "zmq_send reported a short send");
        Ok(())
    }

    /// One frame through `zmq_msg_recv`: (body, more).
    pub fn recv(&self, flags: i32) -> Result<(Vec<u8>, bool), Errno> {
        self.recv_props(flags, &[]).map(|(b, m, _)| (b, m))
    }

    /// One frame and the values `zmq_msg_gets` gives for `props` (None if absent).
    pub fn recv_props(&self, flags: i32, props: &[&str]) -> Result<Frame, Errno> {
        let lib = self.lib();
        let mut msg = RawMsg([0; 64]);
        // SAFETY: msg is a writable, 8-aligned 64-byte zmq_msg_t.
        let rc = unsafe { (lib.msg_init)(&mut msg) };
        self.check(rc)?;
        // SAFETY: msg was initialised above; raw is a live socket.
        let rc = unsafe { (lib.msg_recv)(&mut msg, self.raw, flags) };
        let result = if rc < 0 {
            Err(lib.errno())
        } else {
            // SAFETY: msg holds a received message; zmq_msg_data points to
            // zmq_msg_size readable bytes valid until zmq_msg_close.
            let (body, more) = unsafe {
                let size = (lib.msg_size)(&msg);
                let data = (lib.msg_data)(&mut msg) as *const u8;
                let body = if size == 0 {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(data, size).to_vec()
                };
                (body, (lib.msg_more)(&msg) != 0)
            };
            let values = props
                .iter()
                .map(|name| {
                    let cname = CString::new(*name).expect("property names have no NUL");
                    // SAFETY: msg is a received message and cname a C string;
                    // zmq_msg_gets returns NULL or a C string owned by the message's
                    // metadata, copied out before the message is closed.
                    unsafe {
                        let v = (lib.msg_gets)(&msg, cname.as_ptr());
                        (!v.is_null()).then(|| CStr::from_ptr(v).to_string_lossy().into_owned())
                    }
                })
                .collect();
            Ok((body, more, values))
        };
        // SAFETY: msg was initialised and is closed exactly once.
        unsafe { (lib.msg_close)(&mut msg) };
        result
    }

    /// `zmq_close` now.
    pub fn close(self) {}
}

impl Drop for ZmqSocket {
    fn drop(&mut self) {
        // SAFETY: raw is a live socket, closed exactly once here.
        unsafe { (self.lib().close)(self.raw) };
    }
}

/// Which implementation a socket comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lib {
    /// ferromq's native API.
    Ferro,
    /// The dlopen'ed libzmq.
    Zmq,
}

impl Lib {
    /// The other implementation.
    pub fn other(self) -> Lib {
        match self {
            Lib::Ferro => Lib::Zmq,
            Lib::Zmq => Lib::Ferro,
        }
    }
}

/// A received frame: (body, more, requested metadata property values).
pub type Frame = (Vec<u8>, bool, Vec<Option<String>>);

/// A socket of either library, with errors as errno values.
pub trait AnySocket: Send {
    /// Which library implements it.
    fn lib(&self) -> Lib;
    /// setsockopt with raw bytes.
    fn set_bytes(&self, opt: i32, val: &[u8]) -> Result<(), Errno>;
    /// bind.
    fn bind(&self, ep: &str) -> Result<(), Errno>;
    /// connect.
    fn connect(&self, ep: &str) -> Result<(), Errno>;
    /// ZMQ_LAST_ENDPOINT.
    fn last_endpoint(&self) -> Result<String, Errno>;
    /// Sends one frame.
    fn send(&self, data: &[u8], flags: i32) -> Result<(), Errno>;
    /// Receives one frame: (body, more).
    fn recv(&self, flags: i32) -> Result<(Vec<u8>, bool), Errno>;
    /// Receives one frame with the values of the named connection metadata properties
    /// (`zmq_msg_gets`), `None` for absent ones.
    fn recv_props(&self, flags: i32, props: &[&str]) -> Result<Frame, Errno>;

    /// Starts a socket monitor publishing `events` on the inproc endpoint `ep`.
    fn monitor(&self, ep: &str, events: i32) -> Result<(), Errno>;

    /// setsockopt for an `int` option.
    fn set_int(&self, opt: i32, v: i32) -> Result<(), Errno> {
        self.set_bytes(opt, &v.to_ne_bytes())
    }

    /// Sends every part, SNDMORE on all but the last.
    fn send_parts(&self, parts: &[Vec<u8>]) -> Result<(), Errno> {
        for (i, p) in parts.iter().enumerate() {
            let flags = if i + 1 < parts.len() { zmq::SNDMORE } else { 0 };
            self.send(p, flags)?;
        }
        Ok(())
    }

    /// Receives every part of one message.
    fn recv_parts(&self, flags: i32) -> Result<Vec<Vec<u8>>, Errno> {
        let (first, mut more) = self.recv(flags)?;
        let mut parts = vec![first];
        while more {
            let (p, m) = self.recv(flags & !zmq::DONTWAIT)?;
            parts.push(p);
            more = m;
        }
        Ok(parts)
    }
}

impl AnySocket for ferromq::Socket {
    fn lib(&self) -> Lib {
        Lib::Ferro
    }
    fn set_bytes(&self, opt: i32, val: &[u8]) -> Result<(), Errno> {
        Ok(self.set_option(opt, val)?)
    }
    fn bind(&self, ep: &str) -> Result<(), Errno> {
        Ok(ferromq::Socket::bind(self, ep)?)
    }
    fn connect(&self, ep: &str) -> Result<(), Errno> {
        Ok(ferromq::Socket::connect(self, ep)?)
    }
    fn monitor(&self, ep: &str, events: i32) -> Result<(), Errno> {
        Ok(ferromq::Socket::monitor(self, Some(ep), events as u32)?)
    }
    fn last_endpoint(&self) -> Result<String, Errno> {
        Ok(ferromq::Socket::last_endpoint(self)?)
    }
    fn send(&self, data: &[u8], flags: i32) -> Result<(), Errno> {
        Ok(ferromq::Socket::send(self, data, flags)?)
    }
    fn recv(&self, flags: i32) -> Result<(Vec<u8>, bool), Errno> {
        let m = ferromq::Socket::recv(self, flags)?;
        Ok((m.data().to_vec(), m.more()))
    }
    fn recv_props(&self, flags: i32, props: &[&str]) -> Result<Frame, Errno> {
        let m = ferromq::Socket::recv(self, flags)?;
        let values = props
            .iter()
            .map(|p| m.metadata().and_then(|md| md.get(p)).map(str::to_string))
            .collect();
        Ok((m.data().to_vec(), m.more(), values))
    }
    // ferromq's own multipart calls, so they are exercised too.
    fn send_parts(&self, parts: &[Vec<u8>]) -> Result<(), Errno> {
        Ok(self.send_multipart(parts.iter().map(|p| p.as_slice()), 0)?)
    }
    fn recv_parts(&self, flags: i32) -> Result<Vec<Vec<u8>>, Errno> {
        let parts = self.recv_multipart(flags)?;
        Ok(parts.iter().map(|m| m.data().to_vec()).collect())
    }
}

impl AnySocket for ZmqSocket {
    fn lib(&self) -> Lib {
        Lib::Zmq
    }
    fn set_bytes(&self, opt: i32, val: &[u8]) -> Result<(), Errno> {
        self.setsockopt(opt, val)
    }
    fn bind(&self, ep: &str) -> Result<(), Errno> {
        ZmqSocket::bind(self, ep)
    }
    fn connect(&self, ep: &str) -> Result<(), Errno> {
        ZmqSocket::connect(self, ep)
    }
    fn monitor(&self, ep: &str, events: i32) -> Result<(), Errno> {
        ZmqSocket::monitor(self, ep, events)
    }
    fn last_endpoint(&self) -> Result<String, Errno> {
        ZmqSocket::last_endpoint(self)
    }
    fn send(&self, data: &[u8], flags: i32) -> Result<(), Errno> {
        ZmqSocket::send(self, data, flags)
    }
    fn recv(&self, flags: i32) -> Result<(Vec<u8>, bool), Errno> {
        ZmqSocket::recv(self, flags)
    }
    fn recv_props(&self, flags: i32, props: &[&str]) -> Result<Frame, Errno> {
        ZmqSocket::recv_props(self, flags, props)
    }
}

/// A socket of either library, boxed.
pub type Sock = Box<dyn AnySocket>;

/// Applies the settings every test socket gets: RCVTIMEO and SNDTIMEO of
/// [`RECV_TIMEOUT_MS`] (a broken peer fails the test instead of hanging it) and LINGER 0.
pub fn configure(s: &dyn AnySocket) {
    s.set_int(zmq::RCVTIMEO, RECV_TIMEOUT_MS)
        .expect("set RCVTIMEO");
    s.set_int(zmq::SNDTIMEO, RECV_TIMEOUT_MS)
        .expect("set SNDTIMEO");
    s.set_int(zmq::LINGER, 0).expect("set LINGER");
}

static UNIQUE: AtomicU64 = AtomicU64::new(0);

/// A private directory for ipc socket files, removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates a fresh directory under the system temp dir.
    pub fn new() -> TempDir {
        let n = UNIQUE.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("fmq-interop-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir { path }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// An `ipc://` endpoint for a file named `name` in this directory.
    pub fn ipc(&self, name: &str) -> String {
        format!("ipc://{}", self.path.join(name).display())
    }
}

impl Default for TempDir {
    fn default() -> Self {
        TempDir::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The transports the tests run over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `tcp://127.0.0.1:*`
    Tcp,
    /// `ipc://` in the harness's temp dir.
    Ipc,
}

/// One context of each library and a temp dir. Sockets created through it are
/// [`configure`]d.
pub struct Harness {
    /// ferromq's context.
    pub ferro: ferromq::Context,
    /// libzmq's context.
    pub zmq: ZmqContext,
    /// Directory for ipc endpoints.
    pub dir: TempDir,
    next_ipc: AtomicU64,
}

impl Harness {
    /// Loads libzmq (failing the test if it cannot) and creates both contexts.
    pub fn new() -> Harness {
        Harness {
            ferro: ferromq::Context::new(),
            zmq: LibZmq::get().ctx_new(),
            dir: TempDir::new(),
            next_ipc: AtomicU64::new(0),
        }
    }

    /// A configured socket of `kind` from `lib`.
    pub fn socket(&self, lib: Lib, kind: SocketType) -> Sock {
        let s: Sock = match lib {
            Lib::Ferro => Box::new(
                self.ferro
                    .socket(kind)
                    .unwrap_or_else(|e| panic!("ferromq socket({kind:?}): {e:?}")),
            ),
            Lib::Zmq => Box::new(
                self.zmq
                    .socket(kind)
                    .unwrap_or_else(|e| panic!("libzmq socket({kind:?}): {e:?}")),
            ),
        };
        configure(s.as_ref());
        s
    }

    /// An endpoint to bind on: `tcp://127.0.0.1:*` or a fresh ipc path.
    pub fn bind_endpoint(&self, t: Transport) -> String {
        match t {
            Transport::Tcp => "tcp://127.0.0.1:*".to_string(),
            Transport::Ipc => {
                let n = self.next_ipc.fetch_add(1, Ordering::Relaxed);
                self.dir.ipc(&format!("s{n}"))
            }
        }
    }

    /// A configured [`Peer`] of `kind` from `lib`.
    pub fn peer(&self, lib: Lib, kind: SocketType) -> Peer {
        Peer {
            s: self.socket(lib, kind),
            kind,
        }
    }

    /// Binds `s` on a fresh endpoint of `t` and returns the endpoint to connect to.
    pub fn bind(&self, s: &dyn AnySocket, t: Transport) -> String {
        let ep = self.bind_endpoint(t);
        s.bind(&ep)
            .unwrap_or_else(|e| panic!("{:?} bind {ep}: {e:?}", s.lib()));
        let last = s
            .last_endpoint()
            .unwrap_or_else(|e| panic!("{:?} LAST_ENDPOINT: {e:?}", s.lib()));
        match t {
            Transport::Tcp => assert!(
                last.starts_with("tcp://127.0.0.1:") && !last.ends_with(":*"),
                "{:?}: LAST_ENDPOINT after binding {ep} is {last:?}",
                s.lib()
            ),
            Transport::Ipc => assert_eq!(last, ep, "{:?}: LAST_ENDPOINT", s.lib()),
        }
        last
    }
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Drop for Harness {
    /// Terminates the ferromq context, which must finish promptly: every socket made
    /// through the harness has LINGER 0 and is gone by now (sockets are declared after
    /// the harness, so they are dropped first).
    fn drop(&mut self) {
        let ctx = self.ferro.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = ctx.term();
            let _ = tx.send(r);
        });
        let outcome = rx.recv_timeout(Duration::from_secs(5));
        if std::thread::panicking() {
            return;
        }
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("ferromq Context::term failed: {e:?}"),
            Err(_) => panic!("ferromq Context::term did not return within 5 s"),
        }
    }
}

/// Part sizes of the standard test message: empty, tiny, around ferromq's inline limit
/// (`ferromq::INLINE_CAP`), around the one-byte/eight-byte ZMTP length boundary, around
/// the engine's 1 KiB zero-copy threshold, 64 KiB and 1 MiB.
pub const PART_SIZES: [usize; 11] = [
    0,
    1,
    ferromq::INLINE_CAP - 1,
    ferromq::INLINE_CAP,
    ferromq::INLINE_CAP + 1,
    255,
    256,
    1023,
    1024,
    64 * 1024,
    1024 * 1024,
];

/// A deterministic byte pattern of `len` bytes, different for every `seed`.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..len)
        .map(|_| {
            // xorshift64*: cheap, deterministic, covers every byte value.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// The standard multipart test message for `seed`: one part per [`PART_SIZES`] entry.
pub fn message(seed: u64) -> Vec<Vec<u8>> {
    PART_SIZES
        .iter()
        .enumerate()
        .map(|(i, &n)| pattern(n, seed * 100 + i as u64))
        .collect()
}

/// Asserts that `got` equals `want` part for part, byte for byte, describing the first
/// difference (never dumping megabytes).
pub fn assert_parts(got: &[Vec<u8>], want: &[Vec<u8>], what: &str) {
    let sizes = |v: &[Vec<u8>]| v.iter().map(Vec::len).collect::<Vec<_>>();
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: got {} parts (sizes {:?}), want {} (sizes {:?})",
        got.len(),
        sizes(got),
        want.len(),
        sizes(want)
    );
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.len(),
            w.len(),
            "{what}: part {i} has {} bytes, want {}",
            g.len(),
            w.len()
        );
        if let Some(j) = g.iter().zip(w).position(|(a, b)| a != b) {
            panic!(
                "{what}: part {i} ({} bytes) differs first at byte {j}: got {:#04x}, want {:#04x}",
                w.len(),
                g[j],
                w[j]
            );
        }
    }
}

/// Shows bytes as a readable string for assertion messages.
pub fn show(b: &[u8]) -> String {
    b.escape_ascii().to_string()
}

/// Published repeatedly by [`Peer::await_subscription`] until a subscriber sees it.
pub const WARMUP: &[u8] = b"interop-warmup";

/// A socket with its type, for readable assertion messages ("ferromq PUSH").
pub struct Peer {
    /// The socket.
    pub s: Sock,
    /// Its type.
    pub kind: SocketType,
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lib = match self.s.lib() {
            Lib::Ferro => "ferromq",
            Lib::Zmq => "libzmq",
        };
        let kind = format!("{:?}", self.kind).to_uppercase();
        write!(f, "{lib} {kind}")
    }
}

impl Peer {
    /// Wraps an existing socket.
    pub fn new(s: Sock, kind: SocketType) -> Peer {
        Peer { s, kind }
    }

    /// Sends a multipart message, failing the test on error.
    pub fn send(&self, parts: &[Vec<u8>]) {
        self.s
            .send_parts(parts)
            .unwrap_or_else(|e| panic!("{self}: send of {} parts failed: {e:?}", parts.len()));
    }

    /// Sends a message given as byte strings.
    pub fn send_strs(&self, parts: &[&[u8]]) {
        let v: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
        self.send(&v);
    }

    /// Receives one message (blocking up to RCVTIMEO), failing the test on error.
    pub fn recv(&self) -> Vec<Vec<u8>> {
        self.s
            .recv_parts(0)
            .unwrap_or_else(|e| panic!("{self}: recv failed: {e:?}"))
    }

    /// Receives one message without blocking: `None` on EAGAIN.
    pub fn try_recv(&self) -> Option<Vec<Vec<u8>>> {
        match self.s.recv_parts(zmq::DONTWAIT) {
            Ok(m) => Some(m),
            Err(e) if e.0 == libc::EAGAIN => None,
            Err(e) => panic!("{self}: recv failed: {e:?}"),
        }
    }

    /// Receives the next message that is not a single-frame [`WARMUP`] (or other
    /// single-frame message in `skip`).
    pub fn recv_skipping(&self, skip: &[&[u8]]) -> Vec<Vec<u8>> {
        loop {
            let m = self.recv();
            let skipped = m.len() == 1 && (m[0] == WARMUP || skip.iter().any(|s| m[0] == *s));
            if !skipped {
                return m;
            }
        }
    }

    /// Receives one message and checks it part for part against `want`.
    pub fn expect(&self, want: &[Vec<u8>], from: &Peer) {
        let got = self.recv();
        assert_parts(&got, want, &format!("{from} -> {self}"));
    }

    /// Publishes `probe` (a single frame) every 10 ms until `sub` receives it, at most
    /// 5 s: proves the subscription covering `probe` reached this publisher. `sub` may
    /// receive further copies later; skip them with [`Peer::recv_skipping`].
    pub fn await_subscription_with(&self, sub: &Peer, probe: &[u8]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.s.send(probe, zmq::DONTWAIT) {
                Ok(()) => {}
                Err(e) if e.0 == libc::EAGAIN => {}
                Err(e) => panic!("{self}: probe send: {e:?}"),
            }
            std::thread::sleep(Duration::from_millis(10));
            while let Some(m) = sub.try_recv() {
                if m.len() == 1 && m[0] == probe {
                    return;
                }
                assert!(
                    m.len() == 1 && m[0] == WARMUP,
                    "{sub}: unexpected message while waiting for {}: {:?}",
                    show(probe),
                    m.iter().map(|p| show(p)).collect::<Vec<_>>()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{sub} never received {} from {self}: subscription not propagated in 5 s",
                show(probe)
            );
        }
    }

    /// [`Peer::await_subscription_with`] the standard [`WARMUP`] probe.
    pub fn await_subscription(&self, sub: &Peer) {
        self.await_subscription_with(sub, WARMUP);
    }

    /// On an XPUB: waits (at most 5 s) for the next message, which must be `want`
    /// (a subscription "\x01topic" or cancel "\x00topic") caused by `sub`. `sub` is
    /// polled meanwhile: a libzmq socket only attaches a new connection (and so only
    /// sends its subscriptions on it) while its owner calls into it, which matters when
    /// the subscriber is the bound side (libzmq issue #2267).
    pub fn expect_subscription(&self, sub: &Peer, want: &[u8]) {
        let got = self.next_subscription(sub);
        assert_eq!(
            show(&got),
            show(want),
            "{self}: subscription message caused by {sub}"
        );
    }

    /// On an XPUB: the next single-frame message (at most 5 s), polling `sub` meanwhile
    /// (see [`Peer::expect_subscription`]).
    pub fn next_subscription(&self, sub: &Peer) -> Vec<u8> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(m) = self.try_recv() {
                assert_eq!(
                    m.len(),
                    1,
                    "{self}: subscription message has {} parts",
                    m.len()
                );
                return m.into_iter().next().unwrap_or_default();
            }
            if let Some(m) = sub.try_recv() {
                panic!("{sub}: unexpected message {} parts", m.len());
            }
            assert!(
                Instant::now() < deadline,
                "{self}: no subscription message from {sub} in 5 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// On a ROUTER: sends `body` to the peer `to_id`, retrying while ROUTER_MANDATORY
    /// reports the peer as not (yet) connected (at most 5 s).
    pub fn send_routed(&self, to_id: &[u8], body: &[Vec<u8>]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.s.send(to_id, zmq::SNDMORE) {
                Ok(()) => break,
                Err(e) if e.0 == libc::EHOSTUNREACH && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => panic!("{self}: send to routing id {}: {e:?}", show(to_id)),
            }
        }
        self.send(body);
    }
}

/// Prepends envelope frames to a message.
pub fn with_envelope(envelope: &[&[u8]], body: &[Vec<u8>]) -> Vec<Vec<u8>> {
    envelope
        .iter()
        .map(|f| f.to_vec())
        .chain(body.iter().cloned())
        .collect()
}

/// Converts byte strings to owned parts.
pub fn parts(p: &[&[u8]]) -> Vec<Vec<u8>> {
    p.iter().map(|x| x.to_vec()).collect()
}

static NEXT_MONITOR: AtomicU64 = AtomicU64::new(0);

/// A PAIR socket of `lib` (the library of `s`) reading all of `s`'s monitor events.
pub fn monitor(h: &Harness, lib: Lib, s: &dyn AnySocket) -> Sock {
    let ep = format!(
        "inproc://interop-monitor-{}",
        NEXT_MONITOR.fetch_add(1, Ordering::Relaxed)
    );
    s.monitor(&ep, 0xFFFF).expect("monitor");
    let m = h.socket(lib, SocketType::Pair);
    m.connect(&ep).expect("connect monitor");
    m
}

/// Waits (up to 5 s) for event `want` on monitor `m` and returns its value; panics,
/// listing what came instead, if it does not come.
pub fn wait_event(m: &Sock, want: u16) -> Option<u32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut seen = Vec::new();
    while std::time::Instant::now() < deadline {
        let Ok(frames) = m.recv_parts(0) else { break };
        let head = &frames[0];
        let event = u16::from_le_bytes([head[0], head[1]]);
        let value = u32::from_le_bytes([head[2], head[3], head[4], head[5]]);
        if event == want {
            return Some(value);
        }
        seen.push(format!("{event:#06x}={value:#x}"));
    }
    panic!("event {want:#06x} never came; saw {seen:?}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_deterministic_and_seed_dependent() {
        assert_eq!(pattern(1000, 7), pattern(1000, 7));
        assert_ne!(pattern(1000, 7), pattern(1000, 8));
        let p = pattern(64 * 1024, 3);
        let mut seen = [false; 256];
        p.iter().for_each(|&b| seen[b as usize] = true);
        assert!(seen.iter().all(|&s| s), "pattern misses byte values");
    }

    #[test]
    fn message_has_the_boundary_sizes() {
        let m = message(1);
        let sizes: Vec<usize> = m.iter().map(Vec::len).collect();
        assert_eq!(sizes, PART_SIZES);
    }

    #[test]
    #[should_panic(expected = "differs first at byte 70000")]
    fn assert_parts_finds_a_single_flipped_byte() {
        let want = message(2);
        let mut got = want.clone();
        let big = PART_SIZES.iter().position(|&n| n == 1024 * 1024).unwrap();
        got[big][70_000] ^= 1;
        assert_parts(&got, &want, "flip");
    }

    #[test]
    #[should_panic(expected = "got 10 parts")]
    fn assert_parts_finds_a_missing_part() {
        let want = message(2);
        assert_parts(&want[1..], &want, "missing");
    }

    #[test]
    fn errno_debug_names_the_error() {
        let s = format!("{:?}", Errno(libc::EHOSTUNREACH));
        assert!(s.starts_with("EHOSTUNREACH"), "{s}");
        assert_eq!(
            Errno::from(ferromq::Error::HostUnreachable),
            Errno(libc::EHOSTUNREACH)
        );
    }
}
