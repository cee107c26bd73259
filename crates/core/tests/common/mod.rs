//! Helpers shared by the core integration tests.
#![allow(dead_code)] // each test file uses a subset

use ferromq::options::id as opt;
use ferromq::{event, Context, OptionValue, Socket, SocketType};
use std::time::{Duration, Instant};

/// A socket with RCVTIMEO 2 s (a broken peer fails instead of hanging) and LINGER 0.
pub fn sock(ctx: &Context, kind: SocketType) -> Socket {
    let s = ctx.socket(kind).unwrap();
    s.set_int(opt::RCVTIMEO, 2000).unwrap();
    s.set_int(opt::LINGER, 0).unwrap();
    s
}

/// ZMQ_LAST_ENDPOINT without its NUL.
pub fn last_endpoint(s: &Socket) -> String {
    let ep = s.last_endpoint().unwrap();
    // The option's bytes (what the C API returns) say the same.
    match s.get_option(opt::LAST_ENDPOINT).unwrap() {
        OptionValue::Str(e) => assert_eq!(e, ep.as_bytes()),
        _ => panic!("LAST_ENDPOINT is a string"),
    }
    ep
}

/// Binds to an ephemeral tcp port on loopback and returns the endpoint.
pub fn bind_tcp(s: &Socket) -> String {
    s.bind("tcp://127.0.0.1:*").unwrap();
    last_endpoint(s)
}

pub type Event = (u16, u32, String);

/// Reads a socket's monitor events (libzmq's 2-frame format).
pub struct Monitor {
    pair: Socket,
}

impl Monitor {
    pub fn new(ctx: &Context, s: &Socket, name: &str) -> Monitor {
        s.monitor(Some(name), event::ALL).unwrap();
        let pair = sock(ctx, SocketType::Pair);
        pair.connect(name).unwrap();
        Monitor { pair }
    }

    pub fn next(&self, ms: i32) -> Option<Event> {
        self.pair.set_int(opt::RCVTIMEO, ms).unwrap();
        let head = self.pair.recv(0).ok()?;
        assert_eq!(head.len(), 6, "monitor event frame is 6 bytes");
        assert!(head.more(), "monitor event has an endpoint frame");
        let d = head.data();
        let ev = u16::from_ne_bytes([d[0], d[1]]);
        let val = u32::from_ne_bytes([d[2], d[3], d[4], d[5]]);
        let ep = self.pair.recv(0).unwrap();
        Some((ev, val, String::from_utf8_lossy(ep.data()).into_owned()))
    }

    pub fn wait_for(&self, ev: u16, ms: u64) -> (u32, String) {
        let deadline = Instant::now() + Duration::from_millis(ms);
        loop {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as i32;
            match self.next(left.max(1)) {
                Some((e, v, ep)) if e == ev => return (v, ep),
                Some(_) => {}
                None => panic!("monitor event {ev:#x} did not arrive within {ms} ms"),
            }
        }
    }

    /// Every event up to and including the first `ev`, which must come within `ms` (a
    /// loaded machine may deliver it late), then any that follow within `quiet_ms`.
    pub fn collect_through(&self, ev: u16, ms: u64, quiet_ms: i32) -> Vec<Event> {
        let deadline = Instant::now() + Duration::from_millis(ms);
        let mut v = Vec::new();
        loop {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as i32;
            match self.next(left.max(1)) {
                Some(e) => {
                    let done = e.0 == ev;
                    v.push(e);
                    if done {
                        break;
                    }
                }
                None => panic!("monitor event {ev:#x} did not arrive within {ms} ms: {v:?}"),
            }
        }
        v.extend(self.collect(quiet_ms));
        v
    }

    /// Every event until none comes for `quiet_ms`.
    pub fn collect(&self, quiet_ms: i32) -> Vec<Event> {
        let mut v = Vec::new();
        while let Some(e) = self.next(quiet_ms) {
            v.push(e);
        }
        v
    }
}

/// ZMTP 3.1 greeting: signature, version 3.1, mechanism, as-server 0, filler.
pub fn zmtp_greeting(mechanism: &[u8]) -> [u8; 64] {
    zmtp_greeting_major(mechanism, 3)
}

/// A greeting as `zmtp_greeting` but announcing version `major`.1 (hostile peers).
pub fn zmtp_greeting_major(mechanism: &[u8], major: u8) -> [u8; 64] {
    let mut g = [0u8; 64];
    g[0] = 0xff;
    g[9] = 0x7f;
    g[10] = major;
    g[11] = 1;
    g[12..12 + mechanism.len()].copy_from_slice(mechanism);
    g
}

/// A short ZMTP command frame (flags 0x04): the name, then `props` as they are.
pub fn zmtp_command(name: &str, props: &[u8]) -> Vec<u8> {
    let mut body = vec![name.len() as u8];
    body.extend_from_slice(name.as_bytes());
    body.extend_from_slice(props);
    let mut frame = vec![0x04, body.len() as u8];
    frame.extend_from_slice(&body);
    frame
}

/// A short READY command frame with one Socket-Type property.
pub fn zmtp_ready(socket_type: &str) -> Vec<u8> {
    let mut props = vec![11u8];
    props.extend_from_slice(b"Socket-Type");
    props.extend_from_slice(&(socket_type.len() as u32).to_be_bytes());
    props.extend_from_slice(socket_type.as_bytes());
    zmtp_command("READY", &props)
}

/// A short ZMTP message frame (flags 0x00, last frame) carrying `body` (under 256 bytes).
pub fn zmtp_message(body: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x00, body.len() as u8];
    frame.extend_from_slice(body);
    frame
}
