//! Security mechanisms: configuration, and the handshake state machines of
//! NULL (RFC 23), PLAIN (RFC 24) and CURVE (RFC 26), including the pause for a
//! ZAP (RFC 27) decision on the server side.

use bytes::{BufMut, Bytes, BytesMut};
use zeroize::Zeroizing;

use crate::command;
use crate::curve::{self, CurveClient, CurveCodec, CurveServer, KeyPair, KEY_LEN};
use crate::error::ProtocolError;
use crate::greeting::{self, MECHANISM_LEN};

/// Which security mechanism this side uses, with its credentials. The peer
/// must announce the same mechanism; PLAIN and CURVE also need one side to
/// be the server and the other the client.
#[non_exhaustive]
#[derive(Clone)]
pub enum MechanismConfig {
    /// No authentication, no encryption: one READY each way.
    Null,
    /// PLAIN client: sends a user name and password in clear text.
    PlainClient {
        /// `ZMQ_PLAIN_USERNAME` (at most 255 bytes).
        username: Vec<u8>,
        /// `ZMQ_PLAIN_PASSWORD` (at most 255 bytes).
        password: Zeroizing<Vec<u8>>,
    },
    /// PLAIN server: asks ZAP about every client's credentials.
    PlainServer,
    /// CURVE client: our permanent key pair and the server's public key.
    CurveClient {
        /// Our permanent key pair (`ZMQ_CURVE_PUBLICKEY`/`SECRETKEY`).
        keys: KeyPair,
        /// The server's permanent public key (`ZMQ_CURVE_SERVERKEY`).
        server_key: [u8; KEY_LEN],
    },
    /// CURVE server: our permanent key pair (`ZMQ_CURVE_SECRETKEY`).
    CurveServer {
        /// Our permanent key pair.
        keys: KeyPair,
    },
}

impl std::fmt::Debug for MechanismConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print credentials.
        f.write_str(self.name())
    }
}

impl PartialEq for MechanismConfig {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && self.is_server() == other.is_server()
    }
}

impl MechanismConfig {
    /// The mechanism name as announced in the greeting.
    pub fn name(&self) -> &'static str {
        match self {
            MechanismConfig::Null => "NULL",
            MechanismConfig::PlainClient { .. } | MechanismConfig::PlainServer => "PLAIN",
            MechanismConfig::CurveClient { .. } | MechanismConfig::CurveServer { .. } => "CURVE",
        }
    }

    /// Whether the greeting announces us as the server.
    pub fn is_server(&self) -> bool {
        matches!(
            self,
            MechanismConfig::PlainServer | MechanismConfig::CurveServer { .. }
        )
    }

    pub(crate) fn field(&self) -> [u8; MECHANISM_LEN] {
        greeting::mechanism_field(self.name().as_bytes())
    }
}

/// What a server asks its ZAP handler before letting a peer in
/// ([`crate::Event::ZapRequest`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZapRequest {
    /// "NULL", "PLAIN" or "CURVE".
    pub mechanism: &'static str,
    /// PLAIN: user name and password; CURVE: the client's 32-byte permanent
    /// public key; NULL: none.
    pub credentials: Vec<Bytes>,
}

/// The ZAP handler's decision, given to [`crate::Engine::zap_reply`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ZapVerdict {
    /// Status 200: the handshake goes on.
    Accept {
        /// The User-Id the handler assigned (may be empty).
        user_id: Bytes,
        /// Extra properties the handler attached to the peer.
        properties: Vec<(String, Bytes)>,
    },
    /// Status 300, 400 or 500: the handshake fails. For 400 and 500 an
    /// ERROR command carrying the status code is sent first; 300 (temporary
    /// failure) closes silently, as RFC 27 and libzmq do.
    Reject {
        /// The ZAP status code.
        status: u16,
    },
}

/// Where a handshake stands after its last input.
pub(crate) enum Progress {
    /// More commands are needed.
    Continue,
    /// A ZAP decision is needed before going on.
    Zap(ZapRequest),
    /// The handshake is complete: the peer's metadata (still to validate), and
    /// the traffic codec if the mechanism encrypts.
    Done(Bytes, Option<Box<CurveCodec>>),
}

impl std::fmt::Debug for Handshake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Holds keys and passwords: print only which mechanism it is.
        let name = match self {
            Handshake::Null { .. } => "Null",
            Handshake::PlainClient { .. } => "PlainClient",
            Handshake::PlainServer { .. } => "PlainServer",
            Handshake::CurveClient(_) => "CurveClient",
            Handshake::CurveServer(_) => "CurveServer",
        };
        f.write_str(name)
    }
}

pub(crate) enum Handshake {
    /// NULL: our READY is sent at once (or after ZAP if `zap`).
    Null {
        zap: bool,
        ready_sent: bool,
        peer_meta: Option<Bytes>,
    },
    PlainClient {
        username: Vec<u8>,
        password: Zeroizing<Vec<u8>>,
        welcomed: bool,
    },
    PlainServer {
        state: PlainServerState,
        peer_meta: Option<Bytes>,
    },
    CurveClient(Box<CurveClient>),
    CurveServer(Box<CurveServer>),
}

#[derive(PartialEq, Eq)]
pub(crate) enum PlainServerState {
    ExpectHello,
    WaitZap,
    ExpectInitiate,
}

fn unexpected(name: &[u8]) -> ProtocolError {
    ProtocolError::UnexpectedCommand {
        command: String::from_utf8_lossy(name).into_owned(),
    }
}

fn malformed(name: &str) -> ProtocolError {
    ProtocolError::MalformedCommand {
        command: name.to_string(),
    }
}

impl Handshake {
    /// `null_zap`: a NULL server asks ZAP before sending READY (libzmq does
    /// when `ZMQ_ZAP_DOMAIN` is set).
    pub(crate) fn new(cfg: &MechanismConfig, null_zap: bool) -> Handshake {
        match cfg {
            MechanismConfig::Null => Handshake::Null {
                zap: null_zap,
                ready_sent: false,
                peer_meta: None,
            },
            MechanismConfig::PlainClient { username, password } => Handshake::PlainClient {
                username: username.clone(),
                password: password.clone(),
                welcomed: false,
            },
            MechanismConfig::PlainServer => Handshake::PlainServer {
                state: PlainServerState::ExpectHello,
                peer_meta: None,
            },
            MechanismConfig::CurveClient { keys, server_key } => {
                Handshake::CurveClient(Box::new(CurveClient::new(keys.clone(), *server_key)))
            }
            MechanismConfig::CurveServer { keys } => {
                Handshake::CurveServer(Box::new(CurveServer::new(keys.clone())))
            }
        }
    }

    /// The greeting exchange is done: queue what we send first.
    pub(crate) fn start(&mut self, metadata: &[u8], out: &mut BytesMut) -> Progress {
        match self {
            Handshake::Null { zap: true, .. } => Progress::Zap(ZapRequest {
                mechanism: "NULL",
                credentials: Vec::new(),
            }),
            Handshake::Null { ready_sent, .. } => {
                command::write_command(out, command::READY, &[metadata]);
                *ready_sent = true;
                Progress::Continue
            }
            Handshake::PlainClient {
                username, password, ..
            } => {
                let user = &username[..username.len().min(255)];
                let pass = &password[..password.len().min(255)];
                let mut body = Zeroizing::new(Vec::with_capacity(2 + user.len() + pass.len()));
                body.put_u8(user.len() as u8);
                body.put_slice(user);
                body.put_u8(pass.len() as u8);
                body.put_slice(pass);
                command::write_command(out, b"HELLO", &[&body]);
                Progress::Continue
            }
            Handshake::CurveClient(c) => {
                c.start(out);
                Progress::Continue
            }
            Handshake::PlainServer { .. } | Handshake::CurveServer(_) => Progress::Continue,
        }
    }

    /// One handshake command from the peer (not ERROR, which the engine
    /// handles). `body` is the whole command body, `data` what follows the name.
    pub(crate) fn on_command(
        &mut self,
        name: &[u8],
        body: &Bytes,
        data: Bytes,
        metadata: &[u8],
        out: &mut BytesMut,
    ) -> Result<Progress, ProtocolError> {
        match self {
            Handshake::Null {
                ready_sent,
                peer_meta,
                ..
            } => {
                if name != command::READY || peer_meta.is_some() {
                    return Err(unexpected(name));
                }
                if *ready_sent {
                    Ok(Progress::Done(data, None))
                } else {
                    // A ZAP decision is pending; finish when it arrives.
                    *peer_meta = Some(data);
                    Ok(Progress::Continue)
                }
            }
            Handshake::PlainClient { welcomed, .. } => match (name, *welcomed) {
                (b"WELCOME", false) => {
                    if !data.is_empty() {
                        return Err(malformed("WELCOME"));
                    }
                    *welcomed = true;
                    command::write_command(out, b"INITIATE", &[metadata]);
                    Ok(Progress::Continue)
                }
                (b"READY", true) => Ok(Progress::Done(data, None)),
                _ => Err(unexpected(name)),
            },
            Handshake::PlainServer { state, peer_meta } => match (name, &*state) {
                (b"HELLO", PlainServerState::ExpectHello) => {
                    let creds = parse_plain_hello(&data)?;
                    *state = PlainServerState::WaitZap;
                    Ok(Progress::Zap(ZapRequest {
                        mechanism: "PLAIN",
                        credentials: creds,
                    }))
                }
                (b"INITIATE", PlainServerState::ExpectInitiate) => {
                    *peer_meta = Some(data.clone());
                    command::write_command(out, command::READY, &[metadata]);
                    Ok(Progress::Done(data, None))
                }
                _ => Err(unexpected(name)),
            },
            Handshake::CurveClient(c) => Ok(match c.on_command(name, body, metadata, out)? {
                curve::Step::Done(meta, codec) => Progress::Done(meta, Some(codec)),
                _ => Progress::Continue,
            }),
            Handshake::CurveServer(s) => Ok(match s.on_command(name, body, out)? {
                curve::Step::Zap(key) => Progress::Zap(ZapRequest {
                    mechanism: "CURVE",
                    credentials: vec![key],
                }),
                curve::Step::Done(meta, codec) => Progress::Done(meta, Some(codec)),
                curve::Step::Continue => Progress::Continue,
            }),
        }
    }

    /// ZAP said 200: go on where the handshake paused.
    pub(crate) fn zap_accepted(
        &mut self,
        metadata: &[u8],
        out: &mut BytesMut,
    ) -> Result<Progress, ProtocolError> {
        match self {
            Handshake::Null {
                ready_sent,
                peer_meta,
                ..
            } => {
                command::write_command(out, command::READY, &[metadata]);
                *ready_sent = true;
                Ok(match peer_meta.take() {
                    Some(meta) => Progress::Done(meta, None),
                    None => Progress::Continue,
                })
            }
            Handshake::PlainServer { state, .. } => {
                command::write_command(out, b"WELCOME", &[]);
                *state = PlainServerState::ExpectInitiate;
                Ok(Progress::Continue)
            }
            Handshake::CurveServer(s) => Ok(match s.accept(metadata, out)? {
                curve::Step::Done(meta, codec) => Progress::Done(meta, Some(codec)),
                _ => Progress::Continue,
            }),
            Handshake::PlainClient { .. } | Handshake::CurveClient(_) => Ok(Progress::Continue),
        }
    }
}

/// PLAIN HELLO data: `username-length username password-length password`.
fn parse_plain_hello(data: &[u8]) -> Result<Vec<Bytes>, ProtocolError> {
    let bad = || malformed("HELLO");
    let (&ulen, rest) = data.split_first().ok_or_else(bad)?;
    let user = rest.get(..usize::from(ulen)).ok_or_else(bad)?;
    let rest = &rest[user.len()..];
    let (&plen, rest) = rest.split_first().ok_or_else(bad)?;
    if rest.len() != usize::from(plen) {
        return Err(bad());
    }
    Ok(vec![
        Bytes::copy_from_slice(user),
        Bytes::copy_from_slice(rest),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_hello_parsing() {
        let creds = parse_plain_hello(b"\x05admin\x06secret").unwrap();
        assert_eq!(&creds[0][..], b"admin");
        assert_eq!(&creds[1][..], b"secret");
        assert!(parse_plain_hello(b"").is_err());
        assert!(parse_plain_hello(b"\x05adm").is_err());
        assert!(parse_plain_hello(b"\x05admin\x06secre").is_err());
        assert!(parse_plain_hello(b"\x05admin\x06secrets").is_err());
        assert_eq!(parse_plain_hello(b"\x00\x00").unwrap()[0].len(), 0);
    }

    #[test]
    fn config_debug_hides_credentials() {
        let c = MechanismConfig::PlainClient {
            username: b"u".to_vec(),
            password: Zeroizing::new(b"hunter2".to_vec()),
        };
        assert_eq!(format!("{c:?}"), "PLAIN");
        assert!(!c.is_server());
        assert!(MechanismConfig::PlainServer.is_server());
    }
}
