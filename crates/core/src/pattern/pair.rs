//! PAIR: exactly one peer; later peers are refused while one is attached.

use super::{Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::{Pipe, PushError};
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct Pair {
    pipe: Option<Arc<Pipe>>,
    /// Pipes of peers that left with messages still queued, oldest first: read to their
    /// end before the current peer's messages, as libzmq reads a pipe up to its end.
    leaving: Vec<Arc<Pipe>>,
}

impl Pair {
    /// The next message of a peer that left, if any is queued.
    fn recv_leaving(&mut self, out: &mut Msg) -> bool {
        while let Some(p) = self.leaving.first() {
            if p.inq.pop_into(out) {
                return true;
            }
            if !p.inq.is_finished() {
                return false;
            }
            self.leaving.remove(0);
        }
        false
    }
}

impl Pattern for Pair {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        if self.pipe.is_none() {
            self.pipe = Some(pipe);
        } else {
            pipe.close();
        }
    }

    fn detach(&mut self, pipe_id: u64) {
        if self.pipe.as_ref().is_some_and(|p| p.id == pipe_id) {
            if let Some(p) = self.pipe.take().filter(|p| !p.inq.is_finished()) {
                self.leaving.push(p);
            }
        }
    }

    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        match &self.pipe {
            None => Err((Error::Again, msg)),
            Some(p) => p.out.push(msg).map_err(|e| match e {
                PushError::Full(m) | PushError::Closed(m) => (Error::Again, m),
            }),
        }
    }

    fn slice_frames(&self) -> super::SliceFrames {
        super::SliceFrames::LAST
    }

    fn send_slice(&mut self, data: &[u8], more: bool) -> Option<Result<()>> {
        match &self.pipe {
            Some(p) if !more => p.out.push_copy(data).ok().map(Ok),
            _ => None,
        }
    }

    fn recv(&mut self) -> Result<Msg> {
        let mut m = Msg::new();
        self.recv_into(&mut m)?;
        Ok(m)
    }

    fn recv_into(&mut self, out: &mut Msg) -> Result<()> {
        if !self.leaving.is_empty() && self.recv_leaving(out) {
            return Ok(());
        }
        match &self.pipe {
            Some(p) if p.inq.pop_into(out) => Ok(()),
            _ => Err(Error::Again),
        }
    }

    fn can_send(&mut self) -> bool {
        self.pipe.as_ref().is_some_and(|p| p.out.can_write())
    }

    fn can_recv(&mut self) -> bool {
        self.pipe.as_ref().is_some_and(|p| p.inq.readable())
            || self.leaving.iter().any(|p| p.inq.readable())
    }
}
