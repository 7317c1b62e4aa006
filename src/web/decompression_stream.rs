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

/// What a decoder reads: a dropped file, or a `?data=` download's body as it arrives
/// (`web::fetched`), read once as it comes.
pub enum Compressed {
    File(File),
    /// The body and the name its `File` is given once it is all read.
    Body(web_sys::ReadableStream, String),
}

impl Compressed {
    /// A message's value (the file, or the body moved) back.
    pub(super) fn from_js(value: JsValue, name: &str) -> Option<Compressed> {
        if value.is_instance_of::<File>() {
            Some(Compressed::File(value.unchecked_into()))
        } else if value.is_instance_of::<web_sys::ReadableStream>() {
            Some(Compressed::Body(value.unchecked_into(), name.to_string()))
        } else {
            None
        }
    }
}

/// Writes `input` into the decoder's writable side (`writer`; none where no decoder could be
/// made), block by block, counting the bytes written in `written`; closes it at the end. A file
/// stops at the first write that fails (the decoder failed or its reader was cancelled). A body
/// is read to its end whatever the decoder does, and comes back as a `File`
/// ([`BodyParts`]): the wasm decoder reads that file where the browser's decoder failed, and
/// the rollout viewer reads members back from it. `None` for a file, or a body whose download
/// failed.
pub(super) async fn feed_decoder(
    input: Compressed,
    writer: Option<WritableStreamDefaultWriter>,
    written: Rc<Cell<u64>>,
) -> Option<File> {
    let (file, writer) = match input {
        Compressed::Body(body, name) => {
            let mut on_read = |n| written.set(n);
            return read_body(body, &name, writer, &mut on_read).await.ok();
        }
        Compressed::File(file) => (file, writer?),
    };
    let Ok(reader) = FileReaderSync::new() else {
        let _ = JsFuture::from(writer.abort()).await;
        return None;
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
            return None;
        };
        if JsFuture::from(writer.write_with_chunk(&chunk))
            .await
            .is_err()
        {
            return None;
        }
        at = end;
        written.set(end as u64);
    }
    let _ = JsFuture::from(writer.close()).await;
    None
}

/// Reads `body` to its end into a `File` named `name`, kept as it comes ([`BodyParts`]); each
/// chunk is also written to `writer` while it takes them (the download then goes no faster than
/// the decoder reads), and `on_read` is told the bytes read so far.
pub(super) async fn read_body(
    body: web_sys::ReadableStream,
    name: &str,
    mut writer: Option<WritableStreamDefaultWriter>,
    on_read: &mut dyn FnMut(u64),
) -> Result<File, String> {
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut parts = BodyParts::default();
    loop {
        let Some(chunk) = next_chunk(&reader).await else {
            if let Some(w) = writer {
                let _ = JsFuture::from(w.abort()).await;
            }
            return Err(format!("the download of {name} failed"));
        };
        let Some(chunk) = chunk else { break };
        parts.push(&chunk);
        on_read(parts.bytes);
        // Once the decoder is gone, the rest is only kept.
        if let Some(w) = &writer {
            if JsFuture::from(w.write_with_chunk(&chunk)).await.is_err() {
                writer = None;
            }
        }
    }
    if let Some(w) = writer {
        let _ = JsFuture::from(w.close()).await;
    }
    parts
        .file(name)
        .ok_or_else(|| format!("the download of {name} could not be kept"))
}

/// The next chunk of a stream: `Some(None)` at its end, `None` where it failed.
pub(super) async fn next_chunk(
    reader: &ReadableStreamDefaultReader,
) -> Option<Option<js_sys::Uint8Array>> {
    let result = JsFuture::from(reader.read()).await.ok()?;
    if field(&result, "done").and_then(|d| d.as_bool()) == Some(true) {
        return Some(None);
    }
    field(&result, "value")
        .and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
        .map(Some)
}

/// A download's bytes kept as it is read, in blobs of about [`PART_BYTES`]: a `Blob`'s bytes
/// live in the browser's blob storage (which pages big ones to disk), not in this worker's
/// memory, so a download read as it comes is never whole in memory, and is a `File` at its end.
#[derive(Default)]
struct BodyParts {
    blobs: Option<js_sys::Array>,
    pending: Option<js_sys::Array>,
    pending_bytes: u64,
    bytes: u64,
    /// A blob could not be made: the file would miss bytes, so there is none.
    lost: bool,
}

const PART_BYTES: u64 = 4 << 20;

impl BodyParts {
    fn push(&mut self, chunk: &js_sys::Uint8Array) {
        let n = chunk.length() as u64;
        self.pending
            .get_or_insert_with(js_sys::Array::new)
            .push(chunk);
        self.pending_bytes += n;
        self.bytes += n;
        if self.pending_bytes >= PART_BYTES {
            self.seal();
        }
    }

    fn seal(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        self.pending_bytes = 0;
        match web_sys::Blob::new_with_u8_array_sequence(&pending) {
            Ok(blob) => {
                self.blobs
                    .get_or_insert_with(js_sys::Array::new)
                    .push(&blob);
            }
            Err(_) => self.lost = true,
        }
    }

    /// The bytes as one `File` named `name`.
    fn file(mut self, name: &str) -> Option<File> {
        self.seal();
        if self.lost {
            return None;
        }
        let blobs = self.blobs.unwrap_or_default();
        let options = web_sys::FilePropertyBag::new();
        options.set_type("application/octet-stream");
        File::new_with_blob_sequence_and_options(&blobs, name, &options).ok()
    }
}
