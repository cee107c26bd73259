//! Bodies lent by the caller of a send for the duration of the call (`zmq_send`'s contract
//! lets the library read the caller's bytes until it returns, no longer).
//!
//! A large frame sent with `Socket::send` goes out as a `Msg` over the caller's bytes. If
//! the connection writes it to the kernel before the call returns (an idle connection
//! written inline, or a streaming one its sender writes along), the bytes are never copied.
//! If anything still holds the message when the call returns (a write queue waiting for
//! room, a ring, an inproc peer, a clone for another pipe), the lender copies the bytes
//! into an ordinary message first, and every later read sees that copy. So nothing that
//! stores a message needs to know about loans, with one exception below.
//!
//! Readers of the caller's bytes announce themselves in `state`; the lender, ending the
//! loan, publishes the copy, closes the loan to new readers and waits for the ones in
//! progress (a `writev` at most: the only long-lived reader, [`Loan::stable`], copies).
//!
//! A body the kernel took in part (a full socket buffer) is mostly written already: when
//! the connection writing it is its only holder, that writer notes how far it got
//! (`Msg::note_body_written`) and the lender copies only the rest. That frame must then
//! never be cloned or read whole (`Msg::data`): a write queue only reads its front body
//! from where it got to, through [`LoanRead::bytes_from`], and drops it when done.

use crate::msg::Msg;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// `Socket::send` lends bodies at least this big (a connection writes them in place, see
/// `io::writeq`); smaller ones are copied into the pool as before.
pub(crate) const LEND_MIN: usize = 8 * 1024;

/// `state` bit: the loan has ended; `copy` is set and `ptr` must not be read.
const ENDED: usize = 1;
/// `state` increment per reader of `ptr` in progress.
const READER: usize = 2;

/// A body lent for the duration of one send call. Shared (`Arc`) by the messages over it.
pub(crate) struct Loan {
    ptr: *const u8,
    len: usize,
    /// `ENDED` plus `READER` per reader of `ptr` in progress.
    state: AtomicUsize,
    /// Body bytes written out by the only frame over this loan (the lender being the other
    /// holder), so never read again: the lender's copy leaves them out.
    written: AtomicUsize,
    /// The bytes, once copied (by the lender ending the loan while the body is still held,
    /// or by a reader that needed them for longer than one write).
    copy: OnceLock<LoanCopy>,
}

/// A loan's copy: its bytes from `from` on (0 unless the lender copied what a writer had
/// not written yet).
struct LoanCopy {
    tail: Msg,
    from: usize,
}

// SAFETY: `ptr` is only read, and only while the loan has not ended (each read is counted
// in `state` and the lender waits for those before the caller's borrow ends, see
// `with_lent`); everything else is thread-safe itself.
unsafe impl Send for Loan {}
// SAFETY: as above; shared access only ever reads `ptr`'s bytes.
unsafe impl Sync for Loan {}

/// The bytes of a loan for one write: the caller's own while the loan lasts (and the loan
/// cannot end while this is alive), or the copy.
pub(crate) enum LoanRead<'a> {
    /// The caller's `len` bytes at `ptr`; the loan's reader count holds the lender. Kept
    /// raw, not as a slice: `drop` gives the count back, and the lender may change its
    /// bytes from then on, while a slice held by the guard would still be a live borrow
    /// until `drop` returned (Miri caught the lender's write in that window).
    Live {
        ptr: *const u8,
        len: usize,
        state: &'a AtomicUsize,
    },
    /// The copy made when the loan ended: the body's bytes from `from` on.
    Copied { tail: &'a [u8], from: usize },
}

impl LoanRead<'_> {
    /// The bytes, for as long as this guard is borrowed.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.bytes_from(0)
    }

    /// The bytes from `start` on. Panics if they were not copied: only the writer that
    /// noted how far it got reads a partial copy, and never before that point.
    pub(crate) fn bytes_from(&self, start: usize) -> &[u8] {
        match self {
            // SAFETY: this reader is counted until the guard drops, so the lender is still
            // inside `with_lent` and its `len` bytes at `ptr` stay borrowed and unchanged;
            // the slice cannot outlive the borrow of the guard.
            LoanRead::Live { ptr, len, .. } => unsafe {
                &std::slice::from_raw_parts(*ptr, *len)[start..]
            },
            LoanRead::Copied { tail, from } => {
                assert!(start >= *from, "a read of bytes the loan's copy left out");
                &tail[start - from..]
            }
        }
    }
}

impl Drop for LoanRead<'_> {
    fn drop(&mut self) {
        if let LoanRead::Live { state, .. } = self {
            // Release: this reader's reads happen before the lender's return.
            state.fetch_sub(READER, Ordering::Release);
        }
    }
}

impl Loan {
    /// Length of the body.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes for one short read (a `writev`): while the result lives the lender waits.
    pub(crate) fn read(&self) -> LoanRead<'_> {
        if let Some(c) = self.copy.get() {
            return c.read();
        }
        let before = self.state.fetch_add(READER, Ordering::Acquire);
        if before & ENDED != 0 {
            self.state.fetch_sub(READER, Ordering::Relaxed);
            let copy = self
                .copy
                .get()
                .expect("a loan's copy is set before it ends");
            return copy.read();
        }
        // The loan has not ended and this reader is counted, so the lender is still inside
        // `with_lent` (waiting for the count to drop, at the latest) and the caller's `len`
        // bytes at `ptr` are borrowed, unchanged, for as long as the guard lives.
        LoanRead::Live {
            ptr: self.ptr,
            len: self.len,
            state: &self.state,
        }
    }

    /// The copy; only after `stable` (or the loan's end) made it. Panics for a copy of
    /// the unwritten part only (see the module doc).
    pub(crate) fn copied(&self) -> &Msg {
        self.copy
            .get()
            .expect("copied by stable() or the end of the loan")
            .whole()
    }

    /// The bytes for as long as the loan itself lives: copies them (once) unless the loan
    /// has ended already, which copied them. Panics for a copy of the unwritten part only.
    pub(crate) fn stable(&self) -> &[u8] {
        self.copy_tail(0).whole().data()
    }

    /// The copy, made now (of the bytes from `from` on) unless it exists.
    fn copy_tail(&self, from: usize) -> &LoanCopy {
        if let Some(c) = self.copy.get() {
            return c;
        }
        let read = self.read();
        let copy = self.copy.get_or_init(|| LoanCopy {
            tail: Msg::copy_from(read.bytes_from(from)),
            from,
        });
        drop(read);
        copy
    }

    /// Called by the only frame over this loan, which has written the body's first `n`
    /// bytes out and will not read them again.
    pub(crate) fn note_written(&self, n: usize) {
        self.written.fetch_max(n, Ordering::Release);
    }
}

impl LoanCopy {
    fn read(&self) -> LoanRead<'_> {
        LoanRead::Copied {
            tail: self.tail.data(),
            from: self.from,
        }
    }

    /// The whole copy. Panics for a partial one: only the writer that noted how far it got
    /// holds a loan copied in part, and it reads through `LoanRead::bytes_from`.
    fn whole(&self) -> &Msg {
        assert_eq!(self.from, 0, "the whole of a loan copied in part");
        &self.tail
    }
}

/// Ends a loan when dropped (also when the send panicked).
struct Lender(Arc<Loan>);

impl Drop for Lender {
    fn drop(&mut self) {
        if Arc::get_mut(&mut self.0).is_some() {
            // Nothing else holds the body (the kernel took it): nobody can read it again.
            return;
        }
        let loan = &*self.0;
        // Still held somewhere: copy the bytes out while they are ours to read (those its
        // only holder has not written yet), then turn new readers to the copy and wait out
        // the ones reading the caller's bytes.
        loan.copy_tail(loan.written.load(Ordering::Acquire));
        loan.state.fetch_or(ENDED, Ordering::AcqRel);
        let mut spins = 0u32;
        while loan.state.load(Ordering::Acquire) & !ENDED != 0 {
            // A reader is inside one write; it takes microseconds.
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Calls `send` with a message over `data`'s bytes (no copy) and returns what it returns.
/// Whatever still holds the message (or a clone of it) when `send` returns holds a copy
/// from then on; the caller may change `data` as soon as this returns.
pub(crate) fn with_lent<R>(data: &[u8], send: impl FnOnce(Msg) -> R) -> R {
    let loan = Arc::new(Loan {
        ptr: data.as_ptr(),
        len: data.len(),
        state: AtomicUsize::new(0),
        written: AtomicUsize::new(0),
        copy: OnceLock::new(),
    });
    let lender = Lender(loan.clone());
    let result = send(Msg::from_loan(loan));
    drop(lender);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_gone_before_the_return_is_never_copied() {
        let data = vec![5u8; 100];
        let copied = with_lent(&data, |m| {
            assert_eq!(m.len(), 100);
            let Some(loan) = m.loan() else {
                panic!("not lent")
            };
            let read = loan.read();
            assert!(matches!(read, LoanRead::Live { .. }));
            assert_eq!(read.bytes().as_ptr(), data.as_ptr(), "the caller's bytes");
            drop(read);
            loan.copy.get().is_some()
        });
        assert!(!copied);
    }

    #[test]
    fn a_message_held_past_the_return_keeps_the_bytes_as_they_were() {
        let mut data = vec![1u8; 300];
        let kept = with_lent(&data, |m| {
            let clone = m.clone();
            drop(m);
            clone
        });
        data.fill(2);
        let loan = kept.loan().expect("lent");
        assert!(matches!(loan.read(), LoanRead::Copied { from: 0, .. }));
        assert_eq!(kept.data(), &[1u8; 300][..]);
        assert_ne!(kept.data().as_ptr(), data.as_ptr());
    }

    #[test]
    fn a_body_its_only_holder_wrote_in_part_is_copied_from_there() {
        let mut data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let kept = with_lent(&data, |m| {
            m.note_body_written(600);
            m
        });
        data.fill(0);
        let loan = kept.loan().expect("lent");
        let read = loan.read();
        assert!(matches!(read, LoanRead::Copied { from: 600, .. }));
        let expect: Vec<u8> = (600..1000u32).map(|i| i as u8).collect();
        assert_eq!(read.bytes_from(600), &expect[..]);
        assert_eq!(read.bytes_from(999), &[(999u32 as u8)][..]);
    }

    #[test]
    fn a_writer_noting_progress_while_the_lender_copies_reads_whole_bytes() {
        let n = if cfg!(miri) { 4 } else { 200 };
        for round in 0..n {
            let mut data = vec![round as u8; 4096];
            let (tx, rx) = std::sync::mpsc::channel::<Msg>();
            let (noted_tx, noted_rx) = std::sync::mpsc::channel::<()>();
            let writer = std::thread::spawn(move || {
                let m = rx.recv().expect("a message");
                let loan = m.loan().expect("lent");
                // As a write queue does: read from how far it got, then note the progress.
                let mut done = 0;
                while done < 4096 {
                    let read = loan.read();
                    let chunk = &read.bytes_from(done)[..512];
                    assert!(chunk.iter().all(|&b| b == round as u8), "bytes of the call");
                    drop(read);
                    done += 512;
                    m.note_body_written(done);
                    if done == 512 {
                        noted_tx.send(()).expect("lender alive");
                    }
                }
            });
            // The loan ends after the first note, while the writer goes on: the copy
            // starts at 512 or later.
            with_lent(&data, |m| {
                tx.send(m).expect("writer alive");
                noted_rx.recv().expect("a first note");
            });
            data.fill(0xEE);
            writer.join().expect("writer");
        }
    }

    #[test]
    fn a_body_with_another_holder_is_copied_whole() {
        let data = vec![7u8; 1000];
        let (kept, other) = with_lent(&data, |m| {
            let other = m.clone();
            // Another frame may still read every byte: the note must not shorten the copy.
            m.note_body_written(600);
            (m, other)
        });
        assert!(matches!(
            kept.loan().expect("lent").read(),
            LoanRead::Copied { from: 0, .. }
        ));
        assert_eq!(other.data(), &[7u8; 1000][..]);
    }

    #[test]
    fn a_peek_during_the_loan_reads_the_callers_bytes_without_a_copy() {
        let data = vec![4u8; 300];
        let copied = with_lent(&data, |m| {
            let (ptr, sum) = m.peek(|b| (b.as_ptr(), b.iter().map(|&x| x as usize).sum::<usize>()));
            assert_eq!(ptr, data.as_ptr(), "read where the caller keeps them");
            assert_eq!(sum, 4 * 300);
            m.loan().is_some_and(|l| l.copy.get().is_some())
        });
        assert!(!copied, "a peek made a copy");
        // Not lent: the same bytes as data().
        let m = Msg::copy_from(b"topic body");
        assert_eq!(m.peek(|b| b.to_vec()), m.data());
    }

    #[test]
    fn a_stable_read_during_the_loan_copies_once() {
        let data = vec![3u8; 64];
        let kept = with_lent(&data, |m| {
            let a = m.data().as_ptr();
            assert_ne!(
                a,
                data.as_ptr(),
                "data() never hands out the caller's bytes"
            );
            assert_eq!(m.data().as_ptr(), a, "one copy");
            m
        });
        assert_eq!(kept.data(), &[3u8; 64][..]);
    }

    #[test]
    fn the_lender_waits_for_a_reader_on_another_thread() {
        let n = if cfg!(miri) { 4 } else { 200 };
        for round in 0..n {
            let mut data = vec![round as u8; 4096];
            let (tx, rx) = std::sync::mpsc::channel::<Msg>();
            let reader = std::thread::spawn(move || {
                let m = rx.recv().expect("a message");
                let loan = m.loan().expect("lent");
                // Whether it reads the caller's bytes or the copy, they are whole.
                let read = loan.read();
                let first = read.bytes()[0];
                assert!(read.bytes().iter().all(|&b| b == first));
                drop(read);
                assert!(m.data().iter().all(|&b| b == round as u8));
            });
            with_lent(&data, |m| tx.send(m).expect("reader alive"));
            data.fill(0xEE);
            reader.join().expect("reader");
        }
    }
}
