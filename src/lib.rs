//! # prefix-exec
//!
//! Prefix-executability metrics for tool-using LLM agents (Rezaeian et al., "Prefix
//! Executability"): per-rollout first-error depth (FED), fixed-cohort prefix-executability
//! curves (PEC), trajectory executability rate (TER), AUC-PEC, recovery rate (RR), final success,
//! first-failure labels and costs, with task-level paired bootstrap and Wilson intervals.
//!
//! The data flow, in module order:
//!
//! 1. [`ingest`] — byte chunks of rollout files → framing → format detection → a format's
//!    reader ([`formats`]: canonical JSONL, tau-bench, tau2-bench, BFCL) → rollouts + line
//!    diagnostics;
//! 2. [`rollout`] — the rollout model ([`rollout::Rollout`], [`rollout::Corpus`]);
//! 3. [`score`] — per-condition metrics and per-task aggregates (the paper's eqs. 1–12);
//! 4. [`stats`] — Wilson and percentile intervals, the seeded resampler;
//! 5. [`report`] — the `prefix-exec/report/v1` document and its text/CSV/LaTeX renderings;
//! 6. [`site`] — static report sites (manifest, publishing), [`plot`] and [`browse`] for viewers.
//!
//! The core does no I/O, reads no clock and draws no OS randomness, so the same code runs
//! natively and as WebAssembly and gives byte-identical reports. Its only threads are rayon's,
//! natively, behind [`parallel::map`]; results never depend on how many there are.
//!
//! ```
//! use prefix_exec::{ingest::read_files, report::{build_report, Settings}};
//! let jsonl = br#"{"dataset":"d","task_id":"t1","model":"m","method":"a","success":true,"steps":[{"ok":true},{"ok":false}]}
//! {"dataset":"d","task_id":"t2","model":"m","method":"a","success":false,"steps":[{"ok":true}]}"#;
//! let corpus = read_files([("runs.jsonl", &jsonl[..])]);
//! let report = build_report(&corpus, &Settings { bootstrap: 0, ..Settings::default() });
//! let c = &report.conditions[0];
//! assert_eq!(c.ter.value, Some(0.5)); // one of two rollouts fully executable
//! assert_eq!(c.auc_pec.value, Some(0.75)); // mean of (FED − 1)/T = (1/2 + 1/1)/2
//! ```

pub mod align;
pub mod browse;
/// The native command line (`prefix-exec score|convert|site`), shared by the binary and the
/// Python package.
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
pub mod clusters;
pub mod filter;
pub mod formats;
pub mod ingest;
pub mod label;
pub mod parallel;
pub mod plot;
pub mod report;
pub mod rollout;
pub mod score;
pub mod search;
pub mod site;
pub mod stats;
#[cfg(target_arch = "wasm32")]
pub mod web;
/// The page ↔ worker messages are plain data: compiled natively too, so their unit tests (the
/// settings' round trip, the filter's parse) run with `cargo test`.
#[cfg(all(test, not(target_arch = "wasm32")))]
#[path = "web/protocol.rs"]
#[allow(dead_code)] // natively only its tests use it
mod web_protocol;
