//! REQ: strict send/receive alternation; each request goes to the next peer and only that
//! peer's reply is accepted (`EFSM` when used out of turn, unless REQ_RELAXED).

use super::dealer::Dealer;
use super::{Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::{id, pattern_bool_value};
use crate::pipe::Pipe;
use std::sync::Arc;

pub(crate) struct Req {
    inner: Dealer,
    /// A request was sent; a reply is expected.
    receiving: bool,
    /// Inside a request being sent (after its first frame).
    sending_more: bool,
    /// Inside a reply being returned to the caller.
    reply_more: bool,
    reply_pipe: Option<u64>,
    request_id: u32,
    relaxed: bool,
    correlate: bool,
}

impl Default for Req {
    fn default() -> Self {
        // libzmq starts request ids at a random value; any start works for correlation.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() ^ std::process::id())
            .unwrap_or(1);
        Req {
            inner: Dealer::default(),
            receiving: false,
            sending_more: false,
            reply_more: false,
            reply_pipe: None,
            request_id: seed,
            relaxed: false,
            correlate: false,
        }
    }
}

impl Req {
    /// Discards the rest of a message whose first frame was already taken.
    fn drop_rest(&mut self, first: &Msg) {
        let mut more = first.more();
        while more {
            match self.inner.fq.recv() {
                Some((m, _)) => more = m.more(),
                None => break,
            }
        }
    }
}

impl Pattern for Req {
    fn attach(&mut self, pipe: Arc<Pipe>, meta: Option<&PeerMeta>) {
        self.inner.attach(pipe, meta);
    }
    fn detach(&mut self, pipe_id: u64) {
        self.inner.detach(pipe_id);
        if self.reply_pipe == Some(pipe_id) && self.receiving && self.relaxed {
            self.reply_pipe = None;
        }
    }

    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        if !self.sending_more {
            if self.receiving {
                if !self.relaxed {
                    return Err((Error::State, msg));
                }
                self.receiving = false;
                self.reply_more = false;
            }
            if !self.inner.lb.has_out() {
                return Err((Error::Again, msg));
            }
            self.request_id = self.request_id.wrapping_add(1);
            if self.correlate {
                let mut idm = Msg::copy_from(&self.request_id.to_ne_bytes());
                idm.set_more(true);
                match self.inner.lb.send(idm) {
                    Ok(p) => self.reply_pipe = p,
                    Err((e, _)) => return Err((e, msg)),
                }
                let mut delim = Msg::new();
                delim.set_more(true);
                let _ = self.inner.lb.send(delim);
            } else {
                let mut delim = Msg::new();
                delim.set_more(true);
                match self.inner.lb.send(delim) {
                    Ok(p) => self.reply_pipe = p,
                    Err((e, _)) => return Err((e, msg)),
                }
            }
        }
        let more = msg.more();
        self.inner.lb.send(msg)?;
        self.sending_more = more;
        if !more {
            self.receiving = true;
        }
        Ok(())
    }

    fn recv(&mut self) -> Result<Msg> {
        if !self.receiving {
            return Err(Error::State);
        }
        if self.reply_more {
            let (m, _) = self.inner.fq.recv().ok_or(Error::Again)?;
            self.reply_more = m.more();
            if !self.reply_more {
                self.receiving = false;
            }
            return Ok(m);
        }
        loop {
            let (first, pipe) = self.inner.fq.recv().ok_or(Error::Again)?;
            if Some(pipe) != self.reply_pipe {
                self.drop_rest(&first);
                continue;
            }
            let mut head = first;
            if self.correlate {
                let ok = head.more() && head.data() == self.request_id.to_ne_bytes();
                if !ok {
                    self.drop_rest(&head);
                    continue;
                }
                match self.inner.fq.recv() {
                    Some((m, _)) => head = m,
                    None => continue,
                }
            }
            if !head.is_empty() || !head.more() {
                self.drop_rest(&head);
                continue;
            }
            let (body, _) = match self.inner.fq.recv() {
                Some(x) => x,
                None => continue,
            };
            self.reply_more = body.more();
            if !self.reply_more {
                self.receiving = false;
            }
            return Ok(body);
        }
    }

    fn can_send(&mut self) -> bool {
        (!self.receiving || self.relaxed) && self.inner.lb.has_out()
    }
    fn can_recv(&mut self) -> bool {
        self.receiving && self.inner.fq.has_in()
    }

    fn set_option(&mut self, opt: i32, val: &[u8]) -> Option<Result<()>> {
        match opt {
            id::REQ_RELAXED => Some(pattern_bool_value(val).map(|v| self.relaxed = v)),
            id::REQ_CORRELATE => Some(pattern_bool_value(val).map(|v| self.correlate = v)),
            id::PROBE_ROUTER => Some(self.inner.set_probe(val)),
            _ => None,
        }
    }
}
