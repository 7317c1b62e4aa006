//! pass^k, tau-bench's reliability metric, for files with repeated trials of each task.
//!
//! pass^k is the chance that *all* of k trials drawn without replacement from a task's n trials
//! succeed, averaged over tasks: `pass^k = mean over tasks of C(c, k) / C(n, k)`, with c the
//! task's successes. It is the unbiased estimator tau-bench publishes (pass^1 is the mean
//! success). A task with fewer than k trials has no estimate and is left out of the mean.

use std::collections::BTreeMap;

use crate::rollout::{ConditionId, Corpus};

/// pass^k of one condition; `None` when no task has at least `k ≥ 1` trials.
pub fn pass_hat_k(corpus: &Corpus, condition: ConditionId, k: u32) -> Option<f64> {
    if k == 0 {
        return None;
    }
    let per_task = trials(corpus, condition);
    let mut ratios: Vec<f64> = per_task
        .values()
        .filter(|&&(n, _)| n >= u64::from(k))
        .map(|&(n, c)| ratio(c, n, u64::from(k)))
        .collect();
    // Summed in value order: task ids are numbered in input order, which must not matter.
    ratios.sort_by(f64::total_cmp);
    (!ratios.is_empty()).then(|| ratios.iter().sum::<f64>() / ratios.len() as f64)
}

/// pass^1 … pass^K of one condition, K being the smallest number of trials of any of its tasks;
/// empty when some task has a single trial or the condition has no rollout.
pub fn pass_hat_curve(corpus: &Corpus, condition: ConditionId) -> Vec<f64> {
    let per_task = trials(corpus, condition);
    let Some(k_max) = per_task.values().map(|&(n, _)| n).min() else {
        return Vec::new();
    };
    if k_max < 2 {
        return Vec::new();
    }
    (1..=k_max)
        .filter_map(|k| pass_hat_k(corpus, condition, k as u32))
        .collect()
}

/// (trials, successes) per task of a condition.
fn trials(corpus: &Corpus, condition: ConditionId) -> BTreeMap<u32, (u64, u64)> {
    let mut per_task: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for r in corpus.rollouts.iter().filter(|r| r.condition == condition) {
        let e = per_task.entry(r.task).or_default();
        e.0 += 1;
        e.1 += u64::from(r.success);
    }
    per_task
}

/// C(c, k) / C(n, k) = Π_{i<k} (c − i) / (n − i), computed as a product to stay exact enough
/// and free of overflow.
fn ratio(c: u64, n: u64, k: u64) -> f64 {
    if c < k {
        return 0.0;
    }
    (0..k).map(|i| (c - i) as f64 / (n - i) as f64).product()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::read_files;

    #[test]
    fn binomial_ratio() {
        assert_eq!(ratio(4, 4, 4), 1.0);
        assert_eq!(ratio(2, 4, 3), 0.0);
        assert!((ratio(3, 4, 2) - 0.5).abs() < 1e-15); // C(3,2)/C(4,2) = 3/6
    }

    #[test]
    fn pass_hat_of_a_small_corpus() {
        // Task a: 2 of 2 successes; task b: 1 of 2.
        let mut text = String::new();
        for (task, ok) in [("a", true), ("a", true), ("b", true), ("b", false)] {
            text.push_str(&format!(
                r#"{{"dataset":"d","task_id":"{task}","model":"m","method":"x","success":{ok},"steps":[]}}"#
            ));
            text.push('\n');
        }
        let corpus = read_files([("r.jsonl", text.as_bytes())]);
        assert_eq!(pass_hat_k(&corpus, 0, 1), Some(0.75));
        assert_eq!(pass_hat_k(&corpus, 0, 2), Some(0.5));
        assert_eq!(pass_hat_k(&corpus, 0, 3), None);
        assert_eq!(pass_hat_k(&corpus, 0, 0), None);
        assert_eq!(pass_hat_curve(&corpus, 0), vec![0.75, 0.5]);
        assert!(pass_hat_curve(&corpus, 9).is_empty());
    }
}
