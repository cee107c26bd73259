//! PUSH: load-balances messages over its peers; cannot receive.

use super::{LoadBalancer, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::Pipe;
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct Push {
    lb: LoadBalancer,
}

impl Pattern for Push {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        self.lb.attach(pipe);
    }
    fn detach(&mut self, pipe_id: u64) {
        self.lb.detach(pipe_id);
    }
    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        self.lb.send(msg).map(|_| ())
    }
    fn slice_frames(&self) -> super::SliceFrames {
        super::SliceFrames::LAST
    }

    fn send_slice(&mut self, data: &[u8], more: bool) -> Option<Result<()>> {
        if more {
            return None;
        }
        self.lb.send_copy(data).map(|_| Ok(()))
    }
    fn recv(&mut self) -> Result<Msg> {
        Err(Error::NotSupported)
    }
    fn can_send(&mut self) -> bool {
        self.lb.has_out()
    }
    fn can_recv(&mut self) -> bool {
        false
    }
}
