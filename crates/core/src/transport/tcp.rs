//! tcp: address resolution for bind and connect, and socket tuning options.

use super::cvt;
use crate::error::{Error, Result};
use crate::options::{Options, TcpAcceptMask};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV6, ToSocketAddrs};
use std::os::fd::AsRawFd;

/// The address to bind for `host:port` (`*` = any interface, port `*`/0 = ephemeral).
pub(crate) fn bind_addr(host: &str, port: &str, opts: &Options) -> Result<SocketAddr> {
    // The host first, as libzmq: `tcp://name:12a` is ENODEV there, not EINVAL.
    let mut addr = bind_host(host, opts)?;
    addr.set_port(bind_port(port)?);
    Ok(addr)
}

/// A bind's port: `*` (or 0) for an ephemeral one, else a number. Stricter than libzmq
/// 4.3.4, which reads it with C's `atoi` cut to 16 bits (`-1` binds 65535, `5x` 5,
/// `99999` 34463): a port that is not one is EINVAL here (docs/SECURITY.md).
fn bind_port(port: &str) -> Result<u16> {
    if port == "*" {
        return Ok(0);
    }
    port.parse().map_err(|_| Error::InvalidArgument)
}

/// The local address (port 0) a bind's host names: `*` (any), an address (IPv6 with an
/// optional `%scope`), `localhost`, or an interface's name. With ZMQ_IPV6 every address is
/// IPv6, as in libzmq: an IPv4 one becomes IPv4-mapped (`::ffff:a.b.c.d`, an IPv6 socket
/// that takes IPv4 peers and reports them mapped) and an interface gives its first IPv6
/// address (`lo`: `::1`). Without it an IPv6 address is refused (ENODEV), but a mapped
/// one binds its IPv4 address.
fn bind_host(host: &str, opts: &Options) -> Result<SocketAddr> {
    let ip = if host == "*" {
        if opts.ipv6 {
            IpAddr::V6(Ipv6Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        }
    } else if let Some(addr) = literal_addr(host, opts) {
        return addr.ok_or(Error::NoDevice);
    } else if host == "localhost" || (host == "lo" && !opts.ipv6) {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        return interface_addr(host, opts.ipv6).ok_or(Error::NoDevice);
    };
    Ok(family_for(SocketAddr::new(ip, 0), opts))
}

/// `host` as a numeric address in the family ZMQ_IPV6 gives it (see `family_for`), or
/// `Some(None)` for an IPv6 address without ZMQ_IPV6 (libzmq never reaches one then);
/// `None` if it is not an address.
fn literal_addr(host: &str, opts: &Options) -> Option<Option<SocketAddr>> {
    let addr = match host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, 0),
        Err(_) => SocketAddr::V6(scoped_addr(host)?),
    };
    let addr = family_for(addr, opts);
    Some(Some(addr).filter(|a| a.is_ipv4() || opts.ipv6))
}

/// An IPv6 address with a zone (`fe80::1%eth0`, or `%2` by index).
fn scoped_addr(host: &str) -> Option<SocketAddrV6> {
    let (ip, zone) = host.split_once('%')?;
    let ip: Ipv6Addr = ip.parse().ok()?;
    let scope = match zone.parse::<u32>() {
        Ok(index) => index,
        Err(_) => {
            let name = std::ffi::CString::new(zone).ok()?;
            // SAFETY: `name` is a NUL-terminated string that outlives the call.
            match unsafe { libc::if_nametoindex(name.as_ptr()) } {
                0 => return None,
                index => index,
            }
        }
    };
    Some(SocketAddrV6::new(ip, 0, 0, scope))
}

/// `addr` in the family libzmq would use: with ZMQ_IPV6 an IPv4 address becomes
/// IPv4-mapped IPv6 (libzmq resolves with AF_INET6 and AI_V4MAPPED); without it an
/// IPv4-mapped address becomes plain IPv4.
fn family_for(addr: SocketAddr, opts: &Options) -> SocketAddr {
    match addr {
        SocketAddr::V4(a) if opts.ipv6 => {
            SocketAddr::new(IpAddr::V6(a.ip().to_ipv6_mapped()), a.port())
        }
        SocketAddr::V6(a) if !opts.ipv6 => match a.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), a.port()),
            None => addr,
        },
        _ => addr,
    }
}

/// The first address of a network interface (port 0), by name: IPv6 (with its scope, for
/// a link-local one) if `ipv6`, else IPv4, as libzmq picks.
fn interface_addr(name: &str, ipv6: bool) -> Option<SocketAddr> {
    let mut ifap: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills ifap with a list we free below; we only read it.
    if unsafe { libc::getifaddrs(&mut ifap) } != 0 {
        return None;
    }
    let want = if ipv6 { libc::AF_INET6 } else { libc::AF_INET };
    let mut found = None;
    let mut cur = ifap;
    while !cur.is_null() {
        // SAFETY: cur is a node of the list getifaddrs returned, valid until freeifaddrs.
        let ifa = unsafe { &*cur };
        if !ifa.ifa_addr.is_null() && !ifa.ifa_name.is_null() {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let n = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
            // SAFETY: ifa_addr is non-null and points to a sockaddr of at least family size.
            let family = unsafe { (*ifa.ifa_addr).sa_family } as i32;
            if n.to_bytes() == name.as_bytes() && family == want {
                found = Some(if ipv6 {
                    // SAFETY: the family is AF_INET6, so the address is a sockaddr_in6.
                    let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                    let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                    SocketAddr::V6(SocketAddrV6::new(ip, 0, 0, sin6.sin6_scope_id))
                } else {
                    // SAFETY: the family is AF_INET, so the address is a sockaddr_in.
                    let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                    let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                    SocketAddr::new(IpAddr::V4(ip), 0)
                });
                break;
            }
        }
        cur = ifa.ifa_next;
    }
    // SAFETY: ifap came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(ifap) };
    found
}

/// The endpoint a bind to numeric `host:port` reports (ZMQ_LAST_ENDPOINT), in the family
/// ZMQ_IPV6 gives it; None for a name, `*` or a port that is not a number. libzmq's unbind
/// resolves its argument so (probed: with ZMQ_IPV6, `tcp://127.0.0.1:P` unbinds
/// `tcp://[::ffff:127.0.0.1]:P`, but `tcp://lo:P` names nothing).
pub(crate) fn bound_name(host: &str, port: &str, opts: &Options) -> Option<String> {
    let mut addr = literal_addr(host, opts)??;
    addr.set_port(bind_port(port).ok()?);
    Some(endpoint_string(&addr))
}

/// libzmq's quick syntax check of a tcp connect address (before any name lookup): starts
/// with an alphanumeric, `[` or `:`; then only alphanumerics and `.-:%;[]_*`; the part
/// after the last `:` starts with a digit (`1]`, `12a` and `99999` pass: libzmq takes
/// them and retries the connect, which never resolves).
pub(crate) fn plausible_connect_address(addr: &str) -> bool {
    let b = addr.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    if !(first.is_ascii_alphanumeric() || first == b'[' || first == b':') {
        return false;
    }
    if !b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || b".-:%;[]_*".contains(c))
    {
        return false;
    }
    addr.rsplit_once(':')
        .is_some_and(|(_, port)| port.bytes().next().is_some_and(|c| c.is_ascii_digit()))
}

/// Resolves a connect address (DNS allowed).
pub(crate) fn connect_addr(host: &str, port: &str, opts: &Options) -> Result<SocketAddr> {
    let port: u16 = port.parse().map_err(|_| Error::InvalidArgument)?;
    if port == 0 {
        return Err(Error::InvalidArgument);
    }
    if host == "*" {
        return Err(Error::InvalidArgument);
    }
    if let Some(addr) = literal_addr(host, opts) {
        // An IPv6 address without ZMQ_IPV6: libzmq accepts the connect but never reaches
        // the peer.
        let mut addr = addr.ok_or(Error::AddressNotAvailable)?;
        addr.set_port(port);
        return Ok(addr);
    }
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|_| Error::InvalidArgument)?;
    // libzmq asks for one family: IPv4 without ZMQ_IPV6; with it IPv6, and only if the
    // name has none, its IPv4 addresses mapped.
    let mut fallback = None;
    for a in addrs {
        if a.is_ipv6() == opts.ipv6 {
            return Ok(a);
        }
        if opts.ipv6 {
            fallback.get_or_insert(family_for(a, opts));
        }
    }
    fallback.ok_or(Error::InvalidArgument)
}

/// Applies TCP_NODELAY, buffer sizes, TOS and keepalive options to a connected socket.
pub(crate) fn tune(stream: &impl AsRawFd, opts: &Options) {
    let fd = stream.as_raw_fd();
    let set = |level: i32, name: i32, val: i32| super::set_int_option(fd, level, name, val);
    set(libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    if opts.sndbuf >= 0 {
        set(libc::SOL_SOCKET, libc::SO_SNDBUF, opts.sndbuf);
    }
    if opts.rcvbuf >= 0 {
        set(libc::SOL_SOCKET, libc::SO_RCVBUF, opts.rcvbuf);
    }
    if opts.tos > 0 {
        set(libc::IPPROTO_IP, libc::IP_TOS, opts.tos);
    }
    if opts.tcp_keepalive >= 0 {
        set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, opts.tcp_keepalive);
        if opts.tcp_keepalive == 1 {
            if opts.tcp_keepalive_cnt > 0 {
                set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, opts.tcp_keepalive_cnt);
            }
            if opts.tcp_keepalive_idle > 0 {
                set(
                    libc::IPPROTO_TCP,
                    libc::TCP_KEEPIDLE,
                    opts.tcp_keepalive_idle,
                );
            }
            if opts.tcp_keepalive_intvl > 0 {
                set(
                    libc::IPPROTO_TCP,
                    libc::TCP_KEEPINTVL,
                    opts.tcp_keepalive_intvl,
                );
            }
        }
    }
    if opts.tcp_maxrt > 0 {
        set(libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, opts.tcp_maxrt);
    }
}

/// Whether an accepted connection passes the listener's `ZMQ_TCP_ACCEPT_FILTER` masks:
/// with none every peer does; else its address must be inside one of them.
pub(crate) fn peer_allowed(stream: &mio::net::TcpStream, masks: &[TcpAcceptMask]) -> bool {
    masks.is_empty()
        || stream
            .peer_addr()
            .is_ok_and(|a| masks.iter().any(|m| m.matches(a.ip())))
}

/// A listening socket for `addr`. With ZMQ_BINDTODEVICE it is bound to that network
/// device before it binds (libzmq's order: a device that does not exist fails the bind
/// with ENODEV) and only takes connections that come in through it. An IPv6 listener takes
/// IPv4 peers too (see `device_socket`).
pub(crate) fn listen(addr: SocketAddr, opts: &Options) -> std::io::Result<std::net::TcpListener> {
    if opts.bindtodevice.is_empty() && addr.is_ipv4() {
        return std::net::TcpListener::bind(addr);
    }
    let fd = device_socket(&addr, &opts.bindtodevice)?;
    super::set_int_option(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1);
    // SAFETY: `fd` is an open socket; the address is valid for the length passed.
    with_sockaddr(&addr, |sa, len| {
        cvt(unsafe { libc::bind(fd.as_raw_fd(), sa, len) })
    })?;
    // SAFETY: `fd` is an open, bound socket.
    cvt(unsafe { libc::listen(fd.as_raw_fd(), opts.backlog.max(1)) })?;
    Ok(std::net::TcpListener::from(fd))
}

/// The local address of a connect's `source;` part (`host:port`, port `*` or 0 for any;
/// host an address, `*` or an interface name, as for a bind).
pub(crate) fn source_addr(source: &str, opts: &Options) -> Result<SocketAddr> {
    let (host, port) = super::split_host_port(source).ok_or(Error::InvalidArgument)?;
    bind_addr(host, port, opts)
}

/// Starts a non-blocking connect to `addr` (it completes when the socket turns
/// writable), from `source` if given (bound first, as libzmq does, with SO_REUSEADDR).
/// With ZMQ_BINDTODEVICE the socket is bound to that device first, so it reaches `addr`
/// only through it; a device that does not exist fails this attempt (the caller retries
/// after the reconnect interval, as libzmq does). An IPv6 socket carries IPv4 too (see
/// `device_socket`): with ZMQ_IPV6 an IPv4 peer is reached at its mapped address.
pub(crate) fn connect(
    addr: SocketAddr,
    source: Option<SocketAddr>,
    opts: &Options,
) -> std::io::Result<mio::net::TcpStream> {
    if opts.bindtodevice.is_empty() && source.is_none() && addr.is_ipv4() {
        return mio::net::TcpStream::connect(addr);
    }
    let fd = device_socket(&addr, &opts.bindtodevice)?;
    if let Some(src) = source {
        super::set_int_option(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1);
        // SAFETY: `fd` is an open socket; the address is valid for the length passed.
        with_sockaddr(&src, |sa, len| {
            cvt(unsafe { libc::bind(fd.as_raw_fd(), sa, len) })
        })?;
    }
    // SAFETY: `fd` is an open socket; the address is valid for the length passed.
    match with_sockaddr(&addr, |sa, len| {
        cvt(unsafe { libc::connect(fd.as_raw_fd(), sa, len) })
    }) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(mio::net::TcpStream::from_std(std::net::TcpStream::from(fd)))
}

/// A non-blocking tcp socket of `addr`'s family, bound to the network device `device`
/// unless that is empty. An IPv6 one also carries IPv4 (IPV6_V6ONLY off, as libzmq sets
/// it whatever the system's default), which an IPv4-mapped address needs.
fn device_socket(addr: &SocketAddr, device: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    let fd = super::stream_socket(if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    })?;
    if addr.is_ipv6() {
        super::set_int_option(fd.as_raw_fd(), libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 0);
    }
    if device.is_empty() {
        return Ok(fd);
    }
    // SAFETY: `fd` is an open socket; the name is `device.len()` readable bytes (the
    // kernel takes a name without its NUL when given its length).
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_BINDTODEVICE,
            device.as_ptr() as *const libc::c_void,
            device.len() as libc::socklen_t,
        )
    })?;
    Ok(fd)
}

/// Calls `f` with `addr` as a C socket address and its length.
fn with_sockaddr<R>(
    addr: &SocketAddr,
    f: impl FnOnce(*const libc::sockaddr, libc::socklen_t) -> R,
) -> R {
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            let len = std::mem::size_of_val(&sin) as libc::socklen_t;
            f(
                &sin as *const libc::sockaddr_in as *const libc::sockaddr,
                len,
            )
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            let len = std::mem::size_of_val(&sin6) as libc::socklen_t;
            f(
                &sin6 as *const libc::sockaddr_in6 as *const libc::sockaddr,
                len,
            )
        }
    }
}

/// A syscall's -1 as the errno it left.
/// The endpoint string libzmq reports for a bound or connected address (an IPv6 zone by
/// its interface's name: `tcp://[fe80::1%eth0]:5555`).
pub(crate) fn endpoint_string(addr: &SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("tcp://{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) if a.scope_id() != 0 => {
            let mut name = [0 as libc::c_char; libc::IF_NAMESIZE];
            // SAFETY: `name` has room for IF_NAMESIZE bytes, as if_indextoname needs.
            let got = unsafe { libc::if_indextoname(a.scope_id(), name.as_mut_ptr()) };
            let zone = if got.is_null() {
                a.scope_id().to_string()
            } else {
                // SAFETY: on success `name` holds a NUL-terminated interface name.
                let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
                name.to_string_lossy().into_owned()
            };
            format!("tcp://[{}%{}]:{}", a.ip(), zone, a.port())
        }
        SocketAddr::V6(a) => format!("tcp://[{}]:{}", a.ip(), a.port()),
    }
}

#[cfg(test)]
mod tests {
    use super::plausible_connect_address as ok;

    #[test]
    fn zmq_ipv6_decides_the_family_of_a_bind_as_in_libzmq() {
        use super::{bind_host, Options};
        use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
        let v4 = |ip: Ipv4Addr| Some(SocketAddr::new(ip.into(), 0));
        let v6 = |ip: Ipv6Addr| Some(SocketAddr::new(ip.into(), 0));
        let mut opts = Options::default();
        let mapped = "::ffff:127.0.0.1";
        assert_eq!(bind_host(mapped, &opts).ok(), v4(Ipv4Addr::LOCALHOST));
        assert_eq!(bind_host("127.0.0.1", &opts).ok(), v4(Ipv4Addr::LOCALHOST));
        assert_eq!(bind_host("lo", &opts).ok(), v4(Ipv4Addr::LOCALHOST));
        assert!(bind_host("::1", &opts).is_err(), "IPv6 needs ZMQ_IPV6");
        opts.ipv6 = true;
        let mapped_lo = v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped());
        assert_eq!(bind_host(mapped, &opts).ok(), mapped_lo);
        assert_eq!(bind_host("127.0.0.1", &opts).ok(), mapped_lo);
        assert_eq!(bind_host("localhost", &opts).ok(), mapped_lo);
        assert_eq!(
            bind_host("0.0.0.0", &opts).ok(),
            v6(Ipv4Addr::UNSPECIFIED.to_ipv6_mapped())
        );
        assert_eq!(bind_host("::1", &opts).ok(), v6(Ipv6Addr::LOCALHOST));
        assert_eq!(bind_host("lo", &opts).ok(), v6(Ipv6Addr::LOCALHOST));
        assert_eq!(bind_host("*", &opts).ok(), v6(Ipv6Addr::UNSPECIFIED));
    }

    #[test]
    fn a_zone_names_the_interface_of_an_ipv6_address() {
        use super::{bind_host, endpoint_string, Options};
        let opts = Options {
            ipv6: true,
            ..Options::default()
        };
        let a = bind_host("fe80::1%lo", &opts).expect("lo exists");
        let std::net::SocketAddr::V6(v6) = a else {
            panic!("{a} is not IPv6")
        };
        assert_ne!(v6.scope_id(), 0);
        assert_eq!(endpoint_string(&a), "tcp://[fe80::1%lo]:0");
        assert_eq!(
            bind_host(&format!("fe80::1%{}", v6.scope_id()), &opts).ok(),
            Some(a)
        );
        assert!(bind_host("fe80::1%nosuchif0", &opts).is_err());
    }

    #[test]
    fn zmq_ipv6_decides_the_family_of_a_connect_as_in_libzmq() {
        use super::{connect_addr, Options};
        use std::net::{Ipv4Addr, SocketAddr};
        let mut opts = Options::default();
        let plain = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 5555);
        let mapped = SocketAddr::new(Ipv4Addr::LOCALHOST.to_ipv6_mapped().into(), 5555);
        assert_eq!(
            connect_addr("::ffff:127.0.0.1", "5555", &opts).ok(),
            Some(plain)
        );
        assert_eq!(connect_addr("127.0.0.1", "5555", &opts).ok(), Some(plain));
        opts.ipv6 = true;
        assert_eq!(connect_addr("127.0.0.1", "5555", &opts).ok(), Some(mapped));
        assert_eq!(
            connect_addr("::ffff:127.0.0.1", "5555", &opts).ok(),
            Some(mapped)
        );
    }

    #[test]
    fn connect_address_syntax_matches_libzmq() {
        assert!(ok("127.0.0.1:5555"));
        assert!(ok("localhost:1"));
        assert!(ok("[::1]:5555"));
        assert!(ok("eth0;192.168.0.1:80"));
        assert!(ok("my-host_1.example:80"));
        assert!(!ok("in val id:1234"));
        assert!(!ok("bad!host:1234"));
        assert!(!ok("-host:1"));
        assert!(!ok("host:"));
        assert!(!ok("host:*"));
        assert!(!ok("host:-1"));
        assert!(!ok("*:5555"));
        assert!(!ok(""));
        // Passed by libzmq 4.3.4 too (probed), then never connected.
        assert!(ok("host:12a"));
        assert!(ok("[::1]"));
        assert!(ok(":5555"));
        assert!(ok("127.0.0.1:0"));
        assert!(ok("127.0.0.1:65536"));
        assert!(ok("eth0;:1"));
    }
}
