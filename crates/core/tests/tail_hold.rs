//! A thread streaming large messages over tcp writes whole segments and holds the few
//! bytes past the last one for its next write (`io::tail_hold`). Whatever is held must
//! still arrive when the stream stops, also if the sending thread then makes no call at
//! all, and the held bytes of a lent body must be the ones of the call that sent it.

mod common;

use common::*;
use ferromq::options::id as opt;
use ferromq::{Context, Socket, SocketType};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

const SIZE: usize = 64 * 1024;

/// One test at a time: a hold needs the sending thread to come back within microseconds,
/// and three streams at once on two cores preempt each other.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The body of message `i`: position and index mixed (a shifted, cut or swapped tail
/// does not match). Sixteen kinds, so that a reader can check them at the sender's pace.
fn body(i: usize) -> Vec<u8> {
    (0..SIZE).map(|k| (k * 13 + (i % 16) * 101) as u8).collect()
}

/// `body(i)` for every `i`, computed once.
fn bodies() -> Vec<Vec<u8>> {
    (0..16).map(body).collect()
}

/// A PUSH connected over tcp to a PULL, with one message through to make sure.
fn connected_pair(ctx: &Context) -> (Socket, Socket) {
    let pull = sock(ctx, SocketType::Pull);
    let push = sock(ctx, SocketType::Push);
    let ep = bind_tcp(&pull);
    push.connect(&ep).unwrap();
    pull.set_int(opt::RCVTIMEO, 5000).unwrap();
    push.send(b"hello", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"hello");
    (push, pull)
}

/// Sends `count` messages from one buffer, scribbling over it after each send.
fn stream(push: &Socket, first: usize, count: usize) {
    let kinds = bodies();
    let mut buf = Vec::with_capacity(SIZE);
    for i in first..first + count {
        buf.clear();
        buf.extend_from_slice(&kinds[i % 16]);
        push.send(&buf, 0).unwrap();
        buf.fill(0xA5);
    }
}

/// Receives until nothing comes for 1.5 s, checking every byte; returns how many came.
fn read_all(pull: Socket) -> thread::JoinHandle<usize> {
    pull.set_int(opt::RCVTIMEO, 1500).unwrap();
    thread::spawn(move || {
        let kinds = bodies();
        let mut got = 0;
        while let Ok(m) = pull.recv(0) {
            assert!(
                m.data() == kinds[got % 16].as_slice(),
                "message {got} is not what was sent"
            );
            got += 1;
        }
        got
    })
}

/// Sends bursts until one ends with bytes held (the hold needs the kernel to take each
/// write at once and the thread to come back at once; a busy host may deny a burst
/// that), then makes no call on any socket. Returns how many were sent.
fn stream_until_held(push: &Socket) -> usize {
    const BURST: usize = 16;
    let mut sent = 0;
    for _ in 0..1000 {
        stream(push, sent, BURST);
        sent += BURST;
        if push.held_tail().1 > 0 {
            return sent;
        }
        thread::sleep(Duration::from_millis(2));
    }
    panic!("no burst ended with bytes held: the hold was never seen");
}

#[test]
fn a_stream_that_stops_with_bytes_held_is_delivered_whole() {
    let _one_at_a_time = serial();
    let ctx = Context::new();
    let (push, pull) = connected_pair(&ctx);
    let reader = read_all(pull);
    // No call on any socket after the last send: only the I/O thread's timer can write
    // what it held back.
    let sent = stream_until_held(&push);
    assert_eq!(
        reader.join().unwrap(),
        sent,
        "the last message's held bytes never came"
    );
}

#[test]
fn a_send_after_a_receive_is_never_held_back() {
    let _one_at_a_time = serial();
    // What a thread sends after it received may answer what it got: it goes out whole at
    // once, also when the message it received was already queued (no wait in between).
    let ctx = Context::new();
    let b = sock(&ctx, SocketType::Dealer);
    let a = sock(&ctx, SocketType::Dealer);
    b.set_int(opt::RCVTIMEO, 5000).unwrap();
    a.set_int(opt::RCVTIMEO, 5000).unwrap();
    let ep = bind_tcp(&b);
    a.connect(&ep).unwrap();
    a.send(b"hello", 0).unwrap();
    assert_eq!(b.recv(0).unwrap().data(), b"hello");
    let big = body(0);
    let drain = |n: usize| {
        for _ in 0..n {
            assert!(b.recv(0).unwrap().data() == big.as_slice());
        }
    };
    // Control: two large sends back to back do hold (else this test could not see one).
    let mut held = false;
    for _ in 0..1000 {
        let before = a.held_tail().0;
        a.send(&big, 0).unwrap();
        a.send(&big, 0).unwrap();
        held = a.held_tail().0 > before;
        drain(2);
        if held {
            break;
        }
        thread::sleep(Duration::from_millis(1));
    }
    assert!(held, "two large sends back to back never held bytes back");
    for i in 0..100 {
        b.send(b"x", 0).unwrap();
        while a.events().unwrap() & ferromq::POLLIN == 0 {
            thread::yield_now();
        }
        let before = a.held_tail().0;
        a.send(&big, 0).unwrap();
        assert_eq!(a.recv(0).unwrap().data(), b"x");
        a.send(&big, 0).unwrap();
        assert_eq!(
            a.held_tail().0,
            before,
            "round {i}: the send after a receive held bytes"
        );
        drain(2);
    }
}

#[test]
fn a_disconnect_with_bytes_held_sends_them_first() {
    // A disconnect drops what is still queued, but bytes held back only to fill a
    // segment belong to a message already written: they must still go out. (Seen so
    // far: the flush that takes the pipe's end writes them before the close; the close
    // itself writes them too, `Conn::closed`, for a close that comes without one.)
    let _one_at_a_time = serial();
    let ctx = Context::new();
    let (push, pull) = connected_pair(&ctx);
    let ep = last_endpoint(&pull);
    let reader = read_all(pull);
    let sent = stream_until_held(&push);
    push.disconnect(&ep).unwrap();
    assert_eq!(
        reader.join().unwrap(),
        sent,
        "the last message lost its held bytes"
    );
}

#[test]
fn bursts_that_end_while_the_io_thread_is_shut_out_are_delivered_whole() {
    // A sender writing each large message itself holds its connection most of the time:
    // the I/O thread, scheduled for a timer or for output the kernel had no room for,
    // looks again a period later rather than wait for the lock (`Reactor::busy`). Each
    // burst here ends with no call at all, and the next one starts only once the reader
    // has all of it, so a burst whose end waits for that later look in vain stalls.
    let _one_at_a_time = serial();
    let ctx = Context::new();
    let (push, pull) = connected_pair(&ctx);
    // 1..=40 messages per burst: short bursts end inside the first hold, long ones fill
    // the kernel behind a reader that checks every byte.
    let bursts: Vec<usize> = (0..60).map(|b| 1 + (b * 7) % 40).collect();
    let total = bursts.iter().sum();
    let received = Arc::new(AtomicUsize::new(0));
    let reader = {
        let received = received.clone();
        thread::spawn(move || {
            let kinds = bodies();
            for got in 0..total {
                let Ok(m) = pull.recv(0) else { return };
                assert!(
                    m.data() == kinds[got % 16].as_slice(),
                    "message {got} is not what was sent"
                );
                received.store(got + 1, Ordering::Release);
            }
        })
    };
    let mut sent = 0;
    for (burst, &n) in bursts.iter().enumerate() {
        stream(&push, sent, n);
        sent += n;
        let mut waited = 0;
        while received.load(Ordering::Acquire) < sent {
            assert!(
                !reader.is_finished(),
                "burst {burst}: the reader stopped (a receive failed, or a message differed)"
            );
            assert!(
                waited < 3000,
                "burst {burst}: {} of {sent} messages came",
                received.load(Ordering::Acquire)
            );
            thread::sleep(Duration::from_millis(1));
            waited += 1;
        }
    }
    reader.join().unwrap();
}
