//! Fair-queueing: read whole messages from the pipes in turn.

use crate::msg::Msg;
use crate::pipe::Pipe;
use std::sync::Arc;

/// Round-robin reader over inbound pipes that never interleaves two messages.
#[derive(Default)]
pub(crate) struct FairQueue {
    pipes: Vec<Arc<Pipe>>,
    current: usize,
    /// Inside a multipart message: stay on `current`.
    more: bool,
    /// The pipe the last frame `recv_frame` returned came from.
    last_pipe: u64,
    /// The last frame taken ended a message of the pipe that is `current` again, and that
    /// pipe's reader already knew of a next whole message then (see `peek_known`).
    known_next: bool,
}

impl FairQueue {
    /// Moves to the next pipe, round-robin.
    #[inline]
    fn advance(&mut self) {
        self.current = super::next_pipe(self.current, self.pipes.len());
    }

    pub(crate) fn attach(&mut self, pipe: Arc<Pipe>) {
        self.pipes.push(pipe);
    }

    pub(crate) fn detach(&mut self, pipe_id: u64) {
        // Inbound frames already queued stay readable: the pipe leaves once drained.
        let _ = pipe_id;
    }

    /// True while `pipe_id` is one of the pipes read (a detached pipe stays until drained).
    pub(crate) fn holds(&self, pipe_id: u64) -> bool {
        self.pipes.iter().any(|p| p.id == pipe_id)
    }

    /// Drops a pipe after handing `each` the frames still queued on it, in order.
    pub(crate) fn remove_after(&mut self, pipe_id: u64, mut each: impl FnMut(Msg)) {
        if let Some(p) = self.pipes.iter().find(|p| p.id == pipe_id) {
            let mut m = Msg::new();
            while p.inq.pop_into(&mut m) {
                each(std::mem::take(&mut m));
            }
        }
        self.remove(pipe_id);
    }

    /// Drops a pipe at once (unread frames are discarded).
    pub(crate) fn remove(&mut self, pipe_id: u64) {
        if let Some(i) = self.pipes.iter().position(|p| p.id == pipe_id) {
            self.known_next = false;
            if self.more && i == self.current {
                self.more = false;
            }
            self.pipes.remove(i);
            if self.current > i || self.current >= self.pipes.len() {
                self.current = self
                    .current
                    .saturating_sub(1)
                    .min(self.pipes.len().saturating_sub(1));
                if self.pipes.is_empty() {
                    self.current = 0;
                }
            }
        }
    }

    /// The next frame and the pipe it came from.
    #[inline]
    pub(crate) fn recv(&mut self) -> Option<(Msg, u64)> {
        let m = self.recv_frame()?;
        Some((m, self.last_pipe))
    }

    /// The pipe the frame last returned by [`recv_frame`](Self::recv_frame) came from.
    #[inline]
    pub(crate) fn last_pipe(&self) -> u64 {
        self.last_pipe
    }

    /// The next frame ([`last_pipe`](Self::last_pipe) says where from).
    #[inline]
    pub(crate) fn recv_frame(&mut self) -> Option<Msg> {
        let mut m = Msg::new();
        self.recv_frame_into(&mut m).then_some(m)
    }

    /// [`recv_frame`](Self::recv_frame) into `out` (see `Queue::pop_into`): false, `out`
    /// untouched, if no frame is readable.
    #[inline]
    pub(crate) fn recv_frame_into(&mut self, out: &mut Msg) -> bool {
        self.take_frame::<false>(out)
    }

    /// `recv_frame_into`; with `KNOWN`, a message's last frame also records whether its
    /// pipe's reader knew of a next message (for `peek_known`; a ROUTER's reads). Without,
    /// the pipe is not asked (a PULL's or DEALER's reads skip that work).
    #[inline(always)]
    fn take_frame<const KNOWN: bool>(&mut self, out: &mut Msg) -> bool {
        self.known_next = false;
        if self.more {
            let p = &self.pipes[self.current];
            let id = p.id;
            if let Some(known) = p.inq.pop_into_known(out) {
                self.more = out.more();
                if !self.more {
                    self.end_message(KNOWN && known);
                }
                self.last_pipe = id;
                return true;
            }
            // A whole message is queued before its first frame is readable; this only
            // happens if the writer vanished mid-message.
            self.more = false;
        }
        let n = self.pipes.len();
        let mut i = 0;
        while i < n && !self.pipes.is_empty() {
            if self.current >= self.pipes.len() {
                self.current = 0;
            }
            let p = &self.pipes[self.current];
            if let Some(known) = p.inq.pop_into_known(out) {
                self.last_pipe = p.id;
                self.more = out.more();
                if !self.more {
                    self.end_message(KNOWN && known);
                }
                return true;
            }
            if p.inq.is_finished() {
                let id = p.id;
                self.remove(id);
                continue;
            }
            self.advance();
            i += 1;
        }
        false
    }

    /// After a message's last frame: on to the next pipe, remembering whether the one
    /// read knew of another message if it is the next one again (a single pipe).
    #[inline]
    fn end_message(&mut self, known: bool) {
        let was = self.current;
        self.advance();
        self.known_next = known && self.current == was;
    }

    /// The next frame of the message being read into `out` (see `recv_frame_into`), with
    /// its more flag; `Again` if none. Records for `peek_known` what the pipe's reader
    /// knew at a last frame.
    #[inline]
    pub(crate) fn rest_frame_into(&mut self, out: &mut Msg) -> crate::error::Result<bool> {
        if self.take_frame::<true>(out) {
            Ok(out.more())
        } else {
            Err(crate::error::Error::Again)
        }
    }

    /// Without taking it: the pipe whose next message is already known to be queued, if
    /// it is the current one. Stays on that pipe, so the following `recv_frame` calls
    /// return that message's frames. None (and nothing changed) otherwise: the caller
    /// then reads through `recv_frame`, which refreshes, spins and arms as a read must.
    #[inline]
    pub(crate) fn peek_known(&mut self) -> Option<u64> {
        if self.more {
            return None;
        }
        let p = self.pipes.get(self.current)?;
        // Known from the last message's read (no reader lock taken to look again): only
        // that reader takes messages from its queue, and it is ours. A closed reader has
        // had its queue discarded.
        let known = if std::mem::take(&mut self.known_next) {
            !p.inq.is_reader_closed()
        } else {
            p.inq.has_known()
        };
        if !known {
            return None;
        }
        self.more = true;
        self.last_pipe = p.id;
        Some(p.id)
    }

    /// True while inside a message of `last_pipe` (its next frame comes from there).
    #[inline]
    pub(crate) fn in_message(&self) -> bool {
        self.more
    }

    /// True if a frame can be read now.
    pub(crate) fn has_in(&mut self) -> bool {
        if self.more {
            return true;
        }
        self.pipes.iter().any(|p| p.inq.readable())
    }
}

#[cfg(test)]
mod tests {
    use super::FairQueue;
    use crate::msg::Msg;
    use crate::pipe::Pipe;
    use std::sync::Arc;

    /// A pipe whose reading end `fq` reads; returns the writing end.
    fn attached(fq: &mut FairQueue) -> (Arc<Pipe>, u64) {
        let (writer, reader) = Pipe::pair(0, 0);
        let id = reader.id;
        fq.attach(reader);
        (writer, id)
    }

    fn push_two_frames(w: &Pipe, tag: u8) {
        let mut id = Msg::copy_from(&[tag]);
        id.set_more(true);
        assert!(w.out.push(id).is_ok());
        assert!(w.out.push(Msg::copy_from(&[tag; 64])).is_ok());
    }

    /// Reads one whole message as a ROUTER does; returns its first byte.
    fn read_message(fq: &mut FairQueue) -> u8 {
        let mut m = Msg::new();
        let mut more = fq.rest_frame_into(&mut m).unwrap();
        let tag = m.data()[0];
        while more {
            more = fq.rest_frame_into(&mut m).unwrap();
        }
        tag
    }

    #[test]
    fn peek_known_remembers_the_next_message_of_a_single_pipe() {
        let mut fq = FairQueue::default();
        let (w, id) = attached(&mut fq);
        for tag in 1..=3 {
            push_two_frames(&w, tag);
        }
        assert_eq!(read_message(&mut fq), 1);
        assert_eq!(fq.peek_known(), Some(id));
        assert_eq!(read_message(&mut fq), 2);
        assert_eq!(fq.peek_known(), Some(id));
        assert_eq!(read_message(&mut fq), 3);
        assert_eq!(fq.peek_known(), None, "nothing more was queued");
        // Queued after the reader last looked: not known until a read looks again.
        push_two_frames(&w, 4);
        assert_eq!(fq.peek_known(), None);
        assert_eq!(read_message(&mut fq), 4);
    }

    #[test]
    fn peek_known_forgets_a_closed_reader() {
        let mut fq = FairQueue::default();
        let (w, _) = attached(&mut fq);
        push_two_frames(&w, 1);
        push_two_frames(&w, 2);
        assert_eq!(read_message(&mut fq), 1);
        fq.pipes[0].inq.close_reader();
        assert_eq!(fq.peek_known(), None, "its queue was discarded");
    }

    #[test]
    fn peek_known_with_two_pipes_looks_at_the_current_one() {
        let mut fq = FairQueue::default();
        let (w1, id1) = attached(&mut fq);
        let (_w2, _) = attached(&mut fq);
        push_two_frames(&w1, 1);
        push_two_frames(&w1, 2);
        assert_eq!(read_message(&mut fq), 1);
        // The read moved on to the second pipe, which has nothing: the first one's next
        // message must not be claimed for it.
        assert_eq!(fq.peek_known(), None);
        assert_eq!(read_message(&mut fq), 2);
        // Removing the pipe read last forgets what was known of it.
        push_two_frames(&w1, 3);
        push_two_frames(&w1, 4);
        assert_eq!(read_message(&mut fq), 3);
        fq.remove(id1);
        assert_eq!(fq.peek_known(), None);
    }
}
