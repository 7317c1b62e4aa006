//! The canonical JSONL reader: line splitting across chunks (BOM, CRLF, blank lines), line
//! validation and the streaming fold of steps, with inline `{"tools": …}` lines and schema checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_canonical(data));
