//! A dropped `.tar.gz` or `.jsonl.gz` decompressed by the browser's own `DecompressionStream`
//! (native code, faster than the wasm decoder) and read as it comes, through
//! `Ingest::begin_stream` / `stream_step` / `end_stream`.
//!
//! The report is the one the wasm decoder (and the CLI) gives, whatever the browser's decoder
//! does with damaged input: the last [`READ`] bytes it gave are held back until it ends well,
//! and if it fails (a cut or corrupt stream, or a gzip of several members, which Chromium
//! refuses as "junk after the end") the wasm decoder reads the stream again from its start,
//! passing over what was handed over, and goes on from there (`Ingest::stream_from`).
//! zstd goes the same way where the browser decodes it (Chromium 156 does not: there the wasm
//! decoder reads it).

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, FileReaderSync, ReadableStreamDefaultReader, WritableStreamDefaultWriter};

use crate::formats::{ImportOptions, RandomAccess};
use crate::ingest::archive::{ArchiveProgress, Container, READ};
use crate::ingest::Ingest;

/// Compressed bytes written to the decoder at a time.
const BLOCK: f64 = 1024.0 * 1024.0;

/// The browser's decoder of one stream.
pub(super) struct Decoder {
    kind: Container,
    /// The `DecompressionStream`.
    stream: JsValue,
}

/// A `DecompressionStream` for `kind`, where the browser has one for it.
pub(super) fn decoder_for(kind: Container) -> Option<Decoder> {
    let format = match kind {
        Container::Gzip => "gzip",
        Container::Zstd => "zstd",
        Container::Tar | Container::Zip => return None,
    };
    let class = js_sys::Reflect::get(&js_sys::global(), &"DecompressionStream".into()).ok()?;
    let class: js_sys::Function = class.dyn_into().ok()?;
    let stream = js_sys::Reflect::construct(&class, &js_sys::Array::of1(&format.into())).ok()?;
    Some(Decoder { kind, stream })
}

fn field(object: &JsValue, name: &str) -> Option<JsValue> {
    js_sys::Reflect::get(object, &name.into()).ok()
}

/// Writes `file` into the decoder's writable side, block by block, counting the bytes written
/// in `written`; closes it at the end. Stops when a write fails (the decoder failed or its
/// reader was cancelled).
async fn feed_decoder(file: File, writer: WritableStreamDefaultWriter, written: Rc<Cell<u64>>) {
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

/// Reads `file` (named `name`) through `decoder` ([`decoder_for`]) into `ingest`; `src` is the
/// same file by offset, for the wasm decoder when the browser's fails.
pub(super) async fn read_stream(
    ingest: &mut Ingest,
    name: &str,
    options: &ImportOptions,
    file: &File,
    src: &mut dyn RandomAccess,
    decoder: Decoder,
    on_progress: &mut dyn FnMut(ArchiveProgress),
) {
    let mut steps = ingest.begin_stream(name, options, decoder.kind, file.size() as u64);
    let decoder = decoder.stream;
    let pair = field(&decoder, "writable")
        .and_then(|w| w.dyn_into::<web_sys::WritableStream>().ok())
        .zip(
            field(&decoder, "readable").and_then(|r| r.dyn_into::<web_sys::ReadableStream>().ok()),
        );
    let streams = pair.and_then(|(writable, readable)| {
        let writer = writable.get_writer().ok()?;
        let reader: ReadableStreamDefaultReader = readable.get_reader().unchecked_into();
        Some((writer, reader))
    });
    // The browser's decoder's output, its last READ bytes held back until it ends well (kept
    // as the chunks it gave: copied once out of JS, never zero-filled or moved).
    let mut held: std::collections::VecDeque<Vec<u8>> = Default::default();
    let mut held_bytes = 0usize;
    let mut handed = 0u64;
    let mut failed = streams.is_none();
    if let Some((writer, reader)) = streams {
        let written = Rc::new(Cell::new(0u64));
        wasm_bindgen_futures::spawn_local(feed_decoder(file.clone(), writer, written.clone()));
        loop {
            if steps.done() {
                let _ = reader.cancel();
                break;
            }
            let Ok(result) = JsFuture::from(reader.read()).await else {
                failed = true;
                break;
            };
            if field(&result, "done").and_then(|d| d.as_bool()) == Some(true) {
                break;
            }
            let Some(value) =
                field(&result, "value").and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
            else {
                failed = true;
                break;
            };
            let chunk = value.to_vec();
            held_bytes += chunk.len();
            held.push_back(chunk);
            while held.front().is_some_and(|c| held_bytes - c.len() >= READ) {
                let Some(chunk) = held.pop_front() else {
                    break;
                };
                held_bytes -= chunk.len();
                handed += chunk.len() as u64;
                ingest.stream_step(&mut steps, &chunk, written.get(), on_progress);
            }
        }
    }
    let error = if failed {
        ingest.stream_from(&mut steps, src, handed, on_progress)
    } else {
        for chunk in held {
            ingest.stream_step(&mut steps, &chunk, file.size() as u64, on_progress);
        }
        None
    };
    ingest.end_stream(steps, error, on_progress);
}
