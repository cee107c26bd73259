//! Socket monitoring: events published as two-frame messages (6 bytes: event u16 + value
//! u32 in native byte order; then the endpoint) on a PAIR socket bound at an inproc
//! endpoint, exactly as libzmq's `zmq_socket_monitor` does.

use crate::error::{Error, Result};
use crate::msg::Msg;
use crate::socket::{Socket, SocketShared, DONTWAIT, SNDMORE};
use ferromq_zmtp::SocketType;
use std::sync::Arc;

/// libzmq's monitor event codes.
#[allow(missing_docs)]
pub mod event {
    pub const CONNECTED: u16 = 0x0001;
    pub const CONNECT_DELAYED: u16 = 0x0002;
    pub const CONNECT_RETRIED: u16 = 0x0004;
    pub const LISTENING: u16 = 0x0008;
    pub const BIND_FAILED: u16 = 0x0010;
    pub const ACCEPTED: u16 = 0x0020;
    pub const ACCEPT_FAILED: u16 = 0x0040;
    pub const CLOSED: u16 = 0x0080;
    pub const CLOSE_FAILED: u16 = 0x0100;
    pub const DISCONNECTED: u16 = 0x0200;
    pub const MONITOR_STOPPED: u16 = 0x0400;
    pub const HANDSHAKE_FAILED_NO_DETAIL: u16 = 0x0800;
    pub const HANDSHAKE_SUCCEEDED: u16 = 0x1000;
    pub const HANDSHAKE_FAILED_PROTOCOL: u16 = 0x2000;
    pub const HANDSHAKE_FAILED_AUTH: u16 = 0x4000;
    pub const ALL: u32 = 0xFFFF;
}

/// An active monitor: the PAIR socket events go out on, and the events wanted.
pub(crate) struct Monitor {
    socket: Socket,
    events: u32,
}

impl Monitor {
    pub(crate) fn emit(&self, ev: u16, value: u32, endpoint: &str) {
        if self.events & ev as u32 == 0 {
            return;
        }
        let mut head = [0u8; 6];
        head[..2].copy_from_slice(&ev.to_ne_bytes());
        head[2..].copy_from_slice(&value.to_ne_bytes());
        // Events are dropped, never waited for, when the monitor reader is slow or absent.
        if self
            .socket
            .send_msg(Msg::copy_from(&head), SNDMORE | DONTWAIT)
            .is_ok()
        {
            let _ = self
                .socket
                .send_msg(Msg::copy_from(endpoint.as_bytes()), DONTWAIT);
        }
    }
}

/// Starts or stops monitoring `sock`.
pub(crate) fn start(sock: &Arc<SocketShared>, endpoint: Option<&str>, events: u32) -> Result<()> {
    let mut guard = sock.monitor.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(old) = guard.take() {
        old.emit(event::MONITOR_STOPPED, 0, "");
        old.socket.close();
    }
    let Some(endpoint) = endpoint else {
        return Ok(());
    };
    if !endpoint.starts_with("inproc://") {
        return Err(Error::ProtocolNotSupported);
    }
    let ctx = crate::Context {
        inner: sock.ctx.clone(),
    };
    let pair = ctx.socket(SocketType::Pair)?;
    pair.set_int(crate::options::id::LINGER, 0)?;
    pair.bind(endpoint)?;
    *guard = Some(Monitor {
        socket: pair,
        events,
    });
    Ok(())
}

/// The monitored socket closed: say so and stop.
pub(crate) fn socket_closed(sock: &Arc<SocketShared>) {
    let mut guard = sock.monitor.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = guard.take() {
        m.emit(event::MONITOR_STOPPED, 0, "");
        m.socket.close();
    }
}
