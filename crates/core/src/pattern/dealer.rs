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
    /// PROBE_ROUTER: greet every new peer with an empty message.
    probe: bool,
}

impl Dealer {
    pub(super) fn set_probe(&mut self, val: &[u8]) -> Result<()> {
        self.probe = crate::options::pattern_bool_value(val)?;
        Ok(())
    }
}

impl Pattern for Dealer {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        if self.probe {
            let _ = pipe.out.push(Msg::new());
        }
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
        self.fq.recv_frame().ok_or(Error::Again)
    }
    fn recv_into(&mut self, out: &mut Msg) -> Result<()> {
        self.fq
            .recv_frame_into(out)
            .then_some(())
            .ok_or(Error::Again)
    }
    fn can_send(&mut self) -> bool {
        self.lb.has_out()
    }
    fn can_recv(&mut self) -> bool {
        self.fq.has_in()
    }
    fn set_option(&mut self, opt: i32, val: &[u8]) -> Option<Result<()>> {
        (opt == crate::options::id::PROBE_ROUTER).then(|| self.set_probe(val))
    }
}
