//! Hostile peers: raw tcp connections to a running ferromq socket that send what a
//! well-behaved ZMTP peer never would. For each case the bad connection must be closed
//! with a monitor event, a well-behaved client on the same socket must keep working, and
//! (for the floods) the process's memory must stay bounded.

mod common;

use common::*;
use ferromq::options::id as opt;
use ferromq::{event, Context, Socket, SocketType};
use ferromq_zmtp::curve::KeyPair;
use ferromq_zmtp::{Engine, EngineConfig, Event as ZEvent, MechanismConfig};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// The harness runs this file's tests on parallel threads of one process, so a test that
/// checks the process's RSS runs `alone()`, the others `shared()`: a flood in one test
/// must not land in another's measurement.
static GATE: RwLock<()> = RwLock::new(());

fn shared() -> RwLockReadGuard<'static, ()> {
    GATE.read().unwrap_or_else(|e| e.into_inner())
}

fn alone() -> RwLockWriteGuard<'static, ()> {
    GATE.write().unwrap_or_else(|e| e.into_inner())
}

/// A CURVE or NULL ROUTER server with a monitor and a well-behaved DEALER client.
struct Target {
    ctx: Context,
    server: Socket,
    mon: Monitor,
    client: Socket,
    addr: String,
    keys: Option<KeyPair>,
}

impl Target {
    fn new(curve: bool, tweak: impl Fn(&Socket)) -> Target {
        let ctx = Context::new();
        let server = sock(&ctx, SocketType::Router);
        // Generous, so a test's own raw handshake is not cut off on a loaded machine; the
        // tests of the timeout set their own.
        server.set_int(opt::HANDSHAKE_IVL, 2000).unwrap();
        tweak(&server);
        let keys = curve.then(|| KeyPair::generate().unwrap());
        if let Some(k) = &keys {
            server.set_int(opt::CURVE_SERVER, 1).unwrap();
            server
                .set_option(opt::CURVE_SECRETKEY, &k.secret[..])
                .unwrap();
        }
        let name = format!("inproc://hostile-mon-{}", std::process::id());
        let mon = Monitor::new(&ctx, &server, &name);
        let ep = bind_tcp(&server);
        let client = sock(&ctx, SocketType::Dealer);
        if let Some(k) = &keys {
            let mine = KeyPair::generate().unwrap();
            client.set_option(opt::CURVE_SERVERKEY, &k.public).unwrap();
            client
                .set_option(opt::CURVE_PUBLICKEY, &mine.public)
                .unwrap();
            client
                .set_option(opt::CURVE_SECRETKEY, &mine.secret[..])
                .unwrap();
        }
        client.connect(&ep).unwrap();
        let t = Target {
            ctx,
            server,
            mon,
            client,
            addr: ep.trim_start_matches("tcp://").to_string(),
            keys,
        };
        t.assert_alive("before");
        t.mon.wait_for(event::HANDSHAKE_SUCCEEDED, 3000);
        t
    }

    /// The good client still gets through, both ways.
    fn assert_alive(&self, tag: &str) {
        self.client.send(tag.as_bytes(), 0).unwrap();
        let id = self
            .server
            .recv(0)
            .expect("server receives from the good client");
        let body = self.server.recv(0).unwrap();
        assert_eq!(body.data(), tag.as_bytes());
        self.server.send(id.data(), ferromq::SNDMORE).unwrap();
        self.server.send(b"reply", 0).unwrap();
        assert_eq!(self.client.recv(0).unwrap().data(), b"reply");
    }

    fn raw(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        s
    }

    /// Waits for a handshake-failure event (returns its code and value), then for the
    /// DISCONNECTED that must follow it.
    fn expect_failure(&self) -> (u16, u32) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut failure = None;
        while Instant::now() < deadline {
            let Some((ev, val, _)) = self.mon.next(200) else {
                continue;
            };
            match ev {
                event::HANDSHAKE_FAILED_PROTOCOL
                | event::HANDSHAKE_FAILED_NO_DETAIL
                | event::HANDSHAKE_FAILED_AUTH => failure = Some((ev, val)),
                event::DISCONNECTED => {
                    if let Some(f) = failure {
                        return f;
                    }
                }
                _ => {}
            }
        }
        panic!("no handshake failure + DISCONNECTED within 5 s (saw {failure:?})");
    }

    /// Waits for a DISCONNECTED event (for connections that failed after the handshake).
    fn expect_disconnected(&self) {
        self.mon.wait_for(event::DISCONNECTED, 5000);
    }

    fn finish(self) {
        self.assert_alive("after");
        drop((self.client, self.server, self.mon));
        self.ctx.term().unwrap();
    }
}

fn eof_within(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
    false
}

/// Completes a NULL handshake on a raw socket and returns it.
fn null_peer(t: &Target) -> TcpStream {
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"NULL", 3)).unwrap();
    s.write_all(&zmtp_ready("DEALER")).unwrap();
    t.mon.wait_for(event::HANDSHAKE_SUCCEEDED, 3000);
    s
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

const CRYPTOGRAPHIC: u32 = 0x1100_0001;
const MECHANISM_MISMATCH: u32 = 0x1100_0002;
const UNEXPECTED_COMMAND: u32 = 0x1000_0001;
const MALFORMED_HELLO: u32 = 0x1000_0013;

#[test]
fn truncated_greeting_then_close() {
    let _gate = shared();
    let t = Target::new(false, |_| {});
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"NULL", 3)[..20]).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(t.expect_failure(), (event::HANDSHAKE_FAILED_NO_DETAIL, 32));
    assert!(eof_within(&mut s));
    t.finish();
}

#[test]
fn greeting_that_never_finishes_times_out() {
    let _gate = shared();
    let t = Target::new(false, |s| s.set_int(opt::HANDSHAKE_IVL, 500).unwrap());
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"NULL", 3)[..11]).unwrap();
    assert_eq!(t.expect_failure(), (event::HANDSHAKE_FAILED_NO_DETAIL, 11));
    assert!(eof_within(&mut s));
    t.finish();
}

#[test]
fn unknown_mechanism() {
    let _gate = shared();
    let t = Target::new(false, |_| {});
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"KERBEROS", 3)).unwrap();
    assert_eq!(
        t.expect_failure(),
        (event::HANDSHAKE_FAILED_PROTOCOL, MECHANISM_MISMATCH)
    );
    assert!(eof_within(&mut s));
    t.finish();
}

#[test]
fn zmtp_2_greeting_with_curve_is_refused() {
    let _gate = shared();
    let t = Target::new(true, |_| {});
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"CURVE", 1)).unwrap();
    // ZMTP 2.0 has no security: as libzmq 4.3.4, the connection ends after our signature
    // and major version (no socket type, nothing of 3.x), with a bare DISCONNECTED.
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    assert_eq!(got.len(), 11, "{got:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        assert!(Instant::now() < deadline, "no DISCONNECTED within 5 s");
        match t.mon.next(200) {
            Some((event::DISCONNECTED, _, _)) => break,
            Some((ev, val, _)) => assert!(
                ev != event::HANDSHAKE_FAILED_PROTOCOL && ev != event::HANDSHAKE_FAILED_NO_DETAIL,
                "handshake failure event {ev:#x} {val:#x}"
            ),
            None => {}
        }
    }
    t.finish();
}

#[test]
fn frame_with_a_2_pow_64_minus_1_length() {
    let _gate = alone();
    let t = Target::new(false, |_| {});
    let mut s = null_peer(&t);
    let before = rss_kib();
    s.write_all(&[0x02, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        .unwrap();
    t.expect_disconnected();
    assert!(eof_within(&mut s));
    assert!(
        rss_kib() < before + 16 * 1024,
        "nothing was allocated for the body"
    );
    t.finish();
}

#[test]
fn frame_above_maxmsgsize() {
    let _gate = shared();
    let t = Target::new(false, |s| {
        s.set_option(opt::MAXMSGSIZE, &1000i64.to_ne_bytes())
            .unwrap()
    });
    let mut s = null_peer(&t);
    let mut frame = vec![0x02];
    frame.extend_from_slice(&2000u64.to_be_bytes());
    frame.extend_from_slice(&[7u8; 2000]);
    let _ = s.write_all(&frame);
    t.expect_disconnected();
    assert!(eof_within(&mut s));
    t.finish();
}

#[test]
fn message_before_ready() {
    let _gate = shared();
    let t = Target::new(false, |_| {});
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"NULL", 3)).unwrap();
    s.write_all(&[0x00, 0x03, b'a', b'b', b'c']).unwrap();
    assert_eq!(
        t.expect_failure(),
        (event::HANDSHAKE_FAILED_PROTOCOL, UNEXPECTED_COMMAND)
    );
    assert!(eof_within(&mut s));
    t.finish();
}

#[test]
fn curve_hello_with_a_bad_box_and_a_short_hello() {
    let _gate = shared();
    let t = Target::new(true, |_| {});
    // Right size, version and layout, but the box was not made for this server.
    let mut hello = vec![0x04, 200, 5];
    hello.extend_from_slice(b"HELLO");
    hello.extend_from_slice(&[1, 0]);
    hello.extend_from_slice(&[0u8; 72]);
    hello.extend_from_slice(&[9u8; 32]);
    hello.extend_from_slice(&1u64.to_be_bytes());
    hello.extend_from_slice(&[0x55; 80]);
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"CURVE", 3)).unwrap();
    s.write_all(&hello).unwrap();
    assert_eq!(
        t.expect_failure(),
        (event::HANDSHAKE_FAILED_PROTOCOL, CRYPTOGRAPHIC)
    );
    assert!(eof_within(&mut s));
    // A HELLO one byte short.
    let mut short = hello.clone();
    short[1] = 199;
    short.pop();
    let mut s = t.raw();
    s.write_all(&zmtp_greeting_major(b"CURVE", 3)).unwrap();
    s.write_all(&short).unwrap();
    assert_eq!(
        t.expect_failure(),
        (event::HANDSHAKE_FAILED_PROTOCOL, MALFORMED_HELLO)
    );
    t.finish();
}

/// Drives a real CURVE client engine over a raw socket, then replays one of its frames.
#[test]
fn curve_replayed_message_is_refused() {
    let _gate = shared();
    let t = Target::new(true, |_| {});
    let keys = t.keys.clone().unwrap();
    let mut engine = Engine::new(EngineConfig {
        socket_type: ferromq::SocketType::Dealer,
        routing_id: Default::default(),
        mechanism: MechanismConfig::CurveClient {
            keys: KeyPair::generate().unwrap(),
            server_key: keys.public,
        },
        null_zap: false,
        max_msg_size: None,
    });
    let mut s = t.raw();
    let mut buf = vec![0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(5);
    while !engine.is_ready() {
        assert!(
            Instant::now() < deadline,
            "CURVE handshake over the raw socket"
        );
        let out = engine.output().to_vec();
        s.write_all(&out).unwrap();
        engine.consume_output(out.len());
        if engine.is_ready() {
            break;
        }
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "server closed during the handshake");
        engine.feed(&buf[..n]);
        while let Some(ev) = engine.poll_event().unwrap() {
            if let ZEvent::Ready(_) = ev {}
        }
    }
    engine.send_message(false, b"once");
    let frame = engine.output().to_vec();
    engine.consume_output(frame.len());
    s.write_all(&frame).unwrap();
    let id = t.server.recv(0).unwrap();
    assert_eq!(t.server.recv(0).unwrap().data(), b"once");
    drop(id);
    s.write_all(&frame).unwrap(); // the same nonce again
    t.expect_disconnected();
    assert!(eof_within(&mut s));
    t.server.set_int(opt::RCVTIMEO, 100).unwrap();
    assert!(
        t.server.recv(0).is_err(),
        "the replay must not be delivered"
    );
    t.server.set_int(opt::RCVTIMEO, 2000).unwrap();
    t.finish();
}

/// Raises this process's open-file limit to at least `need` (up to the hard limit);
/// panics with the limits if that is not enough, so the test fails rather than skips.
fn ensure_fd_limit(need: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit write/read a valid rlimit struct we own.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        if lim.rlim_cur < need {
            lim.rlim_cur = need.min(lim.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        }
    }
    assert!(
        lim.rlim_cur >= need,
        "this test needs {need} file descriptors; the hard limit is {}",
        lim.rlim_max
    );
}

/// Two thousand connections that send nothing: each is closed after HANDSHAKE_IVL,
/// memory returns to where it was, and the good client is served meanwhile.
#[test]
fn many_connections_that_never_handshake() {
    let _gate = alone();
    const IDLE: usize = 2000;
    // Both ends of every connection live in this process.
    ensure_fd_limit(2 * IDLE as u64 + 256);
    let t = Target::new(false, |s| s.set_int(opt::HANDSHAKE_IVL, 300).unwrap());
    let before = rss_kib();
    let mut conns: Vec<TcpStream> = (0..IDLE).map(|_| t.raw()).collect();
    t.assert_alive("during");
    let mut closed = 0;
    for c in &mut conns {
        if eof_within(c) {
            closed += 1;
        }
    }
    assert_eq!(closed, conns.len(), "every idle connection is closed");
    drop(conns);
    let after = rss_kib();
    assert!(
        after < before + 32 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
    t.finish();
}

/// An XPUB fed thousands of distinct subscriptions and one enormous topic: the huge one
/// is refused by MAXMSGSIZE, the rest cost bounded memory, and a real subscriber works.
#[test]
fn subscription_flood_on_xpub() {
    let _gate = alone();
    let ctx = Context::new();
    let xpub = sock(&ctx, SocketType::XPub);
    xpub.set_option(opt::MAXMSGSIZE, &65536i64.to_ne_bytes())
        .unwrap();
    let mon = Monitor::new(&ctx, &xpub, "inproc://hostile-xpub-mon");
    let ep = bind_tcp(&xpub);
    let sub = sock(&ctx, SocketType::Sub);
    sub.set_option(opt::SUBSCRIBE, b"news").unwrap();
    sub.connect(&ep).unwrap();
    assert_eq!(xpub.recv(0).unwrap().data(), b"\x01news");

    let before = rss_kib();
    let mut s = TcpStream::connect(ep.trim_start_matches("tcp://")).unwrap();
    s.write_all(&zmtp_greeting_major(b"NULL", 3)).unwrap();
    s.write_all(&zmtp_ready("SUB")).unwrap();
    let mut flood = Vec::new();
    for i in 0..10_000u32 {
        let topic = format!("topic-{i:08}-{}", "x".repeat(64));
        let body_len = 1 + 9 + topic.len();
        flood.extend_from_slice(&[0x04, body_len as u8, 9]);
        flood.extend_from_slice(b"SUBSCRIBE");
        flood.extend_from_slice(topic.as_bytes());
    }
    s.write_all(&flood).unwrap();
    let mut seen = 0;
    while seen < 10_000 {
        let m = xpub.recv(0).expect("XPUB reports each new subscription");
        assert_eq!(m.data()[0], 1);
        seen += 1;
    }
    // One topic of 1 MiB: above MAXMSGSIZE, the connection goes.
    let mut huge = vec![0x06];
    huge.extend_from_slice(&(1u64 + 9 + (1 << 20)).to_be_bytes());
    huge.push(9);
    huge.extend_from_slice(b"SUBSCRIBE");
    let _ = s.write_all(&huge);
    mon.wait_for(event::DISCONNECTED, 5000);
    let after = rss_kib();
    assert!(
        after < before + 64 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
    xpub.send(b"news: still here", 0).unwrap();
    assert_eq!(sub.recv(0).unwrap().data(), b"news: still here");
    drop((sub, xpub, mon));
    ctx.term().unwrap();
}
