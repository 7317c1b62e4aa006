//! The browser app's entry point (main thread). Natively an empty program.

#[cfg(target_arch = "wasm32")]
fn main() {
    prefix_exec::web::start_app();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}
