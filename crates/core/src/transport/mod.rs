//! Endpoint strings (`tcp://`, `ipc://`, `inproc://`) and the transports behind them.

pub(crate) mod inproc;
pub(crate) mod ipc;
pub(crate) mod socks;
pub(crate) mod tcp;

use crate::error::{Error, Result};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// A C call's return value as an `io::Result` (errno on a negative value).
pub(crate) fn cvt(rc: i32) -> std::io::Result<()> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A new non-blocking, close-on-exec stream socket of `family` (AF_INET, AF_INET6,
/// AF_UNIX), for the transports that set it up by hand before connecting or binding.
pub(crate) fn stream_socket(family: i32) -> std::io::Result<OwnedFd> {
    let flags = libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
    // SAFETY: plain syscall; the descriptor it returns is owned below.
    let raw = unsafe { libc::socket(family, flags, 0) };
    cvt(raw)?;
    // SAFETY: `raw` was just created and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// The listening socket a ZMQ_USE_FD option names, taken over for a bind of `family`
/// (AF_INET or AF_INET6 for tcp, AF_UNIX for ipc): from here on it is the listener's, and
/// closed with it, as libzmq does. The caller made, bound and listened on it; it is not
/// bound or listened on again. Checked before it is taken: not a socket is ENOTSOCK, a
/// socket of another kind (datagram, another family) is EINVAL, and the caller keeps it.
pub(crate) fn adopt_listener(fd: RawFd, families: &[i32]) -> Result<OwnedFd> {
    let int_option = |name: i32| -> std::io::Result<i32> {
        let mut val: i32 = 0;
        let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into the int on the stack; an fd
        // that is not open or not a socket makes it fail, touching nothing.
        cvt(unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                name,
                &mut val as *mut i32 as *mut libc::c_void,
                &mut len,
            )
        })?;
        Ok(val)
    };
    let domain = int_option(libc::SO_DOMAIN)?;
    if int_option(libc::SO_TYPE)? != libc::SOCK_STREAM || !families.contains(&domain) {
        return Err(Error::InvalidArgument);
    }
    // SAFETY: `fd` is an open stream socket (checked above) that ZMQ_USE_FD hands over to
    // the library; the caller gives up its own use of it by setting the option.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain fcntl calls on the descriptor just taken.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags >= 0 {
        // SAFETY: as above.
        unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
    }
    Ok(owned)
}

/// Splits `host:port` at the last colon, without the brackets of an IPv6 host
/// (`[::1]:5555`); None without a colon.
pub(crate) fn split_host_port(addr: &str) -> Option<(&str, &str)> {
    let (host, port) = addr.rsplit_once(':')?;
    Some((host.trim_start_matches('[').trim_end_matches(']'), port))
}

/// Sets an int-valued socket option on `fd` (a valid socket); failures are ignored, as
/// libzmq ignores them for its tuning options.
pub(crate) fn set_int_option(fd: RawFd, level: i32, name: i32, val: i32) {
    // SAFETY: `fd` is a valid socket; the option value is a 4-byte int on the stack.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &val as *const i32 as *const libc::c_void,
            4,
        )
    };
}

/// A parsed endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// `tcp://host:port` (host may be `*`, port may be `*` or 0 when binding; neither
    /// is checked here, see `parse`); a
    /// connect may name a local `source` address first (`tcp://src:port;host:port`),
    /// which a bind only checks.
    Tcp {
        host: String,
        port: String,
        source: Option<String>,
    },
    /// `ipc://path` (`*` when binding picks a fresh path).
    Ipc(String),
    /// `inproc://name`.
    Inproc(String),
}

/// libzmq's first checks of every endpoint string (bind, connect, unbind, disconnect),
/// in its order: `scheme://address` with neither part empty (EINVAL), and not `udp`
/// (ENOCOMPATPROTO: libzmq knows it whatever it was built with, for RADIO, DISH and
/// DGRAM only, socket types ferromq does not have). Returns the scheme and the address.
pub(crate) fn split_endpoint(s: &str) -> Result<(&str, &str)> {
    match s.split_once("://") {
        Some(("udp", addr)) if !addr.is_empty() => Err(Error::IncompatibleProtocol),
        Some((scheme, addr)) if !scheme.is_empty() && !addr.is_empty() => Ok((scheme, addr)),
        _ => Err(Error::InvalidArgument),
    }
}

impl Endpoint {
    /// Parses `scheme://address` as libzmq does: first `split_endpoint`'s checks, then
    /// schemes other than ours EPROTONOSUPPORT, a malformed address of ours EINVAL.
    pub(crate) fn parse(s: &str) -> Result<Endpoint> {
        let (scheme, addr) = split_endpoint(s)?;
        match scheme {
            "tcp" => {
                // A "source;destination" connect address: the source is the local address
                // the connecting socket binds first.
                let (source, dest) = match addr.rsplit_once(';') {
                    Some((s, d)) => (Some(s.to_string()), d),
                    None => (None, addr),
                };
                // Host and port are left to the caller: a bind takes `*` or a number for
                // the port (EINVAL otherwise) and looks for an interface named as an empty
                // host (ENODEV, as libzmq); a connect applies libzmq's syntax check and
                // then retries whatever does not resolve, as libzmq does.
                let (host, port) = split_host_port(dest).ok_or(Error::InvalidArgument)?;
                Ok(Endpoint::Tcp {
                    host: host.to_string(),
                    port: port.to_string(),
                    source,
                })
            }
            "ipc" => {
                // "@" alone names no abstract socket (libzmq: EINVAL; the kernel would
                // pick a name).
                if addr.is_empty() || addr == "@" {
                    return Err(Error::InvalidArgument);
                }
                if addr.len() > 107 {
                    // sun_path holds 107 bytes plus NUL; libzmq reports ENAMETOOLONG.
                    return Err(Error::Os(libc::ENAMETOOLONG));
                }
                Ok(Endpoint::Ipc(addr.to_string()))
            }
            "inproc" => {
                if addr.is_empty() || addr.len() > 255 {
                    return Err(Error::InvalidArgument);
                }
                Ok(Endpoint::Inproc(addr.to_string()))
            }
            _ => Err(Error::ProtocolNotSupported),
        }
    }
}

/// Fuzzing entry point: parses an endpoint as `bind`/`connect` do, without any I/O.
/// Returns (scheme, host or path or name, port).
#[doc(hidden)]
pub fn fuzz_parse_endpoint(s: &str) -> Result<(&'static str, String, Option<String>)> {
    Ok(match Endpoint::parse(s)? {
        Endpoint::Tcp { host, port, .. } => ("tcp", host, Some(port)),
        Endpoint::Ipc(path) => ("ipc", path, None),
        Endpoint::Inproc(name) => ("inproc", name, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_split_at_the_last_colon() {
        assert_eq!(split_host_port("proxy:1080"), Some(("proxy", "1080")));
        assert_eq!(split_host_port("[::1]:1080"), Some(("::1", "1080")));
        assert_eq!(split_host_port("10.0.0.1:*"), Some(("10.0.0.1", "*")));
        assert_eq!(split_host_port("nocolon"), None);
    }

    #[test]
    fn parses_the_three_transports() {
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.1:5555").unwrap(),
            Endpoint::Tcp {
                host: "127.0.0.1".into(),
                port: "5555".into(),
                source: None,
            }
        );
        assert_eq!(
            Endpoint::parse("tcp://[::1]:*").unwrap(),
            Endpoint::Tcp {
                host: "::1".into(),
                port: "*".into(),
                source: None,
            }
        );
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.2:0;[::1]:5555").unwrap(),
            Endpoint::Tcp {
                host: "::1".into(),
                port: "5555".into(),
                source: Some("127.0.0.2:0".into()),
            }
        );
        assert_eq!(
            Endpoint::parse("ipc:///tmp/x").unwrap(),
            Endpoint::Ipc("/tmp/x".into())
        );
        assert_eq!(
            Endpoint::parse("inproc://a").unwrap(),
            Endpoint::Inproc("a".into())
        );
    }

    #[test]
    fn rejects_bad_endpoints_with_libzmq_errors() {
        assert_eq!(Endpoint::parse("tcp//x"), Err(Error::InvalidArgument));
        assert_eq!(Endpoint::parse("tcp://x"), Err(Error::InvalidArgument));
        // A port out of range parses (a connect takes it, as libzmq's does, and retries);
        // a bind refuses it.
        assert!(matches!(
            Endpoint::parse("tcp://x:99999"),
            Ok(Endpoint::Tcp { ref port, .. }) if port == "99999"
        ));
        let opts = crate::options::Options::default();
        assert_eq!(
            tcp::bind_addr("127.0.0.1", "99999", &opts),
            Err(Error::InvalidArgument)
        );
        assert_eq!(Endpoint::parse("inproc://"), Err(Error::InvalidArgument));
        assert_eq!(
            Endpoint::parse("pgm://eth0;239.1.1.1:5555"),
            Err(Error::ProtocolNotSupported)
        );
        assert_eq!(Endpoint::parse("foo://x"), Err(Error::ProtocolNotSupported));
        // libzmq's order: the string's shape first, then the scheme; udp is known but
        // only for socket types ferromq does not have.
        assert_eq!(Endpoint::parse("foo://"), Err(Error::InvalidArgument));
        assert_eq!(Endpoint::parse("://x"), Err(Error::InvalidArgument));
        assert_eq!(Endpoint::parse("udp://"), Err(Error::InvalidArgument));
        assert_eq!(
            Endpoint::parse("udp://127.0.0.1:5555"),
            Err(Error::IncompatibleProtocol)
        );
    }
}
