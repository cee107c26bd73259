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
    pub(crate) fn recv(&mut self) -> Option<(Msg, u64)> {
        if self.more {
            let p = &self.pipes[self.current];
            let id = p.id;
            if let Some(m) = p.inq.pop() {
                self.more = m.more();
                if !self.more {
                    self.advance();
                }
                return Some((m, id));
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
            if let Some(m) = p.inq.pop() {
                let id = p.id;
                self.more = m.more();
                if !self.more {
                    self.advance();
                }
                return Some((m, id));
            }
            if p.inq.is_finished() {
                let id = p.id;
                self.remove(id);
                continue;
            }
            self.advance();
            i += 1;
        }
        None
    }

    /// True if a frame can be read now.
    pub(crate) fn has_in(&mut self) -> bool {
        if self.more {
            return true;
        }
        self.pipes.iter().any(|p| p.inq.readable())
    }
}
