//! Saving text or a canvas as a file download.

use gloo_file::{Blob, ObjectUrl};
use wasm_bindgen::JsCast;
use web_sys::{HtmlAnchorElement, HtmlCanvasElement};

/// How long an object URL outlives the click that starts its download, in milliseconds.
const KEEP_URL_MS: u32 = 30_000;

/// Offers `text` as a download named `name`.
pub fn download_text(name: &str, mime: &str, text: &str) {
    download_blob(name, Blob::new_with_options(text, Some(mime)));
}

/// Offers bytes as a download named `name`.
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) {
    download_blob(name, Blob::new_with_options(bytes, Some(mime)));
}

fn download_blob(name: &str, blob: Blob) {
    // The URL is revoked when the last `ObjectUrl` is dropped.
    let url = ObjectUrl::from(blob);
    click_link(name, &url);
    // The download starts asynchronously: release the blob only later.
    gloo_timers::callback::Timeout::new(KEEP_URL_MS, move || drop(url)).forget();
}

/// Offers a canvas as a PNG download.
pub fn download_canvas(name: &str, canvas: &HtmlCanvasElement) {
    if let Ok(url) = canvas.to_data_url_with_type("image/png") {
        click_link(name, &url);
    }
}

fn click_link(name: &str, href: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(a) = doc.create_element("a") else {
        return;
    };
    let Ok(a) = a.dyn_into::<HtmlAnchorElement>() else {
        return;
    };
    a.set_href(href);
    a.set_download(name);
    a.set_hidden(true);
    if let Some(body) = doc.body() {
        let _ = body.append_child(&a);
        a.click();
        let _ = body.remove_child(&a);
    }
}
