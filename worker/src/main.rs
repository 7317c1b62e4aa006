//! The browser app's Web Worker: parses files and runs the report off the main thread.
//! Natively an empty program.

#[cfg(target_arch = "wasm32")]
fn main() {
    prefix_exec::web::worker::start_worker();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}
