//! PUB and XPUB: each message goes to every peer subscribed to a prefix of its first frame;
//! peers at their high-water mark miss it (unless XPUB_NODROP). XPUB also hands
//! (un)subscriptions up to the application: first ones only, or all with XPUB_VERBOSE.

use super::subs::{parse_subscription, PrefixSet, SubscriberIndex};
use super::{Pattern, PeerMeta};
use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::{bool_value, id, pattern_bool_value, OptionValue};
use crate::pipe::{Pipe, PushError};
use crate::signal::Signal;
use bytes::Bytes;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

struct Peer {
    pipe: Arc<Pipe>,
    /// This peer's number in the socket's `subscribers` index: rises with each attach,
    /// so `peers` is sorted by it.
    seq: u64,
    /// What this peer subscribed to: a set (subscribing twice is one subscription).
    topics: PrefixSet,
    /// XPUB_MANUAL: what the peer asked for, reported as cancels when it leaves.
    requested: HashSet<Bytes>,
    /// Inside a multipart message read from this peer (not a subscription).
    reading_more: bool,
    /// The next frame of the message being read is looked at as a possible
    /// (un)subscription (see `XPub::only_first`).
    process_subscribe: bool,
}

impl Peer {
    fn wants(&self, data: &[u8]) -> bool {
        self.topics.matches(data)
    }
}

pub(crate) struct XPub {
    /// true = XPUB, false = PUB.
    extended: bool,
    /// In attach order, so sorted by `seq`.
    peers: Vec<Peer>,
    /// The `seq` the next attached peer gets.
    next_seq: u64,
    /// Which peers hold each topic: finds a message's subscribers, and tells the first
    /// subscription to a topic and the last cancel apart.
    subscribers: SubscriberIndex,
    invert: bool,
    /// Messages for the application (subscriptions, upstream user messages).
    pending: VecDeque<Msg>,
    /// The peers (`seq`s, ascending) the current outgoing multipart message goes to.
    targets: Vec<u64>,
    more_out: bool,
    verbose: bool,
    verboser: bool,
    manual: bool,
    nodrop: bool,
    welcome: Option<Bytes>,
    /// ZMQ_ONLY_FIRST_SUBSCRIBE: in a multipart message from a peer only the first frame
    /// (or a frame after an (un)subscription) is an (un)subscription; without it every
    /// frame that looks like one is, as libzmq.
    only_first: bool,
    /// XPUB_MANUAL_LAST_VALUE: the first message after a subscription was read goes to
    /// the peer that sent it only (a last-value cache's reply to a new subscriber).
    send_last_pipe: bool,
    /// XPUB_MANUAL: the peer (pipe id) whose subscription the application read last, which
    /// ZMQ_SUBSCRIBE/UNSUBSCRIBE then apply to.
    last_pipe: Option<u64>,
    /// XPUB_MANUAL: the peers of the subscriptions in `pending`, in order. As libzmq's,
    /// each receive takes the next one while any are left, whatever the message it
    /// returns (a peer's own message between two subscriptions included).
    pending_pipes: VecDeque<u64>,
    /// The socket's signal, which every peer's upstream queue wakes when it publishes to
    /// a reader that found it empty, and when its writer closes.
    signal: Arc<Signal>,
    /// The signal's generation when the upstream queues were last read out (None: read
    /// them at the next send).
    upstream_seen: Option<u64>,
}

impl XPub {
    /// A PUB (`extended` false) or XPUB socket's pattern; `signal` is the one its peers'
    /// upstream queues wake.
    pub(crate) fn new(extended: bool, signal: Arc<Signal>) -> XPub {
        XPub {
            extended,
            peers: Vec::new(),
            next_seq: 0,
            subscribers: SubscriberIndex::default(),
            invert: false,
            pending: VecDeque::new(),
            targets: Vec::new(),
            more_out: false,
            verbose: false,
            verboser: false,
            manual: false,
            nodrop: false,
            welcome: None,
            only_first: false,
            send_last_pipe: false,
            last_pipe: None,
            pending_pipes: VecDeque::new(),
            signal,
            upstream_seen: None,
        }
    }

    /// `process_upstream` if a peer may have sent something or gone since the last look:
    /// a send pays one load, not a look at each peer's queue (100 subscribers: 16 % of
    /// the sender's time). A queue read out is empty and wakes the signal at its next
    /// publish; the generation is read before the pops, so a frame published meanwhile
    /// moves it. Other wakes of the signal only cost a look.
    fn process_upstream_if_news(&mut self) {
        let generation = self.signal.generation();
        if self.upstream_seen != Some(generation) {
            self.process_upstream();
            self.upstream_seen = Some(generation);
        }
    }

    /// Reads everything the subscribers sent: applies subscriptions, queues what the
    /// application should see.
    fn process_upstream(&mut self) {
        for i in 0..self.peers.len() {
            while let Some(m) = self.peers[i].pipe.inq.pop() {
                let peer = &mut self.peers[i];
                let first = !peer.reading_more;
                peer.reading_more = m.more();
                let sub = if first || peer.process_subscribe {
                    parse_subscription(&m).map(|(s, t)| (s, Bytes::copy_from_slice(t)))
                } else {
                    None
                };
                if first {
                    peer.process_subscribe = !self.only_first || sub.is_some();
                }
                match sub {
                    Some((subscribe, topic)) => {
                        let pid = self.peers[i].pipe.id;
                        let seq = self.peers[i].seq;
                        if self.manual {
                            if subscribe {
                                self.peers[i].requested.insert(topic);
                            } else {
                                self.peers[i].requested.remove(&topic);
                            }
                            if self.extended {
                                self.pending.push_back(m);
                                self.pending_pipes.push_back(pid);
                            }
                            continue;
                        }
                        let notify = if subscribe {
                            let first = self.peers[i].topics.insert(&topic)
                                && self.subscribers.add(&topic, seq);
                            first || self.verbose
                        } else {
                            // As libzmq: reported unless other peers still hold the topic
                            // (a cancel of something never subscribed is reported too).
                            let values_remain = self.peers[i].topics.remove(&topic).is_some()
                                && !self.subscribers.remove(&topic, seq);
                            !values_remain || self.verboser
                        };
                        if self.extended && notify {
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
            self.targets.retain(|&t| t != peer.seq);
            if self.last_pipe == Some(pipe_id) {
                self.last_pipe = None;
            }
            let mut gone = Vec::new();
            for t in peer.topics.topics() {
                if self.subscribers.remove(t, peer.seq) || self.verboser {
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
    }

    /// The peer numbered `seq`, if still attached.
    fn peer(&self, seq: u64) -> Option<&Peer> {
        let i = self.peers.binary_search_by_key(&seq, |p| p.seq).ok()?;
        Some(&self.peers[i])
    }

    /// Puts in `targets` the peers the message starting with `data` goes to.
    fn find_targets(&mut self, data: &[u8]) {
        if self.invert {
            self.targets.clear();
            let unwanted = self.peers.iter().filter(|p| !p.wants(data));
            self.targets.extend(unwanted.map(|p| p.seq));
        } else {
            self.subscribers.matching(data, &mut self.targets);
        }
    }
}

/// The peers named in `targets`, ascending `seq`s of attached peers (a removed peer
/// leaves `targets` too). Few targets among many peers are found by binary search; many
/// by one walk over the peers, where a `contains` per peer cost peers × targets per
/// message (40,000 at 200 subscribers).
fn in_targets<'a>(peers: &'a [Peer], targets: &'a [u64]) -> impl Iterator<Item = &'a Peer> {
    let sparse = targets.len() * 8 < peers.len();
    let mut rest = peers;
    let mut next = 0;
    std::iter::from_fn(move || loop {
        let seq = *targets.get(next)?;
        next += 1;
        let found = if sparse {
            rest.binary_search_by_key(&seq, |p| p.seq)
        } else {
            match rest.iter().position(|p| p.seq >= seq) {
                Some(i) if rest[i].seq == seq => Ok(i),
                Some(i) => Err(i),
                None => Err(rest.len()),
            }
        };
        match found {
            Ok(i) => {
                let p = &rest[i];
                rest = &rest[i + 1..];
                return Some(p);
            }
            Err(i) => rest = &rest[i..],
        }
    })
}

impl Pattern for XPub {
    fn attach(&mut self, pipe: Arc<Pipe>, _meta: Option<&PeerMeta>) {
        if let Some(w) = &self.welcome {
            let _ = pipe.out.push(Msg::from_bytes(w.clone()));
        }
        self.next_seq += 1;
        self.peers.push(Peer {
            pipe,
            seq: self.next_seq,
            topics: PrefixSet::default(),
            requested: HashSet::new(),
            reading_more: false,
            process_subscribe: false,
        });
        // It may have sent before its queue named this socket's signal.
        self.upstream_seen = None;
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
            msg.peek(|body| self.find_targets(body));
            if self.send_last_pipe && self.manual {
                // XPUB_MANUAL_LAST_VALUE: only to the peer whose subscription was read
                // last (if it matches), once; then to every match again.
                if let Some(pid) = self.last_pipe.take() {
                    let last = self.peers.iter().find(|p| p.pipe.id == pid).map(|p| p.seq);
                    self.targets.retain(|&t| Some(t) == last);
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
            if let Some(p) = self.peer(only) {
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
                failed.push(p.seq);
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
        // First: reading upstream may remove a peer that left (the only one too).
        self.process_upstream_if_news();
        let last_value = self.send_last_pipe && self.manual && self.last_pipe.is_some();
        if more || self.more_out || self.peers.len() != 1 || last_value {
            // Inside a message, or not one peer to match: built, as `send` takes it.
            let mut msg = Msg::copy_from(data);
            msg.set_more(more);
            return Some(self.send(msg).map_err(|(e, _)| e));
        }
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
        let m = self.pending.pop_front().ok_or(Error::Again)?;
        if self.manual {
            if let Some(pid) = self.pending_pipes.pop_front() {
                // A peer gone meanwhile takes no subscriptions.
                self.last_pipe = self.peers.iter().any(|p| p.pipe.id == pid).then_some(pid);
            }
        }
        Ok(m)
    }

    fn can_send(&mut self) -> bool {
        if self.nodrop {
            // A peer that left (its queue closed, never writable again) must not count.
            self.process_upstream_if_news();
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
            id::XPUB_VERBOSE => Some(pattern_bool_value(val).map(|v| self.verbose = v)),
            id::XPUB_VERBOSER => Some(pattern_bool_value(val).map(|v| {
                self.verbose = v;
                self.verboser = v
            })),
            id::XPUB_MANUAL => Some(pattern_bool_value(val).map(|v| self.manual = v)),
            id::XPUB_MANUAL_LAST_VALUE => Some(pattern_bool_value(val).map(|v| {
                self.manual = v;
                self.send_last_pipe = v;
            })),
            id::XPUB_NODROP => Some(pattern_bool_value(val).map(|v| self.nodrop = v)),
            id::XPUB_WELCOME_MSG => {
                self.welcome = if val.is_empty() {
                    None
                } else {
                    Some(Bytes::copy_from_slice(val))
                };
                Some(Ok(()))
            }
            id::ONLY_FIRST_SUBSCRIBE => Some(pattern_bool_value(val).map(|v| self.only_first = v)),
            id::SUBSCRIBE | id::UNSUBSCRIBE if self.manual && self.extended => {
                let Some(pid) = self.last_pipe else {
                    return Some(Ok(()));
                };
                if let Some(p) = self.peers.iter_mut().find(|p| p.pipe.id == pid) {
                    if opt == id::SUBSCRIBE {
                        if p.topics.insert(val) {
                            self.subscribers.add(val, p.seq);
                        }
                    } else if p.topics.remove(val).is_some() {
                        self.subscribers.remove(val, p.seq);
                    }
                }
                Some(Ok(()))
            }
            _ => None,
        }
    }

    fn get_option(&self, opt: i32) -> Option<OptionValue> {
        (opt == id::TOPICS_COUNT).then(|| OptionValue::Int(self.subscribers.len() as i32))
    }
}
