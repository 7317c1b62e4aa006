//! The paper's worked example of eq. 12 rebuilt as data: BFCL / Llama-4 Maverick / Plan-Cond.
//! ReAct, 200 rollouts, 10 fully executable (all successful), 190 with a failed prefix of which 138
//! succeed. The failed-prefix rollouts are shaped so that the rest of the Table 2 row also comes
//! out: mean FED 1.96, AUC-PEC .15, PEC@4 .05.

mod common;

use common::*;
use prefix_exec::report::{ConditionReport, Report};

const DATASET: &str = "bfcl-v3";
const MODEL: &str = "Llama-4 Maverick";
const METHOD: &str = "Plan-Cond. ReAct";

/// The 200 rollouts, one task each:
/// - 10 fully executable, T = 4 (FED 5, (FED−1)/T = 1), all successful;
/// - 38 failing at step 1 (FED 1, 0), T = 3;
/// - 144 failing at step 2 of T = 8 (FED 2, 1/8);
/// - 8 failing at step 2 of T = 4 (FED 2, 1/4);
/// - of the 190 failed-prefix rollouts, the first 138 are successful.
///
/// FED sum = 10·5 + 38·1 + 152·2 = 392 ⇒ mean FED 392/200 = 1.96.
/// AUC sum = 10 + 0 + 144/8 + 8/4 = 30 ⇒ AUC-PEC 30/200 = 0.15.
/// #{FED > 4} = 10 ⇒ PEC(4) = 0.05.
fn rollouts() -> Vec<Ro> {
    let mut rows = Vec::new();
    let mut task = 0;
    let mut next = |success: bool, steps: &str| {
        task += 1;
        ro(
            DATASET,
            &format!("mt_{task:03}"),
            MODEL,
            METHOD,
            success,
            steps,
        )
    };
    for _ in 0..10 {
        rows.push(next(true, "++++"));
    }
    let mut failed = Vec::new();
    failed.extend(std::iter::repeat_n("-++", 38));
    failed.extend(std::iter::repeat_n("+p++++++", 144));
    failed.extend(std::iter::repeat_n("+s++", 8));
    for (i, steps) in failed.into_iter().enumerate() {
        rows.push(next(i < 138, steps));
    }
    rows
}

fn report(bootstrap: u32) -> Report {
    score(&jsonl(&rollouts()), &settings(bootstrap, 10))
}

fn condition(report: &Report) -> &ConditionReport {
    assert_eq!(report.conditions.len(), 1);
    let c = &report.conditions[0];
    assert_eq!(
        (&*c.dataset, &*c.model, &*c.method),
        (DATASET, MODEL, METHOD)
    );
    c
}

#[test]
fn the_numbers_of_the_worked_example() {
    let report = report(0);
    assert!(report.identity_violations.is_empty());
    let c = condition(&report);
    assert_eq!((c.n, c.tasks, c.fully_executable), (200, 200, 10));
    assert_eq!((c.successes, c.recovered, c.rr_eligible), (148, 138, 190));

    // TER = 10/200 = 0.05.
    assert_eq!(c.ter.value, Some(10.0 / 200.0));
    assert_eq!(format!("{:.2}", c.ter.value.unwrap()), "0.05");
    // RR = 138/190 ≈ 0.7263.
    let rr = c.rr.value.unwrap();
    assert_eq!(rr, 138.0 / 190.0);
    assert_eq!(format!("{rr:.4}"), "0.7263");
    // Final success (10 + 138)/200 = 0.74.
    assert_eq!(c.final_success.value, Some(148.0 / 200.0));
    assert_eq!(format!("{:.2}", c.final_success.value.unwrap()), "0.74");
    // Uninterrupted success s = 10/10.
    assert_eq!(c.uninterrupted_success, Some(1.0));
    // 138/148 ≈ 93.2% of the successes came after an invalid prefix.
    let after = c.success_after_failed_prefix.unwrap();
    assert_eq!(after, 138.0 / 148.0);
    assert_eq!(format!("{:.1}%", 100.0 * after), "93.2%");
    // It is (1 − q)·r / P(Y).
    let (q, s, py) = (c.ter.value.unwrap(), 1.0, c.final_success.value.unwrap());
    assert!((after - (1.0 - q) * rr / py).abs() < 1e-12);
    // Eq. 12: P(Y) = q·s + (1 − q)·r = 0.05·1 + 0.95·(138/190) = 0.05 + 0.69 = 0.74.
    assert!((py - (q * s + (1.0 - q) * rr)).abs() < 1e-12);
}

#[test]
fn the_rest_of_the_table_2_row() {
    let report = report(0);
    let c = condition(&report);
    // Mean FED 392/200, AUC-PEC 30/200, RR-Eligible 190, PEC@4 10/200.
    assert_eq!(c.mean_fed.value, Some(1.96));
    assert!((c.auc_pec.value.unwrap() - 0.15).abs() < 1e-15);
    assert_eq!(format!("{:.2}", c.auc_pec.value.unwrap()), "0.15");
    assert_eq!(c.pec[3].k, 4);
    assert_eq!(c.pec[3].value, 0.05);
    // PEC(1) = 162/200 (all but the 38 step-1 failures); PEC(2) = PEC(3) = PEC(4) = 10/200.
    assert_eq!(c.pec[0].value, 162.0 / 200.0);
    assert_eq!(c.pec[1].value, 0.05);
    // n_4 = #{T ≥ 4} = 10 + 144 + 8 = 162; n_5 = 144.
    assert_eq!((c.pec[3].n_k, c.pec[4].n_k), (162, 144));
    assert_eq!(c.pec[4].value, 0.0);
    // Labels: 144 precondition, 8 schema, 38 unlabeled = 190.
    let labels = c.first_failure_labels.entries();
    assert_eq!(labels[0], ("schema", 8));
    assert_eq!(labels[2], ("precondition", 144));
    assert_eq!(labels[6], ("unlabeled", 38));
}

#[test]
fn rr_wilson_interval_matches_statsmodels() {
    // statsmodels.stats.proportion.proportion_confint(138, 190, method="wilson")
    //   = (0.658906474140098, 0.7847550651570817)
    for bootstrap in [0, 100] {
        let report = report(bootstrap);
        let [lo, hi] = condition(&report).rr.ci.unwrap();
        assert!((lo - 0.658906474140098).abs() < 1e-12, "{lo}");
        assert!((hi - 0.7847550651570817).abs() < 1e-12, "{hi}");
        assert_eq!(format!("[{lo:.4}, {hi:.4}]"), "[0.6589, 0.7848]");
    }
}

#[test]
fn bootstrap_intervals_are_proportions() {
    let report = report(100);
    assert!(report.identity_violations.is_empty());
    let c = condition(&report);
    for e in [c.ter, c.auc_pec, c.final_success] {
        let [lo, hi] = e.ci.unwrap();
        assert!(0.0 <= lo && lo <= hi && hi <= 1.0, "{lo} {hi}");
    }
    let [lo, hi] = c.mean_fed.ci.unwrap();
    assert!(1.0 <= lo && lo <= hi && hi <= 9.0, "{lo} {hi}");
}
