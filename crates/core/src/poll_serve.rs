//! `PollServe`: caller-driven I/O (`io::assist`) for a thread that waits on several
//! sockets at once (`zmq_poll`, `zmq_poller_wait`). Before it sleeps, the thread reads the
//! sockets' tcp/ipc connections itself and takes them off the I/O thread's poller; while
//! it sleeps it polls their descriptors beside the sockets' eventfds, and when one is
//! ready it reads it. A message then costs no I/O-thread wake-up and no cross-thread
//! hand-over, as with a blocking receive (`Socket::wait_events` does the same for one
//! socket, with a spin first).

use crate::io::Served;
use crate::signal::SelfServe;
use crate::socket::Socket;

/// The connections of the sockets one waiting thread serves itself. Every claim ends when
/// this is dropped (which blocks briefly on each connection: drop it without holding any
/// socket's lock — application code never can).
#[derive(Default)]
pub struct PollServe {
    served: Vec<Served>,
}

impl PollServe {
    /// Serves nothing yet.
    pub fn new() -> PollServe {
        PollServe::default()
    }

    /// Reads `sock`'s connections now and claims them for this thread's sleep. True if
    /// that changed the socket's state: look at its events again before sleeping.
    pub fn add(&mut self, sock: &Socket) -> bool {
        let (moved, served) = sock.pull_and_claim();
        self.served.push(served);
        moved
    }

    /// The descriptors to poll while asleep: `(fd, also_writable)`. Input always; room for
    /// output too when a connection holds output the kernel had no room for.
    pub fn fds(&self) -> impl Iterator<Item = (i32, bool)> + '_ {
        self.served
            .iter()
            .flat_map(|s| s.fds().iter().map(|w| (w.fd, w.write)))
    }

    /// One of `fds` was ready: read (and write) what is there. A message delivered moves
    /// its socket's state (its `fd()` fires if armed).
    pub fn pull(&mut self) {
        for s in &mut self.served {
            s.pull();
        }
    }
}
