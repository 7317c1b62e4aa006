//! A zip's members inflated by the pool workers ahead of the coordinator, which pushes them
//! into the ingest in the archive's order ([`crate::ingest::Ingest::zip_step`]).
//!
//! Members are independent, so they spread over the pool as a folder's slices do
//! ([`super::ParseRun`]): the coordinator hands each pool worker batches of member
//! records (where each lies in the `File`, how it inflates: [`MemberRecord`]); the worker reads
//! each record with `FileReaderSync`, inflates and CRC-checks it ([`inflate_member`]), and
//! moves the bytes back. A member the pool did not inflate (too big to inflate ahead, a worker
//! that failed) is read by the coordinator itself: the corpus is the same either way.

use std::cell::RefCell;
use std::collections::HashMap;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::super::protocol::{FromWorker, ToWorker};
use crate::ingest::archive::{inflate_member, MemberRecord};

/// Batches a pool worker holds at once (its reads overlap its inflating).
const BATCHES_IN_FLIGHT: usize = 3;
/// Members per batch, and the most compressed bytes they may hold together.
const BATCH_MEMBERS: usize = 64;
const BATCH_BYTES: u64 = 4 << 20;
/// Members inflated (or inflating) ahead of the one the coordinator takes (each at most 1 MiB
/// inflated: `ZipSteps::ahead`).
const AHEAD: usize = 1024;
/// Records that lie at most this far apart in the file are read as one slice.
const GAP: u64 = 64 << 10;

struct Inflate {
    id: u32,
    file: web_sys::File,
    records: Vec<Option<MemberRecord>>,
    /// The members of each batch, in order; `batch_of[k]` is member `k`'s batch.
    batches: Vec<Vec<usize>>,
    batch_of: Vec<Option<usize>>,
    /// The next batch to hand out.
    next: usize,
    /// The member the coordinator takes now.
    taken: usize,
    in_flight: Vec<usize>,
    ready: HashMap<usize, Result<Vec<u8>, String>>,
    waiting: Option<(usize, js_sys::Function)>,
    broken: bool,
}

thread_local! {
    static INFLATE: RefCell<Option<Inflate>> = const { RefCell::new(None) };
}

/// One zip's members inflating on the pool; dropping it ends the run.
pub struct InflateRun {
    id: u32,
}

impl InflateRun {
    /// Starts inflating the members that have a record (`None`: the coordinator reads that
    /// one itself). `None` without a pool, or when no member may be inflated ahead.
    pub fn start(file: &web_sys::File, records: Vec<Option<MemberRecord>>) -> Option<InflateRun> {
        let members = super::size();
        if members < 2 || records.iter().all(Option::is_none) {
            return None;
        }
        let mut batches: Vec<Vec<usize>> = Vec::new();
        let mut batch_of = vec![None; records.len()];
        let mut bytes = 0;
        for (k, record) in records.iter().enumerate() {
            let Some(record) = record else { continue };
            let size = record.len;
            let full = batches
                .last()
                .is_none_or(|b| b.len() >= BATCH_MEMBERS || bytes + size > BATCH_BYTES);
            if full {
                batches.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            batch_of[k] = Some(batches.len() - 1);
            if let Some(b) = batches.last_mut() {
                b.push(k);
            }
        }
        let id = super::next_run();
        INFLATE.with(|i| {
            *i.borrow_mut() = Some(Inflate {
                id,
                file: file.clone(),
                records,
                batches,
                batch_of,
                next: 0,
                taken: 0,
                in_flight: vec![0; members],
                ready: HashMap::new(),
                waiting: None,
                broken: false,
            })
        });
        for index in 0..members {
            dispatch(index);
        }
        Some(InflateRun { id })
    }

    /// Member `k`'s bytes as the pool inflated them, waiting if need be; `None` when the pool
    /// will not give them (the coordinator inflates it then). Taking `k` lets the pool go on.
    pub async fn take(&self, k: usize) -> Option<Result<Vec<u8>, String>> {
        let members = INFLATE.with(|i| {
            let mut i = i.borrow_mut();
            let run = i.as_mut().filter(|r| r.id == self.id)?;
            run.taken = run.taken.max(k);
            Some(run.in_flight.len())
        })?;
        for index in 0..members {
            dispatch(index);
        }
        let ready = INFLATE.with(|i| {
            let mut i = i.borrow_mut();
            let run = i.as_mut().filter(|r| r.id == self.id)?;
            if let Some(bytes) = run.ready.remove(&k) {
                return Some(Some(bytes));
            }
            let handed_out = run
                .batch_of
                .get(k)
                .copied()
                .flatten()
                .is_some_and(|b| b < run.next);
            (run.broken || !handed_out).then_some(None)
        });
        if let Some(ready) = ready {
            return ready;
        }
        // The executor runs at once: the batch's arrival resolves the wait.
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            INFLATE.with(|i| {
                if let Some(run) = i.borrow_mut().as_mut() {
                    run.waiting = Some((k, resolve));
                }
            })
        });
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        INFLATE.with(|i| {
            i.borrow_mut()
                .as_mut()
                .filter(|r| r.id == self.id)
                .and_then(|run| run.ready.remove(&k))
        })
    }
}

impl Drop for InflateRun {
    fn drop(&mut self) {
        INFLATE.with(|i| {
            let mut i = i.borrow_mut();
            if i.as_ref().is_some_and(|r| r.id == self.id) {
                *i = None;
            }
        });
    }
}

/// Hands pool worker `index` batches up to its share of the look-ahead.
fn dispatch(index: usize) {
    loop {
        let msg = INFLATE.with(|i| {
            let mut i = i.borrow_mut();
            let run = i.as_mut()?;
            let busy = run.in_flight.get(index).copied().unwrap_or(usize::MAX);
            let batch = run.batches.get(run.next)?;
            if run.broken || busy >= BATCHES_IN_FLIGHT || batch[0] >= run.taken + AHEAD {
                return None;
            }
            let records = batch
                .iter()
                .filter_map(|&k| Some((k, run.records[k].clone()?)))
                .collect();
            let msg = ToWorker::PoolInflate {
                run: run.id,
                batch: run.next,
                records,
            };
            run.next += 1;
            run.in_flight[index] += 1;
            Some((msg, run.file.clone()))
        });
        let Some((msg, file)) = msg else {
            return;
        };
        super::send_to(index, &msg, "file", &file);
    }
}

/// A pool worker's inflated batch, on the coordinator: `errors[i]` for its `i`-th member, whose
/// bytes are the `i`-th `Uint8Array` of `data.members`.
pub fn batch_back(
    index: usize,
    run: u32,
    batch: usize,
    errors: Vec<Option<String>>,
    data: &JsValue,
) {
    let arrays = js_sys::Reflect::get(data, &"members".into())
        .map(|v| js_sys::Array::from(&v))
        .unwrap_or_default();
    let resolve = INFLATE.with(|i| {
        let mut i = i.borrow_mut();
        let run = i.as_mut().filter(|r| r.id == run)?;
        if let Some(n) = run.in_flight.get_mut(index) {
            *n = n.saturating_sub(1);
        }
        let members = run.batches.get(batch)?.clone();
        for (j, (k, error)) in members.into_iter().zip(errors).enumerate() {
            if k < run.taken {
                continue;
            }
            let result = match error {
                Some(e) => Err(e),
                None => Ok(arrays
                    .get(j as u32)
                    .dyn_into::<js_sys::Uint8Array>()
                    .map(|a| a.to_vec())
                    .unwrap_or_default()),
            };
            run.ready.insert(k, result);
        }
        match run.waiting.take() {
            Some((k, resolve)) if run.ready.contains_key(&k) => Some(resolve),
            other => {
                run.waiting = other;
                None
            }
        }
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
    dispatch(index);
}

/// Stops inflating ahead after a pool worker stopped: the coordinator reads the rest itself.
pub fn break_run() {
    let resolve = INFLATE.with(|i| {
        let mut i = i.borrow_mut();
        let run = i.as_mut()?;
        run.broken = true;
        run.waiting.take().map(|(_, resolve)| resolve)
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// On a pool worker: each record of `file` read and inflated; the message to send back, with
/// the bytes (moved) and the transfer list. The records are asked for all at once
/// (`Blob.arrayBuffer`, answered as the browser reads them): one read after the other, each a
/// round trip to the browser's process, cost more than the inflation.
pub async fn inflate_batch(
    file: &web_sys::File,
    run: u32,
    batch: usize,
    records: &[(usize, MemberRecord)],
) -> (FromWorker, js_sys::Array, js_sys::Array) {
    let size = file.size() as u64;
    // Records near each other in the file (a folder's files are stored together) in one read.
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&j| records[j].1.offset);
    let mut spans: Vec<(u64, u64)> = Vec::new();
    let mut span_of = vec![0; records.len()];
    for j in order {
        let r = &records[j].1;
        let (start, end) = (r.offset.min(size), (r.offset + r.len).min(size));
        match spans.last_mut() {
            Some(last) if start <= last.1 + GAP => last.1 = last.1.max(end),
            _ => spans.push((start, end)),
        }
        span_of[j] = spans.len() - 1;
    }
    let reads = js_sys::Array::new();
    for &(start, end) in &spans {
        let read = file
            .slice_with_f64_and_f64(start as f64, end as f64)
            .map(|blob| JsValue::from(blob.array_buffer()))
            .unwrap_or_else(|_| js_sys::Promise::reject(&JsValue::NULL).into());
        reads.push(&read);
    }
    // Each read settles on its own: a record whose read failed is read again below, alone.
    let settled = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::all_settled(&reads))
        .await
        .map(|v| js_sys::Array::from(&v))
        .unwrap_or_default();
    let spans_read: Vec<Option<Vec<u8>>> = (0..spans.len())
        .map(|i| {
            js_sys::Reflect::get(&settled.get(i as u32), &"value".into())
                .ok()
                .filter(|v| v.is_instance_of::<js_sys::ArrayBuffer>())
                .map(|v| js_sys::Uint8Array::new(&v).to_vec())
        })
        .collect();
    let reader = web_sys::FileReaderSync::new().ok();
    let members = js_sys::Array::new();
    let transfer = js_sys::Array::new();
    let mut errors = Vec::with_capacity(records.len());
    for (j, (_, record)) in records.iter().enumerate() {
        let span = span_of[j];
        let first: Option<&[u8]> = spans_read[span].as_deref().and_then(|bytes| {
            let from = (record.offset.min(size) - spans[span].0) as usize;
            let to = ((record.offset + record.len).min(size) - spans[span].0) as usize;
            bytes.get(from..to)
        });
        let cannot = || {
            std::io::Error::other(format!(
                "cannot read {} (was it moved or deleted?)",
                file.name()
            ))
        };
        // The record as read ahead, and the rest (a longer local header, a failed read) read
        // here.
        let mut read_at = |offset: u64, buf: &mut [u8]| -> std::io::Result<usize> {
            if let Some(first) = first.filter(|_| offset == record.offset) {
                let n = buf.len().min(first.len());
                buf[..n].copy_from_slice(&first[..n]);
                if n == buf.len() || n < record.len as usize {
                    return Ok(n);
                }
            }
            let reader = reader.as_ref().ok_or_else(cannot)?;
            let end = (offset + buf.len() as u64).min(size);
            if offset >= end {
                return Ok(0);
            }
            let blob = file
                .slice_with_f64_and_f64(offset as f64, end as f64)
                .map_err(|_| cannot())?;
            let buffer = reader.read_as_array_buffer(&blob).map_err(|_| cannot())?;
            let array = js_sys::Uint8Array::new(&buffer);
            let n = array.length() as usize;
            array.copy_to(&mut buf[..n]);
            Ok(n)
        };
        match inflate_member(record, &mut read_at) {
            Ok(bytes) => {
                let array = js_sys::Uint8Array::from(&bytes[..]);
                transfer.push(&array.buffer());
                members.push(&array);
                errors.push(None);
            }
            Err(e) => {
                members.push(&js_sys::Uint8Array::new_with_length(0));
                errors.push(Some(e));
            }
        }
    }
    (
        FromWorker::PoolInflated { run, batch, errors },
        members,
        transfer,
    )
}
