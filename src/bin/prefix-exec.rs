//! The `prefix-exec` command line; the code is the library's `cli` module.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    prefix_exec::cli::main_with(std::env::args_os())
}

// mimalloc rather than the system's malloc: see Cargo.toml.
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
