//! Golden test: `tests/golden/small.jsonl` scored with `bootstrap: 200, seed: 1` and without the
//! built-in label rules must give exactly the bytes of `tests/golden/small.report.json` (the
//! report as it was before the labeller: switching the rules off reproduces it); with the rules,
//! those of `tests/golden/small.labelled.report.json`, which differs only in label fields.
//!
//! After a deliberate change of the report, regenerate the expected file with
//!
//! ```sh
//! UPDATE_GOLDEN=1 cargo test --test golden
//! ```
//!
//! and review the diff. The golden file is not trusted blindly: `hand_checked_numbers` reads it
//! back and checks numbers computed by hand from the input (comments below show the arithmetic).

mod common;

use std::path::PathBuf;

use common::wilson_oracle;
use prefix_exec::formats::ImportOptions;
use prefix_exec::ingest::read_files_with;
use prefix_exec::label::LabelSettings;
use prefix_exec::report::{build_report, Report, Settings};
use serde_json::Value;

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// The golden settings: the paper's defaults except a small, seeded bootstrap.
fn golden_settings() -> Settings {
    Settings {
        bootstrap: 200,
        seed: 1,
        ..Default::default()
    }
}

fn report_with(labels: LabelSettings) -> Report {
    let input = std::fs::read(path("small.jsonl")).unwrap();
    let options = ImportOptions {
        labels,
        ..ImportOptions::default()
    };
    let corpus = read_files_with([("small.jsonl", &input[..])], &options);
    build_report(&corpus, &golden_settings())
}

fn golden_report() -> Report {
    report_with(LabelSettings::off())
}

#[test]
fn report_matches_the_committed_golden_file() {
    compare(golden_report(), "small.report.json");
}

#[test]
fn labelled_report_matches_its_golden_file() {
    compare(
        report_with(LabelSettings::default()),
        "small.labelled.report.json",
    );
}

/// Labels never touch the metrics: with the built-in rules, with none, and with user rules that
/// label every failure, every number of the report but the label fields is the same.
#[test]
fn labels_never_touch_the_metrics() {
    let user = LabelSettings::parse_user_rules(
        r#"[{"id":"all","label":"information","error":".","rationale":"test"},
            {"id":"env","label":"environment","error":"missing","rationale":"test"}]"#,
    )
    .unwrap();
    let strip = |r: Report| {
        let mut v = serde_json::to_value(r).unwrap();
        // Failure clusters are grouped by label: a label field too.
        v.as_object_mut().unwrap().remove("failure_clusters");
        for c in v["conditions"].as_array_mut().unwrap() {
            let c = c.as_object_mut().unwrap();
            c.remove("first_failure_labels");
            c.remove("first_failure_label_sources");
        }
        v
    };
    let base = strip(report_with(LabelSettings::off()));
    for labels in [
        LabelSettings::default(),
        LabelSettings {
            builtin: true,
            rules: user.clone(),
        },
        LabelSettings {
            builtin: false,
            rules: user,
        },
    ] {
        let report = report_with(labels.clone());
        assert!(report.identity_violations.is_empty());
        assert_eq!(strip(report), base, "{labels:?}");
    }
}

/// The same input with 1,000 resamples: four chunks per dataset, so this file pins the chunked
/// stream layout (`stats::resample::Resampler::for_chunk`) that 200 resamples (one chunk) do not
/// reach.
#[test]
fn chunked_bootstrap_matches_its_golden_file() {
    compare(report_with_resamples(1000), "small.b1000.report.json");
}

/// With 5,000 resamples the interval ends of the paired differences, mean FED and AUC-PEC are
/// found in windows around each tail (`stats::percentile::central_interval`, from 2,048 values
/// on) instead of by a selection over the whole series. The expected file was written by the
/// selection alone (the build before the windows), so this pins that the two agree on a report.
#[test]
fn windowed_intervals_match_the_selections_golden_file() {
    compare(report_with_resamples(5000), "small.b5000.report.json");
}

fn report_with_resamples(bootstrap: u32) -> Report {
    let input = std::fs::read(path("small.jsonl")).unwrap();
    let options = ImportOptions {
        labels: LabelSettings::off(),
        ..ImportOptions::default()
    };
    let corpus = read_files_with([("small.jsonl", &input[..])], &options);
    let settings = Settings {
        bootstrap,
        ..golden_settings()
    };
    build_report(&corpus, &settings)
}

fn compare(report: Report, name: &str) {
    let actual = report.to_json();
    let expected_path = path(name);
    if updating() {
        std::fs::write(&expected_path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap();
    if actual != expected {
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "the report differs from {} at line {}:\n  expected: {:?}\n  actual:   {:?}\n\
             (if the change is intended: UPDATE_GOLDEN=1 cargo test --test golden)",
            expected_path.display(),
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

/// The committed golden file, read as JSON (the fresh report while it is being rewritten, which
/// `report_matches_the_committed_golden_file` may be doing concurrently).
fn golden_json() -> Value {
    let text = if updating() {
        golden_report().to_json()
    } else {
        std::fs::read_to_string(path("small.report.json")).unwrap()
    };
    serde_json::from_str(&text).unwrap()
}

fn condition<'a>(report: &'a Value, dataset: &str, model: &str, method: &str) -> &'a Value {
    report["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["dataset"] == dataset && c["model"] == model && c["method"] == method)
        .unwrap_or_else(|| panic!("no condition {dataset}/{model}/{method}"))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn close(v: &Value, expected: f64) {
    assert!((num(v) - expected).abs() < 1e-12, "{v} vs {expected}");
}

/// `pec[k-1]` as (value, n_k, elig, first failures).
fn pec(c: &Value, k: usize) -> (f64, u64, Option<f64>, u64) {
    let p = &c["pec"][k - 1];
    assert_eq!(p["k"], k);
    (
        num(&p["value"]),
        p["n_k"].as_u64().unwrap(),
        p["elig"].as_f64(),
        p["first_failures"].as_u64().unwrap(),
    )
}

#[test]
fn hand_checked_numbers() {
    let report = golden_json();
    assert_eq!(report["schema"], "prefix-exec/report/v1");
    assert_eq!(report["settings"]["bootstrap"], 200);
    assert_eq!(report["settings"]["k_max"], 10);
    assert_eq!(report["identity_violations"], serde_json::json!([]));

    // Report order: datasets, models, methods by name ("Dual-Loop" < "Plan-Cond. ReAct" <
    // "ReAct").
    let order: Vec<String> = report["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}/{}/{}", c["dataset"], c["model"], c["method"]).replace('"', ""))
        .collect();
    assert_eq!(
        order,
        [
            "bfcl/gpt-4.1/Dual-Loop",
            "bfcl/gpt-4.1/ReAct",
            "bfcl/llama-4/Dual-Loop",
            "bfcl/llama-4/ReAct",
            "toolsandbox/gpt-4.1/Plan-Cond. ReAct",
            "toolsandbox/gpt-4.1/ReAct",
        ]
    );

    // bfcl / gpt-4.1 / ReAct:
    //   b1 ✓ "++" T2 FED3 · b2 ✓ "+p" T2 FED2 · b3 ✗ "s" T1 FED1 · b4 ✓ no tool, allowed: T1 FED2.
    //   TER 2/4; mean FED 8/4; AUC (1 + 1/2 + 0 + 1)/4 = 5/8; success 3/4;
    //   RR-Eligible 2, RR 1/2; s 2/2; after = 1 recovered / 3 successes.
    //   PEC(1) = 3/4 (n_1 4), PEC(2) = 1/4 (n_2 2, elig 1/2), PEC(3) = 0 (n_3 0).
    //   tokens (1000 + 1500 + 800 + 200)/4 = 875; latency (2 + 3.5)/2 = 2.75; no usd (null,
    //   since toolsandbox has usd).
    let c = condition(&report, "bfcl", "gpt-4.1", "ReAct");
    assert_eq!((c["n"].as_u64(), c["tasks"].as_u64()), (Some(4), Some(4)));
    close(&c["ter"]["value"], 0.5);
    close(&c["mean_fed"]["value"], 2.0);
    close(&c["auc_pec"]["value"], 0.625);
    close(&c["final_success"]["value"], 0.75);
    assert_eq!(c["rr_eligible"], 2);
    close(&c["rr"]["value"], 0.5);
    close(&c["uninterrupted_success"], 1.0);
    close(&c["success_after_failed_prefix"], 1.0 / 3.0);
    assert_eq!(pec(c, 1), (0.75, 4, Some(0.75), 1));
    assert_eq!(pec(c, 2), (0.25, 2, Some(0.5), 1));
    assert_eq!(pec(c, 3), (0.0, 0, None, 0));
    assert_eq!(
        c["first_failure_labels"],
        serde_json::json!({"schema": 1, "precondition": 1})
    );
    assert_eq!(
        c["cost"],
        serde_json::json!({"tokens": 875.0, "latency_s": 2.75, "usd": null})
    );
    let [lo, hi] = wilson_oracle(1, 2);
    close(&c["rr"]["ci"][0], lo);
    close(&c["rr"]["ci"][1], hi);

    // bfcl / gpt-4.1 / Dual-Loop:
    //   b1 ✓ "+++" T3 FED4 · b2 ✓ "++" T2 FED3 · b3 ✓ "+e+" T3 FED2 (error text, unlabeled)
    //   · b4 ✗ "+" T1 FED2. TER 3/4; mean FED 11/4; AUC (1 + 1 + 1/3 + 1)/4 = 5/6;
    //   success 3/4; RR 1/1; s 2/3; after 1/3. PEC(2) = #{4, 3}/4 = 1/2, PEC(3) = 1/4.
    let c = condition(&report, "bfcl", "gpt-4.1", "Dual-Loop");
    close(&c["ter"]["value"], 0.75);
    close(&c["mean_fed"]["value"], 2.75);
    close(&c["auc_pec"]["value"], 5.0 / 6.0);
    close(&c["rr"]["value"], 1.0);
    close(&c["uninterrupted_success"], 2.0 / 3.0);
    assert_eq!(
        c["first_failure_labels"],
        serde_json::json!({"unlabeled": 1})
    );
    assert_eq!(pec(c, 2).0, 0.5);
    assert_eq!(pec(c, 3).0, 0.25);
    close(&c["cost"]["tokens"], 1250.0);

    // bfcl / llama-4 / ReAct (task b1 twice):
    //   b1 ✗ "d+" T2 FED1 · b2 ✓ "+t++" T4 FED2 · b3 ✓ "+++" T3 FED4 · b1 ✓ "+" T1 FED2.
    //   N 4 over 3 tasks; TER 2/4; mean FED 9/4; AUC (0 + 1/4 + 1 + 1)/4 = 9/16; RR 1/2.
    //   n_k = 4, 3, 2, 1, 0; PEC(3) = #{4}/4 = 1/4, PEC(4) = 0 with elig 0/1.
    //   No cost field at all, though other conditions have each: all three null.
    let c = condition(&report, "bfcl", "llama-4", "ReAct");
    assert_eq!((c["n"].as_u64(), c["tasks"].as_u64()), (Some(4), Some(3)));
    close(&c["ter"]["value"], 0.5);
    close(&c["mean_fed"]["value"], 2.25);
    close(&c["auc_pec"]["value"], 0.5625);
    close(&c["rr"]["value"], 0.5);
    let n_k: Vec<u64> = (1..=5).map(|k| pec(c, k).1).collect();
    assert_eq!(n_k, [4, 3, 2, 1, 0]);
    assert_eq!(pec(c, 3), (0.25, 2, Some(0.5), 0));
    assert_eq!(pec(c, 4), (0.0, 1, Some(0.0), 0));
    assert_eq!(
        c["first_failure_labels"],
        serde_json::json!({"dependency": 1, "state": 1})
    );
    assert_eq!(
        c["cost"],
        serde_json::json!({"tokens": null, "latency_s": null, "usd": null})
    );

    // bfcl / llama-4 / Dual-Loop (b4's line has "success": "yes" and is rejected):
    //   b1 ✓ T2 FED3 · b2 ✗ "+i" T2 FED2 · b3 ✓ T4 FED5. TER 2/3, mean FED 10/3,
    //   AUC (1 + 1/2 + 1)/3 = 5/6, RR 0/1 with Wilson [0, 0.7934…], after 0/2.
    let c = condition(&report, "bfcl", "llama-4", "Dual-Loop");
    assert_eq!(c["n"], 3);
    close(&c["ter"]["value"], 2.0 / 3.0);
    close(&c["mean_fed"]["value"], 10.0 / 3.0);
    close(&c["auc_pec"]["value"], 5.0 / 6.0);
    close(&c["rr"]["value"], 0.0);
    close(&c["success_after_failed_prefix"], 0.0);
    let [lo, hi] = wilson_oracle(0, 1);
    close(&c["rr"]["ci"][0], lo);
    close(&c["rr"]["ci"][1], hi);
    assert_eq!(
        c["first_failure_labels"],
        serde_json::json!({"information": 1})
    );

    // toolsandbox / gpt-4.1 / Plan-Cond. ReAct (s3's line is truncated JSON):
    //   s1 ✓ "+" T1 FED2 · s2 ✗ no tool, not allowed, rollout label information: T1 FED1.
    //   TER 1/2, mean FED 3/2, AUC 1/2, RR 0/1, PEC(1) = 1/2, n_2 = 0.
    let c = condition(&report, "toolsandbox", "gpt-4.1", "Plan-Cond. ReAct");
    close(&c["ter"]["value"], 0.5);
    close(&c["mean_fed"]["value"], 1.5);
    close(&c["auc_pec"]["value"], 0.5);
    assert_eq!(pec(c, 1), (0.5, 2, Some(0.5), 1));
    assert_eq!(pec(c, 2), (0.0, 0, None, 0));
    assert_eq!(
        c["first_failure_labels"],
        serde_json::json!({"information": 1})
    );
    assert_eq!(c["cost"]["usd"], Value::Null);

    // toolsandbox / gpt-4.1 / ReAct: s1 ✓ "++" FED3, s2 ✗ "+p" FED2; usd (0.02 + 0.03)/2.
    let c = condition(&report, "toolsandbox", "gpt-4.1", "ReAct");
    close(&c["auc_pec"]["value"], 0.75);
    close(&c["cost"]["usd"], 0.025);
    assert_eq!(c["cost"]["tokens"], Value::Null);

    // Every bootstrap interval is ordered and inside [0, 1] for proportions.
    for c in report["conditions"].as_array().unwrap() {
        for stat in ["ter", "auc_pec", "final_success"] {
            let ci = &c[stat]["ci"];
            assert!(0.0 <= num(&ci[0]) && num(&ci[0]) <= num(&ci[1]) && num(&ci[1]) <= 1.0);
        }
    }

    // Paired: methods under one model, then models under one method, per dataset.
    let pairs: Vec<String> = report["paired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{} {} {} - {}", p["dataset"], p["compare"], p["a"], p["b"]))
        .map(|s| s.replace('"', ""))
        .collect();
    assert_eq!(
        pairs,
        [
            "bfcl methods Dual-Loop - ReAct",
            "bfcl methods Dual-Loop - ReAct",
            "bfcl models gpt-4.1 - llama-4",
            "bfcl models gpt-4.1 - llama-4",
            "toolsandbox methods Plan-Cond. ReAct - ReAct",
        ]
    );
    // bfcl / gpt-4.1: TER Dual-Loop − ReAct = 3/4 − 1/2.
    close(&report["paired"][0]["ter"]["delta"], 0.25);

    // The three bad lines, by line number; the blank line 14 is skipped silently.
    let lines: Vec<u64> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert_eq!(d["file"], "small.jsonl");
            d["line"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(lines, [9, 18, 23]);
    assert_eq!(report["diagnostics_total"], 3);
    assert_eq!(
        report["inputs"],
        serde_json::json!([{
            "file": "small.jsonl",
            "bytes": std::fs::metadata(path("small.jsonl")).unwrap().len(),
            "lines": 23, "rollouts": 19, "errors": 3
        }])
    );
}
