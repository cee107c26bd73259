//! The I/O driver over a real socket: a ferromq socket bound to an ipc endpoint (Linux
//! abstract namespace) or a loopback tcp port takes arbitrary bytes from a raw stream,
//! written in chunks of fuzzed size, through the same I/O thread, connection code and handshake a tcp or ipc
//! peer meets. Then the raw peer goes away and a well-behaved peer of a matching type
//! connects with the socket's mechanism. Checked:
//!
//! * a message from the good peer still arrives (nothing the bad peer sent broke the
//!   socket, the listener or the I/O thread);
//! * every connection the socket accepted is reported DISCONNECTED once its peer is gone
//!   (the raw one whatever it sent, before the good one connects; the good one after it
//!   closes), by the same fd its ACCEPTED named;
//! * no panic anywhere, on the I/O thread included (a fuzz build aborts on any).
//!
//! Input: [socket kind] [flags: mechanism = flags % 3, 0x10 ZMQ_MAXMSGSIZE 100, 0x20 tcp]
//! [chunk size] then the raw peer's bytes.
#![no_main]

use ferromq::options::id as opt;
use ferromq::{event, Context, Error, Socket, SocketType, DONTWAIT};
use ferromq_fuzz::Input;
use ferromq_zmtp::curve::KeyPair;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeSet;
use std::io::Write;
use std::net::TcpStream;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// One context for the whole run (its I/O thread is part of what is under test).
fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| {
        // libFuzzer's main is not Rust's, which would have ignored SIGPIPE: a write to a
        // peer that closed must fail, not end the process.
        // SAFETY: setting a signal's disposition to "ignore" runs no handler code.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        let ctx = Context::new();
        start_zap_handler(&ctx);
        ctx
    })
}

/// A ZAP handler that lets everyone in (PLAIN needs one to admit anybody; CURVE asks it
/// too once there is one), so the raw peer's handshakes reach ZAP as well.
fn start_zap_handler(ctx: &Context) {
    let zap = ctx.socket(SocketType::Rep).expect("ZAP socket");
    zap.bind("inproc://zeromq.zap.01").expect("ZAP bind");
    std::thread::spawn(move || loop {
        // The context is never terminated, so the only failure is a signal's EINTR, as
        // libzmq's (libFuzzer's timeout timer is one): then the call is made again.
        let req = match zap.recv_multipart(0) {
            Ok(req) => req,
            Err(Error::Interrupted) => continue,
            Err(e) => panic!("ZAP handler's receive: {e:?}"),
        };
        let request_id = req.get(1).map(|m| m.data().to_vec()).unwrap_or_default();
        let reply: [&[u8]; 6] = [b"1.0", &request_id, b"200", b"OK", b"user", b""];
        loop {
            match zap.send_multipart(reply.map(|f| f.to_vec()), 0) {
                Ok(()) => break,
                Err(Error::Interrupted) => continue,
                Err(e) => panic!("ZAP handler's reply: {e:?}"),
            }
        }
    });
}

/// The socket under test, the good peer's type, and how the good peer's message is seen.
#[derive(Clone, Copy)]
enum Kind {
    Pair,
    Pull,
    Router,
    Rep,
    Dealer,
    XPub,
    Sub,
    Stream,
}

const KINDS: [Kind; 8] = [
    Kind::Pair,
    Kind::Pull,
    Kind::Router,
    Kind::Rep,
    Kind::Dealer,
    Kind::XPub,
    Kind::Sub,
    Kind::Stream,
];

impl Kind {
    fn types(self) -> (SocketType, SocketType) {
        match self {
            Kind::Pair => (SocketType::Pair, SocketType::Pair),
            Kind::Pull => (SocketType::Pull, SocketType::Push),
            Kind::Router => (SocketType::Router, SocketType::Dealer),
            Kind::Rep => (SocketType::Rep, SocketType::Req),
            Kind::Dealer => (SocketType::Dealer, SocketType::Dealer),
            Kind::XPub => (SocketType::XPub, SocketType::Sub),
            Kind::Sub => (SocketType::Sub, SocketType::Pub),
            Kind::Stream => (SocketType::Stream, SocketType::Stream),
        }
    }
}

const MARKER: &[u8] = b"good peer's message";
/// How long the good peer's message and the DISCONNECTED events may take (a loaded
/// machine; the normal case is well under a millisecond).
const PATIENCE: Duration = Duration::from_secs(5);

fn curve_server() -> &'static KeyPair {
    static K: OnceLock<KeyPair> = OnceLock::new();
    K.get_or_init(|| KeyPair::from_secret([7; 32]))
}

fn curve_client() -> &'static KeyPair {
    static K: OnceLock<KeyPair> = OnceLock::new();
    K.get_or_init(|| KeyPair::from_secret([9; 32]))
}

fn sock(kind: SocketType) -> Socket {
    let s = ctx().socket(kind).expect("socket");
    s.set_int(opt::LINGER, 0).unwrap();
    s
}

/// Mechanism (0 NULL, 1 PLAIN, 2 CURVE) for the server side or the client side.
fn set_mechanism(s: &Socket, mech: u8, server: bool) {
    match (mech, server) {
        (1, true) => s.set_int(opt::PLAIN_SERVER, 1).unwrap(),
        (1, false) => {
            s.set_option(opt::PLAIN_USERNAME, b"user").unwrap();
            s.set_option(opt::PLAIN_PASSWORD, b"pass").unwrap();
        }
        (2, true) => {
            s.set_int(opt::CURVE_SERVER, 1).unwrap();
            s.set_option(opt::CURVE_SECRETKEY, &curve_server().secret[..])
                .unwrap();
        }
        (2, false) => {
            s.set_option(opt::CURVE_SERVERKEY, &curve_server().public)
                .unwrap();
            s.set_option(opt::CURVE_PUBLICKEY, &curve_client().public)
                .unwrap();
            s.set_option(opt::CURVE_SECRETKEY, &curve_client().secret[..])
                .unwrap();
        }
        _ => {}
    }
}

/// Reads monitor events; tracks which accepted fds are still open.
struct Watch {
    pair: Socket,
    open: BTreeSet<u32>,
    accepted: usize,
    /// Every event so far (code, value), for a failure's message.
    seen: Vec<(u16, u32)>,
}

impl Watch {
    fn new(s: &Socket, n: u64) -> Watch {
        let name = format!("inproc://wire-monitor-{n}");
        s.monitor(Some(&name), event::ALL).unwrap();
        let pair = sock(SocketType::Pair);
        pair.connect(&name).unwrap();
        Watch {
            pair,
            open: BTreeSet::new(),
            accepted: 0,
            seen: Vec::new(),
        }
    }

    /// Takes the events queued now (`wait_ms` > 0: waits that long for one).
    fn take(&mut self, wait_ms: i32) {
        self.pair.set_int(opt::RCVTIMEO, wait_ms).unwrap();
        while let Ok(head) = self.pair.recv(0) {
            let d = head.data();
            assert_eq!(d.len(), 6, "monitor event frame is 6 bytes");
            let ev = u16::from_ne_bytes([d[0], d[1]]);
            let val = u32::from_ne_bytes([d[2], d[3], d[4], d[5]]);
            let _endpoint = recv_again(&self.pair);
            self.seen.push((ev, val));
            match ev {
                event::ACCEPTED => {
                    assert!(self.open.insert(val), "fd {val} accepted twice");
                    self.accepted += 1;
                }
                event::DISCONNECTED => {
                    assert!(
                        self.open.remove(&val),
                        "fd {val} disconnected, never accepted"
                    );
                }
                _ => {}
            }
            self.pair.set_int(opt::RCVTIMEO, 0).unwrap();
        }
    }

    /// Waits until `n` connections were accepted and every one was reported closed,
    /// reading what reaches `s` meanwhile as an application would: a connection whose
    /// messages fill the socket's queue stops being read, and so only sees its peer's
    /// end once there is room again (libzmq's engine stops reading there too).
    fn all_closed(&mut self, n: usize, kind: Kind, s: &Socket) {
        let until = Instant::now() + PATIENCE;
        loop {
            drain(kind, s);
            self.take(10);
            if self.accepted >= n && self.open.is_empty() {
                return;
            }
            assert!(
                Instant::now() < until,
                "accepted {} (expected {n}), still open: {:?}; events {:x?}",
                self.accepted,
                self.open,
                self.seen
            );
        }
    }
}

/// Receives everything queued on `s` now (a REP answers each request; the replies go
/// to a peer that is gone).
fn drain(kind: Kind, s: &Socket) {
    while s.recv_multipart(DONTWAIT).is_ok() {
        if let Kind::Rep = kind {
            let _ = s.send(b"", DONTWAIT);
        }
    }
}

/// Writes `bytes` in pieces of `chunk` to the non-blocking `raw` stream; while the
/// stream takes no more, reads what `s` has queued (it stops reading a connection while
/// its queue is full). Stops early if the socket drops the connection. Panics if the
/// writes stall for `PATIENCE` although the queue is read.
fn write_reading(raw: &mut dyn Write, bytes: &[u8], chunk: usize, kind: Kind, s: &Socket) {
    for piece in bytes.chunks(chunk) {
        let mut rest = piece;
        let mut stalled_since: Option<Instant> = None;
        while !rest.is_empty() {
            match raw.write(rest) {
                Ok(n) => {
                    rest = &rest[n..];
                    stalled_since = None;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let since = *stalled_since.get_or_insert_with(Instant::now);
                    assert!(
                        since.elapsed() < PATIENCE,
                        "raw writes stalled for {PATIENCE:?} while the socket's queue was read"
                    );
                    drain(kind, s);
                    std::thread::sleep(Duration::from_micros(200));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // The socket dropped us: fine, what matters is that it says so.
                Err(_) => return,
            }
        }
    }
}

/// A blocking receive, made again when a signal interrupts it (libFuzzer's timer).
fn recv_again(s: &Socket) -> ferromq::Msg {
    loop {
        match s.recv(0) {
            Ok(m) => return m,
            Err(Error::Interrupted) => continue,
            Err(e) => panic!("receive: {e:?}"),
        }
    }
}

/// Receives on `s` until the good peer's message shows up (a PUB peer repeats it until
/// its subscriber's subscription has arrived).
fn expect_marker(kind: Kind, s: &Socket, good: &Socket, watch: &mut Watch) {
    let until = Instant::now() + PATIENCE;
    loop {
        if let Kind::Sub = kind {
            let _ = good.send(MARKER, DONTWAIT);
        }
        match s.recv_multipart(DONTWAIT) {
            Ok(parts) => {
                let last = parts.last().map(|m| m.data().to_vec()).unwrap_or_default();
                let found = match kind {
                    Kind::XPub => last.first() == Some(&1) && &last[1..] == MARKER,
                    _ => last == MARKER,
                };
                if found {
                    if let Kind::Rep = kind {
                        s.send(b"reply", 0).unwrap();
                        good.set_int(opt::RCVTIMEO, PATIENCE.as_millis() as i32)
                            .unwrap();
                        assert_eq!(recv_again(good).data(), b"reply");
                    }
                    return;
                }
                if let Kind::Rep = kind {
                    // A request of the raw peer's: answered (the reply goes nowhere).
                    let _ = s.send(b"", DONTWAIT);
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
        if Instant::now() >= until {
            watch.take(0);
            panic!(
                "the good peer's message never arrived; events {:x?}",
                watch.seen
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    static RUN: AtomicU64 = AtomicU64::new(0);
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    let mut input = Input::new(data);
    let kind = KINDS[usize::from(input.byte()) % KINDS.len()];
    let flags = input.byte();
    let chunk = usize::from(input.byte()).max(1);
    let bytes = input.take(usize::MAX);
    let (ours, theirs) = kind.types();
    // STREAM speaks no ZMTP, so no mechanism either.
    let mech = if let Kind::Stream = kind {
        0
    } else {
        flags % 3
    };

    let s = sock(ours);
    set_mechanism(&s, mech, true);
    if flags & 0x10 != 0 {
        s.set_option(opt::MAXMSGSIZE, &100i64.to_ne_bytes())
            .unwrap();
    }
    if let Kind::Sub = kind {
        s.set_option(opt::SUBSCRIBE, b"").unwrap();
    }
    let mut watch = Watch::new(&s, n);
    // Flag 0x20: tcp on loopback (its own listener and connection set-up), otherwise ipc
    // in the abstract namespace (no files, no ports in TIME_WAIT).
    let endpoint = if flags & 0x20 != 0 {
        s.bind("tcp://127.0.0.1:*").unwrap();
        s.last_endpoint().unwrap()
    } else {
        let name = format!("ferromq-fuzz-wire-{}-{n}", std::process::id());
        s.bind(&format!("ipc://@{name}")).unwrap();
        format!("ipc://@{name}")
    };

    // Non-blocking: a socket whose queue is full stops reading its connection (as
    // libzmq's does), and the raw writes then wait for the queue to be read, here.
    let mut raw: Box<dyn Write> = match endpoint.strip_prefix("ipc://@") {
        Some(name) => {
            let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            let stream = UnixStream::connect_addr(&addr).expect("raw ipc connect");
            stream.set_nonblocking(true).unwrap();
            Box::new(stream)
        }
        None => {
            let at = endpoint.strip_prefix("tcp://").unwrap();
            let stream = TcpStream::connect(at).expect("raw tcp connect");
            stream.set_nonblocking(true).unwrap();
            Box::new(stream)
        }
    };
    write_reading(&mut raw, &bytes, chunk, kind, &s);
    drop(raw);
    // The raw peer is gone, and said to be, before the good one comes: a PAIR takes one
    // peer at a time, an XPUB passes on only a topic's first subscription.
    watch.all_closed(1, kind, &s);

    let good = sock(theirs);
    set_mechanism(&good, mech, false);
    if let Kind::XPub = kind {
        good.set_option(opt::SUBSCRIBE, MARKER).unwrap();
    }
    good.connect(&endpoint).unwrap();
    match kind {
        Kind::Sub | Kind::XPub => {}
        Kind::Stream => {
            // A STREAM peer's first frame is the routing id of the connection to write.
            let until = Instant::now() + PATIENCE;
            let id = loop {
                if let Ok(id) = good.recv(DONTWAIT) {
                    let _notify = recv_again(&good);
                    break id;
                }
                assert!(Instant::now() < until, "STREAM connect never completed");
                std::thread::sleep(Duration::from_millis(1));
            };
            good.send(id.data(), ferromq::SNDMORE).unwrap();
            good.send(MARKER, 0).unwrap();
        }
        _ => good.send(MARKER, 0).unwrap(),
    }
    expect_marker(kind, &s, &good, &mut watch);
    drop(good);

    watch.all_closed(2, kind, &s);
    drop(watch);
    drop(s);
});
