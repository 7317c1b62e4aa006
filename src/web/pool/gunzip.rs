//! A gzip stream decompressed by a pool worker, its output moved to the coordinator chunk by
//! chunk: the decoder's second of work (on the leaderboard `.tar.gz`) off the scoring worker's
//! thread, which reads the members in meanwhile. A dropped file goes through the wasm decoder
//! (zlib-rs, [`serve_wasm`]: faster there than the browser's), a download's body through the
//! browser's `DecompressionStream` as it arrives.
//!
//! One pool worker runs the decoder (a stream decodes in order only); it sends at most the
//! chunks the coordinator has given it credit for ([`CREDIT`] ahead of the chunk taken), so a
//! fast decoder never piles the whole stream up in the coordinator's memory. Whatever goes
//! wrong here — the decoder fails, the pool worker dies — the coordinator is told the stream
//! failed and reads on with the wasm decoder, as when its own decoder fails
//! (`web::native_decoder`).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::Read;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::super::decompression_stream::Compressed;
use super::super::protocol::{FromWorker, ToWorker};
use super::spare::Spare;

/// The pool worker that runs the decoder.
const DECODER: usize = 0;
/// Messages the pool worker may send ahead of the one the coordinator takes…
const CREDIT: u64 = 16;
/// …each holding the decoder's chunks up to this many bytes (one message per chunk of 64 KiB
/// cost the coordinator more in messages than it saved).
const MESSAGE_BYTES: u32 = 1 << 20;

/// A chunk of the stream as the coordinator takes it.
pub enum Chunk {
    /// The next decompressed bytes, and the compressed bytes read so far.
    Bytes(Vec<u8>, u64),
    End,
    Failed,
}

struct Gunzip {
    id: u32,
    /// Chunks arrived, each with the message it came in.
    ready: VecDeque<(Chunk, u64)>,
    /// Messages arrived so far.
    messages: u64,
    /// Messages whose chunks were all taken.
    taken: u64,
    waiting: Option<js_sys::Function>,
    /// A download's `File`, once the pool worker has read it all (`Some(None)`: it never will).
    file: Option<Option<web_sys::File>>,
    /// The buffers of the chunks taken in, to go back to the pool worker with the next credit
    /// (filled again there, they cost no fresh allocation and page faults: 0.7 s of the
    /// decoder's core on the leaderboard `.tar.gz` when each message had a new one). Only the
    /// wasm decoder's: the browser's decoder makes its own.
    emptied: Option<Vec<js_sys::ArrayBuffer>>,
}

thread_local! {
    /// The coordinator's side of the running stream.
    static GUNZIP: RefCell<Option<Gunzip>> = const { RefCell::new(None) };
    /// A pool worker's side: the runs it decodes, with the credit each has and the wait for more.
    static SERVING: RefCell<Vec<Serving>> = const { RefCell::new(Vec::new()) };
}

/// One stream decompressing on pool worker 0; dropping it stops the decoder.
pub struct GunzipRun {
    id: u32,
}

impl GunzipRun {
    /// Starts decompressing `input` (format `"gzip"`) on the pool, a download's body moved
    /// there; `None` without a pool.
    pub fn start(input: &Compressed, format: &str) -> Option<GunzipRun> {
        if super::size() < 2 {
            return None;
        }
        let id = super::next_run();
        GUNZIP.with(|g| {
            *g.borrow_mut() = Some(Gunzip {
                id,
                ready: VecDeque::new(),
                messages: 0,
                taken: 0,
                waiting: None,
                file: None,
                emptied: wasm_decoded(input, format).map(|_| Vec::new()),
            })
        });
        let name = match input {
            Compressed::Body(_, name) => name.clone(),
            Compressed::File(_) => String::new(),
        };
        let msg = ToWorker::PoolGunzip {
            run: id,
            format: format.to_string(),
            credit: CREDIT,
            name,
        };
        match input {
            Compressed::File(file) => super::send_to(DECODER, &msg, "file", file),
            Compressed::Body(body, _) => {
                let body: &JsValue = body.as_ref();
                super::send_moved(DECODER, &msg, &[("file", body)], &js_sys::Array::of1(body));
            }
        }
        Some(GunzipRun { id })
    }

    /// The download's `File` once the pool worker has read all of it; `None` for a file, or
    /// where the download or the pool worker failed.
    pub async fn file(&self) -> Option<web_sys::File> {
        loop {
            let state = GUNZIP.with(|g| {
                let g = g.borrow();
                match g.as_ref().filter(|r| r.id == self.id) {
                    Some(run) => run.file.clone(),
                    None => Some(None),
                }
            });
            if let Some(file) = state {
                return file;
            }
            let promise = js_sys::Promise::new(&mut |resolve, _| {
                GUNZIP.with(|g| {
                    if let Some(run) = g.borrow_mut().as_mut() {
                        run.waiting = Some(resolve);
                    }
                })
            });
            let _ = JsFuture::from(promise).await;
        }
    }

    /// The next chunk, waiting for it if need be.
    pub async fn next(&self) -> Chunk {
        loop {
            let taken = GUNZIP.with(|g| {
                let mut g = g.borrow_mut();
                let run = g.as_mut().filter(|r| r.id == self.id)?;
                let (chunk, message) = run.ready.pop_front()?;
                // A message is taken when its last chunk is.
                let last = run.ready.front().is_none_or(|(_, m)| *m != message);
                let newly = last && message >= run.taken;
                if newly {
                    run.taken = message + 1;
                }
                Some((chunk, newly.then_some(run.taken)))
            });
            if let Some((chunk, taken)) = taken {
                if let Some(taken) = taken.filter(|t| t % (CREDIT / 4) == 0) {
                    let msg = ToWorker::PoolGunzipCredit {
                        run: self.id,
                        upto: taken + CREDIT,
                        stop: false,
                    };
                    let emptied = GUNZIP.with(|g| {
                        g.borrow_mut()
                            .as_mut()
                            .and_then(|r| r.emptied.as_mut().map(std::mem::take))
                            .unwrap_or_default()
                    });
                    let buffers: js_sys::Array = emptied.into_iter().collect();
                    if !super::send_moved(DECODER, &msg, &[("buffers", &buffers)], &buffers) {
                        // The credit goes whatever happened to the buffers: without it the
                        // decoder would wait for ever.
                        super::send_to(DECODER, &msg, "", &JsValue::NULL);
                    }
                }
                return chunk;
            }
            let gone = GUNZIP.with(|g| g.borrow().as_ref().is_none_or(|r| r.id != self.id));
            if gone {
                return Chunk::Failed;
            }
            // The executor runs at once: the chunk's arrival resolves the wait.
            let promise = js_sys::Promise::new(&mut |resolve, _| {
                GUNZIP.with(|g| {
                    if let Some(run) = g.borrow_mut().as_mut() {
                        run.waiting = Some(resolve);
                    }
                })
            });
            let _ = JsFuture::from(promise).await;
        }
    }
}

impl Drop for GunzipRun {
    fn drop(&mut self) {
        GUNZIP.with(|g| {
            let mut g = g.borrow_mut();
            if g.as_ref().is_some_and(|r| r.id == self.id) {
                *g = None;
            }
        });
        let msg = ToWorker::PoolGunzipCredit {
            run: self.id,
            upto: 0,
            stop: true,
        };
        super::send_to(DECODER, &msg, "", &JsValue::NULL);
    }
}

/// The pool worker decompressing a stream for this coordinator now, if any.
pub fn decoding() -> Option<usize> {
    GUNZIP.with(|g| g.borrow().is_some().then_some(DECODER))
}

fn arrived(run: u32, chunk: Chunk) {
    arrived_in(run, chunk, None)
}

/// A chunk arrived, with the buffer it came in (emptied: its bytes are copied out).
fn arrived_in(run: u32, chunk: Chunk, buffer: Option<js_sys::ArrayBuffer>) {
    let resolve = GUNZIP.with(|g| {
        let mut g = g.borrow_mut();
        let r = g.as_mut().filter(|r| r.id == run)?;
        r.ready.push_back((chunk, r.messages));
        // A buffer is moved once (the browser refuses a transfer list naming one twice).
        if let (Some(emptied), Some(b)) = (r.emptied.as_mut(), buffer) {
            if b.byte_length() > 0 && !emptied.contains(&b) {
                emptied.push(b);
            }
        }
        r.waiting.take()
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// A pool worker's chunks, on the coordinator (the message's `bytes` field, an array of
/// `Uint8Array`s, moved).
pub fn chunk_back(run: u32, read: u64, end: bool, failed: bool, data: &JsValue) {
    let arrays = js_sys::Reflect::get(data, &"bytes".into())
        .ok()
        .filter(|b| b.is_array())
        .map(|b| js_sys::Array::from(&b));
    match arrays {
        _ if failed => arrived(run, Chunk::Failed),
        Some(arrays) => {
            for a in arrays.iter() {
                match a.dyn_into::<js_sys::Uint8Array>() {
                    Ok(bytes) => {
                        let chunk = Chunk::Bytes(bytes.to_vec(), read);
                        arrived_in(run, chunk, Some(bytes.buffer()))
                    }
                    Err(_) => arrived(run, Chunk::Failed),
                }
            }
            if end {
                arrived(run, Chunk::End);
            }
        }
        None if end => arrived(run, Chunk::End),
        None => arrived(run, Chunk::Failed),
    }
    message_done(run);
}

fn message_done(run: u32) {
    GUNZIP.with(|g| {
        if let Some(r) = g.borrow_mut().as_mut().filter(|r| r.id == run) {
            r.messages += 1;
        }
    });
}

/// A pool worker stopped: the stream failed (the coordinator reads on itself), and a download
/// it was reading is lost.
pub fn break_run() {
    let run = GUNZIP.with(|g| {
        let mut g = g.borrow_mut();
        let run = g.as_mut()?;
        run.file.get_or_insert(None);
        Some(run.id)
    });
    if let Some(run) = run {
        arrived(run, Chunk::Failed);
    }
}

/// A pool worker's download `File` (the message's `file` field; null where it failed), on the
/// coordinator.
pub fn file_back(run: u32, data: &JsValue) {
    let file = js_sys::Reflect::get(data, &"file".into())
        .ok()
        .filter(|f| f.is_instance_of::<web_sys::File>())
        .map(|f| f.unchecked_into::<web_sys::File>());
    let resolve = GUNZIP.with(|g| {
        let mut g = g.borrow_mut();
        let r = g.as_mut().filter(|r| r.id == run)?;
        r.file = Some(file);
        r.waiting.take()
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

struct Serving {
    run: u32,
    /// Chunks it may have sent in all.
    upto: u64,
    stop: bool,
    waiting: Option<js_sys::Function>,
    /// Buffers the coordinator has emptied and sent back, to send the next chunks in.
    spare: Spare,
}

/// On a pool worker: more credit for run `run` (or the order to stop), with the buffers the
/// coordinator sent back (the message's `buffers` field).
pub fn credit(run: u32, upto: u64, stop: bool, data: &JsValue) {
    let buffers = js_sys::Reflect::get(data, &"buffers".into())
        .ok()
        .filter(|b| b.is_array())
        .map(|b| js_sys::Array::from(&b));
    let resolve = SERVING.with(|s| {
        let mut s = s.borrow_mut();
        let serving = s.iter_mut().find(|x| x.run == run)?;
        serving.upto = serving.upto.max(upto);
        serving.stop |= stop;
        for b in buffers.iter().flat_map(|a| a.iter()) {
            if let Ok(b) = b.dyn_into::<js_sys::ArrayBuffer>() {
                serving.spare.keep(b);
            }
        }
        serving.waiting.take()
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// Whether `run` may send chunk `seq` now: `Some(true)` yes, `Some(false)` stop, `None` wait.
fn may_send(run: u32, seq: u64) -> Option<bool> {
    SERVING.with(|s| {
        let s = s.borrow();
        let serving = s.iter().find(|x| x.run == run)?;
        if serving.stop {
            Some(false)
        } else {
            (seq < serving.upto).then_some(true)
        }
    })
}

/// A message to the coordinator, with `chunks` (`Uint8Array`s) moved beside it.
fn post(msg: &FromWorker, chunks: Option<&js_sys::Array>) {
    let obj = js_sys::Object::new();
    let text = serde_json::to_string(msg).unwrap_or_default();
    let _ = js_sys::Reflect::set(&obj, &"msg".into(), &text.into());
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = match chunks {
        Some(chunks) => {
            let _ = js_sys::Reflect::set(&obj, &"bytes".into(), chunks);
            let buffers = js_sys::Array::new();
            for c in chunks.iter() {
                if let Ok(c) = c.dyn_into::<js_sys::Uint8Array>() {
                    buffers.push(&c.buffer());
                }
            }
            scope.post_message_with_transfer(&obj, &buffers)
        }
        None => scope.post_message(&obj),
    };
}

fn reply(run: u32, seq: u64, read: u64, end: bool, failed: bool) -> FromWorker {
    FromWorker::PoolGunzipped {
        run,
        seq,
        read,
        end,
        failed,
    }
}

/// Waits until run `run` may send message `seq`: `true` when it may, `false` when it is to
/// stop.
async fn credit_for(run: u32, seq: u64) -> bool {
    loop {
        match may_send(run, seq) {
            Some(go) => return go,
            None => {
                let promise = js_sys::Promise::new(&mut |resolve, _| {
                    SERVING.with(|s| {
                        if let Some(x) = s.borrow_mut().iter_mut().find(|x| x.run == run) {
                            x.waiting = Some(resolve);
                        }
                    })
                });
                let _ = JsFuture::from(promise).await;
            }
        }
    }
}

/// On a pool worker: decompresses `input` (format `"gzip"` or `"zstd"`), sending each chunk to
/// the coordinator as credit allows. A dropped file's gzip goes through the wasm decoder
/// ([`serve_wasm`]); anything else through the browser's decoder, and a download's body is
/// read to its end whatever the decoder does, its `File` sent back
/// (`FromWorker::PoolGunzipFile`).
pub async fn serve(input: Compressed, run: u32, format: String, credit: u64) {
    SERVING.with(|s| {
        s.borrow_mut().push(Serving {
            run,
            upto: credit,
            stop: false,
            waiting: None,
            spare: Spare::default(),
        })
    });
    match wasm_decoded(&input, &format).cloned() {
        Some(file) => serve_wasm(file, run).await,
        None => serve_browser(input, run, &format).await,
    }
    stopped(run);
}

/// The file the pool worker decodes with the wasm decoder ([`serve_wasm`]): a dropped file's
/// gzip. Anything else (`None`) goes through the browser's decoder.
fn wasm_decoded<'a>(input: &'a Compressed, format: &str) -> Option<&'a web_sys::File> {
    match input {
        Compressed::File(file) if format == "gzip" => Some(file),
        _ => None,
    }
}

/// The browser's `DecompressionStream` decoding `input`.
async fn serve_browser(input: Compressed, run: u32, format: &str) {
    let (writer, reader) = super::super::decompression_stream::open(format).unzip();
    let written = Rc::new(Cell::new(0u64));
    let body = matches!(input, Compressed::Body(..));
    let feed = super::super::decompression_stream::feed_decoder(input, writer, written.clone());
    wasm_bindgen_futures::spawn_local(async move {
        let file = feed.await;
        if body {
            send_file(run, file);
        }
    });
    let Some(reader) = reader else {
        post(&reply(run, 0, 0, false, true), None);
        return;
    };
    let mut seq = 0;
    loop {
        if !credit_for(run, seq).await {
            let _ = reader.cancel();
            return;
        }
        // The decoder's chunks, gathered up to MESSAGE_BYTES for one message.
        let chunks = js_sys::Array::new();
        let mut bytes = 0u32;
        let mut end = false;
        while bytes < MESSAGE_BYTES {
            let Ok(result) = JsFuture::from(reader.read()).await else {
                post(&reply(run, seq, written.get(), false, true), None);
                return;
            };
            let field = |name: &str| js_sys::Reflect::get(&result, &name.into()).ok();
            if field("done").and_then(|d| d.as_bool()) == Some(true) {
                end = true;
                break;
            }
            match field("value").and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok()) {
                Some(chunk) => {
                    bytes += chunk.length();
                    chunks.push(&chunk);
                }
                None => {
                    post(&reply(run, seq, written.get(), false, true), None);
                    return;
                }
            }
        }
        post(&reply(run, seq, written.get(), end, false), Some(&chunks));
        if end {
            return;
        }
        seq += 1;
    }
}

/// A dropped file's gzip decompressed by the wasm decoder (the CLI's: zlib-rs). Measured on the
/// 15-run leaderboard `.tar.gz` (796 MB decompressed), zlib-rs compiled to wasm takes
/// 1.0-1.2 s of a core where the browser's `DecompressionStream` takes 1.5 s, and its output
/// comes in megabyte pieces instead of the stream's 64 KiB ones, each a promise and a buffer to
/// collect (#28). It also reads a gzip of several members, which Chromium's decoder refuses.
/// After each message the worker turns to its other messages (credit, members to prepare).
async fn serve_wasm(file: web_sys::File, run: u32) {
    let Ok(reader) = web_sys::FileReaderSync::new() else {
        post(&reply(run, 0, 0, false, true), None);
        return;
    };
    // Compressed bytes the decoder has taken: the progress each message reports.
    let at = Rc::new(Cell::new(0u64));
    let access = super::super::file_access::FileAccess {
        file: &file,
        reader: &reader,
    };
    let source = Box::new(crate::ingest::archive::Sequential::new(access, at.clone()));
    let Ok(mut decoder) =
        crate::ingest::archive::open_decoder(crate::ingest::archive::Container::Gzip, source)
    else {
        post(&reply(run, 0, 0, false, true), None);
        return;
    };
    let mut buf = vec![0u8; MESSAGE_BYTES as usize];
    let mut seq = 0;
    loop {
        if !credit_for(run, seq).await {
            return;
        }
        let mut filled = 0;
        let mut end = false;
        while filled < buf.len() {
            match decoder.read(&mut buf[filled..]) {
                Ok(0) => {
                    end = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // The coordinator's decoder reads on from what was sent and says what is
                    // wrong, as the CLI does.
                    post(&reply(run, seq, at.get(), false, true), None);
                    return;
                }
            }
        }
        let chunks = js_sys::Array::new();
        if filled > 0 {
            chunks.push(&pack(run, &buf[..filled]));
        }
        post(&reply(run, seq, at.get(), end, false), Some(&chunks));
        if end {
            return;
        }
        seq += 1;
        turn().await;
    }
}

/// `bytes` in a buffer the coordinator sent back, a fresh one if none is.
fn pack(run: u32, bytes: &[u8]) -> js_sys::Uint8Array {
    SERVING.with(|s| match s.borrow_mut().iter_mut().find(|x| x.run == run) {
        Some(serving) => serving.spare.pack(&[bytes], MESSAGE_BYTES as usize),
        None => js_sys::Uint8Array::from(bytes),
    })
}

/// Lets the worker's other messages in: a task of its own (a `MessageChannel` message, which
/// no timer clamping delays).
async fn turn() {
    let promise = js_sys::Promise::new(&mut |resolve, _| match web_sys::MessageChannel::new() {
        Ok(channel) => {
            channel.port1().set_onmessage(Some(resolve.unchecked_ref()));
            let _ = channel.port2().post_message(&JsValue::NULL);
        }
        Err(_) => {
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// A download's `File` (or that there is none) to the coordinator.
fn send_file(run: u32, file: Option<web_sys::File>) {
    let obj = js_sys::Object::new();
    let text = serde_json::to_string(&FromWorker::PoolGunzipFile { run }).unwrap_or_default();
    let _ = js_sys::Reflect::set(&obj, &"msg".into(), &text.into());
    let file = file.map_or(JsValue::NULL, JsValue::from);
    let _ = js_sys::Reflect::set(&obj, &"file".into(), &file);
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let _ = scope.post_message(&obj);
}

fn stopped(run: u32) {
    SERVING.with(|s| s.borrow_mut().retain(|x| x.run != run));
}
