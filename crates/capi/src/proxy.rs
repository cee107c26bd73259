//! `zmq_proxy`, `zmq_proxy_steerable` and the obsolete `zmq_device`.
//!
//! The proxy shuttles whole multipart messages between a frontend and a backend socket in
//! both directions, copying every frame to an optional capture socket. A direction moves a
//! message only when its source is readable and its destination writable, so a full
//! destination holds messages back (at the source's HWM) instead of blocking the other
//! direction. The proxy runs until its context is terminated (-1, ETERM) or, when
//! steerable, until a TERMINATE command (0).

use crate::errno::{fail, ffi, CResult, Errno};
use crate::poll::wait_for_change;
use crate::socket::sock_ref;
use ferromq::{Error, Msg, Socket, SocketType, DONTWAIT, POLLIN, POLLOUT, SNDMORE};
use std::os::raw::{c_int, c_void};

/// Per-socket counters reported by the STATISTICS command.
#[derive(Default, Clone, Copy)]
struct Stats {
    msgs_in: u64,
    bytes_in: u64,
    msgs_out: u64,
    bytes_out: u64,
}

const FRONT: usize = 0;
const BACK: usize = 1;

struct Proxy<'a> {
    sockets: [&'a Socket; 2],
    capture: Option<&'a Socket>,
    control: Option<&'a Socket>,
    stats: [Stats; 2],
    paused: bool,
}

fn send(sock: &Socket, msg: Msg, flags: i32) -> CResult<()> {
    sock.send_msg(msg, flags).map_err(|(e, _)| Errno::from(e))
}

impl Proxy<'_> {
    /// Moves one whole message from `sockets[from]` to `sockets[to]` (capturing a copy).
    /// As in libzmq's statistics, a multipart message counts once, with its total size.
    fn forward(&mut self, from: usize, to: usize) -> CResult<()> {
        let mut flags = DONTWAIT;
        let mut total = 0u64;
        loop {
            let mut msg = match self.sockets[from].recv_msg(flags) {
                Ok(m) => m,
                // Readiness was only a hint: nothing to move after all.
                Err(Error::Again) if flags == DONTWAIT => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            // Later frames of the message are already queued.
            flags = 0;
            let more = msg.more();
            total += msg.len() as u64;
            let send_flags = if more { SNDMORE } else { 0 };
            if let Some(cap) = self.capture {
                msg.make_shared();
                send(cap, msg.clone(), send_flags)?;
            }
            send(self.sockets[to], msg, send_flags)?;
            if !more {
                break;
            }
        }
        self.stats[from].msgs_in += 1;
        self.stats[from].bytes_in += total;
        self.stats[to].msgs_out += 1;
        self.stats[to].bytes_out += total;
        Ok(())
    }

    /// Handles one command on the control socket; true means TERMINATE.
    fn control(&mut self, ctl: &Socket) -> CResult<bool> {
        let cmd = match ctl.recv_msg(DONTWAIT) {
            Ok(m) => m,
            Err(Error::Again) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let mut more = cmd.more();
        while more {
            more = ctl.recv_msg(0)?.more();
        }
        let mut terminate = false;
        match cmd.data() {
            b"PAUSE" => self.paused = true,
            b"RESUME" => self.paused = false,
            b"TERMINATE" => terminate = true,
            b"STATISTICS" => {
                let values = [
                    self.stats[FRONT].msgs_in,
                    self.stats[FRONT].bytes_in,
                    self.stats[FRONT].msgs_out,
                    self.stats[FRONT].bytes_out,
                    self.stats[BACK].msgs_in,
                    self.stats[BACK].bytes_in,
                    self.stats[BACK].msgs_out,
                    self.stats[BACK].bytes_out,
                ];
                for (i, v) in values.iter().enumerate() {
                    let flags = if i + 1 < values.len() { SNDMORE } else { 0 };
                    send(ctl, Msg::copy_from(&v.to_ne_bytes()), flags)?;
                }
                return Ok(false);
            }
            // Unknown commands are ignored.
            _ => {}
        }
        // A REP control socket must answer every request before it can receive the next.
        if ctl.kind() == SocketType::Rep {
            send(ctl, Msg::new(), 0)?;
        }
        Ok(terminate)
    }

    fn run(&mut self) -> CResult<c_int> {
        let [front, back] = self.sockets;
        let same = std::ptr::eq(front, back);
        loop {
            // events() also re-arms each socket's wake-up descriptor.
            let ev_front = front.events()?;
            let ev_back = if same { ev_front } else { back.events()? };
            let ev_control = match self.control {
                Some(c) => c.events()?,
                None => 0,
            };
            let mut progressed = false;
            if let Some(ctl) = self.control {
                if ev_control & POLLIN != 0 {
                    if self.control(ctl)? {
                        return Ok(0);
                    }
                    progressed = true;
                }
            }
            if !self.paused {
                // One socket as both ends (a REP echo device): a REP holding a request is
                // readable but not writable, so only readability counts, as in libzmq.
                if ev_front & POLLIN != 0 && (same || ev_back & POLLOUT != 0) {
                    self.forward(FRONT, BACK)?;
                    progressed = true;
                }
                if !same && ev_back & POLLIN != 0 && ev_front & POLLOUT != 0 {
                    self.forward(BACK, FRONT)?;
                    progressed = true;
                }
            }
            if !progressed {
                let mut watch: Vec<&Socket> = Vec::with_capacity(3);
                if !self.paused {
                    watch.push(front);
                    if !same {
                        watch.push(back);
                    }
                }
                watch.extend(self.control);
                wait_for_change(&watch)?;
            }
        }
    }
}

/// Shared body of the exported proxy functions.
///
/// # Safety
/// `frontend` and `backend` must be NULL or live socket pointers; `capture` and `control`
/// NULL or live socket pointers.
unsafe fn proxy(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> c_int {
    ffi(-1, || {
        // libzmq checks these two for NULL first (EFAULT); other bad handles are ENOTSOCK.
        if frontend.is_null() || backend.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY (all four): forwarded caller contract.
        let front = unsafe { sock_ref(frontend)? };
        // SAFETY: as above.
        let back = unsafe { sock_ref(backend)? };
        let capture = if capture.is_null() {
            None
        } else {
            // SAFETY: as above.
            Some(unsafe { sock_ref(capture)? })
        };
        let control = if control.is_null() {
            None
        } else {
            // SAFETY: as above.
            Some(unsafe { sock_ref(control)? })
        };
        Proxy {
            sockets: [front, back],
            capture,
            control,
            stats: [Stats::default(); 2],
            paused: false,
        }
        .run()
    })
}

/// Runs a proxy until the context is terminated (returns -1 with ETERM).
///
/// # Safety
/// `frontend`/`backend` must be NULL or live socket pointers, `capture` NULL or one; the
/// sockets must not be used by other threads while the proxy runs.
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { proxy(frontend, backend, capture, std::ptr::null_mut()) }
}

/// A proxy that also obeys PAUSE, RESUME, TERMINATE and STATISTICS commands received on
/// `control`. Returns 0 after TERMINATE. STATISTICS replies with eight `uint64_t` frames:
/// messages and bytes received and sent by the frontend, then the same for the backend.
/// A REP control socket gets an empty reply to the other commands.
///
/// # Safety
/// As `zmq_proxy`; `control` NULL or a live socket pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_proxy_steerable(
    frontend: *mut c_void,
    backend: *mut c_void,
    capture: *mut c_void,
    control: *mut c_void,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe { proxy(frontend, backend, capture, control) }
}

/// Obsolete: `zmq_proxy` without capture (the device type is ignored, as in libzmq).
///
/// # Safety
/// As `zmq_proxy`.
#[no_mangle]
pub unsafe extern "C" fn zmq_device(
    _kind: c_int,
    frontend: *mut c_void,
    backend: *mut c_void,
) -> c_int {
    // SAFETY: forwarded caller contract.
    unsafe {
        proxy(
            frontend,
            backend,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
}
