//! A `?data=URL` link, fetched by the scoring worker and read while it downloads.
//!
//! The page hands the worker the link in place of a file (`web::state`). A gzip body (a
//! `.tar.gz` of runs, a `.jsonl.gz`; zstd too where the browser decodes it) of a known length
//! goes straight into the browser's decoder (`web::native_decoder`), so reading begins with the first bytes and the download goes
//! no faster than it is read; its bytes are kept as they come, as blobs
//! (`decompression_stream::read_body`), and become the `File` that later reads use (the rollout
//! viewer, a recomputation). Anything else (a zip, whose table of contents is at its end; zstd,
//! which Chromium does not decode; plain files) is downloaded into a `File` first and read as a
//! dropped one. Either way the bytes never pass through this worker's memory whole.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStream, ReadableStreamDefaultReader};

use super::decompression_stream::next_chunk;

/// A link's response: its body, and its length where the server said it and did not encode
/// the transfer (the decompression limit is set by the compressed size, so a stream is read as
/// it comes only where that size is known before it ends).
pub(super) struct Opened {
    pub(super) body: ReadableStream,
    pub(super) size: Option<u64>,
}

/// Fetches `url` (from the worker: the page's own origin, or one that allows cross-origin
/// requests).
pub(super) async fn open(url: &str) -> Result<Opened, String> {
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let hint = "a ?data= URL must be on this site or allow cross-origin requests";
    let response = JsFuture::from(scope.fetch_with_str(url))
        .await
        .map_err(|_| format!("could not load {url} ({hint})"))?;
    let response: web_sys::Response = response
        .dyn_into()
        .map_err(|_| format!("could not load {url}"))?;
    if !response.ok() {
        return Err(format!("could not load {url}: HTTP {}", response.status()));
    }
    let headers = response.headers();
    let header = |name: &str| headers.get(name).ok().flatten();
    let identity = header("content-encoding").is_none_or(|e| e.trim() == "identity");
    let size = header("content-length")
        .and_then(|l| l.trim().parse::<u64>().ok())
        .filter(|_| identity);
    let body = response
        .body()
        .ok_or_else(|| format!("{url} has no body"))?;
    Ok(Opened { body, size })
}

/// The first bytes of `body` (at least `want`, fewer only where it is shorter), and the body
/// whole again, from its first byte: the bytes are read from one branch of a tee, which is
/// then cancelled.
pub(super) async fn peek(
    body: ReadableStream,
    want: usize,
) -> Result<(Vec<u8>, ReadableStream), String> {
    let branches = body.tee();
    let (Ok(look), Ok(whole)) = (
        branches.get(0).dyn_into::<ReadableStream>(),
        branches.get(1).dyn_into::<ReadableStream>(),
    ) else {
        return Err("the download cannot be read".to_string());
    };
    let reader: ReadableStreamDefaultReader = look.get_reader().unchecked_into();
    let mut head = Vec::new();
    while head.len() < want {
        match next_chunk(&reader).await {
            Some(Some(chunk)) => head.extend(chunk.to_vec()),
            Some(None) => break,
            None => return Err("the download failed".to_string()),
        }
    }
    let _ = reader.cancel();
    Ok((head, whole))
}
