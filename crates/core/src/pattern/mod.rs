//! Socket patterns: one file per socket type, each implementing [`Pattern`] on top of the
//! shared building blocks (fair-queueing, load-balancing, subscription matching).

mod dealer;
mod fq;
mod lb;
mod pair;
mod pull;
mod push;
mod rep;
mod req;
mod router;
mod stream;
mod subs;
mod xpub;
mod xsub;

pub(crate) use fq::FairQueue;
pub(crate) use lb::LoadBalancer;

use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::options::OptionValue;
use crate::pipe::Pipe;
use crate::signal::Signal;
use bytes::Bytes;
use ferromq_zmtp::SocketType;
use std::sync::Arc;

/// What the socket knows about a peer once its handshake is done.
#[derive(Clone, Debug)]
pub(crate) struct PeerMeta {
    #[allow(dead_code)] // kept for ROUTER_NOTIFY / socket-type checks on inproc
    pub(crate) socket_type: SocketType,
    /// The peer's announced routing id (READY "Identity"), if any.
    pub(crate) routing_id: Option<Bytes>,
    /// CONNECT_ROUTING_ID given when this pipe was connected, if any.
    pub(crate) connect_routing_id: Option<Bytes>,
    /// The connection's properties (Peer-Address, ...), which its messages carry: a
    /// STREAM's notifications carry them too. None for inproc, and for a pipe made at
    /// connect until its connection is up (`activated`).
    pub(crate) props: Option<Arc<crate::msg::Metadata>>,
}

impl PeerMeta {
    /// The routing id a ROUTER (or the ROUTER inside a REP) gives this peer if no other
    /// peer holds it: CONNECT_ROUTING_ID, else the id the peer announced unless empty.
    /// None: the socket makes one up (a REP keeps the peer anonymous).
    pub(crate) fn wanted_routing_id(&self) -> Option<Bytes> {
        self.connect_routing_id
            .clone()
            .or_else(|| self.routing_id.clone().filter(|r| !r.is_empty()))
    }
}

/// Which frames a pattern takes as bytes (`Pattern::send_slice`): a message's last frame,
/// frames with more to follow. The socket asks only for those, since asking a pattern
/// that declines costs a second lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SliceFrames {
    pub(crate) last: bool,
    pub(crate) more: bool,
}

impl SliceFrames {
    /// The last frame of each message only.
    pub(crate) const LAST: SliceFrames = SliceFrames {
        last: true,
        more: false,
    };
    /// Every frame.
    pub(crate) const ALL: SliceFrames = SliceFrames {
        last: true,
        more: true,
    };
}

/// A socket type's behaviour. All calls happen with the socket's lock held, except
/// `slice_frames`, asked once when the socket is made.
pub(crate) trait Pattern: Send {
    /// A new pipe. `meta` is known for inproc and accepted connections; pipes made by
    /// `connect` attach before their first handshake and learn it in `activated`.
    fn attach(&mut self, pipe: Arc<Pipe>, meta: Option<&PeerMeta>);
    /// The pipe's connection finished a (re)handshake.
    fn activated(&mut self, _pipe_id: u64, _meta: &PeerMeta) {}
    /// A STREAM connect's connection ended; its pipe stays for the next one.
    fn deactivated(&mut self, _pipe_id: u64) {}
    /// The peer is gone; forget the pipe (unread inbound frames may still be drained).
    fn detach(&mut self, pipe_id: u64);
    /// Queues one frame. `Err((Error::Again, msg))` hands the frame back when it cannot go now.
    fn send(&mut self, msg: Msg) -> std::result::Result<(), (Error, Msg)>;
    /// `send` of a frame given as bytes, for a pattern that need not build it first (a
    /// ROUTER's routing id is only looked up; a message's last frame is built in its
    /// queue slot, `Queue::push_copy`). `None`: not handled and nothing changed; build
    /// the frame and call `send`. Errors as `send`'s; on `Again` nothing changed.
    #[inline]
    fn send_slice(&mut self, _data: &[u8], _more: bool) -> Option<Result<()>> {
        None
    }
    /// The frames `send_slice` takes (none by default); fixed for the pattern's life.
    fn slice_frames(&self) -> SliceFrames {
        SliceFrames::default()
    }
    /// Takes the next frame, `Err(Error::Again)` if none.
    fn recv(&mut self) -> Result<Msg>;
    /// [`recv`](Self::recv) into `out`, dropping what it held; on error `out` is
    /// untouched (SUB: or empty, see its `recv_into`). The patterns on the hot path
    /// override it to hand `out` down to the pipe (see `Queue::pop_into`).
    #[inline]
    fn recv_into(&mut self, out: &mut Msg) -> Result<()> {
        *out = self.recv()?;
        Ok(())
    }
    /// ZMQ_POLLOUT.
    fn can_send(&mut self) -> bool;
    /// ZMQ_POLLIN.
    fn can_recv(&mut self) -> bool;
    /// Pattern-specific option; `None` if not one of its options.
    fn set_option(&mut self, _opt: i32, _val: &[u8]) -> Option<Result<()>> {
        None
    }
    /// Pattern-specific option value.
    fn get_option(&self, _opt: i32) -> Option<OptionValue> {
        None
    }
}

/// Builds the pattern for a socket type.
/// `signal` is the socket's, which its pipes' queues wake.
pub(crate) fn new_pattern(kind: SocketType, signal: &Arc<Signal>) -> Result<Box<dyn Pattern>> {
    Ok(match kind {
        SocketType::Pair => Box::new(pair::Pair::default()),
        SocketType::Push => Box::new(push::Push::default()),
        SocketType::Pull => Box::new(pull::Pull::default()),
        SocketType::Dealer => Box::new(dealer::Dealer::default()),
        SocketType::Req => Box::new(req::Req::default()),
        SocketType::Rep => Box::new(rep::Rep::default()),
        SocketType::Router => Box::new(router::Router::new()),
        SocketType::Pub => Box::new(xpub::XPub::new(false, signal.clone())),
        SocketType::XPub => Box::new(xpub::XPub::new(true, signal.clone())),
        SocketType::Sub => Box::new(xsub::XSub::new(false)),
        SocketType::XSub => Box::new(xsub::XSub::new(true)),
        SocketType::Stream => Box::new(stream::Stream::new()),
    })
}

/// The pattern of a ROUTER once ZMQ_ROUTER_RAW is set: a STREAM's, with ROUTER's rules
/// for a routing id nobody has (see `stream::Stream::router_raw`).
pub(crate) fn router_raw() -> Box<dyn Pattern> {
    Box::new(stream::Stream::router_raw())
}

pub(crate) use subs::{cancel_msg, subscribe_msg};

/// The pipe after `i` of `n`, round-robin: a compare, not `%` (a division per message is
/// measurable at 64 B).
#[inline]
pub(crate) fn next_pipe(i: usize, n: usize) -> usize {
    if i + 1 >= n {
        0
    } else {
        i + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pattern_takes_as_bytes_exactly_the_frames_it_declares() {
        // The socket asks `send_slice` only for the declared frames; a declared frame the
        // pattern then declines costs a second lock, and an undeclared one it would take
        // is never offered.
        use SocketType::*;
        for kind in [
            Pair, Pub, Sub, Req, Rep, Dealer, Router, Pull, Push, XPub, XSub, Stream,
        ] {
            let signal = Arc::new(Signal::new().unwrap());
            let mut p = new_pattern(kind, &signal).unwrap();
            let (mine, _theirs) = Pipe::pair(0, 0);
            let meta = PeerMeta {
                socket_type: SocketType::Dealer,
                routing_id: Some(Bytes::from_static(b"peer")),
                connect_routing_id: None,
                props: None,
            };
            p.attach(mine, Some(&meta));
            let declared = p.slice_frames();
            let more = p.send_slice(b"frame", true).is_some();
            let last = p.send_slice(b"frame", false).is_some();
            assert_eq!((last, more), (declared.last, declared.more), "{kind:?}");
        }
    }
}
