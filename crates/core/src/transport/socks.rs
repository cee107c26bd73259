//! SOCKS5 (RFC 1928, user/password RFC 1929) client side of a tcp connect through
//! `ZMQ_SOCKS_PROXY`, sans-IO: the connection writes `output()` and reads exactly
//! `wanted()` bytes at a time into `input()` (never more: what follows the proxy's last
//! reply is the peer's ZMTP greeting and belongs to the engine).
//!
//! The bytes are the ones libzmq 4.3.4 sends (observed with a logging proxy): one method
//! offered, no authentication (0), or user/password (2) when `ZMQ_SOCKS_USERNAME` is set;
//! CONNECT with the destination as an IPv4 or IPv6 address when it is one, else as a
//! domain name for the proxy to resolve.

use crate::error::{Error, Result};
use crate::options::Options;
use zeroize::Zeroizing;

/// The proxy's address from `ZMQ_SOCKS_PROXY` (`host:port`, an IPv6 address in
/// brackets), resolved as a tcp connect address, and the local address to connect from
/// when the value names one first (`source;host:port`, as a tcp endpoint, which libzmq
/// accepts here too).
pub(crate) fn proxy_addr(
    proxy: &[u8],
    opts: &Options,
) -> Result<(std::net::SocketAddr, Option<std::net::SocketAddr>)> {
    let proxy = std::str::from_utf8(proxy).map_err(|_| Error::InvalidArgument)?;
    let (source, proxy) = match proxy.rsplit_once(';') {
        Some((source, proxy)) => (Some(super::tcp::source_addr(source, opts)?), proxy),
        None => (None, proxy),
    };
    let (host, port) = super::split_host_port(proxy).ok_or(Error::InvalidArgument)?;
    Ok((super::tcp::connect_addr(host, port, opts)?, source))
}

/// Why the proxy did not connect us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SocksError {
    /// A reply that is not SOCKS5 (wrong version byte or address type).
    Protocol,
    /// The proxy accepted none of the methods offered (0xFF), or another one.
    NoMethod,
    /// The proxy refused the user name and password.
    AuthRefused,
    /// The proxy could not connect to the destination (its reply code).
    ConnectRefused(u8),
}

/// Where the client is in the exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for the method the proxy chose (2 bytes).
    Method,
    /// Waiting for the user/password verdict (2 bytes).
    Auth,
    /// Waiting for the CONNECT reply's head (4 bytes: version, code, reserved, type).
    ReplyHead,
    /// Waiting for the length of the bound address, a name (1 byte).
    ReplyNameLength,
    /// Waiting for the rest of the reply: the bound address and port.
    ReplyAddress,
    /// Connected through the proxy.
    Done,
}

/// One SOCKS5 CONNECT exchange.
pub(crate) struct SocksClient {
    state: State,
    /// What to write next (the user name and password at one point: wiped when replaced).
    out: Zeroizing<Vec<u8>>,
    out_pos: usize,
    /// Bytes of the current reply read so far, and how many it needs.
    reply: Vec<u8>,
    need: usize,
    request: Vec<u8>,
    auth: Option<Zeroizing<Vec<u8>>>,
}

impl SocksClient {
    /// An exchange to CONNECT to `host:port` (`host` an IP address or a name), with a
    /// user name and password if `user` is not empty.
    pub(crate) fn new(host: &str, port: u16, user: &[u8], password: &[u8]) -> SocksClient {
        let mut request = vec![5, 1, 0];
        match host.parse::<std::net::IpAddr>() {
            Ok(std::net::IpAddr::V4(a)) => {
                request.push(1);
                request.extend_from_slice(&a.octets());
            }
            Ok(std::net::IpAddr::V6(a)) => {
                request.push(4);
                request.extend_from_slice(&a.octets());
            }
            Err(_) => {
                // Names are at most 255 bytes in SOCKS5 (the endpoint parser allows no more).
                let name = &host.as_bytes()[..host.len().min(255)];
                request.push(3);
                request.push(name.len() as u8);
                request.extend_from_slice(name);
            }
        }
        request.extend_from_slice(&port.to_be_bytes());
        let auth = (!user.is_empty()).then(|| {
            let (u, p) = (
                &user[..user.len().min(255)],
                &password[..password.len().min(255)],
            );
            let mut a = Zeroizing::new(Vec::with_capacity(3 + u.len() + p.len()));
            a.extend_from_slice(&[1, u.len() as u8]);
            a.extend_from_slice(u);
            a.push(p.len() as u8);
            a.extend_from_slice(p);
            a
        });
        let method = if auth.is_some() { 2 } else { 0 };
        SocksClient {
            state: State::Method,
            out: Zeroizing::new(vec![5, 1, method]),
            out_pos: 0,
            reply: Vec::new(),
            need: 2,
            request,
            auth,
        }
    }

    /// Bytes to write to the proxy now (empty: wait for its reply).
    pub(crate) fn output(&self) -> &[u8] {
        &self.out[self.out_pos..]
    }

    /// `n` bytes of `output()` were written.
    pub(crate) fn consume_output(&mut self, n: usize) {
        self.out_pos = (self.out_pos + n).min(self.out.len());
    }

    /// How many bytes to read next (0 once done): the rest of the reply being waited for.
    pub(crate) fn wanted(&self) -> usize {
        if self.state == State::Done {
            0
        } else {
            self.need - self.reply.len()
        }
    }

    /// The exchange is over: the stream now carries the destination's bytes.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Takes bytes read from the proxy (at most `wanted()`).
    pub(crate) fn input(&mut self, bytes: &[u8]) -> std::result::Result<(), SocksError> {
        debug_assert!(bytes.len() <= self.wanted());
        self.reply.extend_from_slice(bytes);
        while self.state != State::Done && self.reply.len() == self.need {
            self.step()?;
        }
        Ok(())
    }

    /// Acts on a complete reply.
    fn step(&mut self) -> std::result::Result<(), SocksError> {
        let r = std::mem::take(&mut self.reply);
        match self.state {
            State::Method => {
                if r[0] != 5 {
                    return Err(SocksError::Protocol);
                }
                match (r[1], self.auth.take()) {
                    (0, None) => self.send(State::ReplyHead, 4, self.request.clone()),
                    (2, Some(mut auth)) => self.send(State::Auth, 2, std::mem::take(&mut *auth)),
                    _ => return Err(SocksError::NoMethod),
                }
            }
            State::Auth => {
                if r[1] != 0 {
                    return Err(SocksError::AuthRefused);
                }
                self.send(State::ReplyHead, 4, self.request.clone());
            }
            State::ReplyHead => {
                if r[0] != 5 {
                    return Err(SocksError::Protocol);
                }
                if r[1] != 0 {
                    return Err(SocksError::ConnectRefused(r[1]));
                }
                // The rest: the address the proxy bound, then a 2-byte port (a name's
                // length byte first).
                match r[3] {
                    1 => self.expect(State::ReplyAddress, 4 + 2),
                    4 => self.expect(State::ReplyAddress, 16 + 2),
                    3 => self.expect(State::ReplyNameLength, 1),
                    _ => return Err(SocksError::Protocol),
                }
            }
            State::ReplyNameLength => self.expect(State::ReplyAddress, usize::from(r[0]) + 2),
            State::ReplyAddress => self.state = State::Done,
            State::Done => {}
        }
        Ok(())
    }

    /// Queues `bytes` to write and waits for a reply of `need` bytes in `state`.
    fn send(&mut self, state: State, need: usize, bytes: Vec<u8>) {
        self.out = Zeroizing::new(bytes);
        self.out_pos = 0;
        self.expect(state, need);
    }

    /// Waits for `need` more bytes in `state`.
    fn expect(&mut self, state: State, need: usize) {
        self.state = state;
        self.need = need;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the client against scripted proxy replies, returning everything it wrote.
    fn exchange(
        c: &mut SocksClient,
        replies: &[&[u8]],
    ) -> std::result::Result<Vec<u8>, SocksError> {
        let mut written = Vec::new();
        let mut input: Vec<u8> = replies.concat();
        loop {
            let out = c.output().to_vec();
            written.extend_from_slice(&out);
            c.consume_output(out.len());
            if c.is_done() || input.is_empty() {
                return Ok(written);
            }
            // One byte at a time: replies may arrive in any pieces.
            let n = c.wanted().min(1);
            assert!(n > 0, "waiting for nothing");
            c.input(&input[..n])?;
            input.drain(..n);
        }
    }

    #[test]
    fn writes_what_libzmq_writes_and_reads_every_reply_form() {
        // libzmq 4.3.4 through a logging proxy: greeting 05 01 00, CONNECT 05 01 00 01
        // with an IPv4 address, 05 01 00 03 with a name.
        let mut c = SocksClient::new("127.0.0.1", 5701, b"", b"");
        let w = exchange(&mut c, &[&[5, 0], &[5, 0, 0, 1, 127, 0, 0, 1, 0, 9]]).unwrap();
        assert_eq!(w, [5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0x16, 0x45]);
        assert!(c.is_done() && c.wanted() == 0);

        let mut c = SocksClient::new("localhost", 80, b"", b"");
        let reply: &[u8] = &[5, 0, 0, 3, 4, b'h', b'o', b's', b't', 0, 80];
        let w = exchange(&mut c, &[&[5, 0], reply]).unwrap();
        assert_eq!(&w[3..], b"\x05\x01\x00\x03\x09localhost\x00\x50");
        assert!(c.is_done());

        let mut c = SocksClient::new("::1", 1, b"", b"");
        let mut reply = vec![5, 0, 0, 4];
        reply.extend_from_slice(&[0; 18]);
        let w = exchange(&mut c, &[&[5, 0], &reply]).unwrap();
        assert_eq!(w[6], 4);
        assert_eq!(w.len(), 3 + 4 + 16 + 2);
        assert!(c.is_done());
    }

    #[test]
    fn user_and_password_offer_that_method_only() {
        let mut c = SocksClient::new("10.0.0.1", 9, b"alice", b"secret");
        let w = exchange(&mut c, &[&[5, 2], &[1, 0], &[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]]).unwrap();
        assert_eq!(&w[..3], [5, 1, 2]);
        assert_eq!(&w[3..17], b"\x01\x05alice\x06secret");
        assert_eq!(&w[17..21], [5, 1, 0, 1]);
        assert!(c.is_done());
    }

    #[test]
    fn refusals_and_garbage_are_errors() {
        let refused = |user: &[u8], replies: &[&[u8]]| {
            let mut c = SocksClient::new("10.0.0.1", 9, user, b"pw");
            exchange(&mut c, replies).unwrap_err()
        };
        assert_eq!(refused(b"", &[&[5, 0xff]]), SocksError::NoMethod);
        assert_eq!(refused(b"", &[&[5, 2]]), SocksError::NoMethod);
        assert_eq!(refused(b"bob", &[&[5, 0]]), SocksError::NoMethod);
        assert_eq!(
            refused(b"bob", &[&[5, 2], &[1, 1]]),
            SocksError::AuthRefused
        );
        assert_eq!(refused(b"", &[&[4, 0]]), SocksError::Protocol);
        assert_eq!(
            refused(b"", &[&[5, 0], &[5, 5, 0, 1]]),
            SocksError::ConnectRefused(5)
        );
        assert_eq!(
            refused(b"", &[&[5, 0], &[5, 0, 0, 9]]),
            SocksError::Protocol
        );
    }
}
