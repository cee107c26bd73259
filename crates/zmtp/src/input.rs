//! The engine's receive buffer.
//!
//! Small frames go through one reusable buffer: received bytes sit in `buf[start..end]`,
//! `buf[end..]` is initialised spare space handed out for the caller to read into (zeroed
//! once when the buffer grows, never again), so no unsafe code is needed to expose it.
//! The buffer starts small (an idle connection costs little), grows when reads keep
//! filling it (a streaming peer), and is freed when the handshake leaves it empty.
//!
//! A large frame body is received straight into an allocation of its own once its header
//! has arrived ([`begin_body`](InputBuffer::begin_body)): the caller reads into it and the
//! finished body becomes the frame's `Bytes` without a copy, and without pinning the
//! shared buffer. Smaller bodies are copied out, or lent to a borrowing consumer
//! (`Engine::take_messages`).

use crate::recycle::RECYCLER;
use bytes::Bytes;

/// Bodies of at least this many bytes that are not yet complete are received directly
/// into their own allocation.
///
/// Why not smaller: a direct body ends its read exactly at the body's end, so each one
/// costs a read of its own plus one for the next header. Below ~32 KiB that syscall
/// costs more than copying the body out of a 64 KiB shared read (tcp PUSH/PULL 8 KiB
/// ran 25-40 % faster copied, 16 KiB 7-17 %; 32 KiB and up level or slower).
pub(crate) const DIRECT_MIN: usize = 32 * 1024;

/// First size of the shared buffer.
const INITIAL: usize = 8 * 1024;

/// The shared buffer grows (doubling) up to this while reads keep filling it.
const STREAMING: usize = 64 * 1024;

/// A directly received body is allocated up to this much ahead of the bytes that have
/// arrived, so a peer announcing a huge frame costs memory only as it sends it.
const BODY_AHEAD: usize = 1 << 20;
/// `read_body_with` grows the body's allocation when less than this is spare.
const BODY_READ_MIN: usize = 64 << 10;

/// Right after a direct body, the next read takes at most this much into the shared
/// buffer: enough for the next header and small frames, while a next large body (likely,
/// as messages tend to be alike) comes mostly straight into its own allocation instead of
/// being read into the shared buffer and copied out.
const AFTER_BODY: usize = 4 * 1024;

/// Upper bound on how much space is reserved ahead for a partially received small frame.
pub(crate) const MAX_READ_AHEAD: usize = STREAMING;

/// Where in a 4 KiB page a direct body may start: from `BODY_START_MIN` to `BODY_START_MAX`
/// bytes in (see [`body_pad`]).
const PAGE: usize = 4096;
const BODY_START_MIN: usize = 512;
const BODY_START_MAX: usize = PAGE - 64;
/// The most bytes [`body_pad`] puts in front of a body.
const MAX_PAD: usize = PAGE - BODY_START_MAX + BODY_START_MIN;

/// Bytes to leave unused in front of a direct body allocated at `addr`, so that the body
/// starts `BODY_START_MIN..=BODY_START_MAX` bytes into a page.
///
/// Why: the kernel copies a received stream into the body with `rep movsb`, and on AMD
/// Zen that copy runs up to 9x slower when the destination is 1-15 bytes ahead of the
/// source modulo 4 KiB (the loads alias the stores just made). The source is the
/// sender's kernel buffer, whose page offset at the body is usually the few header
/// bytes written before it in the same call (9-11 for ZMTP): a body at the start of a
/// page, or 16 bytes in as glibc's large allocations are, sits right in that window
/// (REQ/REP tcp 256 KiB: 60 % of all CPU time in that copy, one-way latency 1.7x
/// libzmq's). Starting at least 512 bytes in keeps clear of it for senders' headers of
/// up to ~500 bytes, and of the same window for our own later send of this body.
fn body_pad(addr: usize) -> usize {
    let off = addr % PAGE;
    if off < BODY_START_MIN {
        BODY_START_MIN - off
    } else if off > BODY_START_MAX {
        PAGE - off + BODY_START_MIN
    } else {
        0
    }
}

/// A new allocation for `n` body bytes after their pad (empty). For a `whole` body the
/// part of `MAX_PAD` its address does not need goes back to the allocator at once: a
/// receiver holding many large bodies (a SUB behind its HWM: 1000 of 64 KiB) kept ~0.9 %
/// more memory than the bodies themselves, more than libzmq's.
fn new_body(n: usize, whole: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + MAX_PAD);
    if whole {
        v.shrink_to(n + body_pad(v.as_ptr() as usize));
        if v.capacity() < n + body_pad(v.as_ptr() as usize) {
            // The allocator moved it elsewhere, where it needs more pad.
            v = Vec::with_capacity(n + MAX_PAD);
        }
    }
    v
}

#[derive(Debug)]
struct DirectBody {
    /// `pad` unused bytes (see [`body_pad`]), then the body so far: `filled` bytes
    /// received. Past them there may be zeroes the safe `spare` path put there for a
    /// caller to read into (kept for the next call); `read_body_with` cuts them off.
    data: Vec<u8>,
    pad: usize,
    filled: usize,
    len: usize,
}

impl DirectBody {
    /// How far ahead of what arrived the allocation may go.
    fn window(&self) -> usize {
        self.len
            .min(self.filled.max(1).saturating_mul(2).max(BODY_AHEAD))
    }
}

#[derive(Debug, Default)]
pub(crate) struct InputBuffer {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// The last read filled all the spare space it was given: grow before the next one.
    grow: bool,
    /// Length of the spare slice last handed out (0 if it was a direct body's).
    handed: usize,
    /// A direct body was just finished: keep reads short until one brings bytes.
    after_body: bool,
    /// The direct body being received.
    body: Option<DirectBody>,
    /// A direct body received in full (after its pad), waiting for `finish_body`; reads
    /// already go to the shared buffer again.
    done: Option<(usize, Vec<u8>)>,
}

impl InputBuffer {
    /// Returns spare space to read into: the rest of a direct body being received (exactly
    /// up to its end), or space in the shared buffer of at least `min` bytes (and at least
    /// `min(hint, MAX_READ_AHEAD)`). Bytes already received are preserved.
    pub(crate) fn spare(&mut self, min: usize, hint: usize) -> &mut [u8] {
        if let Some(b) = &mut self.body {
            // Zeroes past `filled` stay from one call to the next: only newly exposed
            // space is zeroed, so many small reads cost linear, not quadratic, time.
            let end = b.pad + b.window();
            if b.data.len() < end {
                b.data.resize(end, 0);
            }
            self.handed = 0;
            return &mut b.data[b.pad + b.filled..];
        }
        let want = min.max(hint.min(MAX_READ_AHEAD));
        if want == 0 && self.buf.is_empty() {
            // Nothing asked for, nothing held: stay unallocated.
            return &mut [];
        }
        let mut cap = self.buf.len();
        if self.grow && cap < STREAMING {
            cap = (cap * 2).min(STREAMING);
        }
        self.grow = false;
        cap = cap.max(INITIAL);
        let pending = self.end - self.start;
        if self.buf.len() - self.end < want || self.buf.len() < cap {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.start = 0;
                self.end = pending;
            }
            let need = (pending + want).max(cap);
            if self.buf.len() < need {
                self.buf.resize(need, 0);
            }
        }
        let mut spare = self.buf.len() - self.end;
        if self.after_body {
            spare = spare.min(AFTER_BODY.max(want));
        }
        self.handed = spare;
        &mut self.buf[self.end..self.end + spare]
    }

    /// Marks `n` bytes of the last [`spare`](Self::spare) slice as received.
    ///
    /// # Panics
    /// If `n` exceeds the spare space.
    pub(crate) fn commit(&mut self, n: usize) {
        if let Some(b) = &mut self.body {
            assert!(
                n <= b.data.len() - b.pad - b.filled,
                "input_filled({n}) exceeds the buffer handed out"
            );
            b.filled += n;
            self.body_progress();
            return;
        }
        assert!(
            n <= self.buf.len() - self.end,
            "input_filled({n}) exceeds the buffer handed out"
        );
        self.end += n;
        self.grow = n > 0 && n == self.handed;
        // Only a read that brought bytes ends the short-read rule: a receiver that looks
        // before the next message is there (REQ/REP waits so every time) reads nothing,
        // and the message then arriving must still come mostly into its own body.
        if n > 0 {
            self.after_body = false;
        }
    }

    /// Copies `data` in after the received bytes.
    pub(crate) fn extend(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let spare = self.spare(data.len(), 0);
            let n = spare.len().min(data.len());
            assert!(n > 0, "receive buffer handed out no space");
            spare[..n].copy_from_slice(&data[..n]);
            self.commit(n);
            data = &data[n..];
        }
    }

    /// The received, unparsed bytes of the shared buffer (empty while a direct body is
    /// being received).
    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Discards `n` received bytes.
    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.start);
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Discards a `skip`-byte header and returns a copy of the following `len` bytes.
    pub(crate) fn take(&mut self, skip: usize, len: usize) -> Bytes {
        debug_assert!(skip + len <= self.end - self.start);
        self.consume(skip);
        if len == 0 {
            return Bytes::new();
        }
        let body = Bytes::copy_from_slice(&self.buf[self.start..self.start + len]);
        self.consume(len);
        body
    }

    /// The frame whose `header_len`-byte header starts the buffer has a `len`-byte body
    /// not yet complete: from now on its bytes go straight into an allocation of its own.
    /// What already arrived of it is moved there.
    pub(crate) fn begin_body(&mut self, header_len: usize, len: usize) {
        debug_assert!(self.body.is_none());
        self.consume(header_len);
        let have = (self.end - self.start).min(len);
        let ahead = len.min(have.max(BODY_AHEAD));
        let mut data = RECYCLER
            .take_for(ahead, MAX_PAD, body_pad)
            .unwrap_or_else(|| new_body(ahead, ahead == len));
        let pad = body_pad(data.as_ptr() as usize);
        data.resize(pad, 0);
        data.extend_from_slice(&self.buf[self.start..self.start + have]);
        self.consume(have);
        self.body = Some(DirectBody {
            data,
            pad,
            filled: have,
            len,
        });
    }

    /// While a direct body is being received: lets `read` append its next bytes to the
    /// body's allocation itself (`read` gets the vector and how many bytes it may append
    /// at most, and must append no more; it may read straight into the spare capacity,
    /// so nothing is zeroed first). None when no direct body is in progress.
    ///
    /// # Panics
    /// If `read` appends more than it was allowed, or removes what was received.
    pub(crate) fn read_body_with<R>(
        &mut self,
        read: impl FnOnce(&mut Vec<u8>, usize) -> R,
    ) -> Option<R> {
        let b = self.body.as_mut()?;
        // A `spare` handed out but never committed leaves zeroes past `filled`.
        let have = b.pad + b.filled;
        b.data.truncate(have);
        // Grow only when the spare capacity runs short, then to the whole window: a
        // window that moves with every read would reallocate on every read.
        let rest = b.len - b.filled;
        if b.data.capacity() - have < rest.min(BODY_READ_MIN) {
            b.data.reserve_exact(b.window() - b.filled);
        }
        let max = (b.data.capacity() - have).min(rest);
        let r = read(&mut b.data, max);
        let got = b.data.len().checked_sub(have);
        assert!(
            got.is_some_and(|g| g <= max),
            "read_body_with appended beyond the body"
        );
        b.filled = b.data.len() - b.pad;
        self.body_progress();
        Some(r)
    }

    /// Moves a complete direct body out of the way (reads go to the shared buffer again).
    fn body_progress(&mut self) {
        if self.body.as_ref().is_some_and(|b| b.filled == b.len) {
            if let Some(b) = self.body.take() {
                self.done = Some((b.pad, b.data));
                self.after_body = true;
            }
        }
    }

    /// Bytes still missing of the direct body being received (0 once it is complete),
    /// or None if there is none.
    pub(crate) fn body_missing(&self) -> Option<usize> {
        match (&self.body, &self.done) {
            (Some(b), _) => Some(b.len - b.filled),
            (None, Some(_)) => Some(0),
            (None, None) => None,
        }
    }

    /// The direct body, once complete.
    pub(crate) fn finish_body(&mut self) -> Option<Bytes> {
        self.done
            .take()
            .map(|(pad, v)| RECYCLER.wrap(v).slice(pad..))
    }

    /// True if nothing received is waiting to be parsed.
    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end && self.body.is_none() && self.done.is_none()
    }

    /// Drops all received bytes and releases the allocations.
    pub(crate) fn release(&mut self) {
        *self = InputBuffer::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_preserves_received_bytes() {
        let mut input = InputBuffer::default();
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
    fn starts_small_and_grows_while_reads_fill_it() {
        let mut input = InputBuffer::default();
        assert!(
            input.spare(0, 0).is_empty(),
            "nothing asked, nothing allocated"
        );
        let first = input.spare(1, 0).len();
        assert_eq!(first, INITIAL);
        // A short read: no growth.
        input.commit(10);
        input.consume(10);
        assert_eq!(input.spare(1, 0).len(), INITIAL);
        // Reads that fill the buffer: it doubles up to STREAMING.
        let mut sizes = Vec::new();
        for _ in 0..6 {
            let n = input.spare(1, 0).len();
            sizes.push(n);
            input.commit(n);
            input.consume(n);
        }
        assert_eq!(
            sizes,
            [
                INITIAL,
                2 * INITIAL,
                4 * INITIAL,
                STREAMING,
                STREAMING,
                STREAMING
            ]
        );
    }

    #[test]
    fn read_ahead_is_capped() {
        let mut input = InputBuffer::default();
        let len = input.spare(16, usize::MAX).len();
        assert!((MAX_READ_AHEAD..2 * MAX_READ_AHEAD).contains(&len), "{len}");
    }

    #[test]
    fn take_copies_and_keeps_the_rest() {
        let mut input = InputBuffer::default();
        input.extend(b"hh");
        input.extend(&[9u8; 1024]);
        input.extend(b"xyz");
        let body = input.take(2, 1024);
        assert_eq!(&body[..], &[9u8; 1024][..]);
        assert_eq!(input.data(), b"xyz");
        assert_eq!(&input.take(1, 1)[..], b"y");
        assert_eq!(input.data(), b"z");
    }

    #[test]
    fn direct_body_is_read_in_place_and_handed_over_whole() {
        let mut input = InputBuffer::default();
        input.extend(b"HHH");
        input.extend(&[1u8; 100]);
        input.begin_body(3, 20_000);
        assert!(input.data().is_empty());
        assert_eq!(input.body_missing(), Some(19_900));
        // The spare space ends exactly at the body's end.
        let s = input.spare(65536, 0);
        assert_eq!(s.len(), 19_900);
        s.fill(2);
        let base = s.as_ptr() as usize;
        input.commit(19_900);
        // The next read goes to the shared buffer at once (the body waits for its taker).
        assert!(!input.spare(1, 0).is_empty());
        input.extend(b"next");
        let body = input.finish_body().expect("complete");
        assert_eq!(input.data(), b"next");
        assert_eq!(body.len(), 20_000);
        assert_eq!(&body[..100], &[1u8; 100][..]);
        assert!(body[100..].iter().all(|&b| b == 2));
        assert_eq!(body.as_ptr() as usize + 100, base, "no copy");
        input.consume(4);
        assert!(input.is_empty());
    }

    #[test]
    fn read_body_with_appends_in_place_up_to_the_body_end() {
        let mut input = InputBuffer::default();
        assert!(
            input.read_body_with(|_, _| ()).is_none(),
            "no body in progress"
        );
        input.extend(b"H");
        input.extend(&[1u8; 10]);
        input.begin_body(1, 20_000);
        let got = input.read_body_with(|v, max| {
            // The vector holds the pad, then the 10 bytes received.
            assert_eq!(&v[v.len() - 10..], &[1u8; 10]);
            assert_eq!(max, 19_990);
            assert!(v.capacity() >= v.len() + max);
            v.extend(std::iter::repeat_n(2u8, 5_000));
            5_000
        });
        assert_eq!(got, Some(5_000));
        assert_eq!(input.body_missing(), Some(14_990));
        // The safe path and the in-place path mix.
        let s = input.spare(1, 0);
        s[..990].fill(3);
        input.commit(990);
        input.read_body_with(|v, max| {
            assert_eq!(max, 14_000);
            v.extend(std::iter::repeat_n(4u8, max));
        });
        let body = input.finish_body().expect("complete");
        assert_eq!(body.len(), 20_000);
        assert_eq!(&body[..10], &[1u8; 10]);
        assert!(body[10..5_010].iter().all(|&b| b == 2));
        assert!(body[5_010..6_000].iter().all(|&b| b == 3));
        assert!(body[6_000..].iter().all(|&b| b == 4));
    }

    #[test]
    fn reads_stay_short_after_a_body_until_one_brings_bytes() {
        let mut input = InputBuffer::default();
        input.extend(b"HHH");
        input.begin_body(3, DIRECT_MIN);
        let n = input.spare(1, 0).len();
        input.commit(n);
        assert!(input.finish_body().is_some());
        // Nothing arrived yet (the peer has not answered): the read brought no bytes.
        assert_eq!(input.spare(1, 0).len(), AFTER_BODY);
        input.commit(0);
        // The read that finds the next message is still short, so its body comes mostly
        // straight into an allocation of its own rather than through this buffer.
        assert_eq!(input.spare(1, 0).len(), AFTER_BODY);
        input.commit(10);
        assert!(input.spare(1, 0).len() > AFTER_BODY);
    }

    #[test]
    fn a_whole_direct_body_holds_only_its_pad_and_its_allocation_comes_back() {
        // A length no other test uses: the recycler is shared by the whole process.
        let len = 90_001;
        let receive = || {
            let mut input = InputBuffer::default();
            input.extend(b"H");
            input.begin_body(1, len);
            let b = input.body.as_ref().expect("a direct body");
            assert_eq!(
                b.data.capacity(),
                b.pad + len,
                "nothing allocated past the body"
            );
            let at = b.data.as_ptr();
            while input.body_missing() != Some(0) {
                input.read_body_with(|v, max| v.extend(std::iter::repeat_n(6u8, max)));
            }
            (at, input.finish_body().expect("complete"))
        };
        let (first, body) = receive();
        assert_eq!(body.len(), len);
        drop(body);
        let (second, _body) = receive();
        assert_eq!(
            first, second,
            "the next body of that size reuses the allocation"
        );
    }

    #[test]
    fn direct_bodies_start_clear_of_a_page_start() {
        for addr in [0, 16, 511, 512, 2048, 4032, 4033, 4095, 8192 + 16] {
            let start = (addr + body_pad(addr)) % PAGE;
            assert!(
                (BODY_START_MIN..=BODY_START_MAX).contains(&start),
                "{addr}: starts {start} bytes into its page"
            );
            assert!(body_pad(addr) <= MAX_PAD);
        }
        for len in [8 << 10, 64 << 10, 256 << 10, 1 << 20] {
            let mut input = InputBuffer::default();
            input.extend(b"H");
            input.extend(&[5u8; 100]);
            input.begin_body(1, len);
            while input.body_missing() != Some(0) {
                input.read_body_with(|v, max| v.extend(std::iter::repeat_n(6u8, max)));
            }
            let body = input.finish_body().expect("complete");
            assert_eq!(body.len(), len);
            assert_eq!(&body[..100], &[5u8; 100]);
            assert!(body[100..].iter().all(|&b| b == 6));
            let start = body.as_ptr() as usize % PAGE;
            assert!(
                (BODY_START_MIN..=BODY_START_MAX).contains(&start),
                "{len}-byte body starts {start} bytes into its page"
            );
        }
    }

    #[test]
    fn small_reads_into_a_large_body_reallocate_rarely() {
        // A peer trickling a 16 MiB body 4 KiB at a time: the allocation grows
        // geometrically, not on every read.
        let mut input = InputBuffer::default();
        input.extend(b"H");
        input.begin_body(1, 16 << 20);
        let (mut grows, mut cap) = (0, 0);
        while input.body_missing() != Some(0) {
            input.read_body_with(|v, max| {
                if v.capacity() != cap {
                    (grows, cap) = (grows + 1, v.capacity());
                }
                v.extend(std::iter::repeat_n(7u8, max.min(4096)));
            });
        }
        assert!(grows <= 8, "{grows} reallocations");
        let body = input.finish_body().expect("complete");
        assert_eq!(body.len(), 16 << 20);
    }

    #[test]
    #[should_panic(expected = "beyond the body")]
    fn read_body_with_may_not_overrun() {
        let mut input = InputBuffer::default();
        input.extend(b"H");
        input.begin_body(1, 10_000);
        input.read_body_with(|v, max| v.extend(std::iter::repeat_n(0u8, max + 1)));
    }

    #[test]
    fn a_huge_announced_body_costs_memory_only_as_it_arrives() {
        let mut input = InputBuffer::default();
        input.extend(b"H");
        input.begin_body(1, 1 << 40);
        assert_eq!(input.spare(1, 0).len(), BODY_AHEAD);
        input.commit(BODY_AHEAD);
        assert_eq!(
            input.spare(1, 0).len(),
            BODY_AHEAD,
            "grows with what was received"
        );
    }

    #[test]
    #[should_panic(expected = "exceeds")]
    fn over_commit_panics() {
        let mut input = InputBuffer::default();
        let n = input.spare(8, 0).len();
        input.commit(n + 1);
    }
}
