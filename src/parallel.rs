//! Where the core's threads live.
//!
//! Natively, [`map`] runs a function over independent items on rayon's global thread pool (the
//! CLI sizes it with `--threads`); in wasm32 it is a plain loop (the browser app parallelises
//! across Web Workers instead, see `web::pool`). Either way the results come back in item order
//! and every item is computed by the same code from the same inputs, so the number of threads
//! never changes a number.

/// `f` over `items`, in parallel where the platform allows, results in item order.
#[cfg(not(target_arch = "wasm32"))]
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    items.par_iter().map(f).collect()
}

/// `f` over `items`, in parallel where the platform allows, results in item order.
#[cfg(target_arch = "wasm32")]
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    items.iter().map(f).collect()
}

/// `f` over `items`, in parallel where the platform allows, with `consume` called on the
/// calling thread for each result in item order as soon as it and those before it are ready: the
/// caller's sequential work on the first results overlaps the computation of the later ones.
#[cfg(not(target_arch = "wasm32"))]
pub fn map_each<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
    mut consume: impl FnMut(R),
) {
    if rayon::current_thread_index().is_some() {
        // On one of the pool's threads, waiting for the others would hold a thread the work may
        // need (all of them, with one): compute everything first.
        return map(items, f).into_iter().for_each(consume);
    }
    let f = &f;
    rayon::in_place_scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for (i, item) in items.iter().enumerate() {
            let tx = tx.clone();
            scope.spawn(move |_| {
                // The receiver outlives the scope's work; a failed send cannot happen.
                let _ = tx.send((i, f(item)));
            });
        }
        drop(tx);
        let mut ready: Vec<Option<R>> = items.iter().map(|_| None).collect();
        let mut next = 0;
        // Ends when every task has sent (or one panicked: the scope then re-raises its panic).
        for (i, r) in rx {
            ready[i] = Some(r);
            while let Some(r) = ready.get_mut(next).and_then(Option::take) {
                consume(r);
                next += 1;
            }
        }
    });
}

/// `f` over `items`, in parallel where the platform allows, with `consume` called on the
/// calling thread for each result in item order as soon as it and those before it are ready.
#[cfg(target_arch = "wasm32")]
pub fn map_each<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
    consume: impl FnMut(R),
) {
    items.iter().map(f).for_each(consume);
}

/// [`map_each`] in a sliding window: item `k + ahead` is started only once item `k` was
/// consumed, so at most `ahead` results wait at any time (memory stays bounded however many
/// items there are). `consume` returns `false` to stop: no later item is started, and the
/// items started are waited for and dropped.
#[cfg(not(target_arch = "wasm32"))]
pub fn map_each_ahead<T: Sync, R: Send>(
    items: &[T],
    ahead: usize,
    f: impl Fn(&T) -> R + Sync + Send,
    mut consume: impl FnMut(R) -> bool,
) {
    if rayon::current_thread_index().is_some() {
        // On one of the pool's threads: one item at a time, in order (see `map_each`).
        for item in items {
            if !consume(f(item)) {
                return;
            }
        }
        return;
    }
    let ahead = ahead.max(1);
    let f = &f;
    rayon::in_place_scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        let start = |i: usize| {
            let tx = tx.clone();
            let item = &items[i];
            scope.spawn(move |_| {
                // A panic is sent back and raised again on the calling thread, which would
                // otherwise wait for this result forever.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item)));
                let _ = tx.send((i, r));
            });
        };
        let mut started = items.len().min(ahead);
        (0..started).for_each(start);
        let mut ready = std::collections::BTreeMap::new();
        let (mut next, mut stopped) = (0, false);
        while next < started {
            // Item `next` was started and has not been received: a result is still to come.
            let Ok((i, r)) = rx.recv() else { break };
            let r = r.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            ready.insert(i, r);
            while let Some(r) = ready.remove(&next) {
                next += 1;
                if stopped {
                    continue;
                }
                stopped = !consume(r);
                if !stopped && started < items.len() {
                    start(started);
                    started += 1;
                }
            }
        }
    });
}

/// [`map_each`] in a sliding window of `ahead` items; in wasm32 a plain loop.
#[cfg(target_arch = "wasm32")]
pub fn map_each_ahead<T: Sync, R: Send>(
    items: &[T],
    _ahead: usize,
    f: impl Fn(&T) -> R + Sync + Send,
    mut consume: impl FnMut(R) -> bool,
) {
    for item in items {
        if !consume(f(item)) {
            return;
        }
    }
}

/// The threads [`map`] uses.
pub fn threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        rayon::current_num_threads()
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come in item order, from the calling thread and from inside a pool of one thread
    /// (where waiting for other threads would never end).
    #[test]
    fn map_each_consumes_in_item_order() {
        let items: Vec<u64> = (0..200).collect();
        let slow_first = |&i: &u64| {
            if i < 3 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            i * i
        };
        let mut got = Vec::new();
        map_each(&items, slow_first, |r| got.push(r));
        let expected: Vec<u64> = items.iter().map(|i| i * i).collect();
        assert_eq!(got, expected);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let mut inside = Vec::new();
        pool.install(|| map_each(&items, slow_first, |r| inside.push(r)));
        assert_eq!(inside, expected);
    }

    /// The window: results in item order, never more than `ahead` items started and not yet
    /// consumed, and nothing started after `consume` says stop.
    #[test]
    fn map_each_ahead_keeps_its_window() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<u64> = (0..300).collect();
        for ahead in [1, 2, 7, 64, 1000] {
            let (started, consumed) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let mut got = Vec::new();
            map_each_ahead(
                &items,
                ahead,
                |&i| {
                    let s = started.fetch_add(1, Ordering::SeqCst) + 1;
                    assert!(
                        s <= consumed.load(Ordering::SeqCst) + ahead,
                        "window of {ahead}"
                    );
                    if i % 50 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    i * 3
                },
                |r| {
                    got.push(r);
                    consumed.fetch_add(1, Ordering::SeqCst);
                    true
                },
            );
            assert_eq!(got, items.iter().map(|i| i * 3).collect::<Vec<_>>());
            let started = AtomicUsize::new(0);
            let mut got = Vec::new();
            map_each_ahead(
                &items,
                ahead,
                |&i| {
                    started.fetch_add(1, Ordering::SeqCst);
                    i
                },
                |r| {
                    got.push(r);
                    r < 10
                },
            );
            assert_eq!(got, (0..=10).collect::<Vec<_>>());
            assert!(started.load(Ordering::SeqCst) <= 11 + ahead);
        }
    }

    #[test]
    #[should_panic(expected = "item 5")]
    fn map_each_ahead_raises_a_panic_on_the_calling_thread() {
        let items: Vec<u64> = (0..20).collect();
        map_each_ahead(
            &items,
            4,
            |&i| {
                assert!(i != 5, "item 5");
                i
            },
            |_| true,
        );
    }
}
