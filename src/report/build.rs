//! Building a [`Report`] from a [`Corpus`].

use std::collections::BTreeMap;

use super::checks::check_identities;
use super::{
    ConditionRef, ConditionReport, CostOut, Delta, DiagnosticOut, Estimate, InputOut, LabelCounts,
    PairSide, PairedReport, PecDelta, PecPoint, ProblemOut, Report, Settings, SettingsOut, SCHEMA,
};
use crate::formats::ImportSummary;
use crate::parallel;
use crate::rollout::{ConditionId, Corpus};
use crate::score::{
    add_to_cell, aggregate_with, Aggregates, ConditionMetrics, DatasetBlock, MaxDepth, COL_AUC,
    COL_FED, COL_FULL, COL_N, COL_SUCCESS, COL_SURVIVORS, MAX_BOOTSTRAP_BYTES,
};
use crate::stats::bootstrap::{
    block_stats, chunk_count, chunk_range, BlockSamples, ResampleTable, Series, STAT_AUC,
    STAT_MEAN_FED, STAT_PEC, STAT_SUCCESS, STAT_TER,
};
use crate::stats::normal::two_sided_z;
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
    if let Some(filter) = settings.filter.as_ref().filter(|f| f.is_active()) {
        let filtered = filter.apply(corpus, imports);
        let plan = ReportPlan::new(&filtered.corpus, settings);
        let values = plan.run_bootstrap(progress);
        return plan.finish(&filtered.corpus, filtered.summary.as_ref(), values);
    }
    let plan = ReportPlan::new(corpus, settings);
    let values = plan.run_bootstrap(progress);
    plan.finish(corpus, imports, values)
}

/// One unit of bootstrap work: chunk `chunk` of the bootstrap of block `block`
/// ([`ReportPlan::resampled`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BootstrapJob {
    pub block: usize,
    pub chunk: usize,
}

/// A report in the making: scored, its paired comparisons chosen, with its bootstrap laid out as
/// [`BootstrapJob`]s that any number of threads (or Web Workers) can run in any order;
/// [`ReportPlan::finish`] takes their results in job order.
pub struct ReportPlan<'s> {
    pub agg: Aggregates,
    settings: &'s Settings,
    level: f64,
    resamples: usize,
    selection: Selection,
    cross: Vec<CrossPair>,
    /// Per block, its copy widened by the shared-task columns of cross-condition pairs, when
    /// that copy is what the bootstrap resamples (it fits the memory limit).
    widened: Vec<Option<DatasetBlock>>,
    notes: Vec<String>,
    pair_notes: Vec<String>,
}

impl<'s> ReportPlan<'s> {
    /// Scores `corpus` and chooses the pairs to compare; nothing is resampled yet. The corpus
    /// is scored as given: with [`Settings::filter`] set, give the filtered corpus
    /// ([`crate::filter::Filter::apply`], as [`build_report_full`] does).
    pub fn new(corpus: &Corpus, settings: &'s Settings) -> Self {
        let level = if settings.level > 0.0 && settings.level < 1.0 {
            settings.level
        } else {
            0.95
        };
        let resamples = settings.bootstrap as usize;
        let agg = aggregate_with(corpus, settings.max_depth, resamples);
        // Which pairs to compare is decided from the names alone, before the bootstrap: pairs of
        // conditions restricted to their shared tasks add columns to their dataset's resampling.
        let names: Vec<(&str, &str, &str)> = agg
            .conditions
            .iter()
            .map(|m| corpus.condition_names(m.condition))
            .collect();
        let mut pair_notes = Vec::new();
        let selection = select_pairs(&agg, &names, settings, &mut pair_notes);
        let (cross, augmented) = plan_cross_pairs(corpus, &agg, &selection.cross);
        let mut notes = corpus.notes.clone();
        let mut widened = Vec::with_capacity(agg.blocks.len());
        for (block, wide) in agg.blocks.iter().zip(augmented) {
            if resamples == 0 {
                widened.push(None);
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
                widened.push(None);
                continue;
            }
            // With shared-task columns when they fit; without them the cross pairs that need
            // them get no intervals (said in a note).
            widened.push(match wide {
                Some(wide) if wide.bootstrap_fits(resamples) => Some(wide),
                Some(_) => {
                    pair_notes.push(format!(
                        "dataset {}: no intervals for the cross-condition pairs of conditions \
                         that ran different tasks — their shared-task columns would pass the {} \
                         MiB limit",
                        block.dataset,
                        MAX_BOOTSTRAP_BYTES >> 20
                    ));
                    None
                }
                None => None,
            });
        }
        ReportPlan {
            agg,
            settings,
            level,
            resamples,
            selection,
            cross,
            widened,
            notes,
            pair_notes,
        }
    }

    /// The bootstrap's resamples per dataset.
    pub fn resamples(&self) -> usize {
        self.resamples
    }

    /// The report's seed.
    pub fn seed(&self) -> u64 {
        self.settings.seed
    }

    /// Whether block `b` is bootstrapped at all.
    pub fn bootstraps(&self, b: usize) -> bool {
        self.resamples > 0 && self.agg.blocks[b].bootstrap_fits(self.resamples)
    }

    /// What the bootstrap of block `b` resamples: the dataset's block, widened by the
    /// shared-task columns of its cross-condition pairs when they fit; `None` for a block without
    /// bootstrap.
    pub fn resampled(&self, b: usize) -> Option<&DatasetBlock> {
        if !self.bootstraps(b) {
            return None;
        }
        Some(self.widened[b].as_ref().unwrap_or(&self.agg.blocks[b]))
    }

    /// The bootstrap's work, in cells summed: per bootstrapped block, its tasks × its columns ×
    /// the resamples (a resample sums one drawn task row per task). What decides whether
    /// spreading the bootstrap over workers pays for starting them.
    pub fn resample_work(&self) -> u64 {
        (0..self.agg.blocks.len())
            .filter_map(|b| self.resampled(b))
            .map(|block| block.tasks.len() as u64 * block.width as u64 * self.resamples as u64)
            .sum()
    }

    /// Every chunk of every bootstrapped block, block by block, chunk by chunk.
    pub fn jobs(&self) -> Vec<BootstrapJob> {
        (0..self.agg.blocks.len())
            .filter(|&b| self.bootstraps(b))
            .flat_map(|block| {
                (0..chunk_count(self.resamples)).map(move |chunk| BootstrapJob { block, chunk })
            })
            .collect()
    }

    /// Runs every job here: natively on all of rayon's threads, in waves after each of which
    /// `progress` is called; in wasm32 one after another.
    pub fn run_bootstrap(&self, progress: &mut dyn FnMut(Progress)) -> Vec<Vec<f64>> {
        let tables: Vec<Option<ResampleTable>> = (0..self.agg.blocks.len())
            .map(|b| self.resampled(b).map(ResampleTable::new))
            .collect();
        let jobs = self.jobs();
        let total = (self.resamples as u64) * tables.iter().filter(|t| t.is_some()).count() as u64;
        // A wave keeps every thread busy several times over, so the barrier between waves
        // costs little; progress is reported from the calling thread between waves.
        let wave = (4 * parallel::threads()).max(1);
        let mut out = Vec::with_capacity(jobs.len());
        let mut done = 0u64;
        for part in jobs.chunks(wave) {
            out.extend(parallel::map(part, |job| {
                let table = tables[job.block]
                    .as_ref()
                    .expect("jobs only name bootstrapped blocks");
                table.chunk(self.resamples, self.settings.seed, job.chunk)
            }));
            done += part
                .iter()
                .map(|job| chunk_range(self.resamples, job.chunk).len() as u64)
                .sum::<u64>();
            progress(Progress { done, total });
        }
        out
    }

    /// The report, from the values of every job of [`ReportPlan::jobs`] in job order.
    pub fn finish(
        self,
        corpus: &Corpus,
        imports: Option<&ImportSummary>,
        chunk_values: Vec<Vec<f64>>,
    ) -> Report {
        let mut values = chunk_values.into_iter();
        let samples: Vec<Option<BlockSamples>> = (0..self.agg.blocks.len())
            .map(|b| {
                let block = self.resampled(b)?;
                let chunks = values.by_ref().take(chunk_count(self.resamples)).collect();
                Some(BlockSamples::from_chunks(
                    self.resamples,
                    block_stats(block),
                    chunks,
                ))
            })
            .collect();
        assemble(corpus, imports, self, &samples)
    }
}

fn assemble(
    corpus: &Corpus,
    imports: Option<&ImportSummary>,
    plan: ReportPlan<'_>,
    samples: &[Option<BlockSamples>],
) -> Report {
    let ReportPlan {
        agg,
        settings,
        level,
        selection,
        cross,
        mut notes,
        mut pair_notes,
        ..
    } = plan;
    // Where each condition's series live: (block, local index).
    let mut location = vec![(0usize, 0usize); agg.conditions.len()];
    for (b, block) in agg.blocks.iter().enumerate() {
        for (local, &rank) in block.conditions.iter().enumerate() {
            location[rank] = (b, local);
        }
    }
    let series = |rank: usize, stat: usize| -> Option<Series<'_>> {
        let (b, local) = location[rank];
        samples[b].as_ref().map(|s| s.column(local, stat))
    };
    // Every interval of every condition, in parallel where the platform allows. A condition
    // with the same number of rollouts on every task of its dataset (one rollout per task, the
    // usual case) has the same denominator in every resample, so its TER, final success and
    // PEC(k) — counts of rollouts over it — take few values: a histogram of counts gives their
    // exact interval without a selection.
    let stats = STAT_PEC + agg.k_max;
    let ranks: Vec<usize> = (0..agg.conditions.len()).collect();
    let intervals: Vec<Vec<Option<[f64; 2]>>> = parallel::map(&ranks, |&rank| {
        let (b, local) = location[rank];
        let Some(s) = samples[b].as_ref() else {
            return vec![None; stats];
        };
        let denominator = constant_denominator(&agg.blocks[b], local);
        (0..stats)
            .map(|stat| match denominator {
                Some(d) if stat != STAT_MEAN_FED && stat != STAT_AUC => {
                    s.column(local, stat).interval_of_counts(d, level)
                }
                _ => s.column(local, stat).interval(level),
            })
            .collect()
    });
    let interval = |rank: usize, stat: usize| intervals[rank][stat];

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

    notes.append(&mut pair_notes);
    let local_series = |block: usize, local: usize, stat: usize| -> Option<Series<'_>> {
        let s = samples[block].as_ref()?;
        // A shared-task column exists only when the widened block was resampled.
        (local < s.columns()).then(|| s.column(local, stat))
    };
    // Every pair in parallel where the platform allows, in report order.
    let mut paired: Vec<(usize, PairedReport)> =
        parallel::map(&selection.named, |&(block, x, y, compare)| {
            (block, paired(&conditions, x, y, level, &series, compare))
        });
    paired.extend(parallel::map(&cross, |c| {
        (
            c.block,
            paired_cross(&conditions, c, level, &series, &local_series),
        )
    }));
    // Per dataset: methods, models, then conditions.
    paired.sort_by_key(|&(block, _)| block);
    let paired: Vec<PairedReport> = paired.into_iter().map(|(_, p)| p).collect();
    let identity_violations = check_identities(&conditions);
    let (ranks, rank_divergence) =
        super::ranks::rank_datasets(&agg.blocks, &conditions, samples, level, &mut notes);
    let pareto = super::pareto::pareto_entries(&conditions);

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
            compare: settings
                .compare
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
            filter: settings
                .filter
                .as_ref()
                .filter(|f| f.is_active())
                .map(|f| f.to_string()),
        },
        conditions,
        paired,
        ranks,
        rank_divergence,
        pareto,
        failure_clusters: crate::clusters::failure_clusters(corpus),
        diagnostics: corpus.diagnostics.iter().map(DiagnosticOut::of).collect(),
        diagnostics_total: corpus.diagnostics_total,
        problems: corpus
            .problems
            .iter()
            .map(|p| ProblemOut {
                kind: p.kind.clone(),
                count: p.count,
                example: DiagnosticOut::of(&p.example),
            })
            .collect(),
        checks: corpus.checks.iter().map(DiagnosticOut::of).collect(),
        identity_violations,
        inputs: corpus
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| InputOut {
                mapping: imports
                    .and_then(|s| s.files.get(i))
                    .map(|f| f.mapping.clone())
                    .unwrap_or_default(),
                file: f.name.clone(),
                bytes: f.bytes,
                lines: f.lines,
                rollouts: f.rollouts,
                errors: f.errors,
                repeats: f.repeats.map(|j| corpus.files[j as usize].name.clone()),
                archive: f.archive.clone(),
            })
            .collect(),
    }
}

/// The rollouts of local condition `local` in every resample of `block` when that number is the
/// same in all of them — the condition ran `m > 0` rollouts on each of the block's tasks, so a
/// resample of `tasks` draws has `m · tasks` — else `None`.
fn constant_denominator(block: &DatasetBlock, local: usize) -> Option<u64> {
    if block.tasks.is_empty() {
        return None;
    }
    let per_task = |t: usize| block.row(t)[local * block.width + COL_N];
    let m = per_task(0);
    (m > 0.0 && (1..block.tasks.len()).all(|t| per_task(t) == m))
        .then(|| m as u64 * block.tasks.len() as u64)
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
        model_path: corpus.model_paths.get(model).cloned(),
        method: method.to_string(),
        n: m.n,
        tasks: m.tasks,
        crashed: m.crashed,
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

/// The pairs a report compares: `named` = (block, a, b, "methods" | "models") by rank, and
/// `cross` = (block, a, b) cross-condition pairs.
struct Selection {
    named: Vec<(usize, usize, usize, &'static str)>,
    cross: Vec<(usize, usize, usize)>,
}

/// Chooses the paired comparisons: methods within (dataset, model), then models within
/// (dataset, method), then — in a dataset whose models each have a single method (a
/// leaderboard) — every two conditions. Without pairs in the settings, every unordered pair of
/// each group up to [`MAX_AUTO_GROUP`] members, and none past [`MAX_AUTO_PAIRS`] in all. The
/// cross-condition pairs of [`Settings::compare`] are always made, in the order asked (one
/// replaces an automatic pair of the same two conditions).
fn select_pairs(
    agg: &Aggregates,
    names: &[(&str, &str, &str)],
    settings: &Settings,
    notes: &mut Vec<String>,
) -> Selection {
    let mut chosen: Vec<(usize, usize, usize, &'static str)> = Vec::new();
    let mut auto_cross: Vec<(usize, usize, usize)> = Vec::new();
    let mut asked_cross: Vec<(usize, usize, usize)> = Vec::new();
    let mut oversized: Vec<String> = Vec::new();
    for (bi, block) in agg.blocks.iter().enumerate() {
        for compare in ["methods", "models"] {
            let methods = compare == "methods";
            // Groups share the model (comparing methods) or the method (comparing models); each
            // lists its ranks in report order.
            let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for &rank in &block.conditions {
                let (_, model, method) = names[rank];
                let key = if methods { model } else { method };
                groups.entry(key).or_default().push(rank);
            }
            let name = |rank: usize| -> &str {
                let (_, model, method) = names[rank];
                if methods {
                    method
                } else {
                    model
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
            chosen.extend(found.into_iter().map(|(a, b)| (bi, a, b, compare)));
        }
        // Cross-condition pairs: automatic in a leaderboard-shaped dataset (as many models as
        // conditions), within the same limits as the other automatic pairs.
        let ranks = &block.conditions;
        let mut models: Vec<&str> = ranks.iter().map(|&r| names[r].1).collect();
        models.dedup();
        if settings.pairs.is_empty() && ranks.len() > 1 && models.len() == ranks.len() {
            if ranks.len() > MAX_AUTO_GROUP {
                oversized.push(format!(
                    "{} conditions ({}, one method per model)",
                    ranks.len(),
                    block.dataset
                ));
            } else {
                for (i, &ra) in ranks.iter().enumerate() {
                    for &rb in &ranks[i + 1..] {
                        auto_cross.push((bi, ra, rb));
                    }
                }
            }
        }
        let find = |c: &ConditionRef| {
            ranks
                .iter()
                .copied()
                .find(|&r| names[r].1 == c.model && names[r].2 == c.method)
        };
        for (x, y) in &settings.compare {
            if let (Some(ra), Some(rb)) = (find(x), find(y)) {
                if ra != rb && !asked_cross.contains(&(bi, ra, rb)) {
                    asked_cross.push((bi, ra, rb));
                }
            }
        }
    }
    if !oversized.is_empty() {
        notes.push(format!(
            "no automatic paired comparisons for groups over {MAX_AUTO_GROUP} members: {}; name \
             the pairs to compare",
            oversized.join("; ")
        ));
    }
    // One entry per two conditions: where the automatic method or model pair and a
    // cross-condition pair would compare the same two conditions (two single-method models
    // sharing a method name in a leaderboard), only the cross-condition pair is kept — it
    // carries the shared-task counts, and on the same tasks its numbers are the same.
    if settings.pairs.is_empty() {
        let crossed: std::collections::HashSet<(usize, usize, usize)> = auto_cross
            .iter()
            .chain(&asked_cross)
            .map(|&(b, x, y)| (b, x.min(y), x.max(y)))
            .collect();
        chosen.retain(|&(b, x, y, _)| !crossed.contains(&(b, x.min(y), x.max(y))));
    }
    let automatic = chosen.len() + auto_cross.len();
    if settings.pairs.is_empty() && automatic > MAX_AUTO_PAIRS {
        notes.push(format!(
            "{automatic} paired comparisons would be made (the automatic limit is \
             {MAX_AUTO_PAIRS}); none were: name the pairs to compare"
        ));
        chosen.clear();
        auto_cross.clear();
    }
    auto_cross.retain(|&(b, x, y)| {
        !asked_cross
            .iter()
            .any(|&(b2, p, q)| b == b2 && (p.min(q), p.max(q)) == (x.min(y), x.max(y)))
    });
    let mut cross = auto_cross;
    cross.extend(asked_cross);
    Selection {
        named: chosen,
        cross,
    }
}

/// A cross-condition pair, planned before the bootstrap.
struct CrossPair {
    block: usize,
    /// Ranks of A and B.
    ranks: [usize; 2],
    n_shared: u64,
    only: [u64; 2],
    /// A's and B's statistics on the shared tasks (TER, mean FED, AUC-PEC, final success,
    /// PEC(1..=K)), or `None` for a side that ran no other task (its own statistics then).
    restricted: [Option<Vec<f64>>; 2],
    /// The side's local column in its block's widened resampling, where `restricted` is given.
    local: [Option<usize>; 2],
}

/// Plans the cross-condition pairs: shared tasks, restricted point estimates, and per block the
/// widened copy (the block's cells plus one column per side restricted to shared tasks) that
/// the bootstrap resamples instead, so restricted statistics use the dataset's same draws.
fn plan_cross_pairs(
    corpus: &Corpus,
    agg: &Aggregates,
    pairs: &[(usize, usize, usize)],
) -> (Vec<CrossPair>, Vec<Option<DatasetBlock>>) {
    let mut augmented: Vec<Option<DatasetBlock>> = vec![None; agg.blocks.len()];
    if pairs.is_empty() {
        return (Vec::new(), augmented);
    }
    let width = COL_SURVIVORS + agg.k_max;
    // Per involved condition, its per-task sums (dense over the block's tasks).
    let mut rows: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for &(b, x, y) in pairs {
        for r in [x, y] {
            rows.entry(r)
                .or_insert_with(|| vec![0.0; agg.blocks[b].tasks.len() * width]);
        }
    }
    let mut rank_of: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (rank, m) in agg.conditions.iter().enumerate() {
        if rows.contains_key(&rank) {
            rank_of.insert(m.condition, rank);
        }
    }
    let mut task_index: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    let mut indexed = vec![false; agg.blocks.len()];
    for &(b, _, _) in pairs {
        if !std::mem::replace(&mut indexed[b], true) {
            task_index.extend(agg.blocks[b].tasks.iter().enumerate().map(|(i, &t)| (t, i)));
        }
    }
    // Summed in the scorer's canonical order (task, FED, T, success within a condition), so the
    // float sums do not depend on the order of the input lines.
    let mut involved: Vec<(usize, usize, &crate::rollout::Rollout)> = corpus
        .rollouts
        .iter()
        .filter_map(|r| Some((*rank_of.get(&r.condition)?, task_index[&r.task], r)))
        .collect();
    involved.sort_by_key(|&(rank, t, r)| (rank, t, r.fed.0, r.horizon, r.success));
    for (rank, t, r) in involved {
        if let Some(row) = rows.get_mut(&rank) {
            add_to_cell(&mut row[t * width..(t + 1) * width], r);
        }
    }
    let ran = |rank: usize, t: usize| rows[&rank][t * width + COL_N] > 0.0;
    // Widened columns per block: (rank, shared tasks) → local index.
    let mut extra: Vec<BTreeMap<(usize, Vec<usize>), usize>> =
        vec![BTreeMap::new(); agg.blocks.len()];
    let mut plans = Vec::with_capacity(pairs.len());
    for &(b, x, y) in pairs {
        let block = &agg.blocks[b];
        let shared: Vec<usize> = (0..block.tasks.len())
            .filter(|&t| ran(x, t) && ran(y, t))
            .collect();
        let count = |r: usize| (0..block.tasks.len()).filter(|&t| ran(r, t)).count() as u64;
        let n_shared = shared.len() as u64;
        let only = [count(x) - n_shared, count(y) - n_shared];
        let mut restricted = [None, None];
        let mut local = [None, None];
        for (side, &rank) in [x, y].iter().enumerate() {
            if only[side] == 0 {
                continue;
            }
            let row = &rows[&rank];
            let mut sum = vec![0.0; width];
            for &t in &shared {
                for (s, v) in sum.iter_mut().zip(&row[t * width..(t + 1) * width]) {
                    *s += v;
                }
            }
            let n = sum[COL_N];
            restricted[side] = Some(if n > 0.0 {
                let mut v = vec![sum[COL_FULL] / n, sum[COL_FED] / n, sum[COL_AUC] / n];
                v.push(sum[COL_SUCCESS] / n);
                v.extend(sum[COL_SURVIVORS..].iter().map(|s| s / n));
                v
            } else {
                vec![f64::NAN; STAT_PEC + agg.k_max]
            });
            if !block.cells.is_empty() && n > 0.0 {
                let next = block.conditions.len() + extra[b].len();
                local[side] = Some(*extra[b].entry((rank, shared.clone())).or_insert(next));
            }
        }
        plans.push(CrossPair {
            block: b,
            ranks: [x, y],
            n_shared,
            only,
            restricted,
            local,
        });
    }
    for (b, columns) in extra.iter().enumerate() {
        if columns.is_empty() {
            continue;
        }
        let block = &agg.blocks[b];
        let c = block.conditions.len();
        let wide = c + columns.len();
        let mut order: Vec<(&(usize, Vec<usize>), &usize)> = columns.iter().collect();
        order.sort_by_key(|(_, &l)| l);
        let mut cells = vec![0.0; block.tasks.len() * wide * width];
        for t in 0..block.tasks.len() {
            let to = &mut cells[t * wide * width..(t + 1) * wide * width];
            to[..c * width].copy_from_slice(block.row(t));
            for ((rank, shared), &l) in &order {
                if shared.binary_search(&t).is_ok() {
                    // The condition's own cell: the same sums as its unrestricted column.
                    let own = block.conditions.iter().position(|r| r == rank).unwrap_or(0);
                    to[l * width..(l + 1) * width]
                        .copy_from_slice(&block.row(t)[own * width..(own + 1) * width]);
                }
            }
        }
        let mut conditions = block.conditions.clone();
        conditions.extend(order.iter().map(|((rank, _), _)| *rank));
        augmented[b] = Some(DatasetBlock {
            dataset: block.dataset.clone(),
            tasks: block.tasks.clone(),
            conditions,
            width,
            cells,
        });
    }
    (plans, augmented)
}

/// A cross-condition pair's report: differences of the shared-task statistics.
fn paired_cross<'a>(
    conditions: &[ConditionReport],
    c: &CrossPair,
    level: f64,
    series: &(dyn Fn(usize, usize) -> Option<Series<'a>> + Sync),
    local_series: &(dyn Fn(usize, usize, usize) -> Option<Series<'a>> + Sync),
) -> PairedReport {
    let [ra, rb] = c.ranks;
    let (a, b) = (&conditions[ra], &conditions[rb]);
    let side_series = |side: usize, stat: usize| -> Option<Series<'a>> {
        match (&c.restricted[side], c.local[side]) {
            (None, _) => series(c.ranks[side], stat),
            (Some(_), Some(l)) => local_series(c.block, l, stat),
            (Some(_), None) => None,
        }
    };
    let value = |side: usize, stat: usize, own: Option<f64>| -> Option<f64> {
        match &c.restricted[side] {
            None => own,
            Some(v) => Some(v[stat]).filter(|x| !x.is_nan()),
        }
    };
    let delta = |stat: usize, own_a: Option<f64>, own_b: Option<f64>| -> Delta {
        let ci = match (side_series(0, stat), side_series(1, stat)) {
            (Some(sa), Some(sb)) if c.n_shared > 0 => sa.minus(sb).interval(level),
            _ => None,
        };
        Delta {
            delta: value(0, stat, own_a)
                .zip(value(1, stat, own_b))
                .map(|(x, y)| x - y),
            ci,
        }
    };
    PairedReport {
        dataset: a.dataset.clone(),
        model: None,
        method: None,
        compare: "conditions".to_string(),
        a: PairSide::Condition(ConditionRef::new(&a.model, &a.method)),
        b: PairSide::Condition(ConditionRef::new(&b.model, &b.method)),
        n_shared: Some(c.n_shared),
        only_a: Some(c.only[0]),
        only_b: Some(c.only[1]),
        ter: delta(STAT_TER, a.ter.value, b.ter.value),
        auc_pec: delta(STAT_AUC, a.auc_pec.value, b.auc_pec.value),
        mean_fed: delta(STAT_MEAN_FED, a.mean_fed.value, b.mean_fed.value),
        final_success: delta(STAT_SUCCESS, a.final_success.value, b.final_success.value),
        pec: a
            .pec
            .iter()
            .zip(&b.pec)
            .enumerate()
            .map(|(i, (pa, pb))| {
                let d = delta(STAT_PEC + i, Some(pa.value), Some(pb.value));
                PecDelta {
                    k: pa.k,
                    delta: d.delta,
                    ci: d.ci,
                }
            })
            .collect(),
    }
}

fn paired<'a>(
    conditions: &[ConditionReport],
    ra: usize,
    rb: usize,
    level: f64,
    series: &(dyn Fn(usize, usize) -> Option<Series<'a>> + Sync),
    compare: &str,
) -> PairedReport {
    let (a, b) = (&conditions[ra], &conditions[rb]);
    let delta = |pa: Option<f64>, pb: Option<f64>, stat: usize| -> Delta {
        let ci = match (series(ra, stat), series(rb, stat)) {
            (Some(sa), Some(sb)) => sa.minus(sb).interval(level),
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
        a: PairSide::Name(if methods { &a.method } else { &a.model }.clone()),
        b: PairSide::Name(if methods { &b.method } else { &b.model }.clone()),
        n_shared: None,
        only_a: None,
        only_b: None,
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
