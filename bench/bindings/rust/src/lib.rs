//! Shared command-line handling of the Rust workload C drivers.
use std::time::Instant;

/// The four roles of libzmq's perf pair.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    LocalThr,
    RemoteThr,
    LocalLat,
    RemoteLat,
}

/// `ROLE ENDPOINT SIZE COUNT` from the command line; exits 2 on bad usage.
pub fn args(tag: &str) -> (Role, String, usize, usize) {
    let a: Vec<String> = std::env::args().collect();
    let usage = || -> ! {
        eprintln!("usage: {} ROLE ENDPOINT SIZE COUNT", a[0]);
        std::process::exit(2)
    };
    if a.len() != 5 {
        usage();
    }
    let role = match a[1].as_str() {
        "local_thr" => Role::LocalThr,
        "remote_thr" => Role::RemoteThr,
        "local_lat" => Role::LocalLat,
        "remote_lat" => Role::RemoteLat,
        r => {
            eprintln!("perf({tag}): unknown role '{r}'");
            std::process::exit(2)
        }
    };
    let size: usize = a[3].parse().unwrap_or_else(|_| usage());
    let count: usize = a[4].parse().unwrap_or_else(|_| usage());
    if size < 1 || count < 2 {
        eprintln!("perf({tag}): SIZE >= 1 and COUNT >= 2 required");
        std::process::exit(2)
    }
    (role, a[2].clone(), size, count)
}

/// Print the throughput result line.
pub fn report_thr(count: usize, t0: Instant) {
    let el = t0.elapsed().as_secs_f64();
    println!("RESULT {{\"msg_per_s\": {:.3}}}", (count - 1) as f64 / el);
}

/// Print the latency result line (one-way = elapsed / (2 count), in µs).
pub fn report_lat(count: usize, t0: Instant) {
    let el = t0.elapsed().as_secs_f64();
    println!("RESULT {{\"latency_us\": {:.3}}}", el * 1e6 / (2.0 * count as f64));
}

/// Exit 1 with a message naming the failed call.
pub fn fail(tag: &str, what: &str, err: impl std::fmt::Display) -> ! {
    eprintln!("perf({tag}): {what}: {err}");
    std::process::exit(1)
}
