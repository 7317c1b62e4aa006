//! The report: `prefix-exec/report/v1`, the contract between the core, the CLI, the browser app
//! and the tests.
//!
//! [`build_report`] turns a [`crate::rollout::Corpus`] into a [`Report`]: point estimates for every condition,
//! task-level bootstrap intervals (same draw for every condition of a dataset), Wilson intervals
//! for RR, paired differences, ranks with simultaneous intervals and rank divergence ([`ranks`]),
//! the identity checks of the paper, and the input diagnostics. The
//! report serialises to JSON with a fixed field order; the same input and settings give the same
//! bytes natively and in WebAssembly.
//!
//! Renderings of a report live beside it: [`table`] (the CLI's text table and the CSV and LaTeX
//! exports of the main table).

mod build;
mod checks;
pub mod derive;
pub mod pareto;
pub mod ranks;
pub mod table;

use serde::{Deserialize, Deserializer, Serialize};

pub use build::{
    build_report, build_report_full, build_report_with_progress, BootstrapJob, Progress, ReportPlan,
};

pub use crate::clusters::{ClusterCondition, FailureCluster};
use crate::score::MaxDepth;

/// The schema name written into every report.
pub const SCHEMA: &str = "prefix-exec/report/v1";

/// What to compute. `Settings::default()` is the paper's protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Bootstrap resamples `B`; 0 disables the bootstrap intervals.
    pub bootstrap: u32,
    /// Seed of the resampler (see [`crate::stats::resample`]).
    pub seed: u64,
    /// Confidence level of every interval, in (0, 1).
    pub level: f64,
    /// PEC depths to compute.
    pub max_depth: MaxDepth,
    /// Restrict paired comparisons to these (a, b) pairs of method (or model) names; empty means
    /// every unordered pair.
    pub pairs: Vec<(String, String)>,
    /// Cross-condition comparisons asked for: (A, B), each a (model, method), made in every
    /// dataset holding both, in addition to the automatic pairs.
    pub compare: Vec<(ConditionRef, ConditionRef)>,
    /// Score only the rollouts this filter keeps ([`crate::filter`]): [`build_report_full`]
    /// applies it, and the report states it (`settings.filter`, a note, the exports). `None`
    /// (or an empty filter) gives the report of the whole corpus, byte for byte.
    pub filter: Option<crate::filter::Filter>,
}

/// A condition of a dataset, named by its model and method.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ConditionRef {
    pub model: String,
    pub method: String,
}

impl ConditionRef {
    pub fn new(model: impl Into<String>, method: impl Into<String>) -> Self {
        ConditionRef {
            model: model.into(),
            method: method.into(),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bootstrap: 10_000,
            seed: 0,
            level: 0.95,
            max_depth: MaxDepth::Fixed(10),
            pairs: Vec::new(),
            compare: Vec::new(),
            filter: None,
        }
    }
}

/// The largest number of resamples accepted.
pub const MAX_BOOTSTRAP: u32 = 1_000_000;

impl Settings {
    /// Checks the settings; the message says which value to change.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(format!(
                "confidence level must be between 0 and 1 (exclusive), got {}",
                self.level
            ));
        }
        if self.bootstrap > MAX_BOOTSTRAP {
            return Err(format!(
                "at most {MAX_BOOTSTRAP} bootstrap resamples, got {}",
                self.bootstrap
            ));
        }
        if let MaxDepth::Fixed(k) = self.max_depth {
            if !(1..=crate::score::MAX_DEPTH_CAP).contains(&k) {
                return Err(format!(
                    "max depth must be between 1 and {}, or \"all\"; got {k}",
                    crate::score::MAX_DEPTH_CAP
                ));
            }
        }
        if let Some((a, _)) = self.compare.iter().find(|(a, b)| a == b) {
            return Err(format!(
                "a comparison needs two different conditions, got {} / {} twice",
                a.model, a.method
            ));
        }
        Ok(())
    }
}

/// The full report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub settings: SettingsOut,
    pub conditions: Vec<ConditionReport>,
    pub paired: Vec<PairedReport>,
    /// Per dataset of 2 to [`ranks::MAX_RANKED`] conditions and per ranking metric (final
    /// success, TER, AUC-PEC): point ranks and simultaneous rank intervals ([`ranks`]).
    #[serde(default)]
    pub ranks: Vec<RankTable>,
    /// Per such dataset: final success against TER and against AUC-PEC (Kendall's τ_b and the
    /// discordant pairs).
    #[serde(default)]
    pub rank_divergence: Vec<RankDivergence>,
    /// Per dataset, cost field the rollouts carry and metric (final success, TER): which
    /// conditions are on the cost frontier ([`pareto`]); absent when no rollout carries a cost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pareto: Vec<ParetoEntry>,
    /// Every rollout that is not fully executable, grouped by its first rejected call's
    /// (label, tool, normalised message) per dataset, with counts per condition
    /// ([`crate::clusters`]): a condition's counts add up to its RR-Eligible.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure_clusters: Vec<FailureCluster>,
    /// The first diagnostics (at most [`crate::rollout::MAX_DIAGNOSTICS`]).
    pub diagnostics: Vec<DiagnosticOut>,
    /// All diagnostics, including those not listed.
    pub diagnostics_total: u64,
    /// Every diagnostic by kind (numbers, paths and quoted names set aside), with its count and
    /// the first of its kind: what the CLI prints and the app lists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<ProblemOut>,
    /// The input's own figures that reading recomputed and found equal (a log's aggregate
    /// success rate, a run summary's mean similarity): confirmations, not problems. A check
    /// that fails is among the diagnostics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<DiagnosticOut>,
    /// What was not computed and why (a dataset too big to bootstrap, too many pairs to compare
    /// automatically).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Violated identities; always empty on valid input (a violation is a bug).
    pub identity_violations: Vec<Violation>,
    /// The files read, in input order.
    pub inputs: Vec<InputOut>,
}

/// The settings as written into the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettingsOut {
    pub bootstrap: u32,
    pub seed: u64,
    pub level: f64,
    /// A number, or `"all"`.
    pub max_depth: serde_json::Value,
    /// The PEC depths actually computed: `1..=k_max`.
    pub k_max: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<[String; 2]>,
    /// The cross-condition comparisons asked for ([`Settings::compare`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compare: Vec<[ConditionRef; 2]>,
    /// How success was decided where the input says so (ToolSandbox's similarity threshold),
    /// by dataset; shown under the table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success_rules: Vec<SuccessRule>,
    /// The filter the report was restricted to ([`Settings::filter`]), in its canonical
    /// spelling; absent when the report covers every rollout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

/// A dataset's success rule, as its rollouts state it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuccessRule {
    pub dataset: String,
    pub rule: String,
}

/// A point estimate with its interval; `null`s where undefined or when intervals are off.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

/// One condition's row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConditionReport {
    pub dataset: String,
    pub model: String,
    /// The local path the model's name was read from (a Hugging Face cache path), when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_path: Option<String>,
    pub method: String,
    /// Rollouts (the fixed cohort `N`).
    pub n: u64,
    /// Distinct tasks.
    pub tasks: u64,
    /// Rollouts of the N that crashed (an infrastructure or provider error, counted as failed
    /// rollouts; see `formats::CrashPolicy`).
    #[serde(default)]
    pub crashed: u64,
    pub ter: Estimate,
    pub mean_fed: Estimate,
    pub auc_pec: Estimate,
    pub final_success: Estimate,
    /// `#{FED ≤ T}`, the RR denominator.
    pub rr_eligible: u64,
    /// RR with its Wilson interval.
    pub rr: Estimate,
    /// `s = P(Y | FED = T + 1)`.
    pub uninterrupted_success: Option<f64>,
    /// `(1 − q)·r / P(Y)`: share of successes reached after a failed prefix.
    pub success_after_failed_prefix: Option<f64>,
    pub fully_executable: u64,
    pub successes: u64,
    /// `#{Y ∧ FED ≤ T}`.
    pub recovered: u64,
    pub max_horizon: u32,
    pub pec: Vec<PecPoint>,
    pub first_failure_labels: LabelCounts,
    pub cost: CostOut,
    /// pass^k for k = 1, 2, … (the chance that k trials of a task all succeed, averaged over
    /// tasks), present when every task of the condition has at least two trials.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_hat: Vec<f64>,
    /// Where first failures came from, when tool schemas were checked: the schema check run on
    /// the logged call, or the environment's own verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure_sources: Option<FailureSources>,
    /// Where the first failures' labels came from — `given` (the log's own label), `schema
    /// check`, `rule:<id>` (a label rule), `none` (unlabeled) — present when label rules were in
    /// force. The counts sum to RR-Eligible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure_label_sources: Option<std::collections::BTreeMap<String, u64>>,
}

/// First failures by source; they sum to RR-Eligible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureSources {
    pub schema_check: u64,
    pub environment: u64,
}

/// PEC at one depth, with the at-risk figures a survival plot shows under its axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PecPoint {
    pub k: usize,
    /// Fixed-cohort PEC(k), eq. 4.
    pub value: f64,
    pub ci: Option<[f64; 2]>,
    /// `n_k = #{T ≥ k}`, eq. 5.
    pub n_k: u64,
    /// PEC_elig(k), eq. 6; `null` when `n_k = 0`.
    pub elig: Option<f64>,
    /// `#{FED > k}`.
    pub survivors: u64,
    /// First failures at exactly depth k: `#{FED = k ≤ T}`.
    pub first_failures: u64,
    /// Rollouts that ended before depth k: `#{T < k}`.
    pub ended_before: u64,
}

/// First-failure label counts; a key only where the count is non-zero. They sum to RR-Eligible.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelCounts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub information: Option<u64>,
    /// Faults a label rule judged the environment's (a 503, a timeout, a rate limit): not one of
    /// the paper's five labels and not part of their split, but counted here so that every
    /// first failure is counted once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlabeled: Option<u64>,
}

impl LabelCounts {
    /// (name, count) in tie-break order, then "environment" and "unlabeled"; zero counts
    /// included. They sum to RR-Eligible.
    pub fn entries(&self) -> [(&'static str, u64); 7] {
        [
            ("schema", self.schema.unwrap_or(0)),
            ("dependency", self.dependency.unwrap_or(0)),
            ("precondition", self.precondition.unwrap_or(0)),
            ("state", self.state.unwrap_or(0)),
            ("information", self.information.unwrap_or(0)),
            ("environment", self.environment.unwrap_or(0)),
            ("unlabeled", self.unlabeled.unwrap_or(0)),
        ]
    }

    /// The agent's first failures: RR-Eligible without the environment's. The paper's five-way
    /// split (and the labeller's coverage) is over these.
    pub fn agent_failures(&self) -> u64 {
        self.entries()
            .iter()
            .filter(|e| e.0 != "environment")
            .map(|e| e.1)
            .sum()
    }
}

/// Mean cost per rollout, over the rollouts that report the field. A key is present when any
/// rollout of the report has that field; its value is `null` when none of this condition's do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostOut {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub tokens: Option<Option<f64>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub latency_s: Option<Option<f64>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub usd: Option<Option<f64>>,
}

/// A key that is present (even as `null`) deserialises to `Some`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
    Option::<f64>::deserialize(d).map(Some)
}

/// A paired difference `a − b` on the same resamples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    pub delta: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

/// `PEC_a(k) − PEC_b(k)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PecDelta {
    pub k: usize,
    pub delta: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

/// A paired comparison within one dataset: two methods under one model (`compare =
/// "methods"`, `a`/`b` are method names), two models under one method (`compare = "models"`,
/// model names), or any two conditions (`compare = "conditions"`, `a`/`b` are `{model, method}`
/// and the shared-task counts are given).
///
/// Conditions are paired by task on the dataset's bootstrap draws. A cross-condition pair is
/// computed on the tasks both conditions ran (`n_shared`): tasks only one of them ran (`only_a`,
/// `only_b`) are left out of its point differences and of its resampled statistics, and a
/// shared task contributes all its rollouts (every trial) in each condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairedReport {
    pub dataset: String,
    /// The shared model, when methods are compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The shared method, when models are compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    pub compare: String,
    pub a: PairSide,
    pub b: PairSide,
    /// Tasks both conditions ran (cross-condition pairs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_shared: Option<u64>,
    /// Tasks only A ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_a: Option<u64>,
    /// Tasks only B ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_b: Option<u64>,
    pub ter: Delta,
    pub auc_pec: Delta,
    pub mean_fed: Delta,
    pub final_success: Delta,
    pub pec: Vec<PecDelta>,
}

/// A condition in the rank entries: `[model, method]`.
pub type ConditionPair = [String; 2];

/// One dataset's conditions ranked by one metric (`metric`: `final_success`, `ter` or
/// `auc_pec`; see [`ranks`] for the method). Without bootstrap resamples for the dataset, the
/// point ranks alone: `critical_value`, `rank_lo` and `rank_hi` are `null`, `above` is empty.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankTable {
    pub dataset: String,
    pub metric: String,
    /// The report's level: every interval of the entry holds at once with about this probability.
    pub level: f64,
    /// `c`: the `level`-percentile of the largest standardised pair deviation on each resample.
    pub critical_value: Option<f64>,
    /// The dataset's conditions in report order.
    pub conditions: Vec<RankedCondition>,
    /// Every ordered pair `[first, second]` where the first certainly ranks above the second.
    pub above: Vec<[ConditionPair; 2]>,
}

/// A condition's rank by one metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankedCondition {
    pub model: String,
    pub method: String,
    /// The point estimate (the main table's).
    pub value: Option<f64>,
    /// `1 + #{conditions with a higher value}`.
    pub rank: usize,
    /// `1 + #{conditions certainly above}`; 1 = in the top group ("tied with #1").
    pub rank_lo: Option<usize>,
    /// `K − #{conditions it is certainly above}`.
    pub rank_hi: Option<usize>,
}

impl RankedCondition {
    /// In the top group: no condition certainly ranks above it (`rank_lo = 1`).
    pub fn top(&self) -> bool {
        self.rank_lo == Some(1)
    }
}

/// Where final success (`a`) and a prefix metric (`b`: `ter` or `auc_pec`) rank one dataset's
/// conditions differently.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankDivergence {
    pub dataset: String,
    pub a: String,
    pub b: String,
    /// τ_b of the point estimates (`null` when either metric is constant over the conditions),
    /// with its percentile interval over the resamples.
    pub kendall_tau_b: Estimate,
    /// Pairs ordered one way by `a` and the other way by `b`.
    pub discordant: Vec<DiscordantPair>,
}

/// A pair of conditions that final success and the prefix metric order oppositely.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiscordantPair {
    pub ahead_on_success: ConditionPair,
    /// The other condition, ahead on TER (when `b` is `ter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ahead_on_ter: Option<ConditionPair>,
    /// The other condition, ahead on AUC-PEC (when `b` is `auc_pec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ahead_on_auc_pec: Option<ConditionPair>,
    /// Each side certainly ranks above the other on the metric it leads.
    pub significant: bool,
}

impl DiscordantPair {
    /// The condition ahead on the prefix metric.
    pub fn ahead_on_prefix(&self) -> Option<&ConditionPair> {
        self.ahead_on_ter
            .as_ref()
            .or(self.ahead_on_auc_pec.as_ref())
    }
}

/// One dataset's cost frontier for one cost field (`cost`: `tokens`, `latency_s` or `usd`) and
/// one metric (`metric`: `final_success` or `ter`); see [`pareto`] for the definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParetoEntry {
    pub dataset: String,
    pub cost: String,
    pub metric: String,
    /// The dataset's conditions that have this cost, in report order (a condition without it
    /// has no point and is left out).
    pub conditions: Vec<ParetoPoint>,
}

/// A condition's point on a cost frontier plot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParetoPoint {
    pub model: String,
    pub method: String,
    /// The mean cost per rollout (the condition's `cost` field).
    pub cost: f64,
    /// The metric's point estimate.
    pub value: f64,
    /// No other condition of the dataset has cost ≤ and value ≥ with one strict.
    pub pareto: bool,
}

/// One side of a paired comparison: a method or model name, or a whole condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PairSide {
    Name(String),
    Condition(ConditionRef),
}

impl PairSide {
    /// The method or model name (`None` for a condition).
    pub fn name(&self) -> Option<&str> {
        match self {
            PairSide::Name(n) => Some(n),
            PairSide::Condition(_) => None,
        }
    }

    /// The condition (`None` for a name).
    pub fn condition(&self) -> Option<&ConditionRef> {
        match self {
            PairSide::Name(_) => None,
            PairSide::Condition(c) => Some(c),
        }
    }
}

impl std::fmt::Display for PairSide {
    /// A name as it is; a condition as `model / method`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PairSide::Name(n) => f.write_str(n),
            PairSide::Condition(c) => write!(f, "{} / {}", c.model, c.method),
        }
    }
}

/// An input diagnostic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticOut {
    pub file: String,
    pub line: Option<u64>,
    pub message: String,
}

impl DiagnosticOut {
    pub fn of(d: &crate::rollout::Diagnostic) -> DiagnosticOut {
        DiagnosticOut {
            file: d.file.clone(),
            line: d.line,
            message: d.message.clone(),
        }
    }
}

/// One kind of problem: how many diagnostics read this way, and the first of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProblemOut {
    pub kind: String,
    pub count: u64,
    pub example: DiagnosticOut,
}

/// A violated identity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    pub dataset: String,
    pub model: String,
    pub method: String,
    pub identity: String,
    pub detail: String,
}

/// One input file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputOut {
    pub file: String,
    pub bytes: u64,
    pub lines: u64,
    pub rollouts: u64,
    pub errors: u64,
    /// The earlier input with the same bytes; this one was not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<String>,
    /// Message transcripts: where each field (success, task, model, method, dataset) came from
    /// (`formats::transcript::mapping`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub mapping: std::collections::BTreeMap<String, String>,
    /// The archive the file is a member of (as it was given), when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
}

impl Report {
    /// The report as pretty JSON with a trailing newline: the bytes the CLI writes and the browser
    /// downloads.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a report always serialises");
        s.push('\n');
        s
    }
}
