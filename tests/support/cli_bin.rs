//! The CLI binary that tests run as a process: the one named by `PREFIX_EXEC_CLI` when it is set
//! (`scripts/test.sh` sets it to the release build it makes for the browser tests, built before
//! `cargo test`: the tests that run the CLI over every released run took minutes unoptimised),
//! else the one cargo built for these tests.

use std::process::Command;

pub fn command() -> Command {
    Command::new(
        std::env::var_os("PREFIX_EXEC_CLI")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_prefix-exec").into()),
    )
}
