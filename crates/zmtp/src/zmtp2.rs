//! ZMTP 2.0 (RFC 15) peers, as libzmq 4.3 speaks to them: libzmq 3.2 and others of its
//! time. After the signature, a 2.0 peer sends its revision (1) where 3.x has the major
//! version, then its socket type number: 12 bytes of greeting. Then each side sends its
//! routing id as a plain frame, and the rest is 3.x framing without commands.

use bytes::{BufMut, Bytes};

use super::{Engine, Event, PeerInfo, State};
use crate::error::ProtocolError;
use crate::frame;
use crate::greeting::{self, PeerGreeting};
use crate::mechanism::MechanismConfig;
use crate::socket_type::SocketType;

impl Engine {
    /// The greeting of a ZMTP 2.0 peer: 12 bytes, the last its socket type number. Only
    /// a NULL socket without ZAP speaks 2.0 (it has no security); then our socket type
    /// number completes our greeting and our routing id goes out as the first frame.
    /// Unlike libzmq 4.3, which takes any number, the peer's type must be one we know
    /// and can talk to, as in 3.x.
    pub(super) fn read_zmtp2_greeting(&mut self) -> Result<bool, ProtocolError> {
        if self.cfg.mechanism != MechanismConfig::Null || self.cfg.null_zap {
            return Err(ProtocolError::UnsupportedVersion {
                major: greeting::ZMTP2_REVISION,
            });
        }
        if !self.greeting_done {
            self.out.put_u8(self.cfg.socket_type.as_raw() as u8);
            self.greeting_done = true;
        }
        let data = self.input.data();
        if data.len() < greeting::ZMTP2_GREETING_LEN {
            self.need = greeting::ZMTP2_GREETING_LEN - data.len();
            return Ok(false);
        }
        let raw = data[greeting::ZMTP2_GREETING_LEN - 1];
        let peer = SocketType::from_raw(i32::from(raw))
            .ok_or_else(|| ProtocolError::UnknownSocketType(format!("{raw} (ZMTP 2.0)")))?;
        if !self.cfg.socket_type.is_compatible(peer) {
            return Err(ProtocolError::IncompatibleSocketType {
                ours: self.cfg.socket_type,
                peer,
            });
        }
        self.input.consume(greeting::ZMTP2_GREETING_LEN);
        self.peer_greeting = Some(PeerGreeting {
            major: greeting::ZMTP2_REVISION,
            minor: 0,
            mechanism: greeting::mechanism_field(b"NULL"),
            as_server: false,
        });
        let id = self.cfg.routing_id.clone();
        let (header, n) = frame::encode_header(false, false, id.len());
        self.out.put_slice(&header[..n]);
        self.out.put_slice(&id);
        self.state = State::Zmtp2RoutingId(peer);
        Ok(true)
    }

    /// A ZMTP 2.0 peer's routing id frame arrived: the handshake is complete.
    pub(super) fn zmtp2_ready(&mut self, socket_type: SocketType, routing_id: Bytes) -> Event {
        let info = PeerInfo {
            socket_type,
            routing_id: Some(routing_id).filter(|id| !id.is_empty()),
            properties: Vec::new(),
            minor_version: 0,
            user_id: None,
            zap_properties: Vec::new(),
            major_version: 2,
        };
        self.peer = Some(info.clone());
        self.state = State::Traffic;
        if self.input.is_empty() {
            self.input.release();
        }
        Event::Ready(info)
    }
}
