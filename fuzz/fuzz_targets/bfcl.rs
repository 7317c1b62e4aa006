//! The BFCL importer: a `…_result.json` file (JSON lines with inference logs) paired with the
//! run's `…_score.json` when the input ends.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_bfcl(data));
