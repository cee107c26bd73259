//! ferromq: ZeroMQ in Rust.
//!
//! The core library behind ferromq's drop-in `libzmq.so.5`: contexts, sockets of every
//! standard type, tcp/ipc/inproc transports, speaking ZMTP 3.1 with libzmq peers.
//!
//! ```
//! use ferromq::{Context, SocketType};
//!
//! let ctx = Context::new();
//! let pull = ctx.socket(SocketType::Pull).unwrap();
//! pull.bind("inproc://example").unwrap();
//! let push = ctx.socket(SocketType::Push).unwrap();
//! push.connect("inproc://example").unwrap();
//! push.send(b"hello", 0).unwrap();
//! assert_eq!(pull.recv(0).unwrap().data(), b"hello");
//! ```

#![warn(missing_docs)]

mod ctx;
pub mod error;
pub(crate) mod flaglock;
mod io;
mod loan;
mod monitor;
mod msg;
pub mod options;
mod pattern;
mod peer_filters;
mod pipe;
mod poll_serve;
mod pool;
mod prefetch;
mod signal;
mod socket;
mod spsc;
mod transport;
mod zap;

pub use ctx::{opt as ctx_opt, Context};
pub use error::{Error, Result};
pub use ferromq_zmtp::SocketType;
#[doc(hidden)]
pub use io::yields_for_room;
pub use monitor::event;
pub use msg::{Metadata, Msg, INLINE_CAP};
pub use options::OptionValue;
#[doc(hidden)]
pub use pipe::yields_to_reader;
pub use poll_serve::PollServe;
pub use socket::{Socket, DONTWAIT, POLLIN, POLLOUT, SNDMORE};
#[doc(hidden)]
pub use transport::fuzz_parse_endpoint;
#[doc(hidden)]
pub use zap::fuzz_parse_zap_reply;
