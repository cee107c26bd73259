//! Subscription bookkeeping shared by the publish/subscribe patterns.
//!
//! Topics are prefixes; the empty topic matches everything. A message is matched with
//! one hash lookup per distinct topic length (`PrefixSet`), not a scan of every topic: a
//! SUB with 10,000 topics took 13.6K msg/s that way, libzmq's trie 1.02M.

use crate::msg::Msg;
use bytes::Bytes;
use std::collections::{HashMap, HashSet};

/// Builds the subscription message for `topic` (first byte 1), flagged as a command.
pub(crate) fn subscribe_msg(topic: &[u8]) -> Msg {
    let mut v = Vec::with_capacity(topic.len() + 1);
    v.push(1);
    v.extend_from_slice(topic);
    let mut m = Msg::from(v);
    m.set_command();
    m
}

/// Builds the cancel message for `topic` (first byte 0), flagged as a command.
pub(crate) fn cancel_msg(topic: &[u8]) -> Msg {
    let mut v = Vec::with_capacity(topic.len() + 1);
    v.push(0);
    v.extend_from_slice(topic);
    let mut m = Msg::from(v);
    m.set_command();
    m
}

/// If `m` is a (un)subscription, `Some((subscribe?, topic))`.
pub(crate) fn parse_subscription(m: &Msg) -> Option<(bool, &[u8])> {
    let d = m.data();
    match d.first() {
        Some(1) => Some((true, &d[1..])),
        Some(0) => Some((false, &d[1..])),
        _ => None,
    }
}

/// A set of topics matched as prefixes: one hash set per topic length, shortest first,
/// so that matching a message costs one lookup per distinct length up to its own (typical
/// topic sets have a handful of lengths). Unlike a byte trie, a long topic costs its bytes
/// once and no nesting (nothing recursive to build, walk or drop).
#[derive(Default, Debug)]
pub(crate) struct PrefixSet {
    by_len: Vec<(usize, HashSet<Bytes>)>,
}

impl PrefixSet {
    /// Adds `topic`; true if it was not there.
    pub(crate) fn insert(&mut self, topic: Bytes) -> bool {
        let i = match self.by_len.binary_search_by_key(&topic.len(), |(l, _)| *l) {
            Ok(i) => i,
            Err(i) => {
                self.by_len.insert(i, (topic.len(), HashSet::new()));
                i
            }
        };
        self.by_len[i].1.insert(topic)
    }

    /// Removes `topic`; true if it was there.
    pub(crate) fn remove(&mut self, topic: &[u8]) -> bool {
        let Ok(i) = self.by_len.binary_search_by_key(&topic.len(), |(l, _)| *l) else {
            return false;
        };
        let gone = self.by_len[i].1.remove(topic);
        if self.by_len[i].1.is_empty() {
            self.by_len.remove(i);
        }
        gone
    }

    pub(crate) fn contains(&self, topic: &[u8]) -> bool {
        self.by_len
            .binary_search_by_key(&topic.len(), |(l, _)| *l)
            .is_ok_and(|i| self.by_len[i].1.contains(topic))
    }

    /// True if some topic is a prefix of `data`.
    pub(crate) fn matches(&self, data: &[u8]) -> bool {
        self.by_len
            .iter()
            .take_while(|(l, _)| *l <= data.len())
            .any(|(l, set)| set.contains(&data[..*l]))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Bytes> {
        self.by_len.iter().flat_map(|(_, set)| set.iter())
    }
}

/// A multiset of topics.
#[derive(Default, Debug)]
pub(crate) struct Topics {
    counts: HashMap<Bytes, usize>,
    /// The distinct topics, for matching.
    prefixes: PrefixSet,
    /// The empty topic is held: everything matches (no lookup per message).
    everything: bool,
}

impl Topics {
    /// Adds one reference; true if the topic is new.
    pub(crate) fn add(&mut self, topic: &[u8]) -> bool {
        let key = Bytes::copy_from_slice(topic);
        let c = self.counts.entry(key.clone()).or_insert(0);
        *c += 1;
        let first = *c == 1;
        if first {
            self.prefixes.insert(key);
        }
        self.everything |= topic.is_empty();
        first
    }

    /// Removes one reference; true if the topic is now gone.
    pub(crate) fn remove(&mut self, topic: &[u8]) -> bool {
        match self.counts.get_mut(topic) {
            Some(c) if *c > 1 => {
                *c -= 1;
                false
            }
            Some(_) => {
                self.counts.remove(topic);
                self.prefixes.remove(topic);
                self.everything &= !topic.is_empty();
                true
            }
            None => false,
        }
    }

    /// True if some topic is a prefix of `data`.
    pub(crate) fn matches(&self, data: &[u8]) -> bool {
        self.everything || self.prefixes.matches(data)
    }

    /// Number of distinct topics.
    pub(crate) fn len(&self) -> usize {
        self.counts.len()
    }

    pub(crate) fn topics(&self) -> impl Iterator<Item = &Bytes> {
        self.counts.keys()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_matching_and_refcounts() {
        let mut t = Topics::default();
        assert!(!t.matches(b"abc"));
        assert!(t.add(b"ab"));
        assert!(!t.add(b"ab"));
        assert!(t.matches(b"abc"));
        assert!(!t.matches(b"a"));
        assert!(!t.remove(b"ab"));
        assert!(t.matches(b"abc"));
        assert!(t.remove(b"ab"));
        assert!(!t.matches(b"abc"));
        t.add(b"");
        assert!(t.matches(b""));
        assert!(t.matches(b"anything"));
    }

    #[test]
    fn prefix_set_matches_any_length_and_forgets_removed_topics() {
        let mut p = PrefixSet::default();
        assert!(!p.matches(b""));
        for t in [&b"abc"[..], b"x", b"abcdef", b"zz"] {
            assert!(p.insert(Bytes::copy_from_slice(t)));
        }
        assert!(!p.insert(Bytes::from_static(b"x")));
        assert!(p.contains(b"abc") && !p.contains(b"ab"));
        assert!(p.matches(b"abcz") && p.matches(b"xyz") && p.matches(b"zz"));
        assert!(!p.matches(b"ab") && !p.matches(b"z") && !p.matches(b"yabc"));
        assert!(p.remove(b"abc"));
        assert!(!p.remove(b"abc"));
        assert!(!p.matches(b"abcz") && p.matches(b"abcdefg"));
        assert!(p.remove(b"x"));
        assert!(!p.matches(b"xyz"));
        let mut left: Vec<_> = p.iter().map(|b| b.to_vec()).collect();
        left.sort();
        assert_eq!(left, [b"abcdef".to_vec(), b"zz".to_vec()]);
        assert!(p.insert(Bytes::new()));
        assert!(p.matches(b"") && p.matches(b"anything"));
    }

    #[test]
    fn subscription_messages_round_trip() {
        let m = subscribe_msg(b"topic");
        assert_eq!(parse_subscription(&m), Some((true, &b"topic"[..])));
        let c = cancel_msg(b"t");
        assert_eq!(parse_subscription(&c), Some((false, &b"t"[..])));
        assert_eq!(parse_subscription(&Msg::from("\x05x")), None);
    }
}
