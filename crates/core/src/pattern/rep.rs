//! REP: receives a request (remembering its routing envelope), then must send exactly one
//! reply, which goes back along that envelope (`EFSM` when used out of turn).

use super::{FairQueue, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::pipe::Pipe;
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Default)]
pub(crate) struct Rep {
    fq: FairQueue,
    pipes: HashMap<u64, Arc<Pipe>>,
    /// A request was received; the reply is owed.
    replying: bool,
    request_more: bool,
    reply_more: bool,
    envelope: Vec<Msg>,
    reply_pipe: Option<u64>,
    /// PROBE_ROUTER: greet every new peer with an empty message.
    probe: bool,
    /// ROUTER_HANDOVER: a peer announcing a routing id another peer holds takes it over
    /// (the other is closed) instead of being refused.
    handover: bool,
    /// Peers' own routing ids (announced, or CONNECT_ROUTING_ID) and their pipes.
    by_id: HashMap<Bytes, u64>,
    /// Pipes whose routing id is known (checked at attach or at the first handshake).
    identified: HashMap<u64, Option<Bytes>>,
}

impl Rep {
    /// Checks a peer's routing id as libzmq's REP (a ROUTER inside) does: one already
    /// held by another peer refuses the newcomer, or with ROUTER_HANDOVER closes the
    /// holder. False if the pipe must be refused.
    fn identify(&mut self, pipe_id: u64, meta: &PeerMeta) -> bool {
        let wanted = meta.wanted_routing_id();
        if let Some(rid) = &wanted {
            if let Some(&holder) = self.by_id.get(rid) {
                if holder != pipe_id {
                    if !self.handover {
                        return false;
                    }
                    self.drop_pipe(holder);
                }
            }
            self.by_id.insert(rid.clone(), pipe_id);
        }
        self.identified.insert(pipe_id, wanted);
        true
    }

    /// Forgets a pipe and closes it (a refused or replaced peer).
    fn drop_pipe(&mut self, pipe_id: u64) {
        if let Some(p) = self.pipes.get(&pipe_id).cloned() {
            self.detach(pipe_id);
            p.close();
        }
    }
}

impl Pattern for Rep {
    fn attach(&mut self, pipe: Arc<Pipe>, meta: Option<&PeerMeta>) {
        let id = pipe.id;
        self.pipes.insert(id, pipe.clone());
        self.fq.attach(pipe.clone());
        if let Some(m) = meta {
            if !self.identify(id, m) {
                self.drop_pipe(id);
                return;
            }
        }
        if self.probe {
            let _ = pipe.out.push(Msg::new());
        }
    }

    fn activated(&mut self, pipe_id: u64, meta: &PeerMeta) {
        if self.pipes.contains_key(&pipe_id)
            && !self.identified.contains_key(&pipe_id)
            && !self.identify(pipe_id, meta)
        {
            self.drop_pipe(pipe_id);
        }
    }

    fn detach(&mut self, pipe_id: u64) {
        self.pipes.remove(&pipe_id);
        self.fq.detach(pipe_id);
        if let Some(Some(rid)) = self.identified.remove(&pipe_id) {
            if self.by_id.get(&rid) == Some(&pipe_id) {
                self.by_id.remove(&rid);
            }
        }
    }

    fn send(&mut self, mut msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        if !self.replying || self.request_more {
            return Err((Error::State, msg));
        }
        let pipe = self.reply_pipe.and_then(|id| self.pipes.get(&id)).cloned();
        if !self.reply_more {
            // Put the envelope back in front of the reply; a gone or full peer loses it.
            for mut e in self.envelope.drain(..) {
                e.set_more(true);
                if let Some(p) = &pipe {
                    if p.out.push(e).is_err() {
                        break;
                    }
                }
            }
        }
        let more = msg.more();
        if let Some(p) = &pipe {
            msg.set_more(more);
            let _ = p.out.push(msg);
        }
        self.reply_more = more;
        if !more {
            self.replying = false;
            self.reply_pipe = None;
        }
        Ok(())
    }

    fn recv(&mut self) -> Result<Msg> {
        if self.replying && !self.request_more {
            return Err(Error::State);
        }
        if self.request_more {
            let (m, _) = self.fq.recv().ok_or(Error::Again)?;
            self.request_more = m.more();
            return Ok(m);
        }
        'outer: loop {
            let (mut m, pipe) = self.fq.recv().ok_or(Error::Again)?;
            self.envelope.clear();
            // Envelope: frames up to and including the empty delimiter.
            loop {
                if !m.more() {
                    // No delimiter: malformed request, drop it.
                    continue 'outer;
                }
                let delim = m.is_empty();
                self.envelope.push(m);
                match self.fq.recv() {
                    Some((next, _)) => m = next,
                    None => continue 'outer,
                }
                if delim {
                    break;
                }
            }
            self.reply_pipe = Some(pipe);
            self.replying = true;
            self.request_more = m.more();
            return Ok(m);
        }
    }

    fn can_send(&mut self) -> bool {
        self.replying && !self.request_more
    }
    fn can_recv(&mut self) -> bool {
        (!self.replying || self.request_more) && self.fq.has_in()
    }

    /// libzmq's REP is a ROUTER inside and takes its options: PROBE_ROUTER greets new
    /// peers, ROUTER_HANDOVER lets a peer take over a routing id another holds;
    /// ROUTER_MANDATORY is taken and changes nothing a REP's user can see (a reply to a
    /// gone requester is dropped either way). Probed against libzmq 4.3.4,
    /// `tests/c/test_rep_router_options.c`.
    fn set_option(&mut self, opt: i32, val: &[u8]) -> Option<Result<()>> {
        use crate::options::{id, pattern_bool_value};
        match opt {
            id::PROBE_ROUTER => Some(pattern_bool_value(val).map(|v| self.probe = v)),
            id::ROUTER_HANDOVER => Some(pattern_bool_value(val).map(|v| self.handover = v)),
            id::ROUTER_MANDATORY => Some(pattern_bool_value(val).map(|_| ())),
            _ => None,
        }
    }
}
