//! Whole segments for a thread streaming large messages over tcp.
//!
//! Over loopback a tcp segment carries up to ~64 KiB (the MSS is 65,483 bytes), and the
//! kernel's cost per write is mostly per segment it sends, whatever its size. A 64 KiB
//! message with its 9-byte header is 62 bytes over one segment, so writing each message as
//! it is sent (what `zmq_send` must do without copying: the caller's buffer is free again
//! when it returns) sends two segments per message, the second one tiny. A C writer doing
//! that moved 64 KiB messages at ~75 % of the bytes/s of one writing 256 KiB at a time;
//! the same writer with messages 62 bytes shorter (one whole segment each) as fast as the
//! 256 KiB one (`docs/results/2026-12-06-whole-segments.md`).
//!
//! So while an application thread streams large messages to one connection, its write
//! stops at the last whole segment and leaves the few bytes past it (at most
//! `writeq::HOLD_MAX`) queued for its next message's write; a lent body's lender copies
//! them when its call returns. Nothing is held for a thread that waited for input
//! since (a reply, a request: sent at once), and what is held goes out when the thread
//! next waits for input (`assist::note_wait`), when the I/O thread writes the connection
//! for any reason, or `HOLD_FLUSH_AFTER` after the stream's last message
//! (`Timer::HeldTail`; a period or two more if the timer, or its arming, finds the
//! connection held by an application thread: the reactor does not wait for the lock).

use super::stream::Stream;
use std::time::{Duration, Instant};

/// What a stream's last message may wait for its held bytes if its thread neither sends
/// nor waits for input again. The reactor's timers have millisecond resolution; while
/// the stream goes on, the timer costs the I/O thread one wake-up per this period.
pub(super) const HOLD_FLUSH_AFTER: Duration = Duration::from_millis(1);

/// Segments smaller than this are left alone (a network's ~1,448 bytes: the NIC
/// segments large writes itself, and every write's last segment is small anyway).
const HOLD_MSS_MIN: usize = 16 * 1024;

/// The segment size is asked again after this many writes that may hold (it grows with
/// the peer's window during a connection's first writes).
const MSS_REFRESH_WRITES: u32 = 64;

/// A connection's state for holding back the bytes past its last whole segment.
#[derive(Default)]
pub(super) struct TailHold {
    /// The running flush may hold bytes back (an application thread streaming).
    pub(super) allowed: bool,
    /// The segment size last asked, 0 before the first ask.
    mss: usize,
    /// Writes that may hold before `mss` is asked again.
    until_refresh: u32,
    /// When a write last held bytes back (None: nothing held since the timer last looked).
    held_at: Option<Instant>,
    /// The connection's last write held bytes back, and nothing was written since.
    pending: bool,
    /// A `Timer::HeldTail` is pending.
    timer_armed: bool,
    /// Writes that held bytes back so far (for tests).
    pub(super) held_writes: u64,
}

/// What the `Timer::HeldTail` look found.
pub(super) enum HeldTailDue {
    /// The stream goes on: look again then.
    Later(Instant),
    /// Write what is held now.
    Flush,
}

impl TailHold {
    /// The segment size to round the next write down to, if the running flush may hold
    /// bytes back on this stream.
    pub(super) fn segment(&mut self, stream: &Stream) -> Option<usize> {
        if !self.allowed || !matches!(stream, Stream::Tcp(_)) {
            return None;
        }
        if self.until_refresh == 0 {
            self.mss = stream.tcp_mss().unwrap_or(0);
            self.until_refresh = MSS_REFRESH_WRITES;
        }
        self.until_refresh -= 1;
        (self.mss >= HOLD_MSS_MIN).then_some(self.mss)
    }

    /// A write held bytes back at `now`. True if the timer must be armed (for
    /// `now + HOLD_FLUSH_AFTER`).
    pub(super) fn held(&mut self, now: Instant) -> bool {
        self.held_writes += 1;
        self.pending = true;
        self.held_at = Some(now);
        !std::mem::replace(&mut self.timer_armed, true)
    }

    /// The connection's last write held bytes back (they are still queued).
    pub(super) fn holding(&self) -> bool {
        self.pending
    }

    /// A write that held nothing back, or found the kernel full: whatever is queued now
    /// waits for room or for the next flush as usual.
    pub(super) fn wrote(&mut self) {
        self.pending = false;
    }

    /// `Timer::HeldTail` fired at `now`.
    pub(super) fn due(&mut self, now: Instant) -> HeldTailDue {
        self.timer_armed = false;
        match self.held_at {
            Some(at) if self.pending && now < at + HOLD_FLUSH_AFTER => {
                self.timer_armed = true;
                HeldTailDue::Later(at + HOLD_FLUSH_AFTER)
            }
            _ => {
                self.held_at = None;
                HeldTailDue::Flush
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timer_waits_while_the_stream_goes_on_then_asks_for_the_write() {
        let mut t = TailHold::default();
        let t0 = Instant::now();
        assert!(t.held(t0), "the first hold arms the timer");
        assert!(!t.held(t0 + Duration::from_micros(500)), "armed already");
        // Fires 1 ms after the first hold; the last was 0.5 ms ago: later.
        match t.due(t0 + HOLD_FLUSH_AFTER) {
            HeldTailDue::Later(at) => {
                assert_eq!(at, t0 + Duration::from_micros(500) + HOLD_FLUSH_AFTER)
            }
            HeldTailDue::Flush => panic!("flushed a running stream"),
        }
        assert!(matches!(
            t.due(t0 + 2 * HOLD_FLUSH_AFTER),
            HeldTailDue::Flush
        ));
        assert!(t.holding(), "still queued until a write");
        t.wrote();
        assert!(!t.holding());
        // The next hold arms the timer again.
        assert!(t.held(t0 + 3 * HOLD_FLUSH_AFTER));
        assert_eq!(t.held_writes, 3);
    }
}
