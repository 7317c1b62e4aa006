//! What `bench_ranks` (natively) and `bench_ranks_web` (in the browser) share: the ranks'
//! timing on the report's own resamples and the leaderboard-shaped dataset of K conditions.

use std::hint::black_box;

use prefix_exec::report::ranks::rank_datasets;
use prefix_exec::report::{build_report, Settings};
use prefix_exec::rollout::Corpus;
use prefix_exec::score::{aggregate_with, MaxDepth};
use prefix_exec::stats::bootstrap::{bootstrap_block, BlockSamples};

/// The median time of the report's ranks for `corpus`, on resamples drawn as the report draws
/// them (its blocks' own bootstrap, same seed); the bootstrap itself is not timed.
pub fn ranks_time(
    corpus: &Corpus,
    settings: &Settings,
    time: &dyn Fn(&mut dyn FnMut()) -> f64,
) -> f64 {
    let resamples = settings.bootstrap as usize;
    let point = build_report(
        corpus,
        &Settings {
            bootstrap: 0,
            ..settings.clone()
        },
    );
    let agg = aggregate_with(corpus, MaxDepth::Fixed(10), resamples);
    let samples: Vec<Option<BlockSamples>> = agg
        .blocks
        .iter()
        .map(|b| Some(bootstrap_block(b, resamples, settings.seed, &mut |_| {})))
        .collect();
    time(&mut || {
        let mut notes = Vec::new();
        black_box(rank_datasets(
            &agg.blocks,
            &point.conditions,
            &samples,
            settings.level,
            &mut notes,
        ));
    })
}

/// A leaderboard-shaped dataset: `conditions` models of one method each, one rollout per task,
/// 1–8 steps, the first error and success from a fixed hash, each model a little stronger than
/// the last.
pub fn leaderboard(conditions: usize, tasks: usize) -> String {
    let mut out = String::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % 1000
    };
    for c in 0..conditions {
        let strength = 300 + 500 * c as u64 / conditions as u64;
        for t in 0..tasks {
            let len = 1 + next() % 8;
            let steps: Vec<&str> = (0..len)
                .map(|_| {
                    if next() < strength + 350 {
                        r#"{"ok":true}"#
                    } else {
                        r#"{"ok":false}"#
                    }
                })
                .collect();
            out.push_str(&format!(
                r#"{{"dataset":"board","task_id":"t{t:03}","model":"m{c:02}","method":"agent","success":{},"steps":[{}]}}"#,
                next() < strength,
                steps.join(",")
            ));
            out.push('\n');
        }
    }
    out
}
