//! Endpoint forms across the two libraries: wildcard tcp and ipc binds resolved through
//! ZMQ_LAST_ENDPOINT, host names, and Linux abstract-namespace ipc (`ipc://@name`).
//!
//! Each scenario runs with the bound socket from ferromq and the peer from libzmq, the
//! reverse, and libzmq on both sides (`reference`).

use ferromq_interop::{parts, Harness, Lib, Peer, SocketType};
use SocketType::*;

macro_rules! combos {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_bound_libzmq_peer() {
                $scenario(Lib::Ferro, Lib::Zmq);
            }
            #[test]
            fn libzmq_bound_ferro_peer() {
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
    ipc_wildcard_bind => ipc_wildcard_bind;
    tcp_any_interface_bind => tcp_any_interface_bind;
    tcp_connect_by_host_name => tcp_connect_by_host_name;
    ipc_abstract_namespace => ipc_abstract_namespace;
}

/// Binds a PULL of `bound_lib` to `bind_ep`, returns it with its LAST_ENDPOINT.
fn bound_pull(h: &Harness, bound_lib: Lib, bind_ep: &str) -> (Peer, String) {
    let pull = h.peer(bound_lib, Pull);
    pull.s
        .bind(bind_ep)
        .unwrap_or_else(|e| panic!("{pull}: bind {bind_ep}: {e:?}"));
    let last = pull.s.last_endpoint().expect("LAST_ENDPOINT");
    (pull, last)
}

fn push_to(h: &Harness, peer_lib: Lib, ep: &str, pull: &Peer) {
    let push = h.peer(peer_lib, Push);
    push.s
        .connect(ep)
        .unwrap_or_else(|e| panic!("{push}: connect {ep}: {e:?}"));
    push.send_strs(&[b"hello", ep.as_bytes()]);
    pull.expect(&parts(&[b"hello", ep.as_bytes()]), &push);
}

fn ipc_wildcard_bind(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (pull, last) = bound_pull(&h, bound_lib, "ipc://*");
    assert!(
        last.starts_with("ipc://") && last != "ipc://*" && last.len() > "ipc://".len(),
        "{pull}: LAST_ENDPOINT after binding ipc://* is {last:?}"
    );
    push_to(&h, peer_lib, &last, &pull);
}

fn tcp_any_interface_bind(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (pull, last) = bound_pull(&h, bound_lib, "tcp://*:*");
    let port = last
        .strip_prefix("tcp://0.0.0.0:")
        .unwrap_or_else(|| panic!("{pull}: LAST_ENDPOINT after binding tcp://*:* is {last:?}"));
    assert!(
        port.parse::<u16>().is_ok_and(|p| p > 0),
        "{pull}: port {port:?}"
    );
    push_to(&h, peer_lib, &format!("tcp://127.0.0.1:{port}"), &pull);
}

fn tcp_connect_by_host_name(bound_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let (pull, last) = bound_pull(&h, bound_lib, "tcp://127.0.0.1:*");
    let port = last.rsplit(':').next().expect("port");
    push_to(&h, peer_lib, &format!("tcp://localhost:{port}"), &pull);
}

/// Linux abstract-namespace ipc endpoints (`ipc://@name`, zmq_ipc(7)): both libraries
/// must agree that "@" names an abstract socket, not a file.
fn ipc_abstract_namespace(bound_lib: Lib, peer_lib: Lib) {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let h = Harness::new();
    let name = format!(
        "ipc://@ferromq-interop-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let pull = h.peer(bound_lib, Pull);
    pull.s
        .bind(&name)
        .unwrap_or_else(|e| panic!("{pull}: bind {name}: {e:?}"));
    // Tests run in the crate directory: a relative file "@..." would appear there.
    let file = std::path::Path::new(&name["ipc://".len()..]);
    assert!(
        !file.exists(),
        "{pull}: binding {name} created a socket file {:?} instead of an abstract socket",
        std::env::current_dir().unwrap_or_default().join(file)
    );
    let push = h.peer(peer_lib, Push);
    push.s.connect(&name).expect("connect");
    push.send_strs(&[b"abstract"]);
    match pull.s.recv_parts(0) {
        Ok(m) => assert_eq!(m, parts(&[b"abstract"]), "{push} -> {pull} over {name}"),
        Err(e) => panic!(
            "{pull} bound to {name} received nothing from {push} connected to it ({e:?}): \
             the libraries disagree on what an ipc://@ endpoint is"
        ),
    }
}
