//! End to end: any drop of files (format detected by content) → corpus → report (with a small
//! bootstrap) → every rendering the CLI and the app make. The identity checks of the spec are the
//! oracle: a violation on any input is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_report(data));
