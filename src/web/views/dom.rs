//! Small DOM helpers the views share (and the app shell uses): below the views, so no view
//! imports the shell that mounts it.

use wasm_bindgen::JsCast;

/// The files of a `FileList`.
pub fn file_list(list: &web_sys::FileList) -> Vec<web_sys::File> {
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// The value of an `<input>` or `<select>` from its change event.
pub fn target_value(e: &web_sys::Event) -> String {
    e.target()
        .and_then(|t| {
            t.dyn_ref::<web_sys::HtmlInputElement>()
                .map(|i| i.value())
                .or_else(|| t.dyn_ref::<web_sys::HtmlSelectElement>().map(|s| s.value()))
        })
        .unwrap_or_default()
}

/// Whether the system asks for the dark theme (the plots follow it).
pub fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}
