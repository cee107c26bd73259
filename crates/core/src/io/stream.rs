//! tcp and ipc behind one type, so connection code is transport-agnostic.

use mio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};

/// A byte-count syscall result: the count, or the thread's errno as an error.
fn byte_count(n: isize) -> io::Result<usize> {
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Entries of the kernel's `SO_MEMINFO` array (`SK_MEMINFO_VARS`).
const MEMINFO_VARS: usize = 9;

/// A connected byte stream.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    /// Reads at most `max` bytes onto the end of `v`, straight into its spare capacity
    /// (no zeroing first, as a `&mut [u8]` would need).
    pub(crate) fn read_append(&mut self, v: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        let spare = v.spare_capacity_mut();
        let max = max.min(spare.len());
        // SAFETY: `spare` is `max` (or more) writable bytes owned by `v`, and `recv` on our
        // own open, non-blocking descriptor writes at most `max` of them.
        let n =
            byte_count(unsafe { libc::recv(self.as_raw_fd(), spare.as_mut_ptr().cast(), max, 0) })?;
        // SAFETY: the kernel initialised the first `n` bytes of the spare capacity.
        unsafe { v.set_len(v.len() + n) };
        Ok(n)
    }

    /// Writes with MSG_NOSIGNAL, as every write here: application threads write to
    /// connections too (caller-driven I/O), and in a C program SIGPIPE still terminates
    /// the process; a peer that has gone must give EPIPE, not a signal.
    pub(crate) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: our own open descriptor; `buf` is readable for its length.
        byte_count(unsafe {
            libc::send(
                self.as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_NOSIGNAL,
            )
        })
    }

    /// `writev` as `sendmsg` with MSG_NOSIGNAL (see `write`); at most IOV_MAX pieces.
    pub(crate) fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        const IOV_MAX: usize = 1024;
        // SAFETY: an all-zero msghdr is valid (no address, no control data).
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        // IoSlice is ABI-compatible with iovec on Unix (std guarantees it); sendmsg only
        // reads through the pointer.
        msg.msg_iov = bufs.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = bufs.len().min(IOV_MAX);
        // SAFETY: our own open descriptor; msg points to msg_iovlen valid iovecs.
        byte_count(unsafe { libc::sendmsg(self.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) })
    }

    pub(crate) fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Stream::Tcp(s) => s,
            Stream::Unix(s) => s,
        }
    }

    /// The pending connect error, if the non-blocking connect failed.
    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Stream::Tcp(s) => s.take_error(),
            Stream::Unix(s) => s.take_error(),
        }
    }

    /// True once a non-blocking connect has completed.
    pub(crate) fn is_connected(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.peer_addr().is_ok(),
            Stream::Unix(s) => s.peer_addr().is_ok(),
        }
    }

    /// True if the peer has closed its side and that is all the socket holds, or the
    /// socket has an error pending (a peek: no input is consumed). A sender writing from
    /// its own thread checks this first, so that what it queued is not written into a
    /// connection the reactor is about to drop (the reactor handles the close first, then
    /// the queue goes to the next connection). A peer that closed with our bytes unread
    /// leaves an error rather than an end of stream (ECONNRESET: a Unix socket's pending
    /// error, a tcp reset).
    pub(crate) fn peer_closed_now(&self) -> bool {
        let mut byte = 0u8;
        // SAFETY: our own open descriptor; one writable byte; MSG_PEEK leaves input queued.
        let n = unsafe {
            libc::recv(
                self.as_raw_fd(),
                &mut byte as *mut u8 as *mut libc::c_void,
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n == 0
            || (n < 0
                && !matches!(
                    io::Error::last_os_error().kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ))
    }

    /// The tcp connection's current maximum segment size (`TCP_MAXSEG`: it grows with the
    /// peer's window in the first writes), or None for ipc or if the call fails.
    pub(crate) fn tcp_mss(&self) -> Option<usize> {
        let Stream::Tcp(s) = self else { return None };
        let mut mss: libc::c_int = 0;
        let mut len = std::mem::size_of_val(&mss) as libc::socklen_t;
        // SAFETY: our own open tcp descriptor; `mss` has `len` writable bytes.
        let rc = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                &mut mss as *mut libc::c_int as *mut libc::c_void,
                &mut len,
            )
        };
        (rc == 0 && mss > 0).then_some(mss as usize)
    }

    /// About how many more bytes the kernel takes now, in its own accounting (send buffer
    /// less the memory queued for sending, which counts per-packet overhead too, so the
    /// payload it takes is somewhat less): one `SO_MEMINFO` call. None for ipc, which
    /// accounts its send queue another way, or if the call fails.
    pub(crate) fn send_room(&self) -> Option<usize> {
        let Stream::Tcp(s) = self else { return None };
        let mut info = [0u32; MEMINFO_VARS];
        let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
        // SAFETY: our own open tcp descriptor; `info` has `len` writable bytes and the
        // kernel writes at most that many.
        let rc = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_MEMINFO,
                info.as_mut_ptr() as *mut libc::c_void,
                &mut len,
            )
        };
        let filled = len as usize / 4;
        let (sndbuf, queued) = (
            libc::SK_MEMINFO_SNDBUF as usize,
            libc::SK_MEMINFO_WMEM_QUEUED as usize,
        );
        if rc != 0 || filled <= queued.max(sndbuf) {
            return None;
        }
        Some(info[sndbuf].saturating_sub(info[queued]) as usize)
    }

    /// Shuts both directions down (the peer sees a FIN now), keeping the descriptor.
    pub(crate) fn shutdown(&self) {
        let how = std::net::Shutdown::Both;
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        };
    }

    /// The peer's address as libzmq reports it in "Peer-Address".
    pub(crate) fn peer_address(&self) -> String {
        match self {
            Stream::Tcp(s) => s
                .peer_addr()
                .map(|a| a.ip().to_string())
                .unwrap_or_default(),
            Stream::Unix(s) => crate::transport::ipc::peer_address(s),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// A listening socket.
pub(crate) enum Listener {
    Tcp(TcpListener),
    /// The path is removed when the listener closes (empty for abstract names).
    Unix(UnixListener, String),
}

impl Listener {
    pub(crate) fn accept(&mut self) -> io::Result<Stream> {
        match self {
            Listener::Tcp(l) => l.accept().map(|(s, _)| Stream::Tcp(s)),
            Listener::Unix(l, _) => l.accept().map(|(s, _)| Stream::Unix(s)),
        }
    }

    pub(crate) fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Listener::Tcp(l) => l,
            Listener::Unix(l, _) => l,
        }
    }

    pub(crate) fn fd(&self) -> RawFd {
        match self {
            Listener::Tcp(l) => l.as_raw_fd(),
            Listener::Unix(l, _) => l.as_raw_fd(),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, path) = self {
            if !path.is_empty() {
                let _ = std::fs::remove_file(path.as_str());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::IoSlice;

    /// Blocks SIGPIPE in this thread (so a raised one stays pending instead of being
    /// discarded or killing the process) and returns whether one is pending, consuming it.
    fn sigpipe_pending() -> bool {
        // SAFETY: plain signal-set manipulation on local sets; sigtimedwait with a zero
        // timeout only takes a SIGPIPE that is already pending for this thread.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            let mut pending: libc::sigset_t = std::mem::zeroed();
            libc::sigpending(&mut pending);
            let raised = libc::sigismember(&pending, libc::SIGPIPE) == 1;
            if raised {
                let zero = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                libc::sigtimedwait(&set, std::ptr::null_mut(), &zero);
            }
            raised
        }
    }

    fn block_sigpipe() {
        // SAFETY: changes only this thread's signal mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
    }

    /// A Unix and a tcp stream whose peers have closed.
    fn closed_pairs() -> Vec<Stream> {
        let (a, b) = mio::net::UnixStream::pair().unwrap();
        drop(b);
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        drop(l.accept().unwrap());
        vec![
            Stream::Unix(a),
            Stream::Tcp(mio::net::TcpStream::from_std(c)),
        ]
    }

    /// Application threads write to connections too (caller-driven I/O), and a C program
    /// keeps SIGPIPE's default action (terminate): a write into a connection whose peer
    /// has gone must fail with an error, never raise SIGPIPE (libzmq's threads never do).
    #[test]
    fn writes_to_a_closed_peer_raise_no_sigpipe() {
        block_sigpipe();
        assert!(!sigpipe_pending());
        for mut s in closed_pairs() {
            let unix = matches!(s, Stream::Unix(_));
            // Over tcp the first writes may still succeed (the peer's RST answers them).
            let mut failed = false;
            for _ in 0..1000 {
                if s.write(b"hello").is_err() {
                    failed = true;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            assert!(failed, "unix {unix}: writes kept succeeding");
            assert!(!sigpipe_pending(), "unix {unix}: write raised SIGPIPE");
            let bufs = [IoSlice::new(b"a"), IoSlice::new(b"b")];
            let r = s.write_vectored(&bufs);
            assert!(r.is_err(), "unix {unix}: writev succeeded");
            let raised = sigpipe_pending();
            assert!(!raised, "unix {unix}: write_vectored raised SIGPIPE");
        }
    }
}
