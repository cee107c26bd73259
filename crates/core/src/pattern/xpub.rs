//! PUB and XPUB: each message goes to every peer subscribed to a prefix of its first frame;
//! peers at their high-water mark miss it (unless XPUB_NODROP). XPUB also hands
//! (un)subscriptions up to the application: first ones only, or all with XPUB_VERBOSE.

use super::subs::{parse_subscription, PrefixSet, Topics};
use super::{Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::{bool_value, id, OptionValue};
use crate::pipe::{Pipe, PushError};
use bytes::Bytes;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

struct Peer {
    pipe: Arc<Pipe>,
    /// What this peer subscribed to: a set (subscribing twice is one subscription).
    topics: PrefixSet,
    /// XPUB_MANUAL: what the peer asked for, reported as cancels when it leaves.
    requested: HashSet<Bytes>,
    /// Inside a multipart message read from this peer (not a subscription).
    reading_more: bool,
    /// Subscribed to the empty topic (everything): no per-message prefix scan.
    everything: bool,
    /// The upstream queue's `news_mark` when last read out (None: read it at next look).
    upstream_mark: Option<u64>,
}

impl Peer {
    fn wants(&self, data: &[u8]) -> bool {
        self.everything || self.topics.matches(data)
    }
}

pub(crate) struct XPub {
    /// true = XPUB, false = PUB.
    extended: bool,
    peers: Vec<Peer>,
    /// How many peers hold each topic (for "first subscription" uniqueness).
    all: Topics,
    invert: bool,
    /// Messages for the application (subscriptions, upstream user messages).
    pending: VecDeque<Msg>,
    /// The peers the current outgoing multipart message goes to.
    targets: Vec<u64>,
    more_out: bool,
    verbose: bool,
    verboser: bool,
    manual: bool,
    nodrop: bool,
    welcome: Option<Bytes>,
    /// Peer whose subscription was last handed to the application (XPUB_MANUAL).
    last_pipe: Option<u64>,
}

impl XPub {
    pub(crate) fn new(extended: bool) -> XPub {
        XPub {
            extended,
            peers: Vec::new(),
            all: Topics::default(),
            invert: false,
            pending: VecDeque::new(),
            targets: Vec::new(),
            more_out: false,
            verbose: false,
            verboser: false,
            manual: false,
            nodrop: false,
            welcome: None,
            last_pipe: None,
        }
    }

    /// `process_upstream` if a peer sent something or went since the last look: a send
    /// does not pay a locked pop (and a re-arm) on each peer's empty upstream queue. The
    /// marks are read before the pops, so a frame published meanwhile changes the mark.
    fn process_upstream_if_news(&mut self) {
        let mut news = false;
        for p in &mut self.peers {
            let mark = p.pipe.inq.news_mark();
            news |= mark.is_none() || mark != p.upstream_mark;
            p.upstream_mark = mark;
        }
        if news {
            self.process_upstream();
        }
    }

    /// Reads everything the subscribers sent: applies subscriptions, queues what the
    /// application should see.
    fn process_upstream(&mut self) {
        for i in 0..self.peers.len() {
            while let Some(m) = self.peers[i].pipe.inq.pop() {
                let first = !self.peers[i].reading_more;
                self.peers[i].reading_more = m.more();
                let sub = if first {
                    parse_subscription(&m).map(|(s, t)| (s, Bytes::copy_from_slice(t)))
                } else {
                    None
                };
                match sub {
                    Some((subscribe, topic)) => {
                        let pid = self.peers[i].pipe.id;
                        if self.manual {
                            self.last_pipe = Some(pid);
                            if subscribe {
                                self.peers[i].requested.insert(topic);
                            } else {
                                self.peers[i].requested.remove(&topic);
                            }
                            if self.extended {
                                self.pending.push_back(m);
                            }
                            continue;
                        }
                        let notify = if subscribe {
                            let first =
                                self.peers[i].topics.insert(topic.clone()) && self.all.add(&topic);
                            first || self.verbose
                        } else {
                            // As libzmq: reported unless other peers still hold the topic
                            // (a cancel of something never subscribed is reported too).
                            let values_remain =
                                self.peers[i].topics.remove(&topic) && !self.all.remove(&topic);
                            !values_remain || self.verboser
                        };
                        self.peers[i].everything = self.peers[i].topics.contains(&b""[..]);
                        if self.extended && notify {
                            self.last_pipe = Some(pid);
                            self.pending.push_back(Msg::copy_from(m.data()));
                        }
                    }
                    None => {
                        if self.extended {
                            self.pending.push_back(m);
                        }
                    }
                }
            }
        }
        // Drop peers that are gone and drained.
        let mut gone = Vec::new();
        for p in &self.peers {
            if p.pipe.inq.is_finished() && p.pipe.out.is_reader_closed() {
                gone.push(p.pipe.id);
            }
        }
        for id in gone {
            self.remove_peer(id);
        }
    }

    fn remove_peer(&mut self, pipe_id: u64) {
        if let Some(i) = self.peers.iter().position(|p| p.pipe.id == pipe_id) {
            let peer = self.peers.remove(i);
            let mut gone = Vec::new();
            for t in peer.topics.iter() {
                if self.all.remove(t) || self.verboser {
                    gone.push(t.clone());
                }
            }
            if self.manual {
                gone = peer.requested.iter().cloned().collect();
            }
            if self.extended {
                for t in gone {
                    let mut v = vec![0u8];
                    v.extend_from_slice(&t);
                    self.pending.push_back(Msg::from(v));
                }
            }
        }
        self.targets.retain(|&t| t != pipe_id);
    }
}

/// The peers named in `targets`, which lists pipe ids in `peers`' order (built in that
/// order; peers are appended, and a removed one leaves `targets` too): one walk, where a
/// `contains` per peer cost peers × targets per message (40,000 at 200 subscribers).
fn in_targets<'a>(peers: &'a [Peer], targets: &'a [u64]) -> impl Iterator<Item = &'a Peer> {
    let mut next = 0;
    peers.iter().filter(move |p| {
        let hit = targets.get(next) == Some(&p.pipe.id);
        next += usize::from(hit);
        hit
    })
}

impl Pattern for XPub {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        if let Some(w) = &self.welcome {
            let _ = pipe.out.push(Msg::from_bytes(w.clone()));
        }
        self.peers.push(Peer {
            pipe,
            topics: PrefixSet::default(),
            requested: HashSet::new(),
            reading_more: false,
            everything: false,
            upstream_mark: None,
        });
    }

    fn detach(&mut self, pipe_id: u64) {
        // Read what it sent before it went (its last cancels), then forget it.
        self.process_upstream();
        self.remove_peer(pipe_id);
    }

    fn send(&mut self, mut msg: Msg) -> std::result::Result<(), (Error, Msg)> {
        self.process_upstream_if_news();
        let more = msg.more();
        if !self.more_out {
            self.targets.clear();
            for p in &self.peers {
                if p.wants(msg.data()) != self.invert {
                    self.targets.push(p.pipe.id);
                }
            }
            // One target: its push below refuses the message instead (no second look at
            // the pipe's writer side per message).
            if self.nodrop && self.targets.len() > 1 {
                let full = in_targets(&self.peers, &self.targets).any(|p| !p.pipe.out.can_write());
                if full {
                    return Err((Error::Again, msg));
                }
            }
        }
        if let [only] = self.targets[..] {
            // One subscriber (the common case): the message moves straight into its pipe,
            // without the Option juggling below (its moves stalled on store forwarding).
            if let Some(p) = self.peers.iter().find(|p| p.pipe.id == only) {
                match p.pipe.out.push(msg) {
                    Ok(()) => {}
                    // XPUB_NODROP: a first frame the pipe refuses is the caller's again.
                    Err(PushError::Full(m) | PushError::Closed(m))
                        if self.nodrop && !self.more_out =>
                    {
                        return Err((Error::Again, m));
                    }
                    // A peer that missed the first frame misses the whole message.
                    Err(_) => self.targets.clear(),
                }
            }
            self.more_out = more;
            return Ok(());
        }
        if self.targets.len() > 1 {
            msg.make_shared();
        }
        let mut failed = Vec::new();
        let mut targets = in_targets(&self.peers, &self.targets);
        let mut push = |p: &Peer, m: Msg| {
            if p.pipe.out.push(m).is_err() {
                failed.push(p.pipe.id);
            }
        };
        // All targets but the last get clones, counted with one atomic add; the last
        // gets the message itself (a clone and a drop would be two more, on the line the
        // receivers release on).
        let n = self.targets.len();
        msg.clones(n.saturating_sub(1), |m| {
            if let Some(p) = targets.next() {
                push(p, m);
            }
        });
        if let Some(p) = targets.next() {
            push(p, msg);
        }
        drop(targets);
        // A peer that missed the first frame misses the whole message.
        self.targets.retain(|t| !failed.contains(t));
        self.more_out = more;
        Ok(())
    }

    fn slice_frames(&self) -> super::SliceFrames {
        // Frames other than a one-peer message's only one are built here, under the same
        // lock.
        super::SliceFrames::ALL
    }

    fn send_slice(&mut self, data: &[u8], more: bool) -> Option<Result<()>> {
        if more || self.more_out || self.peers.len() != 1 {
            // Inside a message, or not one peer to match: built, as `send` takes it.
            let mut msg = Msg::copy_from(data);
            msg.set_more(more);
            return Some(self.send(msg).map_err(|(e, _)| e));
        }
        self.process_upstream_if_news();
        // A one-frame message to the only peer: copied straight into its queue.
        let p = &self.peers[0];
        self.targets.clear();
        if p.wants(data) != self.invert && p.pipe.out.push_copy(data).is_err() && self.nodrop {
            // XPUB_NODROP: refused, and the caller's to send again.
            return Some(Err(Error::Again));
        }
        Some(Ok(()))
    }

    fn recv(&mut self) -> Result<Msg> {
        if !self.extended {
            return Err(Error::NotSupported);
        }
        self.process_upstream();
        self.pending.pop_front().ok_or(Error::Again)
    }

    fn can_send(&mut self) -> bool {
        if self.nodrop {
            return self.peers.iter().all(|p| p.pipe.out.can_write());
        }
        true
    }

    fn can_recv(&mut self) -> bool {
        if !self.extended {
            return false;
        }
        self.process_upstream();
        !self.pending.is_empty()
    }

    fn set_option(&mut self, opt: i32, val: &[u8]) -> Option<Result<()>> {
        if opt == id::INVERT_MATCHING {
            return Some(bool_value(val).map(|v| self.invert = v));
        }
        match opt {
            id::XPUB_VERBOSE => Some(bool_value(val).map(|v| self.verbose = v)),
            id::XPUB_VERBOSER => Some(bool_value(val).map(|v| {
                self.verbose = v;
                self.verboser = v
            })),
            id::XPUB_MANUAL => Some(bool_value(val).map(|v| self.manual = v)),
            id::XPUB_NODROP => Some(bool_value(val).map(|v| self.nodrop = v)),
            id::XPUB_WELCOME_MSG => {
                self.welcome = if val.is_empty() {
                    None
                } else {
                    Some(Bytes::copy_from_slice(val))
                };
                Some(Ok(()))
            }
            id::XPUB_MANUAL_LAST_VALUE | id::ONLY_FIRST_SUBSCRIBE => {
                Some(bool_value(val).map(|_| ()))
            }
            id::SUBSCRIBE | id::UNSUBSCRIBE if self.manual && self.extended => {
                let Some(pid) = self.last_pipe else {
                    return Some(Ok(()));
                };
                if let Some(p) = self.peers.iter_mut().find(|p| p.pipe.id == pid) {
                    let topic = Bytes::copy_from_slice(val);
                    if opt == id::SUBSCRIBE {
                        if p.topics.insert(topic) {
                            self.all.add(val);
                        }
                    } else if p.topics.remove(&topic) {
                        self.all.remove(val);
                    }
                    p.everything = p.topics.contains(&b""[..]);
                }
                Some(Ok(()))
            }
            _ => None,
        }
    }

    fn get_option(&self, opt: i32) -> Option<OptionValue> {
        (opt == id::TOPICS_COUNT).then(|| OptionValue::Int(self.all.len() as i32))
    }
}
