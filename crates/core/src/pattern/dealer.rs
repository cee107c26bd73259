//! DEALER: load-balances outgoing and fair-queues incoming messages.

use super::{FairQueue, LoadBalancer, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::Pipe;
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct Dealer {
    pub(super) lb: LoadBalancer,
    pub(super) fq: FairQueue,
}

impl Pattern for Dealer {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        self.lb.attach(pipe.clone());
        self.fq.attach(pipe);
    }
    fn detach(&mut self, pipe_id: u64) {
        self.lb.detach(pipe_id);
        self.fq.detach(pipe_id);
    }
    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        self.lb.send(msg).map(|_| ())
    }
    fn recv(&mut self) -> Result<Msg> {
        self.fq.recv().map(|(m, _)| m).ok_or(Error::Again)
    }
    fn can_send(&mut self) -> bool {
        self.lb.has_out()
    }
    fn can_recv(&mut self) -> bool {
        self.fq.has_in()
    }
}
