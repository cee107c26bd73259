//! ipc: Unix domain socket paths.

use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A fresh path for `ipc://*` (libzmq picks a unique name in the temp directory).
pub(crate) fn wildcard_path() -> String {
    let dir = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".to_string());
    format!(
        "{}/ferromq-{}-{}",
        dir.trim_end_matches('/'),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Binds `@name` in Linux's abstract socket namespace.
pub(crate) fn bind_abstract(name: &str) -> std::io::Result<mio::net::UnixListener> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let l = std::os::unix::net::UnixListener::bind_addr(&addr)?;
    l.set_nonblocking(true)?;
    Ok(mio::net::UnixListener::from_std(l))
}

/// Connects to `@name` in Linux's abstract socket namespace (completes at once: local).
pub(crate) fn connect_abstract(name: &str) -> std::io::Result<mio::net::UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let s = std::os::unix::net::UnixStream::connect_addr(&addr)?;
    s.set_nonblocking(true)?;
    Ok(mio::net::UnixStream::from_std(s))
}

/// The endpoint string for a path.
pub(crate) fn endpoint_string(path: &str) -> String {
    format!("ipc://{path}")
}

/// Send buffer an ipc connection asks for once it sends a message of `IPC_LARGE` bytes
/// or more (the kernel doubles it, and caps it at twice `net.core.wmem_max`). A Unix
/// stream socket's in-flight bytes count against the sender's buffer, ~208 KiB by
/// default: a 256 KiB message never fit, so each one was a short write, a wait for the
/// reader to drain, and the rest; REQ/REP 256 KiB over ipc took 129.6 µs one-way, 64.8 µs
/// with this (libzmq 76.8 µs). Only once large messages come: raised at connect, 64 B
/// streams looked 6-20 % slower (in an A/B whose builds differed, not re-measured).
/// libzmq applies `ZMQ_SNDBUF` to tcp only, and so does ferromq; this is ipc's own.
const IPC_SNDBUF: i32 = 256 * 1024;

/// Messages from this size on raise an ipc connection's send buffer (`IPC_SNDBUF`).
pub(crate) const IPC_LARGE: usize = 128 * 1024;

/// The send buffer the kernel holds for `fd` (twice what was asked), or 0.
fn send_buffer(fd: i32) -> i32 {
    let mut val: i32 = 0;
    let mut len = 4 as libc::socklen_t;
    // SAFETY: a valid socket descriptor; 4 writable bytes for the value and its length.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            &mut val as *mut i32 as *mut libc::c_void,
            &mut len,
        )
    };
    if rc == 0 {
        val
    } else {
        0
    }
}

/// Raises a connected ipc socket's send buffer (see `IPC_SNDBUF`); never lowers it (a
/// host whose default is larger keeps its own).
pub(crate) fn raise_send_buffer(stream: &impl std::os::fd::AsRawFd) {
    let fd = stream.as_raw_fd();
    if send_buffer(fd) >= 2 * IPC_SNDBUF {
        return;
    }
    super::set_int_option(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, IPC_SNDBUF);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_raised_send_buffer_holds_a_large_message_in_flight() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let before = send_buffer(a.as_raw_fd());
        raise_send_buffer(&a);
        let after = send_buffer(a.as_raw_fd());
        assert!(after >= before, "never lowered: {before} -> {after}");
        let wmem_max: i32 = std::fs::read_to_string("/proc/sys/net/core/wmem_max")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if wmem_max >= IPC_SNDBUF {
            assert!(after >= 2 * IPC_SNDBUF, "{before} -> {after}");
            assert!(
                after as usize > 2 * IPC_LARGE,
                "two large messages fit in flight"
            );
        }
    }
}
