//! The I/O driver: one background thread per context that owns every tcp/ipc listener and
//! connection (the only code that touches readiness/epoll, through mio). Application
//! threads talk to it through commands and by scheduling connection tokens when a pipe
//! needs attention; it talks back through the pipes' wakers.

mod assist;
mod codec;
mod conn;
mod reactor;
mod stream;
mod tail_hold;
mod thread_setup;
mod writeq;

pub use assist::yields_for_room;
pub(crate) use assist::{note_receive, note_wait, ConnHandle, Served};
pub(crate) use reactor::ReactorShared;
pub(crate) use thread_setup::IoThreadOptions;

use crate::options::Options;
use crate::socket::SocketShared;
use crate::transport::Endpoint;
use std::sync::Arc;

/// A bind for the I/O thread (the listener itself is created by the caller so that errors
/// such as EADDRINUSE come back synchronously).
pub(crate) struct BindRequest {
    pub(crate) socket: Arc<SocketShared>,
    pub(crate) endpoint: Endpoint,
    pub(crate) opts: Options,
}

/// A connect for the I/O thread.
pub(crate) struct ConnectRequest {
    pub(crate) socket: Arc<SocketShared>,
    pub(crate) endpoint: Endpoint,
    pub(crate) endpoint_str: String,
    pub(crate) opts: Options,
}
