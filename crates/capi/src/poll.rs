//! `zmq_poll` / `zmq_ppoll`, and the waiting engine shared with the poller and the proxy.
//!
//! A socket is ready when its `events()` says so. Each socket also has an eventfd that
//! becomes readable when its state may have changed since `events()` was last called
//! (edge-triggered, like libzmq's ZMQ_FD). Waiting therefore means: ask every socket for
//! its events (which re-arms its eventfd), and if nothing is ready, `poll` the eventfds
//! together with the caller's plain descriptors, then ask again.
//!
//! Before it sleeps, the waiting thread reads the sockets' tcp/ipc connections itself and
//! polls their descriptors too (caller-driven I/O: one socket through
//! `Socket::wait_events`, several through `PollServe`), so a message does not wait for the
//! I/O thread to wake, read it and wake this thread in turn.

use crate::errno::{errno, fail, ffi, CResult};
use crate::socket::sock_ref;
use ferromq::{PollServe, Socket, POLLIN, POLLOUT};
use std::os::raw::{c_int, c_long, c_short, c_void};
use std::time::{Duration, Instant};

/// ZMQ_POLL* bits.
pub(crate) const ZMQ_POLLIN: c_short = 1;
pub(crate) const ZMQ_POLLOUT: c_short = 2;
pub(crate) const ZMQ_POLLERR: c_short = 4;
pub(crate) const ZMQ_POLLPRI: c_short = 8;

/// The C `zmq_pollitem_t`.
#[repr(C)]
pub struct zmq_pollitem_t {
    pub socket: *mut c_void,
    pub fd: c_int,
    pub events: c_short,
    pub revents: c_short,
}

/// Items handled without a heap allocation (libzmq also keeps 16 on the stack).
pub(crate) const STACK_ITEMS: usize = 16;

/// A slice of `n` copies of `fill`: in `stack` when it is large enough, else in `heap`.
pub(crate) fn scratch<'b, T: Copy>(
    stack: &'b mut [T],
    heap: &'b mut Vec<T>,
    n: usize,
    fill: T,
) -> &'b mut [T] {
    if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.resize(n, fill);
        heap
    }
}

/// One thing to wait on: a socket, or (when `sock` is None) a plain descriptor.
#[derive(Clone, Copy)]
pub(crate) struct Entry<'a> {
    pub(crate) sock: Option<&'a Socket>,
    pub(crate) fd: c_int,
    pub(crate) events: c_short,
    pub(crate) revents: c_short,
}

impl Entry<'_> {
    /// A placeholder that waits on nothing.
    pub(crate) const NONE: Self = Entry {
        sock: None,
        fd: -1,
        events: 0,
        revents: 0,
    };
}

const NO_PFD: libc::pollfd = libc::pollfd {
    fd: -1,
    events: 0,
    revents: 0,
};

/// Translates a plain descriptor's `poll` result into ZMQ_POLL* bits; anything beyond
/// in/out/pri (hang-up, error, invalid fd) is reported as ZMQ_POLLERR, as libzmq does.
fn fd_revents(revents: c_short) -> c_short {
    let mut r = 0;
    if revents & libc::POLLIN != 0 {
        r |= ZMQ_POLLIN;
    }
    if revents & libc::POLLOUT != 0 {
        r |= ZMQ_POLLOUT;
    }
    if revents & libc::POLLPRI != 0 {
        r |= ZMQ_POLLPRI;
    }
    if revents & !(libc::POLLIN | libc::POLLOUT | libc::POLLPRI) != 0 {
        r |= ZMQ_POLLERR;
    }
    r
}

/// The `poll` events to ask for a plain descriptor.
fn fd_events(events: c_short) -> c_short {
    let mut e = 0;
    if events & ZMQ_POLLIN != 0 {
        e |= libc::POLLIN;
    }
    if events & ZMQ_POLLOUT != 0 {
        e |= libc::POLLOUT;
    }
    if events & ZMQ_POLLPRI != 0 {
        e |= libc::POLLPRI;
    }
    e
}

/// A socket's `events()` as ZMQ_POLL* bits.
fn zmq_bits(ev: i16) -> c_short {
    let mut r = 0;
    if ev & POLLIN != 0 {
        r |= ZMQ_POLLIN;
    }
    if ev & POLLOUT != 0 {
        r |= ZMQ_POLLOUT;
    }
    r
}

/// Milliseconds left until `deadline` (rounded up), or -1 for no deadline.
fn remaining_ms(deadline: Option<Instant>) -> c_int {
    match deadline {
        None => -1,
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            left.as_micros().div_ceil(1000).min(c_int::MAX as u128) as c_int
        }
    }
}

/// `ppoll` with a millisecond timeout (-1: forever) and an optional signal mask.
fn sys_poll(
    fds: &mut [libc::pollfd],
    timeout_ms: c_int,
    sigmask: Option<&libc::sigset_t>,
) -> CResult<c_int> {
    let ts;
    let ts_ptr = if timeout_ms < 0 {
        std::ptr::null()
    } else {
        ts = libc::timespec {
            tv_sec: (timeout_ms / 1000) as libc::time_t,
            tv_nsec: ((timeout_ms % 1000) as libc::c_long) * 1_000_000,
        };
        &ts as *const libc::timespec
    };
    let mask_ptr = sigmask.map_or(std::ptr::null(), |m| m as *const libc::sigset_t);
    // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfds; the
    // timespec and mask pointers are NULL or point to values living across the call.
    let rc = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            ts_ptr,
            mask_ptr,
        )
    };
    if rc < 0 {
        return fail(errno());
    }
    Ok(rc)
}

/// Waits until at least one entry is ready or `timeout_ms` passes (-1: forever, 0: just
/// look). Fills every entry's `revents` and returns how many are non-zero. A signal
/// interrupting the wait gives EINTR; a terminated context gives ETERM.
pub(crate) fn wait(
    entries: &mut [Entry<'_>],
    timeout_ms: i64,
    sigmask: Option<&libc::sigset_t>,
) -> CResult<usize> {
    let ready = wait_any(entries, timeout_ms, sigmask)?;
    if ready == 0 {
        // Nothing came: the caller turns elsewhere, and the connections this poll read
        // itself go back to the I/O thread now rather than after their claims' 20 ms.
        for s in entries.iter().filter_map(|e| e.sock) {
            s.end_idle_claims();
        }
    }
    Ok(ready)
}

/// `wait` without its ending.
fn wait_any(
    entries: &mut [Entry<'_>],
    timeout_ms: i64,
    sigmask: Option<&libc::sigset_t>,
) -> CResult<usize> {
    let deadline =
        (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    if let ([one], None) = (&mut *entries, sigmask) {
        if let Some(s) = one.sock.filter(|_| timeout_ms != 0) {
            // One socket: its own wait reads its connections while it waits.
            let mut mask = 0;
            if one.events & ZMQ_POLLIN != 0 {
                mask |= POLLIN;
            }
            if one.events & ZMQ_POLLOUT != 0 {
                mask |= POLLOUT;
            }
            if mask != 0 {
                let ev = s.wait_events(mask, deadline)?;
                one.revents = zmq_bits(ev) & one.events;
                return Ok(usize::from(one.revents != 0));
            }
        }
    }
    // Only plain descriptors need the system call when some socket is ready (or when the
    // caller only looks); sockets answer from their own state. libzmq polls regardless.
    let has_fds = entries.iter().any(|e| e.sock.is_none());
    let (mut stack, mut heap) = ([NO_PFD; STACK_ITEMS], Vec::new());
    let pfds = scratch(&mut stack, &mut heap, entries.len(), NO_PFD);
    for (p, e) in pfds.iter_mut().zip(entries.iter()) {
        *p = match e.sock {
            Some(s) => libc::pollfd {
                // Sockets not asked about anything are not waited on (negative fd).
                fd: if e.events & (ZMQ_POLLIN | ZMQ_POLLOUT) != 0 {
                    s.wait_fd()
                } else {
                    -1
                },
                events: libc::POLLIN,
                revents: 0,
            },
            None => libc::pollfd {
                fd: e.fd,
                events: fd_events(e.events),
                revents: 0,
            },
        };
    }
    // Several sockets: before the first sleep, read their connections from this thread
    // and claim them, then sleep on their descriptors too (see `PollServe`).
    let mut serve: Option<PollServe> = None;
    let mut served_pfds: Vec<libc::pollfd> = Vec::new();
    // The first look leaves the sockets' eventfds as they are: when a socket is ready
    // there is no sleep, and arming every eventfd made the next message to each of them
    // cost its sender a write and this thread a read.
    let mut armed = false;
    loop {
        let mut ready = 0;
        for e in entries.iter_mut() {
            e.revents = 0;
            if let Some(s) = e.sock {
                // `events` also re-arms the socket's eventfd: any later change makes it
                // readable. A poll that will not sleep and finds no input is the caller's
                // look before other work (see `events_peek`); one that may sleep is
                // marked by its armed look.
                let ev = if armed {
                    s.events_polled()?
                } else {
                    s.events_peek(timeout_ms == 0 && e.events & ZMQ_POLLIN != 0)?
                };
                e.revents = zmq_bits(ev) & e.events;
                if e.revents != 0 {
                    ready += 1;
                }
            }
        }
        if ready == 0 && timeout_ms != 0 && !armed {
            // About to sleep on the eventfds: look again, arming them.
            armed = true;
            continue;
        }
        let wait_ms = if ready > 0 || timeout_ms == 0 {
            if !has_fds {
                return Ok(ready);
            }
            0
        } else {
            remaining_ms(deadline)
        };
        if wait_ms != 0 && serve.is_none() {
            let mut s = PollServe::new();
            let mut moved = false;
            for e in entries.iter() {
                match e.sock {
                    Some(sock) if e.events & ZMQ_POLLIN != 0 => moved |= s.add(sock),
                    Some(sock) if e.events & ZMQ_POLLOUT != 0 => s.watch(sock),
                    _ => {}
                }
            }
            serve = Some(s);
            if moved {
                continue;
            }
        }
        // Spin before sleeping, as a blocking receive does, unless a plain descriptor is
        // waited on too (a spin cannot see it without a system call).
        let spun = match &mut serve {
            Some(s) if wait_ms != 0 && !has_fds => {
                if s.spin() {
                    continue;
                }
                true
            }
            _ => false,
        };
        let slept_from = spun.then(Instant::now);
        for p in pfds.iter_mut() {
            p.revents = 0;
        }
        match &mut serve {
            Some(s) if s.fds().next().is_some() => {
                served_pfds.clear();
                served_pfds.extend_from_slice(pfds);
                served_pfds.extend(s.fds().map(|(fd, write)| libc::pollfd {
                    fd,
                    events: libc::POLLIN | libc::POLLRDHUP | if write { libc::POLLOUT } else { 0 },
                    revents: 0,
                }));
                sys_poll(&mut served_pfds, wait_ms, sigmask)?;
                let (own, conns) = served_pfds.split_at(pfds.len());
                pfds.copy_from_slice(own);
                if conns.iter().any(|p| p.revents != 0) {
                    s.pull();
                }
            }
            _ => {
                sys_poll(pfds, wait_ms, sigmask)?;
            }
        }
        if let (Some(t), Some(s)) = (slept_from, &mut serve) {
            s.slept(t.elapsed().as_nanos() as u64);
        }
        for (e, p) in entries.iter_mut().zip(pfds.iter()) {
            if e.sock.is_none() {
                e.revents = fd_revents(p.revents);
                if e.revents != 0 {
                    ready += 1;
                }
            }
        }
        if ready > 0 || timeout_ms == 0 {
            return Ok(ready);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(0);
        }
        // A socket's eventfd fired (or the wait ended early): look at the sockets again.
    }
}

/// Blocks until any of the sockets' state may have changed since their `events()` was last
/// called, or a signal arrives (EINTR). Used by the proxy.
pub(crate) fn wait_for_change(socks: &[&Socket]) -> CResult<()> {
    let mut pfds: Vec<libc::pollfd> = socks
        .iter()
        .map(|s| libc::pollfd {
            fd: s.wait_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    sys_poll(&mut pfds, -1, None)?;
    Ok(())
}

/// Sleeps like `zmq_poll` with no items (interruptible: EINTR).
fn idle(timeout_ms: i64, sigmask: Option<&libc::sigset_t>) -> CResult<c_int> {
    if timeout_ms == 0 {
        return Ok(0);
    }
    let deadline =
        (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms as u64));
    loop {
        sys_poll(&mut [], remaining_ms(deadline), sigmask)?;
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(0);
        }
    }
}

/// Body of `zmq_poll` / `zmq_ppoll`.
///
/// # Safety
/// `items` must be NULL or point to `nitems` valid items whose sockets are NULL or live.
unsafe fn poll_items(
    items: *mut zmq_pollitem_t,
    nitems: c_int,
    timeout: c_long,
    sigmask: Option<&libc::sigset_t>,
) -> CResult<c_int> {
    if nitems < 0 {
        return fail(libc::EINVAL);
    }
    if nitems == 0 {
        return idle(timeout, sigmask);
    }
    if items.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: non-NULL and holding nitems items per the contract.
    let items = unsafe { std::slice::from_raw_parts_mut(items, nitems as usize) };
    let (mut stack, mut heap) = ([Entry::NONE; STACK_ITEMS], Vec::new());
    let entries = scratch(&mut stack, &mut heap, items.len(), Entry::NONE);
    for (e, it) in entries.iter_mut().zip(items.iter()) {
        let sock = if it.socket.is_null() {
            None
        } else {
            // SAFETY: forwarded caller contract.
            Some(unsafe { sock_ref(it.socket)? })
        };
        *e = Entry {
            sock,
            fd: it.fd,
            events: it.events,
            revents: 0,
        };
    }
    let n = wait(entries, timeout, sigmask)?;
    for (it, e) in items.iter_mut().zip(entries.iter()) {
        it.revents = e.revents;
    }
    Ok(n as c_int)
}

/// Waits for events on sockets and plain descriptors. `timeout` in ms; -1 waits forever,
/// 0 only looks. Returns the number of items with events.
///
/// # Safety
/// `items` must be NULL or point to `nitems` valid items whose sockets are NULL or live.
#[no_mangle]
pub unsafe extern "C" fn zmq_poll(
    items: *mut zmq_pollitem_t,
    nitems: c_int,
    timeout: c_long,
) -> c_int {
    // SAFETY: forwarded caller contract.
    ffi(-1, || unsafe { poll_items(items, nitems, timeout, None) })
}

/// Draft: `zmq_poll` with `sigmask` installed while waiting (as `ppoll`).
///
/// # Safety
/// As `zmq_poll`; `sigmask` must be NULL or a valid signal set.
#[no_mangle]
pub unsafe extern "C" fn zmq_ppoll(
    items: *mut zmq_pollitem_t,
    nitems: c_int,
    timeout: c_long,
    sigmask: *const libc::sigset_t,
) -> c_int {
    ffi(-1, || {
        // SAFETY: NULL or a valid signal set per the contract.
        let mask = unsafe { sigmask.as_ref() };
        // SAFETY: forwarded caller contract.
        unsafe { poll_items(items, nitems, timeout, mask) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_event_translation() {
        assert_eq!(
            fd_events(ZMQ_POLLIN | ZMQ_POLLOUT),
            libc::POLLIN | libc::POLLOUT
        );
        assert_eq!(fd_revents(libc::POLLIN), ZMQ_POLLIN);
        assert_eq!(fd_revents(libc::POLLHUP), ZMQ_POLLERR);
        assert_eq!(
            fd_revents(libc::POLLNVAL | libc::POLLOUT),
            ZMQ_POLLERR | ZMQ_POLLOUT
        );
    }

    #[test]
    fn several_sockets_are_served_by_the_waiting_thread_and_lose_nothing() {
        use ferromq::options::id as opt;
        use ferromq::{Context, SocketType};
        // Two PULLs (tcp and ipc), each fed 1 MiB messages by its own PUSH thread, waited
        // on together: the waiting thread reads (and claims) both connections itself
        // between polls. Every message must arrive whole and in order on its socket, and a
        // quiet wait must still end at its deadline.
        let ctx = Context::new();
        let mut pulls = Vec::new();
        let mut senders = Vec::new();
        for (k, ep) in ["tcp://127.0.0.1:*", "ipc://@ferromq-poll-serve"]
            .iter()
            .enumerate()
        {
            let pull = ctx.socket(SocketType::Pull).unwrap();
            pull.set_int(opt::LINGER, 0).unwrap();
            pull.bind(ep).unwrap();
            let ep = pull.last_endpoint().unwrap();
            let push = ctx.socket(SocketType::Push).unwrap();
            push.connect(&ep).unwrap();
            senders.push(std::thread::spawn(move || {
                for i in 0..30u32 {
                    let body: Vec<u8> = (0..1u32 << 20).map(|j| (j ^ i ^ k as u32) as u8).collect();
                    push.send(&body, 0).unwrap();
                }
                push
            }));
            pulls.push(pull);
        }
        let mut next = [0u32; 2];
        while next != [30, 30] {
            let mut e = [0, 1].map(|k| Entry {
                sock: Some(&pulls[k]),
                fd: -1,
                events: ZMQ_POLLIN,
                revents: 0,
            });
            assert!(wait(&mut e, 5000, None).unwrap() > 0, "nothing within 5 s");
            for k in 0..2 {
                if e[k].revents & ZMQ_POLLIN != 0 {
                    let m = pulls[k].recv(ferromq::DONTWAIT).unwrap();
                    let i = next[k];
                    let ok = m.data().len() == 1 << 20
                        && m.data()
                            .iter()
                            .enumerate()
                            .all(|(j, &b)| b == (j as u32 ^ i ^ k as u32) as u8);
                    assert!(ok, "message {i} on socket {k}");
                    next[k] += 1;
                }
            }
        }
        let mut e = [0, 1].map(|k| Entry {
            sock: Some(&pulls[k]),
            fd: -1,
            events: ZMQ_POLLIN,
            revents: 0,
        });
        let start = Instant::now();
        assert_eq!(wait(&mut e, 30, None).unwrap(), 0);
        assert!(start.elapsed() >= Duration::from_millis(30));
        let pushes: Vec<_> = senders.into_iter().map(|t| t.join().unwrap()).collect();
        drop((pushes, pulls));
        ctx.term().unwrap();
    }

    #[test]
    fn a_poll_that_will_not_sleep_and_finds_no_input_sends_what_was_held() {
        use ferromq::options::id as opt;
        use ferromq::{Context, SocketType};
        // A thread streaming 64 KiB messages over tcp holds the bytes past the last whole
        // segment for its next write. An event loop's zmq_poll with timeout 0 that finds
        // no input is its turn to other work: the held bytes go out then, not at the I/O
        // thread's timer a millisecond later.
        let ctx = Context::new();
        let b = ctx.socket(SocketType::Dealer).unwrap();
        b.set_int(opt::LINGER, 0).unwrap();
        b.set_int(opt::RCVTIMEO, 1500).unwrap();
        b.bind("tcp://127.0.0.1:*").unwrap();
        let a = ctx.socket(SocketType::Dealer).unwrap();
        a.set_int(opt::LINGER, 0).unwrap();
        a.connect(&b.last_endpoint().unwrap()).unwrap();
        a.send(b"hello", 0).unwrap();
        assert_eq!(b.recv(0).unwrap().data(), b"hello");
        let reader = std::thread::spawn(move || {
            let mut got = 0;
            while b.recv(0).is_ok() {
                got += 1;
            }
            got
        });
        let body = vec![7u8; 64 * 1024];
        const LOOKS: usize = 10;
        let (mut sent, mut looks, mut written) = (0, 0, 0);
        for _ in 0..1000 {
            for _ in 0..16 {
                a.send(&body, 0).unwrap();
            }
            sent += 16;
            if a.held_tail().1 > 0 {
                looks += 1;
                let mut e = [Entry {
                    sock: Some(&a),
                    fd: -1,
                    events: ZMQ_POLLIN,
                    revents: 0,
                }];
                assert_eq!(wait(&mut e, 0, None).unwrap(), 0);
                if a.held_tail().1 == 0 {
                    written += 1;
                }
                if looks == LOOKS {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(looks, LOOKS, "bursts seldom ended with bytes held");
        // Written by the poll unless the I/O thread had the connection at that moment.
        assert!(
            written * 2 >= LOOKS,
            "held bytes still held right after {} of {LOOKS} polls",
            LOOKS - written
        );
        assert_eq!(reader.join().unwrap(), sent, "a message never came");
        drop(a);
        ctx.term().unwrap();
    }

    #[test]
    fn a_wait_on_several_sockets_ends_at_a_change_of_any_kind() {
        use ferromq::options::id as opt;
        use ferromq::{Context, SocketType};
        // A PUSH at its HWM waited on for room, beside a PULL waited on for input (the
        // waiting thread spins on both, then sleeps): a peer draining the PUSH, then one
        // sending to the PULL, each ends a wait with that socket's event, many times over.
        let ctx = Context::new();
        let push = ctx.socket(SocketType::Push).unwrap();
        push.set_int(opt::SNDHWM, 1).unwrap();
        push.bind("inproc://several-push").unwrap();
        let drain = ctx.socket(SocketType::Pull).unwrap();
        drain.set_int(opt::RCVHWM, 1).unwrap();
        drain.connect("inproc://several-push").unwrap();
        let pull = ctx.socket(SocketType::Pull).unwrap();
        pull.bind("inproc://several-pull").unwrap();
        let feed = ctx.socket(SocketType::Push).unwrap();
        feed.connect("inproc://several-pull").unwrap();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<bool>();
        let peer = std::thread::spawn(move || {
            // true: take one message off the PUSH; false: send one to the PULL.
            while let Ok(drain_one) = go_rx.recv() {
                std::thread::sleep(Duration::from_micros(200));
                if drain_one {
                    drain.recv(0).unwrap();
                } else {
                    feed.send(b"x", 0).unwrap();
                }
            }
            (drain, feed)
        });
        for round in 0..40 {
            // Fill the PUSH until it refuses.
            while push.send(b"y", ferromq::DONTWAIT).is_ok() {}
            let drain_one = round % 2 == 0;
            go_tx.send(drain_one).unwrap();
            let mut e = [
                Entry {
                    sock: Some(&push),
                    fd: -1,
                    events: ZMQ_POLLOUT,
                    revents: 0,
                },
                Entry {
                    sock: Some(&pull),
                    fd: -1,
                    events: ZMQ_POLLIN,
                    revents: 0,
                },
            ];
            assert_eq!(wait(&mut e, 5000, None).unwrap(), 1, "round {round}");
            if drain_one {
                assert_eq!((e[0].revents, e[1].revents), (ZMQ_POLLOUT, 0));
            } else {
                assert_eq!((e[0].revents, e[1].revents), (0, ZMQ_POLLIN));
                assert_eq!(pull.recv(0).unwrap().data(), b"x");
            }
        }
        drop(go_tx);
        let (drain, feed) = peer.join().unwrap();
        for s in [&push, &pull, &drain, &feed] {
            s.set_int(opt::LINGER, 0).unwrap();
        }
        drop((push, pull, drain, feed));
        ctx.term().unwrap();
    }

    #[test]
    fn plain_fds_are_polled() {
        let mut fds = [0; 2];
        // SAFETY: fds is a writable array of two ints.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let mut e = [Entry {
            sock: None,
            fd: fds[0],
            events: ZMQ_POLLIN,
            revents: 0,
        }];
        assert_eq!(wait(&mut e, 0, None).unwrap(), 0);
        let start = Instant::now();
        assert_eq!(wait(&mut e, 30, None).unwrap(), 0);
        assert!(start.elapsed() >= Duration::from_millis(30));
        // SAFETY: writing one byte from a valid buffer to our pipe.
        unsafe { libc::write(fds[1], b"x".as_ptr() as _, 1) };
        assert_eq!(wait(&mut e, -1, None).unwrap(), 1);
        assert_eq!(e[0].revents, ZMQ_POLLIN);
        // SAFETY: closing the descriptors we opened.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}
