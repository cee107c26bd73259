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
    pub(crate) fn recv_frame_into(&mut self, out: &mut Msg) -> bool {
        if self.more {
            let p = &self.pipes[self.current];
            let id = p.id;
            if p.inq.pop_into(out) {
                self.more = out.more();
                if !self.more {
                    self.advance();
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
            if p.inq.pop_into(out) {
                self.last_pipe = p.id;
                self.more = out.more();
                if !self.more {
                    self.advance();
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

    /// The next frame of the message being read into `out` (see `recv_frame_into`), with
    /// its more flag; `Again` if none.
    #[inline]
    pub(crate) fn rest_frame_into(&mut self, out: &mut Msg) -> crate::error::Result<bool> {
        if self.recv_frame_into(out) {
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
        if !p.inq.has_known() {
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
