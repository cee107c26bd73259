//! Endpoint strings through the parser `bind`/`connect` use
//! (`ferromq::fuzz_parse_endpoint`, no I/O), and through the public socket API
//! in ways that cannot reach the network: `bind`/`connect` on a closed socket
//! (the string is parsed, then refused), `unbind`/`disconnect` on an open
//! socket that has nothing bound or connected (not found, or the string refused as
//! libzmq refuses it).
//!
//! Input: the endpoint (lossy UTF-8).
#![no_main]

use ferromq::{Context, Error, SocketType};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

struct Sockets {
    closed: ferromq::Socket,
    open: ferromq::Socket,
    _ctx: Context,
}

fn sockets() -> &'static Sockets {
    static S: OnceLock<Sockets> = OnceLock::new();
    S.get_or_init(|| {
        let ctx = Context::new();
        let closed = ctx.socket(SocketType::Pair).unwrap();
        closed.close();
        let open = ctx.socket(SocketType::Dealer).unwrap();
        Sockets {
            closed,
            open,
            _ctx: ctx,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    // libzmq's first check for every endpoint call: `scheme://address`, neither empty.
    let well_formed = s
        .split_once("://")
        .is_some_and(|(scheme, addr)| !scheme.is_empty() && !addr.is_empty());
    let parsed = ferromq::fuzz_parse_endpoint(&s);
    match &parsed {
        Ok(("tcp", host, Some(port))) => {
            assert!(s.starts_with("tcp://"));
            // The port is what follows the last ':' (a bind checks it, a connect takes
            // what libzmq's syntax check takes and retries it).
            assert!(!port.contains(':'), "{port:?}");
            assert!(s.ends_with(&format!(":{port}")));
            assert!(s.contains(host.as_str()));
        }
        Ok(("ipc", path, None)) => {
            assert_eq!(s.strip_prefix("ipc://"), Some(path.as_str()));
            assert!(!path.is_empty() && path.len() <= 107);
        }
        Ok(("inproc", name, None)) => {
            assert_eq!(s.strip_prefix("inproc://"), Some(name.as_str()));
            assert!(!name.is_empty() && name.len() <= 255);
        }
        Ok(other) => panic!("unexpected parse {other:?}"),
        Err(e) => {
            assert!(
                matches!(
                    e,
                    Error::InvalidArgument
                        | Error::ProtocolNotSupported
                        | Error::IncompatibleProtocol
                        | Error::Os(36)
                ),
                "{e:?}"
            );
            if !well_formed {
                assert_eq!(*e, Error::InvalidArgument);
            }
            if *e == Error::IncompatibleProtocol {
                assert!(s.starts_with("udp://"), "{s:?}");
            }
        }
    }
    let sk = sockets();
    for r in [sk.closed.bind(&s), sk.closed.connect(&s)] {
        match r {
            Ok(()) => panic!("a closed socket accepted {s:?}"),
            Err(Error::NotSocket) => {}
            Err(e) => assert_eq!(Err(e), parsed.as_ref().map(|_| ()).map_err(|e| *e)),
        }
    }
    // Nothing is bound or connected: not found, unless the string is no endpoint at all
    // (EINVAL) or names a scheme libzmq does not know (EPROTONOSUPPORT), as in libzmq.
    let unbound = sk.open.unbind(&s);
    assert_eq!(sk.open.disconnect(&s), unbound);
    match unbound {
        Err(Error::NoEntry) => assert!(well_formed, "{s:?}"),
        Err(Error::InvalidArgument) => assert!(!well_formed, "{s:?}"),
        Err(Error::ProtocolNotSupported) => {
            assert!(well_formed, "{s:?}");
            assert_eq!(parsed.as_ref().err(), Some(&Error::ProtocolNotSupported));
        }
        Err(Error::IncompatibleProtocol) => {
            assert!(well_formed && s.starts_with("udp://"), "{s:?}");
            assert_eq!(parsed.as_ref().err(), Some(&Error::IncompatibleProtocol));
        }
        other => panic!("unbind of {s:?} on a socket without endpoints: {other:?}"),
    }
});
