//! Timer sets (`zmq_timers_*`): callbacks registered with an interval, fired by
//! `zmq_timers_execute` once due, then rescheduled. Handlers may call back into the same
//! timer set (e.g. to cancel themselves); no lock is held while they run.

use crate::errno::{fail, ffi, CResult};
use std::os::raw::{c_int, c_long, c_void};
use std::ptr;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Marks a live timer set.
const TIMERS_TAG: u32 = 0xcafe_dead;

/// `zmq_timer_fn`.
pub type zmq_timer_fn = unsafe extern "C" fn(timer_id: c_int, arg: *mut c_void);

struct Timer {
    id: c_int,
    interval: Duration,
    due: Instant,
    handler: zmq_timer_fn,
    arg: *mut c_void,
}

struct State {
    next_id: c_int,
    timers: Vec<Timer>,
}

#[repr(C)]
struct Timers {
    tag: u32,
    state: Mutex<State>,
}

impl Timers {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    fn find(&mut self, id: c_int) -> CResult<&mut Timer> {
        match self.timers.iter_mut().find(|t| t.id == id) {
            Some(t) => Ok(t),
            None => fail(libc::EINVAL),
        }
    }
}

/// Borrows a timer set; EFAULT for NULL or a non-timers pointer.
///
/// # Safety
/// `p` must be NULL or a pointer obtained from this library that has not been freed.
unsafe fn timers_ref<'a>(p: *mut c_void) -> CResult<&'a Timers> {
    if p.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: per the contract p points to one of our live, tag-first handles; only a
    // matching tag lets us use the rest as Timers.
    let t = unsafe { &*(p as *const Timers) };
    if t.tag != TIMERS_TAG {
        return fail(libc::EFAULT);
    }
    Ok(t)
}

fn ms(interval: usize) -> Duration {
    Duration::from_millis(interval as u64)
}

/// Creates an empty timer set.
#[no_mangle]
pub extern "C" fn zmq_timers_new() -> *mut c_void {
    ffi(ptr::null_mut(), || {
        let t = Box::new(Timers {
            tag: TIMERS_TAG,
            state: Mutex::new(State {
                next_id: 1,
                timers: Vec::new(),
            }),
        });
        Ok(Box::into_raw(t) as *mut c_void)
    })
}

/// Frees a timer set and sets `*timers_p` to NULL.
///
/// # Safety
/// `timers_p` must be NULL or point to NULL or a live timer set.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_destroy(timers_p: *mut *mut c_void) -> c_int {
    ffi(-1, || {
        if timers_p.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: non-NULL and valid per the contract.
        let p = unsafe { *timers_p };
        // SAFETY: forwarded caller contract.
        unsafe { timers_ref(p)? };
        // SAFETY: the tag matched, so p came from Box::into_raw in zmq_timers_new.
        let mut boxed = unsafe { Box::from_raw(p as *mut Timers) };
        boxed.tag = 0;
        drop(boxed);
        // SAFETY: timers_p is writable per the contract.
        unsafe { *timers_p = ptr::null_mut() };
        Ok(0)
    })
}

/// Adds a timer firing every `interval` ms; returns its id (EFAULT for a NULL handler).
///
/// # Safety
/// `timers` must be NULL or a live timer set; `handler` callable with `arg`.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_add(
    timers: *mut c_void,
    interval: usize,
    handler: Option<zmq_timer_fn>,
    arg: *mut c_void,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let t = unsafe { timers_ref(timers)? };
        let Some(handler) = handler else {
            return fail(libc::EFAULT);
        };
        let mut st = t.lock();
        let id = st.next_id;
        st.next_id = st.next_id.checked_add(1).unwrap_or(1);
        st.timers.push(Timer {
            id,
            interval: ms(interval),
            due: Instant::now() + ms(interval),
            handler,
            arg,
        });
        Ok(id)
    })
}

/// Removes a timer (EINVAL if unknown).
///
/// # Safety
/// `timers` must be NULL or a live timer set.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_cancel(timers: *mut c_void, timer_id: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let t = unsafe { timers_ref(timers)? };
        let mut st = t.lock();
        let idx = st
            .timers
            .iter()
            .position(|x| x.id == timer_id)
            .ok_or(crate::errno::Errno(libc::EINVAL))?;
        st.timers.remove(idx);
        Ok(0)
    })
}

/// Changes a timer's interval and restarts it.
///
/// # Safety
/// `timers` must be NULL or a live timer set.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_set_interval(
    timers: *mut c_void,
    timer_id: c_int,
    interval: usize,
) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let t = unsafe { timers_ref(timers)? };
        let mut st = t.lock();
        let timer = st.find(timer_id)?;
        timer.interval = ms(interval);
        timer.due = Instant::now() + timer.interval;
        Ok(0)
    })
}

/// Restarts a timer's interval from now.
///
/// # Safety
/// `timers` must be NULL or a live timer set.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_reset(timers: *mut c_void, timer_id: c_int) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let t = unsafe { timers_ref(timers)? };
        let mut st = t.lock();
        let timer = st.find(timer_id)?;
        timer.due = Instant::now() + timer.interval;
        Ok(0)
    })
}

/// Milliseconds until the next timer is due (0 if one is overdue, -1 if there are none).
///
/// # Safety
/// `timers` must be NULL or a live timer set.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_timeout(timers: *mut c_void) -> c_long {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let t = unsafe { timers_ref(timers)? };
        let st = t.lock();
        let Some(next) = st.timers.iter().map(|x| x.due).min() else {
            return Ok(-1);
        };
        let left = next.saturating_duration_since(Instant::now());
        // Rounded up, so that sleeping this long always finds the timer due.
        Ok(left.as_micros().div_ceil(1000).min(c_long::MAX as u128) as c_long)
    })
}

/// Runs the handlers of all due timers, earliest first, and reschedules them.
///
/// # Safety
/// `timers` must be NULL or a live timer set.
#[no_mangle]
pub unsafe extern "C" fn zmq_timers_execute(timers: *mut c_void) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let t = unsafe { timers_ref(timers)? };
        let now = Instant::now();
        let mut due: Vec<(Instant, c_int, zmq_timer_fn, *mut c_void)> = {
            let mut st = t.lock();
            st.timers
                .iter_mut()
                .filter(|x| x.due <= now)
                .map(|x| {
                    let fired = (x.due, x.id, x.handler, x.arg);
                    x.due = now + x.interval;
                    fired
                })
                .collect()
        };
        due.sort_by_key(|d| d.0);
        for (_, id, handler, arg) in due {
            // An earlier handler may have cancelled this timer.
            let live = t.lock().timers.iter().any(|x| x.id == id);
            if live {
                // SAFETY: the handler and argument the caller registered together.
                unsafe { handler(id, arg) };
            }
        }
        Ok(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering};

    static FIRED: AtomicI32 = AtomicI32::new(0);

    unsafe extern "C" fn on_timer(id: c_int, arg: *mut c_void) {
        FIRED.fetch_add(1, Ordering::SeqCst);
        // Cancel ourselves from inside the handler.
        // SAFETY: arg is the live timer set registered in the test.
        unsafe { zmq_timers_cancel(arg, id) };
    }

    #[test]
    fn timers_fire_and_cancel() {
        let mut t = zmq_timers_new();
        // SAFETY: t is a live timer set until destroyed at the end.
        unsafe {
            assert_eq!(zmq_timers_timeout(t), -1);
            let id = zmq_timers_add(t, 10, Some(on_timer), t);
            assert_eq!(id, 1);
            assert!(zmq_timers_timeout(t) > 0);
            std::thread::sleep(Duration::from_millis(zmq_timers_timeout(t) as u64));
            assert_eq!(zmq_timers_timeout(t), 0);
            assert_eq!(zmq_timers_execute(t), 0);
            assert_eq!(FIRED.load(Ordering::SeqCst), 1);
            assert_eq!(zmq_timers_timeout(t), -1);
            assert_eq!(zmq_timers_cancel(t, id), -1);
            assert_eq!(zmq_timers_destroy(&mut t), 0);
        }
        assert!(t.is_null());
    }
}
