//! Draft poller API (`zmq_poller_*`): a reusable set of sockets and descriptors to wait on,
//! built on the same waiting engine as `zmq_poll`.

use crate::errno::{fail, ffi, CResult};
use crate::poll::{scratch, wait, Entry, STACK_ITEMS};
use crate::socket::sock_ref;
use std::os::raw::{c_int, c_long, c_short, c_void};
use std::ptr;
use std::time::Duration;

/// Marks a live poller handle.
const POLLER_TAG: u32 = 0xcafe_babe;

/// The C `zmq_poller_event_t`.
#[repr(C)]
pub struct zmq_poller_event_t {
    pub socket: *mut c_void,
    pub fd: c_int,
    pub user_data: *mut c_void,
    pub events: c_short,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    /// A socket, by the C pointer the caller registered.
    Socket(*mut c_void),
    Fd(c_int),
}

struct Item {
    target: Target,
    user_data: *mut c_void,
    events: c_short,
}

#[repr(C)]
struct Poller {
    tag: u32,
    items: Vec<Item>,
}

/// Borrows the poller behind a C pointer; EFAULT for NULL or a non-poller pointer.
///
/// # Safety
/// `p` must be NULL or a pointer obtained from this library that has not been freed, with
/// no other live reference to the poller during `'a`.
unsafe fn poller_mut<'a>(p: *mut c_void) -> CResult<&'a mut Poller> {
    if p.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: per the contract p points to one of our live, tag-first handles; only a
    // matching tag lets us use the rest as a Poller.
    let h = unsafe { &mut *(p as *mut Poller) };
    if h.tag != POLLER_TAG {
        return fail(libc::EFAULT);
    }
    Ok(h)
}

/// Creates an empty poller.
#[no_mangle]
pub extern "C" fn zmq_poller_new() -> *mut c_void {
    ffi(ptr::null_mut(), || {
        let p = Box::new(Poller {
            tag: POLLER_TAG,
            items: Vec::new(),
        });
        Ok(Box::into_raw(p) as *mut c_void)
    })
}

/// Frees a poller and sets `*poller_p` to NULL.
///
/// # Safety
/// `poller_p` must be NULL or point to NULL or a live poller pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_destroy(poller_p: *mut *mut c_void) -> c_int {
    ffi(-1, || {
        if poller_p.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: non-NULL and valid per the contract.
        let p = unsafe { *poller_p };
        // SAFETY: forwarded caller contract.
        unsafe { poller_mut(p)? };
        // SAFETY: the tag matched, so p came from Box::into_raw in zmq_poller_new.
        let mut boxed = unsafe { Box::from_raw(p as *mut Poller) };
        boxed.tag = 0;
        drop(boxed);
        // SAFETY: as above, poller_p is writable.
        unsafe { *poller_p = ptr::null_mut() };
        Ok(0)
    })
}

/// Number of registered sockets and descriptors.
///
/// # Safety
/// `poller` must be NULL or a live poller pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_size(poller: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract.
    ffi(-1, || {
        Ok(unsafe { poller_mut(poller)? }.items.len() as c_int)
    })
}

fn add(p: &mut Poller, target: Target, user_data: *mut c_void, events: c_short) -> CResult<c_int> {
    if p.items.iter().any(|i| i.target == target) {
        return fail(libc::EINVAL);
    }
    p.items.push(Item {
        target,
        user_data,
        events,
    });
    Ok(0)
}

fn modify(p: &mut Poller, target: Target, events: c_short) -> CResult<c_int> {
    match p.items.iter_mut().find(|i| i.target == target) {
        Some(i) => {
            i.events = events;
            Ok(0)
        }
        None => fail(libc::EINVAL),
    }
}

fn remove(p: &mut Poller, target: Target) -> CResult<c_int> {
    match p.items.iter().position(|i| i.target == target) {
        Some(idx) => {
            p.items.remove(idx);
            Ok(0)
        }
        None => fail(libc::EINVAL),
    }
}

/// Registers a socket (ENOTSOCK if not one; EINVAL if already registered).
///
/// # Safety
/// `poller` must be NULL or a live poller; `socket` NULL or a live socket pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add(
    poller: *mut c_void,
    socket: *mut c_void,
    user_data: *mut c_void,
    events: c_short,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let p = unsafe { poller_mut(poller)? };
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        add(p, Target::Socket(socket), user_data, events)
    })
}

/// Changes the events waited for on a registered socket (EINVAL if not registered).
///
/// # Safety
/// As `zmq_poller_add`.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_modify(
    poller: *mut c_void,
    socket: *mut c_void,
    events: c_short,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let p = unsafe { poller_mut(poller)? };
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        modify(p, Target::Socket(socket), events)
    })
}

/// Unregisters a socket (EINVAL if not registered).
///
/// # Safety
/// As `zmq_poller_add`.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_remove(poller: *mut c_void, socket: *mut c_void) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let p = unsafe { poller_mut(poller)? };
        // SAFETY: forwarded caller contract.
        unsafe { sock_ref(socket)? };
        remove(p, Target::Socket(socket))
    })
}

/// Registers a plain descriptor (EBADF for -1; EINVAL if already registered).
///
/// # Safety
/// `poller` must be NULL or a live poller pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_add_fd(
    poller: *mut c_void,
    fd: c_int,
    user_data: *mut c_void,
    events: c_short,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let p = unsafe { poller_mut(poller)? };
        if fd < 0 {
            return fail(libc::EBADF);
        }
        add(p, Target::Fd(fd), user_data, events)
    })
}

/// Changes the events waited for on a registered descriptor.
///
/// # Safety
/// `poller` must be NULL or a live poller pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_modify_fd(
    poller: *mut c_void,
    fd: c_int,
    events: c_short,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let p = unsafe { poller_mut(poller)? };
        if fd < 0 {
            return fail(libc::EBADF);
        }
        modify(p, Target::Fd(fd), events)
    })
}

/// Unregisters a descriptor.
///
/// # Safety
/// `poller` must be NULL or a live poller pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_remove_fd(poller: *mut c_void, fd: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let p = unsafe { poller_mut(poller)? };
        if fd < 0 {
            return fail(libc::EBADF);
        }
        remove(p, Target::Fd(fd))
    })
}

/// Body of the wait calls: fills up to `out.len()` events, EAGAIN if none in time.
///
/// # Safety
/// Every registered socket pointer must still be live.
unsafe fn wait_into(p: &Poller, out: &mut [zmq_poller_event_t], timeout: c_long) -> CResult<c_int> {
    if p.items.is_empty() {
        // Nothing can ever happen: libzmq refuses to wait forever, and otherwise reports
        // a timeout after sleeping.
        if timeout < 0 {
            return fail(libc::EFAULT);
        }
        if timeout > 0 {
            std::thread::sleep(Duration::from_millis(timeout as u64));
        }
        return fail(libc::EAGAIN);
    }
    let (mut stack, mut heap) = ([Entry::NONE; STACK_ITEMS], Vec::new());
    let entries = scratch(&mut stack, &mut heap, p.items.len(), Entry::NONE);
    for (e, item) in entries.iter_mut().zip(&p.items) {
        *e = match item.target {
            Target::Socket(s) => Entry {
                // SAFETY: forwarded caller contract.
                sock: Some(unsafe { sock_ref(s)? }),
                fd: -1,
                events: item.events,
                revents: 0,
            },
            Target::Fd(fd) => Entry {
                sock: None,
                fd,
                events: item.events,
                revents: 0,
            },
        };
    }
    let n = wait(entries, timeout, None)?;
    if n == 0 {
        return fail(libc::EAGAIN);
    }
    let mut found = 0;
    for (item, e) in p.items.iter().zip(entries.iter()) {
        if found == out.len() {
            break;
        }
        if e.revents == 0 {
            continue;
        }
        out[found] = zmq_poller_event_t {
            socket: match item.target {
                Target::Socket(s) => s,
                Target::Fd(_) => ptr::null_mut(),
            },
            fd: match item.target {
                Target::Socket(_) => -1,
                Target::Fd(fd) => fd,
            },
            user_data: item.user_data,
            events: e.revents,
        };
        found += 1;
    }
    Ok(found as c_int)
}

/// Waits for one event (see `zmq_poller_wait_all`). On failure the event is zeroed.
///
/// # Safety
/// `poller` must be NULL or a live poller whose sockets are live; `event` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_wait(
    poller: *mut c_void,
    event: *mut zmq_poller_event_t,
    timeout: c_long,
) -> c_int {
    // SAFETY: forwarded caller contract.
    let rc = unsafe { zmq_poller_wait_all(poller, event, 1, timeout) };
    if rc < 0 && !event.is_null() {
        let saved = crate::errno::errno();
        // SAFETY: event is writable per the contract; all-zero is a valid event.
        unsafe { ptr::write_bytes(event, 0, 1) };
        crate::errno::set_errno(saved);
    }
    rc
}

/// Waits up to `timeout` ms (-1: forever) for events; fills up to `n_events` entries and
/// returns how many. -1 with EAGAIN if nothing happened in time.
///
/// # Safety
/// `poller` must be NULL or a live poller whose sockets are live; `events` NULL or
/// writable for `n_events` entries.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_wait_all(
    poller: *mut c_void,
    events: *mut zmq_poller_event_t,
    n_events: c_int,
    timeout: c_long,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let p = unsafe { poller_mut(poller)? };
        if events.is_null() {
            return fail(libc::EFAULT);
        }
        if n_events < 0 {
            return fail(libc::EINVAL);
        }
        // SAFETY: non-NULL and writable for n_events entries per the contract.
        let out = unsafe { std::slice::from_raw_parts_mut(events, n_events as usize) };
        // SAFETY: forwarded caller contract.
        unsafe { wait_into(p, out, timeout) }
    })
}

/// Draft: a descriptor signalling the poller is not provided (ENOTSUP).
///
/// # Safety
/// `poller` must be NULL or a live poller pointer.
#[no_mangle]
pub unsafe extern "C" fn zmq_poller_fd(poller: *mut c_void, _fd: *mut c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        unsafe { poller_mut(poller)? };
        fail(libc::ENOTSUP)
    })
}
