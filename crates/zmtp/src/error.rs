//! Protocol errors and their libzmq monitor codes.

use std::fmt;

use crate::socket_type::SocketType;

/// libzmq's `ZMQ_PROTOCOL_ERROR_*` values (zmq.h), reported as the value of a
/// `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL` monitor event.
pub mod codes {
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED`
    pub const ZMTP_UNSPECIFIED: u32 = 0x1000_0000;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND`
    pub const ZMTP_UNEXPECTED_COMMAND: u32 = 0x1000_0001;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE`
    pub const ZMTP_INVALID_SEQUENCE: u32 = 0x1000_0002;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE`
    pub const ZMTP_KEY_EXCHANGE: u32 = 0x1000_0003;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED`
    pub const ZMTP_MALFORMED_COMMAND_UNSPECIFIED: u32 = 0x1000_0011;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE`
    pub const ZMTP_MALFORMED_COMMAND_MESSAGE: u32 = 0x1000_0012;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO`
    pub const ZMTP_MALFORMED_COMMAND_HELLO: u32 = 0x1000_0013;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE`
    pub const ZMTP_MALFORMED_COMMAND_INITIATE: u32 = 0x1000_0014;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR`
    pub const ZMTP_MALFORMED_COMMAND_ERROR: u32 = 0x1000_0015;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY`
    pub const ZMTP_MALFORMED_COMMAND_READY: u32 = 0x1000_0016;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME`
    pub const ZMTP_MALFORMED_COMMAND_WELCOME: u32 = 0x1000_0017;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA`
    pub const ZMTP_INVALID_METADATA: u32 = 0x1000_0018;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC`
    pub const ZMTP_CRYPTOGRAPHIC: u32 = 0x1100_0001;
    /// `ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH`
    pub const ZMTP_MECHANISM_MISMATCH: u32 = 0x1100_0002;
    /// `ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED`
    pub const ZAP_UNSPECIFIED: u32 = 0x2000_0000;
    /// `ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY`
    pub const ZAP_MALFORMED_REPLY: u32 = 0x2000_0001;
    /// `ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID`
    pub const ZAP_BAD_REQUEST_ID: u32 = 0x2000_0002;
    /// `ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION`
    pub const ZAP_BAD_VERSION: u32 = 0x2000_0003;
    /// `ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE`
    pub const ZAP_INVALID_STATUS_CODE: u32 = 0x2000_0004;
    /// `ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA`
    pub const ZAP_INVALID_METADATA: u32 = 0x2000_0005;
    /// `ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED`
    pub const WS_UNSPECIFIED: u32 = 0x3000_0000;
}

/// The phase of the connection in which a [`ProtocolError`] was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// The 64-byte greeting (signature, version, mechanism).
    Greeting,
    /// Frame headers and command encoding.
    Framing,
    /// The security handshake (READY exchange) and command sequencing.
    Handshake,
    /// Authentication and encryption: boxes that do not open, replayed
    /// nonces, a ZAP refusal.
    Security,
}

/// A fatal violation of ZMTP by the peer. Once an [`crate::Engine`] reports
/// one, the connection must be closed.
///
/// Variants are grouped by [`ErrorCategory`]; each maps to a libzmq monitor
/// code through [`ProtocolError::protocol_error_code`].
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    // ----- Greeting -----
    /// The peer did not start with the ZMTP signature (byte 0 must be 0xFF,
    /// bit 0 of byte 9 must be set): an unversioned ZMTP 1.0 peer, or not a
    /// ZMTP peer at all.
    BadSignature,
    /// The peer announced a version this end does not speak: a major version
    /// 0 or 2 (ZMTP 1.0 with a signature, or nothing defined), or ZMTP 2.0
    /// (revision 1) while this end uses a security mechanism or ZAP, which 2.0
    /// has no place for (libzmq refuses those too).
    UnsupportedVersion {
        /// The peer's major version byte.
        major: u8,
    },
    /// The peer's security mechanism differs from ours.
    MechanismMismatch {
        /// Our mechanism name, e.g. "NULL".
        ours: String,
        /// The peer's mechanism name with the zero padding removed.
        peer: String,
    },
    /// The greeting's as-server byte is neither 0 nor 1.
    InvalidAsServer(u8),

    // ----- Framing -----
    /// A frame announced a body larger than the configured limit. Detected
    /// from the header alone, before any of the body is buffered.
    FrameTooLarge {
        /// The announced body size.
        size: u64,
        /// The limit that was exceeded.
        max: u64,
    },
    /// A frame's flags byte has one of the reserved bits 3..7 set.
    ReservedFlags(u8),
    /// A command frame has the MORE flag set.
    CommandWithMore,
    /// A command body is malformed: empty, its name length runs past the
    /// body, or the command-specific data is invalid (e.g. PING without a
    /// TTL, ERROR reason length past the body).
    MalformedCommand {
        /// The command name if it could be read, otherwise empty.
        command: String,
    },

    // ----- Handshake -----
    /// A command that is not allowed in the current state: anything but
    /// READY/ERROR before the peer's READY, or a second READY.
    UnexpectedCommand {
        /// The command name, lossily decoded.
        command: String,
    },
    /// A message frame arrived before the handshake completed.
    MessageBeforeReady,
    /// The peer's READY has no `Socket-Type` property.
    MissingSocketType,
    /// The READY metadata is malformed (truncated property, empty name).
    InvalidMetadata,
    /// The peer's `Socket-Type` is not a type this implementation knows.
    UnknownSocketType(String),
    /// The peer's socket type cannot talk to ours (e.g. PUSH vs PUB).
    IncompatibleSocketType {
        /// Our socket type.
        ours: SocketType,
        /// The socket type the peer announced.
        peer: SocketType,
    },

    // ----- Security -----
    /// A CURVE box did not authenticate (wrong key, tampered bytes) or a
    /// cookie/vouch did not match.
    Cryptographic,
    /// A CURVE MESSAGE nonce was not larger than the previous one (replay).
    InvalidSequence,
    /// The ZAP handler refused the peer with this status code (300, 400 or
    /// 500); reported by libzmq as `ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`.
    AuthFailed {
        /// The ZAP status code.
        status: u16,
    },
}

impl ProtocolError {
    /// Returns the phase in which this error occurs.
    pub fn category(&self) -> ErrorCategory {
        use ProtocolError::*;
        match self {
            BadSignature
            | UnsupportedVersion { .. }
            | MechanismMismatch { .. }
            | InvalidAsServer(_) => ErrorCategory::Greeting,
            FrameTooLarge { .. } | ReservedFlags(_) | CommandWithMore | MalformedCommand { .. } => {
                ErrorCategory::Framing
            }
            UnexpectedCommand { .. }
            | MessageBeforeReady
            | MissingSocketType
            | InvalidMetadata
            | UnknownSocketType(_)
            | IncompatibleSocketType { .. } => ErrorCategory::Handshake,
            Cryptographic | InvalidSequence | AuthFailed { .. } => ErrorCategory::Security,
        }
    }

    /// Returns the libzmq `ZMQ_PROTOCOL_ERROR_*` code (see [`codes`]) that
    /// libzmq would report for this failure in a
    /// `ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL` monitor event. Errors that libzmq
    /// has no specific code for map to `ZMTP_UNSPECIFIED`; malformed commands
    /// map to the code of the command they concern (READY, ERROR, HELLO, ...).
    pub fn protocol_error_code(&self) -> u32 {
        use ProtocolError::*;
        match self {
            BadSignature
            | UnsupportedVersion { .. }
            | InvalidAsServer(_)
            | FrameTooLarge { .. }
            | ReservedFlags(_) => codes::ZMTP_UNSPECIFIED,
            MechanismMismatch { .. } => codes::ZMTP_MECHANISM_MISMATCH,
            CommandWithMore => codes::ZMTP_MALFORMED_COMMAND_UNSPECIFIED,
            MalformedCommand { command } => match command.as_str() {
                "MESSAGE" => codes::ZMTP_MALFORMED_COMMAND_MESSAGE,
                "HELLO" => codes::ZMTP_MALFORMED_COMMAND_HELLO,
                "INITIATE" => codes::ZMTP_MALFORMED_COMMAND_INITIATE,
                "ERROR" => codes::ZMTP_MALFORMED_COMMAND_ERROR,
                "READY" => codes::ZMTP_MALFORMED_COMMAND_READY,
                "WELCOME" => codes::ZMTP_MALFORMED_COMMAND_WELCOME,
                _ => codes::ZMTP_MALFORMED_COMMAND_UNSPECIFIED,
            },
            UnexpectedCommand { .. } | MessageBeforeReady => codes::ZMTP_UNEXPECTED_COMMAND,
            MissingSocketType
            | InvalidMetadata
            | UnknownSocketType(_)
            | IncompatibleSocketType { .. } => codes::ZMTP_INVALID_METADATA,
            Cryptographic => codes::ZMTP_CRYPTOGRAPHIC,
            InvalidSequence => codes::ZMTP_INVALID_SEQUENCE,
            AuthFailed { .. } => codes::ZMTP_UNSPECIFIED,
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ProtocolError::*;
        match self {
            BadSignature => f.write_str("peer did not send a ZMTP 3 signature"),
            UnsupportedVersion { major } => {
                write!(
                    f,
                    "unsupported ZMTP major version {major} (need 3 or later, or 2.0 with NULL)"
                )
            }
            MechanismMismatch { ours, peer } => {
                write!(
                    f,
                    "security mechanism mismatch: ours {ours:?}, peer {peer:?}"
                )
            }
            InvalidAsServer(v) => write!(f, "invalid as-server byte {v:#04x} in greeting"),
            FrameTooLarge { size, max } => {
                write!(f, "frame of {size} bytes exceeds the limit of {max} bytes")
            }
            ReservedFlags(flags) => write!(f, "reserved frame flag bits set: {flags:#04x}"),
            CommandWithMore => f.write_str("command frame has the MORE flag set"),
            MalformedCommand { command } if command.is_empty() => {
                f.write_str("malformed command frame")
            }
            MalformedCommand { command } => write!(f, "malformed {command} command"),
            UnexpectedCommand { command } => write!(f, "unexpected {command:?} command"),
            MessageBeforeReady => f.write_str("message frame received before the handshake"),
            MissingSocketType => f.write_str("READY command lacks the Socket-Type property"),
            InvalidMetadata => f.write_str("malformed READY metadata"),
            UnknownSocketType(name) => write!(f, "unknown peer socket type {name:?}"),
            IncompatibleSocketType { ours, peer } => write!(
                f,
                "peer socket type {} is incompatible with {}",
                peer.name(),
                ours.name()
            ),
            Cryptographic => f.write_str("CURVE box failed to authenticate"),
            InvalidSequence => f.write_str("CURVE message nonce not increasing (replay)"),
            AuthFailed { status } => write!(f, "ZAP refused the peer with status {status}"),
        }
    }
}

impl std::error::Error for ProtocolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_zmq_h() {
        assert_eq!(
            ProtocolError::BadSignature.protocol_error_code(),
            0x1000_0000
        );
        let mismatch = ProtocolError::MechanismMismatch {
            ours: "NULL".into(),
            peer: "PLAIN".into(),
        };
        assert_eq!(mismatch.protocol_error_code(), 0x1100_0002);
        let unexpected = ProtocolError::UnexpectedCommand {
            command: "PING".into(),
        };
        assert_eq!(unexpected.protocol_error_code(), 0x1000_0001);
        let bad_ready = ProtocolError::MalformedCommand {
            command: "READY".into(),
        };
        assert_eq!(bad_ready.protocol_error_code(), 0x1000_0016);
        let bad_error = ProtocolError::MalformedCommand {
            command: "ERROR".into(),
        };
        assert_eq!(bad_error.protocol_error_code(), 0x1000_0015);
        let bad_ping = ProtocolError::MalformedCommand {
            command: "PING".into(),
        };
        assert_eq!(bad_ping.protocol_error_code(), 0x1000_0011);
        let incompatible = ProtocolError::IncompatibleSocketType {
            ours: SocketType::Push,
            peer: SocketType::Pub,
        };
        assert_eq!(incompatible.protocol_error_code(), 0x1000_0018);
        assert_eq!(
            ProtocolError::MissingSocketType.protocol_error_code(),
            0x1000_0018
        );
    }

    #[test]
    fn categories_and_display() {
        assert_eq!(
            ProtocolError::BadSignature.category(),
            ErrorCategory::Greeting
        );
        assert_eq!(
            ProtocolError::ReservedFlags(0x08).category(),
            ErrorCategory::Framing
        );
        assert_eq!(
            ProtocolError::MessageBeforeReady.category(),
            ErrorCategory::Handshake
        );
        let e = ProtocolError::IncompatibleSocketType {
            ours: SocketType::Push,
            peer: SocketType::Pub,
        };
        assert_eq!(
            e.to_string(),
            "peer socket type PUB is incompatible with PUSH"
        );
        let e = ProtocolError::FrameTooLarge { size: 10, max: 5 };
        assert!(e.to_string().contains("10 bytes"));
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(!boxed.to_string().is_empty());
    }
}
