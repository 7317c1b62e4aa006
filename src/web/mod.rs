//! The browser app (compiled for wasm32 only): a Leptos client-side app whose scoring runs in a
//! Web Worker with the same core as the CLI.
//!
//! - [`state`]: the stores (session, results) and the worker bridge;
//! - [`view_state`]: what is on screen, mirrored in the URL hash;
//! - [`protocol`]: the page ↔ worker messages;
//! - [`worker`]: the worker's side; [`pool`]: the bootstrap spread over a pool of workers;
//! - [`native_decoder`]: gzip decompressed by the browser's own `DecompressionStream`
//!   ([`decompression_stream`]), on a pool worker where there is a pool; [`fetched`]: a
//!   `?data=` link read while it downloads;
//! - [`app`] and [`views`]: components; they read stores and call [`state::Session`] methods,
//!   and compute nothing of their own beyond formatting.

pub mod app;
pub mod decompression_stream;
pub mod download;
pub mod fetched;
pub mod file_access;
pub mod folders;
pub mod integrity;
pub mod native_decoder;
pub mod pool;
pub mod protocol;
pub mod site;
pub mod state;
pub mod view_state;
pub mod views;
pub mod worker;

use wasm_bindgen::JsCast;

/// Entry point of the app binary.
pub fn start_app() {
    // A panic must never leave a dead page without a word: show a banner, log the details.
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("{info}").into());
        if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
            if let Some(el) = doc.get_element_by_id("panic-banner") {
                el.set_text_content(Some(&format!(
                    "Internal error — the page stopped working. Please reload, and report this \
                     message: {info}"
                )));
                if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
                    el.set_hidden(false);
                }
            }
        }
    }));
    leptos::mount::mount_to_body(app::App);
}
