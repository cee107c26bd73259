//! PULL: fair-queues messages from its peers; cannot send.

use super::{FairQueue, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::Pipe;
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct Pull {
    fq: FairQueue,
}

impl Pattern for Pull {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        self.fq.attach(pipe);
    }
    fn detach(&mut self, pipe_id: u64) {
        self.fq.detach(pipe_id);
    }
    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        Err((Error::NotSupported, msg))
    }
    fn recv(&mut self) -> Result<Msg> {
        self.fq.recv_frame().ok_or(Error::Again)
    }
    fn recv_into(&mut self, out: &mut Msg) -> Result<()> {
        self.fq
            .recv_frame_into(out)
            .then_some(())
            .ok_or(Error::Again)
    }
    fn can_send(&mut self) -> bool {
        false
    }
    fn can_recv(&mut self) -> bool {
        self.fq.has_in()
    }
}
