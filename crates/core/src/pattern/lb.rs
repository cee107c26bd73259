//! Load-balancing: each whole message goes to the next pipe with room.

use crate::error::Error;
use crate::msg::Msg;
use crate::pipe::{Pipe, PushError};
use std::sync::Arc;

/// Round-robin writer over outbound pipes that never splits a message.
#[derive(Default)]
pub(crate) struct LoadBalancer {
    pipes: Vec<Arc<Pipe>>,
    current: usize,
    /// Inside a multipart message: the rest goes to `current` (or is dropped if it died).
    more: bool,
    dropping: bool,
}

impl LoadBalancer {
    /// Moves to the next pipe, round-robin.
    #[inline]
    fn advance(&mut self) {
        self.current = super::next_pipe(self.current, self.pipes.len());
    }

    pub(crate) fn attach(&mut self, pipe: Arc<Pipe>) {
        self.pipes.push(pipe);
    }

    pub(crate) fn detach(&mut self, pipe_id: u64) {
        if let Some(i) = self.pipes.iter().position(|p| p.id == pipe_id) {
            if self.more && i == self.current {
                self.dropping = true;
            }
            self.pipes.remove(i);
            if self.current > i {
                self.current -= 1;
            }
            if self.current >= self.pipes.len() {
                self.current = 0;
            }
        }
    }

    /// Sends one frame; returns the pipe id used.
    pub(crate) fn send(&mut self, msg: Msg) -> Result<Option<u64>, (Error, Msg)> {
        if self.dropping {
            // The pipe died mid-message: swallow the rest of that message.
            self.dropping = msg.more();
            self.more = self.dropping;
            return Ok(None);
        }
        if self.more {
            let p = &self.pipes[self.current];
            let id = p.id;
            let more = msg.more();
            match p.out.push(msg) {
                Ok(()) => {}
                Err(PushError::Closed(_)) | Err(PushError::Full(_)) => {}
            }
            self.more = more;
            if !more {
                self.advance();
            }
            return Ok(Some(id));
        }
        let n = self.pipes.len();
        let mut msg = msg;
        for _ in 0..n {
            if self.current >= self.pipes.len() {
                self.current = 0;
            }
            let p = &self.pipes[self.current];
            let more = msg.more();
            match p.out.push(msg) {
                Ok(()) => {
                    let id = p.id;
                    self.more = more;
                    if !more {
                        self.advance();
                    }
                    return Ok(Some(id));
                }
                Err(PushError::Full(m)) => {
                    msg = m;
                    self.advance();
                }
                Err(PushError::Closed(m)) => {
                    msg = m;
                    let id = p.id;
                    self.detach(id);
                }
            }
        }
        Err((Error::Again, msg))
    }

    /// `send` of a message's last (or only) frame copied from `data` straight into the
    /// pipe's queue (`Queue::push_copy`): the frame is never built and moved. `None`: not
    /// sent and nothing changed (the current pipe is full or gone, or frames are being
    /// dropped); build the frame and `send` it, which moves on to the other pipes.
    #[inline]
    pub(crate) fn send_copy(&mut self, data: &[u8]) -> Option<u64> {
        if self.dropping {
            return None;
        }
        if self.current >= self.pipes.len() {
            self.current = 0;
        }
        let p = self.pipes.get(self.current)?;
        // Inside a message, its rest goes to its pipe whatever the mark, as in `send`.
        if p.out.push_copy(data).is_err() && !self.more {
            return None;
        }
        let id = p.id;
        self.more = false;
        self.advance();
        Some(id)
    }

    /// True if some pipe has room for a new message (or a message is in progress).
    pub(crate) fn has_out(&self) -> bool {
        self.more || self.pipes.iter().any(|p| p.out.can_write())
    }
}
