//! A tar stream's small members prepared by the pool workers while the coordinator reads on:
//! the browser's counterpart of the CLI's `PoolSink`, for a `.tar.gz` (or `.tar`, `.tar.zst`)
//! read push-wise (`web::native_decoder`).
//!
//! The coordinator frames the stream's members itself (the tar framing is sequential), and
//! hands each member read whole to a [`PoolSink`]: the sink holds it, and sends a copy, in
//! batches, to the pool workers (a JSON object's: an array's preparation is not worth the
//! copies, [`worth_encoding`]). Each worker computes what follows from a member's bytes alone
//! ([`prepare_encoded`]: its format, and the ToolSandbox reader's reading of an execution
//! context) and sends that back; the coordinator pushes the held members in the archive's
//! order, each with its preparation ([`PreparedFile::with_encoded`]), so it does only the
//! order-dependent part of reading them. Held members are bounded ([`PoolSink::too_far_ahead`]:
//! the coordinator waits for the pool before reading on).
//!
//! A preparation that is missing — a worker that failed, a flush (a member streamed or an
//! archive inside must come after every member before it) — only means the member is read
//! here as usual: the corpus is the same either way (`tests/archives.rs` reads streams through
//! a sink that holds members and prepares some of them).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::super::protocol::ToWorker;
use super::spare::Spare;
use crate::formats::ImportOptions;
use crate::ingest::archive::{InOrder, MemberSink};
use crate::ingest::whole::{prepare_encoded, worth_encoding};
use crate::ingest::{Ingest, PreparedFile};

/// Batches a pool worker holds at once (it prepares one while the next is on its way).
const BATCHES_IN_FLIGHT: usize = 2;
/// Members per batch, and the most bytes they may hold together: tens of milliseconds of work.
/// Every batch costs the coordinator a copy, a message and a buffer; 32 members / 1 MiB cost it
/// 0.5 CPU-seconds more on the leaderboard `.tar.gz`, where it is the critical path (#28).
const BATCH_MEMBERS: usize = 96;
const BATCH_BYTES: usize = 3 << 20;
/// Members held, and their bytes, past which the coordinator waits for the pool before it
/// reads on (each member is at most `WHOLE_MEMBER_BYTES`, 1 MiB).
const AHEAD_MEMBERS: usize = 1024;
const AHEAD_BYTES: usize = 48 << 20;
/// A fresh batch buffer's size: room for any batch (it closes past `BATCH_BYTES`, and a member
/// held whole is at most 1 MiB), so every buffer the pool sends back fits the next batch.
const BUFFER_BYTES: usize = 2 * BATCH_BYTES + 64;

/// A batch formed and not sent yet: its number, its members' lengths and their bytes one after
/// the other (one `Uint8Array`: one copy out of this worker's memory per batch, not per member).
type Unsent = (usize, Vec<u32>, js_sys::Uint8Array);

/// The coordinator's side of the run: what the pool has, and what came back.
struct Whole {
    id: u32,
    in_flight: Vec<usize>,
    unsent: VecDeque<Unsent>,
    /// Batches back and not taken: each member's preparation, in order.
    ready: HashMap<usize, Vec<Option<Vec<u8>>>>,
    /// Batches below this number were read without their preparations: dropped on arrival.
    dropped_below: usize,
    waiting: Option<js_sys::Function>,
    broken: bool,
    /// Batch buffers the pool sent back, filled again for the next batches: copying into a
    /// buffer already touched costs no page faults (fresh 1 MiB buffers did, for each batch).
    spare: Spare,
}

thread_local! {
    static WHOLE: RefCell<Option<Whole>> = const { RefCell::new(None) };
}

/// A member held until its preparation comes (or a flush).
struct Held {
    name: String,
    options: ImportOptions,
    bytes: Vec<u8>,
    /// Its batch, and its place in it; `None`: not sent to the pool ([`worth_encoding`]), pushed
    /// as soon as the members before it are.
    slot: Option<(usize, usize)>,
}

/// The members being gathered into the next batch (the last `count` held that are sent).
#[derive(Default)]
struct Gathering {
    count: usize,
    bytes: usize,
}

/// Where a stream's small members go in the browser: to the pool to be prepared, then into the
/// ingest in order (see the module documentation). Without a pool, each is pushed as it comes.
pub struct PoolSink {
    run: Option<u32>,
    held: VecDeque<Held>,
    held_bytes: usize,
    gathering: Gathering,
    /// The number of the batch being gathered.
    batch: usize,
}

impl PoolSink {
    /// A sink for one stream; on the pool where there are at least two pool workers.
    pub fn start() -> PoolSink {
        let members = super::size();
        let run = (members >= 2).then(|| {
            let id = super::next_run();
            WHOLE.with(|w| {
                *w.borrow_mut() = Some(Whole {
                    id,
                    in_flight: vec![0; members],
                    unsent: VecDeque::new(),
                    ready: HashMap::new(),
                    dropped_below: 0,
                    waiting: None,
                    broken: false,
                    spare: Spare::default(),
                })
            });
            id
        });
        PoolSink {
            run,
            held: VecDeque::new(),
            held_bytes: 0,
            gathering: Gathering::default(),
            batch: 0,
        }
    }

    /// Pushes the held members whose preparations came, in order (all of them once the pool
    /// broke down: read here).
    pub fn land(&mut self, ingest: &mut Ingest) {
        while let Some(front) = self.held.front() {
            let Some((batch, at)) = front.slot else {
                self.push_front(ingest, None);
                continue;
            };
            let prepared = WHOLE.with(|w| {
                let mut w = w.borrow_mut();
                match w.as_mut().filter(|r| Some(r.id) == self.run) {
                    // No run (or a broken one) will answer: read here.
                    None => Some(None),
                    Some(run) if run.broken => Some(None),
                    Some(run) => run
                        .ready
                        .get_mut(&batch)
                        .map(|p| p.get_mut(at).and_then(Option::take)),
                }
            });
            let Some(prepared) = prepared else {
                if batch == self.batch {
                    // The front waits for the batch being gathered: send it.
                    self.close_batch();
                }
                return;
            };
            self.push_front(ingest, prepared);
            let next = self.held.iter().find_map(|h| h.slot).map(|(b, _)| b);
            if next != Some(batch) {
                WHOLE.with(|w| {
                    if let Some(run) = w.borrow_mut().as_mut() {
                        run.ready.remove(&batch);
                    }
                });
            }
        }
    }

    /// Whether the coordinator should wait for the pool ([`PoolSink::wait`]) before reading on.
    pub fn too_far_ahead(&self) -> bool {
        self.held.len() > AHEAD_MEMBERS || self.held_bytes > AHEAD_BYTES
    }

    /// Waits until the first held member's preparation came (or the pool broke down).
    pub async fn wait(&mut self) {
        let Some(front) = self.held.front() else {
            return;
        };
        // A member not sent waits for nothing: `land` pushes it.
        let Some((batch, _)) = front.slot else {
            return;
        };
        if batch == self.batch {
            self.close_batch();
        }
        let id = self.run;
        let arrived = || {
            WHOLE.with(|w| {
                w.borrow()
                    .as_ref()
                    .filter(|r| Some(r.id) == id)
                    .is_none_or(|r| r.broken || r.ready.contains_key(&batch))
            })
        };
        while !arrived() {
            // The executor runs at once: the batch's arrival resolves the wait.
            let promise = js_sys::Promise::new(&mut |resolve, _| {
                WHOLE.with(|w| {
                    if let Some(run) = w.borrow_mut().as_mut() {
                        run.waiting = Some(resolve);
                    }
                })
            });
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        }
    }

    /// Pushes every held member, waiting for the pool's preparations.
    pub async fn finish(&mut self, ingest: &mut Ingest) {
        self.land(ingest);
        while !self.held.is_empty() {
            self.wait().await;
            self.land(ingest);
        }
    }

    fn push_front(&mut self, ingest: &mut Ingest, prepared: Option<Vec<u8>>) {
        if let Some(h) = self.held.pop_front() {
            self.held_bytes -= h.bytes.len();
            let file = PreparedFile::with_encoded(h.bytes, prepared.as_deref());
            ingest.push_whole_file(&h.name, h.options, file);
        }
    }

    /// Ends the batch being gathered and sends what the pool has room for.
    fn close_batch(&mut self) {
        let g = std::mem::take(&mut self.gathering);
        if g.count == 0 {
            return;
        }
        let batch = self.batch;
        self.batch += 1;
        // The batch's members are the last `g.count` sent, among members not sent.
        let mut members: Vec<&Held> = (self.held.iter().rev())
            .filter(|h| h.slot.is_some_and(|(b, _)| b == batch))
            .take(g.count)
            .collect();
        members.reverse();
        let lens = members.iter().map(|h| h.bytes.len() as u32).collect();
        let parts: Vec<&[u8]> = members.iter().map(|h| h.bytes.as_slice()).collect();
        let array = WHOLE.with(|w| match w.borrow_mut().as_mut() {
            Some(run) => run.spare.pack(&parts, BUFFER_BYTES),
            None => Spare::default().pack(&parts, BUFFER_BYTES),
        });
        WHOLE.with(|w| {
            if let Some(run) = w.borrow_mut().as_mut().filter(|r| Some(r.id) == self.run) {
                run.unsent.push_back((batch, lens, array));
            }
        });
        dispatch();
    }
}

impl MemberSink for PoolSink {
    fn whole(
        &mut self,
        ingest: &mut Ingest,
        name: String,
        options: &ImportOptions,
        bytes: Vec<u8>,
    ) {
        if self.run.is_none() {
            return InOrder.whole(ingest, name, options, bytes);
        }
        if !worth_encoding(&bytes) {
            if self.held.is_empty() {
                return InOrder.whole(ingest, name, options, bytes);
            }
            self.held_bytes += bytes.len();
            self.held.push_back(Held {
                name,
                options: options.clone(),
                bytes,
                slot: None,
            });
            return;
        }
        self.gathering.count += 1;
        self.gathering.bytes += bytes.len();
        self.held_bytes += bytes.len();
        self.held.push_back(Held {
            name,
            options: options.clone(),
            bytes,
            slot: Some((self.batch, self.gathering.count - 1)),
        });
        if self.gathering.count >= BATCH_MEMBERS || self.gathering.bytes >= BATCH_BYTES {
            self.close_batch();
        }
    }

    fn flush(&mut self, ingest: &mut Ingest) {
        self.land(ingest);
        if self.held.is_empty() {
            return;
        }
        // Read here, now: what comes next must follow them. Their preparations are not
        // awaited, and dropped when they come.
        let below = self
            .held
            .iter()
            .rev()
            .find_map(|h| h.slot)
            .map_or(0, |(b, _)| b + 1);
        while !self.held.is_empty() {
            self.push_front(ingest, None);
        }
        if std::mem::take(&mut self.gathering).count > 0 {
            self.batch += 1;
        }
        WHOLE.with(|w| {
            if let Some(run) = w.borrow_mut().as_mut().filter(|r| Some(r.id) == self.run) {
                run.dropped_below = below;
                run.unsent.retain(|(b, ..)| *b >= below);
                run.ready.retain(|b, _| *b >= below);
            }
        });
    }
}

impl Drop for PoolSink {
    fn drop(&mut self) {
        WHOLE.with(|w| {
            let mut w = w.borrow_mut();
            if w.as_ref().is_some_and(|r| Some(r.id) == self.run) {
                *w = None;
            }
        });
    }
}

/// Sends the batches formed to the pool workers with room for them, the least busy first; the
/// pool worker decompressing the stream (`pool::gunzip`) counts one batch busier, so that the
/// others prepare the members while it decodes (the decoder's batches wait for its next turn,
/// and the members are pushed in order).
fn dispatch() {
    let decoder = super::gunzip::decoding();
    loop {
        let next = WHOLE.with(|w| {
            let mut w = w.borrow_mut();
            let run = w.as_mut().filter(|r| !r.broken)?;
            let (index, busy) = run
                .in_flight
                .iter()
                .copied()
                .enumerate()
                .min_by_key(|&(i, n)| (n + usize::from(Some(i) == decoder), Some(i) == decoder))?;
            if busy >= BATCHES_IN_FLIGHT {
                return None;
            }
            let (batch, lens, bytes) = run.unsent.pop_front()?;
            run.in_flight[index] += 1;
            Some((index, run.id, batch, lens, bytes))
        });
        let Some((index, run, batch, lens, bytes)) = next else {
            return;
        };
        let msg = ToWorker::PoolWhole { run, batch, lens };
        let transfer = js_sys::Array::of1(&bytes.buffer());
        super::send_moved(index, &msg, &[("bytes", &bytes)], &transfer);
    }
}

/// A pool worker's preparations of batch `batch`, on the coordinator: the `i`-th member's is
/// `lens[i]` bytes (`None`: none) of `data.prepared`, one after the other.
pub fn batch_back(index: usize, run: u32, batch: usize, lens: Vec<Option<u32>>, data: &JsValue) {
    let prepared = js_sys::Reflect::get(data, &"prepared".into())
        .ok()
        .and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
        .map(|a| a.to_vec())
        .unwrap_or_default();
    let returned = js_sys::Reflect::get(data, &"bytes".into())
        .ok()
        .and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok())
        .map(|a| a.buffer());
    let resolve = WHOLE.with(|w| {
        let mut w = w.borrow_mut();
        let state = w.as_mut().filter(|r| r.id == run)?;
        if let Some(n) = state.in_flight.get_mut(index) {
            *n = n.saturating_sub(1);
        }
        if let Some(buffer) = returned {
            state.spare.keep(buffer);
        }
        if batch >= state.dropped_below {
            let mut at = 0usize;
            let preparations = lens
                .iter()
                .map(|len| {
                    let len = (*len)? as usize;
                    let part = prepared.get(at..at + len).map(<[u8]>::to_vec);
                    at += len;
                    part
                })
                .collect();
            state.ready.insert(batch, preparations);
        }
        state.waiting.take()
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
    dispatch();
}

/// Stops preparing ahead after a pool worker stopped: the coordinator reads the rest itself.
pub fn break_run() {
    let resolve = WHOLE.with(|w| {
        let mut w = w.borrow_mut();
        let run = w.as_mut()?;
        run.broken = true;
        run.waiting.take()
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// On a pool worker: the preparations of a batch's members, `lens` bytes each one after the
/// other in `bytes`; each one's length (`None`: none) and the preparations one after the other.
pub fn prepare_batch(lens: &[u32], bytes: &JsValue) -> (Vec<Option<u32>>, Vec<u8>) {
    let bytes = bytes
        .dyn_ref::<js_sys::Uint8Array>()
        .map(|a| a.to_vec())
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut at = 0usize;
    let lens = lens
        .iter()
        .map(|&len| {
            let member = bytes.get(at..at + len as usize)?;
            at += len as usize;
            let encoded = prepare_encoded(member)?;
            out.extend_from_slice(&encoded);
            Some(encoded.len() as u32)
        })
        .collect();
    (lens, out)
}
