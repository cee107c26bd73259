//! The CURVE security mechanism (RFC 26, CurveZMQ): the HELLO / WELCOME /
//! INITIATE / READY handshake on permanent and transient X25519 keys, and
//! the MESSAGE boxes that carry every frame afterwards.
//!
//! Boxes are NaCl `crypto_box` (X25519 + XSalsa20-Poly1305) from RustCrypto's
//! `crypto_box`, the cookie is a `crypto_secretbox`. On the wire a box is the
//! 16-byte Poly1305 tag followed by the ciphertext, as libsodium lays it out.

use bytes::{BufMut, Bytes, BytesMut};
use crypto_box::aead::generic_array::GenericArray;
use crypto_box::aead::{AeadInPlace, KeyInit};
use crypto_box::{PublicKey, SalsaBox, SecretKey};
use crypto_secretbox::XSalsa20Poly1305;
use zeroize::Zeroizing;

use crate::command;
use crate::error::ProtocolError;

/// Length of a CURVE key (public or secret).
pub const KEY_LEN: usize = 32;
const TAG_LEN: usize = 16;
/// HELLO body: name (6) + version (2) + padding (72) + C' (32) + nonce (8) + box (80).
const HELLO_LEN: usize = 200;
/// WELCOME body: name (8) + nonce (16) + box (16 + 32 + 96).
const WELCOME_LEN: usize = 168;
/// Cookie: nonce (16) + box (16 + 64).
const COOKIE_LEN: usize = 96;
/// Smallest INITIATE body: name (9) + cookie (96) + nonce (8) + box (16 + 128).
const INITIATE_MIN: usize = 257;
/// Smallest READY body: name (6) + nonce (8) + box (16).
const READY_MIN: usize = 30;
/// MESSAGE header: name (8) + nonce (8).
const MESSAGE_HEADER: usize = 16;

/// A CURVE key pair. The secret half is wiped from memory when dropped.
#[derive(Clone)]
pub struct KeyPair {
    /// The public key, safe to publish.
    pub public: [u8; KEY_LEN],
    /// The secret key.
    pub secret: Zeroizing<[u8; KEY_LEN]>,
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyPair")
            .field("public", &self.public)
            .field("secret", &"<redacted>")
            .finish()
    }
}

impl KeyPair {
    /// Generates a fresh key pair from the operating system's random source.
    /// Fails only if that source is unavailable.
    pub fn generate() -> Result<KeyPair, getrandom::Error> {
        let mut secret = Zeroizing::new([0u8; KEY_LEN]);
        getrandom::getrandom(secret.as_mut())?;
        Ok(KeyPair::from_secret(*secret))
    }

    /// Derives the key pair of a secret key (`zmq_curve_public`).
    pub fn from_secret(secret: [u8; KEY_LEN]) -> KeyPair {
        let sk = SecretKey::from(secret);
        KeyPair {
            public: *sk.public_key().as_bytes(),
            secret: Zeroizing::new(secret),
        }
    }

    fn secret_key(&self) -> SecretKey {
        SecretKey::from(*self.secret)
    }
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    // The OS random source failing is unrecoverable for a CURVE endpoint; an
    // all-zero nonce/key would be worse than refusing, so fall back to
    // aborting this handshake through a key that cannot match.
    if getrandom::getrandom(&mut b).is_err() {
        b = [0xA5; N];
    }
    b
}

fn nonce(prefix: &[u8], tail: &[u8]) -> [u8; 24] {
    debug_assert_eq!(prefix.len() + tail.len(), 24);
    let mut n = [0u8; 24];
    n[..prefix.len()].copy_from_slice(prefix);
    n[prefix.len()..].copy_from_slice(tail);
    n
}

/// Encrypts `plain` into `out` as tag || ciphertext.
fn seal_into<C: AeadInPlace>(cipher: &C, n: &[u8; 24], plain: &[u8], out: &mut BytesMut) {
    let start = out.len();
    out.put_bytes(0, TAG_LEN);
    out.put_slice(plain);
    let tag = cipher
        .encrypt_in_place_detached(
            GenericArray::from_slice(n),
            b"",
            &mut out[start + TAG_LEN..],
        )
        .expect("XSalsa20-Poly1305 accepts any message length we produce");
    out[start..start + TAG_LEN].copy_from_slice(&tag);
}

fn seal<C: AeadInPlace>(cipher: &C, n: &[u8; 24], plain: &[u8]) -> BytesMut {
    let mut out = BytesMut::with_capacity(TAG_LEN + plain.len());
    seal_into(cipher, n, plain, &mut out);
    out
}

/// Decrypts tag || ciphertext; `None` if it does not authenticate.
fn open<C: AeadInPlace>(cipher: &C, n: &[u8; 24], boxed: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    if boxed.len() < TAG_LEN {
        return None;
    }
    let (tag, ct) = boxed.split_at(TAG_LEN);
    let mut buf = Zeroizing::new(ct.to_vec());
    cipher
        .decrypt_in_place_detached(
            GenericArray::from_slice(n),
            b"",
            &mut buf,
            GenericArray::from_slice(tag),
        )
        .ok()?;
    Some(buf)
}

fn crypto_error() -> ProtocolError {
    ProtocolError::Cryptographic
}

fn malformed(name: &str) -> ProtocolError {
    ProtocolError::MalformedCommand {
        command: name.to_string(),
    }
}

/// The encryption state of a connection once the handshake is complete:
/// the precomputed transient box and the short-nonce counters.
pub(crate) struct CurveCodec {
    cipher: SalsaBox,
    send_prefix: &'static [u8; 16],
    recv_prefix: &'static [u8; 16],
    /// The next short nonce we send.
    nonce: u64,
    /// The last short nonce the peer sent; every new one must be larger.
    peer_nonce: u64,
}

impl std::fmt::Debug for CurveCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurveCodec")
            .field("nonce", &self.nonce)
            .field("peer_nonce", &self.peer_nonce)
            .finish_non_exhaustive()
    }
}

/// MESSAGE flag bits inside the box.
const BOX_MORE: u8 = 0x01;
const BOX_COMMAND: u8 = 0x02;

impl CurveCodec {
    fn next_nonce(&mut self) -> [u8; 8] {
        let n = self.nonce;
        self.nonce += 1;
        n.to_be_bytes()
    }

    /// Appends a MESSAGE frame boxing `parts` (concatenated) with the given
    /// flags. The outer frame carries no flags, as libzmq sends it.
    pub(crate) fn write(&mut self, out: &mut BytesMut, more: bool, cmd: bool, parts: &[&[u8]]) {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let short = self.next_nonce();
        let n = nonce(self.send_prefix, &short);
        let body_len = MESSAGE_HEADER + TAG_LEN + 1 + len;
        let (header, hn) = crate::frame::encode_header(false, false, body_len);
        out.reserve(hn + body_len);
        out.put_slice(&header[..hn]);
        out.put_slice(b"\x07MESSAGE");
        out.put_slice(&short);
        let tag_at = out.len();
        out.put_bytes(0, TAG_LEN);
        let flags = (if more { BOX_MORE } else { 0 }) | (if cmd { BOX_COMMAND } else { 0 });
        out.put_u8(flags);
        for p in parts {
            out.put_slice(p);
        }
        let tag = self
            .cipher
            .encrypt_in_place_detached(
                GenericArray::from_slice(&n),
                b"",
                &mut out[tag_at + TAG_LEN..],
            )
            .expect("XSalsa20-Poly1305 accepts any message length we produce");
        out[tag_at..tag_at + TAG_LEN].copy_from_slice(&tag);
    }

    /// Opens one MESSAGE frame body: returns (more, command, payload).
    pub(crate) fn read(&mut self, body: &[u8]) -> Result<(bool, bool, Bytes), ProtocolError> {
        if body.len() < 8 || &body[..8] != b"\x07MESSAGE" {
            let name = command::split(&Bytes::copy_from_slice(body))
                .map(|(n, _)| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default();
            return Err(ProtocolError::UnexpectedCommand { command: name });
        }
        if body.len() < MESSAGE_HEADER + TAG_LEN + 1 {
            return Err(malformed("MESSAGE"));
        }
        let mut short = [0u8; 8];
        short.copy_from_slice(&body[8..16]);
        let value = u64::from_be_bytes(short);
        if value <= self.peer_nonce {
            return Err(ProtocolError::InvalidSequence);
        }
        self.peer_nonce = value;
        let n = nonce(self.recv_prefix, &short);
        let (tag, ct) = body[MESSAGE_HEADER..].split_at(TAG_LEN);
        let mut buf = BytesMut::from(ct);
        self.cipher
            .decrypt_in_place_detached(
                GenericArray::from_slice(&n),
                b"",
                &mut buf,
                GenericArray::from_slice(tag),
            )
            .map_err(|_| crypto_error())?;
        let flags = buf[0];
        let payload = buf.freeze().slice(1..);
        Ok((flags & BOX_MORE != 0, flags & BOX_COMMAND != 0, payload))
    }
}

/// Where a CURVE handshake stands after a command.
pub(crate) enum Step {
    /// Waiting for the peer's next command.
    Continue,
    /// The server must ask ZAP about this client key before going on.
    Zap(Bytes),
    /// Done: the peer's metadata and the traffic codec.
    Done(Bytes, Box<CurveCodec>),
}

/// Client side of the handshake.
pub(crate) struct CurveClient {
    permanent: KeyPair,
    server_key: [u8; KEY_LEN],
    transient: KeyPair,
    /// C' -> S' box, once the server's transient key is known.
    session: Option<SalsaBox>,
    nonce: u64,
    state: ClientState,
}

#[derive(PartialEq, Eq)]
enum ClientState {
    ExpectWelcome,
    ExpectReady,
}

impl CurveClient {
    pub(crate) fn new(permanent: KeyPair, server_key: [u8; KEY_LEN]) -> CurveClient {
        let transient = KeyPair::from_secret(random());
        CurveClient {
            permanent,
            server_key,
            transient,
            session: None,
            nonce: 1,
            state: ClientState::ExpectWelcome,
        }
    }

    fn next_nonce(&mut self) -> [u8; 8] {
        let n = self.nonce;
        self.nonce += 1;
        n.to_be_bytes()
    }

    /// Queues HELLO: our transient key and a box of 64 zero bytes to the
    /// server's permanent key, proving we know it.
    pub(crate) fn start(&mut self, out: &mut BytesMut) {
        let short = self.next_nonce();
        let cipher = SalsaBox::new(
            &PublicKey::from(self.server_key),
            &self.transient.secret_key(),
        );
        let hello_box = seal(&cipher, &nonce(b"CurveZMQHELLO---", &short), &[0u8; 64]);
        command::write_command(
            out,
            b"HELLO",
            &[
                &[1, 0],
                &[0u8; 72],
                &self.transient.public,
                &short,
                &hello_box,
            ],
        );
    }

    pub(crate) fn on_command(
        &mut self,
        name: &[u8],
        body: &Bytes,
        metadata: &[u8],
        out: &mut BytesMut,
    ) -> Result<Step, ProtocolError> {
        match (&self.state, name) {
            (ClientState::ExpectWelcome, b"WELCOME") => {
                self.on_welcome(body, metadata, out)?;
                self.state = ClientState::ExpectReady;
                Ok(Step::Continue)
            }
            (ClientState::ExpectReady, b"READY") => {
                let (meta, peer_nonce) = self.on_ready(body)?;
                let codec = CurveCodec {
                    cipher: self.session.take().ok_or_else(crypto_error)?,
                    send_prefix: b"CurveZMQMESSAGEC",
                    recv_prefix: b"CurveZMQMESSAGES",
                    nonce: self.nonce,
                    peer_nonce,
                };
                Ok(Step::Done(meta, Box::new(codec)))
            }
            _ => Err(ProtocolError::UnexpectedCommand {
                command: String::from_utf8_lossy(name).into_owned(),
            }),
        }
    }

    fn on_welcome(
        &mut self,
        body: &Bytes,
        metadata: &[u8],
        out: &mut BytesMut,
    ) -> Result<(), ProtocolError> {
        if body.len() != WELCOME_LEN {
            return Err(malformed("WELCOME"));
        }
        let long = &body[8..24];
        let cipher = SalsaBox::new(
            &PublicKey::from(self.server_key),
            &self.transient.secret_key(),
        );
        let plain =
            open(&cipher, &nonce(b"WELCOME-", long), &body[24..]).ok_or_else(crypto_error)?;
        let mut server_transient = [0u8; KEY_LEN];
        server_transient.copy_from_slice(&plain[..KEY_LEN]);
        let cookie = &plain[KEY_LEN..KEY_LEN + COOKIE_LEN];
        let server_transient = PublicKey::from(server_transient);

        // The vouch: C' and S boxed from our permanent key to S'.
        let vouch_nonce: [u8; 16] = random();
        let mut vouch_plain = [0u8; 64];
        vouch_plain[..32].copy_from_slice(&self.transient.public);
        vouch_plain[32..].copy_from_slice(&self.server_key);
        let vouch_cipher = SalsaBox::new(&server_transient, &self.permanent.secret_key());
        let vouch = seal(
            &vouch_cipher,
            &nonce(b"VOUCH---", &vouch_nonce),
            &vouch_plain,
        );

        let mut initiate_plain = Zeroizing::new(Vec::with_capacity(128 + metadata.len()));
        initiate_plain.extend_from_slice(&self.permanent.public);
        initiate_plain.extend_from_slice(&vouch_nonce);
        initiate_plain.extend_from_slice(&vouch);
        initiate_plain.extend_from_slice(metadata);
        let session = SalsaBox::new(&server_transient, &self.transient.secret_key());
        let short = self.next_nonce();
        let initiate_box = seal(
            &session,
            &nonce(b"CurveZMQINITIATE", &short),
            &initiate_plain,
        );
        command::write_command(out, b"INITIATE", &[cookie, &short, &initiate_box]);
        self.session = Some(session);
        Ok(())
    }

    fn on_ready(&mut self, body: &Bytes) -> Result<(Bytes, u64), ProtocolError> {
        if body.len() < READY_MIN {
            return Err(malformed("READY"));
        }
        let session = self.session.as_ref().ok_or_else(crypto_error)?;
        let short = &body[6..14];
        let plain = open(session, &nonce(b"CurveZMQREADY---", short), &body[14..])
            .ok_or_else(crypto_error)?;
        let mut be = [0u8; 8];
        be.copy_from_slice(short);
        Ok((Bytes::copy_from_slice(&plain), u64::from_be_bytes(be)))
    }
}

/// Server side of the handshake. Holds the connection's cookie key and
/// transient key pair only until the handshake is over.
pub(crate) struct CurveServer {
    permanent: KeyPair,
    transient: Option<KeyPair>,
    cookie_key: Zeroizing<[u8; 32]>,
    client_transient: Option<[u8; KEY_LEN]>,
    session: Option<SalsaBox>,
    /// Client metadata held while ZAP decides.
    pending_meta: Option<Bytes>,
    peer_nonce: u64,
    nonce: u64,
    state: ServerState,
}

#[derive(PartialEq, Eq)]
enum ServerState {
    ExpectHello,
    ExpectInitiate,
    WaitZap,
}

impl CurveServer {
    pub(crate) fn new(permanent: KeyPair) -> CurveServer {
        CurveServer {
            permanent,
            transient: None,
            cookie_key: Zeroizing::new(random()),
            client_transient: None,
            session: None,
            pending_meta: None,
            peer_nonce: 0,
            nonce: 1,
            state: ServerState::ExpectHello,
        }
    }

    pub(crate) fn on_command(
        &mut self,
        name: &[u8],
        body: &Bytes,
        out: &mut BytesMut,
    ) -> Result<Step, ProtocolError> {
        match (&self.state, name) {
            (ServerState::ExpectHello, b"HELLO") => {
                self.on_hello(body, out)?;
                self.state = ServerState::ExpectInitiate;
                Ok(Step::Continue)
            }
            (ServerState::ExpectInitiate, b"INITIATE") => {
                let (client_key, meta) = self.on_initiate(body)?;
                self.pending_meta = Some(meta);
                self.state = ServerState::WaitZap;
                Ok(Step::Zap(client_key))
            }
            _ => Err(ProtocolError::UnexpectedCommand {
                command: String::from_utf8_lossy(name).into_owned(),
            }),
        }
    }

    fn on_hello(&mut self, body: &Bytes, out: &mut BytesMut) -> Result<(), ProtocolError> {
        if body.len() != HELLO_LEN {
            return Err(malformed("HELLO"));
        }
        if body[6..8] != [1, 0] {
            return Err(malformed("HELLO"));
        }
        let mut client_transient = [0u8; KEY_LEN];
        client_transient.copy_from_slice(&body[80..112]);
        let short = &body[112..120];
        let cipher = SalsaBox::new(
            &PublicKey::from(client_transient),
            &self.permanent.secret_key(),
        );
        open(&cipher, &nonce(b"CurveZMQHELLO---", short), &body[120..200])
            .ok_or_else(crypto_error)?;

        let transient = KeyPair::from_secret(random());
        // Cookie: C' and s' under the connection's cookie key.
        let cookie_nonce: [u8; 16] = random();
        let mut cookie_plain = Zeroizing::new([0u8; 64]);
        cookie_plain[..32].copy_from_slice(&client_transient);
        cookie_plain[32..].copy_from_slice(transient.secret.as_ref());
        let cookie_cipher =
            XSalsa20Poly1305::new(GenericArray::from_slice(self.cookie_key.as_ref()));
        let mut cookie = BytesMut::with_capacity(COOKIE_LEN);
        cookie.put_slice(&cookie_nonce);
        seal_into(
            &cookie_cipher,
            &nonce(b"COOKIE--", &cookie_nonce),
            cookie_plain.as_ref(),
            &mut cookie,
        );

        let mut welcome_plain = Vec::with_capacity(128);
        welcome_plain.extend_from_slice(&transient.public);
        welcome_plain.extend_from_slice(&cookie);
        let welcome_nonce: [u8; 16] = random();
        let welcome_box = seal(&cipher, &nonce(b"WELCOME-", &welcome_nonce), &welcome_plain);
        command::write_command(out, b"WELCOME", &[&welcome_nonce, &welcome_box]);
        self.client_transient = Some(client_transient);
        self.transient = Some(transient);
        Ok(())
    }

    fn on_initiate(&mut self, body: &Bytes) -> Result<(Bytes, Bytes), ProtocolError> {
        if body.len() < INITIATE_MIN {
            return Err(malformed("INITIATE"));
        }
        let client_transient = self.client_transient.ok_or_else(crypto_error)?;
        let transient = self.transient.take().ok_or_else(crypto_error)?;
        let cookie = &body[9..9 + COOKIE_LEN];
        let cookie_cipher =
            XSalsa20Poly1305::new(GenericArray::from_slice(self.cookie_key.as_ref()));
        let cookie_plain = open(
            &cookie_cipher,
            &nonce(b"COOKIE--", &cookie[..16]),
            &cookie[16..],
        )
        .ok_or_else(crypto_error)?;
        if cookie_plain[..32] != client_transient || cookie_plain[32..64] != transient.secret[..] {
            return Err(crypto_error());
        }
        let short = &body[105..113];
        let session = SalsaBox::new(&PublicKey::from(client_transient), &transient.secret_key());
        let plain = open(&session, &nonce(b"CurveZMQINITIATE", short), &body[113..])
            .ok_or_else(crypto_error)?;
        let mut client_key = [0u8; KEY_LEN];
        client_key.copy_from_slice(&plain[..32]);
        let vouch_nonce = &plain[32..48];
        let vouch_cipher = SalsaBox::new(&PublicKey::from(client_key), &transient.secret_key());
        let vouch = open(
            &vouch_cipher,
            &nonce(b"VOUCH---", vouch_nonce),
            &plain[48..128],
        )
        .ok_or_else(crypto_error)?;
        if vouch[..32] != client_transient {
            return Err(crypto_error());
        }
        let mut be = [0u8; 8];
        be.copy_from_slice(short);
        self.peer_nonce = u64::from_be_bytes(be);
        self.session = Some(session);
        Ok((
            Bytes::copy_from_slice(&client_key),
            Bytes::copy_from_slice(&plain[128..]),
        ))
    }

    /// ZAP accepted the client: queues READY with our metadata and finishes.
    pub(crate) fn accept(
        &mut self,
        metadata: &[u8],
        out: &mut BytesMut,
    ) -> Result<Step, ProtocolError> {
        let session = self.session.take().ok_or_else(crypto_error)?;
        let short = self.nonce.to_be_bytes();
        self.nonce += 1;
        let ready_box = seal(&session, &nonce(b"CurveZMQREADY---", &short), metadata);
        command::write_command(out, b"READY", &[&short, &ready_box]);
        let meta = self.pending_meta.take().unwrap_or_default();
        let codec = CurveCodec {
            cipher: session,
            send_prefix: b"CurveZMQMESSAGES",
            recv_prefix: b"CurveZMQMESSAGEC",
            nonce: self.nonce,
            peer_nonce: self.peer_nonce,
        };
        Ok(Step::Done(meta, Box::new(codec)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_key_derivation_matches_rfc_26_test_vector() {
        // The example keys of the CurveZMQ reference ("Client public/secret").
        let secret = crate::z85::decode("D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs").unwrap();
        let public = crate::z85::decode("Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID").unwrap();
        let pair = KeyPair::from_secret(secret.try_into().unwrap());
        assert_eq!(pair.public.to_vec(), public);
    }

    #[test]
    fn message_boxes_round_trip_and_reject_replays() {
        let a = KeyPair::generate().unwrap();
        let b = KeyPair::generate().unwrap();
        let mut tx = CurveCodec {
            cipher: SalsaBox::new(&PublicKey::from(b.public), &a.secret_key()),
            send_prefix: b"CurveZMQMESSAGEC",
            recv_prefix: b"CurveZMQMESSAGES",
            nonce: 3,
            peer_nonce: 1,
        };
        let mut rx = CurveCodec {
            cipher: SalsaBox::new(&PublicKey::from(a.public), &b.secret_key()),
            send_prefix: b"CurveZMQMESSAGES",
            recv_prefix: b"CurveZMQMESSAGEC",
            nonce: 2,
            peer_nonce: 2,
        };
        let mut out = BytesMut::new();
        tx.write(&mut out, true, false, &[b"hello"]);
        // Short frame header: flags 0, size.
        assert_eq!(out[0], 0);
        let body = out.split_off(2).freeze();
        let (more, cmd, payload) = rx.read(&body).unwrap();
        assert!(more && !cmd);
        assert_eq!(&payload[..], b"hello");
        assert_eq!(rx.read(&body), Err(ProtocolError::InvalidSequence));
        let mut tampered = body.to_vec();
        tampered[8..16].copy_from_slice(&9u64.to_be_bytes());
        assert_eq!(
            rx.read(&Bytes::from(tampered)),
            Err(ProtocolError::Cryptographic)
        );
    }
}
