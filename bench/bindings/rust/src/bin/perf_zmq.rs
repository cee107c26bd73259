//! Workload C driver over the `zmq` crate 0.9.2 (libzmq.so.5 by soname).
//!     perf_zmq ROLE ENDPOINT SIZE COUNT      (see bench/bindings/c/perf.c)
use ferromq_bench_perf::{args, fail, report_lat, report_thr, Role};
use std::time::Instant;

const TAG: &str = "rust-zmq";

fn main() {
    let (role, ep, size, count) = args(TAG);
    let (a, b, c) = zmq::version();
    eprintln!("perf({TAG}): zmq_version {a}.{b}.{c}");
    let ctx = zmq::Context::new();
    let kind = match role {
        Role::LocalThr => zmq::PULL,
        Role::RemoteThr => zmq::PUSH,
        Role::LocalLat => zmq::REP,
        Role::RemoteLat => zmq::REQ,
    };
    let s = ctx.socket(kind).unwrap_or_else(|e| fail(TAG, "socket", e));
    let ck = |what: &str, r: Result<(), zmq::Error>| r.unwrap_or_else(|e| fail(TAG, what, e));
    match role {
        Role::LocalThr => {
            ck("bind", s.bind(&ep));
            let mut m = zmq::Message::new();
            let mut t0 = Instant::now();
            for i in 0..count {
                ck("recv", s.recv(&mut m, 0));
                if m.len() != size {
                    fail(TAG, "recv", "message of wrong size");
                }
                if i == 0 {
                    t0 = Instant::now();
                }
            }
            report_thr(count, t0);
        }
        Role::RemoteThr => {
            ck("connect", s.connect(&ep));
            let data = vec![b'D'; size];
            for _ in 0..count {
                ck("send", s.send(&data[..], 0));
            }
        }
        Role::LocalLat => {
            ck("bind", s.bind(&ep));
            let mut m = zmq::Message::new();
            for _ in 0..count {
                ck("recv", s.recv(&mut m, 0));
                ck("send", s.send(&m[..], 0));
            }
        }
        Role::RemoteLat => {
            ck("connect", s.connect(&ep));
            let data = vec![b'D'; size];
            let mut m = zmq::Message::new();
            let t0 = Instant::now();
            for _ in 0..count {
                ck("send", s.send(&data[..], 0));
                ck("recv", s.recv(&mut m, 0));
                if m.len() != size {
                    fail(TAG, "recv", "reply of wrong size");
                }
            }
            report_lat(count, t0);
        }
    }
    drop(s);
    drop(ctx);
}
