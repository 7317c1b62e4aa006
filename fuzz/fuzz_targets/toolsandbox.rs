//! The ToolSandbox importer: a run's `result_summary.json` with its scenarios'
//! `execution_context.json` and `conversation.json` files, joined across files.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_toolsandbox(data));
