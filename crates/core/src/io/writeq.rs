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
    /// written. Returns the bytes written.
    pub(super) fn write(&mut self, stream: &mut Stream, engine: &mut Codec) -> io::Result<usize> {
        let mut reads: [Option<LoanRead<'_>>; MAX_IOV] = std::array::from_fn(|_| None);
        for (p, r) in self.parts.iter().zip(reads.iter_mut().take(MAX_IOV - 1)) {
            *r = p.read_loan();
        }
        let mut iov: [IoSlice<'_>; MAX_IOV] = [IoSlice::new(&[]); MAX_IOV];
        let mut k = 0;
        for (i, (p, r)) in self.parts.iter().zip(&reads).take(MAX_IOV - 1).enumerate() {
            let start = if i == 0 { self.front_done } else { 0 };
            iov[k] = IoSlice::new(p.bytes_from(r, start));
            k += 1;
        }
        let all_parts = k == self.parts.len();
        if all_parts && engine.has_output() {
            iov[k] = IoSlice::new(engine.output());
            k += 1;
        }
        let n = stream.write_vectored(&iov[..k]);
        drop(reads);
        let n = n?;
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
        Ok(n)
    }
}
