//! A dropped `.tar.gz` or `.jsonl.gz`, or a `?data=` link's gzip body as it downloads
//! (`web::fetched`), decompressed and read as it comes, through `Ingest::begin_stream` /
//! `stream_step` / `end_stream`. The decoder runs on a pool worker where there is a pool
//! (`pool::gunzip`: its second of work off this worker's thread) — for a dropped file the wasm
//! decoder (zlib-rs, faster there than the browser's: `pool::gunzip::serve_wasm`), for a
//! download the browser's own `DecompressionStream` — else here, the browser's.
//!
//! The report is the one the wasm decoder (and the CLI) gives, whatever the browser's decoder
//! does with damaged input: the last [`READ`] bytes it gave are held back until it ends well,
//! and if it fails (a cut or corrupt stream, or a gzip of several members, which Chromium
//! refuses as "junk after the end") the wasm decoder reads the stream again from its start,
//! passing over what was handed over, and goes on from there (`Ingest::stream_from`).
//! zstd goes the same way where the browser decodes it (Chromium 156 does not: there the wasm
//! decoder reads it). The stream's small members are prepared by the pool workers while this
//! worker reads on (`pool::whole`).

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, ReadableStreamDefaultReader};

use super::decompression_stream::{class, feed_decoder, next_chunk, open, Compressed};
use super::pool::gunzip::Chunk;
use crate::formats::{ImportOptions, RandomAccess};
use crate::ingest::archive::{ArchiveProgress, Container, READ};
use crate::ingest::Ingest;

/// The browser's decoder for one stream's kind.
pub(super) struct Decoder {
    kind: Container,
    format: &'static str,
}

/// The browser's decoder for `kind`, where it has one (gzip wherever `DecompressionStream`
/// is; zstd where it also takes that format).
pub(super) fn decoder_for(kind: Container) -> Option<Decoder> {
    let format = match kind {
        Container::Gzip => "gzip",
        Container::Zstd => "zstd",
        Container::Tar | Container::Zip => return None,
    };
    let class = class()?;
    if kind == Container::Zstd {
        js_sys::Reflect::construct(&class, &js_sys::Array::of1(&format.into())).ok()?;
    }
    Some(Decoder { kind, format })
}

/// Where the decompressed chunks come from: a pool worker's decoder, or this worker's.
enum Source {
    Pool(super::pool::gunzip::GunzipRun),
    Here(ReadableStreamDefaultReader, Rc<Cell<u64>>),
}

impl Source {
    async fn next(&mut self) -> Chunk {
        match self {
            Source::Pool(run) => run.next().await,
            Source::Here(reader, written) => match next_chunk(reader).await {
                Some(Some(value)) => Chunk::Bytes(value.to_vec(), written.get()),
                Some(None) => Chunk::End,
                None => Chunk::Failed,
            },
        }
    }

    fn stop(&self) {
        if let Source::Here(reader, _) = self {
            let _ = reader.cancel();
        }
    }
}

/// Reads `input` (named `name`, `size` compressed bytes) through `decoder` ([`decoder_for`])
/// into `ingest`, the decoder on a pool worker where there is a pool. `src` is the same file by
/// offset, for the wasm decoder when the browser's fails; a download has none: its `File`,
/// made as it is read, is read there instead, and is what this returns.
#[allow(clippy::too_many_arguments)]
pub(super) async fn read_stream(
    ingest: &mut Ingest,
    name: &str,
    options: &ImportOptions,
    input: Compressed,
    size: u64,
    src: Option<&mut dyn RandomAccess>,
    decoder: Decoder,
    on_progress: &mut dyn FnMut(ArchiveProgress),
) -> Option<File> {
    let mut steps = ingest.begin_stream(name, options, decoder.kind, size);
    let body = matches!(input, Compressed::Body(..));
    // Where a download's `File` will come from when this worker reads it.
    let mut download: Option<js_sys::Promise> = None;
    let mut source = match super::pool::gunzip::GunzipRun::start(&input, decoder.format) {
        Some(run) => Some(Source::Pool(run)),
        None => {
            let (writer, reader) = open(decoder.format).unzip();
            let written = Rc::new(Cell::new(0u64));
            let feed = feed_decoder(input, writer, written.clone());
            download = Some(wasm_bindgen_futures::future_to_promise(async move {
                Ok(feed.await.map_or(JsValue::NULL, JsValue::from))
            }));
            reader.map(|reader| Source::Here(reader, written))
        }
    };
    // The browser's decoder's output, its last READ bytes held back until it ends well (kept
    // as the chunks it gave: copied once out of JS, never zero-filled or moved).
    let mut held: std::collections::VecDeque<Vec<u8>> = Default::default();
    let mut held_bytes = 0usize;
    let mut handed = 0u64;
    let mut failed = source.is_none();
    // The small members, prepared by the pool workers while this worker reads on.
    let mut sink = super::pool::whole::PoolSink::start();
    if let Some(source) = source.as_mut() {
        loop {
            if steps.done() {
                source.stop();
                break;
            }
            let (chunk, read) = match source.next().await {
                Chunk::Bytes(chunk, read) => (chunk, read),
                Chunk::End => break,
                Chunk::Failed => {
                    failed = true;
                    break;
                }
            };
            held_bytes += chunk.len();
            held.push_back(chunk);
            while held.front().is_some_and(|c| held_bytes - c.len() >= READ) {
                let Some(chunk) = held.pop_front() else {
                    break;
                };
                held_bytes -= chunk.len();
                handed += chunk.len() as u64;
                ingest.stream_step(&mut steps, &chunk, read, &mut sink, on_progress);
            }
            sink.land(ingest);
            while sink.too_far_ahead() {
                sink.wait().await;
                sink.land(ingest);
            }
        }
    }
    // A download is read to its end whatever happened above: its `File` is what the wasm
    // decoder reads if need be, and what the rollout viewer reads members back from.
    let file = match (&source, download) {
        _ if !body => None,
        (Some(Source::Pool(run)), _) => run.file().await,
        (_, Some(promise)) => JsFuture::from(promise)
            .await
            .ok()
            .and_then(|f| f.dyn_into::<File>().ok()),
        _ => None,
    };
    drop(source);
    let error = if failed {
        // The wasm decoder reads on in one go, with no pause to take the pool's answers in:
        // the members held are pushed first, and what it reads is read here.
        sink.finish(ingest).await;
        let in_order = &mut crate::ingest::archive::InOrder;
        let reader = web_sys::FileReaderSync::new().ok();
        match (src, &file, &reader) {
            (Some(src), _, _) => ingest.stream_from(&mut steps, src, handed, in_order, on_progress),
            (None, Some(file), Some(reader)) => {
                let mut access = super::file_access::FileAccess { file, reader };
                ingest.stream_from(&mut steps, &mut access, handed, in_order, on_progress)
            }
            (None, _, _) => Some(format!(
                "the download of {name} failed after {} MB; what came before is read",
                handed / 1_000_000
            )),
        }
    } else {
        for chunk in held {
            ingest.stream_step(&mut steps, &chunk, size, &mut sink, on_progress);
        }
        sink.finish(ingest).await;
        None
    };
    ingest.end_stream(steps, error, &mut sink, on_progress);
    file
}
