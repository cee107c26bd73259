//! The engine's receive buffer.
//!
//! `buf[..filled]` holds received bytes not parsed yet; `buf[filled..]` is
//! initialised spare space handed out for the caller to read into, so no
//! unsafe code is needed to expose it. Message bodies are split off without
//! copying (a reference-count increment, no allocation per frame); a consumer
//! that keeps tiny ones for long should copy them out, or they pin the receive
//! allocation (ferromq's core copies bodies under 1 KiB into inline or pooled
//! storage at once). Small command bodies are copied.

use bytes::{Buf, Bytes, BytesMut};

/// Command bodies smaller than this are copied out of the receive buffer.
pub(crate) const COPY_COMMAND_MAX: usize = 1024;

/// Upper bound on how much space is reserved ahead for a partially received
/// frame, so an announced (but not yet sent) huge body costs no memory.
pub(crate) const MAX_READ_AHEAD: usize = 4 << 20;

#[derive(Debug, Default)]
pub(crate) struct InputBuffer {
    buf: BytesMut,
    filled: usize,
}

impl InputBuffer {
    /// Returns spare space of at least `min` bytes (and at least
    /// `min(hint, MAX_READ_AHEAD)`), growing or compacting the buffer if
    /// needed. Bytes already received are preserved.
    pub(crate) fn spare(&mut self, min: usize, hint: usize) -> &mut [u8] {
        let want = min.max(hint.min(MAX_READ_AHEAD));
        if self.buf.len() - self.filled < want {
            // Drop the stale spare tail first so `reserve` only has to move
            // the unparsed bytes when it compacts or reallocates.
            self.buf.truncate(self.filled);
            self.buf.reserve(want);
            let cap = self.buf.capacity();
            self.buf.resize(cap, 0);
        }
        &mut self.buf[self.filled..]
    }

    /// Marks `n` bytes of the last [`spare`](Self::spare) slice as received.
    ///
    /// # Panics
    /// If `n` exceeds the spare space.
    pub(crate) fn commit(&mut self, n: usize) {
        assert!(
            n <= self.buf.len() - self.filled,
            "input_filled({n}) exceeds the buffer handed out"
        );
        self.filled += n;
    }

    /// Copies `data` in after the received bytes.
    pub(crate) fn extend(&mut self, data: &[u8]) {
        let n = data.len();
        self.spare(n, 0)[..n].copy_from_slice(data);
        self.commit(n);
    }

    /// The received, unparsed bytes.
    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[..self.filled]
    }

    /// Discards `n` received bytes.
    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.filled);
        self.buf.advance(n);
        self.filled -= n;
    }

    /// Discards a `skip`-byte header and returns the following `len` bytes:
    /// zero-copy for message bodies (a reference-count increment; copying them,
    /// as before, cost an allocation per frame, and once every split-off body
    /// is dropped `spare` reuses the buffer), copied for small command bodies
    /// (`command`), whose parts the engine and its user keep for a
    /// connection's life (READY properties, routing id) and which would pin a
    /// whole receive buffer.
    pub(crate) fn take(&mut self, skip: usize, len: usize, command: bool) -> Bytes {
        debug_assert!(skip + len <= self.filled);
        self.consume(skip);
        if len == 0 {
            return Bytes::new();
        }
        if command && len < COPY_COMMAND_MAX {
            let body = Bytes::copy_from_slice(&self.buf[..len]);
            self.consume(len);
            return body;
        }
        self.filled -= len;
        self.buf.split_to(len).freeze()
    }

    /// Drops all received bytes and releases the allocation.
    pub(crate) fn release(&mut self) {
        self.buf = BytesMut::new();
        self.filled = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_preserves_received_bytes() {
        let mut input = InputBuffer::default();
        assert!(input.spare(0, 0).is_empty());
        let s = input.spare(4, 0);
        assert!(s.len() >= 4);
        s[..3].copy_from_slice(b"abc");
        input.commit(3);
        assert_eq!(input.data(), b"abc");
        input.spare(100_000, 0);
        assert_eq!(input.data(), b"abc");
        input.extend(b"def");
        assert_eq!(input.data(), b"abcdef");
    }

    #[test]
    fn read_ahead_is_capped() {
        let mut input = InputBuffer::default();
        let len = input.spare(16, usize::MAX).len();
        assert!((MAX_READ_AHEAD..2 * MAX_READ_AHEAD).contains(&len), "{len}");
    }

    #[test]
    fn take_splits_bodies_without_copying() {
        let mut input = InputBuffer::default();
        let big = vec![9u8; 1024];
        input.extend(b"hh");
        input.extend(&big);
        input.extend(b"xyz");
        let base = input.data().as_ptr() as usize;
        let body = input.take(2, 1024, false);
        assert_eq!(&body[..], &big[..]);
        // Zero-copy: the body still lives in the receive allocation.
        assert_eq!(body.as_ptr() as usize, base + 2);
        assert_eq!(input.data(), b"xyz");
        let small = input.take(1, 1, false);
        assert_eq!(&small[..], b"y");
        assert_eq!(small.as_ptr() as usize, base + 2 + 1024 + 1);
        let command = input.take(0, 1, true);
        assert_eq!(&command[..], b"z");
        assert_ne!(command.as_ptr() as usize, base + 2 + 1024 + 2, "copied");
        assert!(input.data().is_empty());
    }

    #[test]
    #[should_panic(expected = "exceeds")]
    fn over_commit_panics() {
        let mut input = InputBuffer::default();
        let n = input.spare(8, 0).len();
        input.commit(n + 1);
    }
}
