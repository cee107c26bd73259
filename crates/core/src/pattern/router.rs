//! ROUTER: every inbound message is prefixed with the routing id of the peer it came from;
//! an outbound message's first frame names the peer it goes to. Unknown peers and full
//! pipes drop the message, or fail with EHOSTUNREACH / EAGAIN under ROUTER_MANDATORY.

use super::{FairQueue, Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::{id, pattern_bool_value};
use crate::pipe::{Pipe, PipeMap, PushError};
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::Arc;

/// A peer: its pipe, its routing id once known, and that id as the ready-made first frame
/// of every message received from it (cloning an inline message is a plain copy).
struct Peer {
    pipe: Arc<Pipe>,
    rid: Option<Bytes>,
    head: Msg,
}

impl Peer {
    fn new(pipe: Arc<Pipe>) -> Peer {
        Peer {
            pipe,
            rid: None,
            head: Msg::new(),
        }
    }

    fn set_rid(&mut self, rid: Bytes) {
        // Long ids are shared rather than pooled: a pooled copy would pin a pool block
        // for the peer's lifetime.
        let mut head = if rid.len() <= crate::msg::INLINE_CAP {
            Msg::copy_from(&rid)
        } else {
            Msg::from_shared(rid.clone())
        };
        head.set_more(true);
        self.head = head;
        self.rid = Some(rid);
    }
}

pub(crate) struct Router {
    fq: FairQueue,
    pipes: PipeMap<Peer>,
    by_id: HashMap<Bytes, u64>,
    next_id: u32,
    /// Body frame taken from a pipe while its routing id frame was returned: when the
    /// receive had to read the pipe to find the message (a message already known to be
    /// queued keeps its body in the pipe), or when that pipe is removed mid-message.
    pending_in: Option<Msg>,
    more_in: bool,
    /// Where the frames of the message being sent go; `None` = dropping it.
    out: Option<u64>,
    /// The last routing id sent to and its pipe (a stream of sends to one peer then skips
    /// both lookups, id and pipe); cleared whenever ids change or a pipe goes.
    last_out: Option<(Bytes, Arc<Pipe>)>,
    /// The pipe last received from and its routing id frame (a stream of messages from
    /// one peer skips the pipe lookup); cleared whenever ids change or a pipe goes.
    last_in: Option<(u64, Msg)>,
    /// Routing id frames of peers gone while their pipes still held messages: those are
    /// read to the end with the id they came with, as libzmq does. Entries of pipes the
    /// fair queue has dropped are pruned at the next detach.
    gone: PipeMap<Msg>,
    more_out: bool,
    mandatory: bool,
    handover: bool,
    probe: bool,
}

impl Router {
    pub(crate) fn new() -> Router {
        // libzmq starts its generated ids at a random value; so do we (any value works).
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(1);
        Router {
            fq: FairQueue::default(),
            pipes: PipeMap::default(),
            by_id: HashMap::new(),
            next_id: seed,
            pending_in: None,
            more_in: false,
            out: None,
            last_out: None,
            last_in: None,
            gone: PipeMap::default(),
            more_out: false,
            mandatory: false,
            handover: false,
            probe: false,
        }
    }

    fn generate_id(&mut self) -> Bytes {
        loop {
            self.next_id = self.next_id.wrapping_add(1);
            let mut v = vec![0u8; 5];
            v[1..].copy_from_slice(&self.next_id.to_be_bytes());
            let b = Bytes::from(v);
            if !self.by_id.contains_key(&b) {
                return b;
            }
        }
    }

    /// A message's first frame, its routing id `rid`: picks the pipe the rest goes to
    /// (`None`: dropped). Under ROUTER_MANDATORY, `HostUnreachable` for an unknown id and
    /// `Again` for a full pipe; the next frame is then taken as a routing id again.
    fn start_message(&mut self, rid: &[u8], more: bool) -> Result<()> {
        self.out = None;
        if more {
            let cached = matches!(&self.last_out, Some((last, _)) if same_id(last, rid));
            if !cached {
                match self.by_id.get(rid).and_then(|pid| self.pipes.get(pid)) {
                    Some(peer) => {
                        self.last_out = Some((Bytes::copy_from_slice(rid), peer.pipe.clone()));
                    }
                    None if self.mandatory => return Err(Error::HostUnreachable),
                    None => {
                        self.more_out = more;
                        return Ok(());
                    }
                }
            }
            if let Some((_, pipe)) = &self.last_out {
                if pipe.out.can_write() {
                    self.out = Some(pipe.id);
                } else if self.mandatory {
                    return Err(Error::Again);
                }
            }
        }
        self.more_out = more;
        Ok(())
    }

    /// The pipe the current message goes to, if any (`last_out`'s, without a lookup,
    /// when it is that one: it is cleared when its pipe goes).
    #[inline]
    fn out_pipe(&self) -> Option<&Arc<Pipe>> {
        let pid = self.out?;
        match &self.last_out {
            Some((_, pipe)) if pipe.id == pid => Some(pipe),
            _ => self.pipes.get(&pid).map(|p| &p.pipe),
        }
    }

    /// A frame after the routing id: to the chosen pipe, or dropped (no pipe, or it is
    /// full or gone: the rest of the message is dropped too).
    fn send_body(&mut self, msg: Msg) {
        self.more_out = msg.more();
        let ok = match self.out_pipe() {
            Some(p) => match p.out.push(msg) {
                Ok(()) => true,
                Err(PushError::Full(_)) | Err(PushError::Closed(_)) => false,
            },
            None => false,
        };
        if !ok {
            self.out = None;
        }
    }

    /// `send_body` of a message's last frame, copied from `data` straight into the pipe's
    /// queue (`Queue::push_copy`).
    fn send_last_copy(&mut self, data: &[u8]) {
        self.more_out = false;
        if let Some(p) = self.out_pipe() {
            // Full or gone: the frame is dropped, as `send_body` drops it.
            let _ = p.out.push_copy(data);
        }
    }

    /// Drops a pipe from the fair queue; if the message being read came from it and its
    /// body is still in the pipe (see `recv`), the body is taken out first, so the caller,
    /// told more frames follow, gets it.
    fn remove_from_fq(&mut self, pipe_id: u64) {
        if self.more_in
            && self.pending_in.is_none()
            && self.fq.in_message()
            && self.fq.last_pipe() == pipe_id
        {
            self.pending_in = self.fq.recv_frame();
        }
        self.fq.remove(pipe_id);
    }

    /// Gives a pipe its routing id; false if the pipe must be refused (duplicate id).
    fn identify(&mut self, pipe_id: u64, meta: &PeerMeta) -> bool {
        let wanted = meta.wanted_routing_id();
        let rid = match wanted {
            Some(r) => {
                if let Some(&old) = self.by_id.get(&r) {
                    if old != pipe_id {
                        if !self.handover {
                            return false;
                        }
                        // Handover: the new connection takes the id; the old one is closed.
                        if let Some(p) = self.pipes.remove(&old) {
                            self.remove_from_fq(old);
                            p.pipe.close();
                        }
                    }
                }
                r
            }
            None => self.generate_id(),
        };
        if let Some(peer) = self.pipes.get_mut(&pipe_id) {
            if let Some(prev) = peer.rid.take() {
                self.by_id.remove(&prev);
            }
            peer.set_rid(rid.clone());
        }
        self.by_id.insert(rid, pipe_id);
        self.last_out = None;
        self.last_in = None;
        true
    }
}

impl Pattern for Router {
    fn attach(&mut self, pipe: Arc<Pipe>, meta: Option<&PeerMeta>) {
        let id = pipe.id;
        self.pipes.insert(id, Peer::new(pipe.clone()));
        self.fq.attach(pipe.clone());
        if let Some(m) = meta {
            if !self.identify(id, m) {
                self.pipes.remove(&id);
                self.fq.remove(id);
                pipe.close();
                return;
            }
        }
        if self.probe {
            let _ = pipe.out.push(Msg::new());
        }
    }

    fn activated(&mut self, pipe_id: u64, meta: &PeerMeta) {
        if !self.pipes.contains_key(&pipe_id) {
            return;
        }
        let known = self.pipes.get(&pipe_id).is_some_and(|p| p.rid.is_some());
        if !known && !self.identify(pipe_id, meta) {
            self.remove_from_fq(pipe_id);
            if let Some(p) = self.pipes.remove(&pipe_id) {
                p.pipe.close();
            }
        }
    }

    fn detach(&mut self, pipe_id: u64) {
        let fq = &self.fq;
        self.gone.retain(|id, _| fq.holds(*id));
        if let Some(Peer {
            rid: Some(rid),
            head,
            pipe,
        }) = self.pipes.remove(&pipe_id)
        {
            if self.by_id.get(&rid) == Some(&pipe_id) {
                self.by_id.remove(&rid);
            }
            if !pipe.inq.is_finished() {
                self.gone.insert(pipe_id, head);
            }
        }
        self.last_out = None;
        self.last_in = None;
        self.fq.detach(pipe_id);
    }

    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        if !self.more_out {
            return match self.start_message(msg.data(), msg.more()) {
                Ok(()) => Ok(()),
                Err(e) => Err((e, msg)),
            };
        }
        self.send_body(msg);
        Ok(())
    }

    fn slice_frames(&self) -> super::SliceFrames {
        // The routing id is looked up, the body built in its slot.
        super::SliceFrames::ALL
    }

    fn send_slice(&mut self, data: &[u8], more: bool) -> Option<Result<()>> {
        if !self.more_out {
            // The routing id is only looked up, never queued: no frame is built.
            return Some(self.start_message(data, more));
        }
        if more {
            let mut msg = Msg::copy_from(data);
            msg.set_more(true);
            self.send_body(msg);
        } else {
            self.send_last_copy(data);
        }
        Some(Ok(()))
    }

    fn recv(&mut self) -> Result<Msg> {
        let mut m = Msg::new();
        self.recv_into(&mut m)?;
        Ok(m)
    }

    fn recv_into(&mut self, out: &mut Msg) -> Result<()> {
        if let Some(m) = self.pending_in.take() {
            self.more_in = m.more();
            *out = m;
            return Ok(());
        }
        if self.more_in {
            self.more_in = self.fq.rest_frame_into(out)?;
            return Ok(());
        }
        // A message already known to be queued: return its routing id and leave the
        // body in the pipe for the next call (no stash in `pending_in`: each extra move
        // of a frame cost a store-forwarding stall).
        if let Some(pipe) = self.fq.peek_known() {
            if let Some((_, head)) = self.last_in.as_ref().filter(|(id, _)| *id == pipe) {
                self.more_in = true;
                out.clone_from(head);
                return Ok(());
            }
            if let Some(p) = self.pipes.get(&pipe).filter(|p| p.rid.is_some()) {
                self.more_in = true;
                out.clone_from(&p.head);
                self.last_in = Some((pipe, p.head.clone()));
                return Ok(());
            }
            if let Some(head) = self.gone.get(&pipe) {
                self.more_in = true;
                out.clone_from(head);
                return Ok(());
            }
            // No id: the loop below reads the message from this pipe and discards it.
        }
        loop {
            let m = self.fq.recv_frame().ok_or(Error::Again)?;
            let from = self.fq.last_pipe();
            let head = match self.pipes.get(&from) {
                Some(p) if p.rid.is_some() => p.head.clone(),
                _ if self.gone.contains_key(&from) => self.gone[&from].clone(),
                _ => {
                    // From a pipe without an id (refused, or gone before it had one):
                    // discard the message.
                    let mut more = m.more();
                    while more {
                        more = self.fq.recv().is_some_and(|(x, _)| x.more());
                    }
                    continue;
                }
            };
            self.pending_in = Some(m);
            self.more_in = true;
            *out = head;
            return Ok(());
        }
    }

    fn can_send(&mut self) -> bool {
        if self.more_out || !self.mandatory {
            return true;
        }
        self.pipes.values().any(|p| p.pipe.out.can_write())
    }

    fn can_recv(&mut self) -> bool {
        self.pending_in.is_some() || self.more_in || self.fq.has_in()
    }

    fn set_option(&mut self, opt: i32, val: &[u8]) -> Option<Result<()>> {
        match opt {
            id::ROUTER_MANDATORY => Some(pattern_bool_value(val).map(|v| self.mandatory = v)),
            id::ROUTER_HANDOVER => Some(pattern_bool_value(val).map(|v| self.handover = v)),
            id::PROBE_ROUTER => Some(pattern_bool_value(val).map(|v| self.probe = v)),
            _ => None,
        }
    }
}

/// `a == b` for routing ids, without a `memcmp` call for the short ones (libzmq's own
/// ids are 5 bytes): a ROUTER compares the id of every message it sends with the last
/// one's, and the call and its set-up were half of that step's instructions. Ids of 1-16
/// bytes are compared as two overlapping loads that together cover every byte.
#[inline]
fn same_id(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => {
            let word =
                |s: &[u8], at: usize| u32::from_ne_bytes([s[at], s[at + 1], s[at + 2], s[at + 3]]);
            word(a, 0) == word(b, 0) && word(a, n - 4) == word(b, n - 4)
        }
        9..=16 => {
            let word = |s: &[u8], at: usize| {
                u64::from_ne_bytes(s[at..at + 8].try_into().expect("8 bytes"))
            };
            word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8)
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::same_id;

    #[test]
    fn same_id_tells_every_differing_byte_and_length() {
        for n in 0..=40usize {
            let a: Vec<u8> = (0..n).map(|i| (i * 7 + 1) as u8).collect();
            assert!(same_id(&a, &a.clone()), "len {n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x80;
                assert!(!same_id(&a, &b), "len {n}, byte {at}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_id(&a, &longer), "len {n} vs {}", n + 1);
        }
    }
}
