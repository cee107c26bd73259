//! The README's Rust example: one REQ/REP round trip over tcp.
use ferromq::{Context, SocketType};

fn main() -> ferromq::Result<()> {
    let ctx = Context::new();
    let rep = ctx.socket(SocketType::Rep)?;
    rep.bind("tcp://127.0.0.1:5556")?;
    let req = ctx.socket(SocketType::Req)?;
    req.connect("tcp://127.0.0.1:5556")?;
    req.send(b"ping", 0)?;
    let msg = rep.recv(0)?;
    rep.send(msg.data(), 0)?;
    assert_eq!(req.recv(0)?.data(), b"ping");
    println!("round trip ok");
    Ok(())
}
