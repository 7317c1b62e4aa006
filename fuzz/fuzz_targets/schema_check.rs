//! The tool-schema checker: compiling arbitrary tool definitions (any JSON Schema a log may
//! carry) and checking arbitrary arguments against them.
//!
//! Input: `tools JSON` FILE_SEP `tool name` FILE_SEP `arguments JSON`.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_schema(data));
