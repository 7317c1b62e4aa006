//! Archives as containers: the gzip framing (ingest::archive), hostile bytes and the input
//! wrapped in a well-formed gzip, read as the file it holds.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_archive_gzip(data));
