//! The report's `ranks` and `rank_divergence` (`../shared/spec/ranks.md`): for every dataset of
//! at least two conditions, its conditions ranked by final success, TER and AUC-PEC with
//! simultaneous rank intervals, and where final success and each prefix metric disagree.
//!
//! The method is [`crate::stats::ranks`]'s; this module hands it the report's point estimates
//! and the dataset's resampled series — the bootstrap's own chunks, read in place as the
//! intervals read them, so the ranks use the same draws as every other interval of the dataset
//! and no second bootstrap is run — and writes the entries.

use super::{
    ConditionPair, ConditionReport, DiscordantPair, Estimate, RankDivergence, RankTable,
    RankedCondition,
};
use crate::parallel;
use crate::score::DatasetBlock;
use crate::stats::bootstrap::{BlockSamples, STAT_AUC, STAT_SUCCESS, STAT_TER};
use crate::stats::ranks::{
    discordant_pairs, kendall_tau_b, point_ranks, simultaneous_intervals, tau_b_interval, Intervals,
};

/// Datasets of more conditions get no ranks (a note says so): the pairs grow as K², and so do
/// the work per resample and the `above` lists (64 conditions are 2,016 pairs).
pub const MAX_RANKED: usize = 64;

/// A metric conditions are ranked by (higher is better for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankMetric {
    FinalSuccess,
    Ter,
    AucPec,
}

impl RankMetric {
    /// In the order of the report's entries.
    pub const ALL: [RankMetric; 3] = [
        RankMetric::FinalSuccess,
        RankMetric::Ter,
        RankMetric::AucPec,
    ];

    /// The name in the report (`ranks[].metric`, `rank_divergence[].a`/`b`) and in CSV headers.
    pub fn key(self) -> &'static str {
        match self {
            RankMetric::FinalSuccess => "final_success",
            RankMetric::Ter => "ter",
            RankMetric::AucPec => "auc_pec",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            RankMetric::FinalSuccess => "Final success",
            RankMetric::Ter => "TER",
            RankMetric::AucPec => "AUC-PEC",
        }
    }

    pub fn from_key(key: &str) -> Option<RankMetric> {
        RankMetric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// The condition's point estimate.
    pub fn value(self, c: &ConditionReport) -> Option<f64> {
        match self {
            RankMetric::FinalSuccess => c.final_success.value,
            RankMetric::Ter => c.ter.value,
            RankMetric::AucPec => c.auc_pec.value,
        }
    }

    /// The statistic's slot in the resampled series.
    fn stat(self) -> usize {
        match self {
            RankMetric::FinalSuccess => STAT_SUCCESS,
            RankMetric::Ter => STAT_TER,
            RankMetric::AucPec => STAT_AUC,
        }
    }
}

/// The ranks and rank divergences of every dataset, in dataset order, as the report holds
/// them; a note for each dataset left out for its size. `blocks`: the datasets' blocks
/// ([`crate::score::Aggregates::blocks`]); `conditions`: the report's; `samples[b]`: block `b`'s
/// resampled series, when it was bootstrapped (the report's own draws: the bootstrap's chunks,
/// not a copy).
pub fn rank_datasets(
    blocks: &[DatasetBlock],
    conditions: &[ConditionReport],
    samples: &[Option<BlockSamples>],
    level: f64,
    notes: &mut Vec<String>,
) -> (Vec<RankTable>, Vec<RankDivergence>) {
    let mut ranked = Vec::new();
    for (b, block) in blocks.iter().enumerate() {
        match block.conditions.len() {
            0 | 1 => {}
            k if k > MAX_RANKED => notes.push(format!(
                "dataset {}: no ranks — {k} conditions (ranks are computed for at most \
                 {MAX_RANKED})",
                block.dataset
            )),
            _ => ranked.push(b),
        }
    }
    let (mut ranks, mut divergence) = (Vec::new(), Vec::new());
    for (tables, divergences) in parallel::map(&ranked, |&b| {
        rank_dataset(&blocks[b], conditions, samples[b].as_ref(), level)
    }) {
        ranks.extend(tables);
        divergence.extend(divergences);
    }
    (ranks, divergence)
}

/// One metric over one dataset: point estimates, resampled series, and what was computed.
struct Ranked {
    metric: RankMetric,
    values: Vec<f64>,
    /// `resampled[i]`: condition `i`'s series (empty without the bootstrap).
    resampled: Vec<Vec<f64>>,
    ranks: Vec<usize>,
    intervals: Option<Intervals>,
}

fn rank_dataset(
    block: &DatasetBlock,
    conditions: &[ConditionReport],
    samples: Option<&BlockSamples>,
    level: f64,
) -> (Vec<RankTable>, Vec<RankDivergence>) {
    let members: Vec<&ConditionReport> = block.conditions.iter().map(|&r| &conditions[r]).collect();
    let k = members.len();
    let name =
        |i: usize| -> ConditionPair { [members[i].model.clone(), members[i].method.clone()] };
    // The three metrics, and below the two divergences, in parallel where the platform allows.
    let ranked: Vec<Ranked> = parallel::map(&RankMetric::ALL, |&metric| {
        let mut values = Vec::with_capacity(k);
        let mut resampled = Vec::new();
        for (i, c) in members.iter().enumerate() {
            // A point estimate is always defined (a condition has rollouts); −∞ would keep an
            // undefined one last without breaking the order.
            values.push(metric.value(c).unwrap_or(f64::NEG_INFINITY));
            // The block's own conditions are its first columns (a widened block only adds).
            if let Some(s) = samples {
                resampled.push(s.series(i, metric.stat()).collect());
            }
        }
        let intervals = samples.map(|_| simultaneous_intervals(&values, &resampled, level));
        Ranked {
            metric,
            ranks: point_ranks(&values),
            values,
            resampled,
            intervals,
        }
    });
    let mut tables = Vec::with_capacity(ranked.len());
    for r in &ranked {
        let x = r.intervals.as_ref();
        let mut ranks = Vec::with_capacity(k);
        let mut above = Vec::new();
        for (i, c) in members.iter().enumerate() {
            ranks.push(RankedCondition {
                model: c.model.clone(),
                method: c.method.clone(),
                value: r.metric.value(c),
                rank: r.ranks[i],
                rank_lo: x.map(|x| x.rank_lo[i]),
                rank_hi: x.map(|x| x.rank_hi[i]),
            });
            for j in 0..k {
                if x.is_some_and(|x| x.above(i, j)) {
                    above.push([name(i), name(j)]);
                }
            }
        }
        tables.push(RankTable {
            dataset: block.dataset.clone(),
            metric: r.metric.key().to_string(),
            level,
            critical_value: x.and_then(|x| x.critical_value),
            conditions: ranks,
            above,
        });
    }
    let success = &ranked[0];
    let mut divergences = Vec::with_capacity(ranked.len() - 1);
    let taus: Vec<(Option<f64>, Option<[f64; 2]>)> = parallel::map(&ranked[1..], |prefix| {
        let value = kendall_tau_b(&success.values, &prefix.values);
        let ci = match (value, samples) {
            (Some(_), Some(_)) => tau_b_interval(&success.resampled, &prefix.resampled, level),
            _ => None,
        };
        (value, ci)
    });
    for (prefix, &(value, ci)) in ranked[1..].iter().zip(&taus) {
        let on_ter = prefix.metric == RankMetric::Ter;
        let mut discordant = Vec::new();
        for (i, j) in discordant_pairs(&success.values, &prefix.values) {
            let significant = match (&success.intervals, &prefix.intervals) {
                (Some(s), Some(p)) => s.above(i, j) && p.above(j, i),
                _ => false,
            };
            let (ahead_on_ter, ahead_on_auc_pec) = if on_ter {
                (Some(name(j)), None)
            } else {
                (None, Some(name(j)))
            };
            discordant.push(DiscordantPair {
                ahead_on_success: name(i),
                ahead_on_ter,
                ahead_on_auc_pec,
                significant,
            });
        }
        divergences.push(RankDivergence {
            dataset: block.dataset.clone(),
            a: success.metric.key().to_string(),
            b: prefix.metric.key().to_string(),
            kendall_tau_b: Estimate { value, ci },
            discordant,
        });
    }
    (tables, divergences)
}
