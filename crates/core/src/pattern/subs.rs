//! Subscription bookkeeping shared by the publish/subscribe patterns.
//!
//! Topics are prefixes; the empty topic matches everything. This is a map with a linear
//! prefix scan, adequate for the few topics typical sockets carry; a trie is a later
//! optimisation.

use crate::msg::Msg;
use bytes::Bytes;
use std::collections::HashMap;

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

/// A multiset of topics.
#[derive(Default, Debug)]
pub(crate) struct Topics {
    counts: HashMap<Bytes, usize>,
    /// The empty topic is held: everything matches (no scan per message).
    everything: bool,
}

impl Topics {
    /// Adds one reference; true if the topic is new.
    pub(crate) fn add(&mut self, topic: &[u8]) -> bool {
        let c = self
            .counts
            .entry(Bytes::copy_from_slice(topic))
            .or_insert(0);
        *c += 1;
        let first = *c == 1;
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
                self.everything &= !topic.is_empty();
                true
            }
            None => false,
        }
    }

    /// True if some topic is a prefix of `data`.
    pub(crate) fn matches(&self, data: &[u8]) -> bool {
        self.everything || self.counts.keys().any(|t| data.starts_with(t))
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
    fn subscription_messages_round_trip() {
        let m = subscribe_msg(b"topic");
        assert_eq!(parse_subscription(&m), Some((true, &b"topic"[..])));
        let c = cancel_msg(b"t");
        assert_eq!(parse_subscription(&c), Some((false, &b"t"[..])));
        assert_eq!(parse_subscription(&Msg::from("\x05x")), None);
    }
}
