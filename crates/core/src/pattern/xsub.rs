//! SUB and XSUB: receive the messages whose first frame starts with a subscribed topic.
//! SUB subscribes through ZMQ_SUBSCRIBE; XSUB by sending (un)subscription messages, and
//! forwards any other message upstream. Subscriptions are replayed to every new peer.

use super::subs::{cancel_msg, parse_subscription, subscribe_msg, Topics};
use super::{FairQueue, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::{id, OptionValue};
use crate::pipe::Pipe;
use std::sync::Arc;

pub(crate) struct XSub {
    /// true = XSUB, false = SUB.
    extended: bool,
    fq: FairQueue,
    pipes: Vec<Arc<Pipe>>,
    topics: Topics,
    more_in: bool,
    more_out: bool,
    /// Inside an outgoing user message (XSUB): its frames go to all peers.
    forwarding: bool,
    /// ZMQ_ONLY_FIRST_SUBSCRIBE: of an outgoing multipart message, only the first frame
    /// (and frames after (un)subscriptions) may be an (un)subscription.
    only_first: bool,
    /// The next frame of the outgoing message is looked at as a possible (un)subscription
    /// (libzmq: every frame after an (un)subscription, and every frame unless
    /// ONLY_FIRST_SUBSCRIBE).
    process_subscribe: bool,
    /// First frame of the next message, already matched.
    pending: Option<Msg>,
    invert: bool,
    /// Pipes whose connection completed a handshake at least once.
    activated: std::collections::HashSet<u64>,
}

impl XSub {
    pub(crate) fn new(extended: bool) -> XSub {
        XSub {
            extended,
            fq: FairQueue::default(),
            pipes: Vec::new(),
            topics: Topics::default(),
            more_in: false,
            more_out: false,
            forwarding: false,
            only_first: false,
            process_subscribe: false,
            pending: None,
            activated: Default::default(),
            invert: false,
        }
    }

    /// Whether a message whose first frame is `data` is delivered: an XSUB delivers every
    /// message, as libzmq's (only SUB filters; its subscriptions are what it asks of its
    /// publishers, which an XPUB_MANUAL publisher may answer with other topics).
    fn accepts(&self, data: &[u8]) -> bool {
        self.extended || self.topics.matches(data) != self.invert
    }

    fn send_all(&mut self, msg: &Msg) {
        self.pipes.retain(|p| !p.out.is_reader_closed());
        for p in &self.pipes {
            let _ = p.out.push(msg.clone());
        }
    }

    fn subscribe(&mut self, topic: &[u8]) {
        self.topics.add(topic);
        self.send_all(&subscribe_msg(topic));
    }

    fn unsubscribe(&mut self, topic: &[u8]) {
        if self.topics.remove(topic) {
            self.send_all(&cancel_msg(topic));
        }
    }

    /// Finds the next message whose first frame matches; keeps it in `pending`.
    fn fetch_matching(&mut self) -> bool {
        if self.pending.is_some() {
            return true;
        }
        while let Some((m, _)) = self.fq.recv() {
            if self.accepts(m.data()) {
                self.pending = Some(m);
                return true;
            }
            self.skip_rest(m.more());
        }
        false
    }

    /// Drops the rest of a message whose first frame did not match.
    fn skip_rest(&mut self, mut more: bool) {
        while more {
            more = self.fq.recv().is_some_and(|(x, _)| x.more());
        }
    }

    fn replay(&self, pipe: &Pipe) {
        for t in self.topics.topics() {
            let _ = pipe.out.push(subscribe_msg(t));
        }
    }
}

impl Pattern for XSub {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        // The pipe starts with every subscription; later ones follow through send_all.
        self.replay(&pipe);
        self.pipes.push(pipe.clone());
        self.fq.attach(pipe);
    }

    fn activated(&mut self, pipe_id: u64, _meta: &PeerMeta) {
        // First handshake: the pipe already holds every subscription, once. A reconnect:
        // the new peer knows none of them, and part of the queue went to the old
        // connection, so drop what is queued and send them all again (libzmq's hiccup).
        if self.activated.insert(pipe_id) {
            return;
        }
        if let Some(p) = self.pipes.iter().find(|p| p.id == pipe_id).cloned() {
            p.out.clear();
            self.replay(&p);
        }
    }

    fn detach(&mut self, pipe_id: u64) {
        self.activated.remove(&pipe_id);
        self.pipes.retain(|p| p.id != pipe_id);
        self.fq.detach(pipe_id);
    }

    fn send(&mut self, mut msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        if !self.extended {
            return Err((Error::NotSupported, msg));
        }
        let more = msg.more();
        let first = !self.more_out;
        if first {
            self.process_subscribe = !self.only_first;
        }
        // The first byte says whether it can be one: a large user frame, lent by the caller,
        // is looked at where it lies, not copied (`Msg::data` would copy it).
        let candidate = (first || self.process_subscribe)
            && msg.peek(|body| matches!(body.first(), Some(0 | 1)));
        let sub = if candidate {
            parse_subscription(&msg).map(|(s, t)| (s, t.to_vec()))
        } else {
            None
        };
        if let Some((subscribe, topic)) = sub {
            if first && !more {
                // A message of its own: sent as the protocol's (un)subscription.
                if subscribe {
                    self.subscribe(&topic);
                } else {
                    self.unsubscribe(&topic);
                }
                return Ok(());
            }
            // A frame of a multipart message (libzmq takes those too): applied here, and
            // the frame goes up as it is, so the message keeps its frames for the peer
            // (an XPUB applies them the same way).
            self.process_subscribe = true;
            if subscribe {
                self.topics.add(&topic);
            } else if !self.topics.remove(&topic) && more {
                // As libzmq, a cancel of a topic this socket does not hold is dropped,
                // and the message goes on without it. (libzmq drops a last frame too,
                // leaving the message unterminated; that one goes up here.)
                self.more_out = true;
                self.forwarding = true;
                return Ok(());
            }
        }
        self.more_out = more;
        msg.make_shared();
        self.send_all(&msg);
        self.forwarding = more;
        Ok(())
    }

    fn recv(&mut self) -> Result<Msg> {
        if self.more_in {
            let (m, _) = self.fq.recv().ok_or(Error::Again)?;
            self.more_in = m.more();
            return Ok(m);
        }
        // A message matched by can_recv (zmq_poll, ZMQ_EVENTS) waits in `pending`;
        // otherwise the next match goes to the caller directly, not through `pending`
        // (moving it in and out of the Option stalled on store forwarding at 64 B).
        if let Some(m) = self.pending.take() {
            self.more_in = m.more();
            return Ok(m);
        }
        while let Some((m, _)) = self.fq.recv() {
            if self.accepts(m.data()) {
                self.more_in = m.more();
                return Ok(m);
            }
            self.skip_rest(m.more());
        }
        Err(Error::Again)
    }

    /// As `recv`, but a frame goes straight into `out` (`Queue::pop_into`). A message
    /// whose first frame did not match passes through `out` on its way out, so `out` is
    /// left empty, not untouched, when only such messages were queued (libzmq leaves an
    /// empty message after any failed receive).
    fn recv_into(&mut self, out: &mut Msg) -> Result<()> {
        if self.more_in {
            self.more_in = self.fq.rest_frame_into(out)?;
            return Ok(());
        }
        if let Some(m) = self.pending.take() {
            self.more_in = m.more();
            *out = m;
            return Ok(());
        }
        let mut skipped = false;
        while self.fq.recv_frame_into(out) {
            if self.accepts(out.data()) {
                self.more_in = out.more();
                return Ok(());
            }
            self.skip_rest(out.more());
            skipped = true;
        }
        if skipped {
            *out = Msg::new();
        }
        Err(Error::Again)
    }

    fn can_send(&mut self) -> bool {
        self.extended
    }

    fn can_recv(&mut self) -> bool {
        self.more_in || self.fetch_matching()
    }

    fn set_option(&mut self, opt: i32, val: &[u8]) -> Option<Result<()>> {
        if opt == id::INVERT_MATCHING {
            return Some(crate::options::bool_value(val).map(|v| self.invert = v));
        }
        if opt == id::ONLY_FIRST_SUBSCRIBE && self.extended {
            return Some(crate::options::pattern_bool_value(val).map(|v| self.only_first = v));
        }
        if self.extended {
            return None;
        }
        match opt {
            id::SUBSCRIBE => {
                self.subscribe(val);
                Some(Ok(()))
            }
            id::UNSUBSCRIBE => {
                self.unsubscribe(val);
                Some(Ok(()))
            }
            _ => None,
        }
    }

    fn get_option(&self, opt: i32) -> Option<OptionValue> {
        (opt == id::TOPICS_COUNT).then(|| OptionValue::Int(self.topics.len() as i32))
    }
}
