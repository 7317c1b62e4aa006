//! The message-transcript reader: OpenAI chat, Responses and Anthropic shapes, one record per
//! file, arrays and JSONL.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_transcript(data));
