//! Properties of the first-failure labeller on random rollouts: every `rule:<id>` provenance
//! names a rule in force; a label given by the log is kept; the five labels + environment +
//! unlabeled sum to RR-Eligible, and so do the label sources; convert → score keeps labels and
//! provenance. Every property runs ≤ 64 cases.

use proptest::prelude::*;

use prefix_exec::formats::ImportOptions;
use prefix_exec::ingest::{read_files_with, Ingest};
use prefix_exec::label::{LabelSettings, Labeller};
use prefix_exec::report::{build_report, Settings};

/// Error texts: real ones from released runs, near misses, and arbitrary text.
const ERRORS: &[&str] = &[
    "Error: payment amount does not add up, total price is 305, but paid 255",
    "Error: User not found",
    "{\"error\": \"cd: 'tmp': No such file or directory\"}",
    "ConnectionError: Wifi is not enabled",
    "503 Service Unavailable",
    "Error during execution: invalid syntax (<string>, line 1)",
    "ValueError: wifi already enabled",
    "quota exceeded",
    "boom",
    "",
];
const TOOLS: &[&str] = &["find_user_id_by_email", "cd", "book_reservation", "t"];

#[derive(Clone, Debug)]
struct Step {
    ok: bool,
    error: usize,
    tool: usize,
    arg: u8,
    label: Option<&'static str>,
}

fn step() -> impl Strategy<Value = Step> {
    (
        any::<bool>(),
        0..ERRORS.len(),
        0..TOOLS.len(),
        0..4u8,
        0..8usize,
    )
        .prop_map(|(ok, error, tool, arg, l)| Step {
            ok,
            error,
            tool,
            arg,
            label: ["schema", "state", "environment"].get(l).copied(),
        })
}

fn line(task: usize, method: usize, steps: &[Step]) -> String {
    let steps: Vec<serde_json::Value> = steps
        .iter()
        .map(|s| {
            let mut v = serde_json::json!({
                "tool": TOOLS[s.tool],
                "args": {"id": format!("id_{}", s.arg)},
                "ok": s.ok,
            });
            if !s.ok && !ERRORS[s.error].is_empty() {
                v["error"] = ERRORS[s.error].into();
            }
            if let (false, Some(l)) = (s.ok, s.label) {
                v["label"] = l.into();
            }
            v
        })
        .collect();
    serde_json::json!({
        "dataset": "d", "task_id": format!("t{task}"), "model": "m",
        "method": format!("a{method}"), "success": task % 2 == 0, "steps": steps,
    })
    .to_string()
}

fn corpus_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (0..6usize, 0..2usize, prop::collection::vec(step(), 0..5)),
        1..30,
    )
    .prop_map(|rows| {
        rows.iter()
            .map(|(t, m, s)| line(*t, *m, s) + "\n")
            .collect()
    })
}

fn settings_strategy() -> impl Strategy<Value = LabelSettings> {
    let user = LabelSettings::parse_user_rules(
        r#"[{"id":"quota","label":"environment","error":"quota","rationale":"test"},
            {"id":"unseen","label":"information","error":"not found","reference":"unseen","rationale":"test"}]"#,
    )
    .unwrap();
    prop_oneof![
        Just(LabelSettings::default()),
        Just(LabelSettings::off()),
        Just(LabelSettings {
            builtin: true,
            rules: user.clone()
        }),
        Just(LabelSettings {
            builtin: false,
            rules: user
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn provenance_names_rules_in_force_and_counts_sum(text in corpus_text(), labels in settings_strategy()) {
        let options = ImportOptions { labels: labels.clone(), ..ImportOptions::default() };
        let corpus = read_files_with([("runs.jsonl", text.as_bytes())], &options);
        let labeller = Labeller::new(&labels).unwrap();
        for r in &corpus.rollouts {
            let Some(f) = &r.first_failure else { continue };
            let source = f.label_source.map(|t| corpus.texts.get(t).to_string());
            match source.as_deref() {
                Some(s) if s.starts_with("rule:") => {
                    let rule = labeller.rule(&s["rule:".len()..]);
                    prop_assert!(rule.is_some(), "{s} is not a rule in force");
                    prop_assert!(!labeller.is_empty());
                }
                Some("given") => prop_assert!(f.label.is_some() || f.environment),
                Some(other) => prop_assert!(false, "unexpected source {other}"),
                None => prop_assert!(f.label.is_none() && !f.environment),
            }
        }
        let report = build_report(&corpus, &Settings { bootstrap: 0, ..Settings::default() });
        prop_assert!(report.identity_violations.is_empty(), "{:?}", report.identity_violations);
        for c in &report.conditions {
            let sum: u64 = c.first_failure_labels.entries().iter().map(|e| e.1).sum();
            prop_assert_eq!(sum, c.rr_eligible);
            match &c.first_failure_label_sources {
                Some(s) => prop_assert_eq!(s.values().sum::<u64>(), c.rr_eligible),
                None => prop_assert!(!labels.active()),
            }
        }

        // convert writes the rules' labels into the lines; scoring them gives the same labels
        // and provenance, whatever rules the second reading has.
        let mut ingest = Ingest::converting();
        let f = ingest.begin_file_with("runs.jsonl", options.clone());
        ingest.push(f, text.as_bytes());
        ingest.end_file(f);
        ingest.end_all();
        let converted: String = ingest.drain_converted().iter().map(|l| format!("{l}\n")).collect();
        let back = read_files_with([("c.jsonl", converted.as_bytes())], &options);
        let back_report = build_report(&back, &Settings { bootstrap: 0, ..Settings::default() });
        prop_assert_eq!(back_report.conditions, report.conditions);
    }
}
