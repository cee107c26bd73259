//! Socket options: defaults, validation and the behaviour each option controls, checked
//! against what libzmq 4.3.4 does for the same calls (observed with the real library).

use ferromq::{event, Context, Error, OptionValue, Socket, SocketType, DONTWAIT, SNDMORE};
use std::io::Write;
use std::time::{Duration, Instant};

mod common;
use common::*;

mod opt {
    pub const AFFINITY: i32 = 4;
    pub const ROUTING_ID: i32 = 5;
    pub const SUBSCRIBE: i32 = 6;
    pub const UNSUBSCRIBE: i32 = 7;
    pub const RATE: i32 = 8;
    pub const RECOVERY_IVL: i32 = 9;
    pub const SNDBUF: i32 = 11;
    pub const RCVBUF: i32 = 12;
    pub const RCVMORE: i32 = 13;
    pub const EVENTS: i32 = 15;
    pub const TYPE: i32 = 16;
    pub const LINGER: i32 = 17;
    pub const RECONNECT_IVL: i32 = 18;
    pub const BACKLOG: i32 = 19;
    pub const RECONNECT_IVL_MAX: i32 = 21;
    pub const MAXMSGSIZE: i32 = 22;
    pub const SNDHWM: i32 = 23;
    pub const RCVHWM: i32 = 24;
    pub const MULTICAST_HOPS: i32 = 25;
    pub const RCVTIMEO: i32 = 27;
    pub const SNDTIMEO: i32 = 28;
    pub const LAST_ENDPOINT: i32 = 32;
    pub const ROUTER_MANDATORY: i32 = 33;
    pub const TCP_KEEPALIVE: i32 = 34;
    pub const TCP_KEEPALIVE_CNT: i32 = 35;
    pub const TCP_KEEPALIVE_IDLE: i32 = 36;
    pub const TCP_KEEPALIVE_INTVL: i32 = 37;
    pub const IMMEDIATE: i32 = 39;
    pub const XPUB_VERBOSE: i32 = 40;
    pub const IPV6: i32 = 42;
    pub const MECHANISM: i32 = 43;
    pub const PLAIN_SERVER: i32 = 44;
    pub const CURVE_SERVER: i32 = 47;
    pub const PROBE_ROUTER: i32 = 51;
    pub const REQ_CORRELATE: i32 = 52;
    pub const REQ_RELAXED: i32 = 53;
    pub const CONFLATE: i32 = 54;
    pub const ZAP_DOMAIN: i32 = 55;
    pub const ROUTER_HANDOVER: i32 = 56;
    pub const TOS: i32 = 57;
    pub const IPC_FILTER_PID: i32 = 58;
    pub const SOCKS_PROXY: i32 = 68;
    pub const SOCKS_USERNAME: i32 = 99;
    pub const SOCKS_PASSWORD: i32 = 100;
    pub const CONNECT_ROUTING_ID: i32 = 61;
    pub const GSSAPI_SERVER: i32 = 62;
    pub const HANDSHAKE_IVL: i32 = 66;
    pub const XPUB_MANUAL: i32 = 71;
    pub const XPUB_WELCOME_MSG: i32 = 72;
    pub const INVERT_MATCHING: i32 = 74;
    pub const HEARTBEAT_IVL: i32 = 75;
    pub const HEARTBEAT_TTL: i32 = 76;
    pub const HEARTBEAT_TIMEOUT: i32 = 77;
    pub const CONNECT_TIMEOUT: i32 = 79;
    pub const TCP_MAXRT: i32 = 80;
    pub const THREAD_SAFE: i32 = 81;
    pub const MULTICAST_MAXTPDU: i32 = 84;
    pub const USE_FD: i32 = 89;
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn parts(s: &Socket) -> Vec<Vec<u8>> {
    s.recv_multipart(0)
        .unwrap()
        .iter()
        .map(|m| m.data().to_vec())
        .collect()
}

fn recv_bytes(s: &Socket) -> Vec<u8> {
    s.recv(0).unwrap().data().to_vec()
}

/// Nothing arrives within `ms`.
fn assert_silent(s: &Socket, ms: i32) {
    s.set_int(opt::RCVTIMEO, ms).unwrap();
    let r = s.recv(0);
    assert!(
        r.is_err(),
        "unexpected message {:?}",
        r.map(|m| m.data().to_vec())
    );
    assert_eq!(r.unwrap_err(), Error::Again);
    s.set_int(opt::RCVTIMEO, 2000).unwrap();
}

/// The first of `socks` to receive something within `ms`: (index, frames).
fn recv_any(socks: &[&Socket], ms: u64) -> Option<(usize, Vec<Vec<u8>>)> {
    let deadline = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < deadline {
        for (i, s) in socks.iter().enumerate() {
            if let Ok(first) = s.recv(DONTWAIT) {
                let mut v = vec![first.data().to_vec()];
                let mut more = first.more();
                while more {
                    let m = s.recv(0).unwrap();
                    more = m.more();
                    v.push(m.data().to_vec());
                }
                return Some((i, v));
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

/// A port nothing listens on (bound then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Runs `f` on a thread; panics if it has not finished within `ms`.
fn finishes_within<F: FnOnce() + Send + 'static>(ms: u64, what: &str, f: F) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_millis(ms))
        .unwrap_or_else(|_| panic!("{what} did not return within {ms} ms"));
}

/// Terminates the context, failing (instead of hanging) if that takes over 3 s.
fn term(ctx: Context) {
    finishes_within(10000, "ctx.term()", move || ctx.term().unwrap());
}

// ---------------------------------------------------------------------------------------
// Defaults, round-trips and validation
// ---------------------------------------------------------------------------------------

#[test]
fn generic_option_defaults_match_libzmq() {
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Dealer).unwrap();
    // Values read from libzmq 4.3.4 with zmq_getsockopt on a fresh DEALER.
    let ints = [
        (opt::SNDHWM, 1000),
        (opt::RCVHWM, 1000),
        (opt::LINGER, -1),
        (opt::RCVTIMEO, -1),
        (opt::SNDTIMEO, -1),
        (opt::RECONNECT_IVL, 100),
        (opt::RECONNECT_IVL_MAX, 0),
        (opt::BACKLOG, 100),
        (opt::SNDBUF, -1),
        (opt::RCVBUF, -1),
        (opt::TCP_KEEPALIVE, -1),
        (opt::TCP_KEEPALIVE_CNT, -1),
        (opt::TCP_KEEPALIVE_IDLE, -1),
        (opt::TCP_KEEPALIVE_INTVL, -1),
        (opt::IMMEDIATE, 0),
        (opt::IPV6, 0),
        (opt::TOS, 0),
        (opt::HANDSHAKE_IVL, 30_000),
        (opt::HEARTBEAT_IVL, 0),
        (opt::HEARTBEAT_TTL, 0),
        (opt::HEARTBEAT_TIMEOUT, -1),
        (opt::CONNECT_TIMEOUT, 0),
        (opt::TCP_MAXRT, 0),
        (opt::MULTICAST_HOPS, 1),
        (opt::RATE, 100),
        (opt::RECOVERY_IVL, 10_000),
        (opt::MULTICAST_MAXTPDU, 1500),
        (opt::CONFLATE, 0),
        (opt::USE_FD, -1),
        (opt::MECHANISM, 0),
        (opt::PLAIN_SERVER, 0),
        (opt::CURVE_SERVER, 0),
        (opt::THREAD_SAFE, 0),
        (opt::TYPE, 5),
        (opt::RCVMORE, 0),
        (opt::EVENTS, 0),
    ];
    for (o, want) in ints {
        assert_eq!(s.get_int(o), Ok(want), "default of option {o}");
    }
    // Built without GSSAPI, like pyzmq's bundled libzmq 4.3.5: the option is unknown.
    assert_eq!(s.get_int(opt::GSSAPI_SERVER), Err(Error::InvalidArgument));
    assert!(matches!(
        s.get_option(opt::MAXMSGSIZE).unwrap(),
        OptionValue::Int64(-1)
    ));
    assert!(matches!(
        s.get_option(opt::AFFINITY).unwrap(),
        OptionValue::Uint64(0)
    ));
    match s.get_option(opt::ROUTING_ID).unwrap() {
        OptionValue::Binary(b) => assert!(b.is_empty()),
        _ => panic!("ROUTING_ID is binary"),
    }
    for o in [opt::LAST_ENDPOINT, opt::ZAP_DOMAIN] {
        match s.get_option(o).unwrap() {
            OptionValue::Str(v) => assert_eq!(v, b"", "option {o}"),
            _ => panic!("option {o} is a string"),
        }
    }
    drop(s);
    term(ctx);
}

#[test]
fn use_fd_refuses_what_is_not_a_listening_stream_socket_and_leaves_it_open() {
    use std::os::fd::AsRawFd;
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Pull).unwrap();
    // A datagram socket is a socket of the wrong kind: EINVAL, and it stays the caller's.
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_option(opt::USE_FD, &udp.as_raw_fd().to_ne_bytes())
        .unwrap();
    assert_eq!(s.bind("tcp://127.0.0.1:*"), Err(Error::InvalidArgument));
    assert!(
        udp.local_addr().is_ok(),
        "the refused descriptor was closed"
    );
    // A stream socket of another family than the endpoint's: EINVAL.
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    s.set_option(opt::USE_FD, &tcp.as_raw_fd().to_ne_bytes())
        .unwrap();
    let path = std::env::temp_dir().join(format!("ferromq-usefd-{}", std::process::id()));
    let ep = format!("ipc://{}", path.display());
    assert_eq!(s.bind(&ep), Err(Error::InvalidArgument));
    assert!(tcp.local_addr().is_ok());
    // Not a socket at all: an error (ENOTSOCK), and the file stays open.
    let mut file = tempfile_in_tmp();
    s.set_option(opt::USE_FD, &file.as_raw_fd().to_ne_bytes())
        .unwrap();
    assert!(s.bind("tcp://127.0.0.1:*").is_err());
    file.write_all(b"still open").unwrap();
    drop(s);
    term(ctx);
}

fn tempfile_in_tmp() -> std::fs::File {
    let path = std::env::temp_dir().join(format!("ferromq-usefd-file-{}", std::process::id()));
    let f = std::fs::File::create(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    f
}

#[test]
fn invert_matching_is_a_generic_option() {
    let ctx = Context::new();
    let d = ctx.socket(SocketType::Dealer).unwrap();
    assert_eq!(d.get_int(opt::INVERT_MATCHING), Ok(0));
    let sub = ctx.socket(SocketType::Sub).unwrap();
    sub.set_int(opt::INVERT_MATCHING, 1).unwrap();
    assert_eq!(sub.get_int(opt::INVERT_MATCHING), Ok(1));
    drop((d, sub));
    term(ctx);
}

#[test]
fn set_get_round_trips() {
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Dealer).unwrap();
    let ints = [
        (opt::SNDHWM, 0),
        (opt::SNDHWM, 7),
        (opt::RCVHWM, 9),
        (opt::LINGER, 12_345),
        (opt::LINGER, -1),
        (opt::RCVTIMEO, 0),
        (opt::SNDTIMEO, 250),
        (opt::RECONNECT_IVL, -1),
        (opt::RECONNECT_IVL, 50),
        (opt::RECONNECT_IVL_MAX, 400),
        (opt::BACKLOG, 0),
        (opt::SNDBUF, 65_536),
        (opt::RCVBUF, 0),
        (opt::TCP_KEEPALIVE, 1),
        (opt::TCP_KEEPALIVE_CNT, 3),
        (opt::TCP_KEEPALIVE_IDLE, 60),
        (opt::TCP_KEEPALIVE_INTVL, 5),
        (opt::IMMEDIATE, 1),
        (opt::IPV6, 1),
        (opt::TOS, 0x10),
        (opt::HANDSHAKE_IVL, 0),
        (opt::HEARTBEAT_IVL, 150),
        (opt::HEARTBEAT_TIMEOUT, 450),
        (opt::CONNECT_TIMEOUT, 1000),
        (opt::TCP_MAXRT, 2000),
        (opt::MULTICAST_HOPS, 4),
        (opt::RATE, 1000),
        (opt::RECOVERY_IVL, 0),
        (opt::MULTICAST_MAXTPDU, 9000),
        (opt::CONFLATE, 1),
    ];
    for (o, v) in ints {
        s.set_int(o, v).unwrap();
        assert_eq!(s.get_int(o), Ok(v), "option {o}");
    }
    // HEARTBEAT_TTL is kept in deciseconds: libzmq reads back 1200 for 1234.
    s.set_int(opt::HEARTBEAT_TTL, 1234).unwrap();
    assert_eq!(s.get_int(opt::HEARTBEAT_TTL), Ok(1200));
    s.set_int(opt::HEARTBEAT_TTL, 6_553_599).unwrap();
    assert_eq!(s.get_int(opt::HEARTBEAT_TTL), Ok(6_553_500));
    s.set_int(opt::HEARTBEAT_TTL, 99).unwrap();
    assert_eq!(s.get_int(opt::HEARTBEAT_TTL), Ok(0));

    for v in [-5i64, 0, 1 << 40] {
        s.set_option(opt::MAXMSGSIZE, &v.to_ne_bytes()).unwrap();
        assert!(matches!(s.get_option(opt::MAXMSGSIZE).unwrap(), OptionValue::Int64(x) if x == v));
    }
    s.set_option(opt::AFFINITY, &3u64.to_ne_bytes()).unwrap();
    assert!(matches!(
        s.get_option(opt::AFFINITY).unwrap(),
        OptionValue::Uint64(3)
    ));
    for id in [&b"ab"[..], b"\0leading-zero", &[b'x'; 255]] {
        s.set_option(opt::ROUTING_ID, id).unwrap();
        match s.get_option(opt::ROUTING_ID).unwrap() {
            OptionValue::Binary(b) => assert_eq!(&b[..], id),
            _ => panic!("ROUTING_ID is binary"),
        }
    }
    s.set_option(opt::ZAP_DOMAIN, b"dom").unwrap();
    match s.get_option(opt::ZAP_DOMAIN).unwrap() {
        OptionValue::Str(v) => assert_eq!(v, b"dom"),
        _ => panic!("ZAP_DOMAIN is a string"),
    }
    // Pattern options libzmq accepts any int from 0 for (relaxed booleans), write-only.
    let r = ctx.socket(SocketType::Router).unwrap();
    for o in [
        opt::ROUTER_MANDATORY,
        opt::ROUTER_HANDOVER,
        opt::PROBE_ROUTER,
    ] {
        r.set_int(o, 2).unwrap();
        assert_eq!(r.set_int(o, -1), Err(Error::InvalidArgument), "option {o}");
        assert_eq!(
            r.get_int(o),
            Err(Error::InvalidArgument),
            "option {o} is write-only"
        );
    }
    r.set_option(opt::CONNECT_ROUTING_ID, b"peer").unwrap();
    let x = ctx.socket(SocketType::XPub).unwrap();
    x.set_int(opt::XPUB_VERBOSE, 1).unwrap();
    x.set_int(opt::XPUB_MANUAL, 1).unwrap();
    x.set_option(opt::XPUB_WELCOME_MSG, b"").unwrap();
    x.set_option(opt::XPUB_WELCOME_MSG, b"hi").unwrap();
    let q = ctx.socket(SocketType::Req).unwrap();
    q.set_int(opt::REQ_RELAXED, 1).unwrap();
    q.set_int(opt::REQ_CORRELATE, 1).unwrap();
    assert_eq!(q.get_int(opt::REQ_RELAXED), Err(Error::InvalidArgument));
    drop((s, r, x, q));
    term(ctx);
}

#[test]
fn invalid_values_are_rejected_with_einval() {
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Dealer).unwrap();
    // Every one of these fails with EINVAL in libzmq 4.3.4.
    let bad = [
        (opt::SNDHWM, -1),
        (opt::RCVHWM, -1),
        (opt::LINGER, -2),
        (opt::RCVTIMEO, -2),
        (opt::SNDTIMEO, -2),
        (opt::RECONNECT_IVL, -2),
        (opt::RECONNECT_IVL_MAX, -1),
        (opt::BACKLOG, -1),
        (opt::SNDBUF, -2),
        (opt::TCP_KEEPALIVE, 2),
        (opt::TCP_KEEPALIVE_CNT, -2),
        (opt::HEARTBEAT_IVL, -1),
        (opt::HEARTBEAT_TTL, 6_553_600),
        (opt::HEARTBEAT_TTL, -100),
        (opt::HANDSHAKE_IVL, -1),
        (opt::TOS, -1),
        (opt::CONNECT_TIMEOUT, -1),
        (opt::TCP_MAXRT, -1),
        (opt::MULTICAST_HOPS, 0),
        (opt::RATE, 0),
        (opt::RECOVERY_IVL, -1),
        (opt::MULTICAST_MAXTPDU, 0),
        (opt::USE_FD, -2),
    ];
    for (o, v) in bad {
        assert_eq!(
            s.set_int(o, v),
            Err(Error::InvalidArgument),
            "option {o} = {v}"
        );
    }
    // The rejected values left the defaults alone.
    assert_eq!(s.get_int(opt::SNDHWM), Ok(1000));
    assert_eq!(s.get_int(opt::LINGER), Ok(-1));
    // Wrong value sizes.
    assert_eq!(
        s.set_option(opt::SNDHWM, &5i16.to_ne_bytes()),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        s.set_option(opt::SNDHWM, &5i64.to_ne_bytes()),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        s.set_option(opt::MAXMSGSIZE, &5i32.to_ne_bytes()),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        s.set_option(opt::ROUTING_ID, b""),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        s.set_option(opt::ROUTING_ID, &[b'a'; 256]),
        Err(Error::InvalidArgument)
    );
    // Unknown options, and options of other socket types.
    assert_eq!(s.set_int(9999, 1), Err(Error::InvalidArgument));
    assert_eq!(s.get_option(9999).err(), Some(Error::InvalidArgument));
    assert_eq!(
        s.set_option(opt::SUBSCRIBE, b"a"),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        s.set_int(opt::ROUTER_MANDATORY, 1),
        Err(Error::InvalidArgument)
    );
    assert_eq!(s.set_int(opt::XPUB_VERBOSE, 1), Err(Error::InvalidArgument));
    let sub = ctx.socket(SocketType::Sub).unwrap();
    assert_eq!(
        sub.set_int(opt::XPUB_VERBOSE, 1),
        Err(Error::InvalidArgument)
    );
    drop((s, sub));
    term(ctx);
}

#[test]
fn option_validation_edge_cases_match_libzmq() {
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Dealer).unwrap();
    // libzmq's strict booleans: only 0 and 1.
    for o in [opt::IMMEDIATE, opt::IPV6, opt::CONFLATE] {
        assert_eq!(
            s.set_int(o, 2),
            Err(Error::InvalidArgument),
            "option {o} = 2"
        );
        assert_eq!(s.get_int(o), Ok(0));
    }
    // HEARTBEAT_TIMEOUT: -1 is the "unset" default but cannot be set.
    assert_eq!(
        s.set_int(opt::HEARTBEAT_TIMEOUT, -1),
        Err(Error::InvalidArgument)
    );
    // HEARTBEAT_TTL is divided by 100 before the range check: -1..-99 become 0.
    s.set_int(opt::HEARTBEAT_TTL, -99).unwrap();
    assert_eq!(s.get_int(opt::HEARTBEAT_TTL), Ok(0));
    drop(s);
    term(ctx);
}

#[test]
fn connect_routing_id_only_on_router() {
    let ctx = Context::new();
    for kind in [SocketType::Dealer, SocketType::Push, SocketType::Req] {
        let s = ctx.socket(kind).unwrap();
        assert_eq!(
            s.set_option(opt::CONNECT_ROUTING_ID, b"ab"),
            Err(Error::InvalidArgument),
            "{kind:?}"
        );
    }
    term(ctx);
}

// ---------------------------------------------------------------------------------------
// REQ options
// ---------------------------------------------------------------------------------------

#[test]
fn req_relaxed_allows_resend_and_drops_stale_reply() {
    let ctx = Context::new();
    let rep_a = sock(&ctx, SocketType::Rep);
    let rep_b = sock(&ctx, SocketType::Rep);
    let ea = bind_tcp(&rep_a);
    let eb = bind_tcp(&rep_b);

    // Strict REQ: a second send before the reply is EFSM, as is recv before send.
    let strict = sock(&ctx, SocketType::Req);
    assert_eq!(strict.recv(0).unwrap_err(), Error::State);
    strict.connect(&ea).unwrap();
    strict.send(b"one", 0).unwrap();
    assert_eq!(strict.send(b"two", 0).unwrap_err(), Error::State);
    assert_eq!(recv_bytes(&rep_a), b"one");
    rep_a.send(b"r-one", 0).unwrap();
    assert_eq!(recv_bytes(&strict), b"r-one");
    drop(strict);

    let req = sock(&ctx, SocketType::Req);
    req.set_int(opt::REQ_RELAXED, 1).unwrap();
    assert_eq!(
        req.recv(0).unwrap_err(),
        Error::State,
        "still EFSM before any send"
    );
    req.connect(&ea).unwrap();
    req.connect(&eb).unwrap();
    req.send(b"first", 0).unwrap();
    let (first_rep, msg) = recv_any(&[&rep_a, &rep_b], 2000).expect("a REP got the request");
    assert_eq!(msg, vec![b"first".to_vec()]);
    // Relaxed: sending again without receiving is allowed; it goes to the other REP.
    req.send(b"second", 0).unwrap();
    let reps = [&rep_a, &rep_b];
    let other = reps[1 - first_rep];
    assert_eq!(recv_bytes(other), b"second");
    // The first REP answers late: that reply is stale and must be dropped.
    reps[first_rep].send(b"stale", 0).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    other.send(b"fresh", 0).unwrap();
    assert_eq!(recv_bytes(&req), b"fresh");
    // The reply is complete: nothing more to receive (EFSM, as libzmq).
    assert_eq!(req.recv(DONTWAIT).unwrap_err(), Error::State);
    drop((req, rep_a, rep_b));
    term(ctx);
}

/// Sends one request from `req` and returns the frames a ROUTER sees.
fn request_via_router(req: &Socket, router: &Socket, body: &[u8]) -> Vec<Vec<u8>> {
    req.send(body, 0).unwrap();
    parts(router)
}

#[test]
fn req_correlate_drops_replies_with_a_wrong_or_missing_request_id() {
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let ep = bind_tcp(&router);
    let req = sock(&ctx, SocketType::Req);
    req.set_int(opt::REQ_CORRELATE, 1).unwrap();
    req.set_int(opt::REQ_RELAXED, 1).unwrap();
    req.set_option(opt::ROUTING_ID, b"Q").unwrap();
    req.connect(&ep).unwrap();

    // Wire format (as libzmq): [routing id][4-byte request id][empty][body].
    let r1 = request_via_router(&req, &router, b"req");
    assert_eq!(r1.len(), 4, "{r1:?}");
    assert_eq!(r1[0], b"Q");
    assert_eq!(r1[1].len(), 4);
    assert!(r1[2].is_empty());
    assert_eq!(r1[3], b"req");
    let r2 = request_via_router(&req, &router, b"req");
    assert_ne!(r1[1], r2[1], "each request gets a new id");

    // A reply carrying the first (stale) id is dropped; the current one is delivered.
    router
        .send_multipart([&b"Q"[..], &r1[1], b"", b"stale"], 0)
        .unwrap();
    router
        .send_multipart([&b"Q"[..], &r2[1], b"", b"fresh"], 0)
        .unwrap();
    assert_eq!(recv_bytes(&req), b"fresh");

    // A reply without the request id is dropped too.
    let _ = request_via_router(&req, &router, b"req3");
    router.send_multipart([&b"Q"[..], b"", b"noid"], 0).unwrap();
    assert_silent(&req, 300);
    drop((req, router));
    term(ctx);
}

#[test]
fn req_correlate_request_ids_are_native_endian_counters() {
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    let ep = bind_tcp(&router);
    let req = sock(&ctx, SocketType::Req);
    req.set_int(opt::REQ_CORRELATE, 1).unwrap();
    req.set_int(opt::REQ_RELAXED, 1).unwrap();
    req.connect(&ep).unwrap();
    let a = request_via_router(&req, &router, b"x");
    let b = request_via_router(&req, &router, b"x");
    let id = |v: &Vec<u8>| u32::from_ne_bytes(v[..4].try_into().unwrap());
    assert_eq!(id(&b[1]), id(&a[1]).wrapping_add(1));
    drop((req, router));
    term(ctx);
}

#[test]
fn req_with_two_reps_round_robins() {
    let ctx = Context::new();
    let rep_a = sock(&ctx, SocketType::Rep);
    let rep_b = sock(&ctx, SocketType::Rep);
    let ea = bind_tcp(&rep_a);
    let eb = bind_tcp(&rep_b);
    let req = sock(&ctx, SocketType::Req);
    req.connect(&ea).unwrap();
    req.connect(&eb).unwrap();
    let reps = [&rep_a, &rep_b];
    let mut who = Vec::new();
    for i in 0..10 {
        let body = format!("q{i}");
        req.send(body.as_bytes(), 0).unwrap();
        let (idx, m) = recv_any(&reps, 2000).expect("request delivered");
        assert_eq!(m, vec![body.clone().into_bytes()]);
        reps[idx].send(format!("a{i}").as_bytes(), 0).unwrap();
        assert_eq!(recv_bytes(&req), format!("a{i}").as_bytes());
        who.push(idx);
    }
    // Strict alternation between the two peers.
    for w in who.windows(2) {
        assert_ne!(w[0], w[1], "REQ alternates between its peers: {who:?}");
    }
    drop((req, rep_a, rep_b));
    term(ctx);
}

// ---------------------------------------------------------------------------------------
// ROUTER options
// ---------------------------------------------------------------------------------------

/// A ROUTER with ROUTER_HANDOVER `handover`, and two DEALERs A then B both calling
/// themselves "X"; returns once B's handshake is done.
fn router_with_duplicate_ids(ctx: &Context, handover: bool) -> (Socket, Socket, Socket) {
    let router = sock(ctx, SocketType::Router);
    router
        .set_int(opt::ROUTER_HANDOVER, handover as i32)
        .unwrap();
    let mon = Monitor::new(ctx, &router, "inproc://router-mon");
    let ep = bind_tcp(&router);
    let a = sock(ctx, SocketType::Dealer);
    a.set_option(opt::ROUTING_ID, b"X").unwrap();
    a.set_int(opt::RECONNECT_IVL, -1).unwrap();
    a.connect(&ep).unwrap();
    a.send(b"fromA", 0).unwrap();
    assert_eq!(parts(&router), vec![b"X".to_vec(), b"fromA".to_vec()]);
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    let b = sock(ctx, SocketType::Dealer);
    b.set_option(opt::ROUTING_ID, b"X").unwrap();
    b.set_int(opt::RECONNECT_IVL, -1).unwrap();
    b.connect(&ep).unwrap();
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    (router, a, b)
}

#[test]
fn router_refuses_duplicate_routing_id_by_default() {
    let ctx = Context::new();
    let (router, a, b) = router_with_duplicate_ids(&ctx, false);
    // The second peer with the same id is ignored; the first keeps the id.
    b.send(b"fromB", 0).unwrap();
    assert_silent(&router, 300);
    router.send_multipart([&b"X"[..], b"toX"], 0).unwrap();
    assert_eq!(recv_bytes(&a), b"toX");
    assert_silent(&b, 200);
    a.send(b"fromA2", 0).unwrap();
    assert_eq!(parts(&router), vec![b"X".to_vec(), b"fromA2".to_vec()]);
    drop((router, a, b));
    term(ctx);
}

#[test]
fn router_handover_gives_the_id_to_the_new_peer() {
    let ctx = Context::new();
    let (router, a, b) = router_with_duplicate_ids(&ctx, true);
    b.send(b"fromB", 0).unwrap();
    assert_eq!(parts(&router), vec![b"X".to_vec(), b"fromB".to_vec()]);
    router.send_multipart([&b"X"[..], b"toX"], 0).unwrap();
    assert_eq!(recv_bytes(&b), b"toX");
    assert_silent(&a, 200);
    // The old peer lost its id: what it sends now is not delivered.
    let _ = a.send(b"fromA2", DONTWAIT);
    assert_silent(&router, 300);
    drop((router, a, b));
    term(ctx);
}

#[test]
fn router_handover_between_id_and_body_still_delivers_the_body() {
    // A ROUTER returns a queued message's routing id while its body stays in the peer's
    // pipe; a handover that closes that pipe before the body is read must not lose it.
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.set_int(opt::ROUTER_HANDOVER, 1).unwrap();
    router.bind("inproc://handover-mid").unwrap();
    let a = sock(&ctx, SocketType::Dealer);
    a.set_option(opt::ROUTING_ID, b"X").unwrap();
    a.connect("inproc://handover-mid").unwrap();
    a.send(b"first", 0).unwrap();
    a.send(b"second", 0).unwrap();
    // The first read finds both messages queued; the second message's id then comes
    // from what the reader already knows, its body left in the pipe.
    assert_eq!(parts(&router), vec![b"X".to_vec(), b"first".to_vec()]);
    let id = router.recv_msg(0).unwrap();
    assert_eq!((id.data(), id.more()), (&b"X"[..], true));
    let b = sock(&ctx, SocketType::Dealer);
    b.set_option(opt::ROUTING_ID, b"X").unwrap();
    b.connect("inproc://handover-mid").unwrap();
    router.set_int(opt::RCVTIMEO, 1000).unwrap();
    let body = router.recv_msg(0).unwrap();
    assert_eq!((body.data(), body.more()), (&b"second"[..], false));
    // The new peer owns the id now.
    b.send(b"fromB", 0).unwrap();
    assert_eq!(parts(&router), vec![b"X".to_vec(), b"fromB".to_vec()]);
    drop((router, a, b));
    term(ctx);
}

#[test]
fn router_handover_redirects_sends_to_a_peer_it_just_sent_to() {
    // A ROUTER keeps the last peer it sent to (id and pipe) to skip the lookups of a
    // stream of sends; a handover must send the next message to the new peer, and the
    // rest of a message begun for the old one goes nowhere.
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.set_int(opt::ROUTER_HANDOVER, 1).unwrap();
    router.bind("inproc://handover-cached").unwrap();
    let a = sock(&ctx, SocketType::Dealer);
    a.set_option(opt::ROUTING_ID, b"X").unwrap();
    a.connect("inproc://handover-cached").unwrap();
    router.send_multipart([&b"X"[..], b"toA"], 0).unwrap();
    assert_eq!(recv_bytes(&a), b"toA");
    router.send(b"X", SNDMORE).unwrap();
    let b = sock(&ctx, SocketType::Dealer);
    b.set_option(opt::ROUTING_ID, b"X").unwrap();
    b.connect("inproc://handover-cached").unwrap();
    router.send(b"lost", 0).unwrap();
    router.send_multipart([&b"X"[..], b"toB"], 0).unwrap();
    assert_eq!(recv_bytes(&b), b"toB");
    assert_silent(&a, 200);
    assert_silent(&b, 100);
    drop((router, a, b));
    term(ctx);
}

#[test]
fn router_pairs_each_body_with_its_own_peers_id_across_peers_and_disconnects() {
    // A ROUTER returns the id of a message it knows is queued and leaves the body in the
    // pipe. Queued messages of several peers (one silent, one leaving with messages
    // still queued) must each come with their own sender's id, none lost or repeated.
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.bind("inproc://known-next").unwrap();
    // D stays silent: a note about another pipe must not be taken for it.
    let peers: Vec<Socket> = [b"A", b"D", b"B", b"C"]
        .iter()
        .map(|id| {
            let d = sock(&ctx, SocketType::Dealer);
            d.set_option(opt::ROUTING_ID, *id).unwrap();
            d.connect("inproc://known-next").unwrap();
            d
        })
        .collect();
    for (d, id) in peers.iter().zip(["A", "D", "B", "C"]) {
        for n in 0..3 {
            if id != "D" {
                d.send(format!("{id}{n}").as_bytes(), 0).unwrap();
            }
        }
    }
    let mut seen = Vec::new();
    // Two messages in, the third peer leaves; its queued messages stay readable.
    for _ in 0..2 {
        let p = parts(&router);
        seen.push((p[0].clone(), p[1].clone()));
    }
    let mut peers = peers;
    drop(peers.pop());
    router.set_int(opt::RCVTIMEO, 500).unwrap();
    while let Ok(id) = router.recv_msg(0) {
        assert!(id.more());
        let body = router.recv_msg(0).unwrap();
        seen.push((id.data().to_vec(), body.data().to_vec()));
    }
    for (id, body) in &seen {
        assert_eq!(id[..], body[..1], "body {body:?} came with id {id:?}");
    }
    let mut bodies: Vec<_> = seen.iter().map(|(_, b)| b.clone()).collect();
    bodies.sort();
    let want: Vec<Vec<u8>> = ["A0", "A1", "A2", "B0", "B1", "B2", "C0", "C1", "C2"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    assert_eq!(bodies, want);
    drop((router, peers));
    term(ctx);
}

#[test]
fn router_sends_small_frames_as_bytes_with_the_same_rules() {
    // A ROUTER takes frames of up to INLINE_CAP bytes without building them (`send_slice`):
    // unknown ids drop the message (or fail under ROUTER_MANDATORY, leaving the socket
    // ready for a new message), small and empty body frames arrive whole and in order.
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.bind("inproc://router-slice").unwrap();
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option(opt::ROUTING_ID, b"D").unwrap();
    dealer.connect("inproc://router-slice").unwrap();
    router.send(b"nobody", SNDMORE).unwrap();
    router.send(b"lost", 0).unwrap();
    router.send(b"D", SNDMORE).unwrap();
    router.send(b"", SNDMORE).unwrap();
    router.send(b"ok", 0).unwrap();
    assert_eq!(parts(&dealer), vec![b"".to_vec(), b"ok".to_vec()]);
    router.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    assert_eq!(router.send(b"nobody", SNDMORE), Err(Error::HostUnreachable));
    router.send(b"D", SNDMORE).unwrap();
    router.send(&[5u8; 100], SNDMORE).unwrap();
    router.send(b"tail", 0).unwrap();
    assert_eq!(parts(&dealer), vec![vec![5u8; 100], b"tail".to_vec()]);
    assert_silent(&dealer, 100);
    drop((router, dealer));
    term(ctx);
}

#[test]
fn recv_msg_into_replaces_the_frame_and_leaves_it_on_again() {
    // `recv_msg_into` writes into the caller's frame (zmq_msg_recv's path): each receive
    // replaces what it held, a ROUTER's id and body included; EAGAIN leaves it as it was.
    let ctx = Context::new();
    let router = sock(&ctx, SocketType::Router);
    router.bind("inproc://recv-into").unwrap();
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_option(opt::ROUTING_ID, b"D").unwrap();
    dealer.connect("inproc://recv-into").unwrap();
    let long = vec![7u8; 300];
    dealer.send(&long, 0).unwrap();
    dealer.send(b"short", 0).unwrap();
    let mut m = ferromq::Msg::copy_from(b"previous content");
    let mut got = Vec::new();
    for _ in 0..4 {
        router.recv_msg_into(0, &mut m).unwrap();
        got.push((m.data().to_vec(), m.more()));
    }
    let expect = vec![
        (b"D".to_vec(), true),
        (long.clone(), false),
        (b"D".to_vec(), true),
        (b"short".to_vec(), false),
    ];
    assert_eq!(got, expect);
    assert_eq!(router.recv_msg_into(DONTWAIT, &mut m), Err(Error::Again));
    assert_eq!(m.data(), b"short");
    drop((router, dealer));
    term(ctx);
}

#[test]
fn sub_recv_msg_into_drops_unmatched_messages_whole() {
    // A SUB receives into the caller's frame too: a message whose first frame does not
    // match is dropped with all its frames (a later frame that would match included);
    // after dropping, EAGAIN leaves the frame empty, as libzmq's failed receive does.
    // The "b" messages pass the PUB's filter and are queued; the SUB then cancels "b",
    // so it drops them itself.
    let ctx = Context::new();
    let publ = sock(&ctx, SocketType::Pub);
    publ.bind("inproc://sub-recv-into").unwrap();
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option(opt::SUBSCRIBE, b"a").unwrap();
    sub.set_option(opt::SUBSCRIBE, b"b").unwrap();
    sub.connect("inproc://sub-recv-into").unwrap();
    let mut m = ferromq::Msg::copy_from(b"previous content");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        publ.send(b"a-sync", 0).unwrap();
        if sub.recv_msg_into(DONTWAIT, &mut m).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "subscription never arrived");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(m.data(), b"a-sync");
    publ.send(b"b", SNDMORE).unwrap();
    publ.send(b"a-inside", 0).unwrap();
    publ.send(b"a1", SNDMORE).unwrap();
    publ.send(b"x", 0).unwrap();
    publ.send(b"b2", 0).unwrap();
    sub.set_option(opt::UNSUBSCRIBE, b"b").unwrap();
    let mut got = Vec::new();
    for _ in 0..2 {
        sub.recv_msg_into(0, &mut m).unwrap();
        got.push((m.data().to_vec(), m.more()));
    }
    assert_eq!(got, vec![(b"a1".to_vec(), true), (b"x".to_vec(), false)]);
    assert_eq!(sub.recv_msg_into(DONTWAIT, &mut m), Err(Error::Again));
    assert_eq!(
        m.data(),
        b"",
        "the dropped b2 must not be left in the frame"
    );
    publ.send(b"a3", 0).unwrap();
    sub.recv_msg_into(0, &mut m).unwrap();
    assert_eq!((m.data(), m.more()), (&b"a3"[..], false));
    drop((publ, sub));
    term(ctx);
}

#[test]
fn connect_routing_id_names_the_peer_for_a_connecting_router() {
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Router);
    server.set_option(opt::ROUTING_ID, b"server").unwrap();
    let ep = bind_tcp(&server);
    let client = sock(&ctx, SocketType::Router);
    client.set_option(opt::ROUTING_ID, b"client").unwrap();
    client
        .set_option(opt::CONNECT_ROUTING_ID, b"peerB")
        .unwrap();
    client.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.connect(&ep).unwrap();
    // The peer is known by the id we chose, not by the id it announced.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match client.send(b"peerB", SNDMORE) {
            Ok(()) => break,
            Err(Error::HostUnreachable) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("send to peerB: {e:?}"),
        }
    }
    client.send(b"hello", 0).unwrap();
    assert_eq!(
        client.send(b"server", SNDMORE).unwrap_err(),
        Error::HostUnreachable
    );
    assert_eq!(parts(&server), vec![b"client".to_vec(), b"hello".to_vec()]);
    server.send_multipart([&b"client"[..], b"back"], 0).unwrap();
    assert_eq!(parts(&client), vec![b"peerB".to_vec(), b"back".to_vec()]);
    drop((client, server));
    term(ctx);
}

#[test]
fn connect_routing_id_is_usable_right_after_connect() {
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Router);
    let ep = bind_tcp(&server);
    let client = sock(&ctx, SocketType::Router);
    client.set_option(opt::ROUTING_ID, b"client").unwrap();
    client
        .set_option(opt::CONNECT_ROUTING_ID, b"peerB")
        .unwrap();
    client.set_int(opt::ROUTER_MANDATORY, 1).unwrap();
    client.connect(&ep).unwrap();
    client.send(b"peerB", SNDMORE).unwrap();
    client.send(b"queued before the handshake", 0).unwrap();
    assert_eq!(
        parts(&server),
        vec![b"client".to_vec(), b"queued before the handshake".to_vec()]
    );
    drop((client, server));
    term(ctx);
}

#[test]
fn probe_router_from_a_connecting_router_sends_an_empty_message() {
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Router);
    let ep = bind_tcp(&server);
    let client = sock(&ctx, SocketType::Router);
    client.set_int(opt::PROBE_ROUTER, 1).unwrap();
    client.set_option(opt::ROUTING_ID, b"rr").unwrap();
    client.connect(&ep).unwrap();
    assert_eq!(parts(&server), vec![b"rr".to_vec(), Vec::new()]);
    assert_silent(&server, 100);
    drop((client, server));
    term(ctx);
}

#[test]
fn probe_router_from_dealer_and_req() {
    let ctx = Context::new();
    let server = sock(&ctx, SocketType::Router);
    let ep = bind_tcp(&server);
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_int(opt::PROBE_ROUTER, 1).unwrap();
    dealer.set_option(opt::ROUTING_ID, b"dd").unwrap();
    dealer.connect(&ep).unwrap();
    assert_eq!(parts(&server), vec![b"dd".to_vec(), Vec::new()]);
    let req = sock(&ctx, SocketType::Req);
    req.set_int(opt::PROBE_ROUTER, 1).unwrap();
    req.set_option(opt::ROUTING_ID, b"qq").unwrap();
    req.connect(&ep).unwrap();
    assert_eq!(parts(&server), vec![b"qq".to_vec(), Vec::new()]);
    drop((dealer, req, server));
    term(ctx);
}

// ---------------------------------------------------------------------------------------
// XPUB / XSUB options
// ---------------------------------------------------------------------------------------

/// (Un)subscriptions an XPUB hands up within `ms` of quiet.
fn xpub_notes(x: &Socket, ms: i32) -> Vec<Vec<u8>> {
    x.set_int(opt::RCVTIMEO, ms).unwrap();
    let mut v = Vec::new();
    while let Ok(m) = x.recv(0) {
        v.push(m.data().to_vec());
    }
    x.set_int(opt::RCVTIMEO, 2000).unwrap();
    v
}

/// Receives the notes in `want` (each may take up to 5 s on a loaded machine), then
/// checks that nothing else comes within `quiet_ms`.
fn xpub_expect(x: &Socket, want: &[&[u8]], quiet_ms: i32) {
    x.set_int(opt::RCVTIMEO, 5000).unwrap();
    let mut got = Vec::new();
    for _ in want {
        match x.recv(0) {
            Ok(m) => got.push(m.data().to_vec()),
            Err(_) => break,
        }
    }
    got.extend(xpub_notes(x, quiet_ms));
    let want: Vec<Vec<u8>> = want.iter().map(|w| w.to_vec()).collect();
    assert_eq!(got, want);
}

/// Publishes probes on topic "A" until every one of `subs` has received one: then the
/// XPUB has applied each subscription.
fn until_subscribed(x: &Socket, subs: &[&Socket]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = vec![false; subs.len()];
    for s in subs {
        s.set_int(opt::RCVTIMEO, 20).unwrap();
    }
    while !seen.iter().all(|&b| b) {
        assert!(Instant::now() < deadline, "subscriptions never arrived");
        x.send(b"A-probe", 0).unwrap();
        for (s, seen) in subs.iter().zip(seen.iter_mut()) {
            while s.recv(0).is_ok() {
                *seen = true;
            }
        }
    }
}

#[test]
fn xpub_default_passes_only_the_first_subscription() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    let ep = bind_tcp(&x);
    let s1 = sock(&ctx, SocketType::Sub);
    let s2 = sock(&ctx, SocketType::Sub);
    s1.connect(&ep).unwrap();
    s2.connect(&ep).unwrap();
    s1.set_option(opt::SUBSCRIBE, b"A").unwrap();
    s2.set_option(opt::SUBSCRIBE, b"A").unwrap();
    // Both subscriptions must have reached the XPUB before s1 cancels (else the cancel
    // could come first and be news).
    until_subscribed(&x, &[&s1, &s2]);
    xpub_expect(&x, &[b"\x01A"], 300);
    // s2 still holds "A": s1 dropping it is not news.
    s1.set_option(opt::UNSUBSCRIBE, b"A").unwrap();
    assert_eq!(xpub_notes(&x, 300), Vec::<Vec<u8>>::new());
    // The last holder leaving is.
    drop(s2);
    xpub_expect(&x, &[b"\x00A"], 300);
    drop((s1, x));
    term(ctx);
}

#[test]
fn xpub_verbose_passes_duplicate_subscriptions() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    x.set_int(opt::XPUB_VERBOSE, 1).unwrap();
    let ep = bind_tcp(&x);
    let s1 = sock(&ctx, SocketType::Sub);
    let s2 = sock(&ctx, SocketType::Sub);
    s1.connect(&ep).unwrap();
    s2.connect(&ep).unwrap();
    s1.set_option(opt::SUBSCRIBE, b"A").unwrap();
    s2.set_option(opt::SUBSCRIBE, b"A").unwrap();
    s1.set_option(opt::SUBSCRIBE, b"A").unwrap();
    xpub_expect(&x, &[b"\x01A" as &[u8]; 3], 300);
    // VERBOSE does not apply to unsubscriptions: s2's cancel is not news while s1 holds "A".
    s2.set_option(opt::UNSUBSCRIBE, b"A").unwrap();
    assert_eq!(xpub_notes(&x, 300), Vec::<Vec<u8>>::new());
    drop((s1, s2, x));
    term(ctx);
}

#[test]
fn xpub_subscriptions_of_one_peer_are_a_set() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    let ep = bind_tcp(&x);
    let s = sock(&ctx, SocketType::Sub);
    s.connect(&ep).unwrap();
    // SUB sends "\x01A" twice but, refcounting locally, only one "\x00A".
    s.set_option(opt::SUBSCRIBE, b"A").unwrap();
    s.set_option(opt::SUBSCRIBE, b"A").unwrap();
    xpub_expect(&x, &[b"\x01A"], 300);
    s.set_option(opt::UNSUBSCRIBE, b"A").unwrap();
    assert_eq!(xpub_notes(&x, 300), Vec::<Vec<u8>>::new());
    s.set_option(opt::UNSUBSCRIBE, b"A").unwrap();
    xpub_expect(&x, &[b"\x00A"], 300);
    drop((s, x));
    term(ctx);
}

#[test]
fn xpub_receives_unsubscribe_when_a_subscriber_disconnects() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    let ep = bind_tcp(&x);
    let s = sock(&ctx, SocketType::Sub);
    s.set_option(opt::SUBSCRIBE, b"topic").unwrap();
    s.connect(&ep).unwrap();
    assert_eq!(recv_bytes(&x), b"\x01topic");
    drop(s);
    assert_eq!(recv_bytes(&x), b"\x00topic");
    drop(x);
    term(ctx);
}

#[test]
fn xpub_manual_lets_the_application_choose_subscriptions() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    x.set_int(opt::XPUB_MANUAL, 1).unwrap();
    let ep = bind_tcp(&x);
    let s = sock(&ctx, SocketType::Sub);
    s.connect(&ep).unwrap();
    s.set_option(opt::SUBSCRIBE, b"").unwrap();
    assert_eq!(recv_bytes(&x), b"\x01");
    // The subscription to everything is not applied; the application subscribes to "B".
    x.set_option(opt::SUBSCRIBE, b"B").unwrap();
    x.send(b"A1", 0).unwrap();
    x.send(b"B1", 0).unwrap();
    assert_eq!(recv_bytes(&s), b"B1");
    assert_silent(&s, 200);
    // Every subscription is handed up, even ones already seen.
    s.set_option(opt::SUBSCRIBE, b"C").unwrap();
    assert_eq!(recv_bytes(&x), b"\x01C");
    drop((s, x));
    term(ctx);
}

#[test]
fn xpub_manual_reports_unsubscribe_on_disconnect() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    x.set_int(opt::XPUB_MANUAL, 1).unwrap();
    let ep = bind_tcp(&x);
    let s = sock(&ctx, SocketType::Sub);
    s.connect(&ep).unwrap();
    s.set_option(opt::SUBSCRIBE, b"").unwrap();
    assert_eq!(recv_bytes(&x), b"\x01");
    x.set_option(opt::SUBSCRIBE, b"B").unwrap();
    drop(s);
    assert_eq!(recv_bytes(&x), b"\x00");
    drop(x);
    term(ctx);
}

#[test]
fn xpub_welcome_message_goes_to_each_new_subscriber() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    x.set_option(opt::XPUB_WELCOME_MSG, b"W").unwrap();
    let ep = bind_tcp(&x);
    let s1 = sock(&ctx, SocketType::Sub);
    s1.set_option(opt::SUBSCRIBE, b"W").unwrap();
    s1.connect(&ep).unwrap();
    assert_eq!(recv_bytes(&s1), b"W");
    assert_eq!(recv_bytes(&x), b"\x01W");
    // A subscriber not subscribed to the welcome topic filters it out.
    let s2 = sock(&ctx, SocketType::Sub);
    s2.set_option(opt::SUBSCRIBE, b"X").unwrap();
    s2.connect(&ep).unwrap();
    assert_eq!(recv_bytes(&x), b"\x01X");
    assert_silent(&s2, 200);
    drop((s1, s2, x));
    term(ctx);
}

#[test]
fn xsub_subscribes_by_sending_a_subscription_message() {
    let ctx = Context::new();
    let x = sock(&ctx, SocketType::XPub);
    let ep = bind_tcp(&x);
    let s = sock(&ctx, SocketType::XSub);
    s.connect(&ep).unwrap();
    s.send(b"\x01top", 0).unwrap();
    assert_eq!(recv_bytes(&x), b"\x01top");
    x.send(b"topic1", 0).unwrap();
    x.send(b"other", 0).unwrap();
    assert_eq!(recv_bytes(&s), b"topic1");
    assert_silent(&s, 200);
    // Other messages go upstream as they are; "\x00topic" unsubscribes.
    s.send(b"hello", 0).unwrap();
    assert_eq!(recv_bytes(&x), b"hello");
    s.send(b"\x00top", 0).unwrap();
    assert_eq!(recv_bytes(&x), b"\x00top");
    drop((s, x));
    term(ctx);
}

// ---------------------------------------------------------------------------------------
// Connection options
// ---------------------------------------------------------------------------------------

#[test]
fn immediate_refuses_to_queue_without_a_connected_peer() {
    let ctx = Context::new();
    let port = closed_port();
    let ep = format!("tcp://127.0.0.1:{port}");
    // Default: the message is queued for the peer that is not there yet.
    let lazy = sock(&ctx, SocketType::Push);
    lazy.connect(&ep).unwrap();
    lazy.send(b"queued", DONTWAIT).unwrap();
    drop(lazy);

    let push = sock(&ctx, SocketType::Push);
    push.set_int(opt::IMMEDIATE, 1).unwrap();
    push.set_int(opt::RECONNECT_IVL, 50).unwrap();
    push.connect(&ep).unwrap();
    assert_eq!(push.send(b"x", DONTWAIT).unwrap_err(), Error::Again);
    assert_eq!(push.events().unwrap() & ferromq::POLLOUT, 0);

    // Once a peer is there, messages flow.
    let pull = sock(&ctx, SocketType::Pull);
    pull.bind(&ep).unwrap();
    push.set_int(opt::SNDTIMEO, 3000).unwrap();
    push.send(b"now", 0).unwrap();
    assert_eq!(recv_bytes(&pull), b"now");
    drop((push, pull));
    term(ctx);
}

#[test]
fn maxmsgsize_disconnects_a_peer_sending_too_much() {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_option(opt::MAXMSGSIZE, &100i64.to_ne_bytes())
        .unwrap();
    let mon = Monitor::new(&ctx, &pull, "inproc://maxmsg-mon");
    let ep = bind_tcp(&pull);
    let push = sock(&ctx, SocketType::Push);
    push.set_int(opt::RECONNECT_IVL, 50).unwrap();
    push.connect(&ep).unwrap();
    push.send(&[b'x'; 100], 0).unwrap();
    assert_eq!(
        pull.recv(0).unwrap().len(),
        100,
        "exactly MAXMSGSIZE is fine"
    );
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    push.send(&[b'y'; 101], 0).unwrap();
    let (_, dep) = mon.wait_for(event::DISCONNECTED, 2000);
    assert_eq!(dep, ep);
    // The connection comes back and small messages still work; the big one never arrives.
    push.send(b"small", 0).unwrap();
    assert_eq!(recv_bytes(&pull), b"small");
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    assert_silent(&pull, 100);
    drop((push, pull, mon));
    term(ctx);
}

#[test]
fn heartbeat_timeout_drops_a_silent_peer() {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_int(opt::HEARTBEAT_IVL, 100).unwrap();
    pull.set_int(opt::HEARTBEAT_TIMEOUT, 300).unwrap();
    let mon = Monitor::new(&ctx, &pull, "inproc://hb-mon");
    // Not 127.0.0.1, where other tests' sockets may still be reconnecting to ports their
    // closed listeners had: one that reached this listener's port handshook and went
    // away, an early DISCONNECTED on this endpoint (seen once in a full run).
    pull.bind("tcp://127.0.0.23:*").unwrap();
    let ep = last_endpoint(&pull);
    let mut raw = std::net::TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    raw.write_all(&zmtp_greeting(b"NULL")).unwrap();
    raw.write_all(&zmtp_ready("PUSH")).unwrap();
    // Then silence: PINGs go unanswered.
    let t0 = Instant::now();
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 2000);
    let (_, dep) = mon.wait_for(event::DISCONNECTED, 3000);
    assert_eq!(dep, ep);
    // libzmq drops it at ~400 ms (first PING at 100 ms + 300 ms timeout).
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "dropped too early: {:?}",
        t0.elapsed()
    );
    drop(raw);
    drop((pull, mon));
    term(ctx);
}

#[test]
fn heartbeats_keep_a_live_connection() {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    // The timeout is ten intervals: a loaded machine that stalls the I/O thread for a
    // few intervals must not look like a dead peer.
    pull.set_int(opt::HEARTBEAT_IVL, 100).unwrap();
    pull.set_int(opt::HEARTBEAT_TIMEOUT, 1000).unwrap();
    let mon = Monitor::new(&ctx, &pull, "inproc://hb-live-mon");
    let ep = bind_tcp(&pull);
    let push = sock(&ctx, SocketType::Push);
    push.set_int(opt::HEARTBEAT_IVL, 100).unwrap();
    push.set_int(opt::HEARTBEAT_TIMEOUT, 1000).unwrap();
    push.connect(&ep).unwrap();
    // Idle for more than twice the timeout: the PING/PONGs keep it up.
    stays_connected(ctx, push, pull, mon, 2500);
}

/// After the handshake, `mon` (on `pull`) reports no DISCONNECTED while the connection is
/// idle for `quiet_ms`, and a message still goes from `push` to `pull`.
fn stays_connected(ctx: Context, push: Socket, pull: Socket, mon: Monitor, quiet_ms: i32) {
    mon.wait_for(event::HANDSHAKE_SUCCEEDED, 5000);
    let mut events = Vec::new();
    while let Some(e) = mon.next(quiet_ms) {
        events.push(e);
    }
    assert!(
        events.iter().all(|e| e.0 != event::DISCONNECTED),
        "{events:?}"
    );
    push.send(b"alive", 0).unwrap();
    assert_eq!(recv_bytes(&pull), b"alive");
    drop((push, pull, mon));
    term(ctx);
}

#[test]
fn a_peer_that_only_answers_pings_stays_connected() {
    // One side heartbeats with HEARTBEAT_TIMEOUT left at its default (the interval); the
    // other does not heartbeat and sends nothing unless PINGed (libzmq 4.3.4's own
    // test_heartbeats, "notimeout" cases). libzmq runs the timeout from each PING; ferromq
    // looked for input before its first PING and dropped the connection one interval
    // after the handshake, every time.
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_int(opt::HEARTBEAT_IVL, 300).unwrap();
    let mon = Monitor::new(&ctx, &pull, "inproc://hb-answer-mon");
    let ep = bind_tcp(&pull);
    let push = sock(&ctx, SocketType::Push);
    push.connect(&ep).unwrap();
    stays_connected(ctx, push, pull, mon, 1500);
}

// ---------------------------------------------------------------------------------------
// Timeouts and LINGER
// ---------------------------------------------------------------------------------------

#[test]
fn sndtimeo_and_rcvtimeo_give_eagain() {
    let ctx = Context::new();
    let push = sock(&ctx, SocketType::Push);
    push.set_int(opt::SNDTIMEO, 100).unwrap();
    assert_eq!(push.send(b"nobody", 0).unwrap_err(), Error::Again);
    push.set_int(opt::SNDTIMEO, 0).unwrap();
    assert_eq!(push.send(b"nobody", 0).unwrap_err(), Error::Again);
    let dealer = sock(&ctx, SocketType::Dealer);
    dealer.set_int(opt::SNDTIMEO, 50).unwrap();
    assert_eq!(dealer.send(b"nobody", 0).unwrap_err(), Error::Again);

    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_tcp(&pull);
    pull.set_int(opt::RCVTIMEO, 100).unwrap();
    assert_eq!(pull.recv(0).unwrap_err(), Error::Again);
    pull.set_int(opt::RCVTIMEO, 0).unwrap();
    assert_eq!(pull.recv(0).unwrap_err(), Error::Again);
    // A timed wait still returns the message when it comes in time.
    let p2 = sock(&ctx, SocketType::Push);
    p2.connect(&ep).unwrap();
    pull.set_int(opt::RCVTIMEO, 2000).unwrap();
    p2.send(b"in time", 0).unwrap();
    assert_eq!(recv_bytes(&pull), b"in time");
    drop((push, dealer, pull, p2));
    term(ctx);
}

#[test]
fn linger_zero_close_and_term_return_promptly() {
    let ctx = Context::new();
    let ep = format!("tcp://127.0.0.1:{}", closed_port());
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(opt::LINGER, 0).unwrap();
    push.connect(&ep).unwrap();
    for _ in 0..10 {
        push.send(b"pending", 0).unwrap();
    }
    // Also a connected peer that never reads.
    let pull = sock(&ctx, SocketType::Pull);
    let ep2 = bind_tcp(&pull);
    let push2 = ctx.socket(SocketType::Push).unwrap();
    push2.set_int(opt::LINGER, 0).unwrap();
    push2.connect(&ep2).unwrap();
    push2.send(b"unread", 0).unwrap();
    finishes_within(5000, "close with LINGER=0", move || {
        drop(push);
        drop(push2);
        drop(pull);
    });
    finishes_within(10000, "ctx.term()", move || ctx.term().unwrap());
}

#[test]
fn positive_linger_bounds_term_with_an_unreachable_peer() {
    let ctx = Context::new();
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(opt::LINGER, 200).unwrap();
    push.connect(&format!("tcp://127.0.0.1:{}", closed_port()))
        .unwrap();
    push.send(b"never delivered", 0).unwrap();
    drop(push);
    finishes_within(10000, "ctx.term() with LINGER=200", move || {
        ctx.term().unwrap()
    });
}

#[test]
fn infinite_linger_delivers_queued_messages_after_close() {
    let ctx = Context::new();
    let port = closed_port();
    let ep = format!("tcp://127.0.0.1:{port}");
    let push = ctx.socket(SocketType::Push).unwrap();
    assert_eq!(push.get_int(opt::LINGER), Ok(-1));
    push.set_int(opt::RECONNECT_IVL, 50).unwrap();
    push.connect(&ep).unwrap();
    for i in 0..5u8 {
        push.send(&[i], 0).unwrap();
    }
    // Closed before any peer exists; the peer appears afterwards.
    drop(push);
    std::thread::sleep(Duration::from_millis(100));
    let pull = sock(&ctx, SocketType::Pull);
    pull.bind(&ep).unwrap();
    for i in 0..5u8 {
        assert_eq!(recv_bytes(&pull), [i]);
    }
    drop(pull);
    finishes_within(10000, "ctx.term()", move || ctx.term().unwrap());
}

#[test]
fn a_lingering_connection_ends_when_its_peer_ends_its_stream() {
    // A bound PUSH closes (LINGER -1) with messages its peer is not reading; the peer then
    // shuts down its sending side. libzmq 4.3.4 reads that end of stream and drops the
    // connection, so zmq_ctx_term returns; a lingering connection that stopped reading
    // waited for room that never came. (The same wait, with nothing queued, hung the
    // C perf pair's PULL in zmq_ctx_term one run in a few hundred.)
    let ctx = Context::new();
    let push = ctx.socket(SocketType::Push).unwrap();
    push.set_int(opt::SNDBUF, 4096).unwrap();
    let ep = bind_tcp(&push);
    let mut raw = std::net::TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    raw.write_all(&zmtp_greeting(b"NULL")).unwrap();
    raw.write_all(&zmtp_ready("PULL")).unwrap();
    let mut greeting = [0u8; 64];
    std::io::Read::read_exact(&mut raw, &mut greeting).unwrap();
    let body = vec![b'x'; 64 * 1024];
    for _ in 0..200 {
        push.send(&body, 0).unwrap();
    }
    drop(push);
    std::thread::sleep(Duration::from_millis(50));
    raw.shutdown(std::net::Shutdown::Write).unwrap();
    term(ctx);
    drop(raw);
}

#[test]
fn options_every_libzmq_socket_answers() {
    // pyzmq's test_int_sockopts reads these on every socket type.
    let ctx = Context::new();
    let s = ctx.socket(SocketType::Pub).unwrap();
    assert_eq!(s.get_int(31).unwrap(), 1, "IPV4ONLY");
    assert_eq!(s.get_int(93).unwrap(), 0, "ZAP_ENFORCE_DOMAIN");
    assert_eq!(s.get_int(94).unwrap(), 0, "LOOPBACK_FASTPATH");
    assert_eq!(s.get_int(96).unwrap(), 1, "MULTICAST_LOOP");
    s.set_int(31, 0).unwrap();
    assert_eq!(s.get_int(42).unwrap(), 1, "IPV4ONLY=0 means IPV6=1");
    s.set_int(40, 1).unwrap(); // XPUB_VERBOSE is accepted on PUB, as in libzmq
    assert_eq!(s.get_int(116).unwrap(), 0, "TOPICS_COUNT");
    let sub = ctx.socket(SocketType::Sub).unwrap();
    assert_eq!(sub.get_int(17).unwrap(), 0, "SUB's LINGER defaults to 0");
    drop(s);
    drop(sub);
    ctx.term().unwrap();
}

/// The connection from this process to an ipc PULL with `pids` as its pid filter (the
/// last entry `None`: empty the list), one message sent: whether it arrived. A refused
/// peer is closed at accept with ACCEPT_FAILED, value 0, as libzmq 4.3.4 does (also
/// checked against it by `tests/c/test_ipc_filters.c`).
fn ipc_pid_filter_delivers(name: &str, pids: &[Option<i32>]) -> bool {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    for p in pids {
        let val = p.map(i32::to_ne_bytes);
        pull.set_option(
            opt::IPC_FILTER_PID,
            val.as_ref().map_or(&[][..], |v| &v[..]),
        )
        .unwrap();
    }
    let mon = Monitor::new(&ctx, &pull, &format!("inproc://{name}-mon"));
    let ep = format!("ipc:///tmp/ferromq-{}-{name}", std::process::id());
    pull.bind(&ep).unwrap();
    let push = sock(&ctx, SocketType::Push);
    push.set_int(opt::RECONNECT_IVL, 20).unwrap();
    push.connect(&ep).unwrap();
    push.send(b"x", DONTWAIT).unwrap();
    let got = loop {
        match mon.next(3000).expect("an accept event").0 {
            event::ACCEPT_FAILED => {
                let (value, _) = mon.wait_for(event::ACCEPT_FAILED, 3000);
                assert_eq!(value, 0, "libzmq reports errno 0");
                break pull.recv(DONTWAIT).is_ok();
            }
            event::ACCEPTED => {
                pull.set_int(opt::RCVTIMEO, 3000).unwrap();
                break pull.recv(0).is_ok();
            }
            _ => {}
        }
    };
    drop((push, pull, mon));
    term(ctx);
    got
}

#[test]
fn ipc_pid_filter_refuses_other_processes_and_lists_add_up() {
    let me = std::process::id() as i32;
    // No process here has pid 1 but init, and init does not connect to us.
    assert!(!ipc_pid_filter_delivers("pid-other", &[Some(1)]));
    assert!(ipc_pid_filter_delivers("pid-mine", &[Some(me)]));
    assert!(ipc_pid_filter_delivers("pid-both", &[Some(1), Some(me)]));
    assert!(ipc_pid_filter_delivers("pid-cleared", &[Some(1), None]));
}

/// A SOCKS5 proxy on 127.0.0.1 in a thread: answers the client's greeting with `method`
/// (0xFF refuses), takes user/password when it chose 2, connects to the IPv4 address or
/// name asked for and relays. Returns its `host:port` and what each client wrote before
/// the relay began (greeting, then auth if any, then the CONNECT request).
#[allow(clippy::type_complexity)]
fn socks_proxy(method: u8) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>) {
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        for c in listener.incoming() {
            let Ok(mut c) = c else { return };
            let mut seen = Vec::new();
            let mut take = |c: &mut TcpStream, n: usize| -> Option<Vec<u8>> {
                let mut b = vec![0u8; n];
                c.read_exact(&mut b).ok()?;
                seen.extend_from_slice(&b);
                Some(b)
            };
            let target = (|| {
                let head = take(&mut c, 2)?;
                take(&mut c, usize::from(head[1]))?;
                c.write_all(&[5, method]).ok()?;
                if method == 2 {
                    let ulen = take(&mut c, 2)?[1];
                    take(&mut c, usize::from(ulen))?;
                    let plen = take(&mut c, 1)?[0];
                    take(&mut c, usize::from(plen))?;
                    c.write_all(&[1, 0]).ok()?;
                } else if method != 0 {
                    return None;
                }
                let req = take(&mut c, 4)?;
                let host = match req[3] {
                    1 => take(&mut c, 4)?
                        .iter()
                        .map(u8::to_string)
                        .collect::<Vec<_>>()
                        .join("."),
                    3 => {
                        let n = take(&mut c, 1)?[0];
                        String::from_utf8(take(&mut c, usize::from(n))?).ok()?
                    }
                    _ => return None,
                };
                let p = take(&mut c, 2)?;
                Some((host, u16::from_be_bytes([p[0], p[1]])))
            })();
            log2.lock().unwrap().push(seen);
            let Some((host, port)) = target else { continue };
            let Ok(dest) = TcpStream::connect((host.as_str(), port)) else {
                continue;
            };
            c.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 9]).unwrap();
            let mut up = (c.try_clone().unwrap(), dest.try_clone().unwrap());
            std::thread::spawn(move || std::io::copy(&mut up.0, &mut up.1));
            let mut down = (dest, c);
            std::thread::spawn(move || std::io::copy(&mut down.0, &mut down.1));
        }
    });
    (addr, log)
}

/// A PUSH connecting to a PULL's tcp endpoint (`host` instead of 127.0.0.1 in it if
/// given) through `proxy`, with `user`/`password`: whether its message arrived.
fn through_socks(proxy: &str, host: Option<&str>, user: &str, password: &str) -> bool {
    let ctx = Context::new();
    let pull = sock(&ctx, SocketType::Pull);
    let ep = bind_tcp(&pull);
    let ep = match host {
        Some(h) => ep.replace("127.0.0.1", h),
        None => ep,
    };
    let push = sock(&ctx, SocketType::Push);
    push.set_option(opt::SOCKS_PROXY, proxy.as_bytes()).unwrap();
    push.set_option(opt::SOCKS_USERNAME, user.as_bytes())
        .unwrap();
    push.set_option(opt::SOCKS_PASSWORD, password.as_bytes())
        .unwrap();
    push.set_int(opt::RECONNECT_IVL, 20).unwrap();
    push.set_int(opt::LINGER, 0).unwrap();
    push.connect(&ep).unwrap();
    push.send(b"hello", DONTWAIT).unwrap();
    pull.set_int(opt::RCVTIMEO, 1000).unwrap();
    let got = pull.recv(0).is_ok_and(|m| m.data() == b"hello");
    drop((push, pull));
    term(ctx);
    got
}

#[test]
fn socks_proxy_connects_with_the_bytes_libzmq_sends() {
    // libzmq 4.3.4 through a logging proxy: 05 01 00, then CONNECT 05 01 00 01 + the IPv4
    // address and port; a name goes as type 3 for the proxy to resolve; with a user name,
    // 05 01 02 and RFC 1929's 01 len user len password.
    let (proxy, log) = socks_proxy(0);
    assert!(through_socks(&proxy, None, "", ""));
    let seen = log.lock().unwrap().remove(0);
    assert_eq!(&seen[..3], [5, 1, 0]);
    assert_eq!(&seen[3..11], [5, 1, 0, 1, 127, 0, 0, 1]);
    assert_eq!(seen.len(), 13);

    // A source part first ("source;proxy"), as libzmq's test_socks sets it.
    assert!(through_socks(&format!("127.0.0.1:0;{proxy}"), None, "", ""));
    let seen = log.lock().unwrap().remove(0);
    assert_eq!(&seen[3..11], [5, 1, 0, 1, 127, 0, 0, 1]);

    assert!(through_socks(&proxy, Some("localhost"), "", ""));
    let seen = log.lock().unwrap().remove(0);
    assert_eq!(&seen[3..8], b"\x05\x01\x00\x03\x09");
    assert_eq!(&seen[8..17], b"localhost");

    let (proxy, log) = socks_proxy(2);
    assert!(through_socks(&proxy, None, "alice", "secret"));
    let seen = log.lock().unwrap().remove(0);
    assert_eq!(&seen[..3], [5, 1, 2]);
    assert_eq!(&seen[3..17], b"\x01\x05alice\x06secret");
}

#[test]
fn a_socks_proxy_that_refuses_gets_nothing_through_and_is_retried() {
    let (proxy, log) = socks_proxy(0xff);
    assert!(!through_socks(&proxy, None, "", ""));
    assert!(log.lock().unwrap().len() >= 2, "the connect is retried");
    // No proxy listening at all: the same.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    assert!(!through_socks(&closed.to_string(), None, "", ""));
}
