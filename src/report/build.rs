//! Building a [`Report`] from a [`Corpus`].

use std::collections::BTreeMap;

use super::checks::check_identities;
use super::{
    ConditionReport, CostOut, Delta, DiagnosticOut, Estimate, InputOut, LabelCounts, PairedReport,
    PecDelta, PecPoint, Report, Settings, SettingsOut, SCHEMA,
};
use crate::formats::ImportSummary;
use crate::rollout::{ConditionId, Corpus};
use crate::score::{aggregate_with, Aggregates, ConditionMetrics, MaxDepth, MAX_BOOTSTRAP_BYTES};
use crate::stats::bootstrap::{
    bootstrap_block, BlockSamples, STAT_AUC, STAT_MEAN_FED, STAT_PEC, STAT_SUCCESS, STAT_TER,
};
use crate::stats::normal::two_sided_z;
use crate::stats::percentile::central_interval;
use crate::stats::wilson::wilson;

/// Bootstrap progress: resamples done over all datasets, out of `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
}

/// Builds the report; see the module documentation of [`crate::report`].
///
/// Settings are expected to be valid ([`Settings::validate`]); an out-of-range level is clamped
/// into (0, 1) rather than trusted.
pub fn build_report(corpus: &Corpus, settings: &Settings) -> Report {
    build_report_with_progress(corpus, settings, &mut |_| {})
}

/// [`build_report`], calling `progress` as the bootstrap advances.
pub fn build_report_with_progress(
    corpus: &Corpus,
    settings: &Settings,
    progress: &mut dyn FnMut(Progress),
) -> Report {
    build_report_full(corpus, None, settings, progress)
}

/// [`build_report_with_progress`], adding what the importers found (first-failure sources when
/// tool schemas were checked).
pub fn build_report_full(
    corpus: &Corpus,
    imports: Option<&ImportSummary>,
    settings: &Settings,
    progress: &mut dyn FnMut(Progress),
) -> Report {
    let level = if settings.level > 0.0 && settings.level < 1.0 {
        settings.level
    } else {
        0.95
    };
    let resamples = settings.bootstrap as usize;
    let agg = aggregate_with(corpus, settings.max_depth, resamples);

    // One bootstrap per dataset block, each on the dataset's own stream.
    let runs = agg
        .blocks
        .iter()
        .filter(|b| b.bootstrap_fits(resamples))
        .count();
    let total = (resamples * runs) as u64;
    let mut before = 0u64;
    let mut samples: Vec<Option<BlockSamples>> = Vec::with_capacity(agg.blocks.len());
    let mut notes = Vec::new();
    for block in &agg.blocks {
        if resamples == 0 {
            samples.push(None);
            continue;
        }
        if !block.bootstrap_fits(resamples) {
            notes.push(format!(
                "dataset {}: no bootstrap intervals — {} conditions × {} tasks × {} resamples \
                 would need {} MiB (the limit is {} MiB); use fewer resamples, or score fewer \
                 conditions at a time",
                block.dataset,
                block.conditions.len(),
                block.tasks.len(),
                resamples,
                block.bootstrap_bytes(resamples) >> 20,
                MAX_BOOTSTRAP_BYTES >> 20,
            ));
            samples.push(None);
            continue;
        }
        let s = bootstrap_block(block, resamples, settings.seed, &mut |done| {
            progress(Progress {
                done: before + done as u64,
                total,
            })
        });
        before += resamples as u64;
        samples.push(Some(s));
    }
    // Where each condition's series live: (block, local index).
    let mut location = vec![(0usize, 0usize); agg.conditions.len()];
    for (b, block) in agg.blocks.iter().enumerate() {
        for (local, &rank) in block.conditions.iter().enumerate() {
            location[rank] = (b, local);
        }
    }
    let series = |rank: usize, stat: usize| -> Option<&[f64]> {
        let (b, local) = location[rank];
        samples[b].as_ref().map(|s| s.series(local, stat))
    };
    let interval = |rank: usize, stat: usize| -> Option<[f64; 2]> {
        let mut v = series(rank, stat)?.to_vec();
        central_interval(&mut v, level)
    };

    let z = two_sided_z(level);
    let cost_present: [bool; 3] =
        std::array::from_fn(|f| agg.conditions.iter().any(|m| m.cost[f].1 > 0));
    let sources = imports.map(|s| s.source_counts(corpus)).unwrap_or_default();
    // Sources are reported only when a schema check ever ran into a failure: otherwise every
    // first failure is the environment's and the split says nothing.
    let any_schema = sources.iter().any(|s| s.schema_check > 0);
    let label_sources = corpus.label_rules.then(|| label_sources(corpus));
    let conditions: Vec<ConditionReport> = agg
        .conditions
        .iter()
        .enumerate()
        .map(|(rank, m)| {
            let mut c = condition_report(corpus, &agg, m, rank, z, &interval, cost_present);
            c.pass_hat = m.pass_hat();
            c.first_failure_sources = sources
                .iter()
                .find(|s| s.condition == m.condition)
                .filter(|_| any_schema)
                .map(|s| super::FailureSources {
                    schema_check: s.schema_check,
                    environment: s.environment,
                });
            c.first_failure_label_sources = label_sources
                .as_ref()
                .map(|by_condition| by_condition.get(&m.condition).cloned().unwrap_or_default());
            c
        })
        .collect();

    let paired = paired_comparisons(&agg, &conditions, settings, level, &series, &mut notes);
    let identity_violations = check_identities(&conditions);

    Report {
        schema: SCHEMA.to_string(),
        notes,
        settings: SettingsOut {
            bootstrap: settings.bootstrap,
            seed: settings.seed,
            level,
            max_depth: match settings.max_depth {
                MaxDepth::Fixed(k) => serde_json::Value::from(k),
                MaxDepth::All => serde_json::Value::from("all"),
            },
            k_max: agg.k_max,
            pairs: settings
                .pairs
                .iter()
                .map(|(a, b)| [a.clone(), b.clone()])
                .collect(),
            success_rules: corpus
                .success_rules
                .iter()
                .flat_map(|(dataset, rules)| {
                    rules.iter().map(move |rule| crate::report::SuccessRule {
                        dataset: dataset.clone(),
                        rule: rule.clone(),
                    })
                })
                .collect(),
        },
        conditions,
        paired,
        diagnostics: corpus
            .diagnostics
            .iter()
            .map(|d| DiagnosticOut {
                file: d.file.clone(),
                line: d.line,
                message: d.message.clone(),
            })
            .collect(),
        diagnostics_total: corpus.diagnostics_total,
        identity_violations,
        inputs: corpus
            .files
            .iter()
            .map(|f| InputOut {
                file: f.name.clone(),
                bytes: f.bytes,
                lines: f.lines,
                rollouts: f.rollouts,
                errors: f.errors,
                repeats: f.repeats.map(|j| corpus.files[j as usize].name.clone()),
            })
            .collect(),
    }
}

fn condition_report(
    corpus: &Corpus,
    agg: &Aggregates,
    m: &ConditionMetrics,
    rank: usize,
    z: f64,
    interval: &dyn Fn(usize, usize) -> Option<[f64; 2]>,
    cost_present: [bool; 3],
) -> ConditionReport {
    let (dataset, model, method) = corpus.condition_names(m.condition);
    let estimate = |value: f64, stat: usize| Estimate {
        value: Some(value),
        ci: interval(rank, stat),
    };
    let pec = (1..=agg.k_max)
        .map(|k| PecPoint {
            k,
            value: m.pec(k),
            ci: interval(rank, STAT_PEC + k - 1),
            n_k: m.eligible[k - 1],
            elig: m.pec_elig(k),
            survivors: m.survivors[k - 1],
            first_failures: m.first_failures_at[k - 1],
            ended_before: m.n - m.eligible[k - 1],
        })
        .collect();
    let nonzero = |c: u64| (c > 0).then_some(c);
    let mean_cost = |f: usize| {
        let (sum, count) = m.cost[f];
        cost_present[f].then(|| (count > 0).then(|| sum / count as f64))
    };
    ConditionReport {
        dataset: dataset.to_string(),
        model: model.to_string(),
        method: method.to_string(),
        n: m.n,
        tasks: m.tasks,
        ter: estimate(m.ter(), STAT_TER),
        mean_fed: estimate(m.mean_fed(), STAT_MEAN_FED),
        auc_pec: estimate(m.auc_pec(), STAT_AUC),
        final_success: estimate(m.final_success(), STAT_SUCCESS),
        rr_eligible: m.rr_eligible(),
        rr: Estimate {
            value: m.rr(),
            ci: wilson(m.recovered, m.rr_eligible(), z),
        },
        uninterrupted_success: m.uninterrupted_success(),
        success_after_failed_prefix: m.success_after_failed_prefix(),
        fully_executable: m.fully_executable,
        successes: m.successes,
        recovered: m.recovered,
        max_horizon: m.max_horizon,
        pec,
        first_failure_labels: LabelCounts {
            schema: nonzero(m.labels[0]),
            dependency: nonzero(m.labels[1]),
            precondition: nonzero(m.labels[2]),
            state: nonzero(m.labels[3]),
            information: nonzero(m.labels[4]),
            environment: nonzero(m.labels[6]),
            unlabeled: nonzero(m.labels[5]),
        },
        cost: CostOut {
            tokens: mean_cost(0),
            latency_s: mean_cost(1),
            usd: mean_cost(2),
        },
        pass_hat: Vec::new(),
        first_failure_sources: None,
        first_failure_label_sources: None,
    }
}

/// First failures by label provenance (`given`, `schema check`, `rule:<id>`, `none`), per
/// condition.
fn label_sources(corpus: &Corpus) -> BTreeMap<ConditionId, BTreeMap<String, u64>> {
    let mut out: BTreeMap<ConditionId, BTreeMap<String, u64>> = BTreeMap::new();
    for r in &corpus.rollouts {
        let Some(f) = &r.first_failure else { continue };
        let name = f.label_source.map_or("none", |t| corpus.texts.get(t));
        *out.entry(r.condition)
            .or_default()
            .entry(name.to_string())
            .or_default() += 1;
    }
    out
}

/// Groups larger than this get no automatic paired comparisons (every unordered pair of 20,000
/// models is 2·10⁸ comparisons); pairs named in the settings are always made.
pub const MAX_AUTO_GROUP: usize = 32;

/// More automatic paired comparisons than this are not made at all; the report says so.
pub const MAX_AUTO_PAIRS: usize = 2000;

/// Paired differences on shared resamples: methods within (dataset, model), then models within
/// (dataset, method). Without pairs in the settings, every unordered pair of each group up to
/// [`MAX_AUTO_GROUP`] members, and none past [`MAX_AUTO_PAIRS`] in all.
fn paired_comparisons<'a>(
    agg: &Aggregates,
    conditions: &[ConditionReport],
    settings: &Settings,
    level: f64,
    series: &dyn Fn(usize, usize) -> Option<&'a [f64]>,
    notes: &mut Vec<String>,
) -> Vec<PairedReport> {
    let mut chosen: Vec<(usize, usize, &str)> = Vec::new();
    let mut oversized: Vec<String> = Vec::new();
    for block in &agg.blocks {
        for compare in ["methods", "models"] {
            let methods = compare == "methods";
            // Groups share the model (comparing methods) or the method (comparing models); each
            // lists its ranks in report order.
            let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for &rank in &block.conditions {
                let c = &conditions[rank];
                let key = if methods { &c.model } else { &c.method };
                groups.entry(key.as_str()).or_default().push(rank);
            }
            let name = |rank: usize| -> &str {
                let c = &conditions[rank];
                if methods {
                    &c.method
                } else {
                    &c.model
                }
            };
            let mut found: Vec<(usize, usize)> = Vec::new();
            for (key, ranks) in &groups {
                if settings.pairs.is_empty() {
                    if ranks.len() > MAX_AUTO_GROUP {
                        oversized.push(format!(
                            "{} {compare} under {} {key} ({})",
                            ranks.len(),
                            if methods { "model" } else { "method" },
                            block.dataset
                        ));
                        continue;
                    }
                    for (i, &ra) in ranks.iter().enumerate() {
                        for &rb in &ranks[i + 1..] {
                            found.push((ra, rb));
                        }
                    }
                } else {
                    let by_name: BTreeMap<&str, usize> =
                        ranks.iter().map(|&r| (name(r), r)).collect();
                    for (x, y) in &settings.pairs {
                        if let (Some(&ra), Some(&rb)) =
                            (by_name.get(x.as_str()), by_name.get(y.as_str()))
                        {
                            if ra != rb {
                                found.push((ra, rb));
                            }
                        }
                    }
                }
            }
            // Report order: by the earlier condition, then the later one.
            found.sort_by_key(|&(a, b)| (a.min(b), a.max(b)));
            found.dedup_by_key(|p| (p.0.min(p.1), p.0.max(p.1)));
            chosen.extend(found.into_iter().map(|(a, b)| (a, b, compare)));
        }
    }
    if !oversized.is_empty() {
        notes.push(format!(
            "no automatic paired comparisons for groups over {MAX_AUTO_GROUP} members: {}; name \
             the pairs to compare",
            oversized.join("; ")
        ));
    }
    if settings.pairs.is_empty() && chosen.len() > MAX_AUTO_PAIRS {
        notes.push(format!(
            "{} paired comparisons would be made (the automatic limit is {MAX_AUTO_PAIRS}); none \
             were: name the pairs to compare",
            chosen.len()
        ));
        return Vec::new();
    }
    chosen
        .into_iter()
        .map(|(x, y, compare)| paired(conditions, x, y, level, series, compare))
        .collect()
}

fn paired<'a>(
    conditions: &[ConditionReport],
    ra: usize,
    rb: usize,
    level: f64,
    series: &dyn Fn(usize, usize) -> Option<&'a [f64]>,
    compare: &str,
) -> PairedReport {
    let (a, b) = (&conditions[ra], &conditions[rb]);
    let delta = |pa: Option<f64>, pb: Option<f64>, stat: usize| -> Delta {
        let ci = match (series(ra, stat), series(rb, stat)) {
            (Some(sa), Some(sb)) => {
                let mut d: Vec<f64> = sa.iter().zip(sb).map(|(x, y)| x - y).collect();
                central_interval(&mut d, level)
            }
            _ => None,
        };
        Delta {
            delta: pa.zip(pb).map(|(x, y)| x - y),
            ci,
        }
    };
    let methods = compare == "methods";
    PairedReport {
        dataset: a.dataset.clone(),
        model: methods.then(|| a.model.clone()),
        method: (!methods).then(|| a.method.clone()),
        compare: compare.to_string(),
        a: if methods { &a.method } else { &a.model }.clone(),
        b: if methods { &b.method } else { &b.model }.clone(),
        ter: delta(a.ter.value, b.ter.value, STAT_TER),
        auc_pec: delta(a.auc_pec.value, b.auc_pec.value, STAT_AUC),
        mean_fed: delta(a.mean_fed.value, b.mean_fed.value, STAT_MEAN_FED),
        final_success: delta(a.final_success.value, b.final_success.value, STAT_SUCCESS),
        pec: a
            .pec
            .iter()
            .zip(&b.pec)
            .enumerate()
            .map(|(i, (pa, pb))| {
                let d = delta(Some(pa.value), Some(pb.value), STAT_PEC + i);
                PecDelta {
                    k: pa.k,
                    delta: d.delta,
                    ci: d.ci,
                }
            })
            .collect(),
    }
}
