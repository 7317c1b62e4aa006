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
