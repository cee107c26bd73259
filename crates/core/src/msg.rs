//! `Msg`: one message frame, small ones stored inline, large ones shared by reference count.

use crate::loan::Loan;
use crate::pool::{self, PoolRef};
use bytes::Bytes;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Frames up to this many bytes are stored inside the `Msg` itself: no heap allocation.
/// (46 is what fits beside the flags and metadata pointer in libzmq's 64-byte `zmq_msg_t`.)
pub const INLINE_CAP: usize = 46;

/// `from_bytes` shares bodies at least this big; smaller ones are copied.
const SHARE_MIN: usize = 1024;

/// Flag: more frames of the same message follow.
pub(crate) const FLAG_MORE: u8 = 1;
/// Flag: this frame is a subscription command (first byte 1 = subscribe, 0 = cancel).
pub(crate) const FLAG_COMMAND: u8 = 2;
/// The longest body libzmq keeps inside its message (its "very small message"): a copy
/// of a longer one shares the body, and reports ZMQ_SHARED.
const LIBZMQ_INLINE_MAX: usize = 33;
/// Flag: the body was handed to a copy made by `share` (ZMQ_SHARED).
const FLAG_SHARED: u8 = 4;
/// Flag: an empty frame left by the C API's `zmq_msg_close` (see `Msg::closed`).
const FLAG_CLOSED: u8 = 8;

#[derive(Clone)]
enum Data {
    Inline {
        len: u8,
        buf: [u8; INLINE_CAP],
    },
    Shared(Bytes),
    /// A copy in a pooled block (bodies a little too big for inline; see `pool`).
    Pooled(PoolRef),
    /// A unique, writable body (from `with_size`); becomes `Shared` when cloned cheaply.
    Owned(Vec<u8>),
    /// The caller's bytes during a send call, a copy after it (see `loan`).
    Lent(Arc<Loan>),
}

impl Data {
    /// A copy of `data`: inline when small, pooled when a little bigger, shared beyond.
    #[inline(always)]
    fn copy_of(data: &[u8]) -> Data {
        if data.len() > INLINE_CAP && data.len() <= pool::MAX {
            if let Some(p) = PoolRef::copy_from(data) {
                return Data::Pooled(p);
            }
        }
        if data.len() > pool::MAX && data.len() <= pool::SOLO_MAX {
            return Data::Pooled(PoolRef::copy_solo(data));
        }
        if data.len() <= INLINE_CAP {
            let mut buf = [0; INLINE_CAP];
            buf[..data.len()].copy_from_slice(data);
            Data::Inline {
                len: data.len() as u8,
                buf,
            }
        } else {
            Msg::from_bytes(Bytes::copy_from_slice(data)).data
        }
    }
}

/// Properties of the connection a message arrived on (`zmq_msg_gets`).
#[derive(Debug, Default)]
pub struct Metadata {
    /// (name, value) pairs; names compared case-insensitively.
    pub properties: Vec<(String, String)>,
    /// The values again, NUL-terminated for the C ABI (cut at an inner NUL).
    c_values: Vec<std::ffi::CString>,
    /// The descriptor of the connection (ZMQ_SRCFD), if it had one.
    source_fd: Option<i32>,
}

impl Metadata {
    /// Builds the metadata of a connection.
    pub fn new(properties: Vec<(String, String)>) -> Metadata {
        let c_values = properties
            .iter()
            .map(|(_, v)| {
                let cut = v.split('\0').next().unwrap_or("");
                std::ffi::CString::new(cut).unwrap_or_default()
            })
            .collect();
        Metadata {
            properties,
            c_values,
            source_fd: None,
        }
    }

    /// The same, for a connection over descriptor `fd`.
    pub fn with_source_fd(self, fd: i32) -> Metadata {
        Metadata {
            source_fd: Some(fd),
            ..self
        }
    }

    /// The descriptor of the connection the message came in on (tcp, ipc), if any.
    pub fn source_fd(&self) -> Option<i32> {
        self.source_fd
    }

    /// Like `get`, as a C string that lives as long as the metadata, but with the name
    /// matched exactly, as libzmq's `zmq_msg_gets` does.
    pub fn get_cstr(&self, name: &str) -> Option<&std::ffi::CStr> {
        self.properties
            .iter()
            .position(|(k, _)| k == name)
            .and_then(|i| self.c_values.get(i))
            .map(|c| c.as_c_str())
    }

    /// Looks a property up by name, ignoring ASCII case.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One message frame.
///
/// Cloning is cheap: large bodies are shared, never copied. A `Msg` is plain data that may be
/// moved bytewise (the C ABI keeps it inside the 64-byte `zmq_msg_t`).
pub struct Msg {
    data: Data,
    flags: u8,
    meta: Option<Arc<Metadata>>,
}

impl Clone for Msg {
    #[inline]
    fn clone(&self) -> Msg {
        if self.is_plain_inline() {
            // SAFETY: an inline frame without metadata owns nothing outside itself, so a
            // bytewise copy is a complete, independent value. Copying the block whole
            // matters: the derived clone rebuilt it field by field on the stack, and the
            // wide loads of the following move then missed store forwarding (80 % of
            // the clone's time for a ROUTER's routing-id frame).
            return unsafe { std::ptr::read(self) };
        }
        self.clone_slow()
    }

    /// Copies `source` straight into `self` (a ROUTER's routing-id frame into the
    /// caller's message) instead of through a returned temporary.
    #[inline]
    fn clone_from(&mut self, source: &Msg) {
        if source.is_plain_inline() {
            // SAFETY: as in `clone`. The copy goes in before the old frame is dropped, so
            // it is not held on the stack across the drop.
            drop(std::mem::replace(self, unsafe { std::ptr::read(source) }));
        } else {
            *self = source.clone_slow();
        }
    }
}

impl Msg {
    /// Inline data and no metadata: nothing owned outside the value itself.
    #[inline]
    fn is_plain_inline(&self) -> bool {
        matches!(self.data, Data::Inline { .. }) && self.meta.is_none()
    }

    /// Hands `each` `n` clones of this frame (a PUB's fan-out). A pooled body without
    /// metadata is counted once for all of them (see `PoolRef::add_refs`) and each clone
    /// is a bitwise copy: built field by field, each clone stalled on store forwarding.
    pub(crate) fn clones(&self, n: usize, mut each: impl FnMut(Msg)) {
        match &self.data {
            Data::Pooled(p) if self.meta.is_none() => {
                // SAFETY: exactly n values owning one reference each are made below.
                unsafe { p.add_refs(n) };
                for _ in 0..n {
                    // SAFETY: the copy owns one of the references just added; the frame
                    // holds nothing else that needs counting (no metadata).
                    each(unsafe { std::ptr::read(self) });
                }
            }
            _ => (0..n).for_each(|_| each(self.clone())),
        }
    }

    /// `clone` of a frame that owns something (a shared body, metadata).
    #[inline(never)]
    fn clone_slow(&self) -> Msg {
        Msg {
            data: self.data.clone(),
            flags: self.flags,
            meta: self.meta.clone(),
        }
    }
}

impl Default for Msg {
    fn default() -> Self {
        Msg::new()
    }
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Msg")
            .field("len", &self.len())
            .field("more", &self.more())
            .finish()
    }
}

impl Msg {
    /// An empty frame that says it was closed: what `zmq_msg_close` leaves, so that the
    /// calls libzmq refuses on a closed message (closing it again, sending, receiving into
    /// it, copying or moving it) can fail with EFAULT as libzmq's do, instead of acting on
    /// it as on an empty one. Otherwise an empty frame; never handed to a socket.
    pub const fn closed() -> Msg {
        let mut m = Msg::new();
        m.flags = FLAG_CLOSED;
        m
    }

    /// True for what [`closed`](Self::closed) made (and nothing else: a frame from a
    /// socket or an `init` call never has the mark).
    #[inline]
    pub fn is_closed(&self) -> bool {
        self.flags & FLAG_CLOSED != 0
    }

    /// An empty frame.
    pub const fn new() -> Msg {
        Msg {
            data: Data::Inline {
                len: 0,
                buf: [0; INLINE_CAP],
            },
            flags: 0,
            meta: None,
        }
    }

    /// A frame holding a copy of `data` (inline when small, pooled when a little bigger).
    #[inline]
    pub fn copy_from(data: &[u8]) -> Msg {
        Msg {
            data: Data::copy_of(data),
            flags: 0,
            meta: None,
        }
    }

    /// `copy_from`, built in `dst` (a decoder's batch slot) rather than returned: a frame
    /// returned by value was stored field by field and then moved on as whole 16-byte
    /// blocks, whose loads missed store forwarding. Returns the frame.
    #[inline(always)]
    pub(crate) fn write_copy<'a>(dst: &'a mut MaybeUninit<Msg>, data: &[u8]) -> &'a mut Msg {
        dst.write(Msg {
            data: Data::copy_of(data),
            flags: 0,
            meta: None,
        })
    }

    /// A frame of `len` zero bytes, to be filled through `data_mut`.
    pub fn with_size(len: usize) -> Msg {
        if len <= INLINE_CAP {
            Msg {
                data: Data::Inline {
                    len: len as u8,
                    buf: [0; INLINE_CAP],
                },
                flags: 0,
                meta: None,
            }
        } else {
            Msg {
                data: Data::Owned(vec![0u8; len]),
                flags: 0,
                meta: None,
            }
        }
    }

    /// A frame of `len` zero bytes for a caller that fills it through `data_ptr` (the C
    /// ABI's `zmq_msg_init_size`): bodies up to 8 KiB come from the sending thread's pool
    /// block instead of one heap allocation each (which the I/O thread would free, in the
    /// sender's arena). `data_mut` would copy such a body first; fill through it with
    /// `with_size` instead.
    pub fn zeroed_for_fill(len: usize) -> Msg {
        if len > INLINE_CAP && len <= pool::MAX {
            if let Some(p) = PoolRef::zeroed(len) {
                return Msg {
                    data: Data::Pooled(p),
                    flags: 0,
                    meta: None,
                };
            }
        }
        Msg::with_size(len)
    }

    /// A frame sharing `bytes` (no copy; small bodies are moved inline, and bodies under
    /// 1 KiB are copied into the pool, so that they never pin a receive buffer that
    /// `bytes` may be a slice of).
    pub fn from_bytes(bytes: Bytes) -> Msg {
        if bytes.len() > INLINE_CAP && bytes.len() < SHARE_MIN {
            if let Some(p) = PoolRef::copy_from(&bytes) {
                return Msg {
                    data: Data::Pooled(p),
                    flags: 0,
                    meta: None,
                };
            }
        }
        if bytes.len() <= INLINE_CAP {
            let mut m = Msg::copy_from(&[]);
            if let Data::Inline { len, buf } = &mut m.data {
                buf[..bytes.len()].copy_from_slice(&bytes);
                *len = bytes.len() as u8;
            }
            return m;
        }
        Msg {
            data: Data::Shared(bytes),
            flags: 0,
            meta: None,
        }
    }

    /// A frame over a loan's bytes (see `loan::with_lent`).
    pub(crate) fn from_loan(loan: Arc<Loan>) -> Msg {
        Msg {
            data: Data::Lent(loan),
            flags: 0,
            meta: None,
        }
    }

    /// The loan this frame's body is, if it is one: a writer of the body reads it through
    /// `Loan::read` and so spares the copy that `data` makes.
    #[inline]
    pub(crate) fn loan(&self) -> Option<&Loan> {
        match &self.data {
            Data::Lent(l) => Some(l),
            _ => None,
        }
    }

    /// A connection writing this frame's body has sent its first `n` bytes and will not
    /// read them again. If the body is lent and this frame is its only holder besides the
    /// lender (so no frame that may read those bytes exists or can be made: this one is
    /// never cloned once a connection holds it), the lender's copy, if it must make one,
    /// leaves them out.
    pub(crate) fn note_body_written(&self, n: usize) {
        if let Data::Lent(l) = &self.data {
            if Arc::strong_count(l) == 2 {
                l.note_written(n);
            }
        }
    }

    /// Replaces a lent body by an ordinary one (sharing the loan's copy, made now if it was
    /// not yet), for access that may write or keep the bytes.
    pub(crate) fn unlend(&mut self) {
        if let Data::Lent(l) = &self.data {
            l.stable();
            let copy = l.copied().data.clone();
            self.data = copy;
        }
    }

    /// A frame that always shares `bytes`, however small (for buffers whose owner must live
    /// until the last copy of the message is gone, as with `zmq_msg_init_data`).
    pub fn from_shared(bytes: Bytes) -> Msg {
        Msg {
            data: Data::Shared(bytes),
            flags: 0,
            meta: None,
        }
    }

    /// As [`from_shared`](Self::from_shared), for a constant body (`zmq_msg_init_data`
    /// without a free function): it says `shares_body` from the start, as libzmq reports
    /// ZMQ_SHARED for such a message.
    pub fn from_constant(bytes: Bytes) -> Msg {
        Msg {
            data: Data::Shared(bytes),
            flags: FLAG_SHARED,
            meta: None,
        }
    }

    /// Calls `f` with the frame's bytes. Unlike [`data`](Self::data), a lent body is read
    /// where the caller of the send keeps it, not copied: for a look that ends before the
    /// send returns (a publisher matching a 256 KiB message against its subscriptions
    /// copied the whole body first, then wrote it out from the copy).
    #[inline]
    pub(crate) fn peek<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match &self.data {
            Data::Lent(l) => f(l.read().bytes()),
            _ => f(self.data()),
        }
    }

    /// The frame's bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        match &self.data {
            Data::Inline { len, buf } => &buf[..*len as usize],
            Data::Shared(b) => b,
            Data::Pooled(p) => p.as_slice(),
            Data::Owned(v) => v,
            Data::Lent(l) => l.stable(),
        }
    }

    /// Mutable access to the bytes. A shared body is made unique first (copied only if
    /// other references exist), so writing never changes another message.
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.unlend();
        if let Data::Shared(b) = &mut self.data {
            let v: Vec<u8> = match std::mem::take(b).try_into_mut() {
                Ok(m) => m.into(),
                Err(shared) => shared.to_vec(),
            };
            self.data = Data::Owned(v);
        }
        if let Data::Pooled(p) = &self.data {
            // A pooled body may be shared with clones: write to a copy.
            self.data = Data::Owned(p.as_slice().to_vec());
        }
        match &mut self.data {
            Data::Inline { len, buf } => &mut buf[..*len as usize],
            Data::Owned(v) => v,
            Data::Shared(_) | Data::Pooled(_) | Data::Lent(_) => unreachable!("converted above"),
        }
    }

    /// Raw pointer to the bytes for the C ABI (`zmq_msg_data`). Writing through it is
    /// allowed by libzmq's contract; for a body shared with copies, the copies see the write,
    /// as with libzmq's reference-counted messages.
    pub fn data_ptr(&mut self) -> *mut u8 {
        self.unlend();
        match &mut self.data {
            Data::Inline { buf, .. } => buf.as_mut_ptr(),
            Data::Owned(v) => v.as_mut_ptr(),
            Data::Shared(b) => b.as_ptr() as *mut u8,
            Data::Pooled(p) => p.as_mut_ptr(),
            Data::Lent(_) => unreachable!("unlent above"),
        }
    }

    /// Turns an owned body into a shared one so that clones do not copy it.
    pub fn make_shared(&mut self) {
        if let Data::Owned(v) = &mut self.data {
            self.data = Data::Shared(Bytes::from(std::mem::take(v)));
        }
    }

    /// A copy that shares this frame's body (`zmq_msg_copy`). Unless the body is one
    /// libzmq would copy with the frame (33 bytes or less), both then say `shares_body`,
    /// for good: a write through one's data pointer may be seen through the other's.
    pub fn share(&mut self) -> Msg {
        self.make_shared();
        if !matches!(self.data, Data::Inline { .. }) || self.len() > LIBZMQ_INLINE_MAX {
            // An inline body libzmq would not hold inline is copied, but reported shared
            // as libzmq reports it: a caller may rely on that and never write through it.
            self.flags |= FLAG_SHARED;
        }
        self.clone()
    }

    /// True once `share` gave this frame's body to a copy, or this is that copy, or the
    /// body is constant (libzmq's ZMQ_SHARED, which also stays set after the other copy
    /// is gone).
    pub fn shares_body(&self) -> bool {
        self.flags & FLAG_SHARED != 0
    }

    /// Length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.data {
            Data::Inline { len, .. } => *len as usize,
            Data::Shared(b) => b.len(),
            Data::Pooled(p) => p.len(),
            Data::Owned(v) => v.len(),
            Data::Lent(l) => l.len(),
        }
    }

    /// True for an empty frame.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when more frames of the same message follow.
    #[inline]
    pub fn more(&self) -> bool {
        self.flags & FLAG_MORE != 0
    }

    /// Sets or clears the MORE flag.
    #[inline]
    pub fn set_more(&mut self, more: bool) {
        if more {
            self.flags |= FLAG_MORE
        } else {
            self.flags &= !FLAG_MORE
        }
    }

    #[inline]
    pub(crate) fn is_command(&self) -> bool {
        self.flags & FLAG_COMMAND != 0
    }

    pub(crate) fn set_command(&mut self) {
        self.flags |= FLAG_COMMAND;
    }

    /// The body as shared `Bytes` (copies small inline bodies).
    pub fn to_bytes(&self) -> Bytes {
        match &self.data {
            Data::Inline { .. } | Data::Owned(_) | Data::Pooled(_) | Data::Lent(_) => {
                Bytes::copy_from_slice(self.data())
            }
            Data::Shared(b) => b.clone(),
        }
    }

    /// Connection properties of a received frame, if any.
    pub fn metadata(&self) -> Option<&Arc<Metadata>> {
        self.meta.as_ref()
    }

    pub(crate) fn set_metadata(&mut self, meta: Option<Arc<Metadata>>) {
        self.meta = meta;
    }
}

impl From<&[u8]> for Msg {
    fn from(d: &[u8]) -> Msg {
        Msg::copy_from(d)
    }
}

impl From<Vec<u8>> for Msg {
    fn from(v: Vec<u8>) -> Msg {
        if v.len() <= INLINE_CAP {
            return Msg::copy_from(&v);
        }
        Msg {
            data: Data::Owned(v),
            flags: 0,
            meta: None,
        }
    }
}

impl From<&str> for Msg {
    fn from(s: &str) -> Msg {
        Msg::copy_from(s.as_bytes())
    }
}

impl From<Bytes> for Msg {
    fn from(b: Bytes) -> Msg {
        Msg::from_bytes(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_count_every_reference_once() {
        // A PUB's fan-out (`clones`): pooled bodies (one atomic add for all clones) of
        // this thread's block and of another thread's, shared and with metadata (cloned
        // one by one). Each clone reads the body; all drop; Miri reports
        // a block freed too early (use after free) or never (leak).
        let body: Vec<u8> = (0..64u8).collect();
        let here = Msg::copy_from(&body);
        let there = std::thread::spawn({
            let body = body.clone();
            move || Msg::copy_from(&body)
        })
        .join()
        .unwrap();
        let shared = Msg::from_bytes(Bytes::from(vec![7u8; 20_000]));
        let mut with_meta = Msg::copy_from(&body);
        with_meta.set_metadata(Some(Arc::new(Metadata::new(vec![(
            "User-Id".into(),
            "x".into(),
        )]))));
        for m in [&here, &there, &shared, &with_meta] {
            let mut all = Vec::new();
            m.clones(5, |c| all.push(c));
            assert_eq!(all.len(), 5);
            for c in &all {
                assert_eq!(c.data(), m.data());
            }
            drop(all);
            assert_eq!(m.data().len(), m.len());
        }
        drop((here, there, shared, with_meta));
    }

    #[test]
    fn fits_in_zmq_msg_t() {
        // The C ABI keeps a Msg inside libzmq's 64-byte, 8-aligned zmq_msg_t.
        assert!(std::mem::size_of::<Msg>() <= 64);
        assert!(std::mem::align_of::<Msg>() <= 8);
    }

    #[test]
    fn clone_from_copies_inline_and_shares_large_frames() {
        let mut dst = Msg::copy_from(&[1u8; 200]);
        let mut id = Msg::copy_from(b"peer");
        id.set_more(true);
        dst.clone_from(&id);
        assert_eq!((dst.data(), dst.more()), (&b"peer"[..], true));
        let big = Msg::from_shared(Bytes::from(vec![9u8; 5000]));
        dst.clone_from(&big);
        assert_eq!(dst.data(), big.data());
        assert_eq!(
            dst.data().as_ptr(),
            big.data().as_ptr(),
            "shared, not copied"
        );
        assert_eq!(id.data(), b"peer");
    }

    #[test]
    fn small_frames_are_inline_and_large_ones_shared() {
        let small = Msg::copy_from(&[7u8; INLINE_CAP]);
        assert!(matches!(small.data, Data::Inline { .. }));
        assert_eq!(small.data(), &[7u8; INLINE_CAP]);
        let mut big = Msg::copy_from(&[1u8; pool::SOLO_MAX + 1]);
        assert!(matches!(big.data, Data::Shared(_)));
        let copy = big.clone();
        assert_eq!(copy.data().as_ptr(), big.data().as_ptr(), "clone shares");
        big.data_mut()[0] = 9;
        assert_eq!(copy.data()[0], 1, "writing never changes another message");
        assert_eq!(big.data()[0], 9);
    }

    #[test]
    fn pooled_bodies_clone_and_copy_on_write() {
        let mut a = Msg::copy_from(&[3u8; INLINE_CAP + 1]);
        assert!(matches!(a.data, Data::Pooled(_)));
        let b = a.clone();
        assert_eq!(b.data().as_ptr(), a.data().as_ptr(), "clone shares");
        a.data_mut()[0] = 4;
        assert_eq!(b.data()[0], 3, "writing never changes another message");
        assert_eq!(a.data()[0], 4);
        assert_eq!(a.len(), INLINE_CAP + 1);
    }

    #[test]
    fn zeroed_for_fill_is_zero_on_reused_pool_memory_and_filled_in_place() {
        // Dirty this thread's small block, then ask for bodies from the same class.
        drop(Msg::copy_from(&[0xAB; 200]));
        for len in [INLINE_CAP + 1, 64, 200, pool::MAX] {
            let mut m = Msg::zeroed_for_fill(len);
            assert_eq!(m.len(), len);
            assert!(m.data().iter().all(|&b| b == 0), "{len} bytes not zeroed");
            let p = m.data_ptr();
            // SAFETY: p points to the message's len writable bytes.
            unsafe { p.add(len - 1).write(7) };
            assert_eq!(m.data()[len - 1], 7, "a write through data_ptr is the body");
        }
        assert!(matches!(Msg::zeroed_for_fill(64).data, Data::Pooled(_)));
        assert!(matches!(
            Msg::zeroed_for_fill(INLINE_CAP).data,
            Data::Inline { .. }
        ));
        assert!(matches!(
            Msg::zeroed_for_fill(pool::MAX + 1).data,
            Data::Owned(_)
        ));
    }

    #[test]
    fn with_size_is_writable_and_make_shared_keeps_bytes() {
        let mut m = Msg::with_size(100);
        m.data_mut()[99] = 5;
        m.make_shared();
        let c = m.clone();
        assert_eq!(c.data()[99], 5);
        assert_eq!(c.len(), 100);
    }
}
