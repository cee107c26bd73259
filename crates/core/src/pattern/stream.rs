//! STREAM: raw TCP peers addressed like ROUTER peers. Each received chunk arrives as
//! [routing id][data]; sending [routing id][data] writes the data; an empty data frame
//! closes that connection. Connects and disconnects are announced as [routing id][empty]
//! (ZMQ_STREAM_NOTIFY, on by default).

use super::{FairQueue, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::{id, strict_bool_value};
use crate::pipe::Pipe;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

pub(crate) struct Stream {
    fq: FairQueue,
    pipes: HashMap<u64, (Arc<Pipe>, Bytes)>,
    by_id: HashMap<Bytes, u64>,
    next_id: u32,
    /// Frames ready for the application (notifications, or the data after an id frame).
    pending: VecDeque<Msg>,
    out: Option<u64>,
    more_out: bool,
    notify: bool,
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
        }
    }

    fn announce(&mut self, rid: &Bytes) {
        if self.notify {
            let mut head = Msg::from_bytes(rid.clone());
            head.set_more(true);
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
                Bytes::from(v)
            }
        };
        self.by_id.insert(rid.clone(), pipe.id);
        self.pipes.insert(pipe.id, (pipe.clone(), rid.clone()));
        self.fq.attach(pipe);
        self.announce(&rid);
    }

    fn detach(&mut self, pipe_id: u64) {
        let Some((_, rid)) = self.pipes.remove(&pipe_id) else {
            self.fq.remove(pipe_id);
            return;
        };
        self.by_id.remove(&rid);
        // What the peer sent before it closed comes first, then the notification.
        let pending = &mut self.pending;
        self.fq.remove_after(pipe_id, |mut data| {
            let mut head = Msg::from_bytes(rid.clone());
            head.set_more(true);
            data.set_more(false);
            pending.push_back(head);
            pending.push_back(data);
        });
        self.announce(&rid);
    }

    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        if !self.more_out {
            // A routing id without MORE is taken and ignored, as libzmq does; the frame
            // after it is still taken as a body, and goes nowhere.
            if msg.more() {
                match self.by_id.get(msg.data()) {
                    Some(&pid) => {
                        if !self.pipes[&pid].0.out.can_write() {
                            return Err((Error::Again, msg));
                        }
                        self.out = Some(pid);
                    }
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
        if let Some((p, _)) = self.out.take().and_then(|pid| self.pipes.get(&pid)) {
            let _ = p.out.push(msg);
        }
        Ok(())
    }

    fn recv(&mut self) -> Result<Msg> {
        if let Some(m) = self.pending.pop_front() {
            return Ok(m);
        }
        loop {
            let (data, pid) = self.fq.recv().ok_or(Error::Again)?;
            let Some((_, rid)) = self.pipes.get(&pid) else {
                continue;
            };
            let mut head = Msg::from_bytes(rid.clone());
            head.set_more(true);
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
            id::STREAM_NOTIFY => Some(strict_bool_value(val).map(|v| self.notify = v)),
            _ => None,
        }
    }
}
