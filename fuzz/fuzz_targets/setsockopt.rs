//! Socket options: arbitrary option numbers and value bytes on every socket
//! type through `Socket::set_option`, each followed by `get_option` on the same
//! number. Nothing may panic; a plain `int` option that was set must read back.
//!
//! Input: [socket type] then operations, each [option selector] [length] [value]:
//! a selector below 0x80 is the option number itself (covering every libzmq
//! option), otherwise 4 more bytes give an arbitrary i32.
#![no_main]

use ferromq::{Context, OptionValue, SocketType};
use ferromq_fuzz::Input;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn ctx() -> &'static Context {
    static C: OnceLock<Context> = OnceLock::new();
    C.get_or_init(Context::new)
}

/// Options stored as a plain `int` that reads back as set (SNDHWM, RCVHWM,
/// LINGER, RECONNECT_IVL, BACKLOG, RCVTIMEO, SNDTIMEO).
const PLAIN_INTS: [i32; 7] = [23, 24, 17, 18, 19, 27, 28];

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let Some(kind) = SocketType::from_raw(i32::from(input.byte() % 12)) else {
        return;
    };
    let Ok(sock) = ctx().socket(kind) else {
        return;
    };
    let mut ops = 0;
    while !input.is_empty() && ops < 16 {
        ops += 1;
        let opt = input.option_number();
        let value = input.short_bytes();
        let set = sock.set_option(opt, value);
        let got = sock.get_option(opt);
        if set.is_ok() && PLAIN_INTS.contains(&opt) {
            let v = i32::from_ne_bytes(value.try_into().expect("int options take 4 bytes"));
            match got {
                Ok(OptionValue::Int(g)) => assert_eq!(g, v, "option {opt}"),
                Ok(_) => panic!("option {opt} read back as another type"),
                Err(e) => panic!("option {opt} set but unreadable: {e:?}"),
            }
        }
        let _ = sock.get_int(opt);
    }
    sock.close();
});
