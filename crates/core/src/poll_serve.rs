//! `PollServe`: caller-driven I/O (`io::assist`) for a thread that waits on several
//! sockets at once (`zmq_poll`, `zmq_poller_wait`). Before it sleeps, the thread reads the
//! sockets' tcp/ipc connections itself and takes them off the I/O thread's poller; while
//! it sleeps it polls their descriptors beside the sockets' eventfds, and when one is
//! ready it reads it. A message then costs no I/O-thread wake-up and no cross-thread
//! hand-over, as with a blocking receive (`Socket::wait_events` does the same for one
//! socket). Before the sleep it may spin (`spin`), reading those connections between
//! looks, under the same adaptive policy as a blocking receive.

use crate::io::Served;
use crate::signal::{spin_until, SelfServe, SpinPolicy};
use crate::socket::{SignalMark, Socket};
use std::cell::RefCell;

/// Connections one wait claims at most; the rest stay with the I/O thread. A claim and
/// its end cost a system call each per connection at every wait that sleeps: a thread
/// polling 100 sockets fed in turn paid 200 per sleep.
const MAX_CLAIMED: usize = 8;

thread_local! {
    /// The spin policy of this thread's waits on several sockets (one socket's waits use
    /// that socket's own).
    static POLICY: RefCell<SpinPolicy> = RefCell::new(SpinPolicy::default());
}

/// The connections of the sockets one waiting thread serves itself. Every claim is given
/// back when this is dropped, and may stay in place a little longer for the thread's next
/// wait (`Socket::end_idle_claims`). Dropping blocks briefly on each connection: drop it
/// without holding any socket's lock (application code never can).
#[derive(Default)]
pub struct PollServe {
    served: Vec<Served>,
    /// Connections claimed so far.
    claimed: usize,
    /// The waited-on sockets' signals, with the generation last seen of each.
    marks: Vec<SignalMark>,
}

impl PollServe {
    /// Serves nothing yet.
    pub fn new() -> PollServe {
        PollServe::default()
    }

    /// Reads `sock`'s connections now and claims them for this thread's sleep, which
    /// waits for its input: the thread counts as waiting for input from now (the
    /// streaming rule of inline writes, `io::note_wait`). True if that changed the
    /// socket's state: look at its events again before sleeping.
    pub fn add(&mut self, sock: &Socket) -> bool {
        crate::io::note_wait();
        if self.claimed >= MAX_CLAIMED {
            // Enough: the rest stay with the I/O thread (see MAX_CLAIMED).
            self.watch(sock);
            return false;
        }
        let (moved, served, mark) = sock.pull_and_claim();
        self.claimed += served.fds().len();
        self.served.push(served);
        self.marks.push(mark);
        moved
    }

    /// Also watch `sock` (one not read here, e.g. waited on for POLLOUT only) in `spin`.
    /// Call it after looking at the socket's `events()`.
    pub fn watch(&mut self, sock: &Socket) {
        // Not read here: its connections must be the I/O thread's while this sleeps.
        sock.end_idle_claims();
        self.marks.push(sock.mark());
    }

    /// Spins before a sleep, if this thread's policy says a spin pays, until one of the
    /// sockets given to `add`/`watch` changes (true: look at their events again), reading
    /// the connections between looks. False: sleep, then report it with `slept`.
    pub fn spin(&mut self) -> bool {
        POLICY.with(|p| {
            let mut policy = p.borrow_mut();
            let budget = policy.budget_ns();
            if budget == 0 {
                return false;
            }
            let (served, marks) = (&mut self.served, &mut self.marks);
            let pull = || served.iter_mut().for_each(|s| s.pull());
            let changed = || marks.iter().any(|(sig, seen)| sig.moved_from(*seen));
            if !spin_until(budget, &mut policy, pull, changed) {
                return false;
            }
            policy.spin_caught();
            // The next spin waits for the change after this one.
            for (sig, seen) in marks.iter_mut() {
                *seen = sig.generation();
            }
            true
        })
    }

    /// The sleep after a failed `spin` ended with something ready after `ns`.
    pub fn slept(&mut self, ns: u64) {
        POLICY.with(|p| p.borrow_mut().slept(ns));
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
