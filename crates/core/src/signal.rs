//! `Signal`: how a socket's owner thread learns that something changed (a message arrived,
//! room appeared, a peer attached). A generation counter plus one eventfd, which serves
//! both blocking calls (they `poll` it, so a signal interrupts them with EINTR, as libzmq's
//! do) and `ZMQ_FD` users (edge-triggered: readable after a change since `ZMQ_EVENTS` was
//! last read). The fd is written only when somebody is waiting on it.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Outcome of [`Signal::wait`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// The generation changed: look for work again.
    Changed,
    /// The deadline passed.
    TimedOut,
    /// A signal interrupted the wait (EINTR).
    Interrupted,
}

/// How [`Signal::sleep`] ended.
enum Slept {
    Done(Wait),
    /// A read during the sleep left a large body arriving.
    BodyStarted,
}

/// Longest spin before a blocking wait sleeps. A little more than one wake-up of a sleeping
/// thread on a virtual machine (20-30 µs here): two threads ping-ponging that both fell
/// asleep get back into step only if one of them spins past the other's wake-up.
const SPIN_MAX_NS: u32 = 50_000;

/// The longest spin in effect: `SPIN_MAX_NS`, or the `FERROMQ_SPIN_US` environment
/// variable (microseconds; 0 never spins: for hosts with more busy threads than cores,
/// or for counting instructions under a tool that serialises threads).
fn spin_max_ns() -> u32 {
    static MAX: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("FERROMQ_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .map_or(SPIN_MAX_NS, |us| us.saturating_mul(1000))
    })
}

/// `one_cpu`'s answer: 0 not asked yet, 1 more CPUs, 2 one CPU.
static ONE_CPU: AtomicU8 = AtomicU8::new(0);

/// The process may run on one CPU only (affinity mask or cgroup quota), decided once. A
/// plain load on the hot paths that ask (every blocking receive of a thread that sent).
#[inline]
pub(crate) fn one_cpu() -> bool {
    match ONE_CPU.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => ask_one_cpu(),
    }
}

/// On one CPU, gives the CPU away (to the thread this one waits on or feeds, which runs only
/// when this one stops) and counts it in `count` (for tests); nothing with more CPUs.
pub(crate) fn yield_on_one_cpu(count: &AtomicU64) {
    if one_cpu() {
        count.fetch_add(1, Ordering::Relaxed);
        std::thread::yield_now();
    }
}

/// Asks the system (threads racing here get the same answer).
#[cold]
fn ask_one_cpu() -> bool {
    let one = std::thread::available_parallelism().is_ok_and(|n| n.get() == 1);
    ONE_CPU.store(if one { 2 } else { 1 }, Ordering::Relaxed);
    one
}

/// A large body is spun for (see [`Signal::spin_while_body_arrives`]) only while, at the
/// rate of the last spin, the rest of it would be in within this many more spins.
const BODY_SPINS_AHEAD: usize = 64;
/// Longest spin of [`Signal::block_spinning`] (a caller's own wait, usually 200 µs).
const WITHIN_SPIN_MAX_NS: u64 = 1_000_000;
/// While spinning, give the core away this often (see `spin_for`).
const YIELD_EVERY_NS: u64 = 5_000;
/// Cap on the probe back-off: after repeated failed full spins, one probe per 2^10 waits.
const MAX_BACKOFF: u32 = 10;
/// Spins that do not yield after a yield lost the core (see [`SpinPolicy::yield_starved`]).
const NO_YIELD_SPINS: u32 = 1024;
/// A yield counts as lost to another process when it lasts this many spin budgets (1 ms at
/// the default 50 µs): a CPU-bound process keeps the core for a scheduler slice, while on a
/// quiet host yields rarely last that long. At 1 budget the guard also fired on a quiet
/// host and cost REQ/REP 64 B p99 there (tcp 24 -> 35 µs, ipc 17 -> 35).
const STARVED_YIELD_FACTOR: u64 = 20;
/// A yield that lasted this long let another thread of ours run on this core; if the change
/// we spin for is there right after it, the peer shares our core (see
/// [`SpinPolicy::yielded`]). A yield with nothing else to run returns well below this.
const SHARED_CORE_YIELD_NS: u64 = 1_500;

/// When to spin before sleeping: the owner thread's adaptive policy (see
/// [`Signal::block`]). It is plain state updated from durations, so it is tested without
/// clocks or threads.
///
/// - A spin that caught the change keeps the full budget: the peer answers within it.
/// - A full spin that failed stops spinning and backs off: the next probe comes after
///   2, 4, ... 1024 waits (on oversubscribed cores a spin holds the CPU the peer needs).
/// - With spinning off, a short sleep (the change came soon after we slept) makes the next
///   wait probe with a full spin, unless backing off; a long sleep (the peer is idle)
///   leaves it off, so an idle peer costs no CPU.
#[derive(Debug)]
pub(crate) struct SpinPolicy {
    /// The longest spin (a full one), in ns; 0 = never spin.
    max_ns: u32,
    /// Spin budget of the next wait, in ns (0 = sleep at once).
    budget_ns: u32,
    /// Consecutive failed full spins.
    backoff: u32,
    /// Short sleeps still to let pass before the next probe.
    skip: u32,
    /// Spins still to come that must not yield.
    no_yield: u32,
    /// The peer seems to run on this thread's core: spins yield at once instead of after
    /// `YIELD_EVERY_NS` (each wait would otherwise spin that long before the peer can answer).
    yield_at_once: bool,
    /// The process has one CPU: a wait that reads sockets itself sleeps at once (see
    /// `budget_for`).
    one_cpu: bool,
}

impl Default for SpinPolicy {
    fn default() -> Self {
        SpinPolicy {
            one_cpu: one_cpu(),
            ..SpinPolicy::with_max(spin_max_ns())
        }
    }
}

impl SpinPolicy {
    /// A policy whose full spin is `max_ns` (0 = never spin).
    pub(crate) fn with_max(max_ns: u32) -> SpinPolicy {
        SpinPolicy {
            max_ns,
            budget_ns: max_ns,
            backoff: 0,
            skip: 0,
            no_yield: 0,
            yield_at_once: false,
            one_cpu: false,
        }
    }

    /// This policy as on a process with one CPU.
    #[cfg(test)]
    fn on_one_cpu(self) -> SpinPolicy {
        SpinPolicy {
            one_cpu: true,
            ..self
        }
    }

    /// How long the next wait should spin, in ns, if it reads tcp/ipc connections itself
    /// (`reads_sockets`) or not: the policy's budget, but 0 for a socket-reading wait on
    /// one CPU. There the sender cannot run while we spin; asleep in `poll`, the kernel
    /// wakes us when its bytes are in, so each read takes what a whole slice of the sender
    /// wrote (pinned to one CPU, REQ/REP tcp 64 B took 8.6 µs spinning and 4.7 µs asleep;
    /// PUSH/PULL ipc 128 KiB 15K and 36K msg/s: `2026-12-07-single-cpu.md`). An inproc
    /// wait still spins: it yields the core to the sender, which then queues many
    /// messages for one look, where a sleep costs the sender a wake-up per few messages.
    pub(crate) fn budget_for(&self, reads_sockets: bool) -> u32 {
        if self.sleeps_at_once(reads_sockets) {
            0
        } else {
            self.budget_ns
        }
    }

    /// A wait that reads sockets itself (`reads_sockets`) must not spin at all: one CPU.
    pub(crate) fn sleeps_at_once(&self, reads_sockets: bool) -> bool {
        self.one_cpu && reads_sockets
    }

    /// Whether a wait may spin while a large body arrives (not on one CPU: the body comes
    /// only while we do not spin).
    pub(crate) fn spins_for_bodies(&self) -> bool {
        !self.one_cpu
    }

    /// A yield during a spin took `took_ns`, and the change was (`changed`) or was not there
    /// after it. A long yield followed by the change: the peer ran on this core and answered,
    /// so later spins yield at once. A short one (nobody else wanted the core) or one
    /// without the change: the usual spin.
    pub(crate) fn yielded(&mut self, took_ns: u64, changed: bool) {
        self.yield_at_once = changed && took_ns >= SHARED_CORE_YIELD_NS;
    }

    /// How far into a spin its first yield comes, in ns.
    pub(crate) fn first_yield_ns(&self) -> u64 {
        if self.yield_at_once {
            0
        } else {
            YIELD_EVERY_NS
        }
    }

    /// Whether the spin about to start may yield its core now and then (counts the spin).
    pub(crate) fn take_yield_permit(&mut self) -> bool {
        if self.no_yield == 0 {
            return true;
        }
        self.no_yield -= 1;
        false
    }

    /// A yield lasted `STARVED_YIELD_FACTOR` spin budgets: the scheduler gave the core to
    /// another process's thread for its slice (a CPU-bound neighbour on a busy host), which
    /// turns a wait of microseconds into milliseconds. The next `NO_YIELD_SPINS` spins
    /// keep their core instead; then a yield is tried again.
    pub(crate) fn yield_starved(&mut self) {
        self.no_yield = NO_YIELD_SPINS;
    }

    /// How long the next wait should spin, in ns.
    pub(crate) fn budget_ns(&self) -> u32 {
        self.budget_ns
    }

    /// The spin caught the change.
    pub(crate) fn spin_caught(&mut self) {
        self.budget_ns = self.max_ns;
        self.backoff = 0;
        self.skip = 0;
    }

    /// The spin (of `budget_ns`, possibly 0) did not catch it; the waiter then slept for
    /// `slept_ns` before the change came.
    pub(crate) fn slept(&mut self, slept_ns: u64) {
        if self.max_ns == 0 {
            return;
        }
        if self.budget_ns >= self.max_ns {
            self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
            self.skip = (1 << self.backoff) - 1;
            self.budget_ns = 0;
        } else if slept_ns < 2 * u64::from(self.max_ns) {
            // Short: the change came soon after we gave up (the sleep includes our own
            // wake-up), so a full spin might have caught it.
            if self.skip == 0 {
                self.budget_ns = self.max_ns;
            } else {
                self.skip -= 1;
            }
        } else {
            self.budget_ns = 0;
        }
    }
}

/// Spins up to `budget_ns` until `changed()`, calling `pull` (the waiter's own reads)
/// between looks. True if it changed. Yields now and then if the policy permits; a yield
/// that lasts `STARVED_YIELD_FACTOR` budgets ends the yields and is reported to the policy,
/// and every yield's length tells the policy whether the peer shares this core. On one
/// CPU it yields at every look instead.
pub(crate) fn spin_until(
    budget_ns: u32,
    policy: &mut SpinPolicy,
    mut pull: impl FnMut(),
    changed: impl Fn() -> bool,
) -> bool {
    let start = Instant::now();
    if policy.one_cpu {
        // The peer runs only while we do not: give it the core at every look (pinned to
        // one CPU, REQ/REP inproc 64 B 2.36 -> 2.02 µs, PUSH/PULL inproc 64 B +10-40 %).
        // A yield that lasts a slice does not end the yields here: spinning instead
        // could never see the change.
        loop {
            pull();
            if changed() {
                return true;
            }
            if start.elapsed().as_nanos() as u64 >= budget_ns as u64 {
                return false;
            }
            std::thread::yield_now();
        }
    }
    let mut may_yield = policy.take_yield_permit();
    let mut next_yield = policy.first_yield_ns();
    loop {
        pull();
        for _ in 0..32 {
            if changed() {
                return true;
            }
            std::hint::spin_loop();
        }
        let spun = start.elapsed().as_nanos() as u64;
        if spun >= budget_ns as u64 {
            return false;
        }
        if may_yield && spun >= next_yield {
            // Let a thread waiting for this core run (the one we wait for, when there are
            // more busy threads than cores); returns at once otherwise.
            std::thread::yield_now();
            let back = start.elapsed().as_nanos() as u64;
            if back - spun > STARVED_YIELD_FACTOR * budget_ns as u64 {
                may_yield = false;
                policy.yield_starved();
            }
            policy.yielded(back - spun, changed());
            next_yield = spun + YIELD_EVERY_NS;
        }
    }
}

/// Most connections a waiting thread reads itself (see [`SelfServe`]); a socket with more
/// leaves its reading to the I/O thread. 8, not 4: one thread sending through 8 DEALERs to
/// a ROUTER over tcp moved 1.21M msg/s at 1 KiB (2.43M with 8) and 31K at 64 KiB (41K)
/// in paired rounds, libzmq about 0.9M and 29-48K, the I/O thread doing all the reads; a
/// ROUTER answering one of 8 peers spent less CPU per round trip, not more
/// (`docs/results/2026-12-07-eight-self-served.md`).
pub(crate) const MAX_SELF_SERVED: usize = 8;

/// Input a waiting thread fetches itself instead of being woken when another thread has
/// fetched it (caller-driven I/O, `io::assist`).
pub(crate) trait SelfServe {
    /// Reads what is there (moving the generation if a message came of it), and writes
    /// output waiting for room.
    fn pull(&mut self);
    /// Descriptors whose readiness should end a sleep (then `pull` runs): at most
    /// [`MAX_SELF_SERVED`], open for as long as `self` lives.
    fn fds(&self) -> &[Watched];
    /// Bytes still to come of large message bodies being read (None: no body in
    /// progress), as of the last look at them (a claim or `pull`; a connection another
    /// thread held at the time keeps its earlier figure).
    fn body_missing(&self) -> Option<usize> {
        None
    }
}

/// A descriptor a sleeping thread serves itself: readable always, writable too when it
/// holds output waiting for room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Watched {
    pub(crate) fd: RawFd,
    pub(crate) write: bool,
}

/// Nothing to fetch.
pub(crate) struct NoSelfServe;

impl SelfServe for NoSelfServe {
    fn pull(&mut self) {}
    fn fds(&self) -> &[Watched] {
        &[]
    }
}

/// `Signal::skipped_arm` when no arm was skipped.
const NO_ARM: u64 = u64::MAX;

/// A wake-up channel for one socket.
pub(crate) struct Signal {
    generation: AtomicU64,
    waiters: AtomicU64,
    fd: RawFd,
    fd_armed: AtomicBool,
    /// The application has been given the fd (ZMQ_FD), so it may wait on it right after
    /// an EAGAIN (see `arm`). Internal waiters arm it through `rearm` before each wait.
    fd_exposed: AtomicBool,
    /// The `seen` of the last `arm` skipped while the fd was not given out (NO_ARM: none):
    /// a program that takes ZMQ_FD after an EAGAIN is woken as if it had held it then.
    skipped_arm: AtomicU64,
    /// Writes to the fd begun and not yet consumed by a read: raised before each write,
    /// lowered by what a read takes. Zero means the fd is not readable and no write is on
    /// its way, so a drain can skip its `read` (most `ZMQ_EVENTS` reads, e.g. one per
    /// `zmq_poll` on a busy socket, find the fd empty). Raised *before* the write: a flag set
    /// after it let a woken reader, running before the writer got the core back, find the fd
    /// readable but the flag clear and spin on `poll` until the writer ran again.
    fd_pending: AtomicU64,
    /// The owner thread's spin policy (only a thread blocked in a receive uses it; sends
    /// sleep at once). A Mutex so the type stays Sync, never contended.
    spin: Mutex<SpinPolicy>,
}

impl Signal {
    pub(crate) fn new() -> std::io::Result<Signal> {
        // SAFETY: plain syscall creating a new descriptor; no pointers involved.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Signal {
            generation: AtomicU64::new(0),
            waiters: AtomicU64::new(0),
            fd,
            fd_armed: AtomicBool::new(false),
            fd_exposed: AtomicBool::new(false),
            skipped_arm: AtomicU64::new(NO_ARM),
            fd_pending: AtomicU64::new(0),
            spin: Mutex::new(SpinPolicy::default()),
        })
    }

    /// The current generation; read it *before* checking for work, then `wait` for a change.
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Announces a change: bumps the generation and writes the fd if anyone waits on it.
    pub(crate) fn notify(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let waiting = self.waiters.load(Ordering::SeqCst) > 0;
        let armed = self.fd_armed.swap(false, Ordering::SeqCst);
        if waiting || armed {
            self.write_fd();
        }
    }

    fn write_fd(&self) {
        self.fd_pending.fetch_add(1, Ordering::SeqCst);
        let one: u64 = 1;
        // SAFETY: self.fd is our eventfd, open for the Signal's lifetime; 8 valid bytes.
        unsafe { libc::write(self.fd, &one as *const u64 as *const libc::c_void, 8) };
    }

    fn drain_fd(&self) {
        if self.fd_pending.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut buf: u64 = 0;
        // SAFETY: self.fd is our non-blocking eventfd; the buffer is 8 writable bytes.
        let n = unsafe { libc::read(self.fd, &mut buf as *mut u64 as *mut libc::c_void, 8) };
        if n == 8 {
            // The counter is the number of writes since the last read (each writes 1).
            self.fd_pending.fetch_sub(buf, Ordering::SeqCst);
        }
    }

    /// Waits for the generation to move from `seen`: spins first when the policy says a
    /// spin pays (a peer about to deliver is cheaper to wait for on the CPU than through a
    /// sleep, and its wake then costs no syscall: nobody waits on the fd), and on while a
    /// large body arrives (see [`spin_while_body_arrives`](Self::spin_while_body_arrives)),
    /// then sleeps as [`wait`](Self::wait) does, going back to spinning when a read during
    /// the sleep starts a large body. `io` is what the caller reads itself (see [`SelfServe`]):
    /// pulled between looks while spinning, and its descriptors also end a sleep.
    pub(crate) fn block(
        &self,
        seen: u64,
        deadline: Option<Instant>,
        io: &mut dyn SelfServe,
    ) -> Wait {
        let mut policy = self.spin.lock().unwrap_or_else(|e| e.into_inner());
        // Only asked on one CPU, the only place it matters (a virtual call).
        let reads_sockets = policy.one_cpu && !io.fds().is_empty();
        let budget = policy.budget_for(reads_sockets);
        if (budget > 0 && self.spin_for(seen, budget, io, &mut policy))
            || self.spin_while_body_arrives(seen, deadline, io, &mut policy)
        {
            policy.spin_caught();
            return Wait::Changed;
        }
        let start = Instant::now();
        let result = loop {
            match self.sleep(seen, deadline, io, true) {
                Slept::Done(result) => break result,
                Slept::BodyStarted => {
                    if self.spin_while_body_arrives(seen, deadline, io, &mut policy) {
                        policy.spin_caught();
                        return Wait::Changed;
                    }
                }
            }
        };
        // A spin skipped for one CPU says nothing of how soon the change comes.
        if result == Wait::Changed && !policy.sleeps_at_once(reads_sockets) {
            policy.slept(start.elapsed().as_nanos() as u64);
        }
        result
    }

    /// Waits as [`block`](Self::block) does, but spins up to `spin_ns` whatever the
    /// adaptive policy says (no more than `WITHIN_SPIN_MAX_NS`, and not at all with
    /// `FERROMQ_SPIN_US=0` or when reading sockets on one CPU): for a caller that chose its
    /// wait itself and keeps its own policy (a binding with an event loop, which sleeps
    /// there after this returns).
    /// The policy's yield rules still apply; its budget is left as it was.
    pub(crate) fn block_spinning(
        &self,
        seen: u64,
        deadline: Option<Instant>,
        spin_ns: u64,
        io: &mut dyn SelfServe,
    ) -> Wait {
        let mut policy = self.spin.lock().unwrap_or_else(|e| e.into_inner());
        let spin_ns = if spin_max_ns() == 0 || (policy.one_cpu && !io.fds().is_empty()) {
            0
        } else {
            spin_ns.min(WITHIN_SPIN_MAX_NS) as u32
        };
        if spin_ns > 0 && self.spin_for(seen, spin_ns, io, &mut policy) {
            return Wait::Changed;
        }
        drop(policy);
        self.wait_io(seen, deadline, io)
    }

    /// While a large body is being read and each full spin (`spin_max_ns`) sees enough of
    /// it arrive that the rest would be in within `BODY_SPINS_AHEAD` more at that rate,
    /// keeps spinning (reading between looks); true if the generation moved. A thread
    /// asleep on a socket while a body streams in is woken for every piece the sender
    /// writes (PUSH/PULL tcp 256 KiB in one process: 2.5 context switches and 120 µs of
    /// CPU per message, 12-13K msg/s; spinning: 16-19K, libzmq 17-19K). A body that
    /// stops, or comes too slowly to end soon (a long transfer over a network: the thread
    /// sleeps until it nears its end), stops the spin after one spin, and so does the
    /// wait's deadline (a receive timeout is kept to within one spin).
    fn spin_while_body_arrives(
        &self,
        seen: u64,
        deadline: Option<Instant>,
        io: &mut dyn SelfServe,
        policy: &mut SpinPolicy,
    ) -> bool {
        let max = spin_max_ns();
        if max == 0 || !policy.spins_for_bodies() {
            return false;
        }
        let mut missing = io.body_missing();
        while let Some(before) = missing {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            if self.spin_for(seen, max, io, policy) {
                return true;
            }
            missing = io.body_missing().filter(|&now| {
                now < before && now <= (before - now).saturating_mul(BODY_SPINS_AHEAD)
            });
        }
        false
    }

    /// Spins up to `budget_ns` for the generation to move from `seen`. True if it moved.
    fn spin_for(
        &self,
        seen: u64,
        budget_ns: u32,
        io: &mut dyn SelfServe,
        policy: &mut SpinPolicy,
    ) -> bool {
        // SeqCst pairs with notify's SeqCst increment (a plain load on x86).
        spin_until(budget_ns, policy, || io.pull(), || self.moved_from(seen))
    }

    /// True if the generation moved from `seen` (a waiter's look, also on several signals).
    #[inline]
    pub(crate) fn moved_from(&self, seen: u64) -> bool {
        self.generation.load(Ordering::SeqCst) != seen
    }

    /// Blocks until the generation differs from `seen`, `deadline` passes, or a signal
    /// arrives.
    pub(crate) fn wait(&self, seen: u64, deadline: Option<Instant>) -> Wait {
        self.wait_io(seen, deadline, &mut NoSelfServe)
    }

    fn wait_io(&self, seen: u64, deadline: Option<Instant>, io: &mut dyn SelfServe) -> Wait {
        match self.sleep(seen, deadline, io, false) {
            Slept::Done(result) => result,
            Slept::BodyStarted => unreachable!("sleep(.., false) never stops for a body"),
        }
    }

    /// Sleeps until the generation moves from `seen`, the deadline passes or a signal
    /// comes, reading `io` when its descriptors are ready; with `body_wakes`, also returns
    /// once such a read starts a large body (to be spun for).
    fn sleep(
        &self,
        seen: u64,
        deadline: Option<Instant>,
        io: &mut dyn SelfServe,
        body_wakes: bool,
    ) -> Slept {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let idle = libc::pollfd {
            fd: -1,
            events: 0,
            revents: 0,
        };
        let mut pfds = [idle; 1 + MAX_SELF_SERVED];
        let result = loop {
            if self.generation.load(Ordering::SeqCst) != seen {
                break Wait::Changed;
            }
            let timeout_ms: i32 = match deadline {
                None => -1,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break Wait::TimedOut;
                    }
                    let ms = (d - now).as_micros().div_ceil(1000);
                    ms.min(i32::MAX as u128) as i32
                }
            };
            pfds[0] = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let fds = io.fds();
            let n = 1 + fds.len().min(MAX_SELF_SERVED);
            for (pfd, w) in pfds[1..n].iter_mut().zip(fds) {
                let write = if w.write { libc::POLLOUT } else { 0 };
                *pfd = libc::pollfd {
                    fd: w.fd,
                    events: libc::POLLIN | libc::POLLRDHUP | write,
                    revents: 0,
                };
            }
            // SAFETY: `n` initialised pollfds on descriptors that stay open during the call
            // (ours, and the connections `io` holds).
            let rc = unsafe { libc::poll(pfds.as_mut_ptr(), n as libc::nfds_t, timeout_ms) };
            if rc < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    break Wait::Interrupted;
                }
            } else if rc > 0 {
                if pfds[0].revents != 0 {
                    self.drain_fd();
                }
                if pfds[1..n].iter().any(|p| p.revents != 0) {
                    // Not a waiter while our own pull runs: the message it delivers
                    // would otherwise notify us through the eventfd (a write now, a
                    // wake-up and a read later, three syscalls per message). The loop
                    // re-reads the generation after, so no change is missed.
                    self.waiters.fetch_sub(1, Ordering::SeqCst);
                    // Only a body this read started: one already arriving was spun for
                    // and found too slow (a wake per piece of it must not spin again).
                    let body_before = body_wakes && io.body_missing().is_some();
                    io.pull();
                    if body_wakes
                        && !body_before
                        && io.body_missing().is_some()
                        && self.generation.load(Ordering::SeqCst) == seen
                    {
                        // Not a waiter any more; a ZMQ_FD write drained above is handed
                        // back when the wait ends.
                        return Slept::BodyStarted;
                    }
                    self.waiters.fetch_add(1, Ordering::SeqCst);
                }
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        if result != Wait::Changed && self.fd_armed.load(Ordering::SeqCst) {
            // We may have drained a write meant for a ZMQ_FD poller; hand it back.
            self.write_fd();
        }
        Slept::Done(result)
    }

    /// The eventfd, for an internal waiter that calls `rearm` before each wait.
    pub(crate) fn fd(&self) -> RawFd {
        self.fd
    }

    /// True once `expose_fd` was called.
    pub(crate) fn fd_exposed(&self) -> bool {
        self.fd_exposed.load(Ordering::Relaxed)
    }

    /// The eventfd for `ZMQ_FD`, given to the application: from now on an EAGAIN arms it,
    /// and an EAGAIN since the last change, before this first call, counts as armed.
    pub(crate) fn expose_fd(&self) -> RawFd {
        if !self.fd_exposed.swap(true, Ordering::SeqCst) {
            let seen = self.skipped_arm.load(Ordering::SeqCst);
            if seen != NO_ARM {
                self.arm(seen);
            }
        }
        self.fd
    }

    /// Called when a send or recv would block (EAGAIN): arms `ZMQ_FD` so the next change
    /// makes it readable. libzmq drains its mailbox in every send/recv, so bindings that
    /// wait on `ZMQ_FD` right after EAGAIN, without reading `ZMQ_EVENTS`, are woken.
    /// `seen` is the generation read before the attempt: a change since then (which found
    /// the fd unarmed) makes the fd readable at once, so no wake-up is lost.
    /// Nothing to do while the fd was never given out: no one can be waiting on it, and
    /// an armed fd costs the next sender a write and the next receive a read (a thread
    /// draining 100 sockets in turn to EAGAIN: one pair per message, libzmq none).
    pub(crate) fn arm(&self, seen: u64) {
        if !self.fd_exposed.load(Ordering::Relaxed) {
            self.skipped_arm.store(seen, Ordering::Relaxed);
            return;
        }
        self.fd_armed.store(true, Ordering::SeqCst);
        if self.generation.load(Ordering::SeqCst) != seen
            && self.fd_armed.swap(false, Ordering::SeqCst)
        {
            self.write_fd();
        }
    }

    /// The owner is about to wait itself and will call `rearm` (through `events()`) when it
    /// is done: changes meanwhile need not write the fd for a `ZMQ_FD` user.
    pub(crate) fn disarm(&self) {
        self.fd_armed.store(false, Ordering::SeqCst);
    }

    /// Called when the owner reads `ZMQ_EVENTS`: drains the eventfd and arms it so the next
    /// change makes it readable again (edge-triggered, as libzmq's).
    pub(crate) fn rearm(&self) {
        self.drain_fd();
        // Arm after draining: a change after this point writes the fd again.
        self.fd_armed.store(true, Ordering::SeqCst);
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor and nobody uses it after drop.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: u64 = 30_000;

    #[test]
    fn a_spin_pulls_between_looks_and_stops_at_the_change() {
        use std::cell::Cell;
        let pulls = Cell::new(0);
        let mut p = SpinPolicy::with_max(1_000_000_000);
        let caught = spin_until(
            1_000_000_000,
            &mut p,
            || pulls.set(pulls.get() + 1),
            || pulls.get() >= 3,
        );
        assert!(caught);
        assert_eq!(
            pulls.get(),
            3,
            "a look after each pull, none after the change"
        );
        // Nothing changes: the spin ends at its budget, having pulled at least once.
        pulls.set(0);
        assert!(!spin_until(
            0,
            &mut p,
            || pulls.set(pulls.get() + 1),
            || false
        ));
        assert_eq!(pulls.get(), 1);
    }

    #[test]
    fn a_zero_maximum_never_spins() {
        let mut p = SpinPolicy::with_max(0);
        for slept in [SHORT, 1_000_000, SHORT] {
            assert_eq!(p.budget_ns(), 0);
            p.slept(slept);
        }
        p.spin_caught();
        assert_eq!(p.budget_ns(), 0);
    }
    const LONG: u64 = 1_000_000;

    fn readable(fd: RawFd) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd on an open descriptor, no wait.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    }

    #[test]
    fn a_drain_empties_the_fd_even_with_a_write_on_its_way() {
        let s = Signal::new().unwrap();
        s.rearm();
        assert!(!readable(s.fd()));
        // A second writer has announced its write but not made it yet.
        s.fd_pending.fetch_add(1, Ordering::SeqCst);
        s.write_fd();
        s.write_fd();
        s.rearm();
        assert!(!readable(s.fd()), "both completed writes were read");
        assert_eq!(s.fd_pending.load(Ordering::SeqCst), 1);
        // Its write lands: the next drain must read it, not skip.
        let one: u64 = 1;
        // SAFETY: our eventfd, 8 valid bytes.
        unsafe { libc::write(s.fd(), &one as *const u64 as *const libc::c_void, 8) };
        assert!(readable(s.fd()));
        s.rearm();
        assert!(!readable(s.fd()));
        assert_eq!(s.fd_pending.load(Ordering::SeqCst), 0);
    }

    /// Input on a readable descriptor whose pull announces a message on `signal`, as a
    /// connection read by the waiting thread itself does.
    struct NotifyingPull<'a> {
        signal: &'a Signal,
        fds: [Watched; 1],
    }

    impl SelfServe for NotifyingPull<'_> {
        fn pull(&mut self) {
            self.signal.notify();
        }
        fn fds(&self) -> &[Watched] {
            &self.fds
        }
    }

    #[test]
    fn a_sleepers_own_pull_does_not_write_its_eventfd() {
        let s = Signal::new().unwrap();
        let mut ends = [0 as RawFd; 2];
        // SAFETY: a two-element array for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
        let one = 1u8;
        // SAFETY: the write end just made; one valid byte.
        assert_eq!(
            unsafe { libc::write(ends[1], &one as *const u8 as *const _, 1) },
            1
        );
        let mut io = NotifyingPull {
            signal: &s,
            fds: [Watched {
                fd: ends[0],
                write: false,
            }],
        };
        let seen = s.generation();
        assert_eq!(s.wait_io(seen, None, &mut io), Wait::Changed);
        assert_eq!(s.fd_pending.load(Ordering::SeqCst), 0, "no eventfd write");
        assert!(!readable(s.fd()));
        // SAFETY: both ends are ours and closed once.
        unsafe {
            libc::close(ends[0]);
            libc::close(ends[1]);
        }
    }

    /// Counts pulls; no descriptors, so a sleep never pulls: only a spin does.
    struct CountingPull(usize);

    impl SelfServe for CountingPull {
        fn pull(&mut self) {
            self.0 += 1;
        }
        fn fds(&self) -> &[Watched] {
            &[]
        }
    }

    /// A large body that advances at each look at it: `next` gives the bytes still missing
    /// after `missing`; when it reaches 0 the message is complete (the signal notified).
    /// A spin looks once after it ends, so progress is counted in spins, not in time.
    struct LookBody<'a> {
        signal: &'a Signal,
        missing: std::cell::Cell<usize>,
        next: fn(usize) -> usize,
        looks: std::cell::Cell<usize>,
    }

    impl<'a> LookBody<'a> {
        fn new(signal: &'a Signal, next: fn(usize) -> usize) -> Self {
            LookBody {
                signal,
                missing: std::cell::Cell::new(usize::MAX),
                next,
                looks: std::cell::Cell::new(0),
            }
        }
    }

    impl SelfServe for LookBody<'_> {
        fn pull(&mut self) {}
        fn fds(&self) -> &[Watched] {
            &[]
        }
        fn body_missing(&self) -> Option<usize> {
            self.looks.set(self.looks.get() + 1);
            let missing = self.missing.get();
            if missing == 0 {
                return None;
            }
            let next = (self.next)(missing);
            self.missing.set(next);
            if next == 0 {
                self.signal.notify();
            }
            Some(missing)
        }
    }

    /// Halves what is missing at each look: done after 64 spins, each at the rate that
    /// keeps the body spin going.
    fn halve(missing: usize) -> usize {
        missing / 2
    }

    /// A policy that stopped spinning: only a body spin can catch anything.
    fn policy_off(s: &Signal) {
        let mut p = s.spin.lock().unwrap();
        p.slept(LONG);
        assert_eq!(p.budget_ns(), 0);
    }

    #[test]
    fn a_wait_spins_on_while_a_large_body_keeps_arriving() {
        let s = Signal::new().unwrap();
        policy_off(&s);
        let mut io = LookBody::new(&s, halve);
        // Without the body spin the wait would sleep, and nothing would end the sleep
        // before the deadline.
        let deadline = Some(Instant::now() + std::time::Duration::from_secs(2));
        let got = s.block(s.generation(), deadline, &mut io);
        if spin_max_ns() == 0 {
            assert_eq!(got, Wait::TimedOut, "FERROMQ_SPIN_US=0: nothing spins");
            return;
        }
        assert_eq!(got, Wait::Changed, "spun until the body was complete");
        assert_eq!(
            s.spin.lock().unwrap().budget_ns(),
            spin_max_ns(),
            "a caught body spin restores the policy's spin"
        );
    }

    #[test]
    fn a_wait_spinning_for_a_large_body_ends_at_its_deadline() {
        let s = Signal::new().unwrap();
        policy_off(&s);
        // 64 spins to go (at least 64 x 50 µs): the 1 ms deadline comes first.
        let mut io = LookBody::new(&s, halve);
        let deadline = Some(Instant::now() + std::time::Duration::from_millis(1));
        assert_eq!(s.block(s.generation(), deadline, &mut io), Wait::TimedOut);
        assert!(io.missing.get() > 0, "stopped before the body was complete");
    }

    #[test]
    fn a_wait_sleeps_once_a_large_body_stops_or_comes_too_slowly() {
        let stalled: fn(usize) -> usize = |m| m;
        let slow: fn(usize) -> usize = |m| m - m / 1000;
        for (what, next) in [("stalled", stalled), ("slow", slow)] {
            let s = Signal::new().unwrap();
            policy_off(&s);
            let mut io = LookBody::new(&s, next);
            let deadline = Some(Instant::now() + std::time::Duration::from_millis(20));
            assert_eq!(s.block(s.generation(), deadline, &mut io), Wait::TimedOut);
            if spin_max_ns() > 0 {
                // One look before the spin, one after it; then the sleep (no descriptors).
                assert_eq!(io.looks.get(), 2, "{what}: one spin, then sleep");
            }
        }
    }

    /// A body whose first piece a sleep's own read brings: readable `fd` (a pipe) wakes
    /// the sleep, and its pull drains the pipe and starts the body.
    struct BodyAfterWake<'a> {
        body: LookBody<'a>,
        fd: [Watched; 1],
        started: bool,
    }

    impl SelfServe for BodyAfterWake<'_> {
        fn pull(&mut self) {
            let mut b = [0u8; 8];
            // SAFETY: reads into a local buffer from our own non-blocking pipe.
            let n = unsafe { libc::read(self.fd[0].fd, b.as_mut_ptr().cast(), b.len()) };
            self.started |= n > 0;
        }
        fn fds(&self) -> &[Watched] {
            &self.fd
        }
        fn body_missing(&self) -> Option<usize> {
            if self.started {
                self.body.body_missing()
            } else {
                None
            }
        }
    }

    #[test]
    fn a_large_body_started_during_a_sleep_is_spun_for() {
        let s = Signal::new().unwrap();
        policy_off(&s);
        let mut pipe = [0 as RawFd; 2];
        // SAFETY: pipe2 fills the two-element array.
        assert_eq!(
            unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_NONBLOCK) },
            0
        );
        let mut io = BodyAfterWake {
            body: LookBody::new(&s, halve),
            fd: [Watched {
                fd: pipe[0],
                write: false,
            }],
            started: false,
        };
        let write_end = pipe[1];
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            // SAFETY: writes one byte from a local to the pipe's write end.
            unsafe { libc::write(write_end, [1u8].as_ptr().cast(), 1) };
        });
        let deadline = Some(Instant::now() + std::time::Duration::from_secs(2));
        let got = s.block(s.generation(), deadline, &mut io);
        writer.join().unwrap();
        // SAFETY: closing the pipe this test opened.
        unsafe {
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
        assert!(io.started, "the sleep's read started the body");
        if spin_max_ns() == 0 {
            assert_eq!(got, Wait::TimedOut, "FERROMQ_SPIN_US=0: nothing spins");
        } else {
            assert_eq!(got, Wait::Changed, "spun until the body was complete");
        }
    }

    #[test]
    fn a_callers_own_wait_is_spun_even_when_the_policy_stopped_spinning() {
        if spin_max_ns() == 0 {
            // FERROMQ_SPIN_US=0 in this environment: nothing spins, by design.
            let s = Signal::new().unwrap();
            let mut io = CountingPull(0);
            let d = Instant::now() + std::time::Duration::from_micros(300);
            assert_eq!(
                s.block_spinning(0, Some(d), 300_000, &mut io),
                Wait::TimedOut
            );
            assert_eq!(io.0, 0, "FERROMQ_SPIN_US=0 turns this spin off too");
            return;
        }
        let s = Signal::new().unwrap();
        // A failed full spin: the adaptive policy stops spinning for the next wait.
        {
            let mut p = s.spin.lock().unwrap();
            let max = p.budget_ns();
            assert!(max > 0);
            p.slept(LONG);
            assert_eq!(p.budget_ns(), 0);
        }
        let seen = s.generation();
        let soon = || Some(Instant::now() + std::time::Duration::from_micros(300));
        let mut io = CountingPull(0);
        assert_eq!(s.block(seen, soon(), &mut io), Wait::TimedOut);
        assert_eq!(io.0, 0, "the policy's wait sleeps at once");
        assert_eq!(
            s.block_spinning(seen, soon(), 300_000, &mut io),
            Wait::TimedOut
        );
        assert!(io.0 > 0, "the caller's wait is spun, reading between looks");
        assert_eq!(
            s.spin.lock().unwrap().budget_ns(),
            0,
            "policy left as it was"
        );
        // A change during the spin ends it.
        s.notify();
        let mut io = CountingPull(0);
        assert_eq!(
            s.block_spinning(seen, None, 300_000, &mut io),
            Wait::Changed
        );
    }

    #[test]
    fn on_one_cpu_a_wait_that_reads_sockets_sleeps_at_once() {
        let p = SpinPolicy::with_max(SPIN_MAX_NS).on_one_cpu();
        assert_eq!(p.budget_for(true), 0);
        assert!(p.sleeps_at_once(true));
        assert!(!p.spins_for_bodies());
        // An inproc wait still spins: it yields the core to the sender.
        assert_eq!(p.budget_for(false), SPIN_MAX_NS);
        assert!(!p.sleeps_at_once(false));
        // With more CPUs nothing changes.
        let p = SpinPolicy::with_max(SPIN_MAX_NS);
        assert_eq!(p.budget_for(true), SPIN_MAX_NS);
        assert!(p.spins_for_bodies());
    }

    #[test]
    fn on_one_cpu_a_socket_wait_neither_spins_nor_moves_the_policy() {
        let s = Signal::new().unwrap();
        *s.spin.lock().unwrap() = SpinPolicy::with_max(SPIN_MAX_NS).on_one_cpu();
        // The waiter's "socket": an eventfd nobody writes, so only a spin would read it.
        let quiet = Signal::new().unwrap();
        struct Reads {
            fds: Vec<Watched>,
            pulls: u32,
        }
        impl SelfServe for Reads {
            fn pull(&mut self) {
                self.pulls += 1;
            }
            fn fds(&self) -> &[Watched] {
                &self.fds
            }
        }
        let mut io = Reads {
            fds: vec![Watched {
                fd: quiet.fd,
                write: false,
            }],
            pulls: 0,
        };
        let seen = s.generation();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(5));
                s.notify();
            });
            assert_eq!(s.block(seen, None, &mut io), Wait::Changed);
        });
        assert_eq!(io.pulls, 0, "no spin, so no reads between looks");
        // A full spin that failed would have cut the budget to 0 (backing off).
        assert_eq!(s.spin.lock().unwrap().budget_ns(), SPIN_MAX_NS);
    }

    #[test]
    fn on_one_cpu_a_spin_yields_at_every_look() {
        use std::cell::Cell;
        // Counts looks (`changed`) and pulls over a spin whose change never comes.
        let count = |mut policy: SpinPolicy| {
            let (looks, pulls) = (Cell::new(0u64), Cell::new(0u64));
            let got = spin_until(
                200_000,
                &mut policy,
                || pulls.set(pulls.get() + 1),
                || {
                    looks.set(looks.get() + 1);
                    false
                },
            );
            assert!(!got);
            (looks.get(), pulls.get())
        };
        let (looks, pulls) = count(SpinPolicy::with_max(SPIN_MAX_NS).on_one_cpu());
        assert_eq!(looks, pulls, "one look per pull, a yield between");
        let (looks, pulls) = count(SpinPolicy::with_max(SPIN_MAX_NS));
        assert!(looks >= 32 * pulls, "{looks} looks, {pulls} pulls");
    }

    #[test]
    fn a_long_yield_that_brought_the_change_makes_spins_yield_at_once() {
        let mut p = SpinPolicy::with_max(SPIN_MAX_NS);
        assert_eq!(p.first_yield_ns(), YIELD_EVERY_NS);
        p.yielded(SHARED_CORE_YIELD_NS, true);
        assert_eq!(p.first_yield_ns(), 0);
        // Still sharing: stays at once.
        p.yielded(4 * SHARED_CORE_YIELD_NS, true);
        assert_eq!(p.first_yield_ns(), 0);
        // A quick yield: nobody else wanted the core (the threads were moved apart).
        p.yielded(SHARED_CORE_YIELD_NS - 1, true);
        assert_eq!(p.first_yield_ns(), YIELD_EVERY_NS);
        // Someone else ran, but the change did not come of it: not the peer.
        p.yielded(SHARED_CORE_YIELD_NS, true);
        p.yielded(10 * SHARED_CORE_YIELD_NS, false);
        assert_eq!(p.first_yield_ns(), YIELD_EVERY_NS);
    }

    #[test]
    fn a_starved_yield_stops_yields_for_a_while() {
        let mut p = SpinPolicy::with_max(SPIN_MAX_NS);
        assert!(p.take_yield_permit());
        p.yield_starved();
        for _ in 0..NO_YIELD_SPINS {
            assert!(!p.take_yield_permit());
        }
        assert!(p.take_yield_permit(), "then a yield is tried again");
        assert!(p.take_yield_permit());
        assert_eq!(p.budget_ns(), SPIN_MAX_NS, "spinning itself goes on");
    }

    #[test]
    fn caught_spins_keep_the_full_budget() {
        let mut p = SpinPolicy::with_max(SPIN_MAX_NS);
        assert_eq!(p.budget_ns(), SPIN_MAX_NS);
        for _ in 0..100 {
            p.spin_caught();
            assert_eq!(p.budget_ns(), SPIN_MAX_NS);
        }
    }

    #[test]
    fn an_idle_peer_turns_spinning_off() {
        let mut p = SpinPolicy::with_max(SPIN_MAX_NS);
        p.slept(LONG); // a full spin failed
        assert_eq!(p.budget_ns(), 0);
        for _ in 0..1000 {
            p.slept(LONG);
            assert_eq!(p.budget_ns(), 0, "long sleeps never probe");
        }
    }

    #[test]
    fn short_sleeps_probe_so_two_sleepers_get_back_in_step() {
        // Both sides of a ping-pong asleep: each sleep is about two wake-ups long.
        let mut p = SpinPolicy::with_max(SPIN_MAX_NS);
        p.slept(SHORT); // the first full spin failed: back off 1 wait
        assert_eq!(p.budget_ns(), 0);
        p.slept(SHORT); // skipped
        assert_eq!(p.budget_ns(), 0);
        p.slept(SHORT);
        assert_eq!(p.budget_ns(), SPIN_MAX_NS, "probe with a full spin");
        p.spin_caught();
        assert_eq!(p.budget_ns(), SPIN_MAX_NS);
    }

    #[test]
    fn failed_probes_back_off_exponentially_up_to_a_cap() {
        let mut p = SpinPolicy::with_max(SPIN_MAX_NS);
        let mut probes = Vec::new();
        for wait in 0..20_000u32 {
            if p.budget_ns() >= SPIN_MAX_NS {
                probes.push(wait);
            }
            // Oversubscribed cores: spins never catch, sleeps are short.
            p.slept(SHORT);
        }
        let gaps: Vec<u32> = probes.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.windows(2).all(|g| g[1] >= g[0]), "{gaps:?}");
        assert_eq!(gaps[0], 3, "{gaps:?}");
        assert_eq!(*gaps.last().unwrap(), (1 << MAX_BACKOFF) + 1, "{gaps:?}");
        // At the cap, under 0.1% of waits spin.
        assert!(probes.len() < 40, "{}", probes.len());
    }
}
