//! Sans-IO implementation of the ZeroMQ Message Transport Protocol, ZMTP 3.0
//! (RFC 23) and ZMTP 3.1 (RFC 37), and 2.0 (RFC 15) for older peers,
//! compatible with libzmq on the wire.
//!
//! The crate performs no I/O and owns no sockets, threads or clocks: the
//! caller moves bytes between a transport and an [`Engine`], and reacts to the
//! [`Event`]s the engine decodes. A typical driver loop is:
//!
//! 1. read from the transport into [`Engine::input_buffer`], then call
//!    [`Engine::input_filled`] with the byte count;
//! 2. call [`Engine::poll_event`] until it returns `Ok(None)`;
//! 3. write [`Engine::output`] to the transport and call
//!    [`Engine::consume_output`] with the number of bytes written.
//!
//! The NULL, PLAIN and CURVE security mechanisms are implemented; a server's
//! ZAP question is reported as [`Event::ZapRequest`] and answered with
//! [`Engine::zap_reply`]. A ZMTP 2.0 peer (RFC 15: libzmq 3.2) is spoken to
//! with the NULL mechanism, as libzmq 4.3 does; unversioned ZMTP 1.0 peers are
//! refused rather than downgraded to.
//!
//! The [`z85`] module implements the Z85 text encoding of RFC 32, which is used
//! for CURVE keys.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod command;
pub mod curve;
mod engine;
mod error;
mod frame;
mod greeting;
mod input;
mod mechanism;
mod recycle;
mod socket_type;
pub mod z85;

pub use bytes::{Bytes, BytesMut};
pub use engine::{Engine, EngineConfig, Event, PeerInfo};
pub use error::{codes, ErrorCategory, ProtocolError};
pub use mechanism::{MechanismConfig, ZapRequest, ZapVerdict};
pub use socket_type::SocketType;
