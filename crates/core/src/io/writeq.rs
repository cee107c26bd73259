//! A connection's output in order: frames the engine encoded into its buffer, and large
//! message bodies written from where they are (`writev`), never copied into that buffer.
//! Only unencrypted ZMTP traffic has large bodies here (CURVE boxes every frame in the
//! engine, and STREAM writes raw bytes).

use super::codec::Codec;
use super::stream::Stream;
use crate::loan::{Loan, LoanRead};
use crate::msg::Msg;
use ferromq_zmtp::{Bytes, Engine};
use std::collections::VecDeque;
use std::io::{self, IoSlice};

/// Bodies at least this big are written in place.
pub(super) const IN_PLACE_MIN: usize = 8 * 1024;

/// Most pieces handed to one `writev`.
const MAX_IOV: usize = 64;

enum Part {
    /// Bytes the engine had encoded before a large body.
    Encoded(Bytes),
    /// A large body's frame header.
    Header([u8; 9], u8),
    /// The large body itself.
    Body(Msg),
}

impl Part {
    /// The bytes from `start` on, for a write: a lent body is read through `read` (it is
    /// `Some` for one).
    fn bytes_from<'a>(&'a self, read: &'a Option<LoanRead<'a>>, start: usize) -> &'a [u8] {
        match (self, read) {
            (_, Some(r)) => r.bytes_from(start),
            (Part::Encoded(b), None) => &b[start..],
            (Part::Header(h, n), None) => &h[start..*n as usize],
            (Part::Body(m), None) => &m.data()[start..],
        }
    }

    fn len(&self) -> usize {
        match self {
            Part::Encoded(b) => b.len(),
            Part::Header(_, n) => *n as usize,
            Part::Body(m) => m.len(),
        }
    }

    /// A body lent by a sender still in its call is read from the sender's bytes (no
    /// copy), holding the sender until the write is done.
    fn read_loan(&self) -> Option<LoanRead<'_>> {
        match self {
            Part::Body(m) => m.loan().map(Loan::read),
            _ => None,
        }
    }
}

/// Pieces waiting to be written ahead of whatever the engine still holds.
#[derive(Default)]
pub(super) struct WriteQueue {
    parts: VecDeque<Part>,
    /// Bytes of the front part already written.
    front_done: usize,
}

impl WriteQueue {
    /// Nothing queued here (the engine may still hold output).
    pub(super) fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Queues a message frame whose body is written in place, after everything the engine
    /// encoded so far.
    pub(super) fn push_large(&mut self, engine: &mut Codec, more: bool, body: Msg) {
        if let Some(encoded) = engine.take_output() {
            self.parts.push_back(Part::Encoded(encoded));
        }
        let (header, n) = Engine::frame_header(more, body.len());
        self.parts.push_back(Part::Header(header, n as u8));
        self.parts.push_back(Part::Body(body));
    }

    /// Empties the queue, returning its large bodies in order (a write of them was
    /// refused whole; see `Conn::peer_unchecked`).
    pub(super) fn take_bodies(&mut self) -> Vec<Msg> {
        self.front_done = 0;
        self.parts
            .drain(..)
            .filter_map(|p| match p {
                Part::Body(m) => Some(m),
                _ => None,
            })
            .collect()
    }

    /// One `writev` of the queued pieces followed by the engine's output; drops what was
    /// written. With `hold = Some(mss)`, a write of the whole queue that would end in a
    /// small last segment (at most `HOLD_MAX` bytes past a multiple of `mss`) leaves those
    /// bytes queued for the next write (see `Conn::hold_tail`). Returns the bytes written
    /// and whether bytes were held back so.
    pub(super) fn write(
        &mut self,
        stream: &mut Stream,
        engine: &mut Codec,
        hold: Option<usize>,
    ) -> io::Result<(usize, bool)> {
        let mut reads: [Option<LoanRead<'_>>; MAX_IOV] = std::array::from_fn(|_| None);
        for (p, r) in self.parts.iter().zip(reads.iter_mut().take(MAX_IOV - 1)) {
            *r = p.read_loan();
        }
        let mut bufs: [&[u8]; MAX_IOV] = [&[]; MAX_IOV];
        let mut k = 0;
        for (i, (p, r)) in self.parts.iter().zip(&reads).take(MAX_IOV - 1).enumerate() {
            let start = if i == 0 { self.front_done } else { 0 };
            bufs[k] = p.bytes_from(r, start);
            k += 1;
        }
        let all_parts = k == self.parts.len();
        if all_parts && engine.has_output() {
            bufs[k] = engine.output();
            k += 1;
        }
        let held = match hold {
            Some(mss) if all_parts => trim_to_segments(&mut bufs[..k], mss),
            _ => false,
        };
        let asked: usize = bufs[..k].iter().map(|b| b.len()).sum();
        let iov: [IoSlice<'_>; MAX_IOV] = std::array::from_fn(|i| IoSlice::new(bufs[i]));
        let n = stream.write_vectored(&iov[..k]);
        drop(reads);
        let n = n?;
        // Held only if the kernel took all that was asked (else it is simply full).
        let held = held && n == asked;
        let mut left = n;
        while left > 0 {
            let Some(front) = self.parts.front() else {
                engine.consume_output(left);
                break;
            };
            let rest = front.len() - self.front_done;
            if left < rest {
                self.front_done += left;
                if let Part::Body(m) = front {
                    // The kernel took part of it: a lender still in its send call copies
                    // only the rest.
                    m.note_body_written(self.front_done);
                }
                break;
            }
            left -= rest;
            self.front_done = 0;
            self.parts.pop_front();
        }
        Ok((n, held))
    }
}

/// Most bytes a write leaves for the next one to round it down to whole segments: a copy
/// of at most this much (the lender's, of a lent body's end) per message.
pub(super) const HOLD_MAX: usize = 4 * 1024;

/// Shortens the end of `bufs` so that their total is a multiple of `mss`, if that leaves
/// something to write and holds back at most `HOLD_MAX` bytes. True if it did.
fn trim_to_segments(bufs: &mut [&[u8]], mss: usize) -> bool {
    let total: usize = bufs.iter().map(|b| b.len()).sum();
    let mut cut = total % mss;
    if cut == 0 || cut > HOLD_MAX || cut >= total {
        return false;
    }
    for b in bufs.iter_mut().rev() {
        let take = cut.min(b.len());
        *b = &b[..b.len() - take];
        cut -= take;
        if cut == 0 {
            break;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(bufs: &[&[u8]]) -> Vec<usize> {
        bufs.iter().map(|b| b.len()).collect()
    }

    #[test]
    fn a_write_just_over_whole_segments_keeps_the_rest() {
        let (hdr, body) = ([0u8; 9], vec![0u8; 65536]);
        let mut bufs: [&[u8]; 2] = [&hdr, &body];
        assert!(trim_to_segments(&mut bufs, 65483));
        assert_eq!(lens(&bufs), [9, 65474]);
    }

    #[test]
    fn the_cut_runs_back_over_several_pieces() {
        let (a, b, c) = (vec![1u8; 65480], [2u8; 9], [3u8; 4]);
        let mut bufs: [&[u8]; 3] = [&a, &b, &c];
        // 65493 bytes, 10 over one segment: all of `c` and 6 bytes of `b`.
        assert!(trim_to_segments(&mut bufs, 65483));
        assert_eq!(lens(&bufs), [65480, 3, 0]);
        assert_eq!(bufs[1], &[2u8; 3]);
    }

    #[test]
    fn nothing_is_kept_from_whole_segments_a_large_rest_or_a_short_write() {
        let body = vec![0u8; 3 * 65483];
        for len in [2 * 65483, 65483 + HOLD_MAX + 1, 100] {
            let mut bufs: [&[u8]; 1] = [&body[..len]];
            assert!(!trim_to_segments(&mut bufs, 65483), "{len} bytes");
            assert_eq!(bufs[0].len(), len, "{len} bytes cut anyway");
        }
    }
}
