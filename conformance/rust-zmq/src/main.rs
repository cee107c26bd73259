//! Exercises the Rust `zmq` crate (rust-zmq 0.10) the way applications use it.
//! Prints `PASS name` / `FAIL name: reason`; exits 1 on any failure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

static PASSED: AtomicUsize = AtomicUsize::new(0);
static FAILED: AtomicUsize = AtomicUsize::new(0);

fn check(name: &str, ok: bool, why: impl FnOnce() -> String) {
    if ok {
        println!("PASS {name}");
        PASSED.fetch_add(1, Ordering::SeqCst);
    } else {
        println!("FAIL {name}: {}", why());
        FAILED.fetch_add(1, Ordering::SeqCst);
    }
}

fn eq<T: PartialEq + std::fmt::Debug>(name: &str, got: T, want: T) {
    let ok = got == want;
    check(name, ok, || format!("expected {want:?}, got {got:?}"));
}

/// Runs a section; a returned zmq::Error counts as a failure of that section.
fn section(name: &str, f: impl FnOnce() -> Result<(), zmq::Error>) {
    if let Err(e) = f() {
        check(name, false, || format!("unexpected error: {e} ({:?})", e));
    }
}

fn main() {
    // watchdog: a hang becomes a failure, not a stuck run
    thread::spawn(|| {
        thread::sleep(Duration::from_secs(20));
        println!("FAIL watchdog: program timed out (hang)");
        std::process::exit(2);
    });

    let (maj, min, _) = zmq::version();
    check("version", maj == 4 && min >= 3, || format!("{maj}.{min}"));

    let ctx = zmq::Context::new();

    section("reqrep", || {
        let rep = ctx.socket(zmq::REP)?;
        let req = ctx.socket(zmq::REQ)?;
        rep.bind("tcp://127.0.0.1:*")?;
        let ep = rep.get_last_endpoint()?.map_err(|_| zmq::Error::EINVAL)?;
        check("last_endpoint", ep.starts_with("tcp://127.0.0.1:") && !ep.ends_with('*'), || ep.clone());
        req.connect(&ep)?;
        req.set_rcvtimeo(5000)?;
        rep.set_rcvtimeo(5000)?;
        req.send("hello", 0)?;
        let mut msg = rep.recv_msg(0)?;
        eq("recv_msg.as_str", msg.as_str(), Some("hello"));
        eq("message.gets_socket_type", msg.gets("Socket-Type"), Some("REQ"));
        eq("message.get_more", msg.get_more(), false);
        rep.send("world", 0)?;
        eq("recv_string", req.recv_string(0)?, Ok("world".to_string()));
        // EFSM on a second send without a reply
        req.send("again", 0)?;
        eq("req.double_send_efsm", req.send("again2", 0), Err(zmq::Error::EFSM));
        eq("socket_type", rep.get_socket_type()?, zmq::REP);
        Ok(())
    });

    section("errors", || {
        let pull = ctx.socket(zmq::PULL)?;
        pull.bind("inproc://rz-eagain")?;
        eq("recv.dontwait_eagain", pull.recv_bytes(zmq::DONTWAIT).err(), Some(zmq::Error::EAGAIN));
        pull.set_rcvtimeo(100)?;
        let t0 = Instant::now();
        let r = pull.recv_bytes(0);
        let ms = t0.elapsed().as_millis();
        check("recv.rcvtimeo_eagain", r == Err(zmq::Error::EAGAIN) && (80..10000).contains(&ms), || {
            format!("{r:?} after {ms} ms")
        });
        eq("bind.bad_transport", pull.bind("bogus://x").err(), Some(zmq::Error::EPROTONOSUPPORT));
        eq("connect.malformed", pull.connect("tcp://").err(), Some(zmq::Error::EINVAL));
        eq("error.to_raw", zmq::Error::EAGAIN.to_raw(), libc_eagain());
        eq("error.message", zmq::Error::EFSM.to_string(), "Operation cannot be accomplished in current state".to_string());
        Ok(())
    });

    section("options", || {
        let s = ctx.socket(zmq::DEALER)?;
        s.set_linger(0)?;
        eq("linger", s.get_linger()?, 0);
        s.set_sndhwm(42)?;
        eq("sndhwm", s.get_sndhwm()?, 42);
        s.set_rcvhwm(7)?;
        eq("rcvhwm", s.get_rcvhwm()?, 7);
        s.set_identity(b"alice")?;
        eq("identity", s.get_identity()?, b"alice".to_vec());
        s.set_rcvtimeo(123)?;
        eq("rcvtimeo", s.get_rcvtimeo()?, 123);
        s.set_immediate(true)?;
        eq("ipv6", s.is_ipv6()?, false);
        s.set_maxmsgsize(1 << 20)?;
        eq("maxmsgsize", s.get_maxmsgsize()?, 1 << 20);
        eq("mechanism_null", s.get_mechanism()?, zmq::Mechanism::ZMQ_NULL);
        let ev = s.get_events()?;
        check("events", (ev.bits() & !(zmq::POLLIN.bits() | zmq::POLLOUT.bits())) == 0, || format!("{ev:?}"));
        Ok(())
    });

    section("multipart", || {
        let router = ctx.socket(zmq::ROUTER)?;
        let dealer = ctx.socket(zmq::DEALER)?;
        router.bind("inproc://rz-mp")?;
        dealer.set_identity(b"d1")?;
        dealer.connect("inproc://rz-mp")?;
        router.set_rcvtimeo(5000)?;
        dealer.set_rcvtimeo(5000)?;
        dealer.send_multipart(["a", "bb", "ccc"], 0)?;
        let parts = router.recv_multipart(0)?;
        eq("recv_multipart", parts.clone(), vec![b"d1".to_vec(), b"a".to_vec(), b"bb".to_vec(), b"ccc".to_vec()]);
        router.send_multipart([&b"d1"[..], &b"reply"[..]], 0)?;
        eq("router_reply", dealer.recv_bytes(0)?, b"reply".to_vec());
        // SNDMORE by hand + get_rcvmore
        dealer.send("x", zmq::SNDMORE)?;
        dealer.send("y", 0)?;
        let _id = router.recv_bytes(0)?;
        let _x = router.recv_bytes(0)?;
        eq("rcvmore_true", router.get_rcvmore()?, true);
        let _y = router.recv_bytes(0)?;
        eq("rcvmore_false", router.get_rcvmore()?, false);
        Ok(())
    });

    section("poll", || {
        let a = ctx.socket(zmq::PAIR)?;
        let b = ctx.socket(zmq::PAIR)?;
        a.bind("inproc://rz-poll")?;
        b.connect("inproc://rz-poll")?;
        {
            let mut items = [b.as_poll_item(zmq::POLLIN)];
            eq("poll.timeout_zero", zmq::poll(&mut items, 20)?, 0);
        }
        a.send("ping", 0)?;
        let mut items = [b.as_poll_item(zmq::POLLIN), a.as_poll_item(zmq::POLLOUT)];
        let n = zmq::poll(&mut items, 2000)?;
        eq("poll.ready", n, 2);
        check("poll.readable", items[0].is_readable(), || "b not readable".into());
        check("poll.writable", items[1].is_writable(), || "a not writable".into());
        Ok(())
    });

    section("pubsub", || {
        let publ = ctx.socket(zmq::PUB)?;
        let sub = ctx.socket(zmq::SUB)?;
        publ.bind("tcp://127.0.0.1:*")?;
        sub.connect(&publ.get_last_endpoint()?.unwrap())?;
        sub.set_subscribe(b"keep")?;
        sub.set_rcvtimeo(100)?;
        let mut got = None;
        for _ in 0..50 {
            publ.send("drop", 0)?;
            publ.send("keep-this", 0)?;
            if let Ok(m) = sub.recv_string(0) {
                got = Some(m);
                break;
            }
        }
        eq("subscribe.filter", got, Some(Ok("keep-this".to_string())));
        Ok(())
    });

    section("monitor", || {
        let srv = ctx.socket(zmq::REP)?;
        srv.monitor("inproc://rz-mon", zmq::SocketEvent::ALL as i32)?;
        let mon = ctx.socket(zmq::PAIR)?;
        mon.connect("inproc://rz-mon")?;
        mon.set_rcvtimeo(3000)?;
        srv.bind("tcp://127.0.0.1:*")?;
        let ep = srv.get_last_endpoint()?.unwrap();
        let ev = mon.recv_msg(0)?;
        let addr = mon.recv_string(0)?;
        let code = u16::from_le_bytes([ev[0], ev[1]]);
        eq("monitor.listening_event", zmq::SocketEvent::from_raw(code), zmq::SocketEvent::LISTENING);
        eq("monitor.listening_addr", addr, Ok(ep));
        Ok(())
    });

    // proxy in a thread, ended by context termination
    section("proxy", || {
        let pctx = zmq::Context::new();
        let front = pctx.socket(zmq::PULL)?;
        let back = pctx.socket(zmq::PUSH)?;
        front.bind("inproc://rz-front")?;
        back.bind("inproc://rz-back")?;
        let t = thread::spawn(move || {
            let r = zmq::proxy(&front, &back);
            drop(front);
            drop(back);
            r
        });
        let src = pctx.socket(zmq::PUSH)?;
        let dst = pctx.socket(zmq::PULL)?;
        src.set_linger(0)?;
        dst.set_linger(0)?;
        src.connect("inproc://rz-front")?;
        dst.connect("inproc://rz-back")?;
        dst.set_rcvtimeo(3000)?;
        src.send("via-proxy", 0)?;
        eq("proxy.forward", dst.recv_string(0)?, Ok("via-proxy".to_string()));
        drop(src);
        drop(dst);
        let mut pctx = pctx;
        // zmq_ctx_term makes the blocked zmq_proxy return ETERM, then waits for its sockets
        pctx.destroy()?; // blocks until the proxy thread exits and closes its sockets
        let r = t.join().expect("proxy thread panicked");
        eq("proxy.eterm", r.err(), Some(zmq::Error::ETERM));
        Ok(())
    });

    let p = PASSED.load(Ordering::SeqCst);
    let f = FAILED.load(Ordering::SeqCst);
    println!("# {p} passed, {f} failed");
    std::process::exit(if f > 0 { 1 } else { 0 });
}

fn libc_eagain() -> i32 {
    11
}
