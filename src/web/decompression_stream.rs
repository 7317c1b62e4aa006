//! The browser's `DecompressionStream`, as the readers of compressed files use it: a new
//! decoder's two sides, and a file written into it block by block (`web::native_decoder` on
//! the scoring worker, `web::pool::gunzip` on a pool worker).

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, FileReaderSync, ReadableStreamDefaultReader, WritableStreamDefaultWriter};

/// Compressed bytes written to the decoder at a time.
const BLOCK: f64 = 1024.0 * 1024.0;

/// The `DecompressionStream` class, where the browser has one.
pub(super) fn class() -> Option<js_sys::Function> {
    js_sys::Reflect::get(&js_sys::global(), &"DecompressionStream".into())
        .ok()?
        .dyn_into()
        .ok()
}

/// A new `DecompressionStream` for `format`: the writer of its compressed side and the reader
/// of its decompressed side.
pub(super) fn open(
    format: &str,
) -> Option<(WritableStreamDefaultWriter, ReadableStreamDefaultReader)> {
    let stream = js_sys::Reflect::construct(&class()?, &js_sys::Array::of1(&format.into())).ok()?;
    let writable: web_sys::WritableStream = field(&stream, "writable")?.dyn_into().ok()?;
    let readable: web_sys::ReadableStream = field(&stream, "readable")?.dyn_into().ok()?;
    let writer = writable.get_writer().ok()?;
    Some((writer, readable.get_reader().unchecked_into()))
}

pub(super) fn field(object: &JsValue, name: &str) -> Option<JsValue> {
    js_sys::Reflect::get(object, &name.into()).ok()
}

/// Writes `file` into the decoder's writable side, block by block, counting the bytes written
/// in `written`; closes it at the end. Stops when a write fails (the decoder failed or its
/// reader was cancelled).
pub(super) async fn feed_decoder(
    file: File,
    writer: WritableStreamDefaultWriter,
    written: Rc<Cell<u64>>,
) {
    let Ok(reader) = FileReaderSync::new() else {
        let _ = JsFuture::from(writer.abort()).await;
        return;
    };
    let size = file.size();
    let mut at = 0.0;
    while at < size {
        let end = (at + BLOCK).min(size);
        let chunk = file
            .slice_with_f64_and_f64(at, end)
            .and_then(|blob| reader.read_as_array_buffer(&blob))
            .map(|buffer| js_sys::Uint8Array::new(&buffer));
        let Ok(chunk) = chunk else {
            let _ = JsFuture::from(writer.abort()).await;
            return;
        };
        if JsFuture::from(writer.write_with_chunk(&chunk))
            .await
            .is_err()
        {
            return;
        }
        at = end;
        written.set(end as u64);
    }
    let _ = JsFuture::from(writer.close()).await;
}
