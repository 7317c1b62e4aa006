//! The Web Worker: reads the dropped files in chunks (with `FileReaderSync`, which workers
//! have), scores them and runs the bootstrap, posting progress as it goes. The page stays
//! responsive because none of this runs on its thread; cancelling a job means terminating the
//! worker and starting a fresh one.
//!
//! After a job the worker keeps the corpus and the files, to answer rollout queries.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, File, FileReaderSync, MessageEvent};

use super::decompression_stream::Compressed;
use super::file_access::FileAccess;
use super::protocol::{FromWorker, ToWorker};
use crate::browse::{list_rollouts, pair_tasks, parse_steps};
use crate::ingest::Ingest;
use crate::report::ReportPlan;
use crate::rollout::Corpus;

/// Bytes read per chunk: large enough to keep the per-call overhead small, small enough for
/// frequent progress and bounded memory.
const CHUNK: f64 = 4.0 * 1024.0 * 1024.0;
/// With a pool: the first read of a file, which tells its format, and the slices the pool reads
/// ahead (a few tens of milliseconds of parsing each, so messages cost little).
const HEAD: f64 = 64.0 * 1024.0;
const PIECE: f64 = CHUNK;
/// Files with less than this left after the first read are read by the coordinator alone.
const MIN_PARSE_AHEAD: f64 = 2.0 * PIECE;
/// Minimum time between progress messages.
const PROGRESS_MS: f64 = 50.0;

struct State {
    corpus: Corpus,
    names: Vec<String>,
    options: Vec<crate::formats::ImportOptions>,
    settings: super::protocol::JobSettings,
    /// Turns an imported rollout's raw bytes back into a canonical line.
    summary: crate::formats::ImportSummary,
    files: Vec<File>,
    /// Per file of the corpus, the dropped file it was read from (an archive's members are
    /// files of the corpus, so the indices differ once one was dropped).
    origin: Vec<usize>,
    /// The archive member last re-read for the rollout viewer (corpus file, bytes): the
    /// rollouts of one member are viewed without decompressing it again.
    member: RefCell<Option<(u32, Vec<u8>)>>,
    /// The archive last re-read from (its dropped file's index) and its members: a search or
    /// the filter's metadata reads them all without walking the archive again for each.
    members: RefCell<Option<(usize, crate::ingest::members::Members<'static>)>>,
    /// Every rollout's metadata (every key, [`crate::filter::all_meta_values`]), read from the
    /// files the first time a filter's `meta.*` clause or the filter's pickers need it (the
    /// corpus keeps none).
    meta: Option<Vec<crate::filter::MetaValues>>,
    /// The rollouts the report's filter kept (`None`: no filter): the rollout browser and the
    /// paired comparison list these only.
    filtered: Option<crate::filter::Filtered>,
}

impl State {
    /// Every rollout's metadata, read once.
    fn meta(&mut self) -> &[crate::filter::MetaValues] {
        if self.meta.is_none() {
            self.meta = Some(read_meta(self));
        }
        self.meta.as_deref().unwrap_or_default()
    }
}

/// Files read whole to find their rollouts' metadata, up to this size; a larger one is read
/// rollout by rollout (a slice each), so memory stays bounded.
const WHOLE_FILE: f64 = 256.0 * 1024.0 * 1024.0;

/// The bytes of corpus file `f` (an archive's member inflated), whole; `None` for a plain file
/// over [`WHOLE_FILE`].
fn file_bytes(state: &State, f: u32) -> Result<Option<Vec<u8>>, String> {
    let input = state.corpus.files.get(f as usize).ok_or("no such file")?;
    let file = state
        .origin
        .get(f as usize)
        .and_then(|&o| state.files.get(o))
        .ok_or("its file is no longer loaded")?;
    if let Some(archive) = &input.archive {
        return member_bytes(state, f, archive).map(Some);
    }
    if file.size() > WHOLE_FILE {
        return Ok(None);
    }
    read_all(file).map(Some)
}

/// Every rollout's metadata, re-read from its source as the rollout viewer reads it; a rollout
/// whose bytes cannot be read has none (the CLI says so on stderr; here its `meta.*` values are
/// absent, as they are there).
fn read_meta(state: &State) -> Vec<crate::filter::MetaValues> {
    let n = state.corpus.rollouts.len();
    let Ok(reader) = FileReaderSync::new() else {
        return vec![Default::default(); n];
    };
    // The file whose rollouts are being read (rollouts of a file are consecutive).
    let mut current: Option<(u32, Option<Vec<u8>>)> = None;
    (0..n)
        .map(|i| {
            let r = &state.corpus.rollouts[i];
            let f = r.source.file;
            if current.as_ref().is_none_or(|(c, _)| *c != f) {
                current = file_bytes(state, f).ok().map(|b| (f, b));
            }
            let bytes = match &current {
                Some((_, Some(whole))) => {
                    let at = (r.source.offset as usize).min(whole.len());
                    let end = (at + r.source.len as usize).min(whole.len());
                    whole[at..end].to_vec()
                }
                Some((_, None)) => {
                    let file = state
                        .origin
                        .get(f as usize)
                        .and_then(|&o| state.files.get(o));
                    let start = r.source.offset as f64;
                    file.and_then(|file| {
                        let blob = file
                            .slice_with_f64_and_f64(start, start + r.source.len as f64)
                            .ok()?;
                        let buffer = reader.read_as_array_buffer(&blob).ok()?;
                        Some(js_sys::Uint8Array::new(&buffer).to_vec())
                    })
                    .unwrap_or_default()
                }
                None => return Default::default(),
            };
            state
                .summary
                .rollout_line(&state.corpus, i, &bytes)
                .map(|line| crate::filter::all_meta_values(&line))
                .unwrap_or_default()
        })
        .collect()
}

/// Which dropped file each file of the corpus came from, from the index of the first corpus file
/// each dropped file began (`starts`, ascending: dropped files are read in turn). Names cannot
/// tell: two dropped files may have the same name (BFCL result files of two models), and an
/// archive's members are files of the corpus too.
fn origins(files: usize, starts: &[usize]) -> Vec<usize> {
    (0..files)
        .map(|k| starts.partition_point(|&s| s <= k).saturating_sub(1))
        .collect()
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
    static CURRENT_JOB: RefCell<u32> = const { RefCell::new(0) };
    static ARRIVING: RefCell<Arriving> = RefCell::new(Arriving::default());
    /// Which corpus is loaded: a number counted up each time a computation replaces it (a
    /// rescore keeps it, and so keeps its search index).
    static LOADED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// The newest progress message the throttle held back, and whether a timer will post it:
    /// a read that then waits (a slow download, the pool's answers) shows where it is, not
    /// where the last message left it. Any message posted after it replaces it.
    static HELD_PROGRESS: RefCell<Option<FromWorker>> = const { RefCell::new(None) };
    static HELD_TIMER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static INDEX: RefCell<Indexing> = const { RefCell::new(Indexing::None) };
}

/// The search index of the loaded corpus ([`crate::search::SearchIndex`]): built in the
/// background once a computation's report is out, then what every search matches.
enum Indexing {
    None,
    /// Being built for corpus `corpus`.
    Building {
        corpus: u32,
    },
    Ready {
        corpus: u32,
        index: std::rc::Rc<crate::search::SearchIndex>,
    },
    /// Its texts passed [`INDEX_BUDGET`]: searches read the rollouts back each time.
    TooLarge,
}

/// The most text bytes a search index keeps (texts held many times count once); past it the
/// index is dropped and each search reads every rollout back, as it did before there was one.
const INDEX_BUDGET: usize = 512 << 20;

/// The files of the job being computed, as their batches arrive ([`ToWorker::MoreFiles`]), and
/// the computation waiting for the next batch, if it is.
#[derive(Default)]
struct Arriving {
    job: u32,
    files: Vec<File>,
    /// The `?data=` links among them not downloaded yet: their positions and URLs.
    links: Vec<(usize, String)>,
    waiting: Option<js_sys::Function>,
}

/// Why a computation stopped short.
enum Stop {
    Failed(String),
    /// A link read as it downloaded was another size than its server said (the limit on what
    /// it may decompress to depends on it): its file is here now, so the computation starts
    /// again and reads that ([`read_link`]).
    Restart,
}

impl From<String> for Stop {
    fn from(message: String) -> Stop {
        Stop::Failed(message)
    }
}

impl From<&str> for Stop {
    fn from(message: &str) -> Stop {
        Stop::Failed(message.to_string())
    }
}

/// Waits until file `i` of job `job` has arrived; `false` when the job changed meanwhile.
async fn wait_for_file(job: u32, i: usize) -> bool {
    loop {
        let (same_job, arrived) = ARRIVING.with(|a| {
            let a = a.borrow();
            (a.job == job, a.files.len() > i)
        });
        if !same_job {
            return false;
        }
        if arrived {
            return true;
        }
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            ARRIVING.with(|a| a.borrow_mut().waiting = Some(resolve));
        });
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    }
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(msg: &FromWorker) {
    if let FromWorker::Report { json, .. } = msg {
        // The report's text as bytes beside the message (see `FromWorker::Report`).
        let bytes = js_sys::Uint8Array::from(json.as_bytes());
        let transfer = js_sys::Array::of1(&bytes.buffer());
        return post_with(msg, &[("report", &bytes)], Some(&transfer));
    }
    post_with(msg, &[], None);
}

/// Posts a message with extra fields (binary data that should not go through JSON); the
/// buffers in `transfer` are moved to the receiver rather than copied.
fn post_with(msg: &FromWorker, fields: &[(&str, &JsValue)], transfer: Option<&js_sys::Array>) {
    HELD_PROGRESS.with(|h| h.borrow_mut().take());
    let text = serde_json::to_string(msg).unwrap_or_default();
    let obj = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&obj, &"msg".into(), &text.into());
    for (key, value) in fields {
        let _ = js_sys::Reflect::set(&obj, &(*key).into(), value);
    }
    let _ = match transfer {
        Some(transfer) => scope().post_message_with_transfer(&obj, transfer),
        None => scope().post_message(&obj),
    };
}

/// Reads a whole file with `FileReaderSync`.
fn read_all(file: &File) -> Result<Vec<u8>, String> {
    let reader = FileReaderSync::new().map_err(|_| "cannot read files in this worker")?;
    let buffer = reader
        .read_as_array_buffer(file)
        .map_err(|_| format!("cannot read {} (was it moved or deleted?)", file.name()))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// A dropped file read by offset, held (an archive's members read back one after another),
/// in aligned parts of [`MEMBER_PART`] bytes, the last [`MEMBER_PARTS_KEPT`] kept: a zip's
/// members in name order lie scattered over the file, a folder's files together, and each read
/// of a `File` is a round trip to the browser's process (one per member cost 19 s on the
/// 15-run leaderboard's 31,000 members).
struct OwnedFileAccess {
    file: File,
    reader: FileReaderSync,
    /// Parts read (their index, bytes), oldest first.
    parts: Vec<(u64, Vec<u8>)>,
}

// The pool's part cache's sizes (`pool::inflate`): the same reasons, the same parts.
use super::pool::inflate::{PART as MEMBER_PART, PARTS_KEPT as MEMBER_PARTS_KEPT};

impl OwnedFileAccess {
    fn new(file: File, reader: FileReaderSync) -> Self {
        OwnedFileAccess {
            file,
            reader,
            parts: Vec::new(),
        }
    }

    fn direct(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        use crate::formats::inspect::RandomAccess;
        FileAccess {
            file: &self.file,
            reader: &self.reader,
        }
        .read_at(offset, buf)
    }

    /// Part `i`, read unless kept.
    fn part(&mut self, i: u64) -> std::io::Result<&[u8]> {
        let at = match self.parts.iter().position(|(k, _)| *k == i) {
            Some(at) => at,
            None => {
                let start = i * MEMBER_PART;
                let len = MEMBER_PART.min((self.file.size() as u64).saturating_sub(start));
                let mut bytes = vec![0u8; len as usize];
                let n = self.direct(start, &mut bytes)?;
                bytes.truncate(n);
                if self.parts.len() == MEMBER_PARTS_KEPT {
                    self.parts.remove(0);
                }
                self.parts.push((i, bytes));
                self.parts.len() - 1
            }
        };
        Ok(&self.parts[at].1)
    }
}

impl crate::formats::inspect::RandomAccess for OwnedFileAccess {
    fn size(&self) -> u64 {
        self.file.size() as u64
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = (offset + buf.len() as u64).min(self.size());
        if offset >= end {
            return Ok(0);
        }
        let mut n = 0;
        for i in offset / MEMBER_PART..=(end - 1) / MEMBER_PART {
            let base = i * MEMBER_PART;
            let (from, to) = (offset.max(base) - base, end.min(base + MEMBER_PART) - base);
            let part = self.part(i)?;
            let got = part
                .get(from as usize..(to as usize).min(part.len()))
                .unwrap_or_default();
            buf[n..n + got.len()].copy_from_slice(got);
            n += got.len();
            if got.len() < (to - from) as usize {
                break;
            }
        }
        Ok(n)
    }
}

/// Reads of small files kept in flight ahead of the one being parsed: each read of a file is a
/// round trip to the browser's process (about a millisecond, whatever the size), so a folder of
/// thousands of small files is read with many reads outstanding rather than one after another
/// (`FileReaderSync`). Files are taken in order; at most [`SmallReads::MAX_FILES`] files and
/// [`SmallReads::MAX_BYTES`] bytes are in flight.
#[derive(Default)]
struct SmallReads {
    /// (file index, its read) in file order.
    pending: std::collections::VecDeque<(usize, wasm_bindgen_futures::JsFuture, f64)>,
    /// The next file to consider starting.
    next: usize,
    bytes: f64,
}

impl SmallReads {
    const MAX_FILES: usize = 64;
    const MAX_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

    /// Starts reads of the small files from `from` on, up to the limits.
    fn fill(&mut self, files: &[File], from: usize) {
        self.next = self.next.max(from);
        while self.next < files.len()
            && self.pending.len() < Self::MAX_FILES
            && self.bytes < Self::MAX_BYTES
        {
            let file = &files[self.next];
            let size = file.size();
            if size <= CHUNK {
                let read = wasm_bindgen_futures::JsFuture::from(file.array_buffer());
                self.pending.push_back((self.next, read, size));
                self.bytes += size;
            }
            self.next += 1;
        }
    }

    /// Forgets file `i` (a `?data=` link's empty stand-in), if its read was started.
    fn skip(&mut self, i: usize) {
        if self.pending.front().is_some_and(|(at, _, _)| *at == i) {
            if let Some((_, _, size)) = self.pending.pop_front() {
                self.bytes -= size;
            }
        }
    }

    /// The bytes of small file `i` (started by [`SmallReads::fill`]).
    async fn take(&mut self, i: usize) -> Result<Vec<u8>, ()> {
        let Some((at, read, size)) = self.pending.pop_front() else {
            return Err(());
        };
        self.bytes -= size;
        if at != i {
            return Err(());
        }
        let buffer = read.await.map_err(|_| ())?;
        Ok(js_sys::Uint8Array::new(&buffer).to_vec())
    }
}

/// A `?data=` link, read ([`read_link`]).
enum Link {
    /// Read as it downloaded: its size.
    Read(f64),
    /// Downloaded: to be read as a dropped file.
    File(File),
}

/// Reads `?data=` link `url`, file `i` of job `job` (`web::fetched`): a gzip body of known
/// length as it downloads, its members into `ingest`; anything else downloaded into a `File`
/// first, for the caller to read as a dropped file. Either way the download's `File` then
/// takes the link's place, here and on the page (`FromWorker::Downloaded`). A link that cannot
/// be downloaded is said to the page (`FromWorker::DownloadFailed`), which drops it.
#[allow(clippy::too_many_arguments)]
async fn read_link(
    job: u32,
    i: usize,
    url: &str,
    ingest: &mut Ingest,
    name: &str,
    options: &crate::formats::ImportOptions,
    reading: &mut Reading,
    done: f64,
) -> Result<Link, Stop> {
    let fail = |message: String| {
        post(&FromWorker::DownloadFailed {
            job,
            index: i,
            message: message.clone(),
        });
        message
    };
    let opened = super::fetched::open(url).await.map_err(fail)?;
    // Told by its first bytes, as a dropped file is (`container_kind`): a stream the browser
    // decodes is read as it comes.
    let (head, body) = super::fetched::peek(opened.body, crate::ingest::archive::HEAD)
        .await
        .map_err(fail)?;
    let head = &head[..head.len().min(crate::ingest::archive::HEAD)];
    let decoder =
        crate::ingest::archive::Container::of(head).and_then(super::native_decoder::decoder_for);
    if reading.files <= super::state::SIZES_ASKED_UP_TO {
        reading.total += opened.size.unwrap_or(0) as f64;
    }
    let (file, link, restart) = match (decoder, opened.size) {
        (Some(decoder), Some(size)) => {
            let mut on_archive = |p: crate::ingest::archive::ArchiveProgress| {
                reading.archive_progress(name, size as f64, done, i, p)
            };
            let body = Compressed::Body(body, name.to_string());
            let read = super::native_decoder::read_stream(
                ingest,
                name,
                options,
                body,
                size,
                None,
                decoder,
                &mut on_archive,
            );
            let file = read.await;
            reading.archive = None;
            let file = file.ok_or_else(|| fail(format!("the download of {url} failed")))?;
            // The limit on what it may decompress to was set by the size the server said.
            let restart = file.size() as u64 != size;
            (file, Link::Read(size as f64), restart)
        }
        _ => {
            let mut on_read = |n: u64| reading.downloading(name, n, opened.size, i);
            let file = super::decompression_stream::read_body(body, name, None, &mut on_read)
                .await
                .map_err(fail)?;
            (file.clone(), Link::File(file), false)
        }
    };
    ARRIVING.with(|a| {
        let mut a = a.borrow_mut();
        if a.job == job {
            if let Some(f) = a.files.get_mut(i) {
                *f = file.clone();
            }
            a.links.retain(|(k, _)| *k != i);
        }
    });
    let file_value = JsValue::from(file.clone());
    post_with(
        &FromWorker::Downloaded { job, index: i },
        &[("file", &file_value)],
        None,
    );
    if restart {
        return Err(Stop::Restart);
    }
    Ok(link)
}

/// What kind of archive or compressed file a dropped file is, from its first bytes.
fn container_kind(
    file: &File,
    reader: &FileReaderSync,
) -> Option<crate::ingest::archive::Container> {
    let mut head = [0u8; crate::ingest::archive::HEAD];
    let mut access = FileAccess { file, reader };
    let n = crate::formats::inspect::RandomAccess::read_at(&mut access, 0, &mut head).unwrap_or(0);
    crate::ingest::archive::Container::of(&head[..n])
}

/// Whether a dropped file is a zip archive (an Inspect `.eval` log), from its first bytes.
fn is_zip(file: &File, reader: &FileReaderSync) -> bool {
    let mut head = [0u8; 4];
    let mut access = FileAccess { file, reader };
    matches!(
        crate::formats::inspect::RandomAccess::read_at(&mut access, 0, &mut head),
        Ok(4)
    ) && head[..] == *crate::ingest::ZIP_MAGIC
}

/// Fetches one of the app's own files (relative to the worker script, i.e. the app's root).
async fn fetch_own(path: &str) -> Result<Vec<u8>, String> {
    let response =
        wasm_bindgen_futures::JsFuture::from(scope().fetch_with_str(&format!("./{path}")))
            .await
            .map_err(|_| format!("cannot load the app's {path}"))?;
    let response: web_sys::Response = response.unchecked_into();
    if !response.ok() {
        return Err(format!(
            "cannot load the app's {path}: HTTP {}",
            response.status()
        ));
    }
    let body = response.array_buffer().map_err(|_| "no body".to_string())?;
    let buffer = wasm_bindgen_futures::JsFuture::from(body)
        .await
        .map_err(|_| format!("cannot read the app's {path}"))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// The app's own files, as `index.html` names them (`./name` references), plus the worker's.
fn app_assets(index_html: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for quote in ['"', '\''] {
        let marker = format!("{quote}./");
        for (at, _) in index_html.match_indices(&marker) {
            let rest = &index_html[at + marker.len()..];
            if let Some(end) = rest.find(quote) {
                let name = &rest[..end];
                let plain = !name.is_empty() && !name.contains(['/', '?', '#']);
                if plain && !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
    }
    for fixed in [
        "boot.js",
        "app.js",
        "app_bg.wasm",
        "worker-loader.js",
        "worker.js",
        "worker_bg.wasm",
    ] {
        if !names.iter().any(|n| n == fixed) {
            names.push(fixed.to_string());
        }
    }
    names
}

/// Builds the same site as `prefix-exec site` from the loaded files and current settings.
async fn build_site(title: &str, description: &str) -> Result<Vec<u8>, String> {
    let (data, rollouts, diagnostics, job) = STATE.with(|s| {
        let s = s.borrow();
        let state = s.as_ref().ok_or("nothing is loaded")?;
        let mut ingest = Ingest::converting();
        let mut data = Vec::new();
        let reader =
            FileReaderSync::new().map_err(|_| "this browser cannot read files in a worker")?;
        for (i, (file, name)) in state.files.iter().zip(&state.names).enumerate() {
            let options = state.options.get(i).cloned().unwrap_or_default();
            if container_kind(file, &reader).is_some() {
                let mut access = FileAccess {
                    file,
                    reader: &reader,
                };
                if ingest.read_container(name, &options, &mut access, &mut |_| {}) {
                    continue;
                }
            }
            let id = ingest.begin_file_with(name, options);
            if is_zip(file, &reader) {
                let mut access = FileAccess {
                    file,
                    reader: &reader,
                };
                ingest.read_archive(id, &mut access);
                continue;
            }
            ingest.push(id, &read_all(file)?);
            ingest.end_file(id);
        }
        ingest.end_all();
        let mut rollouts = 0u64;
        for line in ingest.drain_converted() {
            rollouts += u64::from(!line.starts_with(r#"{"tools""#));
            data.extend_from_slice(line.as_bytes());
            data.push(b'\n');
        }
        let diagnostics = ingest.finish().diagnostics_total;
        // The app sets the same label rules for every file.
        let labels = state
            .options
            .first()
            .map(|o| o.labels.clone())
            .unwrap_or_default();
        Ok::<_, String>((
            data,
            rollouts,
            diagnostics,
            (state.settings.clone(), labels),
        ))
    })?;
    let (job, labels) = job;
    let settings = job.to_settings()?;
    let site_settings = crate::site::SiteSettings {
        bootstrap: job.bootstrap,
        seed: job.seed.clone(),
        level: job.level,
        max_depth: job.max_depth.clone(),
        labels,
    };
    let publication = crate::site::publish(
        &data,
        rollouts,
        title,
        description,
        &site_settings,
        &settings,
        false,
        diagnostics,
        &mut |_| {},
    );
    let index = fetch_own("index.html").await?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for name in app_assets(&String::from_utf8_lossy(&index)) {
        let bytes = fetch_own(&name).await?;
        files.push((name, bytes));
    }
    let index = crate::site::mark_site_index(&String::from_utf8_lossy(&index)).into_bytes();
    files.push(("index.html".to_string(), index));
    files.extend(publication.files.iter().cloned());
    files.push((
        crate::site::MANIFEST.to_string(),
        publication.manifest_json().into_bytes(),
    ));
    crate::site::zip_files(&files)
}

/// Entry point of the worker binary.
pub fn start_worker() {
    std::panic::set_hook(Box::new(|info| {
        let job = CURRENT_JOB.with(|j| *j.borrow());
        post(&FromWorker::Failed {
            job,
            message: format!("internal error (please report it): {info}"),
        });
    }));
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(on_message);
    scope().set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
    warm_up();
    post(&FromWorker::Ready);
}

/// Scores a small made-up grid once at start-up. WebAssembly engines first run code in a
/// baseline tier and optimise a function only once it has run for a while; doing that on dummy
/// data while the user is still picking files halves the time of the first real report. The
/// result is discarded.
fn warm_up() {
    let mut text = String::new();
    for i in 0..240u32 {
        let steps: Vec<String> = (0..(2 + i % 7))
            .map(|s| {
                let ok = (i * 7 + s * 13) % 11 != 0;
                format!(
                    r#"{{"tool":"t{s}","args":{{"x":{s}}},"ok":{ok},"error":"e","label":"state"}}"#
                )
            })
            .collect();
        text.push_str(&format!(
            r#"{{"dataset":"d{}","task_id":"t{}","model":"m","method":"a{}","success":{},"steps":[{}],"cost":{{"tokens":{}}}}}"#,
            i % 2,
            i / 6,
            i % 3,
            i % 5 != 0,
            steps.join(","),
            i * 10
        ));
        text.push('\n');
    }
    let corpus = crate::ingest::read_files([("warm-up.jsonl", text.as_bytes())]);
    // A pool worker's part of reading a file ahead, on 1.3 MB: measured on the first 13.5 MB
    // file read with 2 pool workers, their parse time fell from 391 to 258 ms (start-up costs
    // about 60 ms per worker more, while the user picks files).
    let _ = crate::ingest::prepared::prepare_slice(text.repeat(12).as_bytes(), 0).encode();
    let settings = crate::report::Settings {
        bootstrap: 600,
        ..crate::report::Settings::default()
    };
    let _ = crate::report::build_report(&corpus, &settings).to_json();
}

/// The `files` array of a message: files, and `{url}` objects for `?data=` links, each given an
/// empty file in its place until its download is read (their positions, from `first`, and URLs
/// in `links`).
fn files_of_message(data: &JsValue, first: usize, links: &mut Vec<(usize, String)>) -> Vec<File> {
    let Some(values) = js_sys::Reflect::get(data, &"files".into())
        .ok()
        .filter(|f| f.is_array())
        .map(|f| js_sys::Array::from(&f))
    else {
        return Vec::new();
    };
    values
        .iter()
        .enumerate()
        .map(|(k, v)| match v.dyn_into::<File>() {
            Ok(file) => file,
            Err(v) => {
                let url = js_sys::Reflect::get(&v, &"url".into())
                    .ok()
                    .and_then(|u| u.as_string())
                    .unwrap_or_default();
                links.push((first + k, url));
                File::new_with_u8_array_sequence(&js_sys::Array::new(), "")
                    .unwrap_or_else(|_| v.unchecked_into())
            }
        })
        .collect()
}

fn on_message(event: MessageEvent) {
    let data = event.data();
    let text = js_sys::Reflect::get(&data, &"msg".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    let request: ToWorker = match serde_json::from_str(&text) {
        Ok(r) => r,
        Err(e) => {
            return post(&FromWorker::Failed {
                job: 0,
                message: format!("bad message to the worker: {e}"),
            })
        }
    };
    match request {
        ToWorker::Compute {
            job,
            names,
            options,
            settings,
        } => {
            CURRENT_JOB.with(|j| *j.borrow_mut() = job);
            // The corpus is about to be replaced: a search index being built for it stops.
            LOADED.with(|l| l.set(l.get() + 1));
            INDEX.with(|i| *i.borrow_mut() = Indexing::None);
            ARRIVING.with(|a| {
                let mut links = Vec::new();
                let files = files_of_message(&data, 0, &mut links);
                *a.borrow_mut() = Arriving {
                    job,
                    files,
                    links,
                    waiting: None,
                }
            });
            wasm_bindgen_futures::spawn_local(async move {
                let result = loop {
                    match compute(job, &names, &options, &settings).await {
                        Err(Stop::Restart) => continue,
                        result => break result,
                    }
                };
                match result {
                    Ok(msg) => post(&msg),
                    Err(Stop::Failed(message)) => post(&FromWorker::Failed { job, message }),
                    Err(Stop::Restart) => {}
                }
                // Searches match an index of every rollout's texts, read now, in the
                // background, while the report is looked at.
                if CURRENT_JOB.with(|j| *j.borrow()) == job {
                    build_index(LOADED.with(|l| l.get())).await;
                }
            });
        }
        ToWorker::MoreFiles { job } => ARRIVING.with(|a| {
            let mut a = a.borrow_mut();
            if a.job == job {
                let first = a.files.len();
                let more = files_of_message(&data, first, &mut a.links);
                a.files.extend(more);
                if let Some(wake) = a.waiting.take() {
                    let _ = wake.call0(&JsValue::NULL);
                }
            }
        }),
        ToWorker::Pool { size } => super::pool::resize(size),
        ToWorker::PoolBlocks { run, blocks } => {
            let cells = js_sys::Reflect::get(&data, &"cells".into())
                .map(|c| js_sys::Array::from(&c))
                .unwrap_or_default();
            if let Err(message) = super::pool::take_blocks(&blocks, &cells) {
                post(&FromWorker::Failed { job: run, message });
            }
        }
        ToWorker::PoolPrepare {
            run,
            piece,
            from,
            to,
        } => {
            let (lines, bytes) = js_sys::Reflect::get(&data, &"file".into())
                .ok()
                .filter(|f| f.is_instance_of::<File>())
                .map(|f| super::pool::prepare_piece(&f.unchecked_into(), from, to))
                .unwrap_or_default();
            let lines = js_sys::Uint8Array::from(&lines[..]);
            let transfer = js_sys::Array::of1(&lines.buffer());
            let bytes = bytes.map_or(JsValue::UNDEFINED, |bytes| {
                transfer.push(&bytes.buffer());
                bytes.into()
            });
            let fields = [("lines", &JsValue::from(&lines)), ("bytes", &bytes)];
            post_with(
                &FromWorker::PoolPrepared { run, piece },
                &fields,
                Some(&transfer),
            );
        }
        ToWorker::PoolInflate {
            run,
            batch,
            records,
        } => {
            let file = js_sys::Reflect::get(&data, &"file".into())
                .ok()
                .filter(|f| f.is_instance_of::<File>())
                .map(|f| f.unchecked_into::<File>());
            super::pool::inflate::keep_spare(&data);
            if let Some(file) = file {
                wasm_bindgen_futures::spawn_local(async move {
                    let (msg, members, prepared, transfer) =
                        super::pool::inflate::inflate_batch(&file, run, batch, &records).await;
                    let fields: [(&str, &JsValue); 2] =
                        [("members", &members), ("prepared", &prepared)];
                    post_with(&msg, &fields, Some(&transfer));
                });
            }
        }
        ToWorker::PoolWhole { run, batch, lens } => {
            let bytes = js_sys::Reflect::get(&data, &"bytes".into()).unwrap_or_default();
            let (lens, prepared) = super::pool::whole::prepare_batch(&lens, &bytes);
            let prepared = js_sys::Uint8Array::from(&prepared[..]);
            let transfer = js_sys::Array::of1(&prepared.buffer());
            // The batch's buffer goes back too, for the coordinator to fill again.
            let mut fields: Vec<(&str, &JsValue)> = vec![("prepared", &prepared)];
            if let Some(array) = bytes.dyn_ref::<js_sys::Uint8Array>() {
                transfer.push(&array.buffer());
                fields.push(("bytes", &bytes));
            }
            post_with(
                &FromWorker::PoolWholePrepared { run, batch, lens },
                &fields,
                Some(&transfer),
            );
        }
        ToWorker::PoolGunzip {
            run,
            format,
            credit,
            name,
        } => {
            let input = js_sys::Reflect::get(&data, &"file".into())
                .ok()
                .and_then(|f| super::decompression_stream::Compressed::from_js(f, &name));
            if let Some(input) = input {
                wasm_bindgen_futures::spawn_local(super::pool::gunzip::serve(
                    input, run, format, credit,
                ));
            }
        }
        ToWorker::PoolGunzipCredit { run, upto, stop } => {
            super::pool::gunzip::credit(run, upto, stop, &data)
        }
        ToWorker::CheckRules { text } => {
            let result = crate::label::LabelSettings::parse_user_rules(&text);
            post(&FromWorker::RulesChecked { text, result });
        }
        ToWorker::PoolChunks {
            run,
            first,
            resamples,
            seed,
            jobs,
        } => match super::pool::run_chunks(run, first, resamples, &seed, &jobs) {
            Ok((msg, values, transfer)) => post_with(&msg, &[("values", &values)], Some(&transfer)),
            Err(message) => post(&FromWorker::Failed { job: run, message }),
        },
        ToWorker::Rollouts { job, query } => STATE.with(|s| {
            if let Some(state) = s.borrow().as_ref() {
                // With a filter, the kept rollouts only, named by their index in the corpus
                // (what the steps are asked by).
                let page = match &state.filtered {
                    Some(f) => {
                        let mut page = list_rollouts(&f.corpus, &query);
                        for row in &mut page.rows {
                            row.index = f.original.get(row.index).copied().unwrap_or(row.index);
                        }
                        page
                    }
                    None => list_rollouts(&state.corpus, &query),
                };
                post(&FromWorker::Rollouts { job, page });
            }
        }),
        ToWorker::Rescore { job, settings } => {
            CURRENT_JOB.with(|j| *j.borrow_mut() = job);
            wasm_bindgen_futures::spawn_local(async move {
                match rescore(job, settings).await {
                    Ok(msg) => post(&msg),
                    Err(message) => post(&FromWorker::Failed { job, message }),
                }
            });
        }
        ToWorker::CheckFilter { text } => {
            let result = crate::filter::Filter::parse(&text)
                .map(|f| f.to_string())
                .map_err(|e| e.to_string());
            post(&FromWorker::FilterChecked { text, result });
        }
        ToWorker::FilterChoices { job } => STATE.with(|s| {
            if let Some(state) = s.borrow_mut().as_mut() {
                state.meta();
                let meta = state.meta.as_deref().unwrap_or_default();
                let choices = crate::filter::choices::FilterChoices::of(&state.corpus, meta);
                post(&FromWorker::FilterChoices { job, choices });
            }
        }),
        ToWorker::BuildSite {
            job,
            title,
            description,
        } => wasm_bindgen_futures::spawn_local(async move {
            match build_site(&title, &description).await {
                Ok(zip) => {
                    let bytes = zip.len() as u64;
                    post_with(
                        &FromWorker::Site { job, bytes },
                        &[("zip", &js_sys::Uint8Array::from(&zip[..]))],
                        None,
                    );
                }
                Err(message) => post(&FromWorker::SiteFailed { job, message }),
            }
        }),
        ToWorker::PairTasks { job, query } => STATE.with(|s| {
            if let Some(state) = s.borrow().as_ref() {
                let result = match &state.filtered {
                    Some(f) => {
                        let mut result = pair_tasks(&f.corpus, &query);
                        let original =
                            |i: &mut usize| *i = f.original.get(*i).copied().unwrap_or(*i);
                        for d in &mut result.differing {
                            d.a.rollouts.iter_mut().for_each(original);
                            d.b.rollouts.iter_mut().for_each(original);
                        }
                        result
                    }
                    None => pair_tasks(&state.corpus, &query),
                };
                post(&FromWorker::PairTasks { job, result });
            }
        }),
        ToWorker::StepsOf { job, indices } => STATE.with(|s| {
            if let Some(state) = s.borrow().as_ref() {
                let items = indices
                    .into_iter()
                    .map(|i| (i, read_steps(state, i).0))
                    .collect();
                post(&FromWorker::StepsOf { job, items });
            }
        }),
        ToWorker::Search { job, query } => wasm_bindgen_futures::spawn_local(async move {
            let started = now();
            let (result, read_ms) = search(&query).await;
            post(&FromWorker::SearchPage {
                job,
                query,
                result,
                ms: now() - started,
                read_ms,
            });
        }),
        ToWorker::Steps { job, index } => STATE.with(|s| {
            if let Some(state) = s.borrow().as_ref() {
                let (steps, line) = read_steps(state, index);
                post(&FromWorker::Steps {
                    job,
                    index,
                    steps,
                    line,
                });
            }
        }),
    }
}

/// The bootstrap work ([`ReportPlan::resample_work`]) from which the pool runs it: about 3.5×
/// the bundled example's (6,768 rollouts, 10,000 resamples: 84.6 M cells, ≈ 0.4 s in one
/// worker), where the pool's start-up and merging cost less than the second core saves.
const POOL_MIN_WORK: u64 = 300_000_000;

/// The progress messages of one job: bytes and files read (throttled), then resamples.
struct Reading {
    job: u32,
    /// All files' bytes, or 0 where the sizes were not asked.
    total: f64,
    files: usize,
    /// When the last message went.
    last: f64,
    /// The archive being read, if one is.
    archive: Option<super::protocol::ArchiveRead>,
}

impl Reading {
    /// How far the archive `name` (`size` bytes, file `file`, after `done` bytes of the files
    /// before it) has been read: its line under the bar, and the bar.
    fn archive_progress(
        &mut self,
        name: &str,
        size: f64,
        done: f64,
        file: usize,
        p: crate::ingest::archive::ArchiveProgress,
    ) {
        match self.archive.as_mut().filter(|a| a.name == name) {
            Some(a) => {
                (a.members, a.read, a.decompressed) = (p.members, p.read, p.decompressed);
                a.size = size as u64;
            }
            None => {
                self.archive = Some(super::protocol::ArchiveRead {
                    name: name.to_string(),
                    members: p.members,
                    read: p.read,
                    size: size as u64,
                    decompressed: p.decompressed,
                })
            }
        }
        self.report(done + p.read as f64, file);
    }

    /// `read` bytes of link `name` (file `file`) downloaded, of `size` where the server said,
    /// before it is read (`web::fetched::download`): phase `download <name>`.
    fn downloading(&mut self, name: &str, read: u64, size: Option<u64>, file: usize) {
        self.throttled(&format!("download {name}"), read, size.unwrap_or(0), file);
    }

    /// `done` bytes and `files_read` files read, at most one message per [`PROGRESS_MS`].
    fn report(&mut self, done: f64, files_read: usize) {
        self.throttled("parse", done as u64, self.total as u64, files_read);
    }

    /// Posts at most one message per [`PROGRESS_MS`]; one held back is posted by a timer
    /// unless a newer message goes first.
    fn throttled(&mut self, phase: &str, done: u64, total: u64, files_read: usize) {
        let at = now();
        if at - self.last > PROGRESS_MS {
            self.last = at;
            post(&self.message(phase, done, total, files_read));
        } else if !self.refresh_held(phase, done, total, files_read) {
            hold_progress(self.message(phase, done, total, files_read));
        }
    }

    /// Brings the message held back for the timer up to date in place, when one of `phase` is
    /// held: a message is made once per timer, not at each call (an archive's member each,
    /// every 0.1 ms on the leaderboard archives), and the one posted is the newest, even when
    /// the read then waits (a download held back, the pool's answers).
    fn refresh_held(&self, phase: &str, done: u64, total: u64, files_read: usize) -> bool {
        HELD_PROGRESS.with(|h| {
            let mut h = h.borrow_mut();
            let Some(FromWorker::Progress {
                job,
                phase: held_phase,
                done: held_done,
                total: held_total,
                files,
                archive,
            }) = h.as_mut()
            else {
                return false;
            };
            if *job != self.job || held_phase != phase {
                return false;
            }
            match (archive.as_mut(), &self.archive) {
                (None, None) => {}
                (Some(held), Some(now)) if held.name == now.name => {
                    (held.members, held.read, held.size, held.decompressed) =
                        (now.members, now.read, now.size, now.decompressed);
                }
                _ => return false,
            }
            (*held_done, *held_total) = (done, total);
            *files = [files_read as u64, self.files as u64];
            true
        })
    }

    fn post(&self, phase: &str, done: u64, total: u64, files_read: usize) {
        post(&self.message(phase, done, total, files_read));
    }

    fn message(&self, phase: &str, done: u64, total: u64, files_read: usize) -> FromWorker {
        FromWorker::Progress {
            job: self.job,
            phase: phase.to_string(),
            done,
            total,
            files: [files_read as u64, self.files as u64],
            archive: self.archive.clone(),
        }
    }
}

/// Keeps `msg` to be posted [`PROGRESS_MS`] from now, when the worker is waiting (a timer runs
/// only then), unless a newer message is posted first.
fn hold_progress(msg: FromWorker) {
    HELD_PROGRESS.with(|h| *h.borrow_mut() = Some(msg));
    if HELD_TIMER.with(|t| t.replace(true)) {
        return;
    }
    let fire = Closure::once_into_js(|| {
        HELD_TIMER.with(|t| t.set(false));
        if let Some(msg) = HELD_PROGRESS.with(|h| h.borrow_mut().take()) {
            post(&msg);
        }
    });
    let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(
        fire.unchecked_ref(),
        PROGRESS_MS as i32,
    );
}

fn now() -> f64 {
    js_sys::Date::now()
}

async fn compute(
    job: u32,
    names: &[String],
    options: &[crate::formats::ImportOptions],
    settings: &super::protocol::JobSettings,
) -> Result<FromWorker, Stop> {
    let started = now();
    let job_settings = settings;
    let settings = settings.to_settings()?;
    let reader = FileReaderSync::new().map_err(|_| "this browser cannot read files in a worker")?;
    // The total is said only where asking every file's size is cheap (each is a round trip to
    // the browser's process, 0.14 ms): a folder of thousands of files is measured in files.
    // (Such a pick comes in one message: the page sends batches only of bigger ones.)
    let total: f64 = if names.len() <= super::state::SIZES_ASKED_UP_TO {
        ARRIVING.with(|a| a.borrow().files.iter().map(|f| f.size()).sum())
    } else {
        0.0
    };
    let mut reading = Reading {
        job,
        total,
        files: names.len(),
        last: 0.0,
        archive: None,
    };
    let mut done = 0.0;
    let mut ingest = Ingest::new();
    // Lines whose reading a pool worker did (`pool::ParseRun`).
    let mut read_ahead = 0;
    // The pool reads files ahead as well as resampling: start it before the first file.
    super::pool::resize(job_settings.workers);
    let mut small = SmallReads::default();
    let mut starts = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        // The file's batch may still be on its way from the page.
        if !wait_for_file(job, i).await {
            return Err("superseded by a newer computation".into());
        }
        starts.push(ingest.file_count());
        let Some(file) = ARRIVING.with(|a| a.borrow().files.get(i).cloned()) else {
            return Err(format!("{name} did not arrive").into());
        };
        let name = name.clone();
        let file_options = options.get(i).cloned().unwrap_or_default();
        let link = ARRIVING.with(|a| {
            let a = a.borrow();
            a.links
                .iter()
                .find(|(k, _)| *k == i)
                .map(|(_, url)| url.clone())
        });
        let (file, downloaded) = match link {
            None => (file, false),
            Some(url) => {
                small.skip(i);
                let read = read_link(
                    job,
                    i,
                    &url,
                    &mut ingest,
                    &name,
                    &file_options,
                    &mut reading,
                    done,
                );
                match read.await? {
                    Link::Read(size) => {
                        done += size;
                        reading.report(done, i + 1);
                        continue;
                    }
                    Link::File(file) => (file, true),
                }
            }
        };
        let file = &file;
        let size = file.size();
        // A small file (a folder of thousands of scenario files is mostly these) is read with
        // one call, and its first bytes tell a zip from there: a separate read of the magic
        // per file doubled the reads.
        if size <= CHUNK {
            let bytes = if downloaded {
                read_all(file)?
            } else {
                ARRIVING.with(|a| small.fill(&a.borrow().files, i));
                small
                    .take(i)
                    .await
                    .map_err(|_| format!("cannot read {name} (was it moved or deleted?)"))?
            };
            let gzip = bytes.starts_with(crate::ingest::archive::GZIP_MAGIC);
            let decoder = gzip
                .then(|| {
                    super::native_decoder::decoder_for(crate::ingest::archive::Container::Gzip)
                })
                .flatten();
            if let Some(decoder) = decoder {
                let mut src: &[u8] = &bytes;
                super::native_decoder::read_stream(
                    &mut ingest,
                    &name,
                    &file_options,
                    Compressed::File(file.clone()),
                    size as u64,
                    Some(&mut src),
                    decoder,
                    &mut |_| {},
                )
                .await;
            // An archive or compressed file: its members are read as the files of a folder.
            } else if !ingest.read_container(&name, &file_options, &mut &bytes[..], &mut |_| {}) {
                let id = ingest.begin_file_with(&name, file_options);
                if bytes.starts_with(crate::ingest::ZIP_MAGIC) {
                    ingest.read_archive(id, &mut &bytes[..]);
                } else {
                    ingest.push(id, &bytes);
                    ingest.end_file(id);
                }
            }
            done += size;
            reading.report(done, i + 1);
            continue;
        }
        let kind = container_kind(file, &reader);
        if let Some(decoder) = kind.and_then(super::native_decoder::decoder_for) {
            // A gzip stream: decompressed by the browser's own decoder, read as it comes.
            let mut access = FileAccess {
                file,
                reader: &reader,
            };
            let mut on_archive = |p: crate::ingest::archive::ArchiveProgress| {
                reading.archive_progress(&name, size, done, i, p)
            };
            super::native_decoder::read_stream(
                &mut ingest,
                &name,
                &file_options,
                Compressed::File(file.clone()),
                size as u64,
                Some(&mut access),
                decoder,
                &mut on_archive,
            )
            .await;
            reading.archive = None;
            done += size;
            reading.report(done, i + 1);
            continue;
        }
        if kind.is_some() && super::pool::size() >= 2 {
            // A zip container: its members inflated by the pool workers, pushed here in order.
            let mut access = FileAccess {
                file,
                reader: &reader,
            };
            if let Some(mut steps) = ingest.begin_zip(&name, &file_options, &mut access) {
                let records = (0..steps.len()).map(|k| steps.ahead(k)).collect();
                let run = super::pool::inflate::InflateRun::start(file, records);
                for k in 0..steps.len() {
                    let inflated = match &run {
                        Some(run) => run.take(k).await,
                        None => None,
                    };
                    let mut on_archive = |p: crate::ingest::archive::ArchiveProgress| {
                        reading.archive_progress(&name, size, done, i, p)
                    };
                    ingest.zip_step(&mut steps, &mut access, inflated, &mut on_archive);
                }
                drop(run);
                ingest.end_zip(steps, &mut access);
                reading.archive = None;
                done += size;
                reading.report(done, i + 1);
                continue;
            }
        }
        if kind.is_some() {
            let mut access = FileAccess {
                file,
                reader: &reader,
            };
            // Bytes read (the bar) and members read (the line under it) come from two places:
            // the file's reads and the archive's members.
            let shared = std::cell::RefCell::new(&mut reading);
            let read = std::cell::Cell::new(0u64);
            let mut on_read = |n: u64| {
                read.set(n);
                shared.borrow_mut().report(done + n as f64, i);
            };
            let mut on_archive = |p: crate::ingest::archive::ArchiveProgress| {
                let p = crate::ingest::archive::ArchiveProgress {
                    read: read.get(),
                    ..p
                };
                shared
                    .borrow_mut()
                    .archive_progress(&name, size, done, i, p)
            };
            let mut progressing =
                crate::formats::inspect::Progressing::new(&mut access, &mut on_read);
            let was =
                ingest.read_container(&name, &file_options, &mut progressing, &mut on_archive);
            reading.archive = None;
            if was {
                done += size;
                reading.report(done, i + 1);
                continue;
            }
        }
        let id = ingest.begin_file_with(&name, file_options);
        if is_zip(file, &reader) {
            // Read by offset, one entry at a time, never whole; progress as the entries are
            // read (a multi-GB `.eval` is one file).
            let mut access = FileAccess {
                file,
                reader: &reader,
            };
            let mut on_read = |read: u64| reading.report(done + read as f64, i);
            let mut progressing =
                crate::formats::inspect::Progressing::new(&mut access, &mut on_read);
            ingest.read_archive(id, &mut progressing);
            done += size;
            reading.report(done, i + 1);
            continue;
        }
        // With a pool, canonical JSONL is read ahead by the pool workers (`pool::ParseRun`) once
        // a first, small chunk has told the format; this worker then takes their slices in
        // order, bytes and readings, and does only the order-dependent part of the parse.
        let pooled = super::pool::size() >= 2;
        let mut parse: Option<super::pool::ParseRun> = None;
        let mut piece = 0;
        let mut at = 0.0;
        while at < size {
            if parse.is_none()
                && pooled
                && at > 0.0
                && size - at >= MIN_PARSE_AHEAD
                && ingest.reads_canonical_lines(id)
            {
                parse = super::pool::ParseRun::start(file, at as u64, size as u64, PIECE as u64);
            }
            let (end, piece_read) = match &parse {
                Some(run) => {
                    let (_, end) = run.range(piece);
                    let read = run.take(piece).await;
                    piece += 1;
                    (end as f64, Some(read))
                }
                None => {
                    let chunk = if pooled && at == 0.0 { HEAD } else { CHUNK };
                    ((at + chunk).min(size), None)
                }
            };
            let bytes = match piece_read
                .as_ref()
                .and_then(|p| p.bytes(at as u64, end as u64))
            {
                Some(bytes) => bytes,
                None => {
                    let blob = file
                        .slice_with_f64_and_f64(at, end)
                        .map_err(|_| format!("cannot read {name}"))?;
                    let buffer = reader
                        .read_as_array_buffer(&blob)
                        .map_err(|_| format!("cannot read {name} (was it moved or deleted?)"))?;
                    js_sys::Uint8Array::new(&buffer).to_vec()
                }
            };
            match piece_read {
                Some(mut read) => read_ahead += ingest.push_prepared(id, &bytes, &mut read.lines),
                None => ingest.push(id, &bytes),
            }
            done += end - at;
            at = end;
            reading.report(done, i);
        }
        ingest.end_file(id);
    }
    let (corpus, summary) = ingest.finish_with_summary();
    // Every byte is read: say so before scoring (the throttle may have skipped the last chunk).
    reading.last = 0.0;
    reading.report(done, reading.files);
    let mut state = State {
        origin: origins(corpus.files.len(), &starts),
        member: RefCell::new(None),
        members: RefCell::new(None),
        corpus,
        names: names.to_vec(),
        options: options.to_vec(),
        settings: job_settings.clone(),
        summary,
        // Every batch has arrived: the worker keeps the files for rollout queries.
        files: ARRIVING.with(|a| std::mem::take(&mut a.borrow_mut().files)),
        meta: None,
        filtered: None,
    };
    let scored = score(&mut state, &settings, reading).await;
    // The corpus is kept even when the filter failed: the page rescores it with another.
    STATE.with(|s| *s.borrow_mut() = Some(state));
    LOADED.with(|l| l.set(l.get() + 1));
    INDEX.with(|i| *i.borrow_mut() = Indexing::None);
    let (json, workers, kept) = scored?;
    // The pool counts when it read lines ahead, even without a bootstrap.
    let workers = if read_ahead > 0 {
        workers.max(super::pool::size() as u32)
    } else {
        workers
    };
    Ok(FromWorker::Report {
        job,
        json,
        compute_ms: now() - started,
        workers,
        read_ahead,
        kept,
    })
}

/// Scores the corpus of the last computation again with new settings (no file is read again).
async fn rescore(
    job: u32,
    job_settings: super::protocol::JobSettings,
) -> Result<FromWorker, String> {
    let started = now();
    let settings = job_settings.to_settings()?;
    // Taken out while it is scored (the bootstrap may await the pool): no borrow is held
    // across an await; the page asks nothing of the worker meanwhile (it is busy).
    let Some(mut state) = STATE.with(|s| s.borrow_mut().take()) else {
        return Err("nothing is loaded".to_string());
    };
    let reading = Reading {
        job,
        total: 0.0,
        files: state.names.len(),
        last: 0.0,
        archive: None,
    };
    let scored = score(&mut state, &settings, reading).await;
    if scored.is_ok() {
        state.settings = job_settings;
    }
    STATE.with(|s| *s.borrow_mut() = Some(state));
    let (json, workers, kept) = scored?;
    Ok(FromWorker::Report {
        job,
        json,
        compute_ms: now() - started,
        workers,
        read_ahead: 0,
        kept,
    })
}

/// The report of `state`'s corpus with `settings`, as `prefix-exec score` builds it
/// (`build_report_full`: the filter, with its rollouts' metadata when it names `meta.*` keys,
/// applied first); the JSON, the workers that ran the bootstrap, and with a filter (kept, of)
/// rollouts. The kept rollouts stay in `state` for the rollout browser.
async fn score(
    state: &mut State,
    settings: &crate::report::Settings,
    mut reading: Reading,
) -> Result<(String, u32, Option<[u64; 2]>), String> {
    let mut settings = settings.clone();
    // Kept in `state` only once the report is made: a filter that fails leaves the browser
    // over the rollouts of the report still shown.
    let mut filtered = None;
    if let Some(filter) = settings.filter.take().filter(|f| f.is_active()) {
        let filter = if filter.meta_keys().is_empty() {
            filter
        } else {
            filter.with_meta(state.meta().to_vec())
        };
        let kept = filter.apply(&state.corpus, Some(&state.summary));
        if kept.corpus.rollouts.is_empty() {
            // As `score` fails: nothing to score (the page keeps the report it shows).
            return Err(format!(
                "the filter {filter} keeps no rollout of {}; nothing to score (loosen it)",
                kept.of
            ));
        }
        settings.filter = Some(filter);
        filtered = Some(kept);
    }
    let (corpus, summary) = match &filtered {
        Some(f) => (&f.corpus, f.summary.as_ref()),
        None => (&state.corpus, Some(&state.summary)),
    };
    let mut progress = move |p: crate::report::Progress| {
        if now() - reading.last > PROGRESS_MS || p.done == p.total {
            reading.last = now();
            reading.post("bootstrap", p.done, p.total, reading.files);
        }
    };
    let plan = ReportPlan::new(corpus, &settings);
    // The pool when there is one and enough work for it: handing a small bootstrap to the pool
    // costs more (its tables sent to every pool worker, chunks merged) than it saves, so a
    // small one runs here, alone (the default setting is then never slower than one worker).
    let pooled = super::pool::size() >= 2
        && !plan.jobs().is_empty()
        && plan.resample_work() >= POOL_MIN_WORK;
    let (values, workers) = if pooled {
        let values = super::pool::run_bootstrap(&plan, Box::new(progress)).await?;
        (values, super::pool::size() as u32)
    } else {
        (plan.run_bootstrap(&mut progress), 1)
    };
    let json = plan.finish(corpus, summary, values).to_json();
    let kept = filtered
        .as_ref()
        .map(|f| [f.corpus.rollouts.len() as u64, f.of as u64]);
    state.filtered = filtered;
    Ok((json, workers, kept))
}

fn read_steps(
    state: &State,
    index: usize,
) -> (Result<Vec<crate::browse::StepView>, String>, String) {
    let bytes = match rollout_bytes(state, index, None) {
        Ok(bytes) => bytes,
        Err(e) => return (Err(e), String::new()),
    };
    match state.summary.rollout_line(&state.corpus, index, &bytes) {
        Ok(line) => (parse_steps(&line), line),
        Err(e) => (Err(e), String::new()),
    }
}

/// A dropped file read whole for a search (dropped file index, bytes): the rollouts of one
/// JSONL file are searched in a row, so one read serves them all instead of one read each.
type WholeFile = Option<(usize, Vec<u8>)>;

/// Dropped files up to this size are read whole once for a search, larger ones by slices.
const SEARCH_WHOLE_FILE: f64 = 64.0 * 1024.0 * 1024.0;

/// Rollouts whose reads are started ahead of their turn in a search.
const SEARCH_AHEAD: usize = 128;

/// The bytes of a batch of a search's rollouts: started reads (a rollout that is its file's
/// only one: a ToolSandbox scenario, a tau2 directory's) or `None` (read in turn, as the viewer
/// does: a slice of a file read whole once, an archive's member).
type Reads = Vec<(usize, Option<wasm_bindgen_futures::JsFuture>)>;

/// Reads the bytes of rollouts `order` in that order, as the viewer reads them
/// ([`rollout_bytes`]), and hands each to `each` with the loaded state; the time spent waiting
/// for bytes. The reads of the next [`SEARCH_AHEAD`] rollouts are in flight while a batch is
/// handed over: a read of one small file costs about 0.7 ms of waiting when asked
/// synchronously, more than matching it does. Between batches the worker answers other
/// messages. An error when the corpus was replaced meanwhile (`corpus`: the [`LOADED`] number
/// it was read for) or is not loaded.
async fn read_in_order(
    corpus: u32,
    order: &[usize],
    mut each: impl FnMut(&State, usize, Result<Vec<u8>, String>),
) -> Result<f64, String> {
    let changed = || "the loaded files changed during the search: search again".to_string();
    // Rollouts per dropped file: a file holding one is read on its own, ahead.
    let per_file = STATE.with(|s| {
        let s = s.borrow();
        let state = s.as_ref()?;
        let mut per_file = vec![0u32; state.files.len()];
        for r in &state.corpus.rollouts {
            if let Some(&o) = state.origin.get(r.source.file as usize) {
                if let Some(n) = per_file.get_mut(o) {
                    *n += 1;
                }
            }
        }
        Some(per_file)
    });
    let per_file = per_file.ok_or("nothing is loaded")?;
    let start_reads = |batch: &[usize]| -> Reads {
        STATE.with(|s| {
            let s = s.borrow();
            batch
                .iter()
                .map(|&index| {
                    let read = s.as_ref().and_then(|state| {
                        let r = state.corpus.rollouts.get(index)?;
                        let input = state.corpus.files.get(r.source.file as usize)?;
                        let origin = *state.origin.get(r.source.file as usize)?;
                        if input.archive.is_some() || per_file.get(origin) != Some(&1) {
                            return None;
                        }
                        let start = r.source.offset as f64;
                        let blob = state
                            .files
                            .get(origin)?
                            .slice_with_f64_and_f64(start, start + r.source.len as f64)
                            .ok()?;
                        Some(wasm_bindgen_futures::JsFuture::from(blob.array_buffer()))
                    });
                    (index, read)
                })
                .collect()
        })
    };
    let mut whole: WholeFile = None;
    let mut read_ms = 0.0;
    let mut batches = order.chunks(SEARCH_AHEAD);
    let mut next = batches.next().map(start_reads);
    while let Some(batch) = next.take() {
        next = batches.next().map(start_reads);
        let mut bytes = Vec::with_capacity(batch.len());
        let waited = now();
        let mut awaited = false;
        for (index, read) in batch {
            let got = match read {
                Some(read) => {
                    awaited = true;
                    Some(
                        read.await
                            .map(|b| js_sys::Uint8Array::new(&b).to_vec())
                            .map_err(|_| {
                                "cannot read its file (was it moved or deleted?)".to_string()
                            }),
                    )
                }
                None => None,
            };
            bytes.push((index, got));
        }
        if !awaited {
            // Nothing was awaited: let the page's other messages (a rollout's steps) in.
            pause(0).await;
        }
        read_ms += now() - waited;
        // A computation that finished meanwhile replaced the corpus these indices name; a
        // rescore has the state out while it scores (the same corpus): wait for it.
        loop {
            if LOADED.with(|l| l.get()) != corpus {
                return Err(changed());
            }
            if STATE.with(|s| s.borrow().is_some()) {
                break;
            }
            pause(20).await;
        }
        STATE.with(|s| {
            let s = s.borrow();
            let Some(state) = s.as_ref() else { return };
            for (index, got) in bytes {
                let got = got.unwrap_or_else(|| {
                    let waited = now();
                    let b = rollout_bytes(state, index, Some(&mut whole));
                    read_ms += now() - waited;
                    b
                });
                each(state, index, got);
            }
        });
    }
    Ok(read_ms)
}

/// Waits `ms` milliseconds (at least a turn of the worker's event loop).
async fn pause(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = scope().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Minimum time between the index's progress messages.
const INDEX_PROGRESS_MS: f64 = 250.0;

/// Builds the search index of corpus `corpus` (the [`LOADED`] number) unless it is built or
/// being built, posting its progress; dropped when the corpus is replaced meanwhile or when
/// its texts pass [`INDEX_BUDGET`].
async fn build_index(corpus: u32) {
    let started = now();
    let fresh = INDEX.with(|i| {
        let mut i = i.borrow_mut();
        let fresh = matches!(*i, Indexing::None);
        if fresh {
            *i = Indexing::Building { corpus };
        }
        fresh
    });
    if !fresh {
        return;
    }
    let total = STATE.with(|s| s.borrow().as_ref().map_or(0, |st| st.corpus.rollouts.len()));
    let progress = |done: usize, outcome: super::protocol::IndexOutcome| {
        post(&FromWorker::SearchIndex {
            job: CURRENT_JOB.with(|j| *j.borrow()),
            done,
            total,
            outcome,
        })
    };
    progress(0, super::protocol::IndexOutcome::Building);
    let mut builder = crate::search::SearchIndexBuilder::new();
    let mut last = now();
    let mut too_large = false;
    let order: Vec<usize> = (0..total).collect();
    let read = read_in_order(corpus, &order, |state, index, bytes| {
        if too_large {
            return;
        }
        builder.add(bytes.map(|b| {
            crate::search::rollout_texts(
                &state.corpus,
                &state.summary,
                index,
                &b,
                crate::search::Field::All,
            )
        }));
        too_large = builder.unique_bytes() > INDEX_BUDGET;
        if now() - last >= INDEX_PROGRESS_MS {
            last = now();
            progress(builder.rollouts(), super::protocol::IndexOutcome::Building);
        }
    })
    .await;
    if read.is_err() || LOADED.with(|l| l.get()) != corpus {
        // Another corpus replaced this one: its own build has started (or will).
        return;
    }
    let outcome = if too_large {
        INDEX.with(|i| *i.borrow_mut() = Indexing::TooLarge);
        super::protocol::IndexOutcome::TooLarge {
            budget: INDEX_BUDGET as u64,
        }
    } else {
        let index = builder.finish();
        let (texts, bytes, kept) = index.size();
        INDEX.with(|i| {
            *i.borrow_mut() = Indexing::Ready {
                corpus,
                index: std::rc::Rc::new(index),
            }
        });
        super::protocol::IndexOutcome::Ready {
            ms: now() - started,
            texts: texts as u64,
            bytes: bytes as u64,
            kept: kept as u64,
        }
    };
    progress(total, outcome);
}

/// One page of hits over the loaded rollouts, with the time spent waiting for bytes: matched
/// against the search index, waiting for it if it is being built; read back rollout by rollout
/// ([`read_in_order`]) when there is none.
async fn search(
    query: &crate::search::SearchQuery,
) -> (Result<crate::search::SearchPage, String>, f64) {
    let corpus = LOADED.with(|l| l.get());
    loop {
        if LOADED.with(|l| l.get()) != corpus {
            let e = "the loaded files changed during the search: search again";
            return (Err(e.to_string()), 0.0);
        }
        let index = INDEX.with(|i| match &*i.borrow() {
            Indexing::Ready { corpus: c, index } if *c == corpus => Some(Some(index.clone())),
            Indexing::Building { corpus: c, .. } if *c == corpus => None,
            _ => Some(None),
        });
        match index {
            // Being built: its progress is on the page.
            None => pause(50).await,
            Some(Some(index)) => {
                let page = STATE.with(|s| {
                    let s = s.borrow();
                    let state = s.as_ref().ok_or("nothing is loaded")?;
                    index
                        .search(&state.corpus, query)
                        .map_err(|e| e.to_string())
                });
                match page {
                    Err(e) if e == "nothing is loaded" => pause(20).await,
                    page => return (page, 0.0),
                }
            }
            Some(None) => break,
        }
    }
    let prepared = STATE.with(|s| {
        let s = s.borrow();
        let state = s.as_ref().ok_or("nothing is loaded")?;
        let searcher = crate::search::Searcher::new(query).map_err(|e| e.to_string())?;
        let candidates = searcher
            .candidates(&state.corpus)
            .map_err(|e| e.to_string())?;
        Ok::<_, String>((searcher, candidates))
    });
    let (searcher, candidates) = match prepared {
        Ok(p) => p,
        Err(e) => return (Err(e), 0.0),
    };
    let trials: std::collections::HashMap<usize, u32> = candidates.iter().copied().collect();
    let order: Vec<usize> = candidates.iter().map(|&(i, _)| i).collect();
    let mut pager = crate::search::Pager::new(query, candidates.len());
    let read = read_in_order(corpus, &order, |state, index, bytes| {
        let result =
            bytes.and_then(|b| searcher.search_rollout(&state.corpus, &state.summary, index, &b));
        pager.add(&state.corpus, &searcher, index, trials[&index], result);
    })
    .await;
    match read {
        Ok(read_ms) => (Ok(pager.finish()), read_ms),
        Err(e) => (Err(e), 0.0),
    }
}

/// The bytes of corpus file `f`, a member of archive `archive`, read through the archive's
/// [`crate::ingest::members::Members`] (kept in `state` for the next member).
fn member_bytes(state: &State, f: u32, archive: &str) -> Result<Vec<u8>, String> {
    let input = state.corpus.files.get(f as usize).ok_or("no such file")?;
    let origin = *state
        .origin
        .get(f as usize)
        .ok_or("its file is no longer loaded")?;
    let mut members = state.members.borrow_mut();
    match &mut *members {
        Some((o, opened)) if *o == origin => opened.read(&input.name),
        slot => {
            let file = state
                .files
                .get(origin)
                .ok_or("its file is no longer loaded")?
                .clone();
            let reader = FileReaderSync::new().map_err(|_| "cannot read files in this worker")?;
            let opened = crate::ingest::members::Members::open(
                Box::new(OwnedFileAccess::new(file, reader)),
                archive,
            )?;
            slot.insert((origin, opened)).1.read(&input.name)
        }
    }
}

/// The bytes at rollout `index`'s source: a slice of its dropped file, or of its archive
/// member (found again in the archive once per member). With `whole`, a small file is read
/// whole once and kept there for the next rollouts of the same file.
fn rollout_bytes(
    state: &State,
    index: usize,
    whole: Option<&mut WholeFile>,
) -> Result<Vec<u8>, String> {
    let r = state.corpus.rollouts.get(index).ok_or("no such rollout")?;
    let origin = state.origin.get(r.source.file as usize).copied();
    let Some((at_file, file)) = origin.and_then(|i| Some((i, state.files.get(i)?))) else {
        return Err("its file is no longer loaded".to_string());
    };
    let input = &state.corpus.files[r.source.file as usize];
    let (offset, len) = (r.source.offset as usize, r.source.len as usize);
    let slice = |bytes: &[u8]| {
        let at = offset.min(bytes.len());
        bytes[at..(at + len).min(bytes.len())].to_vec()
    };
    let reader = FileReaderSync::new().map_err(|_| "cannot read files in this worker")?;
    if let Some(archive) = &input.archive {
        let mut cache = state.member.borrow_mut();
        if cache.as_ref().is_none_or(|(f, _)| *f != r.source.file) {
            *cache = Some((r.source.file, member_bytes(state, r.source.file, archive)?));
        }
        return Ok(cache.as_ref().map(|(_, b)| slice(b)).unwrap_or_default());
    }
    if let Some(whole) = whole.filter(|_| file.size() <= SEARCH_WHOLE_FILE) {
        if whole.as_ref().is_none_or(|(f, _)| *f != at_file) {
            *whole = Some((at_file, read_all(file)?));
        }
        return Ok(whole.as_ref().map(|(_, b)| slice(b)).unwrap_or_default());
    }
    let start = offset as f64;
    let blob = file
        .slice_with_f64_and_f64(start, start + len as f64)
        .map_err(|_| format!("cannot read {}", file.name()))?;
    let buffer = reader
        .read_as_array_buffer(&blob)
        .map_err(|_| format!("cannot read {} (was it moved or deleted?)", file.name()))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}
