//! PLAIN and CURVE across the two libraries: handshakes and traffic in both directions
//! over tcp and ipc, with and without a ZAP handler, and the failures a wrong key or
//! password must produce — the same monitor events on both sides as libzmq reports.
//!
//! Each scenario runs with the server from ferromq and the client from libzmq, the
//! reverse, and libzmq on both sides (`reference`, which pins down libzmq's behaviour).

use ferromq_interop::{
    monitor, parts, wait_event, zmq, AnySocket, Harness, Lib, Sock, SocketType, Transport,
};
use ferromq_zmtp::curve::KeyPair;
use ferromq_zmtp::z85;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use SocketType::*;

macro_rules! combos {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_server_libzmq_client() {
                $scenario(Lib::Ferro, Lib::Zmq);
            }
            #[test]
            fn libzmq_server_ferro_client() {
                $scenario(Lib::Zmq, Lib::Ferro);
            }
            #[test]
            fn reference_libzmq_both() {
                $scenario(Lib::Zmq, Lib::Zmq);
            }
        }
    )*};
}

combos! {
    curve_tcp_with_zap => curve_tcp_with_zap;
    curve_ipc_without_zap => curve_ipc_without_zap;
    curve_wrong_server_key => curve_wrong_server_key;
    curve_client_refused_by_zap => curve_client_refused_by_zap;
    plain_tcp_with_zap => plain_tcp_with_zap;
    plain_ipc_wrong_password => plain_ipc_wrong_password;
    plain_without_zap_handler => plain_without_zap_handler;
    mechanism_mismatch => mechanism_mismatch;
    null_with_domain_asks_zap => null_with_domain_asks_zap;
    zap_metadata_overrides_peer_properties => zap_metadata_overrides_peer_properties;
}

/// A ZAP handler (a REP socket at inproc://zeromq.zap.01) answering with `decide`.
struct ZapHandler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Vec<Vec<u8>>>>>,
}

type Decide = fn(&[Vec<u8>]) -> (&'static [u8], &'static [u8]);

impl ZapHandler {
    fn start(h: &Harness, lib: Lib, decide: Decide) -> ZapHandler {
        let rep = h.socket(lib, Rep);
        rep.set_int(zmq::RCVTIMEO, 50).unwrap();
        rep.bind("inproc://zeromq.zap.01")
            .expect("bind ZAP handler");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let Ok(req) = rep.recv_parts(0) else { continue };
                let (status, user) = decide(&req);
                // Metadata: Identity = the request's identity frame (pebbe/zmq4's tests
                // do this), and one property of our own.
                let mut meta = Vec::new();
                for (k, v) in [(&b"Identity"[..], &req[4][..]), (b"Hello", b"World")] {
                    meta.push(k.len() as u8);
                    meta.extend_from_slice(k);
                    meta.extend_from_slice(&(v.len() as u32).to_be_bytes());
                    meta.extend_from_slice(v);
                }
                let reply = [
                    b"1.0".to_vec(),
                    req[1].clone(),
                    status.to_vec(),
                    b"OK".to_vec(),
                    user.to_vec(),
                    meta,
                ];
                rep.send_parts(&reply).expect("ZAP reply");
                seen.push(req);
            }
            seen
        });
        ZapHandler {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the handler and returns the requests it answered.
    fn requests(mut self) -> Vec<Vec<Vec<u8>>> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .unwrap()
            .join()
            .expect("ZAP handler panicked")
    }
}

impl Drop for ZapHandler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn allow_alice(req: &[Vec<u8>]) -> (&'static [u8], &'static [u8]) {
    match req[5].as_slice() {
        b"PLAIN" if req[6] == b"alice" && req[7] == b"s3cret" => (b"200", b"alice"),
        b"CURVE" | b"NULL" => (b"200", b"curve-user"),
        _ => (b"400", b""),
    }
}

fn deny_all(_: &[Vec<u8>]) -> (&'static [u8], &'static [u8]) {
    (b"400", b"")
}

fn curve_server(s: &dyn AnySocket, keys: &KeyPair) {
    s.set_int(zmq::CURVE_SERVER, 1).unwrap();
    // Z85 with its NUL, as C programs pass it.
    let mut z = z85::encode(&keys.secret[..]).unwrap().into_bytes();
    z.push(0);
    s.set_bytes(zmq::CURVE_SECRETKEY, &z).unwrap();
}

fn curve_client(s: &dyn AnySocket, server_public: &[u8; 32]) -> KeyPair {
    let mine = KeyPair::generate().unwrap();
    s.set_bytes(zmq::CURVE_SERVERKEY, server_public).unwrap();
    s.set_bytes(zmq::CURVE_PUBLICKEY, &mine.public).unwrap();
    s.set_bytes(zmq::CURVE_SECRETKEY, &mine.secret[..]).unwrap();
    mine
}

/// DEALER client to ROUTER server, both ways, checking the server sees `user_id`.
fn exchange(server: &Sock, client: &Sock, user_id: Option<&str>) {
    client
        .send_parts(&parts(&[b"hello", b"secure world"]))
        .expect("client send");
    let (id, _, _) = server.recv_props(0, &[]).expect("server recv id");
    let (body, more, props) = server.recv_props(0, &["User-Id"]).expect("server recv");
    assert_eq!(body, b"hello");
    assert!(more);
    assert_eq!(props[0].as_deref(), user_id, "User-Id metadata");
    assert_eq!(server.recv(0).unwrap().0, b"secure world");
    let big = ferromq_interop::pattern(100_000, 7);
    server.send_parts(&[id, big.clone()]).expect("server send");
    assert_eq!(client.recv_parts(0).expect("client recv"), vec![big]);
}

fn curve_tcp_with_zap(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let zap = ZapHandler::start(&h, server_lib, allow_alice);
    let keys = KeyPair::generate().unwrap();
    let server = h.socket(server_lib, Router);
    curve_server(server.as_ref(), &keys);
    let smon = monitor(&h, server_lib, server.as_ref());
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    let mine = curve_client(client.as_ref(), &keys.public);
    let cmon = monitor(&h, client_lib, client.as_ref());
    client.connect(&ep).unwrap();
    assert_eq!(wait_event(&smon, zmq::EVENT_HANDSHAKE_SUCCEEDED), Some(0));
    assert_eq!(wait_event(&cmon, zmq::EVENT_HANDSHAKE_SUCCEEDED), Some(0));
    exchange(&server, &client, Some("curve-user"));
    let reqs = zap.requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req[0], b"1.0");
    assert_eq!(req[3], b"127.0.0.1", "address");
    assert_eq!(req[5], b"CURVE");
    assert_eq!(req[6], mine.public.to_vec(), "the client's permanent key");
}

fn curve_ipc_without_zap(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let keys = KeyPair::generate().unwrap();
    let server = h.socket(server_lib, Router);
    curve_server(server.as_ref(), &keys);
    let ep = h.bind(server.as_ref(), Transport::Ipc);
    let client = h.socket(client_lib, Dealer);
    curve_client(client.as_ref(), &keys.public);
    client.connect(&ep).unwrap();
    // No ZAP handler: CURVE encrypts without authenticating (libzmq's default).
    exchange(&server, &client, None);
}

fn curve_wrong_server_key(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let keys = KeyPair::generate().unwrap();
    let server = h.socket(server_lib, Router);
    curve_server(server.as_ref(), &keys);
    let smon = monitor(&h, server_lib, server.as_ref());
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    let wrong = KeyPair::generate().unwrap();
    curve_client(client.as_ref(), &wrong.public);
    client.connect(&ep).unwrap();
    let _ = client.send(b"must not arrive", zmq::DONTWAIT);
    assert_eq!(
        wait_event(&smon, zmq::EVENT_HANDSHAKE_FAILED_PROTOCOL),
        Some(0x1100_0001),
        "ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC"
    );
    server.set_int(zmq::RCVTIMEO, 200).unwrap();
    assert!(
        server.recv(0).is_err(),
        "nothing may pass a failed handshake"
    );
}

fn curve_client_refused_by_zap(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let _zap = ZapHandler::start(&h, server_lib, deny_all);
    let keys = KeyPair::generate().unwrap();
    let server = h.socket(server_lib, Router);
    curve_server(server.as_ref(), &keys);
    let smon = monitor(&h, server_lib, server.as_ref());
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    curve_client(client.as_ref(), &keys.public);
    let cmon = monitor(&h, client_lib, client.as_ref());
    client.connect(&ep).unwrap();
    assert_eq!(
        wait_event(&smon, zmq::EVENT_HANDSHAKE_FAILED_AUTH),
        Some(400)
    );
    assert_eq!(
        wait_event(&cmon, zmq::EVENT_HANDSHAKE_FAILED_AUTH),
        Some(400)
    );
}

fn plain_client(s: &dyn AnySocket, user: &[u8], pass: &[u8]) {
    s.set_bytes(zmq::PLAIN_USERNAME, user).unwrap();
    s.set_bytes(zmq::PLAIN_PASSWORD, pass).unwrap();
}

fn plain_tcp_with_zap(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let zap = ZapHandler::start(&h, server_lib, allow_alice);
    let server = h.socket(server_lib, Router);
    server.set_int(zmq::PLAIN_SERVER, 1).unwrap();
    server.set_bytes(zmq::ZAP_DOMAIN, b"test-domain").unwrap();
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    plain_client(client.as_ref(), b"alice", b"s3cret");
    client.connect(&ep).unwrap();
    exchange(&server, &client, Some("alice"));
    let reqs = zap.requests();
    assert_eq!(reqs[0][2], b"test-domain");
    assert_eq!(reqs[0][5], b"PLAIN");
    assert_eq!(reqs[0][6..], [b"alice".to_vec(), b"s3cret".to_vec()]);
}

fn plain_ipc_wrong_password(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let zap = ZapHandler::start(&h, server_lib, allow_alice);
    let server = h.socket(server_lib, Router);
    server.set_int(zmq::PLAIN_SERVER, 1).unwrap();
    let smon = monitor(&h, server_lib, server.as_ref());
    let ep = h.bind(server.as_ref(), Transport::Ipc);
    let client = h.socket(client_lib, Dealer);
    plain_client(client.as_ref(), b"alice", b"guess");
    let cmon = monitor(&h, client_lib, client.as_ref());
    client.connect(&ep).unwrap();
    assert_eq!(
        wait_event(&smon, zmq::EVENT_HANDSHAKE_FAILED_AUTH),
        Some(400)
    );
    assert_eq!(
        wait_event(&cmon, zmq::EVENT_HANDSHAKE_FAILED_AUTH),
        Some(400)
    );
    // An ipc peer's address is its credentials (here this process's own).
    let reqs = zap.requests();
    assert_eq!(reqs.len(), 1);
    // SAFETY: getuid and getgid have no preconditions and cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let want = format!("localhost:{uid}:{gid}:{}", std::process::id());
    assert_eq!(reqs[0][3], want.as_bytes(), "address");
}

fn plain_without_zap_handler(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let server = h.socket(server_lib, Router);
    server.set_int(zmq::PLAIN_SERVER, 1).unwrap();
    let smon = monitor(&h, server_lib, server.as_ref());
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    plain_client(client.as_ref(), b"alice", b"s3cret");
    client.connect(&ep).unwrap();
    assert_eq!(
        wait_event(&smon, zmq::EVENT_HANDSHAKE_FAILED_NO_DETAIL),
        Some(libc_efault())
    );
}

fn libc_efault() -> u32 {
    14
}

fn mechanism_mismatch(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let keys = KeyPair::generate().unwrap();
    let server = h.socket(server_lib, Router);
    curve_server(server.as_ref(), &keys);
    let smon = monitor(&h, server_lib, server.as_ref());
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    plain_client(client.as_ref(), b"alice", b"s3cret");
    let cmon = monitor(&h, client_lib, client.as_ref());
    client.connect(&ep).unwrap();
    let code = Some(0x1100_0002); // ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
                                  // libzmq closes as soon as it sees the other mechanism, before the rest of its own
                                  // greeting has gone out, so only a peer that received libzmq's whole greeting can
                                  // name the mismatch: the libzmq side always does.
    if server_lib == Lib::Zmq {
        assert_eq!(
            wait_event(&smon, zmq::EVENT_HANDSHAKE_FAILED_PROTOCOL),
            code
        );
    }
    if client_lib == Lib::Zmq {
        assert_eq!(
            wait_event(&cmon, zmq::EVENT_HANDSHAKE_FAILED_PROTOCOL),
            code
        );
    }
    server.set_int(zmq::RCVTIMEO, 200).unwrap();
    let _ = client.send(b"must not arrive", zmq::DONTWAIT);
    assert!(
        server.recv(0).is_err(),
        "nothing may pass a failed handshake"
    );
}

fn null_with_domain_asks_zap(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let zap = ZapHandler::start(&h, server_lib, allow_alice);
    let server = h.socket(server_lib, Router);
    server.set_bytes(zmq::ZAP_DOMAIN, b"null-domain").unwrap();
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    client.connect(&ep).unwrap();
    exchange(&server, &client, Some("curve-user"));
    let reqs = zap.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0][5], b"NULL");
    assert_eq!(reqs[0].len(), 6, "NULL has no credentials");
}

/// Properties from the ZAP reply win over the peer's READY properties of the same name,
/// as in libzmq (pebbe/zmq4's TestAuthStart depends on it).
fn zap_metadata_overrides_peer_properties(server_lib: Lib, client_lib: Lib) {
    let h = Harness::new();
    let _zap = ZapHandler::start(&h, server_lib, allow_alice);
    let server = h.socket(server_lib, Router);
    server.set_bytes(zmq::ROUTING_ID, b"Server1").unwrap();
    server.set_int(zmq::PLAIN_SERVER, 1).unwrap();
    let ep = h.bind(server.as_ref(), Transport::Tcp);
    let client = h.socket(client_lib, Dealer);
    client.set_bytes(zmq::ROUTING_ID, b"Client1").unwrap();
    plain_client(client.as_ref(), b"alice", b"s3cret");
    client.connect(&ep).unwrap();
    client.send(b"hi", 0).unwrap();
    let (id, _, _) = server.recv_props(0, &[]).unwrap();
    assert_eq!(id, b"Client1");
    let (body, _, props) = server
        .recv_props(0, &["Identity", "Hello", "Socket-Type", "User-Id"])
        .unwrap();
    assert_eq!(body, b"hi");
    assert_eq!(props[0].as_deref(), Some("Server1"), "Identity from ZAP");
    assert_eq!(props[1].as_deref(), Some("World"));
    assert_eq!(props[2].as_deref(), Some("DEALER"));
    assert_eq!(props[3].as_deref(), Some("alice"));
}

/// A peer that drops or stalls during the handshake: libzmq reports
/// HANDSHAKE_FAILED_NO_DETAIL before DISCONNECTED; the value is checked to match.
#[test]
fn handshake_dropped_or_timed_out_events_match_libzmq() {
    use std::io::Write;
    let mut seen = Vec::new();
    for lib in [Lib::Zmq, Lib::Ferro] {
        let h = Harness::new();
        let server = h.socket(lib, Pull);
        server
            .set_int(56 /* ZMQ_HANDSHAKE_IVL is 66 */ + 10, 300)
            .unwrap();
        let mon = monitor(&h, lib, server.as_ref());
        let ep = h.bind(server.as_ref(), Transport::Tcp);
        let addr = ep.trim_start_matches("tcp://").to_string();
        // 1: half a greeting, then close.
        let mut raw = std::net::TcpStream::connect(&addr).unwrap();
        raw.write_all(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3])
            .unwrap();
        // Half-close and read to the end rather than drop: closing with the server's
        // greeting unread would reset the connection (ECONNRESET instead of an orderly
        // end) whenever the greeting happened to arrive first.
        raw.shutdown(std::net::Shutdown::Write).unwrap();
        raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = std::io::copy(&mut raw, &mut std::io::sink());
        drop(raw);
        let closed = collect_until_disconnected(&mon);
        // 2: half a greeting, then silence until HANDSHAKE_IVL.
        let mut raw = std::net::TcpStream::connect(&addr).unwrap();
        raw.write_all(&[0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3])
            .unwrap();
        let stalled = collect_until_disconnected(&mon);
        drop(raw);
        seen.push((lib, closed, stalled));
    }
    let (_, zc, zs) = &seen[0];
    let (_, fc, fs) = &seen[1];
    assert_eq!(
        fc, zc,
        "peer closed mid-handshake: ferromq vs libzmq events"
    );
    assert_eq!(fs, zs, "handshake timed out: ferromq vs libzmq events");
}

/// Event codes (and NO_DETAIL values) up to and including DISCONNECTED.
fn collect_until_disconnected(m: &Sock) -> Vec<(u16, Option<u32>)> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let Ok(frames) = m.recv_parts(0) else { break };
        let head = &frames[0];
        let event = u16::from_le_bytes([head[0], head[1]]);
        let value = u32::from_le_bytes([head[2], head[3], head[4], head[5]]);
        // fd numbers differ between runs; keep values only where they are errnos/codes.
        let keep = matches!(event, 0x0800 | 0x2000 | 0x4000);
        if event == 0x0008 {
            continue; // LISTENING
        }
        out.push((event, keep.then_some(value)));
        if event == 0x0200 {
            break;
        }
    }
    out
}
