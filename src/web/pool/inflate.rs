//! A zip's members inflated by the pool workers ahead of the coordinator, which pushes them
//! into the ingest in the archive's order ([`crate::ingest::Ingest::zip_step`]).
//!
//! Members are independent, so they spread over the pool as a folder's slices do
//! ([`super::ParseRun`]): the coordinator hands each pool worker batches of member
//! records (where each lies in the `File`, how it inflates: [`MemberRecord`]); the worker reads
//! each record with `FileReaderSync`, inflates and CRC-checks it ([`inflate_member`]), prepares
//! it as the CLI's pool prepares a folder's files ([`prepare_encoded`]: its format and its
//! reader's context-free reading), and moves the bytes and that preparation back. A member the pool did not inflate (too big to inflate ahead, a worker
//! that failed) is read by the coordinator itself: the corpus is the same either way.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::super::protocol::{FromWorker, ToWorker};
use super::spare::Spare;
use crate::ingest::archive::{inflate_member, Inflated, MemberRecord};
use crate::ingest::whole::prepare_encoded;

/// Batches a pool worker holds at once (its reads overlap its inflating).
const BATCHES_IN_FLIGHT: usize = 3;
/// Members per batch, and the most compressed bytes they may hold together. Each batch costs
/// its pool worker and the coordinator a message and a few reads: 128 members took the
/// leaderboard `.zip` 0.1 s less than 64 (drop → ready, medians of five); 256 kept fewer
/// batches in flight within [`AHEAD`] and took 0.2-0.4 s more.
const BATCH_MEMBERS: usize = 128;
const BATCH_BYTES: u64 = 4 << 20;
/// Members inflated (or inflating) ahead of the one the coordinator takes (each at most 1 MiB
/// inflated: `ZipSteps::ahead`).
const AHEAD: usize = 1024;

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
    ready: HashMap<usize, Result<Inflated, String>>,
    waiting: Option<(usize, js_sys::Function)>,
    broken: bool,
    /// Each pool worker's batch buffers taken in, sent back with its next batch to be filled
    /// again (a fresh buffer per member cost each pool worker 0.9 s of the leaderboard `.zip`).
    spare: Vec<Spare>,
}

thread_local! {
    static INFLATE: RefCell<Option<Inflate>> = const { RefCell::new(None) };
    /// On a pool worker: buffers to fill with the next batches' members and preparations.
    static SPARE: RefCell<Spare> = RefCell::new(Spare::default());
}

/// A fresh buffer's least size: room for a typical batch, so that it is reused.
const FRESH_BYTES: usize = 4 << 20;

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
                spare: (0..members).map(|_| Spare::default()).collect(),
            })
        });
        for index in 0..members {
            dispatch(index);
        }
        Some(InflateRun { id })
    }

    /// Member `k`'s bytes as the pool inflated them, waiting if need be; `None` when the pool
    /// will not give them (the coordinator inflates it then). Taking `k` lets the pool go on.
    pub async fn take(&self, k: usize) -> Option<Result<Inflated, String>> {
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
            let spare = run.spare[index].take();
            Some((msg, run.file.clone(), spare))
        });
        let Some((msg, file, spare)) = msg else {
            return;
        };
        let transfer = js_sys::Array::new();
        for buffer in spare {
            transfer.push(&buffer);
        }
        let fields: [(&str, &JsValue); 2] = [("file", &file), ("spare", &transfer)];
        super::send_moved(index, &msg, &fields, &transfer);
    }
}

/// On a pool worker: keeps the buffers a `PoolInflate` message brought back (`spare`).
pub fn keep_spare(data: &JsValue) {
    let Some(spare) = js_sys::Reflect::get(data, &"spare".into())
        .ok()
        .filter(|v| v.is_array())
    else {
        return;
    };
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        for buffer in js_sys::Array::from(&spare).iter() {
            if let Ok(buffer) = buffer.dyn_into::<js_sys::ArrayBuffer>() {
                s.keep(buffer);
            }
        }
    });
}

/// A pool worker's inflated batch, on the coordinator: `errors[i]` for its `i`-th member, whose
/// bytes are the next `lens[i]` of `data.members` and its preparation the next
/// `prepared_lens[i]` of `data.prepared` (`None`: none); both buffers are kept to go back to
/// that pool worker with its next batch.
pub fn batch_back(
    index: usize,
    run: u32,
    batch: usize,
    (errors, lens, prepared_lens): (Vec<Option<String>>, Vec<u32>, Vec<Option<u32>>),
    data: &JsValue,
) {
    let array_of = |key: &str| {
        js_sys::Reflect::get(data, &key.into())
            .ok()
            .and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
    };
    let (members_bytes, prepared_bytes) = (array_of("members"), array_of("prepared"));
    let resolve = INFLATE.with(|i| {
        let mut i = i.borrow_mut();
        let run = i.as_mut().filter(|r| r.id == run)?;
        if let Some(n) = run.in_flight.get_mut(index) {
            *n = n.saturating_sub(1);
        }
        let members = run.batches.get(batch)?.clone();
        let length = |a: &Option<js_sys::Uint8Array>| a.as_ref().map_or(0, |a| a.length() as u64);
        let members_total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
        let prepared_total: u64 = prepared_lens.iter().flatten().map(|&l| u64::from(l)).sum();
        if length(&members_bytes) < members_total || length(&prepared_bytes) < prepared_total {
            // Not what a pool worker sends: the coordinator reads the rest itself.
            run.broken = true;
            return run.waiting.take().map(|(_, resolve)| resolve);
        }
        // Each member's bytes and preparation, read out of the two buffers in order.
        let (mut at, mut prepared_at) = (0u32, 0u32);
        let next = |array: &Option<js_sys::Uint8Array>, at: &mut u32, len: u32| {
            let part = array.as_ref().map(|a| a.subarray(*at, *at + len).to_vec());
            *at += len;
            part
        };
        for (j, (k, error)) in members.into_iter().zip(errors).enumerate() {
            let len = lens.get(j).copied().unwrap_or(0);
            let bytes = next(&members_bytes, &mut at, len).unwrap_or_default();
            let prepared_len = prepared_lens.get(j).copied().flatten();
            let prepared =
                prepared_len.and_then(|len| next(&prepared_bytes, &mut prepared_at, len));
            if k < run.taken {
                continue;
            }
            let result = match error {
                Some(e) => Err(e),
                None => Ok(Inflated { bytes, prepared }),
            };
            run.ready.insert(k, result);
        }
        // The buffers go back to the pool worker with its next batch.
        if let Some(spare) = run.spare.get_mut(index) {
            for array in [&members_bytes, &prepared_bytes].into_iter().flatten() {
                spare.keep(array.buffer());
            }
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

/// The archive is read by pool workers in parts of this size, aligned, and the last
/// [`PARTS_KEPT`] parts read are kept for the batches after: records in name order lie
/// scattered over the file (a zip written by walking folders stores each folder's files
/// together, the folders in no name order), so one read per record — a `Blob.slice` and a
/// read, each a round trip to the browser's process — cost more than inflating them, while
/// consecutive batches draw on the same few MiB.
pub(crate) const PART: u64 = 2 << 20;
pub(crate) const PARTS_KEPT: usize = 8;

/// A part of the archive as read: its index and bytes.
type Part = (u64, Rc<Vec<u8>>);

thread_local! {
    /// The parts kept (oldest first), for the inflate run they belong to.
    static PARTS: RefCell<(u32, VecDeque<Part>)> = const { RefCell::new((u32::MAX, VecDeque::new())) };
    /// The parts being read, for the run they belong to: a batch that needs a part another
    /// batch in flight is reading waits for that read (each pool worker read every part of the
    /// leaderboard `.zip` about three times over when each batch read what it found missing).
    static PENDING: RefCell<(u32, HashMap<u64, js_sys::Promise>)> = RefCell::new((u32::MAX, HashMap::new()));
}

/// Parts `wanted` (at most [`PARTS_KEPT`]) of `file`: those kept, the others read at once; a
/// part whose read failed is missing (its records are read alone).
async fn parts_of(file: &web_sys::File, run: u32, wanted: &[u64]) -> HashMap<u64, Rc<Vec<u8>>> {
    let size = file.size() as u64;
    let mut have = HashMap::new();
    PARTS.with(|p| {
        let mut p = p.borrow_mut();
        if p.0 != run {
            *p = (run, VecDeque::new());
        }
        for (i, bytes) in &p.1 {
            if wanted.contains(i) {
                have.insert(*i, bytes.clone());
            }
        }
    });
    let missing: Vec<u64> = wanted
        .iter()
        .copied()
        .filter(|i| !have.contains_key(i))
        .collect();
    let reads = js_sys::Array::new();
    PENDING.with(|q| {
        let mut q = q.borrow_mut();
        if q.0 != run {
            *q = (run, HashMap::new());
        }
        for &i in &missing {
            let read = q.1.entry(i).or_insert_with(|| {
                let (start, end) = (i * PART, ((i + 1) * PART).min(size));
                file.slice_with_f64_and_f64(start as f64, end as f64)
                    .map(|blob| blob.array_buffer())
                    .unwrap_or_else(|_| js_sys::Promise::reject(&JsValue::NULL))
            });
            reads.push(read);
        }
    });
    let settled = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::all_settled(&reads))
        .await
        .map(|v| js_sys::Array::from(&v))
        .unwrap_or_default();
    PENDING.with(|q| {
        let mut q = q.borrow_mut();
        if q.0 == run {
            for i in &missing {
                q.1.remove(i);
            }
        }
    });
    PARTS.with(|p| {
        let mut p = p.borrow_mut();
        for (k, &i) in missing.iter().enumerate() {
            // Another batch that waited for the same read has kept it already.
            let kept = (p.0 == run)
                .then(|| p.1.iter().find(|(j, _)| *j == i).map(|(_, b)| b.clone()))
                .flatten();
            if let Some(bytes) = kept {
                have.insert(i, bytes);
                continue;
            }
            let read = js_sys::Reflect::get(&settled.get(k as u32), &"value".into())
                .ok()
                .filter(|v| v.is_instance_of::<js_sys::ArrayBuffer>())
                .map(|v| Rc::new(js_sys::Uint8Array::new(&v).to_vec()));
            if let Some(bytes) = read {
                have.insert(i, bytes.clone());
                if p.0 == run && !p.1.iter().any(|(j, _)| *j == i) {
                    p.1.push_back((i, bytes));
                }
            }
        }
        while p.1.len() > PARTS_KEPT {
            p.1.pop_front();
        }
    });
    have
}

/// On a pool worker: each record of `file` read, inflated and prepared; the message to send
/// back, with the bytes and preparations (moved) and the transfer list. The records are read from the parts of the file
/// they lie in ([`PART`]), kept across batches; a record beyond the first [`PARTS_KEPT`] parts
/// a batch needs, or whose part could not be read, is read alone.
pub async fn inflate_batch(
    file: &web_sys::File,
    run: u32,
    batch: usize,
    records: &[(usize, MemberRecord)],
) -> (
    FromWorker,
    js_sys::Uint8Array,
    js_sys::Uint8Array,
    js_sys::Array,
) {
    let size = file.size() as u64;
    let range = |r: &MemberRecord| (r.offset.min(size), (r.offset + r.len).min(size));
    let mut wanted: Vec<u64> = Vec::new();
    for (_, r) in records {
        let (start, end) = range(r);
        if start < end {
            for i in start / PART..=(end - 1) / PART {
                if !wanted.contains(&i) && wanted.len() < PARTS_KEPT {
                    wanted.push(i);
                }
            }
        }
    }
    let parts = parts_of(file, run, &wanted).await;
    // A record's bytes from the parts it lies in, when every one of them was read.
    let from_parts = |r: &MemberRecord| -> Option<Vec<u8>> {
        let (start, end) = range(r);
        if start >= end {
            return None;
        }
        let mut out = Vec::with_capacity((end - start) as usize);
        for i in start / PART..=(end - 1) / PART {
            let part = parts.get(&i)?;
            let from = start.max(i * PART) - i * PART;
            let to = end.min((i + 1) * PART) - i * PART;
            out.extend_from_slice(part.get(from as usize..to as usize)?);
        }
        Some(out)
    };
    let reader = web_sys::FileReaderSync::new().ok();
    let mut inflated: Vec<Vec<u8>> = Vec::with_capacity(records.len());
    let mut prepared: Vec<Option<Vec<u8>>> = Vec::with_capacity(records.len());
    let mut errors = Vec::with_capacity(records.len());
    for (_, record) in records {
        let read_ahead = from_parts(record);
        let first: Option<&[u8]> = read_ahead.as_deref();
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
                prepared.push(prepare_encoded(&bytes));
                inflated.push(bytes);
                errors.push(None);
            }
            Err(e) => {
                inflated.push(Vec::new());
                prepared.push(None);
                errors.push(Some(e));
            }
        }
    }
    // One buffer for the members, one for the preparations, each filled again when it comes
    // back (see `Inflate::spare`).
    let lens = inflated.iter().map(|b| b.len() as u32).collect();
    let prepared_lens = (prepared.iter())
        .map(|p| p.as_ref().map(|p| p.len() as u32))
        .collect();
    let members: Vec<&[u8]> = inflated.iter().map(Vec::as_slice).collect();
    let prepared: Vec<&[u8]> = prepared.iter().flatten().map(Vec::as_slice).collect();
    let (members, prepared) = SPARE.with(|s| {
        let mut s = s.borrow_mut();
        (
            s.pack(&members, FRESH_BYTES),
            s.pack(&prepared, FRESH_BYTES),
        )
    });
    let transfer = js_sys::Array::of2(&members.buffer(), &prepared.buffer());
    let msg = FromWorker::PoolInflated {
        run,
        batch,
        errors,
        lens,
        prepared_lens,
    };
    (msg, members, prepared, transfer)
}
