//! A NULL handshake whose READY body is fuzzed; optionally with a ZAP request
//! first (`null_zap`) answered by a fuzz-chosen verdict. The engine's decision
//! is compared with a reference metadata parser and the socket-type rules.
//!
//! Input: [type/zap/version] [8 verdict bytes] [4 chunk bytes] READY data...
#![no_main]

use ferromq_fuzz::*;
use ferromq_zmtp::{Event, MechanismConfig, ProtocolError, SocketType, ZapVerdict};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let b0 = input.byte();
    let ours = ZMTP_TYPES[usize::from(b0 & 0x0F) % ZMTP_TYPES.len()];
    let null_zap = b0 & 0x10 != 0;
    let minor = (b0 >> 5) & 3;
    let mut vin = Input::new(input.take(8));
    let chunker = Chunker::from_input(&mut input);
    let meta = input.rest();

    let mut cfg = config(ours, MechanismConfig::Null, None);
    cfg.null_zap = null_zap;
    let mut e = Checked::new(cfg);
    let mut stream = greeting("NULL", false, 3, minor);
    stream.extend(command(b"READY", meta));
    let mut rejected = None;
    let mut zap = |req: &ferromq_zmtp::ZapRequest| {
        assert_eq!(req.mechanism, "NULL");
        assert!(req.credentials.is_empty());
        let v = verdict(&mut vin);
        if let ZapVerdict::Reject { status } = v {
            rejected = Some(status);
        }
        v
    };
    let events = e.feed_chunked(&stream, &chunker, &mut zap);
    assert_eq!(e.zap_requests.len(), usize::from(null_zap));
    if let Some(status) = rejected {
        assert_eq!(e.failed, Some(ProtocolError::AuthFailed { status }));
        return;
    }

    let expected: Result<(), ProtocolError> = match parse_metadata(meta) {
        None => Err(ProtocolError::InvalidMetadata),
        Some(props) => {
            let find = |key: &str| {
                props
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(key.as_bytes()))
                    .map(|(_, v)| v.clone())
            };
            match find("Socket-Type") {
                None => Err(ProtocolError::MissingSocketType),
                Some(t) => match SocketType::from_name(&t) {
                    None => Err(ProtocolError::UnknownSocketType(
                        String::from_utf8_lossy(&t).into_owned(),
                    )),
                    Some(peer) if !ours.is_compatible(peer) => {
                        Err(ProtocolError::IncompatibleSocketType { ours, peer })
                    }
                    Some(peer) => {
                        let info = e.ready.as_ref().expect("valid READY accepted");
                        assert_eq!(info.socket_type, peer);
                        assert_eq!(info.minor_version, minor.min(1));
                        let id = find("Identity").filter(|v| !v.is_empty());
                        assert_eq!(info.routing_id.as_deref(), id.as_deref());
                        assert_eq!(info.properties.len(), props.len());
                        for ((n1, v1), (n2, v2)) in info.properties.iter().zip(&props) {
                            assert_eq!(n1, &String::from_utf8_lossy(n2));
                            assert_eq!(&v1[..], &v2[..]);
                        }
                        Ok(())
                    }
                },
            }
        }
    };
    match expected {
        Ok(()) => {
            assert!(e.failed.is_none());
            assert!(matches!(events.last(), Some(Event::Ready(_))));
        }
        Err(err) => assert_eq!(e.failed, Some(err)),
    }
});
