//! The tau2 importer in all its forms: a `Results` object, a bare simulations array, and the
//! directory form (a `results.json` plus simulation files, resolved across files).
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_tau2(data));
