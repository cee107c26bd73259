//! Who may connect to a socket's listeners: ipc peer credentials (`ZMQ_IPC_FILTER_*`)
//! and tcp address masks (`ZMQ_TCP_ACCEPT_FILTER`), parsed and matched as libzmq 4.3.4
//! does (observed with it; the C programs `tests/c/test_ipc_filters.c` and
//! `test_tcp_accept_filter.c` check both libraries). A refused peer is closed at accept.

use crate::error::{Error, Result};
use crate::options::{id, int_value};

/// Who may connect to an ipc endpoint this socket binds (`ZMQ_IPC_FILTER_UID`, `_GID`,
/// `_PID`, each a list; see `transport::ipc::peer_allowed`). Empty lists: everyone.
#[derive(Clone, Debug, Default)]
pub(crate) struct IpcFilters {
    pub(crate) uids: Vec<u32>,
    pub(crate) gids: Vec<u32>,
    pub(crate) pids: Vec<i32>,
}

impl IpcFilters {
    /// No filter set: every peer is accepted.
    pub(crate) fn is_empty(&self) -> bool {
        self.uids.is_empty() && self.gids.is_empty() && self.pids.is_empty()
    }

    /// libzmq's setter: an int adds an id to the option's list, no value (NULL, 0)
    /// empties it, anything else is EINVAL. Ids are taken as the C types would
    /// (`uid_t`/`gid_t` are unsigned: -1 is 4294967295).
    pub(crate) fn set(&mut self, opt: i32, val: &[u8]) -> Result<()> {
        fn add<T: PartialEq>(list: &mut Vec<T>, v: Option<T>) {
            match v {
                None => list.clear(),
                Some(v) if !list.contains(&v) => list.push(v),
                Some(_) => {}
            }
        }
        let v = if val.is_empty() {
            None
        } else {
            Some(int_value(val)?)
        };
        match opt {
            id::IPC_FILTER_UID => add(&mut self.uids, v.map(|v| v as u32)),
            id::IPC_FILTER_GID => add(&mut self.gids, v.map(|v| v as u32)),
            _ => add(&mut self.pids, v),
        }
        Ok(())
    }
}

/// One `ZMQ_TCP_ACCEPT_FILTER` entry: an address prefix a tcp peer may connect from,
/// held as libzmq resolves it: in IPv6 form (IPv4 as `::ffff:a.b.c.d`) with the prefix
/// length in IPv6 bits. Without ZMQ_IPV6 an IPv4 mask counts IPv4 bits (`/8` is 104
/// here); with it, libzmq takes the IPv4 address as mapped and the mask as IPv6 bits
/// (`10.0.0.0/8` then matches every IPv4 peer: observed with libzmq 4.3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TcpAcceptMask {
    addr: [u8; 16],
    bits: u8,
}

impl TcpAcceptMask {
    /// Parses `address[/bits]` as libzmq accepts it (a numeric address, nothing around
    /// it; an IPv6 one only with ZMQ_IPV6 unless it is IPv4-mapped).
    pub(crate) fn parse(val: &[u8], ipv6: bool) -> Result<TcpAcceptMask> {
        let text = std::str::from_utf8(val).map_err(|_| Error::InvalidArgument)?;
        let (addr, bits) = match text.split_once('/') {
            Some((a, b)) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => (
                a,
                Some(b.parse::<u8>().map_err(|_| Error::InvalidArgument)?),
            ),
            Some(_) => return Err(Error::InvalidArgument),
            None => (text, None),
        };
        let ip: std::net::IpAddr = addr.parse().map_err(|_| Error::InvalidArgument)?;
        let (v6, max, offset) = match ip {
            std::net::IpAddr::V4(v4) if ipv6 => (v4.to_ipv6_mapped(), 128, 0),
            std::net::IpAddr::V4(v4) => (v4.to_ipv6_mapped(), 32, 96),
            std::net::IpAddr::V6(v6) if ipv6 || v6.to_ipv4_mapped().is_some() => (v6, 128, 0),
            std::net::IpAddr::V6(_) => return Err(Error::InvalidArgument),
        };
        let bits = bits.unwrap_or(max);
        if bits > max {
            return Err(Error::InvalidArgument);
        }
        Ok(TcpAcceptMask {
            addr: v6.octets(),
            bits: offset + bits,
        })
    }

    /// Whether `peer` (IPv4 taken as mapped) is inside this prefix.
    pub(crate) fn matches(&self, peer: std::net::IpAddr) -> bool {
        let p = match peer {
            std::net::IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            std::net::IpAddr::V6(v6) => v6.octets(),
        };
        let (whole, rest) = (usize::from(self.bits / 8), self.bits % 8);
        p[..whole] == self.addr[..whole]
            && (rest == 0 || (p[whole] ^ self.addr[whole]) >> (8 - rest) == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn mask(text: &str, ipv6: bool) -> Result<TcpAcceptMask> {
        TcpAcceptMask::parse(text.as_bytes(), ipv6)
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn masks_parse_as_libzmq_accepts_them() {
        for ok in [
            "127.0.0.1",
            "127.0.0.1/32",
            "127.0.0.1/0",
            "10.1.2.3/8",
            "::ffff:127.0.0.1",
        ] {
            assert!(mask(ok, false).is_ok(), "{ok}");
        }
        for bad in [
            "127.0.0.1/33",
            "127.0.0.1/",
            "127.0.0.1/x",
            "::1",
            "::1/128",
            "localhost",
            "*",
            "",
            " 127.0.0.1",
            "127.0.0.1 ",
            "256.1.1.1",
        ] {
            assert_eq!(mask(bad, false), Err(Error::InvalidArgument), "{bad}");
        }
        // With ZMQ_IPV6 an IPv4 mask counts IPv6 bits, and IPv6 addresses are allowed.
        for ok in ["127.0.0.1/33", "::1", "::1/128"] {
            assert!(mask(ok, true).is_ok(), "{ok}");
        }
        assert_eq!(mask("::1/129", true), Err(Error::InvalidArgument));
    }

    #[test]
    fn masks_match_as_libzmq_matches_them() {
        let lo = ip("127.0.0.1");
        let cases = [
            ("127.0.0.1", false, true),
            ("127.0.0.2", false, false),
            ("127.0.0.0/8", false, true),
            ("128.0.0.0/1", false, false),
            ("0.0.0.0/0", false, true),
            ("127.0.0.2/31", false, false),
            ("127.0.0.2/30", false, true),
            ("::ffff:127.0.0.1", false, true),
            ("127.0.0.1", true, true),
            // libzmq 4.3.4: with ZMQ_IPV6 the mask counts bits of the mapped address.
            ("10.0.0.0/8", true, true),
            ("10.0.0.0/104", true, false),
            ("127.0.0.0/104", true, true),
            ("::1/96", true, false),
        ];
        for (text, ipv6, expected) in cases {
            assert_eq!(
                mask(text, ipv6).unwrap().matches(lo),
                expected,
                "{text} ipv6={ipv6}"
            );
        }
        assert!(mask("::1", true).unwrap().matches(ip("::1")));
        assert!(!mask("::2", true).unwrap().matches(ip("::1")));
        // A peer on a dual-stack listener arrives IPv4-mapped.
        assert!(mask("127.0.0.1", true)
            .unwrap()
            .matches(ip("::ffff:127.0.0.1")));
    }

    #[test]
    fn ipc_filter_lists_add_up_and_empty_on_no_value() {
        let mut f = IpcFilters::default();
        assert!(f.is_empty());
        f.set(id::IPC_FILTER_UID, &(-1i32).to_ne_bytes()).unwrap();
        f.set(id::IPC_FILTER_UID, &7i32.to_ne_bytes()).unwrap();
        f.set(id::IPC_FILTER_UID, &7i32.to_ne_bytes()).unwrap();
        assert_eq!(f.uids, [u32::MAX, 7]);
        f.set(id::IPC_FILTER_PID, &42i32.to_ne_bytes()).unwrap();
        assert_eq!(
            f.set(id::IPC_FILTER_GID, &[1, 2]),
            Err(Error::InvalidArgument)
        );
        f.set(id::IPC_FILTER_UID, &[]).unwrap();
        assert!(f.uids.is_empty() && !f.is_empty());
        f.set(id::IPC_FILTER_PID, &[]).unwrap();
        assert!(f.is_empty());
    }
}
