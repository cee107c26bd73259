//! Errors, grouped by what the caller can do about them, each with libzmq's errno.

use std::fmt;

/// libzmq's base for errno values the OS does not define.
pub const ZMQ_HAUSNUMERO: i32 = 156_384_712;
/// errno: operation not valid in the socket's current state.
pub const EFSM: i32 = ZMQ_HAUSNUMERO + 51;
/// errno: the protocol is not compatible with the socket type.
pub const ENOCOMPATPROTO: i32 = ZMQ_HAUSNUMERO + 52;
/// errno: the context was terminated.
pub const ETERM: i32 = ZMQ_HAUSNUMERO + 53;
/// errno: no I/O thread is available.
pub const EMTHREAD: i32 = ZMQ_HAUSNUMERO + 54;

/// Every error the core reports. `errno()` gives the value libzmq sets for the same case.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    // Retry later.
    /// Non-blocking operation could not complete now (EAGAIN).
    Again,
    /// A blocking call was interrupted by a signal (EINTR).
    Interrupted,
    // The socket or context is gone.
    /// The context was terminated (ETERM).
    Terminated,
    /// Not a valid socket, or the socket was closed (ENOTSOCK).
    NotSocket,
    // The caller's request is wrong.
    /// An argument is invalid (EINVAL).
    InvalidArgument,
    /// Operation not allowed in the socket's state, e.g. REQ sending twice (EFSM).
    State,
    /// Operation not supported by this socket type (ENOTSUP).
    NotSupported,
    /// Transport not supported (EPROTONOSUPPORT).
    ProtocolNotSupported,
    /// Transport not usable with this socket type (ENOCOMPATPROTO).
    IncompatibleProtocol,
    /// ROUTER_MANDATORY: the routing id names no connected peer (EHOSTUNREACH).
    HostUnreachable,
    /// The endpoint is not bound or connected (ENOENT).
    NoEntry,
    /// Unknown interface or host name (ENODEV).
    NoDevice,
    // The system refused.
    /// Address already in use (EADDRINUSE).
    AddressInUse,
    /// Address not available on this host (EADDRNOTAVAIL).
    AddressNotAvailable,
    /// Too many open sockets (EMFILE).
    TooManySockets,
    /// No I/O thread available (EMTHREAD).
    NoThread,
    /// Another operating-system error, by errno.
    Os(i32),
}

impl Error {
    /// The errno value libzmq uses for this error.
    pub fn errno(self) -> i32 {
        match self {
            Error::Again => libc::EAGAIN,
            Error::Interrupted => libc::EINTR,
            Error::Terminated => ETERM,
            Error::NotSocket => libc::ENOTSOCK,
            Error::InvalidArgument => libc::EINVAL,
            Error::State => EFSM,
            Error::NotSupported => libc::ENOTSUP,
            Error::ProtocolNotSupported => libc::EPROTONOSUPPORT,
            Error::IncompatibleProtocol => ENOCOMPATPROTO,
            Error::HostUnreachable => libc::EHOSTUNREACH,
            Error::NoEntry => libc::ENOENT,
            Error::NoDevice => libc::ENODEV,
            Error::AddressInUse => libc::EADDRINUSE,
            Error::AddressNotAvailable => libc::EADDRNOTAVAIL,
            Error::TooManySockets => libc::EMFILE,
            Error::NoThread => EMTHREAD,
            Error::Os(e) => e,
        }
    }

    /// Maps an I/O error from the OS to the closest libzmq error.
    pub fn from_io(e: &std::io::Error) -> Error {
        match e.raw_os_error() {
            Some(libc::EADDRINUSE) => Error::AddressInUse,
            Some(libc::EADDRNOTAVAIL) => Error::AddressNotAvailable,
            Some(libc::EMFILE) | Some(libc::ENFILE) => Error::TooManySockets,
            Some(libc::EINTR) => Error::Interrupted,
            Some(libc::EAGAIN) => Error::Again,
            Some(code) => Error::Os(code),
            None => Error::InvalidArgument,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(strerror(self.errno()))
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::from_io(&e)
    }
}

/// Result of core operations.
pub type Result<T> = std::result::Result<T, Error>;

/// The message libzmq's `zmq_strerror` gives for an errno value (libzmq's own codes get
/// its wording; the OS's codes get the OS's).
pub fn strerror(errno: i32) -> &'static str {
    match errno {
        EFSM => "Operation cannot be accomplished in current state",
        ENOCOMPATPROTO => "The protocol is not compatible with the socket type",
        ETERM => "Context was terminated",
        EMTHREAD => "No thread available",
        libc::EAGAIN => "Resource temporarily unavailable",
        libc::EINTR => "Interrupted system call",
        libc::EINVAL => "Invalid argument",
        libc::ENOTSOCK => "Socket operation on non-socket",
        libc::ENOTSUP => "Operation not supported",
        libc::EPROTONOSUPPORT => "Protocol not supported",
        libc::EHOSTUNREACH => "Host unreachable",
        libc::ENOENT => "No such file or directory",
        libc::ENODEV => "No such device",
        libc::EADDRINUSE => "Address already in use",
        libc::EADDRNOTAVAIL => "Cannot assign requested address",
        libc::EMFILE => "Too many open files",
        libc::EFAULT => "Bad address",
        libc::ENOMEM => "Cannot allocate memory",
        libc::ECONNREFUSED => "Connection refused",
        libc::EMSGSIZE => "Message too long",
        libc::ENOBUFS => "No buffer space available",
        libc::ETIMEDOUT => "Connection timed out",
        libc::ECONNRESET => "Connection reset by peer",
        libc::ENOTCONN => "Transport endpoint is not connected",
        libc::EAFNOSUPPORT => "Address family not supported by protocol",
        libc::ENETDOWN => "Network is down",
        libc::ENETUNREACH => "Network is unreachable",
        libc::EBADF => "Bad file descriptor",
        libc::ENAMETOOLONG => "File name too long",
        _ => "Unknown error",
    }
}
