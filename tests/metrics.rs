//! Hand-computed metrics (`/work/shared/spec/metrics.md`, eqs. 1–12) on tiny corpora.
//!
//! Every case is data: rollouts in the compact step notation of `common` and the expected
//! summary, with the arithmetic behind each number in the comments. Unless a case says otherwise
//! the bootstrap is off, so the only interval is RR's Wilson interval.

mod common;

use common::*;
use prefix_exec::ingest::read_files;
use prefix_exec::report::Settings;
use prefix_exec::score::{aggregate, MaxDepth};
use prefix_exec::stats::bootstrap::{bootstrap_block, STAT_SUCCESS, STAT_TER};

/// Scores `rows` with `settings` and compares the summary of every condition with `expected`.
fn check(rows: &[Ro], settings: &Settings, expected: &str) {
    let report = score(&jsonl(rows), settings);
    assert!(
        report.identity_violations.is_empty(),
        "{:?}",
        report.identity_violations
    );
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
    assert_text(&summarize(&report), expected);
}

#[test]
fn mixed_condition() {
    // t1 "+++" ✓: T=3, FED=4 (fully executable), (FED−1)/T = 3/3 = 1
    // t2 "+e+" ✓: T=3, FED=2 (rejected through its error text, unlabeled), 1/3; recovered
    // t3 "s"   ✗: T=1, FED=1 (failure at step 1, schema), 0
    // t4 "++p" ✗: T=3, FED=3 (failure at the last step, precondition), 2/3
    // N=4. TER = 1/4. mean FED = (4+2+1+3)/4 = 10/4 = 5/2. AUC = (1 + 1/3 + 0 + 2/3)/4 = 2/4.
    // final success = 2/4. RR-Eligible = 3, RR = 1/3, s = 1/1, after = recovered/successes = 1/2.
    // PEC(1) = #{FED>1}/N = 3/4, n_1 = 4, elig = 3/4, ff(1) = 1 (t3), ended before 1: 0.
    // PEC(2) = #{4,3}/4 = 1/2, n_2 = #{T≥2} = 3, elig = 2/3, ff(2) = 1 (t2), ended = 1 (t3).
    // PEC(3) = #{4}/4 = 1/4, n_3 = 3, elig = 1/3, ff(3) = 1 (t4), ended = 1.
    // PEC(4): beyond every horizon: 0, n_4 = 0, elig undefined, ended = 4.
    check(
        &[
            ro("d", "t1", "m", "a", true, "+++"),
            ro("d", "t2", "m", "a", true, "+e+"),
            ro("d", "t3", "m", "a", false, "s"),
            ro("d", "t4", "m", "a", false, "++p"),
        ],
        &settings(0, 4),
        "
        d/m/a n=4 tasks=4 T_max=3
        ter=1/4 fed=5/2 auc=1/2 y=1/2
        full=1 succ=2 rr_elig=3 rec=1 rr=1/3 s=1 after=1/2
        k=1 pec=3/4 n_k=4 elig=3/4 surv=3 ff=1 ended=0
        k=2 pec=1/2 n_k=3 elig=2/3 surv=2 ff=1 ended=1
        k=3 pec=1/4 n_k=3 elig=1/3 surv=1 ff=1 ended=1
        k=4 pec=0 n_k=0 elig=null surv=0 ff=0 ended=4
        labels: schema=1 precondition=1 unlabeled=1
        cost:
        ci: rr
        ",
    );
}

#[test]
fn rr_wilson_interval_is_on_rr_eligible() {
    // 1 recovered of RR-Eligible 3 (the mixed condition above).
    let rows = [
        ro("d", "t1", "m", "a", true, "+++"),
        ro("d", "t2", "m", "a", true, "+e+"),
        ro("d", "t3", "m", "a", false, "s"),
        ro("d", "t4", "m", "a", false, "++p"),
    ];
    for bootstrap in [0, 20] {
        let report = score(&jsonl(&rows), &settings(bootstrap, 4));
        let rr = report.conditions[0].rr;
        let [lo, hi] = rr.ci.expect("RR keeps its Wilson interval");
        let [elo, ehi] = wilson_oracle(1, 3);
        assert!(
            (lo - elo).abs() < 1e-12 && (hi - ehi).abs() < 1e-12,
            "{lo} {hi}"
        );
        assert!(lo < 1.0 / 3.0 && 1.0 / 3.0 < hi);
    }
}

#[test]
fn no_tool_rollouts() {
    // Empty steps = one terminal no-tool action, T = 1.
    // t1 no_tool_ok=true  ✓: FED = 2 (executable), (2−1)/1 = 1
    // t2 no_tool_ok=false ✗: FED = 1, rollout-level label "information"
    // t3 no_tool_ok absent ✓: FED = 1 (absent means false), labelled information by the built-in rule information.no_tool; recovered
    // TER = 1/3, mean FED = (2+1+1)/3 = 4/3, AUC = 1/3, success = 2/3,
    // RR = 1/2, s = 1/1, after = 1/2.
    // PEC(1) = 1/3, n_1 = 3, ff(1) = 2. PEC(2) = 0 with n_2 = 0: elig undefined.
    check(
        &[
            ro("d", "t1", "m", "a", true, "").no_tool_ok(true),
            ro("d", "t2", "m", "a", false, "")
                .no_tool_ok(false)
                .label("information"),
            ro("d", "t3", "m", "a", true, ""),
        ],
        &settings(0, 2),
        "
        d/m/a n=3 tasks=3 T_max=1
        ter=1/3 fed=4/3 auc=1/3 y=2/3
        full=1 succ=2 rr_elig=2 rec=1 rr=1/2 s=1 after=1/2
        k=1 pec=1/3 n_k=3 elig=1/3 surv=1 ff=2 ended=0
        k=2 pec=0 n_k=0 elig=null surv=0 ff=0 ended=3
        labels: information=2
        cost:
        ci: rr
        ",
    );
}

#[test]
fn compact_tuples() {
    // (d, t, m, method, success, oks, no_tool_ok)
    // t1: no tool, allowed ✓ ⇒ T=1, FED=2, 1
    // t2: no tool, not allowed ✗ ⇒ T=1, FED=1, 0 (labelled information: rule information.no_tool)
    // t3: [ok, fail] ✓ ⇒ T=2, FED=2 (last step), 1/2; recovered
    // TER = 1/3, mean FED = 5/3, AUC = (1 + 0 + 1/2)/3 = 1/2, success 2/3, RR = 1/2, s = 1.
    // PEC(1) = #{2,2}/3 = 2/3 (ff: t2); PEC(2) = 0, n_2 = 1 (t3), elig 0/1, ff: t3.
    let rows = from_tuples(&[
        ("d", "t1", "m", "a", true, &[], true),
        ("d", "t2", "m", "a", false, &[], false),
        ("d", "t3", "m", "a", true, &[true, false], false),
    ]);
    check(
        &rows,
        &settings(0, 2),
        "
        d/m/a n=3 tasks=3 T_max=2
        ter=1/3 fed=5/3 auc=1/2 y=2/3
        full=1 succ=2 rr_elig=2 rec=1 rr=1/2 s=1 after=1/2
        k=1 pec=2/3 n_k=3 elig=2/3 surv=2 ff=1 ended=0
        k=2 pec=0 n_k=1 elig=0 surv=0 ff=1 ended=2
        labels: information=1 unlabeled=1
        cost:
        ci: rr
        ",
    );
}

#[test]
fn all_executable_leaves_rr_undefined() {
    // t1 "++" ✓ FED=3; t2 "+" ✗ FED=2; t3 "+.+" ✓ FED=4 (a step without ok or error executes).
    // TER = 3/3, mean FED = 9/3 = 3, AUC = 1, success 2/3. RR-Eligible 0 ⇒ RR and its interval
    // undefined; s = 2/3; after = 0 recovered / 2 successes = 0.
    // PEC(1) = 3/3; PEC(2) = #{3,4}/3 = 2/3, n_2 = 2 (t1, t3), elig 2/2; PEC(3) = #{4}/3 = 1/3,
    // n_3 = 1, elig 1/1.
    let rows = [
        ro("d", "t1", "m", "a", true, "++"),
        ro("d", "t2", "m", "a", false, "+"),
        ro("d", "t3", "m", "a", true, "+.+"),
    ];
    check(
        &rows,
        &settings(0, 3),
        "
        d/m/a n=3 tasks=3 T_max=3
        ter=1 fed=3 auc=1 y=2/3
        full=3 succ=2 rr_elig=0 rec=0 rr=null s=2/3 after=0
        k=1 pec=1 n_k=3 elig=1 surv=3 ff=0 ended=0
        k=2 pec=2/3 n_k=2 elig=1 surv=2 ff=0 ended=1
        k=3 pec=1/3 n_k=1 elig=1 surv=1 ff=0 ended=2
        labels:
        cost:
        ci:
        ",
    );
    // Even with the bootstrap on, RR stays undefined.
    let report = score(&jsonl(&rows), &settings(30, 3));
    let c = &report.conditions[0];
    assert_eq!((c.rr.value, c.rr.ci), (None, None));
    assert!(c.ter.ci.is_some());
}

#[test]
fn no_success_and_nothing_executable() {
    // t1 "-" ✗ FED=1; t2 "+-" ✗ FED=2. TER 0, mean FED 3/2, AUC = (0 + 1/2)/2 = 1/4,
    // success 0, RR = 0/2, s undefined (nothing fully executable), after undefined (no success).
    // PEC(1) = 1/2 (n_1 = 2), PEC(2) = 0 (n_2 = 1, elig 0/1), PEC(3), PEC(4): n_k = 0.
    check(
        &[
            ro("d", "t1", "m", "a", false, "-"),
            ro("d", "t2", "m", "a", false, "+-"),
        ],
        &settings(0, 4),
        "
        d/m/a n=2 tasks=2 T_max=2
        ter=0 fed=3/2 auc=1/4 y=0
        full=0 succ=0 rr_elig=2 rec=0 rr=0 s=null after=null
        k=1 pec=1/2 n_k=2 elig=1/2 surv=1 ff=1 ended=0
        k=2 pec=0 n_k=1 elig=0 surv=0 ff=1 ended=1
        k=3 pec=0 n_k=0 elig=null surv=0 ff=0 ended=2
        k=4 pec=0 n_k=0 elig=null surv=0 ff=0 ended=2
        labels: unlabeled=2
        cost:
        ci: rr
        ",
    );
}

#[test]
fn first_failure_labels() {
    // Only the first failing step's label counts: "-s" is unlabeled (step 2's label is past FED),
    // and a fully executable no-tool rollout has no first failure whatever its label.
    // First failures: unlabeled, dependency (step 2), state, information, precondition (step 2),
    // schema, unlabeled ⇒ 7 = RR-Eligible.
    // FEDs: 1, 2, 1, 1, 2, 1, 1, and 2 for the no-tool one (T=1). Sum 11, N = 8.
    // AUC: 0 + 1/3 + 0 + 0 + 1/2 + 0 + 0 + 1 = 11/6, / 8 = 11/48.
    // PEC(1) = #{FED>1} = 3 of 8; n_2 = #{T≥2} = 4 ("-s", "+d-", "i+", "+p"), #{FED>2} = 0;
    // first failures at 1: 5, at 2: 2.
    check(
        &[
            ro("d", "t1", "m", "a", false, "-s"),
            ro("d", "t2", "m", "a", false, "+d-"),
            ro("d", "t3", "m", "a", false, "t"),
            ro("d", "t4", "m", "a", false, "i+"),
            ro("d", "t5", "m", "a", false, "+p"),
            ro("d", "t6", "m", "a", false, "s"),
            ro("d", "t7", "m", "a", false, "e"),
            ro("d", "t8", "m", "a", true, "")
                .no_tool_ok(true)
                .label("schema"),
        ],
        &settings(0, 2),
        "
        d/m/a n=8 tasks=8 T_max=3
        ter=1/8 fed=11/8 auc=11/48 y=1/8
        full=1 succ=1 rr_elig=7 rec=0 rr=0 s=1 after=0
        k=1 pec=3/8 n_k=8 elig=3/8 surv=3 ff=5 ended=0
        k=2 pec=0 n_k=4 elig=0 surv=0 ff=2 ended=4
        labels: schema=1 dependency=1 precondition=1 state=1 information=1 unlabeled=2
        cost:
        ci: rr
        ",
    );
}

#[test]
fn repeated_rollouts_of_a_task_all_count() {
    // t1 twice: "++" ✓ (FED=3, 1) and "-+" ✓ (FED=1, 0; recovered); t2 "+-" ✗ (FED=2, 1/2).
    // N = 3 (not 2 tasks). TER 1/3, mean FED 6/3 = 2, AUC (1 + 0 + 1/2)/3 = 1/2, success 2/3,
    // RR = 1/2, s = 1, after = 1/2. PEC(1) = #{3,2}/3, PEC(2) = #{3}/3.
    let rows = [
        ro("d", "t1", "m", "a", true, "++"),
        ro("d", "t1", "m", "a", true, "-+"),
        ro("d", "t2", "m", "a", false, "+-"),
    ];
    check(
        &rows,
        &settings(0, 2),
        "
        d/m/a n=3 tasks=2 T_max=2
        ter=1/3 fed=2 auc=1/2 y=2/3
        full=1 succ=2 rr_elig=2 rec=1 rr=1/2 s=1 after=1/2
        k=1 pec=2/3 n_k=3 elig=2/3 surv=2 ff=1 ended=0
        k=2 pec=1/3 n_k=3 elig=1/3 surv=1 ff=1 ended=0
        labels: unlabeled=2
        cost:
        ci: rr
        ",
    );
}

#[test]
fn a_drawn_task_brings_all_its_rollouts() {
    // Same corpus. A resample of 2 tasks is {t1,t1}, {t1,t2} or {t2,t2}; t1 brings both its
    // rollouts (1 fully executable of 2), t2 its one (0 of 1), so TER in a resample is
    // 2/4 = 1/2, (1+0)/(2+1) = 1/3 or 0. A rollout-level draw would also give 2/3 or 1, and a
    // draw of one rollout per task would give 1 and never 1/3.
    let rows = [
        ro("d", "t1", "m", "a", true, "++"),
        ro("d", "t1", "m", "a", true, "-+"),
        ro("d", "t2", "m", "a", false, "+-"),
    ];
    let text = jsonl(&rows);
    let corpus = read_files([("runs.jsonl", text.as_bytes())]);
    let agg = aggregate(&corpus, MaxDepth::Fixed(2));
    assert_eq!(agg.blocks.len(), 1);
    let samples = bootstrap_block(&agg.blocks[0], 400, 1, &mut |_| {});
    let ter: Vec<f64> = samples.series(0, STAT_TER).collect();
    let allowed = [0.0, 1.0 / 3.0, 0.5];
    for &v in &ter {
        assert!(allowed.contains(&v), "TER {v} in a resample");
    }
    for a in allowed {
        assert!(ter.contains(&a), "TER {a} never drawn in 400 resamples");
    }
    // Success: {t1,t1} 4/4, {t1,t2} 2/3, {t2,t2} 0.
    for v in samples.series(0, STAT_SUCCESS) {
        assert!([1.0, 2.0 / 3.0, 0.0].contains(&v), "success {v}");
    }
    // Through the report: the 2.5% and 97.5% percentiles of {0 (¼), 1/3 (½), 1/2 (¼)}.
    let report = score(&text, &settings(400, 2));
    assert_eq!(report.conditions[0].ter.ci, Some([0.0, 0.5]));
    // Mean FED is 2 in every resample: (3+1)·2/4, (3+1+2)/3, 2·2/2.
    assert_eq!(report.conditions[0].mean_fed.ci, Some([2.0, 2.0]));
}

#[test]
fn a_task_missing_from_a_condition() {
    // d/m/a ran t1 ("+" ✓, FED 2) and t2 ("-" ✗, FED 1); d/m/b ran only t1 ("-" ✓, recovered).
    // a: N 2, TER 1/2, mean FED 3/2, AUC 1/2, success 1/2, RR 0/1, s 1, after 0.
    // b: N 1, TER 0, mean FED 1, AUC 0, success 1, RR 1/1, s undefined, after 1.
    let rows = [
        ro("d", "t1", "m", "a", true, "+"),
        ro("d", "t2", "m", "a", false, "-"),
        ro("d", "t1", "m", "b", true, "-"),
    ];
    check(
        &rows,
        &settings(0, 1),
        "
        d/m/a n=2 tasks=2 T_max=1
        ter=1/2 fed=3/2 auc=1/2 y=1/2
        full=1 succ=1 rr_elig=1 rec=0 rr=0 s=1 after=0
        k=1 pec=1/2 n_k=2 elig=1/2 surv=1 ff=1 ended=0
        labels: unlabeled=1
        cost:
        ci: rr

        d/m/b n=1 tasks=1 T_max=1
        ter=0 fed=1 auc=0 y=1
        full=0 succ=1 rr_elig=1 rec=1 rr=1 s=null after=1
        k=1 pec=0 n_k=1 elig=0 surv=0 ff=1 ended=0
        labels: unlabeled=1
        cost:
        ci: rr
        ",
    );
    // The dataset's tasks are {t1, t2}; a resample that misses t1 leaves b empty (undefined,
    // skipped), and that is exactly the resample {t2, t2}, where a's TER is 0.
    let text = jsonl(&rows);
    let corpus = read_files([("runs.jsonl", text.as_bytes())]);
    let agg = aggregate(&corpus, MaxDepth::Fixed(1));
    assert_eq!(agg.blocks[0].tasks.len(), 2);
    let samples = bootstrap_block(&agg.blocks[0], 200, 3, &mut |_| {});
    let a: Vec<f64> = samples.series(0, STAT_TER).collect();
    let b: Vec<f64> = samples.series(1, STAT_TER).collect();
    assert!(b.iter().any(|v| v.is_nan()) && b.iter().any(|v| !v.is_nan()));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(y.is_nan(), *x == 0.0, "a {x}, b {y}");
        assert!(y.is_nan() || *y == 0.0);
    }
    // Where defined, b's statistics are constant: degenerate intervals.
    let report = score(&text, &settings(200, 1));
    let b = &report.conditions[1];
    assert_eq!(b.ter.ci, Some([0.0, 0.0]));
    assert_eq!(b.final_success.ci, Some([1.0, 1.0]));
    assert_eq!(b.pec[0].ci, Some([0.0, 0.0]));
}

#[test]
fn mean_costs_per_condition() {
    // a: tokens 100, 200 and one rollout without ⇒ mean 150 over the 2 that report it;
    //    latency 1.5 on one rollout ⇒ 3/2.
    // b: no tokens although a has some ⇒ tokens null; latency (3 + 4)/2 = 7/2.
    // usd appears nowhere ⇒ the key is absent from every condition.
    let rows = [
        ro("d", "t1", "m", "a", true, "+")
            .tokens(100.0)
            .latency(1.5),
        ro("d", "t2", "m", "a", true, "+").tokens(200.0),
        ro("d", "t3", "m", "a", true, "+"),
        ro("d", "t1", "m", "b", true, "+").latency(3.0),
        ro("d", "t2", "m", "b", true, "+").latency(4.0),
    ];
    let report = score(&jsonl(&rows), &settings(0, 1));
    let costs: Vec<String> = report
        .conditions
        .iter()
        .map(|c| summary(c).lines().nth(5).unwrap().to_string())
        .collect();
    assert_eq!(
        costs,
        [
            "cost: tokens=150 latency_s=3/2",
            "cost: tokens=null latency_s=7/2"
        ]
    );
    let b = &report.conditions[1].cost;
    assert_eq!(
        (b.tokens, b.latency_s, b.usd),
        (Some(None), Some(Some(3.5)), None)
    );
    let json = report.to_json();
    assert!(json.contains("\"tokens\": null"), "{json}");
    assert!(!json.contains("\"usd\""), "{json}");
    // Without any cost field the object is empty.
    let report = score(
        &jsonl(&[ro("d", "t1", "m", "a", true, "+")]),
        &settings(0, 1),
    );
    assert!(report.to_json().contains("\"cost\": {}"));
}

#[test]
fn bootstrap_zero_turns_off_every_percentile_interval() {
    let rows = [
        ro("d", "t1", "m", "a", true, "++"),
        ro("d", "t2", "m", "a", true, "-+"),
        ro("d", "t3", "m", "a", false, "+-"),
        ro("d", "t1", "m", "b", false, "+"),
        ro("d", "t2", "m", "b", true, "s"),
        ro("d", "t3", "m", "b", true, "++"),
    ];
    let off = score(&jsonl(&rows), &settings(0, 3));
    for c in &off.conditions {
        for e in [c.ter, c.mean_fed, c.auc_pec, c.final_success] {
            assert_eq!(e.ci, None);
        }
        assert!(c.pec.iter().all(|p| p.ci.is_none()));
        assert!(c.rr.ci.is_some(), "RR keeps its Wilson interval");
    }
    for p in &off.paired {
        assert!(p.ter.ci.is_none() && p.pec.iter().all(|d| d.ci.is_none()));
        assert!(p.ter.delta.is_some());
    }
    let on = score(&jsonl(&rows), &settings(50, 3));
    for c in &on.conditions {
        assert!(
            summary(c).ends_with("ci: ter fed auc y rr pec×3\n"),
            "{}",
            summary(c)
        );
    }
    // Point estimates do not depend on the bootstrap.
    for (a, b) in off.conditions.iter().zip(&on.conditions) {
        assert_eq!(a.ter.value, b.ter.value);
        assert_eq!(a.rr, b.rr);
    }
}

#[test]
fn max_depth_all_stops_at_the_longest_horizon() {
    // Longest horizon 5 (in b) ⇒ k = 1..=5 for every condition, also for a whose horizons are 1.
    let rows = [
        ro("d", "t1", "m", "a", true, "+"),
        ro("d", "t1", "m", "b", true, "++++-"),
        ro("e", "t1", "m", "a", true, ""),
    ];
    let all = Settings {
        bootstrap: 0,
        max_depth: MaxDepth::All,
        ..Settings::default()
    };
    let report = score(&jsonl(&rows), &all);
    assert_eq!(report.settings.k_max, 5);
    assert_eq!(report.settings.max_depth, serde_json::json!("all"));
    for c in &report.conditions {
        let ks: Vec<usize> = c.pec.iter().map(|p| p.k).collect();
        assert_eq!(ks, [1, 2, 3, 4, 5]);
    }
    // b: FED 5 ⇒ PEC(4) = 1, PEC(5) = 0 with n_5 = 1 and the first failure at 5.
    let b = &report.conditions[1];
    assert_eq!((b.pec[3].value, b.pec[4].value), (1.0, 0.0));
    assert_eq!((b.pec[4].n_k, b.pec[4].first_failures), (1, 1));
    // Only no-tool rollouts: T = 1 everywhere ⇒ k_max = 1.
    let report = score(&jsonl(&rows[2..]), &all);
    assert_eq!(report.settings.k_max, 1);
    assert_eq!(report.conditions[0].pec.len(), 1);
}

#[test]
fn conditions_are_in_name_order_and_datasets_are_separate() {
    // Lines in reverse order; report order is (dataset, model, method) by name. The same task id
    // in two datasets is two tasks.
    let rows = [
        ro("z", "t1", "m2", "b", true, "+"),
        ro("z", "t1", "m1", "b", true, "+"),
        ro("a", "t1", "m2", "a", true, "+"),
        ro("a", "t1", "m1", "b", true, "+"),
        ro("a", "t1", "m1", "a", true, "+"),
    ];
    let report = score(&jsonl(&rows), &settings(0, 1));
    let names: Vec<String> = report
        .conditions
        .iter()
        .map(|c| format!("{}/{}/{}", c.dataset, c.model, c.method))
        .collect();
    assert_eq!(names, ["a/m1/a", "a/m1/b", "a/m2/a", "z/m1/b", "z/m2/b"]);
    // Pairs: methods under one model, then models under one method, then — in dataset z, where
    // each model has a single method (a leaderboard) — every two conditions, dataset by dataset;
    // z's two conditions are one entry (the cross-condition pair, not also a model pair).
    let pairs: Vec<String> = report
        .paired
        .iter()
        .map(|p| format!("{} {} {}-{}", p.dataset, p.compare, p.a, p.b))
        .collect();
    assert_eq!(
        pairs,
        [
            "a methods a-b",
            "a models m1-m2",
            "z conditions m1 / b-m2 / b"
        ]
    );
}
