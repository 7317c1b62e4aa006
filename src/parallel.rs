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
}
