//! The bootstrap across a pool of Web Workers.
//!
//! The worker the page talks to (the coordinator) parses the files and scores them, as it always
//! did; with a pool size of 2 or more it then hands the bootstrap's chunks
//! ([`crate::report::BootstrapJob`]) to that many pool workers — instances of the same worker
//! wasm it starts itself (nested workers) — and merges their values in job order before building
//! the report, so the report is the same bytes for any pool size. Each pool worker is sent the
//! per-task tables of the datasets once ([`ToWorker::PoolBlocks`]: cells as `Float64Array`s
//! beside the JSON), then batches of jobs ([`ToWorker::PoolChunks`]); it answers each batch with
//! the chunks' values ([`FromWorker::PoolChunks`], `Float64Array`s moved, not copied). Jobs are
//! handed out as workers finish, two batches in flight per worker, so a slow worker delays no
//! one. No memory is shared (a static host cannot send the headers `SharedArrayBuffer` needs).
//!
//! The same pool reads canonical JSONL files ahead of the coordinator ([`ParseRun`]): each
//! pool worker is sent a slice of a file (a `File`, structured-cloned, and a byte range:
//! [`ToWorker::PoolPrepare`]), reads it itself and answers with the readings of the lines it
//! holds whole ([`crate::ingest::prepared`], moved as bytes). The coordinator reads the same
//! slices in order and pushes them with those readings, so it does only the order-dependent part
//! of parsing; a reading that is missing (a worker that failed, a line cut by a slice boundary)
//! only means the coordinator reads that line itself. The corpus is the same either way.
//!
//! Cancelling terminates the coordinator, and with it every worker it started. Pool size 1
//! (or a report without a bootstrap) is the single-worker path: the coordinator runs every job
//! and reads every line.

pub mod gunzip;
pub mod inflate;
mod spare;
pub mod whole;

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker};

use super::protocol::{FromWorker, PoolBlock, PoolReply, ToWorker};
use crate::ingest::prepared::PreparedLines;
use crate::report::{BootstrapJob, Progress, ReportPlan};
use crate::stats::bootstrap::{chunk_range, ResampleTable};

/// The largest pool the app starts, whatever the machine reports.
pub const MAX_POOL: u32 = 8;

/// Jobs per message to a pool worker: a few milliseconds of work, so messages cost little and
/// the last worker to finish waits for at most one batch.
const BATCH: usize = 2;

/// A pool worker as the coordinator holds it.
struct Member {
    worker: Worker,
    /// Keeps the message handler alive as long as its worker.
    _handler: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

/// One bootstrap spread over the pool.
struct Run {
    id: u32,
    jobs: Vec<BootstrapJob>,
    resamples: usize,
    seed: u64,
    values: Vec<Option<Vec<f64>>>,
    /// The next job to hand out.
    next: usize,
    /// Jobs whose values came back.
    finished: usize,
    done_resamples: u64,
    total_resamples: u64,
    /// Resolves the coordinator's wait when every job is back (or rejects on a failure).
    resolve: Option<js_sys::Function>,
    reject: Option<js_sys::Function>,
    progress: Box<dyn FnMut(Progress)>,
}

/// Slices a pool worker holds at once: it reads the next while the coordinator takes its answer.
const PIECES_IN_FLIGHT: usize = 2;

/// A slice of a file as a pool worker sends it back.
#[derive(Default)]
pub struct Piece {
    /// The readings of its lines, decoded (none when the worker could not read the slice).
    pub lines: PreparedLines,
    /// Its bytes as the worker read them (from the byte before the slice), moved to this
    /// worker: the coordinator need not read the file again.
    bytes: Option<js_sys::Uint8Array>,
}

impl Piece {
    /// The slice's bytes `from..to`, if the pool worker sent them.
    pub fn bytes(&self, from: u64, to: u64) -> Option<Vec<u8>> {
        let array = self.bytes.as_ref()?;
        let len = u32::try_from(to.checked_sub(from)?).ok()?;
        (array.length() == len.checked_add(1)?).then(|| array.subarray(1, len + 1).to_vec())
    }
}

/// A file read ahead by the pool, slice by slice (see the module documentation).
struct Parse {
    id: u32,
    file: web_sys::File,
    /// Piece `k` is bytes `from + k * piece` to the next piece's start (the last: to `to`).
    from: u64,
    to: u64,
    piece: u64,
    /// The next piece to hand out, and the first the coordinator has not taken yet: pieces are
    /// handed out at most `PIECES_IN_FLIGHT` per worker ahead of it, so memory stays bounded
    /// whatever the speeds.
    next: usize,
    taken: usize,
    in_flight: Vec<usize>,
    /// Pieces back from the pool and not taken yet.
    ready: std::collections::BTreeMap<usize, Piece>,
    /// The coordinator's wait for a piece.
    waiting: Option<(usize, js_sys::Function)>,
    /// A pool worker stopped: nothing more is handed out or awaited.
    broken: bool,
}

thread_local! {
    static MEMBERS: RefCell<Vec<Member>> = const { RefCell::new(Vec::new()) };
    static RUN: RefCell<Option<Run>> = const { RefCell::new(None) };
    static PARSE: RefCell<Option<Parse>> = const { RefCell::new(None) };
    static NEXT_RUN: RefCell<u32> = const { RefCell::new(1) };
    /// A pool worker's tables, by block index (`None`: a block without bootstrap).
    static TABLES: RefCell<Vec<Option<ResampleTable>>> = const { RefCell::new(Vec::new()) };
    /// The error handler of a worker being let go: it cancels the event, which would otherwise
    /// travel up to the page as an uncaught error. Terminating a worker that is still loading
    /// its WebAssembly can fire one (seen when the pool shrinks right after the page starts it).
    /// Never dropped, so a late event never reaches a freed closure.
    static DISMISSED: Closure<dyn FnMut(web_sys::Event)> =
        Closure::new(|event: web_sys::Event| event.prevent_default());
}

/// Starts or stops pool workers so that `size` are running (none for a size of 1: the
/// coordinator alone is the single-worker path). Starting them early lets their WebAssembly
/// compile before the first file is picked.
pub fn resize(size: u32) {
    let want = if size >= 2 {
        size.min(MAX_POOL) as usize
    } else {
        0
    };
    if MEMBERS.with(|m| m.borrow().len()) > want {
        // Slices, members and chunks handed to the workers let go would never come back: the
        // coordinator reads them itself.
        break_parse();
        inflate::break_run();
        whole::break_run();
        if want == 0 {
            gunzip::break_run();
        }
    }
    MEMBERS.with(|m| {
        let mut members = m.borrow_mut();
        while members.len() > want {
            if let Some(member) = members.pop() {
                // Unhook first: a message already queued must not reach the handler this drop
                // frees ("closure invoked after being dropped").
                member.worker.set_onmessage(None);
                DISMISSED.with(|d| member.worker.set_onerror(Some(d.as_ref().unchecked_ref())));
                member.worker.terminate();
            }
        }
        while members.len() < want {
            match spawn(members.len()) {
                Ok(member) => members.push(member),
                Err(_) => break, // fewer workers, same result
            }
        }
    });
}

/// The pool workers running now.
pub fn size() -> usize {
    MEMBERS.with(|m| m.borrow().len())
}

fn spawn(index: usize) -> Result<Member, JsValue> {
    let worker = Worker::new("./worker-loader.js")?;
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        on_member_message(index, event)
    });
    worker.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        break_parse();
        whole::break_run();
        fail(format!("pool worker {} stopped unexpectedly", index + 1))
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Ok(Member {
        worker,
        _handler: handler,
        _on_error: on_error,
    })
}

fn send(worker: &Worker, msg: &ToWorker, key: &str, value: &JsValue) {
    let obj = js_sys::Object::new();
    let text = serde_json::to_string(msg).unwrap_or_default();
    let _ = js_sys::Reflect::set(&obj, &"msg".into(), &text.into());
    if !key.is_empty() {
        let _ = js_sys::Reflect::set(&obj, &key.into(), value);
    }
    let _ = worker.post_message(&obj);
}

/// Runs the bootstrap of `plan` on the pool and returns the values of its jobs in job order;
/// `progress` is called as chunks come back.
pub async fn run_bootstrap(
    plan: &ReportPlan<'_>,
    progress: Box<dyn FnMut(Progress)>,
) -> Result<Vec<Vec<f64>>, String> {
    let jobs = plan.jobs();
    let id = next_run();
    // The per-task tables, once per pool worker.
    // What each block's chunks resample: the block itself, or its copy widened by the
    // shared-task columns of cross-condition pairs.
    let resampled: Vec<Option<&crate::score::DatasetBlock>> = (0..plan.agg.blocks.len())
        .map(|b| plan.resampled(b))
        .collect();
    let heads: Vec<Option<PoolBlock>> = resampled
        .iter()
        .map(|block| {
            block.map(|block| PoolBlock {
                dataset: block.dataset.clone(),
                tasks: block.tasks.len(),
                conditions: block.conditions.len(),
                width: block.width,
            })
        })
        .collect();
    let cells = js_sys::Array::new();
    for block in &resampled {
        let data: &[f64] = block.map_or(&[], |block| &block.cells);
        cells.push(&js_sys::Float64Array::from(data));
    }
    let blocks_msg = ToWorker::PoolBlocks {
        run: id,
        blocks: heads,
    };
    MEMBERS.with(|m| {
        for member in m.borrow().iter() {
            send(&member.worker, &blocks_msg, "cells", &cells);
        }
    });
    let total_resamples = jobs
        .iter()
        .map(|j| chunk_range(plan.resamples(), j.chunk).len() as u64)
        .sum();
    let mut resolve_reject = (None, None);
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        resolve_reject = (Some(resolve), Some(reject));
    });
    RUN.with(|r| {
        *r.borrow_mut() = Some(Run {
            id,
            values: vec![None; jobs.len()],
            jobs,
            resamples: plan.resamples(),
            seed: plan.seed(),
            next: 0,
            finished: 0,
            done_resamples: 0,
            total_resamples,
            resolve: resolve_reject.0,
            reject: resolve_reject.1,
            progress,
        })
    });
    let members = size();
    for index in 0..members {
        // Two batches in flight per worker: the next one is queued while it runs this one.
        dispatch(index);
        dispatch(index);
    }
    let outcome = wasm_bindgen_futures::JsFuture::from(promise).await;
    let run = RUN.with(|r| r.borrow_mut().take());
    match (outcome, run) {
        (Ok(_), Some(run)) => Ok(run
            .values
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()),
        (Err(e), _) => Err(e
            .as_string()
            .unwrap_or_else(|| "the worker pool failed".to_string())),
        (Ok(_), None) => Err("the worker pool lost its run".to_string()),
    }
}

/// Sends the next batch of jobs to pool worker `index`, if any are left.
fn dispatch(index: usize) {
    let batch = RUN.with(|r| {
        let mut r = r.borrow_mut();
        let run = r.as_mut()?;
        if run.next >= run.jobs.len() {
            return None;
        }
        let first = run.next;
        let end = (first + BATCH).min(run.jobs.len());
        run.next = end;
        Some(ToWorker::PoolChunks {
            run: run.id,
            first,
            resamples: run.resamples,
            seed: run.seed.to_string(),
            jobs: run.jobs[first..end].to_vec(),
        })
    });
    if let Some(msg) = batch {
        MEMBERS.with(|m| {
            if let Some(member) = m.borrow().get(index) {
                send(&member.worker, &msg, "", &JsValue::UNDEFINED);
            }
        });
    }
}

/// A pool worker's answer, on the coordinator.
fn on_member_message(index: usize, event: MessageEvent) {
    let data = event.data();
    let text = js_sys::Reflect::get(&data, &"msg".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    match serde_json::from_str::<PoolReply>(&text) {
        Ok(PoolReply::PoolChunks { run, first, count }) => {
            let arrays = js_sys::Reflect::get(&data, &"values".into())
                .map(|v| js_sys::Array::from(&v))
                .unwrap_or_default();
            let finished = RUN.with(|r| {
                let mut r = r.borrow_mut();
                let state = r.as_mut().filter(|s| s.id == run)?;
                for (i, array) in arrays.iter().take(count).enumerate() {
                    let values = array.unchecked_into::<js_sys::Float64Array>().to_vec();
                    let job = state.jobs[first + i];
                    state.done_resamples += chunk_range(state.resamples, job.chunk).len() as u64;
                    if state.values[first + i].replace(values).is_none() {
                        state.finished += 1;
                    }
                }
                (state.progress)(Progress {
                    done: state.done_resamples,
                    total: state.total_resamples,
                });
                Some(state.finished == state.jobs.len())
            });
            match finished {
                Some(true) => {
                    let resolve =
                        RUN.with(|r| r.borrow_mut().as_mut().and_then(|s| s.resolve.take()));
                    if let Some(resolve) = resolve {
                        let _ = resolve.call0(&JsValue::NULL);
                    }
                }
                Some(false) => dispatch(index),
                None => {}
            }
        }
        Ok(PoolReply::PoolPrepared { run, piece }) => piece_back(index, run, piece, &data),
        Ok(PoolReply::PoolInflated {
            run,
            batch,
            errors,
            lens,
            prepared_lens,
        }) => inflate::batch_back(index, run, batch, (errors, lens, prepared_lens), &data),
        Ok(PoolReply::PoolWholePrepared { run, batch, lens }) => {
            whole::batch_back(index, run, batch, lens, &data)
        }
        Ok(PoolReply::PoolGunzipped {
            run,
            read,
            end,
            failed,
        }) => gunzip::chunk_back(run, read, end, failed, &data),
        Ok(PoolReply::PoolGunzipFile { run }) => gunzip::file_back(run, &data),
        Ok(PoolReply::Failed { message }) => {
            // A worker that failed (its panic hook reports a bug) answers nothing more.
            break_parse();
            inflate::break_run();
            gunzip::break_run();
            whole::break_run();
            fail(format!("pool worker {}: {message}", index + 1))
        }
        Err(_) => {} // Ready and the like
    }
}

/// A file's slices read ahead by the pool while the coordinator takes them in order; see the
/// module documentation. Dropping it ends the run (answers still on their way are ignored).
pub struct ParseRun {
    id: u32,
}

impl ParseRun {
    /// Starts reading bytes `from..to` of `file` ahead, in pieces of `piece` bytes (`from > 0`:
    /// each piece is read from the byte before it). `None` without a pool.
    pub fn start(file: &web_sys::File, from: u64, to: u64, piece: u64) -> Option<ParseRun> {
        let members = size();
        if members < 2 || from == 0 || to <= from || piece == 0 {
            return None;
        }
        let id = next_run();
        PARSE.with(|p| {
            *p.borrow_mut() = Some(Parse {
                id,
                file: file.clone(),
                from,
                to,
                piece,
                next: 0,
                taken: 0,
                in_flight: vec![0; members],
                ready: Default::default(),
                waiting: None,
                broken: false,
            })
        });
        for index in 0..members {
            dispatch_pieces(index);
        }
        Some(ParseRun { id })
    }

    /// The byte range of piece `k`.
    pub fn range(&self, k: usize) -> (u64, u64) {
        PARSE.with(|p| {
            p.borrow()
                .as_ref()
                .filter(|p| p.id == self.id)
                .map_or((0, 0), |p| piece_range(p, k))
        })
    }

    /// Piece `k` (empty when it will not come), waiting for it if need be. Taking piece `k`
    /// lets the pool read further ahead.
    pub async fn take(&self, k: usize) -> Piece {
        let members = PARSE.with(|p| {
            let mut p = p.borrow_mut();
            let Some(run) = p.as_mut().filter(|p| p.id == self.id) else {
                return 0;
            };
            run.taken = run.taken.max(k);
            run.in_flight.len()
        });
        for index in 0..members {
            dispatch_pieces(index);
        }
        let ready = PARSE.with(|p| {
            let mut p = p.borrow_mut();
            let Some(run) = p.as_mut().filter(|p| p.id == self.id) else {
                return Some(Piece::default());
            };
            if let Some(piece) = run.ready.remove(&k) {
                return Some(piece);
            }
            // Never handed out, or never coming: the coordinator reads the slice itself.
            (run.broken || k >= run.next).then(Piece::default)
        });
        if let Some(piece) = ready {
            return piece;
        }
        // The executor runs at once: the answer's arrival resolves the wait.
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            PARSE.with(|p| {
                if let Some(run) = p.borrow_mut().as_mut() {
                    run.waiting = Some((k, resolve));
                }
            })
        });
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        PARSE.with(|p| {
            let mut p = p.borrow_mut();
            p.as_mut()
                .filter(|p| p.id == self.id)
                .and_then(|run| run.ready.remove(&k))
                .unwrap_or_default()
        })
    }
}

impl Drop for ParseRun {
    fn drop(&mut self) {
        PARSE.with(|p| {
            let mut p = p.borrow_mut();
            if p.as_ref().is_some_and(|p| p.id == self.id) {
                *p = None;
            }
        });
    }
}

impl Parse {
    fn count(&self) -> usize {
        (self.to - self.from).div_ceil(self.piece) as usize
    }
}

fn piece_range(run: &Parse, k: usize) -> (u64, u64) {
    let start = run.from + k as u64 * run.piece;
    (start.min(run.to), (start + run.piece).min(run.to))
}

/// Hands pool worker `index` pieces up to its share of the look-ahead.
fn dispatch_pieces(index: usize) {
    loop {
        let msg = PARSE.with(|p| {
            let mut p = p.borrow_mut();
            let run = p.as_mut()?;
            let ahead = PIECES_IN_FLIGHT * run.in_flight.len();
            let busy = run.in_flight.get(index).copied().unwrap_or(usize::MAX);
            if run.broken
                || busy >= PIECES_IN_FLIGHT
                || run.next >= run.count()
                || run.next >= run.taken + ahead
            {
                return None;
            }
            let piece = run.next;
            run.next += 1;
            run.in_flight[index] += 1;
            let (from, to) = piece_range(run, piece);
            Some((
                ToWorker::PoolPrepare {
                    run: run.id,
                    piece,
                    // The byte before the slice tells whether a line begins at its start.
                    from: from - 1,
                    to,
                },
                run.file.clone(),
            ))
        });
        let Some((msg, file)) = msg else {
            return;
        };
        MEMBERS.with(|m| {
            if let Some(member) = m.borrow().get(index) {
                send(&member.worker, &msg, "file", &file);
            }
        });
    }
}

/// A pool worker's answer for a piece, on the coordinator.
fn piece_back(index: usize, run: u32, piece: usize, data: &JsValue) {
    let array = |key: &str| {
        js_sys::Reflect::get(data, &key.into())
            .ok()
            .filter(|v| v.is_instance_of::<js_sys::Uint8Array>())
            .map(|v| v.unchecked_into::<js_sys::Uint8Array>())
    };
    let resolve = PARSE.with(|p| {
        let mut p = p.borrow_mut();
        let parse = p.as_mut().filter(|p| p.id == run)?;
        if let Some(n) = parse.in_flight.get_mut(index) {
            *n = n.saturating_sub(1);
        }
        if piece >= parse.taken {
            // Bytes that are not an encoding are a bug: the coordinator then reads every line
            // of the slice itself, with the same result.
            let lines = array("lines")
                .and_then(|a| PreparedLines::decode(&a.to_vec()).ok())
                .unwrap_or_default();
            let bytes = array("bytes");
            parse.ready.insert(piece, Piece { lines, bytes });
        }
        match parse.waiting.take() {
            Some((k, resolve)) if k == piece => Some(resolve),
            other => {
                parse.waiting = other;
                None
            }
        }
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
    dispatch_pieces(index);
}

/// Stops reading ahead after a pool worker stopped: the coordinator reads the rest itself.
fn break_parse() {
    let resolve = PARSE.with(|p| {
        let mut p = p.borrow_mut();
        let parse = p.as_mut()?;
        parse.broken = true;
        parse.waiting.take().map(|(_, resolve)| resolve)
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// On a pool worker: bytes `from..to` of `file` as read, and the encoded readings of their lines
/// (neither when the slice cannot be read: the coordinator then reads it itself, and reports the
/// file if it cannot either).
pub fn prepare_piece(
    file: &web_sys::File,
    from: u64,
    to: u64,
) -> (Vec<u8>, Option<js_sys::Uint8Array>) {
    let read = || -> Option<js_sys::Uint8Array> {
        let reader = web_sys::FileReaderSync::new().ok()?;
        let blob = file.slice_with_f64_and_f64(from as f64, to as f64).ok()?;
        let buffer = reader.read_as_array_buffer(&blob).ok()?;
        Some(js_sys::Uint8Array::new(&buffer))
    };
    match read() {
        Some(array) => {
            let lines = crate::ingest::prepared::prepare_slice(&array.to_vec(), from);
            (lines.encode(), Some(array))
        }
        None => (PreparedLines::default().encode(), None),
    }
}

/// A new run's id (bootstrap, parse and inflate runs share the numbering).
fn next_run() -> u32 {
    NEXT_RUN.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    })
}

/// Sends `msg` to pool worker `index`, `value` beside it as `key`.
fn send_to(index: usize, msg: &ToWorker, key: &str, value: &JsValue) {
    MEMBERS.with(|m| {
        if let Some(member) = m.borrow().get(index) {
            send(&member.worker, msg, key, value);
        }
    });
}

/// Sends `msg` to pool worker `index` with `fields` beside it, their buffers in `transfer`
/// moved, not copied; `false` where the browser refused to send it (a buffer it cannot move).
fn send_moved(
    index: usize,
    msg: &ToWorker,
    fields: &[(&str, &JsValue)],
    transfer: &js_sys::Array,
) -> bool {
    let obj = js_sys::Object::new();
    let text = serde_json::to_string(msg).unwrap_or_default();
    let _ = js_sys::Reflect::set(&obj, &"msg".into(), &text.into());
    for (key, value) in fields {
        let _ = js_sys::Reflect::set(&obj, &(*key).into(), value);
    }
    MEMBERS.with(|m| match m.borrow().get(index) {
        Some(member) => member
            .worker
            .post_message_with_transfer(&obj, transfer)
            .is_ok(),
        None => false,
    })
}

/// Ends the current run with an error.
fn fail(message: String) {
    let reject = RUN.with(|r| r.borrow_mut().as_mut().and_then(|s| s.reject.take()));
    if let Some(reject) = reject {
        let _ = reject.call1(&JsValue::NULL, &message.into());
    }
}

/// On a pool worker: keeps the tables of a run's blocks.
pub fn take_blocks(blocks: &[Option<PoolBlock>], cells: &js_sys::Array) -> Result<(), String> {
    let tables = blocks
        .iter()
        .enumerate()
        .map(|(b, head)| {
            head.as_ref()
                .map(|h| {
                    let data = cells
                        .get(b as u32)
                        .unchecked_into::<js_sys::Float64Array>()
                        .to_vec();
                    if data.len() != h.tasks * h.conditions * h.width {
                        return Err(format!(
                            "block {b}: {} cells, expected {}",
                            data.len(),
                            h.tasks * h.conditions * h.width
                        ));
                    }
                    Ok(ResampleTable::from_cells(
                        &h.dataset,
                        h.tasks,
                        h.conditions,
                        h.width,
                        &data,
                    ))
                })
                .transpose()
        })
        .collect::<Result<Vec<_>, String>>()?;
    TABLES.with(|t| *t.borrow_mut() = tables);
    Ok(())
}

/// On a pool worker: runs a batch of jobs; the values go back as `Float64Array`s, moved.
pub fn run_chunks(
    run: u32,
    first: usize,
    resamples: usize,
    seed: &str,
    jobs: &[BootstrapJob],
) -> Result<(FromWorker, js_sys::Array, js_sys::Array), String> {
    let seed: u64 = seed.parse().map_err(|_| format!("bad seed {seed:?}"))?;
    let values = js_sys::Array::new();
    let transfer = js_sys::Array::new();
    TABLES.with(|t| {
        let tables = t.borrow();
        for job in jobs {
            let table = tables
                .get(job.block)
                .and_then(Option::as_ref)
                .ok_or_else(|| format!("no table for block {}", job.block))?;
            let array = js_sys::Float64Array::from(&table.chunk(resamples, seed, job.chunk)[..]);
            transfer.push(&array.buffer());
            values.push(&array);
        }
        Ok::<_, String>(())
    })?;
    Ok((
        FromWorker::PoolChunks {
            run,
            first,
            count: jobs.len(),
        },
        values,
        transfer,
    ))
}
