//! A process limited to one CPU: a thread sending large messages gives its CPU to the
//! reader when the kernel has no room for them (`io::assist`, `YIELDS_FOR_ROOM`) and when
//! it wakes an inproc reader waiting for one (`pipe`, `YIELDS_TO_READER`). Alone in its own
//! test binary: the library asks once per process how many CPUs it may use, and this
//! binary pins itself to one before anything asks (each test pins itself too: the test
//! harness runs them on threads of its own).

mod common;

use common::*;
use ferromq::options::id as opt;
use ferromq::{Context, Socket, SocketType};

/// The tests count process-wide yields: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const SIZE: usize = 256 * 1024;
/// 64 MiB in all: more than the tcp buffers of both ends hold, so the sender must meet a
/// full socket while the reader, on the same CPU, is not running.
const COUNT: usize = 256;

/// Pins the calling thread (and so every thread it starts) to the first CPU it may use.
fn pin_to_one_cpu() {
    // SAFETY: `set` is a plain bit mask owned here; both calls get its exact size and act
    // on the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
        let first = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .expect("no CPU in the affinity mask");
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(first, &mut one);
        assert_eq!(libc::sched_setaffinity(0, size, &one), 0);
    }
}

/// Streams `COUNT` messages of `SIZE` bytes from `push` to `pull` on another thread, each
/// filled with its index, and checks every one.
fn stream(push: Socket, pull: Socket) {
    let reader = std::thread::spawn(move || {
        for i in 0..COUNT {
            let m = pull.recv(0).unwrap();
            assert_eq!(m.data().len(), SIZE);
            assert!(m.data().iter().all(|&b| b == i as u8), "message {i}");
        }
    });
    for i in 0..COUNT {
        push.send(&vec![i as u8; SIZE], 0).unwrap();
    }
    reader.join().unwrap();
}

/// Pins this test's thread to one CPU and then makes a context: its threads, and the
/// library's one look at how many CPUs it has, come after.
fn pinned_context() -> Context {
    pin_to_one_cpu();
    assert_eq!(std::thread::available_parallelism().unwrap().get(), 1);
    Context::new()
}

/// A PULL without a receive HWM.
fn pull_without_hwm(ctx: &Context) -> Socket {
    let pull = sock(ctx, SocketType::Pull);
    pull.set_int(opt::RCVHWM, 0).unwrap();
    pull.set_int(opt::RCVTIMEO, 10_000).unwrap();
    pull
}

/// A PUSH without a send HWM, connected to `ep`.
fn push_to(ctx: &Context, ep: &str) -> Socket {
    let push = sock(ctx, SocketType::Push);
    push.set_int(opt::SNDHWM, 0).unwrap();
    push.connect(ep).unwrap();
    push
}

#[test]
fn a_sender_on_one_cpu_gives_way_to_a_waiting_inproc_reader() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = pinned_context();
    let pull = pull_without_hwm(&ctx);
    pull.bind("inproc://one-cpu").unwrap();
    let push = push_to(&ctx, "inproc://one-cpu");
    let before = ferromq::yields_to_reader();
    stream(push, pull);
    assert!(
        ferromq::yields_to_reader() > before,
        "the sender never gave way to the reader"
    );
}

#[test]
fn a_sender_on_one_cpu_gives_way_when_the_socket_is_full() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = pinned_context();
    let pull = pull_without_hwm(&ctx);
    let push = push_to(&ctx, &bind_tcp(&pull));
    push.send(b"hello", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"hello");
    let before = ferromq::yields_for_room();
    stream(push, pull);
    assert!(
        ferromq::yields_for_room() > before,
        "the sender never gave way to the reader"
    );
}

#[test]
fn a_sender_on_one_cpu_gives_way_at_every_message_the_full_socket_refuses() {
    // The reader takes one message and then nothing: once the tcp buffers are full,
    // every message after finds the last one's rest still queued, and no room.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = pinned_context();
    let pull = sock(&ctx, SocketType::Pull);
    pull.set_int(opt::RCVHWM, 1).unwrap();
    pull.set_int(opt::RCVTIMEO, 10_000).unwrap();
    let push = push_to(&ctx, &bind_tcp(&pull));
    push.send(b"hello", 0).unwrap();
    assert_eq!(pull.recv(0).unwrap().data(), b"hello");
    let before = ferromq::yields_for_room();
    for i in 0..COUNT {
        push.send(&vec![i as u8; SIZE], 0).unwrap();
    }
    // 64 MiB against a few MiB of kernel buffers: most messages met a full socket.
    let yields = ferromq::yields_for_room() - before;
    assert!(
        yields >= COUNT as u64 / 2,
        "{yields} yields for {COUNT} messages, most of which found no room"
    );
    for i in 0..COUNT {
        let m = pull.recv(0).unwrap();
        assert!(m.data().iter().all(|&b| b == i as u8), "message {i}");
    }
}
