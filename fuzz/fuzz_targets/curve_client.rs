//! The CURVE client: see [`ferromq_fuzz::curve_target`] for the raw and
//! structured modes and what they check.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ferromq_fuzz::curve_target(data, false));
