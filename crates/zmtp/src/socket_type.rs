//! libzmq socket types and the ZMTP socket compatibility matrix.

/// A libzmq socket type. The discriminants are libzmq's numeric values
/// (`ZMQ_PAIR` = 0 ... `ZMQ_STREAM` = 11), see [`SocketType::as_raw`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SocketType {
    /// `ZMQ_PAIR` (0): exclusive pair.
    Pair,
    /// `ZMQ_PUB` (1): publisher.
    Pub,
    /// `ZMQ_SUB` (2): subscriber.
    Sub,
    /// `ZMQ_REQ` (3): requester.
    Req,
    /// `ZMQ_REP` (4): replier.
    Rep,
    /// `ZMQ_DEALER` (5): asynchronous requester/replier.
    Dealer,
    /// `ZMQ_ROUTER` (6): addressed asynchronous replier.
    Router,
    /// `ZMQ_PULL` (7): pipeline sink.
    Pull,
    /// `ZMQ_PUSH` (8): pipeline source.
    Push,
    /// `ZMQ_XPUB` (9): publisher that exposes subscriptions.
    XPub,
    /// `ZMQ_XSUB` (10): subscriber that sends raw subscriptions.
    XSub,
    /// `ZMQ_STREAM` (11): raw TCP; never spoken over ZMTP.
    Stream,
}

/// All socket types in libzmq numeric order (index == raw value).
const ALL: [SocketType; 12] = [
    SocketType::Pair,
    SocketType::Pub,
    SocketType::Sub,
    SocketType::Req,
    SocketType::Rep,
    SocketType::Dealer,
    SocketType::Router,
    SocketType::Pull,
    SocketType::Push,
    SocketType::XPub,
    SocketType::XSub,
    SocketType::Stream,
];

impl SocketType {
    /// Converts a libzmq numeric socket type (`ZMQ_PAIR` = 0 ... `ZMQ_STREAM`
    /// = 11) into a `SocketType`; returns `None` for any other value
    /// (including libzmq's draft types such as `ZMQ_SERVER`).
    pub fn from_raw(v: i32) -> Option<SocketType> {
        usize::try_from(v).ok().and_then(|i| ALL.get(i).copied())
    }

    /// Returns libzmq's numeric value for this socket type.
    pub fn as_raw(self) -> i32 {
        self as i32
    }

    /// Returns the upper-case name used in the ZMTP `Socket-Type` property
    /// ("PAIR", "PUB", "SUB", "REQ", "REP", "DEALER", "ROUTER", "PULL",
    /// "PUSH", "XPUB", "XSUB", "STREAM").
    pub fn name(self) -> &'static str {
        match self {
            SocketType::Pair => "PAIR",
            SocketType::Pub => "PUB",
            SocketType::Sub => "SUB",
            SocketType::Req => "REQ",
            SocketType::Rep => "REP",
            SocketType::Dealer => "DEALER",
            SocketType::Router => "ROUTER",
            SocketType::Pull => "PULL",
            SocketType::Push => "PUSH",
            SocketType::XPub => "XPUB",
            SocketType::XSub => "XSUB",
            SocketType::Stream => "STREAM",
        }
    }

    /// Parses a `Socket-Type` property value as produced by [`name`]
    /// (ASCII case-insensitively); returns `None` for unknown names.
    ///
    /// [`name`]: SocketType::name
    pub fn from_name(name: &[u8]) -> Option<SocketType> {
        ALL.iter()
            .copied()
            .find(|t| t.name().as_bytes().eq_ignore_ascii_case(name))
    }

    /// Returns whether a socket of this type may talk to a peer of type
    /// `peer` over ZMTP, per the RFC 37 / libzmq matrix: PAIR-PAIR;
    /// PUB-SUB,XSUB; XPUB-SUB,XSUB; SUB-PUB,XPUB; XSUB-PUB,XPUB;
    /// REQ-REP,ROUTER; REP-REQ,DEALER; DEALER-REP,DEALER,ROUTER;
    /// ROUTER-REQ,DEALER,ROUTER; PUSH-PULL; PULL-PUSH. STREAM is never
    /// compatible with anything, because it does not speak ZMTP.
    pub fn is_compatible(self, peer: SocketType) -> bool {
        use SocketType::*;
        match self {
            Pair => matches!(peer, Pair),
            Pub | XPub => matches!(peer, Sub | XSub),
            Sub | XSub => matches!(peer, Pub | XPub),
            Req => matches!(peer, Rep | Router),
            Rep => matches!(peer, Req | Dealer),
            Dealer => matches!(peer, Rep | Dealer | Router),
            Router => matches!(peer, Req | Dealer | Router),
            Push => matches!(peer, Pull),
            Pull => matches!(peer, Push),
            Stream => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_match_libzmq() {
        let expected = [
            (SocketType::Pair, 0),
            (SocketType::Pub, 1),
            (SocketType::Sub, 2),
            (SocketType::Req, 3),
            (SocketType::Rep, 4),
            (SocketType::Dealer, 5),
            (SocketType::Router, 6),
            (SocketType::Pull, 7),
            (SocketType::Push, 8),
            (SocketType::XPub, 9),
            (SocketType::XSub, 10),
            (SocketType::Stream, 11),
        ];
        for (t, v) in expected {
            assert_eq!(t.as_raw(), v);
            assert_eq!(SocketType::from_raw(v), Some(t));
        }
        assert_eq!(SocketType::from_raw(-1), None);
        assert_eq!(SocketType::from_raw(12), None);
    }

    #[test]
    fn names_round_trip() {
        for t in ALL {
            assert_eq!(SocketType::from_name(t.name().as_bytes()), Some(t));
        }
        assert_eq!(SocketType::from_name(b"dealer"), Some(SocketType::Dealer));
        assert_eq!(SocketType::from_name(b"SERVER"), None);
        assert_eq!(SocketType::from_name(b""), None);
        assert_eq!(SocketType::XPub.name(), "XPUB");
    }

    #[test]
    fn compatibility_matrix_is_symmetric_and_matches_rfc() {
        use SocketType::*;
        let pairs = [
            (Pair, Pair),
            (Pub, Sub),
            (Pub, XSub),
            (XPub, Sub),
            (XPub, XSub),
            (Req, Rep),
            (Req, Router),
            (Rep, Dealer),
            (Dealer, Dealer),
            (Dealer, Router),
            (Router, Router),
            (Push, Pull),
        ];
        let mut count = 0;
        for a in ALL {
            for b in ALL {
                let expected = pairs.contains(&(a, b)) || pairs.contains(&(b, a));
                assert_eq!(a.is_compatible(b), expected, "{a:?} vs {b:?}");
                assert_eq!(a.is_compatible(b), b.is_compatible(a));
                count += usize::from(expected);
            }
        }
        // 12 unordered pairs, 3 of them symmetric with themselves.
        assert_eq!(count, 21);
        assert!(!Stream.is_compatible(Stream));
    }
}
