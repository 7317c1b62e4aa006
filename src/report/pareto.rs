//! The report's `pareto` entries: per dataset, per cost field the rollouts carry (`tokens`,
//! `latency_s`, `usd`) and per metric (`final_success`, `ter`), which conditions are on the
//! cost frontier — the view HAL's leaderboard is built around, here with executability beside
//! success.
//!
//! A condition's point is its mean cost per rollout (the report's `cost`, over the rollouts
//! that report the field) against the metric's point estimate. A condition without that cost
//! (no rollout of it reports the field) has no point: it is left out of the entry, and neither
//! on the frontier nor dominating anyone. A condition is **on the frontier** when no other
//! condition of the dataset has cost ≤ and metric ≥ with at least one of the two strict (lower
//! cost is better, a higher metric is better). Two conditions at the very same point are both on
//! it when nothing beats them; a dataset's single condition with a cost is on it.
//!
//! ```
//! use prefix_exec::report::pareto::frontier;
//! // (cost, metric): the second is beaten by the first (cheaper, better); the third costs more
//! // but is better: on the frontier.
//! assert_eq!(frontier(&[(1.0, 0.5), (2.0, 0.4), (3.0, 0.9)]), vec![true, false, true]);
//! ```

use super::ranks::RankMetric;
use super::{ConditionReport, CostOut, ParetoEntry, ParetoPoint};

/// A cost field of the report (`CostOut`): the key in `cost` and in `pareto[].cost`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostField {
    Tokens,
    LatencyS,
    Usd,
}

impl CostField {
    pub const ALL: [CostField; 3] = [CostField::Tokens, CostField::LatencyS, CostField::Usd];

    pub fn key(self) -> &'static str {
        match self {
            CostField::Tokens => "tokens",
            CostField::LatencyS => "latency_s",
            CostField::Usd => "usd",
        }
    }

    /// The axis title.
    pub fn title(self) -> &'static str {
        match self {
            CostField::Tokens => "Mean tokens per rollout",
            CostField::LatencyS => "Mean latency per rollout (s)",
            CostField::Usd => "Mean USD per rollout",
        }
    }

    pub fn from_key(key: &str) -> Option<CostField> {
        CostField::ALL.into_iter().find(|f| f.key() == key)
    }

    /// The field as the report holds it: `None` when no rollout of the report has it,
    /// `Some(None)` when none of this condition's do.
    pub fn get(self, cost: &CostOut) -> Option<Option<f64>> {
        match self {
            CostField::Tokens => cost.tokens,
            CostField::LatencyS => cost.latency_s,
            CostField::Usd => cost.usd,
        }
    }
}

/// The metrics a frontier is drawn against, in the report's order.
pub const FRONTIER_METRICS: [RankMetric; 2] = [RankMetric::FinalSuccess, RankMetric::Ter];

/// Which of `points` (cost, metric) are on the frontier: no other point has cost ≤ and metric ≥
/// with one strict. O(K log K): by cost, a point is beaten by a cheaper one that is at least
/// as good, or by one of the same cost that is better. The points are finite.
pub fn frontier(points: &[(f64, f64)]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0));
    let mut on = vec![false; points.len()];
    // The best metric among the points strictly cheaper than the current group.
    let mut best_cheaper = f64::NEG_INFINITY;
    let mut start = 0;
    while start < order.len() {
        let cost = points[order[start]].0;
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| points[i].0 == cost)
                .count();
        let group = &order[start..end];
        let best = group
            .iter()
            .map(|&i| points[i].1)
            .fold(f64::NEG_INFINITY, f64::max);
        for &i in group {
            on[i] = points[i].1 == best && points[i].1 > best_cheaper;
        }
        best_cheaper = best_cheaper.max(best);
        start = end;
    }
    on
}

/// Every dataset's entries, in dataset order, then cost field, then metric: one for each cost
/// field the report has and each metric of [`FRONTIER_METRICS`], when at least one condition of
/// the dataset has a point. `conditions`: the report's, sorted by dataset.
pub fn pareto_entries(conditions: &[ConditionReport]) -> Vec<ParetoEntry> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < conditions.len() {
        let dataset = &conditions[start].dataset;
        let end = start
            + conditions[start..]
                .iter()
                .take_while(|c| &c.dataset == dataset)
                .count();
        let members = &conditions[start..end];
        for field in CostField::ALL {
            if field.get(&members[0].cost).is_none() {
                // No rollout of the report has this field.
                continue;
            }
            for metric in FRONTIER_METRICS {
                let with_point: Vec<(&ConditionReport, (f64, f64))> = members
                    .iter()
                    .filter_map(|c| Some((c, (field.get(&c.cost)??, metric.value(c)?))))
                    .collect();
                if with_point.is_empty() {
                    continue;
                }
                let points: Vec<(f64, f64)> = with_point.iter().map(|p| p.1).collect();
                let on = frontier(&points);
                out.push(ParetoEntry {
                    dataset: dataset.clone(),
                    cost: field.key().to_string(),
                    metric: metric.key().to_string(),
                    conditions: with_point
                        .iter()
                        .zip(on)
                        .map(|((c, (cost, value)), pareto)| ParetoPoint {
                            model: c.model.clone(),
                            method: c.method.clone(),
                            cost: *cost,
                            value: *value,
                            pareto,
                        })
                        .collect(),
                });
            }
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::frontier;

    fn check(points: &[(f64, f64)], want: &[bool]) {
        assert_eq!(frontier(points), want, "{points:?}");
    }

    #[test]
    fn hand_computed_frontiers() {
        // No point, one point.
        check(&[], &[]);
        check(&[(5.0, 0.1)], &[true]);
        // A chain: each dearer one is better: all on it.
        check(&[(1.0, 0.1), (2.0, 0.2), (3.0, 0.3)], &[true, true, true]);
        // Dearer and worse: beaten; input order does not matter.
        check(&[(3.0, 0.3), (1.0, 0.5), (2.0, 0.4)], &[false, true, false]);
        // Same cost, one better: the better alone.
        check(&[(2.0, 0.4), (2.0, 0.6)], &[false, true]);
        // Same metric, one cheaper: the cheaper alone.
        check(&[(2.0, 0.6), (1.0, 0.6)], &[false, true]);
        // The very same point twice: neither beats the other (no strict side).
        check(&[(2.0, 0.6), (2.0, 0.6)], &[true, true]);
        // ... unless a third beats both.
        check(&[(2.0, 0.6), (2.0, 0.6), (1.0, 0.7)], &[false, false, true]);
        // Ties in cost inside a chain: the group's best only, and only if better than cheaper.
        check(
            &[(1.0, 0.5), (2.0, 0.5), (2.0, 0.7), (2.0, 0.3), (4.0, 0.9)],
            &[true, false, true, false, true],
        );
        // Zero cost and a metric of zero.
        check(&[(0.0, 0.0), (0.0, 0.2), (1.0, 0.0)], &[false, true, false]);
    }

    /// The sweep agrees with the definition checked pair by pair.
    #[test]
    fn sweep_equals_the_definition() {
        let mut x = 12345u64;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % m) as f64
        };
        for _ in 0..500 {
            let k = 1 + next(9) as usize;
            let points: Vec<(f64, f64)> = (0..k).map(|_| (next(4), next(4) / 4.0)).collect();
            let want: Vec<bool> = (0..k)
                .map(|i| {
                    !(0..k).any(|j| {
                        let (ci, mi) = points[i];
                        let (cj, mj) = points[j];
                        j != i && cj <= ci && mj >= mi && (cj < ci || mj > mi)
                    })
                })
                .collect();
            check(&points, &want);
        }
    }
}
