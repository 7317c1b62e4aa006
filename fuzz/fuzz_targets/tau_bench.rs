//! The tau-bench (v1) importer: a JSON array of `{task_id, trial, reward, info, traj}`.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| common::check_tau_bench(data));
