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
