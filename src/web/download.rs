//! Saving text or a canvas as a file download.

use wasm_bindgen::JsCast;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, HtmlCanvasElement, Url};

/// Offers `text` as a download named `name`.
pub fn download_text(name: &str, mime: &str, text: &str) {
    download_parts(name, mime, &text.into());
}

/// Offers bytes as a download named `name`.
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) {
    download_parts(name, mime, &js_sys::Uint8Array::from(bytes));
}

fn download_parts(name: &str, mime: &str, part: &wasm_bindgen::JsValue) {
    let parts = js_sys::Array::new();
    parts.push(part);
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    if let Ok(blob) = Blob::new_with_str_sequence_and_options(&parts, &options) {
        if let Ok(url) = Url::create_object_url_with_blob(&blob) {
            click_link(name, &url);
            // The download starts asynchronously: release the blob only later.
            leptos::prelude::set_timeout(
                move || {
                    let _ = Url::revoke_object_url(&url);
                },
                std::time::Duration::from_secs(30),
            );
        }
    }
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
