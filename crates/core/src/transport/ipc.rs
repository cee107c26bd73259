//! ipc: Unix domain socket paths.

use crate::options::IpcFilters;
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

/// Connects a non-blocking Unix stream socket to `path` (`@name`: Linux's abstract
/// namespace); a local connect completes at once. A failed attempt also gives the
/// descriptor it had (closed by then), which libzmq reports in a CLOSED event before the
/// retry.
pub(crate) fn connect(path: &str) -> Result<mio::net::UnixStream, (std::io::Error, Option<i32>)> {
    use std::os::fd::AsRawFd;
    let (addr, len) = unix_address(path).map_err(|e| (e, None))?;
    let fd = super::stream_socket(libc::AF_UNIX).map_err(|e| (e, None))?;
    let raw = fd.as_raw_fd();
    // SAFETY: `raw` is an open socket; `addr` is a valid `sockaddr_un` of `len` bytes.
    let rc = unsafe {
        libc::connect(
            raw,
            &addr as *const libc::sockaddr_un as *const libc::sockaddr,
            len,
        )
    };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            drop(fd);
            return Err((e, Some(raw)));
        }
    }
    Ok(mio::net::UnixStream::from_std(
        std::os::unix::net::UnixStream::from(fd),
    ))
}

/// A `sockaddr_un` for `path` (`@name`: abstract, no NUL) and its length; ENAMETOOLONG
/// if it does not fit.
fn unix_address(path: &str) -> std::io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: all-zero is a valid `sockaddr_un` (the family is set below).
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let (name, start, nul) = match path.strip_prefix('@') {
        Some(name) => (name.as_bytes(), 1, 0),
        None => (path.as_bytes(), 0, 1),
    };
    if start + name.len() + nul > addr.sun_path.len() {
        return Err(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    for (dst, &b) in addr.sun_path[start..].iter_mut().zip(name) {
        *dst = b as libc::c_char;
    }
    let len = std::mem::offset_of!(libc::sockaddr_un, sun_path) + start + name.len() + nul;
    Ok((addr, len as libc::socklen_t))
}

/// The endpoint string for a path.
pub(crate) fn endpoint_string(path: &str) -> String {
    format!("ipc://{path}")
}

/// A Unix socket address as an ipc endpoint's path: the file's path, or `@name` for the
/// Linux abstract namespace; `None` for an unnamed socket (or a path not in UTF-8).
pub(crate) fn address_path(addr: &std::os::unix::net::SocketAddr) -> Option<String> {
    use std::os::linux::net::SocketAddrExt;
    if let Some(p) = addr.as_pathname() {
        return p.to_str().map(str::to_owned);
    }
    let name = addr.as_abstract_name()?;
    Some(format!("@{}", std::str::from_utf8(name).ok()?))
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

/// Whether a connection accepted on an ipc listener passes the listener's filters
/// (`ZMQ_IPC_FILTER_*`), as libzmq decides it: with no filter every peer passes; else one
/// match is enough: the connecting process's uid is listed, or its gid is, or its user
/// (by uid, from the user database) is a member of a listed group (group database), or
/// its pid is listed. A peer whose credentials cannot be read does not pass.
pub(crate) fn peer_allowed(stream: &impl std::os::fd::AsRawFd, filters: &IpcFilters) -> bool {
    if filters.is_empty() {
        return true;
    }
    let Some(cred) = peer_cred(stream.as_raw_fd()) else {
        return false;
    };
    filters.uids.contains(&cred.uid)
        || filters.gids.contains(&cred.gid)
        || filters.pids.contains(&cred.pid)
        || (!filters.gids.is_empty()
            && user_name(cred.uid)
                .is_some_and(|name| filters.gids.iter().any(|&g| group_has_member(g, &name))))
}

/// An ipc peer's address as libzmq 4.3.4 reports it in "Peer-Address" and in the ZAP
/// request: `localhost:UID:GID:PID` from the credentials the kernel recorded at connect
/// (`localhost` alone should they be unreadable).
pub(crate) fn peer_address(stream: &impl std::os::fd::AsRawFd) -> String {
    match peer_cred(stream.as_raw_fd()) {
        Some(c) => format!("localhost:{}:{}:{}", c.uid, c.gid, c.pid),
        None => "localhost".to_string(),
    }
}

/// The credentials the kernel recorded for a Unix socket's peer when it connected.
fn peer_cred(fd: i32) -> Option<libc::ucred> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `fd` is a socket descriptor the caller holds open; `cred` and `len` are
    // writable and `len` says how many bytes `cred` has.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some(cred)
}

/// Calls a `get*_r` lookup with a buffer that grows while it answers ERANGE; `Some` once
/// it found the entry.
fn lookup_r(mut call: impl FnMut(&mut [u8]) -> (i32, bool)) -> Option<()> {
    let mut buf = vec![0u8; 1024];
    loop {
        match call(&mut buf) {
            (0, found) => return found.then_some(()),
            (libc::ERANGE, _) if buf.len() < 1 << 20 => buf.resize(buf.len() * 4, 0),
            _ => return None,
        }
    }
}

/// The name of the user with this uid, from the user database (NSS).
fn user_name(uid: u32) -> Option<std::ffi::CString> {
    let mut name = None;
    lookup_r(|buf| {
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids) to be filled in.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `pwd`, `buf` (with its length) and `found` are valid and writable; the
        // strings `pwd` points to live in `buf`, read below before `buf` is reused.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &mut pwd,
                buf.as_mut_ptr() as *mut libc::c_char,
                buf.len(),
                &mut found,
            )
        };
        if rc == 0 && !found.is_null() && !pwd.pw_name.is_null() {
            // SAFETY: a found entry's name is a NUL-terminated string inside `buf`.
            name = Some(unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) }.to_owned());
        }
        (rc, name.is_some())
    })?;
    name
}

/// Whether the group with this gid lists `user` among its members (group database).
fn group_has_member(gid: u32, user: &std::ffi::CStr) -> bool {
    let mut member = false;
    let _ = lookup_r(|buf| {
        // SAFETY: all-zero is a valid `group` (null pointers, zero id) to be filled in.
        let mut grp: libc::group = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::group = std::ptr::null_mut();
        // SAFETY: `grp`, `buf` (with its length) and `found` are valid and writable; what
        // `grp` points to lives in `buf`, read below before `buf` is reused.
        let rc = unsafe {
            libc::getgrgid_r(
                gid,
                &mut grp,
                buf.as_mut_ptr() as *mut libc::c_char,
                buf.len(),
                &mut found,
            )
        };
        if rc == 0 && !found.is_null() && !grp.gr_mem.is_null() {
            let mut p = grp.gr_mem;
            // SAFETY: a found entry's member list is a null-terminated array of
            // NUL-terminated strings inside `buf`.
            unsafe {
                while !(*p).is_null() {
                    if std::ffi::CStr::from_ptr(*p) == user {
                        member = true;
                        break;
                    }
                    p = p.add(1);
                }
            }
        }
        (rc, !found.is_null())
    });
    member
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn unix_addresses_fit_sun_path_with_a_nul_for_paths_and_none_for_names() {
        let base = std::mem::offset_of!(libc::sockaddr_un, sun_path);
        let (a, len) = unix_address("/tmp/x").unwrap();
        assert_eq!(len as usize, base + 6 + 1);
        assert_eq!(
            a.sun_path[..7].iter().map(|&c| c as u8).collect::<Vec<_>>(),
            b"/tmp/x\0"
        );
        let (a, len) = unix_address("@ab").unwrap();
        assert_eq!(len as usize, base + 1 + 2);
        assert_eq!((a.sun_path[0], a.sun_path[1] as u8), (0, b'a'));
        assert!(unix_address(&"p".repeat(107)).is_ok());
        assert!(unix_address(&format!("@{}", "n".repeat(107))).is_ok());
        let too_long = unix_address(&"p".repeat(108)).unwrap_err();
        assert_eq!(too_long.raw_os_error(), Some(libc::ENAMETOOLONG));
        // A failed connect names the descriptor it had.
        let (e, fd) = connect("/nonexistent-dir/ferromq-socket").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        assert!(fd.is_some_and(|fd| fd >= 0));
    }

    #[test]
    fn peer_filters_read_the_peers_credentials_and_the_group_database() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        // SAFETY: plain getters without arguments.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let pid = std::process::id() as i32;
        let allowed = |f: IpcFilters| peer_allowed(&a, &f);
        let nobody = 54321;
        assert!(allowed(IpcFilters::default()));
        let only = |uids: Vec<u32>, gids: Vec<u32>, pids: Vec<i32>| IpcFilters { uids, gids, pids };
        assert!(allowed(only(vec![uid], vec![], vec![])));
        assert!(!allowed(only(vec![nobody], vec![], vec![])));
        assert!(allowed(only(vec![], vec![gid], vec![])));
        assert!(!allowed(only(vec![], vec![nobody], vec![])));
        assert!(allowed(only(vec![], vec![], vec![pid])));
        assert!(!allowed(only(vec![nobody], vec![nobody], vec![1])));
        assert!(allowed(only(vec![nobody], vec![nobody], vec![pid])));
        // The database lookups behind group membership work (the user exists, a group
        // that does not has no members).
        let me = user_name(uid).expect("this process's user is in the user database");
        assert!(!me.to_bytes().is_empty());
        assert!(!group_has_member(nobody, &me));
    }

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
