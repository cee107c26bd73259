//! STREAM: raw TCP peers addressed like ROUTER peers. Each received chunk arrives as
//! [routing id][data]; sending [routing id][data] writes the data; an empty data frame
//! closes that connection. Connects and disconnects are announced as [routing id][empty]
//! (ZMQ_STREAM_NOTIFY, on by default).
//!
//! A ROUTER with ZMQ_ROUTER_RAW set works the same way (libzmq 4.3.5, probed), except
//! that a routing id nobody has is ROUTER's case: the message is dropped, or refused
//! with EHOSTUNREACH under ZMQ_ROUTER_MANDATORY (a STREAM always refuses it).

use super::{FairQueue, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::{Metadata, Msg};
use crate::options::{id, pattern_bool_value, strict_bool_value, OptionValue};
use crate::pipe::Pipe;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

pub(crate) struct Stream {
    fq: FairQueue,
    pipes: HashMap<u64, Peer>,
    by_id: HashMap<Bytes, u64>,
    next_id: u32,
    /// Frames ready for the application (notifications, or the data after an id frame).
    pending: VecDeque<Msg>,
    out: Option<u64>,
    more_out: bool,
    notify: bool,
    /// The last routing id this socket made up for a peer: ZMQ_ROUTING_ID reads it back,
    /// as libzmq's STREAM copies each generated id into its own routing id (until
    /// ZMQ_ROUTING_ID is set again).
    last_generated: Option<Bytes>,
    /// A ROUTER with ZMQ_ROUTER_RAW (see the module documentation).
    router_raw: bool,
    /// ZMQ_ROUTER_MANDATORY, for a raw ROUTER.
    mandatory: bool,
}

/// A pipe with its routing id and its connection's properties.
struct Peer {
    pipe: Arc<Pipe>,
    rid: Bytes,
    props: Option<Arc<Metadata>>,
    /// Its connection is up and was announced: its end will be announced too (a pipe
    /// made at connect is not up until `activated`, and not after `deactivated`).
    up: bool,
    /// This socket closed it with an empty frame: libzmq announces only connections the
    /// peer ended, not these.
    closing: bool,
}

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream {
            fq: FairQueue::default(),
            pipes: HashMap::new(),
            by_id: HashMap::new(),
            next_id: 0x2000_0000,
            pending: VecDeque::new(),
            out: None,
            more_out: false,
            notify: true,
            last_generated: None,
            router_raw: false,
            mandatory: false,
        }
    }

    /// The pattern of a ROUTER with ZMQ_ROUTER_RAW set.
    pub(crate) fn router_raw() -> Stream {
        Stream {
            router_raw: true,
            ..Stream::new()
        }
    }

    /// Moves the data still queued on `pipe_id` to the frames ready, each after its id
    /// frame, and stops reading the pipe.
    fn take_unread(&mut self, pipe_id: u64, rid: &Bytes) {
        let pending = &mut self.pending;
        self.fq.remove_after(pipe_id, |mut data| {
            let mut head = Msg::from_bytes(rid.clone());
            head.set_more(true);
            head.set_metadata(data.metadata().cloned());
            data.set_more(false);
            pending.push_back(head);
            pending.push_back(data);
        });
    }

    /// The notification of a connection or disconnection: [id][empty], the id frame
    /// with the connection's properties (Peer-Address), as libzmq's.
    fn announce(&mut self, rid: &Bytes, props: Option<Arc<Metadata>>) {
        if self.notify {
            let mut head = Msg::from_bytes(rid.clone());
            head.set_more(true);
            head.set_metadata(props);
            self.pending.push_back(head);
            self.pending.push_back(Msg::new());
        }
    }
}

impl Pattern for Stream {
    fn attach(&mut self, pipe: Arc<Pipe>, meta: Option<&PeerMeta>) {
        let rid = match meta.and_then(|m| m.connect_routing_id.clone()) {
            Some(r) if !self.by_id.contains_key(&r) => r,
            _ => {
                self.next_id = self.next_id.wrapping_add(1);
                let mut v = vec![0u8; 5];
                v[1..].copy_from_slice(&self.next_id.to_be_bytes());
                let rid = Bytes::from(v);
                self.last_generated = Some(rid.clone());
                rid
            }
        };
        self.by_id.insert(rid.clone(), pipe.id);
        let props = meta.and_then(|m| m.props.clone());
        let peer = Peer {
            pipe: pipe.clone(),
            rid: rid.clone(),
            props: props.clone(),
            up: props.is_some(),
            closing: false,
        };
        self.pipes.insert(pipe.id, peer);
        self.fq.attach(pipe);
        // A pipe made at connect is announced when its connection is up (`activated`).
        if props.is_some() {
            self.announce(&rid, props);
        }
    }

    fn activated(&mut self, pipe_id: u64, meta: &PeerMeta) {
        // (A pipe this socket closed waits only for its close to be written.)
        if let Some(peer) = self.pipes.get_mut(&pipe_id).filter(|p| !p.closing) {
            peer.props = meta.props.clone();
            peer.up = true;
            let (rid, props) = (peer.rid.clone(), peer.props.clone());
            self.announce(&rid, props);
        }
    }

    fn deactivated(&mut self, pipe_id: u64) {
        let Some(peer) = self.pipes.get_mut(&pipe_id) else {
            return;
        };
        if !std::mem::take(&mut peer.up) || peer.closing {
            return;
        }
        let (pipe, rid, props) = (peer.pipe.clone(), peer.rid.clone(), peer.props.clone());
        // What the connection delivered comes before the notification: it moves from the
        // pipe to the frames ready, and the pipe is read again for the next connection.
        self.take_unread(pipe_id, &rid);
        self.fq.attach(pipe);
        self.announce(&rid, props);
    }

    fn detach(&mut self, pipe_id: u64) {
        let Some(Peer {
            rid,
            props,
            up,
            closing,
            ..
        }) = self.pipes.remove(&pipe_id)
        else {
            self.fq.remove(pipe_id);
            return;
        };
        // Its id may already name a newer connection (this one was closed from here and
        // its id given out again): only this pipe's own entry goes.
        if self.by_id.get(&rid) == Some(&pipe_id) {
            self.by_id.remove(&rid);
        }
        // What the peer sent before it closed comes first, then the notification.
        self.take_unread(pipe_id, &rid);
        // Announced only if its connection was (a connect's pipe that never got one, or
        // whose end `deactivated` announced already, is not).
        if !closing && up {
            self.announce(&rid, props);
        }
    }

    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        if !self.more_out {
            // A routing id without MORE is taken and ignored, as libzmq does; the frame
            // after it is still taken as a body, and goes nowhere.
            if msg.more() {
                match self.by_id.get(msg.data()) {
                    Some(&pid) => {
                        if !self.pipes[&pid].pipe.out.can_write() {
                            return Err((Error::Again, msg));
                        }
                        self.out = Some(pid);
                    }
                    None if self.router_raw && !self.mandatory => self.out = None,
                    None => return Err((Error::HostUnreachable, msg)),
                }
            }
            self.more_out = true;
            return Ok(());
        }
        // The data frame ends the message whatever its MORE flag says.
        let mut msg = msg;
        msg.set_more(false);
        self.more_out = false;
        if let Some(pid) = self.out.take() {
            if let Some(peer) = self.pipes.get_mut(&pid) {
                if msg.is_empty() {
                    // The close: the connection goes once what came before is written;
                    // its id is no longer routable, and its end is not announced.
                    self.by_id.remove(&peer.rid);
                    peer.closing = true;
                }
                let _ = peer.pipe.out.push(msg);
            }
        }
        Ok(())
    }

    fn recv(&mut self) -> Result<Msg> {
        if let Some(m) = self.pending.pop_front() {
            return Ok(m);
        }
        loop {
            let (data, pid) = self.fq.recv().ok_or(Error::Again)?;
            let Some(Peer { rid, .. }) = self.pipes.get(&pid) else {
                continue;
            };
            let mut head = Msg::from_bytes(rid.clone());
            head.set_more(true);
            // The id frame carries the connection's properties (Peer-Address), as libzmq's.
            head.set_metadata(data.metadata().cloned());
            let mut data = data;
            data.set_more(false);
            self.pending.push_back(data);
            return Ok(head);
        }
    }

    fn can_send(&mut self) -> bool {
        true
    }

    fn can_recv(&mut self) -> bool {
        !self.pending.is_empty() || self.fq.has_in()
    }

    fn set_option(&mut self, opt: i32, val: &[u8]) -> Option<Result<()>> {
        match opt {
            // A STREAM's alone: a raw ROUTER refuses it (EINVAL), as libzmq's.
            id::STREAM_NOTIFY if !self.router_raw => {
                Some(strict_bool_value(val).map(|v| self.notify = v))
            }
            id::ROUTER_MANDATORY if self.router_raw => {
                Some(pattern_bool_value(val).map(|v| self.mandatory = v))
            }
            // Taken and without effect on raw connections, as in libzmq.
            id::ROUTER_HANDOVER | id::PROBE_ROUTER if self.router_raw => {
                Some(pattern_bool_value(val).map(|_| ()))
            }
            id::ROUTING_ID => {
                // Set by the caller (a value the socket will take): that value reads back
                // again, as the socket stores it.
                if (1..=255).contains(&val.len()) {
                    self.last_generated = None;
                }
                None
            }
            _ => None,
        }
    }

    fn get_option(&self, opt: i32) -> Option<OptionValue> {
        // A raw ROUTER keeps its own routing id (libzmq 4.3.5, probed): only a STREAM
        // reads back the ids it made up.
        (opt == id::ROUTING_ID && !self.router_raw)
            .then(|| self.last_generated.clone().map(OptionValue::Binary))
            .flatten()
    }
}
