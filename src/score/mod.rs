//! Scoring: the paper's per-condition metrics, and the per-task aggregates the bootstrap uses.
//!
//! For a condition (dataset × model × method) with rollouts `i = 1..N`, horizons `T_i ≥ 1`,
//! first-error depths `FED_i ∈ 1..=T_i+1` and successes `Y_i`:
//!
//! | metric | definition | paper |
//! |---|---|---|
//! | PEC(k) | `#{FED_i > k} / N` — fixed cohort, no censoring correction | eq. 3–4 |
//! | n_k | `#{T_i ≥ k}` | eq. 5 |
//! | PEC_elig(k) | `#{T_i ≥ k ∧ FED_i > k} / n_k`, undefined when `n_k = 0` | eq. 6 |
//! | TER | `#{FED_i = T_i + 1} / N` | eq. 8 |
//! | Mean FED | `Σ FED_i / N` | |
//! | RR | `#{Y_i ∧ FED_i ≤ T_i} / #{FED_i ≤ T_i}`; the denominator is RR-Eligible | eq. 9 |
//! | AUC-PEC | `Σ (FED_i − 1)/T_i / N` | eq. 10–11 |
//! | final success | `#{Y_i} / N` | |
//! | s | `#{Y_i ∧ FED_i = T_i + 1} / #{FED_i = T_i + 1}` (uninterrupted success) | eq. 12 |
//!
//! Every count is an exact integer. The one sum of fractions, AUC-PEC's, is taken in a canonical
//! order (tasks by id, then rollouts by (FED, T)), so the result does not depend on the order of
//! lines in the input.
//!
//! [`aggregate`] also builds, per dataset, a table of per-(task, condition) sums — the only thing
//! a bootstrap resample needs: a resample is a weighted sum of task rows, never a new walk over
//! rollouts.

use crate::rollout::{ConditionId, Corpus, TaskId};

/// Columns of [`DatasetBlock::cells`] (defined beside the resampling loop, which reads them):
/// rollouts, fully executable rollouts (`FED = T + 1`), successes, the sum of FED, the sum of
/// `(FED − 1)/T`, and from `COL_SURVIVORS` on `#{FED > k}` at `COL_SURVIVORS + k − 1`.
pub use prefix_exec_kernel::{COL_AUC, COL_FED, COL_FULL, COL_N, COL_SUCCESS, COL_SURVIVORS};

/// The metrics of one condition, as exact counts (and one canonical float sum).
#[derive(Clone, Debug, PartialEq)]
pub struct ConditionMetrics {
    pub condition: ConditionId,
    pub n: u64,
    /// Distinct tasks with at least one rollout.
    pub tasks: u64,
    /// Rollouts that crashed (an infrastructure or provider error; canonical `crash`).
    pub crashed: u64,
    /// `#{FED = T + 1}`.
    pub fully_executable: u64,
    pub successes: u64,
    /// `#{Y ∧ FED = T + 1}`.
    pub uninterrupted_successes: u64,
    /// `#{Y ∧ FED ≤ T}`.
    pub recovered: u64,
    pub fed_sum: u64,
    pub auc_sum: f64,
    /// `#{FED > k}` for `k = 1..=K` (index `k − 1`).
    pub survivors: Vec<u64>,
    /// `n_k = #{T ≥ k}` for `k = 1..=K`.
    pub eligible: Vec<u64>,
    /// `#{FED = k ≤ T}` for `k = 1..=K`: first failures at depth k.
    pub first_failures_at: Vec<u64>,
    /// First-failure label counts, in [`crate::rollout::Label::ALL`] order, then "unlabeled",
    /// then "environment" (faults that were not the agent's, apart from the five).
    pub labels: [u64; 7],
    /// Per cost field (tokens, latency_s, usd): sum (in ascending order of values) and count.
    pub cost: [(f64, u64); 3],
    /// Longest horizon in the condition.
    pub max_horizon: u32,
    /// (trials, successes) per task, in task-id order: repeated rollouts of a task are trials.
    pub task_trials: Vec<(u32, u32)>,
}

impl ConditionMetrics {
    fn ratio(num: u64, den: u64) -> Option<f64> {
        (den > 0).then(|| num as f64 / den as f64)
    }
    /// RR-Eligible: `#{FED ≤ T} = N − #{FED = T + 1}`.
    pub fn rr_eligible(&self) -> u64 {
        self.n - self.fully_executable
    }
    pub fn ter(&self) -> f64 {
        self.fully_executable as f64 / self.n as f64
    }
    pub fn mean_fed(&self) -> f64 {
        self.fed_sum as f64 / self.n as f64
    }
    pub fn auc_pec(&self) -> f64 {
        self.auc_sum / self.n as f64
    }
    pub fn final_success(&self) -> f64 {
        self.successes as f64 / self.n as f64
    }
    /// RR, eq. 9; `None` when RR-Eligible is 0.
    pub fn rr(&self) -> Option<f64> {
        Self::ratio(self.recovered, self.rr_eligible())
    }
    /// `s = P(Y | FED = T + 1)`; `None` when no rollout is fully executable.
    pub fn uninterrupted_success(&self) -> Option<f64> {
        Self::ratio(self.uninterrupted_successes, self.fully_executable)
    }
    /// Share of successes reached after a failed prefix, `(1 − q)·r / P(Y)`, computed as the
    /// count ratio `#{Y ∧ FED ≤ T} / #{Y}`; `None` without successes.
    pub fn success_after_failed_prefix(&self) -> Option<f64> {
        Self::ratio(self.recovered, self.successes)
    }
    /// PEC(k), eq. 4, for `k ≥ 1` (PEC(0) = 1 by definition).
    pub fn pec(&self, k: usize) -> f64 {
        self.survivors[k - 1] as f64 / self.n as f64
    }
    /// pass^k for `k = 1..=min(trials per task, MAX_PASS_HAT_K)`: the chance that `k` trials
    /// of a task drawn at random all succeed, `mean over tasks of C(c, k) / C(n, k)` with `c`
    /// successes in `n` trials (tau-bench's estimator). Empty unless every task has ≥ 2 trials.
    pub fn pass_hat(&self) -> Vec<f64> {
        let Some(trials) = self.task_trials.iter().map(|&(n, _)| n).min() else {
            return Vec::new();
        };
        if trials < 2 {
            return Vec::new();
        }
        (1..=trials.min(MAX_PASS_HAT_K))
            .map(|k| {
                let sum: f64 = self
                    .task_trials
                    .iter()
                    .map(|&(n, c)| {
                        if c < k {
                            return 0.0;
                        }
                        (0..k)
                            .map(|i| f64::from(c - i) / f64::from(n - i))
                            .product::<f64>()
                    })
                    .sum();
                sum / self.task_trials.len() as f64
            })
            .collect()
    }

    /// PEC_elig(k), eq. 6; `None` when `n_k = 0`.
    pub fn pec_elig(&self, k: usize) -> Option<f64> {
        // `FED > k` implies `T ≥ k` (FED ≤ T + 1), so eq. 6's numerator is `#{FED > k}`.
        Self::ratio(self.survivors[k - 1], self.eligible[k - 1])
    }
}

/// The largest k for which pass^k is reported.
pub const MAX_PASS_HAT_K: u32 = 32;

/// Per-(task, condition) sums for one dataset: the bootstrap's input.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetBlock {
    pub dataset: String,
    /// The dataset's tasks, sorted by id: the population a resample draws from.
    pub tasks: Vec<TaskId>,
    /// Positions in [`Aggregates::conditions`] of this dataset's conditions, in report order.
    pub conditions: Vec<usize>,
    /// Columns per cell: `COL_SURVIVORS + K`.
    pub width: usize,
    /// `cells[(t·C + c)·width + col]` for task `t`, condition `c` (local index), column `col`:
    /// one contiguous row per task, so a resample adds whole rows.
    pub cells: Vec<f64>,
}

impl DatasetBlock {
    /// The row of task `t`: all conditions' columns.
    pub fn row(&self, t: usize) -> &[f64] {
        let len = self.conditions.len() * self.width;
        &self.cells[t * len..(t + 1) * len]
    }
}

/// Everything scoring produces.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregates {
    /// Conditions sorted by (dataset, model, method) names, with their metrics.
    pub conditions: Vec<ConditionMetrics>,
    /// One block per dataset, in name order.
    pub blocks: Vec<DatasetBlock>,
    /// The PEC depths computed: `1..=k_max`.
    pub k_max: usize,
}

/// How far PEC is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxDepth {
    /// `k = 1..=K`.
    Fixed(u32),
    /// Every depth up to the longest rollout (capped at [`MAX_DEPTH_CAP`]).
    All,
}

/// The largest depth computed (PEC beyond it is not tabulated); a longer rollout still counts
/// fully in every metric.
pub const MAX_DEPTH_CAP: u32 = 1000;

impl MaxDepth {
    /// The number of depths for a corpus whose longest horizon is `longest`.
    pub fn resolve(self, longest: u32) -> usize {
        match self {
            MaxDepth::Fixed(k) => k.clamp(1, MAX_DEPTH_CAP) as usize,
            MaxDepth::All => longest.clamp(1, MAX_DEPTH_CAP) as usize,
        }
    }
}

/// Scores every condition of the corpus and builds the bootstrap blocks.
pub fn aggregate(corpus: &Corpus, max_depth: MaxDepth) -> Aggregates {
    aggregate_with(corpus, max_depth, 1)
}

/// The most memory one dataset's bootstrap may take: its per-(task, condition) sums plus its
/// resampled series ([`DatasetBlock::bootstrap_bytes`]). A dataset over it gets no bootstrap
/// intervals (the report says so) instead of exhausting the machine — or the 4 GiB of a
/// browser tab. The same limit natively and in the browser keeps their reports identical.
pub const MAX_BOOTSTRAP_BYTES: u64 = 1 << 30;

impl DatasetBlock {
    /// The bytes a bootstrap of this block with `resamples` resamples holds at once.
    pub fn bootstrap_bytes(&self, resamples: usize) -> u64 {
        let conds = self.conditions.len() as u64;
        let stats = (self.width - COL_SURVIVORS + 4) as u64;
        let cells = self.tasks.len() as u64 * conds * self.width as u64;
        (cells + conds * stats * resamples as u64) * 8
    }

    /// Whether a bootstrap with `resamples` resamples fits [`MAX_BOOTSTRAP_BYTES`].
    pub fn bootstrap_fits(&self, resamples: usize) -> bool {
        self.bootstrap_bytes(resamples) <= MAX_BOOTSTRAP_BYTES
    }
}

/// Adds one rollout to a per-(task, condition) cell of [`DatasetBlock::cells`] (`width` columns,
/// PEC depths `1..=width − COL_SURVIVORS`). Paired comparisons restricted to shared tasks build
/// their cells with this too, so both hold the same sums.
pub fn add_to_cell(cell: &mut [f64], r: &crate::rollout::Rollout) {
    let k_max = cell.len() - COL_SURVIVORS;
    cell[COL_N] += 1.0;
    cell[COL_FULL] += f64::from(u8::from(r.fully_executable()));
    cell[COL_SUCCESS] += f64::from(u8::from(r.success));
    cell[COL_FED] += f64::from(r.fed.0);
    cell[COL_AUC] += f64::from(r.fed.0 - 1) / f64::from(r.horizon);
    let survived = (r.fed.0 as usize - 1).min(k_max);
    for s in &mut cell[COL_SURVIVORS..COL_SURVIVORS + survived] {
        *s += 1.0;
    }
}

/// [`aggregate`], with the per-task sums the bootstrap needs built only for blocks whose
/// bootstrap with `resamples` resamples fits [`MAX_BOOTSTRAP_BYTES`] (none when `resamples`
/// is 0): they cost memory per task × condition.
pub fn aggregate_with(corpus: &Corpus, max_depth: MaxDepth, resamples: usize) -> Aggregates {
    let longest = corpus.rollouts.iter().map(|r| r.horizon).max().unwrap_or(1);
    let k_max = max_depth.resolve(longest);
    let width = COL_SURVIVORS + k_max;

    // Report order of conditions, and each condition's rank in it.
    let mut order: Vec<ConditionId> = (0..corpus.conditions.len() as ConditionId).collect();
    order.sort_by(|&a, &b| corpus.condition_names(a).cmp(&corpus.condition_names(b)));
    let mut cond_rank = vec![0usize; corpus.conditions.len()];
    for (rank, &c) in order.iter().enumerate() {
        cond_rank[c as usize] = rank;
    }

    // Tasks of each dataset in id order, and each task's rank within its dataset.
    let mut dataset_tasks: Vec<Vec<TaskId>> = vec![Vec::new(); corpus.datasets.len()];
    let mut seen = vec![false; corpus.tasks.len()];
    for r in &corpus.rollouts {
        if !std::mem::replace(&mut seen[r.task as usize], true) {
            let d = corpus.conditions[r.condition as usize].dataset;
            dataset_tasks[d as usize].push(r.task);
        }
    }
    let mut task_rank = vec![0usize; corpus.tasks.len()];
    for tasks in &mut dataset_tasks {
        tasks.sort_by(|&a, &b| corpus.task_name(a).cmp(corpus.task_name(b)));
        for (rank, &t) in tasks.iter().enumerate() {
            task_rank[t as usize] = rank;
        }
    }

    // Blocks: datasets in name order, each with its conditions in report order.
    let mut dataset_order: Vec<u32> = (0..corpus.datasets.len() as u32)
        .filter(|&d| !dataset_tasks[d as usize].is_empty())
        .collect();
    dataset_order.sort_by(|&a, &b| corpus.datasets.get(a).cmp(corpus.datasets.get(b)));
    let mut block_of_dataset = vec![usize::MAX; corpus.datasets.len()];
    let mut blocks: Vec<DatasetBlock> = dataset_order
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            block_of_dataset[d as usize] = i;
            DatasetBlock {
                dataset: corpus.datasets.get(d).to_string(),
                tasks: std::mem::take(&mut dataset_tasks[d as usize]),
                conditions: Vec::new(),
                width,
                cells: Vec::new(),
            }
        })
        .collect();
    let mut local_index = vec![0usize; order.len()];
    for (rank, &c) in order.iter().enumerate() {
        let d = corpus.conditions[c as usize].dataset;
        let block = &mut blocks[block_of_dataset[d as usize]];
        local_index[rank] = block.conditions.len();
        block.conditions.push(rank);
    }
    for block in &mut blocks {
        if resamples > 0 && block.bootstrap_fits(resamples) {
            block.cells = vec![0.0; block.tasks.len() * block.conditions.len() * width];
        }
    }

    // Walk rollouts in canonical order: condition, task, FED, T.
    let mut idx: Vec<u32> = (0..corpus.rollouts.len() as u32).collect();
    idx.sort_unstable_by_key(|&i| {
        let r = &corpus.rollouts[i as usize];
        (
            cond_rank[r.condition as usize],
            task_rank[r.task as usize],
            r.fed.0,
            r.horizon,
            r.success,
        )
    });

    let mut metrics: Vec<ConditionMetrics> = order
        .iter()
        .map(|&c| ConditionMetrics {
            condition: c,
            n: 0,
            tasks: 0,
            crashed: 0,
            fully_executable: 0,
            successes: 0,
            uninterrupted_successes: 0,
            recovered: 0,
            fed_sum: 0,
            auc_sum: 0.0,
            survivors: vec![0; k_max],
            eligible: vec![0; k_max],
            first_failures_at: vec![0; k_max],
            labels: [0; 7],
            cost: [(0.0, 0); 3],
            max_horizon: 0,
            task_trials: Vec::new(),
        })
        .collect();
    let mut costs: [Vec<f64>; 3] = Default::default();

    let mut start = 0;
    while start < idx.len() {
        let rank = cond_rank[corpus.rollouts[idx[start] as usize].condition as usize];
        let mut end = start;
        while end < idx.len()
            && cond_rank[corpus.rollouts[idx[end] as usize].condition as usize] == rank
        {
            end += 1;
        }
        let m = &mut metrics[rank];
        let d = corpus.conditions[order[rank] as usize].dataset;
        let block = &mut blocks[block_of_dataset[d as usize]];
        let c_local = local_index[rank];
        let n_conds = block.conditions.len();
        let mut fed_hist = vec![0u64; k_max + 2];
        let mut horizon_hist = vec![0u64; k_max + 2];
        for field in &mut costs {
            field.clear();
        }
        // AUC: per task, then over tasks, both in canonical order.
        let mut task_auc = 0.0;
        let mut current_task = usize::MAX;
        for &i in &idx[start..end] {
            let r = &corpus.rollouts[i as usize];
            let t = task_rank[r.task as usize];
            if t != current_task {
                if current_task != usize::MAX {
                    m.auc_sum += task_auc;
                }
                current_task = t;
                task_auc = 0.0;
                m.tasks += 1;
                m.task_trials.push((0, 0));
            }
            if let Some(last) = m.task_trials.last_mut() {
                last.0 = last.0.saturating_add(1);
                last.1 = last.1.saturating_add(u32::from(r.success));
            }
            let full = r.fully_executable();
            let auc = f64::from(r.fed.0 - 1) / f64::from(r.horizon);
            task_auc += auc;
            m.n += 1;
            m.crashed += u64::from(r.crashed);
            m.fully_executable += u64::from(full);
            m.successes += u64::from(r.success);
            m.uninterrupted_successes += u64::from(r.success && full);
            m.recovered += u64::from(r.success && !full);
            m.fed_sum += u64::from(r.fed.0);
            m.max_horizon = m.max_horizon.max(r.horizon);
            fed_hist[(r.fed.0 as usize).min(k_max + 1)] += 1;
            horizon_hist[(r.horizon as usize).min(k_max + 1)] += 1;
            if let Some(f) = &r.first_failure {
                let slot = match (f.label, f.environment) {
                    (Some(l), _) => l as usize,
                    (None, true) => 6,
                    (None, false) => 5,
                };
                m.labels[slot] += 1;
                if (r.fed.0 as usize) <= k_max {
                    m.first_failures_at[r.fed.0 as usize - 1] += 1;
                }
            }
            for (i, field) in costs.iter_mut().enumerate() {
                if let Some(v) = r.cost.get(i) {
                    field.push(v);
                }
            }
            let base = (t * n_conds + c_local) * width;
            if block.cells.is_empty() {
                continue;
            }
            add_to_cell(&mut block.cells[base..base + width], r);
        }
        m.auc_sum += task_auc;
        // #{FED > k} and #{T ≥ k} from the histograms (index k holds FED = k, resp. T = k;
        // the last slot holds everything deeper than K).
        let mut above_fed: u64 = fed_hist[k_max + 1];
        let mut at_least_t: u64 = horizon_hist[k_max + 1];
        for k in (1..=k_max).rev() {
            m.survivors[k - 1] = above_fed;
            above_fed += fed_hist[k];
            at_least_t += horizon_hist[k];
            m.eligible[k - 1] = at_least_t;
        }
        for (slot, field) in m.cost.iter_mut().zip(&mut costs) {
            field.sort_by(f64::total_cmp);
            *slot = (field.iter().sum(), field.len() as u64);
        }
        start = end;
    }

    Aggregates {
        conditions: metrics,
        blocks,
        k_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::read_files;

    fn metrics(rows: &[(&str, bool)]) -> ConditionMetrics {
        let text: String = rows
            .iter()
            .map(|(task, ok)| {
                format!(
                    r#"{{"dataset":"d","task_id":"{task}","model":"m","method":"x","success":{ok},"steps":[]}}"#
                ) + "\n"
            })
            .collect();
        aggregate(
            &read_files([("r.jsonl", text.as_bytes())]),
            MaxDepth::Fixed(3),
        )
        .conditions
        .remove(0)
    }

    #[test]
    fn pass_hat_over_repeated_trials() {
        // Task a: 2 of 2 successes; task b: 1 of 2. pass^1 = (1 + 1/2)/2, pass^2 = (1 + 0)/2;
        // k stops at the fewest trials of any task.
        let m = metrics(&[("a", true), ("a", true), ("b", true), ("b", false)]);
        assert_eq!(m.pass_hat(), vec![0.75, 0.5]);
        // C(2,2)/C(3,2) = 1/3 for task a with 2 of 3; k = 3 would need 3 trials of b too.
        let m = metrics(&[
            ("a", true),
            ("a", true),
            ("a", false),
            ("b", true),
            ("b", true),
        ]);
        assert_eq!(
            m.pass_hat(),
            vec![(2.0 / 3.0 + 1.0) / 2.0, (1.0 / 3.0 + 1.0) / 2.0]
        );
        // One trial per task: no pass^k.
        assert!(metrics(&[("a", true), ("b", false)]).pass_hat().is_empty());
    }
}
