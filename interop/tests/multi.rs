//! One socket with several peers of the other library: REP answering each REQ, PULL
//! fair-queueing several PUSHes, DEALER/PUSH load-balancing, PAIR refusing a second peer.
//!
//! Scenarios run with ferromq as the shared socket and libzmq peers, the reverse, and
//! libzmq on both sides (`reference`).

use ferromq_interop::{parts, show, zmq, Harness, Lib, Peer, SocketType, Transport};
use std::collections::HashMap;
use std::time::Duration;
use SocketType::*;

/// Generates the library combinations for a scenario `fn(hub_lib, peers_lib)`.
macro_rules! combos {
    ($($name:ident => $scenario:ident;)*) => {$(
        mod $name {
            use super::*;
            #[test]
            fn ferro_hub_libzmq_peers() {
                $scenario(Lib::Ferro, Lib::Zmq);
            }
            #[test]
            fn libzmq_hub_ferro_peers() {
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
    rep_answers_each_req => rep_answers_each_req;
    pull_fair_queues_pushers => pull_fair_queues_pushers;
    push_round_robins_pullers => push_round_robins_pullers;
    dealer_round_robins_reps => dealer_round_robins_reps;
    pair_refuses_second_peer => pair_refuses_second_peer;
}

/// A bound `hub_kind` socket and `n` connected `peer_kind` sockets of the other library.
fn hub(
    h: &Harness,
    hub_lib: Lib,
    hub_kind: SocketType,
    peers_lib: Lib,
    peer_kind: SocketType,
    n: usize,
) -> (Peer, Vec<Peer>, String) {
    let hub = h.peer(hub_lib, hub_kind);
    let ep = h.bind(hub.s.as_ref(), Transport::Tcp);
    let peers = (0..n)
        .map(|_| {
            let p = h.peer(peers_lib, peer_kind);
            p.s.connect(&ep)
                .unwrap_or_else(|e| panic!("{p}: connect {ep}: {e:?}"));
            p
        })
        .collect();
    (hub, peers, ep)
}

fn rep_answers_each_req(rep_lib: Lib, req_lib: Lib) {
    let h = Harness::new();
    let (rep, reqs, _) = hub(&h, rep_lib, Rep, req_lib, Req, 4);
    for round in 0..3u8 {
        for (i, r) in reqs.iter().enumerate() {
            r.send_strs(&[b"req", &[i as u8, round]]);
        }
        // Answer in arrival order, echoing the request: each REQ must get its own.
        for _ in 0..reqs.len() {
            let q = rep.recv();
            assert_eq!(q.len(), 2, "{rep}: request has {} parts", q.len());
            rep.send(&[b"rep".to_vec(), q[1].clone()]);
        }
        for (i, r) in reqs.iter().enumerate() {
            r.expect(&parts(&[b"rep", &[i as u8, round]]), &rep);
        }
    }
}

fn pull_fair_queues_pushers(pull_lib: Lib, push_lib: Lib) {
    const PER: usize = 100;
    let h = Harness::new();
    let (pull, pushes, _) = hub(&h, pull_lib, Pull, push_lib, Push, 2);
    for (p, push) in pushes.iter().enumerate() {
        for i in 0..PER {
            push.send_strs(&[&[p as u8], format!("{i}").as_bytes()]);
        }
    }
    // Let both streams arrive before reading: fair queueing must then alternate. (A
    // second is far more than 200 small messages over loopback need, even when loaded.)
    std::thread::sleep(Duration::from_millis(1000));
    let mut next = [0usize; 2];
    let mut first_20 = [0usize; 2];
    for n in 0..2 * PER {
        let m = pull.recv();
        let p = m[0][0] as usize;
        assert_eq!(
            show(&m[1]),
            format!("{}", next[p]),
            "{pull}: messages of pusher {p} out of order"
        );
        next[p] += 1;
        if n < 20 {
            first_20[p] += 1;
        }
    }
    assert!(
        first_20.iter().all(|&c| c >= 5),
        "{pull}: not fair-queued; the first 20 messages came {first_20:?} from the two {}",
        pushes[0]
    );
}

fn push_round_robins_pullers(push_lib: Lib, pull_lib: Lib) {
    let h = Harness::new();
    let (push, pulls, _) = hub(&h, push_lib, Push, pull_lib, Pull, 3);
    // Once each PULL got one of these, all three connections are up.
    let mut connected = [false; 3];
    let mut sent = 0u32;
    while !connected.iter().all(|&c| c) {
        push.send_strs(&[b"warmup"]);
        sent += 1;
        assert!(sent < 500, "{push}: not all three {} connected", pulls[0]);
        std::thread::sleep(Duration::from_millis(5));
        for (i, p) in pulls.iter().enumerate() {
            while p.try_recv().is_some() {
                connected[i] = true;
            }
        }
    }
    std::thread::sleep(Duration::from_millis(50));
    for p in &pulls {
        while p.try_recv().is_some() {}
    }
    for i in 0..30u8 {
        push.send_strs(&[b"job", &[i]]);
    }
    let mut counts = HashMap::new();
    for (n, p) in pulls.iter().enumerate() {
        // A warm-up still in flight after the drain may come first: skip those.
        let next_job = || loop {
            let m = p.recv();
            if show(&m[0]) != "warmup" {
                return m;
            }
        };
        for _ in 0..10 {
            let m = next_job();
            assert_eq!(show(&m[0]), "job", "{p}: unexpected message");
            *counts.entry(n).or_insert(0) += 1;
        }
        std::thread::sleep(Duration::from_millis(20));
        while let Some(m) = p.try_recv() {
            assert_eq!(
                show(&m[0]),
                "warmup",
                "{push}: round robin over 3 peers gave {p} more than 10 of 30"
            );
        }
    }
}

fn dealer_round_robins_reps(dealer_lib: Lib, rep_lib: Lib) {
    let h = Harness::new();
    let dealer = h.peer(dealer_lib, Dealer);
    let ep = h.bind(dealer.s.as_ref(), Transport::Tcp);
    let reps: Vec<Peer> = (0..2)
        .map(|_| {
            let r = h.peer(rep_lib, Rep);
            r.s.connect(&ep).expect("connect");
            r
        })
        .collect();
    // Let both REPs connect; then round robin gives each half of the requests. (Generous:
    // a REP still connecting when the requests go would get none.)
    std::thread::sleep(Duration::from_millis(1000));
    for i in 0..10u8 {
        dealer.send_strs(&[b"", b"work", &[i]]);
    }
    let mut got = [0usize; 2];
    for (n, r) in reps.iter().enumerate() {
        for _ in 0..5 {
            let m = r.recv();
            assert_eq!(show(&m[0]), "work", "{r}: envelope not stripped");
            r.send(&[format!("{n}").into_bytes(), m[1].clone()]);
            got[n] += 1;
        }
    }
    let mut answers = Vec::new();
    for _ in 0..10 {
        let m = dealer.recv();
        assert_eq!(m.len(), 3, "{dealer}: reply parts");
        assert!(m[0].is_empty(), "{dealer}: missing empty delimiter");
        answers.push(m[2][0]);
    }
    answers.sort_unstable();
    assert_eq!(answers, (0..10).collect::<Vec<u8>>(), "{dealer}: replies");
    assert_eq!(got, [5, 5], "{dealer}: requests per REP");
}

fn pair_refuses_second_peer(pair_lib: Lib, peer_lib: Lib) {
    let h = Harness::new();
    let pair = h.peer(pair_lib, Pair);
    let ep = h.bind(pair.s.as_ref(), Transport::Tcp);
    let first = h.peer(peer_lib, Pair);
    first.s.connect(&ep).expect("connect");
    first.send_strs(&[b"from first"]);
    pair.expect(&parts(&[b"from first"]), &first);

    let second = h.peer(peer_lib, Pair);
    second.s.connect(&ep).expect("connect");
    // The intruder's message waits in its own pipe; it must never reach `pair`.
    let _ = second.s.send(b"from second", zmq::DONTWAIT);
    std::thread::sleep(Duration::from_millis(300));
    // Poll the intruder too (a libzmq socket processes its connection only when called).
    assert!(second.try_recv().is_none());
    assert!(
        pair.try_recv().is_none(),
        "{pair}: accepted a message from a second peer"
    );
    pair.send_strs(&[b"to first"]);
    first.expect(&parts(&[b"to first"]), &pair);
    first.send_strs(&[b"still first"]);
    pair.expect(&parts(&[b"still first"]), &first);
}
