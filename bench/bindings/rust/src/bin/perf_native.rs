//! Workload C driver over ferromq's native Rust API (crates/core): no C ABI
//! in between, so it runs on ferromq only.
//!     perf_native ROLE ENDPOINT SIZE COUNT      (see bench/bindings/c/perf.c)
use ferromq::{Context, SocketType};
use ferromq_bench_perf::{args, fail, report_lat, report_thr, Role};
use std::time::Instant;

const TAG: &str = "rust-native";

fn main() {
    let (role, ep, size, count) = args(TAG);
    eprintln!("perf({TAG}): ferromq native crate");
    let ctx = Context::new();
    let kind = match role {
        Role::LocalThr => SocketType::Pull,
        Role::RemoteThr => SocketType::Push,
        Role::LocalLat => SocketType::Rep,
        Role::RemoteLat => SocketType::Req,
    };
    let s = ctx.socket(kind).unwrap_or_else(|e| fail(TAG, "socket", e));
    match role {
        Role::LocalThr => {
            s.bind(&ep).unwrap_or_else(|e| fail(TAG, "bind", e));
            let mut t0 = Instant::now();
            for i in 0..count {
                let m = s.recv(0).unwrap_or_else(|e| fail(TAG, "recv", e));
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
            s.connect(&ep).unwrap_or_else(|e| fail(TAG, "connect", e));
            let data = vec![b'D'; size];
            for _ in 0..count {
                s.send(&data, 0).unwrap_or_else(|e| fail(TAG, "send", e));
            }
        }
        Role::LocalLat => {
            s.bind(&ep).unwrap_or_else(|e| fail(TAG, "bind", e));
            for _ in 0..count {
                let m = s.recv_msg(0).unwrap_or_else(|e| fail(TAG, "recv", e));
                s.send_msg(m, 0).unwrap_or_else(|(e, _)| fail(TAG, "send", e));
            }
        }
        Role::RemoteLat => {
            s.connect(&ep).unwrap_or_else(|e| fail(TAG, "connect", e));
            let data = vec![b'D'; size];
            let t0 = Instant::now();
            for _ in 0..count {
                s.send(&data, 0).unwrap_or_else(|e| fail(TAG, "send", e));
                let m = s.recv(0).unwrap_or_else(|e| fail(TAG, "recv", e));
                if m.len() != size {
                    fail(TAG, "recv", "reply of wrong size");
                }
            }
            report_lat(count, t0);
        }
    }
    s.close();
    if let Err(e) = ctx.term() {
        fail(TAG, "term", e);
    }
}
