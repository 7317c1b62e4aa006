//! The browser half of `bench/ranks-browser.sh`: `bench_ranks` compiled to WebAssembly and run
//! in headless Chromium (`bench/ranks-browser.mjs`), timed with `performance.now()`.
//!
//! `run(grid, conditions, tasks, bootstrap, runs)` returns JSON: the paper grid's scoring
//! (`build_report` from the parsed corpus) and the ranks of one dataset of `conditions` ×
//! `tasks` at `bootstrap` resamples on its own resamples, medians of `runs`, in ms. One thread,
//! as the scoring worker runs the ranks. Built with the app worker's profile (`wasm-worker`).
//! Natively this example is empty.

#[cfg(target_arch = "wasm32")]
#[path = "common/ranks_bench.rs"]
mod common;

#[cfg(target_arch = "wasm32")]
mod web {
    use std::hint::black_box;

    use wasm_bindgen::prelude::*;

    use super::common::{leaderboard, ranks_time};
    use prefix_exec::ingest::read_files;
    use prefix_exec::report::{build_report, Settings};

    #[wasm_bindgen]
    pub fn run(
        grid: &[u8],
        conditions: usize,
        tasks: usize,
        bootstrap: u32,
        runs: usize,
    ) -> String {
        let perf = web_sys::window()
            .and_then(|w| w.performance())
            .expect("performance.now()");
        let settings = Settings {
            bootstrap,
            ..Settings::default()
        };
        let time = |f: &mut dyn FnMut()| -> f64 {
            let mut v: Vec<f64> = (0..runs.max(1))
                .map(|_| {
                    let t = perf.now();
                    f();
                    (perf.now() - t) / 1e3
                })
                .collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let grid = read_files([("grid.jsonl", grid)]);
        let grid_scoring = time(&mut || {
            black_box(build_report(&grid, &settings));
        });
        let grid_ranks = ranks_time(&grid, &settings, &time);
        let wide = read_files([("wide.jsonl", leaderboard(conditions, tasks).as_bytes())]);
        let wide_ranks = ranks_time(&wide, &settings, &time);
        format!(
            r#"{{"rollouts":{},"grid_scoring_ms":{:.1},"grid_ranks_ms":{:.2},"wide_ranks_ms":{:.2}}}"#,
            grid.rollouts.len(),
            1e3 * grid_scoring,
            1e3 * grid_ranks,
            1e3 * wide_ranks
        )
    }
}

fn main() {}
