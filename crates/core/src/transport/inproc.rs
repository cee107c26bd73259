//! inproc: sockets of one context joined directly by a pipe (no ZMTP, no copies).
//! A connect before the bind is allowed: the connecting side gets its pipe at once and the
//! binder receives the other end when it binds.

use crate::error::{Error, Result};
use crate::pattern::PeerMeta;
use crate::pipe::Pipe;
use crate::socket::SocketShared;
use std::sync::Arc;

/// A connect waiting for its bind.
pub(crate) struct Pending {
    /// The binder's end of the pipe.
    pipe: Arc<Pipe>,
    /// What the binder should know of the connecting peer.
    meta: PeerMeta,
    /// The connecting socket's pipe id (to cancel on disconnect).
    connector_pipe: u64,
}

/// Forgets a connect still waiting for its bind (the connecting side disconnected).
pub(crate) fn cancel_pending(sock: &Arc<SocketShared>, connector_pipe: u64) {
    let mut st = sock.ctx.lock();
    for list in st.inproc_pending.values_mut() {
        list.retain(|p| p.connector_pipe != connector_pipe);
    }
    st.inproc_pending.retain(|_, l| !l.is_empty());
}

/// Registers `name` for `sock`, and attaches connects that were waiting for it.
pub(crate) fn bind(sock: &Arc<SocketShared>, name: &str) -> Result<()> {
    let pending = {
        let mut st = sock.ctx.lock();
        if let Some(w) = st.inproc.get(name) {
            if w.strong_count() > 0 && w.upgrade().is_some_and(|s| !s.lock().closed) {
                return Err(Error::AddressInUse);
            }
        }
        st.inproc.insert(name.to_string(), Arc::downgrade(sock));
        st.inproc_pending.remove(name).unwrap_or_default()
    };
    let opts = sock.options();
    for p in pending {
        // Now the binder's parts of the two queues are known (the connector's are in).
        p.pipe.inq.set_reader_part(opts.rcvhwm as usize);
        p.pipe.out.set_writer_part(opts.sndhwm as usize);
        sock.attach_bound_inproc_pipe(p.pipe, &p.meta);
    }
    Ok(())
}

/// Removes the name (existing pipes stay).
pub(crate) fn unbind(sock: &Arc<SocketShared>, name: &str) {
    let mut st = sock.ctx.lock();
    if st
        .inproc
        .get(name)
        .is_some_and(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(sock)))
    {
        st.inproc.remove(name);
    }
}

/// Connects `sock` to the socket bound at `name` (or queues the connect). Returns the
/// connecting side's pipe id.
pub(crate) fn connect(sock: &Arc<SocketShared>, name: &str) -> Result<u64> {
    let my = sock.options();
    let my_meta = PeerMeta {
        socket_type: sock.kind,
        routing_id: Some(my.routing_id.clone()).filter(|r| !r.is_empty()),
        connect_routing_id: None,
        props: None,
    };
    let mut ctx = sock.ctx.lock();
    let peer = ctx
        .inproc
        .get(name)
        .and_then(|w| w.upgrade())
        .filter(|p| !p.lock().closed);
    match peer {
        Some(peer) => {
            drop(ctx);
            // Any two socket types connect over inproc, as with libzmq 4.3.4 (it checks
            // types only in the ZMTP handshake, which inproc does not have); a pending
            // connect, whose binder's type is not known yet, is attached anyway too.
            let theirs = peer.options();
            let (mine, their_end) = Pipe::pair(my.sndhwm as usize, my.rcvhwm as usize);
            their_end.inq.set_reader_part(theirs.rcvhwm as usize);
            their_end.out.set_writer_part(theirs.sndhwm as usize);
            let id = mine.id;
            let peer_meta = PeerMeta {
                socket_type: peer.kind,
                routing_id: Some(theirs.routing_id.clone()).filter(|r| !r.is_empty()),
                connect_routing_id: my.connect_routing_id.clone(),
                props: None,
            };
            peer.attach_bound_inproc_pipe(their_end, &my_meta);
            sock.attach_pipe(mine, Some(&peer_meta));
            Ok(id)
        }
        None => {
            let (mine, their_end) = Pipe::pair(my.sndhwm as usize, my.rcvhwm as usize);
            let id = mine.id;
            ctx.inproc_pending
                .entry(name.to_string())
                .or_default()
                .push(Pending {
                    pipe: their_end,
                    meta: my_meta,
                    connector_pipe: id,
                });
            drop(ctx);
            // The binder's type is unknown until it binds; libzmq attaches the pipe anyway.
            let meta = PeerMeta {
                socket_type: sock.kind,
                routing_id: None,
                connect_routing_id: my.connect_routing_id.clone(),
                props: None,
            };
            sock.attach_pipe(mine, Some(&meta));
            Ok(id)
        }
    }
}
