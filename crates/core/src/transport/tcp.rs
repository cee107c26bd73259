//! tcp: address resolution for bind and connect, and socket tuning options.

use super::cvt;
use crate::error::{Error, Result};
use crate::options::{Options, TcpAcceptMask};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;

/// The address to bind for `host:port` (`*` = any interface, port `*`/0 = ephemeral).
pub(crate) fn bind_addr(host: &str, port: &str, opts: &Options) -> Result<SocketAddr> {
    // The host first, as libzmq: `tcp://name:12a` is ENODEV there, not EINVAL.
    let ip = bind_ip(host, opts)?;
    let port: u16 = if port == "*" {
        0
    } else {
        port.parse().map_err(|_| Error::InvalidArgument)?
    };
    Ok(SocketAddr::new(ip, port))
}

/// The local address a bind's host names: `*` (any), an address, `localhost`/`lo`, or an
/// interface's name.
fn bind_ip(host: &str, opts: &Options) -> Result<IpAddr> {
    let ip = if host == "*" {
        if opts.ipv6 {
            IpAddr::V6(Ipv6Addr::UNSPECIFIED)
        } else {
            IpAddr::V4(Ipv4Addr::UNSPECIFIED)
        }
    } else if let Ok(ip) = host.parse::<IpAddr>() {
        ip
    } else if host == "localhost" || host == "lo" {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        interface_addr(host).ok_or(Error::NoDevice)?
    };
    if let IpAddr::V6(v6) = ip {
        if let Some(v4) = v6.to_ipv4_mapped().filter(|_| !opts.ipv6) {
            // An IPv4 address written as IPv6 (`[::ffff:a.b.c.d]`): without ZMQ_IPV6
            // libzmq binds the IPv4 address.
            return Ok(IpAddr::V4(v4));
        }
    }
    if ip.is_ipv6() && !opts.ipv6 && host != "*" {
        // libzmq refuses IPv6 literals unless ZMQ_IPV6 is set.
        return Err(Error::NoDevice);
    }
    Ok(ip)
}

/// The first IPv4 address of a network interface, by name.
fn interface_addr(name: &str) -> Option<IpAddr> {
    let mut ifap: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills ifap with a list we free below; we only read it.
    if unsafe { libc::getifaddrs(&mut ifap) } != 0 {
        return None;
    }
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
            if n.to_bytes() == name.as_bytes() && family == libc::AF_INET {
                // SAFETY: the family is AF_INET, so the address is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                found = Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                    sin.sin_addr.s_addr,
                ))));
                break;
            }
        }
        cur = ifa.ifa_next;
    }
    // SAFETY: ifap came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(ifap) };
    found
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
    if let Ok(ip) = host.parse::<IpAddr>() {
        if ip.is_ipv6() && !opts.ipv6 {
            // libzmq accepts the connect but never reaches an IPv6 peer without ZMQ_IPV6.
            return Err(Error::AddressNotAvailable);
        }
        return Ok(SocketAddr::new(ip, port));
    }
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|_| Error::InvalidArgument)?;
    let mut fallback = None;
    for a in addrs {
        if a.is_ipv4() {
            return Ok(a);
        }
        if opts.ipv6 {
            fallback.get_or_insert(a);
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
/// with ENODEV) and only takes connections that come in through it.
pub(crate) fn listen(addr: SocketAddr, opts: &Options) -> std::io::Result<std::net::TcpListener> {
    if opts.bindtodevice.is_empty() {
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
/// after the reconnect interval, as libzmq does).
pub(crate) fn connect(
    addr: SocketAddr,
    source: Option<SocketAddr>,
    opts: &Options,
) -> std::io::Result<mio::net::TcpStream> {
    if opts.bindtodevice.is_empty() && source.is_none() {
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
/// unless that is empty.
fn device_socket(addr: &SocketAddr, device: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    let fd = super::stream_socket(if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    })?;
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
/// The endpoint string libzmq reports for a bound or connected address.
pub(crate) fn endpoint_string(addr: &SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("tcp://{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("tcp://[{}]:{}", a.ip(), a.port()),
    }
}

#[cfg(test)]
mod tests {
    use super::plausible_connect_address as ok;

    #[test]
    fn a_mapped_ipv4_bind_is_ipv4_without_zmq_ipv6() {
        use super::{bind_ip, Options};
        use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
        let mut opts = Options::default();
        let mapped = "::ffff:127.0.0.1";
        assert_eq!(
            bind_ip(mapped, &opts).ok(),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
        assert!(bind_ip("::1", &opts).is_err(), "IPv6 needs ZMQ_IPV6");
        opts.ipv6 = true;
        assert_eq!(
            bind_ip(mapped, &opts).ok(),
            Some(IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped()))
        );
        assert_eq!(
            bind_ip("::1", &opts).ok(),
            Some(IpAddr::V6(Ipv6Addr::LOCALHOST))
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
