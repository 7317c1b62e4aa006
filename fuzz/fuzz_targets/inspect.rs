//! The Inspect AI reader: `.json` logs streamed in chunks, `.eval` zip archives pushed or read by
//! random access, and samples wrapped in DEFLATE and zstd archives.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_inspect(data));
