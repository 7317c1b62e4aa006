//! A dropped `.tar.gz` or `.jsonl.gz` decompressed by the browser's own `DecompressionStream`
//! and read as it comes, through `Ingest::begin_stream` / `stream_step` / `end_stream`. The
//! decoder runs on a pool worker where there is a pool (`pool::gunzip`: its second of work off
//! this worker's thread), else here.
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

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, ReadableStreamDefaultReader};

use super::decompression_stream::{class, feed_decoder, field, open};
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
            Source::Here(reader, written) => {
                let Ok(result) = JsFuture::from(reader.read()).await else {
                    return Chunk::Failed;
                };
                if field(&result, "done").and_then(|d| d.as_bool()) == Some(true) {
                    return Chunk::End;
                }
                match field(&result, "value").and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
                {
                    Some(value) => Chunk::Bytes(value.to_vec(), written.get()),
                    None => Chunk::Failed,
                }
            }
        }
    }

    fn stop(&self) {
        if let Source::Here(reader, _) = self {
            let _ = reader.cancel();
        }
    }
}

/// Reads `file` (named `name`) through `decoder` ([`decoder_for`]) into `ingest`, the decoder
/// on a pool worker where there is a pool; `src` is the same file by offset, for the wasm
/// decoder when the browser's fails.
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
    let source = match super::pool::gunzip::GunzipRun::start(file, decoder.format) {
        Some(run) => Some(Source::Pool(run)),
        None => open(decoder.format).map(|(writer, reader)| {
            let written = Rc::new(Cell::new(0u64));
            wasm_bindgen_futures::spawn_local(feed_decoder(file.clone(), writer, written.clone()));
            Source::Here(reader, written)
        }),
    };
    // The browser's decoder's output, its last READ bytes held back until it ends well (kept
    // as the chunks it gave: copied once out of JS, never zero-filled or moved).
    let mut held: std::collections::VecDeque<Vec<u8>> = Default::default();
    let mut held_bytes = 0usize;
    let mut handed = 0u64;
    let mut failed = source.is_none();
    // The small members, prepared by the pool workers while this worker reads on.
    let mut sink = super::pool::whole::PoolSink::start();
    if let Some(mut source) = source {
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
    let error = if failed {
        // The wasm decoder reads on in one go, with no pause to take the pool's answers in:
        // the members held are pushed first, and what it reads is read here.
        sink.finish(ingest).await;
        let in_order = &mut crate::ingest::archive::InOrder;
        ingest.stream_from(&mut steps, src, handed, in_order, on_progress)
    } else {
        for chunk in held {
            let size = file.size() as u64;
            ingest.stream_step(&mut steps, &chunk, size, &mut sink, on_progress);
        }
        sink.finish(ingest).await;
        None
    };
    ingest.end_stream(steps, error, &mut sink, on_progress);
}
