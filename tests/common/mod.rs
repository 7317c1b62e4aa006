//! Shared helpers of the integration tests: a compact builder of canonical JSONL rollouts, a
//! `score` shortcut through the public API, and a plain-text summary of a report whose numbers
//! are written as exact fractions, so expected values read like the hand computations behind them.
//!
//! Steps are written as one character each:
//!
//! | char | step |
//! |---|---|
//! | `+` | `{"ok":true}` |
//! | `.` | `{}` (no `ok`, no `error`: executes) |
//! | `-` | `{"ok":false}` (rejected, unlabeled) |
//! | `e` | `{"error":"boom"}` (rejected through its error text, unlabeled) |
//! | `s` `d` `p` `t` `i` | `{"ok":false,"label":…}` with schema, dependency, precondition, state, information |

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::fmt::Write as _;

use prefix_exec::ingest::read_files;
use prefix_exec::report::{build_report, ConditionReport, Estimate, Report, Settings};
use prefix_exec::score::MaxDepth;

/// One rollout line under construction.
#[derive(Clone, Debug, PartialEq)]
pub struct Ro {
    pub dataset: String,
    pub task: String,
    pub model: String,
    pub method: String,
    pub success: bool,
    /// One char per step, see the module documentation.
    pub steps: String,
    pub no_tool_ok: Option<bool>,
    /// Rollout-level label (read for a no-tool rollout).
    pub label: Option<String>,
    pub tokens: Option<f64>,
    pub latency_s: Option<f64>,
    pub usd: Option<f64>,
}

/// A rollout of condition `dataset / model / method` on `task`.
pub fn ro(dataset: &str, task: &str, model: &str, method: &str, success: bool, steps: &str) -> Ro {
    Ro {
        dataset: dataset.to_string(),
        task: task.to_string(),
        model: model.to_string(),
        method: method.to_string(),
        success,
        steps: steps.to_string(),
        no_tool_ok: None,
        label: None,
        tokens: None,
        latency_s: None,
        usd: None,
    }
}

impl Ro {
    pub fn no_tool_ok(mut self, ok: bool) -> Ro {
        self.no_tool_ok = Some(ok);
        self
    }
    pub fn label(mut self, label: &str) -> Ro {
        self.label = Some(label.to_string());
        self
    }
    pub fn tokens(mut self, v: f64) -> Ro {
        self.tokens = Some(v);
        self
    }
    pub fn latency(mut self, v: f64) -> Ro {
        self.latency_s = Some(v);
        self
    }
    pub fn usd(mut self, v: f64) -> Ro {
        self.usd = Some(v);
        self
    }

    /// The canonical JSONL line (no line break).
    pub fn line(&self) -> String {
        let steps: Vec<serde_json::Value> = self.steps.chars().map(step_json).collect();
        let mut v = serde_json::json!({
            "dataset": self.dataset,
            "task_id": self.task,
            "model": self.model,
            "method": self.method,
            "success": self.success,
            "steps": steps,
        });
        let o = v.as_object_mut().unwrap();
        if let Some(ok) = self.no_tool_ok {
            o.insert("no_tool_ok".into(), ok.into());
        }
        if let Some(label) = &self.label {
            o.insert("label".into(), label.clone().into());
        }
        let mut cost = serde_json::Map::new();
        for (name, value) in [
            ("tokens", self.tokens),
            ("latency_s", self.latency_s),
            ("usd", self.usd),
        ] {
            if let Some(x) = value {
                cost.insert(name.into(), x.into());
            }
        }
        if !cost.is_empty() {
            o.insert("cost".into(), cost.into());
        }
        v.to_string()
    }

    /// Horizon `T` and first-error depth `FED` as the spec defines them (an oracle independent of
    /// the parser).
    pub fn horizon_fed(&self) -> (u32, u32) {
        let steps: Vec<char> = self.steps.chars().collect();
        if steps.is_empty() {
            return (1, if self.no_tool_ok == Some(true) { 2 } else { 1 });
        }
        let t = steps.len() as u32;
        let fed = steps
            .iter()
            .position(|&c| !matches!(c, '+' | '.'))
            .map_or(t + 1, |i| i as u32 + 1);
        (t, fed)
    }

    /// The first-failure label slot (0..5 in tie-break order, 5 = unlabeled), when `FED ≤ T`.
    /// The rollout's slot in [`prefix_exec::report::LabelCounts::entries`] (with the built-in
    /// label rules, which label only the error-less no-tool rollouts here).
    pub fn label_slot(&self) -> Option<usize> {
        let (t, fed) = self.horizon_fed();
        if fed > t {
            return None;
        }
        let name = if self.steps.is_empty() {
            // An unlabeled rollout without tool calls gets the built-in rule information.no_tool.
            self.label
                .clone()
                .or_else(|| Some("information".to_string()))
        } else {
            let c = self.steps.chars().nth(fed as usize - 1).unwrap();
            step_label(c).map(str::to_string)
        };
        Some(match name.as_deref() {
            Some("schema") => 0,
            Some("dependency") => 1,
            Some("precondition") => 2,
            Some("state") => 3,
            Some("information") => 4,
            // 5 is "environment": no generated rollout is the environment's.
            _ => 6,
        })
    }
}

fn step_label(c: char) -> Option<&'static str> {
    match c {
        's' => Some("schema"),
        'd' => Some("dependency"),
        'p' => Some("precondition"),
        't' => Some("state"),
        'i' => Some("information"),
        _ => None,
    }
}

fn step_json(c: char) -> serde_json::Value {
    match c {
        '+' => serde_json::json!({"tool": "t", "ok": true}),
        '.' => serde_json::json!({"tool": "t"}),
        '-' => serde_json::json!({"tool": "t", "ok": false}),
        'e' => serde_json::json!({"tool": "t", "error": "boom"}),
        _ => match step_label(c) {
            Some(label) => serde_json::json!({"tool": "t", "ok": false, "label": label}),
            None => panic!("unknown step char {c:?}"),
        },
    }
}

/// The brief's compact tuple: (dataset, task, model, method, success, step oks, no_tool_ok).
pub type Tuple<'a> = (&'a str, &'a str, &'a str, &'a str, bool, &'a [bool], bool);

/// Rollouts from compact tuples; an empty `oks` is a no-tool rollout with `no_tool_ok`.
pub fn from_tuples(rows: &[Tuple<'_>]) -> Vec<Ro> {
    rows.iter()
        .map(|&(d, t, m, me, success, oks, no_tool_ok)| {
            let steps: String = oks.iter().map(|&ok| if ok { '+' } else { '-' }).collect();
            let r = ro(d, t, m, me, success, &steps);
            if oks.is_empty() {
                r.no_tool_ok(no_tool_ok)
            } else {
                r
            }
        })
        .collect()
}

/// One JSONL document, one line per rollout, each ended by `\n`.
pub fn jsonl(rows: &[Ro]) -> String {
    rows.iter().map(|r| r.line() + "\n").collect()
}

/// Settings with `bootstrap` resamples, seed 1 and PEC depths `1..=k`.
pub fn settings(bootstrap: u32, k: u32) -> Settings {
    Settings {
        bootstrap,
        seed: 1,
        max_depth: MaxDepth::Fixed(k),
        ..Settings::default()
    }
}

/// Reads `jsonl` as one file named `runs.jsonl` and builds the report.
pub fn score(jsonl: &str, settings: &Settings) -> Report {
    let corpus = read_files([("runs.jsonl", jsonl.as_bytes())]);
    build_report(&corpus, settings)
}

/// `x` as an exact fraction `p/q` with `q ≤ 10000` when one is within 1e-12, else as a float.
pub fn frac(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    for q in 1..=10_000u64 {
        let p = (x * q as f64).round();
        if (x - p / q as f64).abs() <= 1e-12 {
            return if q == 1 {
                format!("{p}")
            } else {
                format!("{p}/{q}")
            };
        }
    }
    format!("{x}")
}

fn opt_frac(x: Option<f64>) -> String {
    x.map_or("null".to_string(), frac)
}

/// One condition as text: counts, the point estimates as fractions, PEC rows, labels, costs and
/// which intervals are present.
pub fn summary(c: &ConditionReport) -> String {
    let mut s = String::new();
    let e = |x: &Estimate| opt_frac(x.value);
    writeln!(
        s,
        "{}/{}/{} n={} tasks={} T_max={}",
        c.dataset, c.model, c.method, c.n, c.tasks, c.max_horizon
    )
    .unwrap();
    writeln!(
        s,
        "ter={} fed={} auc={} y={}",
        e(&c.ter),
        e(&c.mean_fed),
        e(&c.auc_pec),
        e(&c.final_success)
    )
    .unwrap();
    writeln!(
        s,
        "full={} succ={} rr_elig={} rec={} rr={} s={} after={}",
        c.fully_executable,
        c.successes,
        c.rr_eligible,
        c.recovered,
        e(&c.rr),
        opt_frac(c.uninterrupted_success),
        opt_frac(c.success_after_failed_prefix)
    )
    .unwrap();
    for p in &c.pec {
        writeln!(
            s,
            "k={} pec={} n_k={} elig={} surv={} ff={} ended={}",
            p.k,
            frac(p.value),
            p.n_k,
            opt_frac(p.elig),
            p.survivors,
            p.first_failures,
            p.ended_before
        )
        .unwrap();
    }
    let labels: Vec<String> = c
        .first_failure_labels
        .entries()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name}={n}"))
        .collect();
    writeln!(s, "labels: {}", labels.join(" ")).unwrap();
    let cost: Vec<String> = [
        ("tokens", c.cost.tokens),
        ("latency_s", c.cost.latency_s),
        ("usd", c.cost.usd),
    ]
    .iter()
    .filter_map(|(name, v)| v.map(|v| format!("{name}={}", opt_frac(v))))
    .collect();
    writeln!(s, "cost: {}", cost.join(" ")).unwrap();
    let mut ci: Vec<String> = [
        ("ter", &c.ter),
        ("fed", &c.mean_fed),
        ("auc", &c.auc_pec),
        ("y", &c.final_success),
        ("rr", &c.rr),
    ]
    .iter()
    .filter(|(_, x)| x.ci.is_some())
    .map(|(name, _)| name.to_string())
    .collect();
    let pec_ci = c.pec.iter().filter(|p| p.ci.is_some()).count();
    if pec_ci > 0 {
        ci.push(format!("pec×{pec_ci}"));
    }
    writeln!(s, "ci: {}", ci.join(" ")).unwrap();
    s
}

/// Every condition of the report, in report order, separated by blank lines.
pub fn summarize(report: &Report) -> String {
    report
        .conditions
        .iter()
        .map(summary)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Compares texts line by line after trimming each line, so expected texts can be indented.
pub fn assert_text(actual: &str, expected: &str) {
    let norm = |s: &str| {
        s.trim()
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (a, e) = (norm(actual), norm(expected));
    assert!(a == e, "\n--- expected\n{e}\n--- actual\n{a}\n");
}

/// The Wilson score interval by its textbook formula (an oracle independent of the library).
pub fn wilson_oracle(x: u64, n: u64) -> [f64; 2] {
    let z = 1.959963984540054_f64;
    let (x, n) = (x as f64, n as f64);
    let p = x / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}
