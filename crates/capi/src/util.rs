//! Helpers: Z85, CURVE key functions, atomic counters, the stopwatch, `zmq_sleep` and the
//! minimal thread wrapper.

use crate::errno::{fail, ffi, ffi_void, CResult, Errno};
use ferromq_zmtp::curve::KeyPair;
use ferromq_zmtp::z85;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_ulong, c_void};
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Encodes `size` bytes (a multiple of 4) as Z85 into `dest`, which needs
/// `size * 5 / 4 + 1` bytes; returns `dest`, or NULL with EINVAL for a bad size.
///
/// # Safety
/// `dest` must be writable for `size * 5 / 4 + 1` bytes; `data` readable for `size`.
#[no_mangle]
pub unsafe extern "C" fn zmq_z85_encode(
    dest: *mut c_char,
    data: *const u8,
    size: usize,
) -> *mut c_char {
    ffi(ptr::null_mut(), || {
        if dest.is_null() || (data.is_null() && size > 0) || size > isize::MAX as usize {
            return fail(libc::EINVAL);
        }
        let input: &[u8] = if size == 0 {
            &[]
        } else {
            // SAFETY: non-NULL and readable for size bytes per the contract.
            unsafe { std::slice::from_raw_parts(data, size) }
        };
        let text = z85::encode(input).ok_or(Errno(libc::EINVAL))?;
        // SAFETY: dest has room for size * 5 / 4 + 1 = text.len() + 1 bytes.
        unsafe {
            ptr::copy_nonoverlapping(text.as_ptr(), dest as *mut u8, text.len());
            *dest.add(text.len()) = 0;
        }
        Ok(dest)
    })
}

/// Decodes a Z85 string (length a multiple of 5) into `dest`, which needs
/// `strlen(string) * 4 / 5` bytes; returns `dest`, or NULL with EINVAL for bad input.
///
/// # Safety
/// `string` must be a NUL-terminated string; `dest` writable for the decoded size.
#[no_mangle]
pub unsafe extern "C" fn zmq_z85_decode(dest: *mut u8, string: *const c_char) -> *mut u8 {
    ffi(ptr::null_mut(), || {
        if dest.is_null() || string.is_null() {
            return fail(libc::EINVAL);
        }
        // SAFETY: non-NULL and NUL-terminated per the contract.
        let text = unsafe { CStr::from_ptr(string) };
        let text = text.to_str().map_err(|_| Errno(libc::EINVAL))?;
        // libzmq refuses the empty string too (it wants at least one 5-character group),
        // although it encodes 0 bytes as "".
        if text.is_empty() {
            return fail(libc::EINVAL);
        }
        let bytes = z85::decode(text).ok_or(Errno(libc::EINVAL))?;
        // SAFETY: dest has room for the decoded size per the contract.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), dest, bytes.len()) };
        Ok(dest)
    })
}

/// Writes 40 Z85 characters and a NUL into a buffer of at least 41 bytes.
///
/// # Safety
/// `dest` must be writable for 41 bytes.
unsafe fn write_z85_key(dest: *mut c_char, key: &[u8; 32]) {
    let text = z85::encode(key).expect("32 bytes is a multiple of 4");
    // SAFETY: the caller guarantees 41 writable bytes; text is 40 ASCII bytes.
    unsafe {
        ptr::copy_nonoverlapping(text.as_ptr(), dest as *mut u8, 40);
        *dest.add(40) = 0;
    }
}

/// Generates a CURVE key pair from the OS random source and writes both keys as
/// 40-character Z85 strings (41 bytes with the NUL each).
///
/// # Safety
/// Both pointers must be NULL (EFAULT) or writable for 41 bytes.
#[no_mangle]
pub unsafe extern "C" fn zmq_curve_keypair(public: *mut c_char, secret: *mut c_char) -> c_int {
    ffi(-1, || {
        if public.is_null() || secret.is_null() {
            return fail(libc::EFAULT);
        }
        let pair = KeyPair::generate().map_err(|_| Errno(libc::EIO))?;
        // SAFETY: non-NULL and 41 bytes long per the caller's contract.
        unsafe {
            write_z85_key(public, &pair.public);
            write_z85_key(secret, &pair.secret);
        }
        Ok(0)
    })
}

/// Derives the Z85 public key of a Z85 secret key (40 characters). EINVAL if the
/// secret is not valid Z85 for 32 bytes.
///
/// # Safety
/// `public` must be NULL (EFAULT) or writable for 41 bytes; `secret` NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zmq_curve_public(public: *mut c_char, secret: *const c_char) -> c_int {
    ffi(-1, || {
        if public.is_null() || secret.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: non-NULL and NUL-terminated per the caller's contract.
        let text = unsafe { CStr::from_ptr(secret) };
        let text = text.to_str().map_err(|_| Errno(libc::EINVAL))?;
        let bytes = zeroize::Zeroizing::new(z85::decode(text).ok_or(Errno(libc::EINVAL))?);
        let key: [u8; 32] = bytes[..].try_into().map_err(|_| Errno(libc::EINVAL))?;
        let pair = KeyPair::from_secret(key);
        // SAFETY: non-NULL and 41 bytes long per the caller's contract.
        unsafe { write_z85_key(public, &pair.public) };
        Ok(0)
    })
}

/// Borrows an atomic counter.
///
/// # Safety
/// `p` must be NULL or a live counter from `zmq_atomic_counter_new`.
unsafe fn counter<'a>(p: *mut c_void) -> CResult<&'a AtomicI32> {
    // SAFETY: NULL or a live AtomicI32 from Box::into_raw per the contract.
    unsafe { (p as *const AtomicI32).as_ref() }.ok_or(Errno(libc::EFAULT))
}

/// A new thread-safe counter, starting at 0.
#[no_mangle]
pub extern "C" fn zmq_atomic_counter_new() -> *mut c_void {
    ffi(ptr::null_mut(), || {
        Ok(Box::into_raw(Box::new(AtomicI32::new(0))) as *mut c_void)
    })
}

/// Sets the counter.
///
/// # Safety
/// `counter` must be NULL or a live counter.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_set(counter_p: *mut c_void, value: c_int) {
    ffi_void(|| {
        // SAFETY: forwarded caller contract.
        unsafe { counter(counter_p)? }.store(value, Ordering::SeqCst);
        Ok(())
    })
}

/// Increments the counter; returns the value before the increment.
///
/// # Safety
/// `counter` must be NULL or a live counter.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_inc(counter_p: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract.
    ffi(-1, || {
        Ok(unsafe { counter(counter_p)? }.fetch_add(1, Ordering::SeqCst))
    })
}

/// Decrements the counter; returns 1 if it is still non-zero afterwards, 0 if it reached
/// zero (libzmq's convention).
///
/// # Safety
/// `counter` must be NULL or a live counter.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_dec(counter_p: *mut c_void) -> c_int {
    ffi(-1, || {
        // SAFETY: forwarded caller contract.
        let old = unsafe { counter(counter_p)? }.fetch_sub(1, Ordering::SeqCst);
        Ok((old.wrapping_sub(1) != 0) as c_int)
    })
}

/// The counter's value.
///
/// # Safety
/// `counter` must be NULL or a live counter.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_value(counter_p: *mut c_void) -> c_int {
    // SAFETY: forwarded caller contract.
    ffi(-1, || {
        Ok(unsafe { counter(counter_p)? }.load(Ordering::SeqCst))
    })
}

/// Frees a counter and sets `*counter_p` to NULL.
///
/// # Safety
/// `counter_p` must be NULL or point to NULL or a live counter.
#[no_mangle]
pub unsafe extern "C" fn zmq_atomic_counter_destroy(counter_p: *mut *mut c_void) {
    ffi_void(|| {
        if counter_p.is_null() {
            return Ok(());
        }
        // SAFETY: non-NULL and valid per the contract.
        let p = unsafe { *counter_p };
        if !p.is_null() {
            // SAFETY: p came from Box::into_raw in zmq_atomic_counter_new.
            drop(unsafe { Box::from_raw(p as *mut AtomicI32) });
            // SAFETY: counter_p is writable per the contract.
            unsafe { *counter_p = ptr::null_mut() };
        }
        Ok(())
    })
}

/// Starts a microsecond stopwatch.
#[no_mangle]
pub extern "C" fn zmq_stopwatch_start() -> *mut c_void {
    ffi(ptr::null_mut(), || {
        Ok(Box::into_raw(Box::new(Instant::now())) as *mut c_void)
    })
}

fn micros_since(start: &Instant) -> c_ulong {
    start.elapsed().as_micros().min(c_ulong::MAX as u128) as c_ulong
}

/// Microseconds since the stopwatch started (0 for NULL).
///
/// # Safety
/// `watch` must be NULL or a live stopwatch.
#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_intermediate(watch: *mut c_void) -> c_ulong {
    ffi(0, || {
        // SAFETY: NULL or a live Instant from Box::into_raw per the contract.
        let start = unsafe { (watch as *const Instant).as_ref() };
        Ok(start.map_or(0, micros_since))
    })
}

/// Microseconds since the stopwatch started; frees it.
///
/// # Safety
/// `watch` must be NULL or a live stopwatch; it is freed.
#[no_mangle]
pub unsafe extern "C" fn zmq_stopwatch_stop(watch: *mut c_void) -> c_ulong {
    ffi(0, || {
        if watch.is_null() {
            return Ok(0);
        }
        // SAFETY: watch came from Box::into_raw in zmq_stopwatch_start.
        let start = unsafe { Box::from_raw(watch as *mut Instant) };
        Ok(micros_since(&start))
    })
}

/// Sleeps for whole seconds.
#[no_mangle]
pub extern "C" fn zmq_sleep(seconds: c_int) {
    ffi_void(|| {
        if seconds > 0 {
            std::thread::sleep(Duration::from_secs(seconds as u64));
        }
        Ok(())
    })
}

/// `zmq_thread_fn`.
pub type zmq_thread_fn = unsafe extern "C" fn(arg: *mut c_void);

/// The function and argument handed to a new thread.
struct ThreadStart {
    func: zmq_thread_fn,
    arg: *mut c_void,
}

// SAFETY: zmq_threadstart's contract is that `func(arg)` runs on another thread; the caller
// is responsible for `arg` being usable there, exactly as with pthread_create.
unsafe impl Send for ThreadStart {}

/// Runs `func(arg)` on a new thread; returns a handle for `zmq_threadclose` (NULL with
/// EAGAIN if no thread could be started).
///
/// # Safety
/// `func` must be NULL or a function safe to call with `arg` on another thread.
#[no_mangle]
pub unsafe extern "C" fn zmq_threadstart(
    func: Option<zmq_thread_fn>,
    arg: *mut c_void,
) -> *mut c_void {
    ffi(ptr::null_mut(), || {
        let func = func.ok_or(Errno(libc::EINVAL))?;
        let start = ThreadStart { func, arg };
        let handle = std::thread::Builder::new()
            .spawn(move || {
                let start = start;
                // SAFETY: the caller's contract for func and arg.
                unsafe { (start.func)(start.arg) };
            })
            .map_err(|_| Errno(libc::EAGAIN))?;
        Ok(Box::into_raw(Box::new(handle)) as *mut c_void)
    })
}

/// Waits for a thread from `zmq_threadstart` to finish and frees its handle.
///
/// # Safety
/// `thread` must be NULL or a handle from `zmq_threadstart` not yet closed.
#[no_mangle]
pub unsafe extern "C" fn zmq_threadclose(thread: *mut c_void) {
    ffi_void(|| {
        if !thread.is_null() {
            // SAFETY: thread came from Box::into_raw in zmq_threadstart.
            let handle = unsafe { Box::from_raw(thread as *mut JoinHandle<()>) };
            let _ = handle.join();
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z85_round_trip() {
        let data = [0x86u8, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        let mut text = [0 as c_char; 11];
        let mut back = [0u8; 8];
        // SAFETY: buffers sized as the functions require.
        unsafe {
            assert!(!zmq_z85_encode(text.as_mut_ptr(), data.as_ptr(), 8).is_null());
            let s = CStr::from_ptr(text.as_ptr());
            assert_eq!(s.to_str().unwrap(), "HelloWorld");
            assert!(!zmq_z85_decode(back.as_mut_ptr(), text.as_ptr()).is_null());
            assert!(zmq_z85_encode(text.as_mut_ptr(), data.as_ptr(), 7).is_null());
            assert!(zmq_z85_decode(back.as_mut_ptr(), c"abcd".as_ptr()).is_null());
        }
        assert_eq!(back, data);
    }

    #[test]
    fn counter_follows_libzmq() {
        let c = zmq_atomic_counter_new();
        // SAFETY: c is a live counter until destroyed below.
        unsafe {
            zmq_atomic_counter_set(c, 2);
            assert_eq!(zmq_atomic_counter_inc(c), 2);
            assert_eq!(zmq_atomic_counter_dec(c), 1);
            assert_eq!(zmq_atomic_counter_dec(c), 1);
            assert_eq!(zmq_atomic_counter_dec(c), 0);
            assert_eq!(zmq_atomic_counter_value(c), 0);
            let mut p = c;
            zmq_atomic_counter_destroy(&mut p);
            assert!(p.is_null());
        }
    }
}
