//! Ranks with simultaneous intervals and rank divergence (`../shared/spec/ranks.md`): the
//! method on hand-computed series (two conditions; an exact tie; a pair whose differences never
//! vary; resamples where a condition is undefined; τ_b with ties), the report's entries built
//! from corpora (one condition: no ranks; the bootstrap off; a significant flip), and the
//! report's ranks against an independent re-computation from the dataset's own resamples.

mod common;

use common::*;
use prefix_exec::ingest::read_files;
use prefix_exec::report::{build_report, RankTable, Report, Settings};
use prefix_exec::score::{aggregate_with, MaxDepth};
use prefix_exec::stats::bootstrap::{bootstrap_block, STAT_AUC, STAT_SUCCESS, STAT_TER};
use prefix_exec::stats::ranks::{
    discordant_pairs, kendall_tau_b, point_ranks, simultaneous_intervals, tau_b_interval,
};
use proptest::prelude::*;

const NAN: f64 = f64::NAN;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

// ------------------------------------------------------------------------------------------
// The method, on series written out by hand (4 or 5 resamples).
// ------------------------------------------------------------------------------------------

/// θ = (0.6, 0.4): d = 0.2. Resampled differences 0.3, 0.2, 0.1, 0.4, so d* − d = 0.1, 0, −0.1,
/// 0.2: mean 0.05, s² = (0.0025 + 0.0025 + 0.0225 + 0.0225)/3 = 0.05/3, and t* = |d* − d|/s =
/// √0.6 · (1, 0, 1, 2) (0.1/s = √(0.01 · 3/0.05)). The 95th type-7 percentile of (0, 1, 1, 2)·√0.6:
/// h = 3 · 0.95 = 2.85, so c = (1 + 0.85 · (2 − 1)) · √0.6 = 1.85 √0.6, and c · s = 0.185 < 0.2:
/// the first condition certainly ranks above the second, both intervals a single rank.
#[test]
fn two_conditions() {
    let values = [0.6, 0.4];
    let resampled = vec![vec![0.7, 0.6, 0.5, 0.6], vec![0.4, 0.4, 0.4, 0.2]];
    let x = simultaneous_intervals(&values, &resampled, 0.95);
    assert!(close(x.critical_value.unwrap(), 1.85 * 0.6f64.sqrt()));
    assert!(x.above(0, 1) && !x.above(1, 0));
    assert_eq!((x.rank_lo, x.rank_hi), (vec![1, 2], vec![1, 2]));
    assert_eq!(point_ranks(&values), [1, 2]);
    // At level 0.5, c = (1 + 0.5 · 0) · √0.6 (h = 1.5 between two equal order statistics).
    let half = simultaneous_intervals(&values, &resampled, 0.5);
    assert!(close(half.critical_value.unwrap(), 0.6f64.sqrt()));
}

/// Two conditions with the same value (and the same series) share rank 1 and neither is ever
/// certainly above the other; the third is certainly below both only if its differences say so.
#[test]
fn an_exact_tie() {
    let values = [0.5, 0.5, 0.25];
    let tied = vec![0.5, 0.75, 0.25, 0.5];
    // The third condition moves with the others (0.25 below on every resample): zero spread.
    let resampled = vec![tied.clone(), tied, vec![0.25, 0.5, 0.0, 0.25]];
    let x = simultaneous_intervals(&values, &resampled, 0.95);
    assert_eq!(point_ranks(&values), [1, 1, 3]);
    assert!(!x.above(0, 1) && !x.above(1, 0));
    assert!(x.above(0, 2) && x.above(1, 2));
    // Every pair has zero spread: no resample has a pair to standardise, no critical value.
    assert_eq!(x.critical_value, None);
    assert_eq!((x.rank_lo, x.rank_hi), (vec![1, 1, 3], vec![2, 2, 3]));
}

/// A always 1, B always 0, C = 0.25, 0.5, 0.75, 0.5 (θ_C = 0.5). The pair A–B never varies
/// (s = 0): A is above B because d = 1 > 0, and it adds nothing to t*. A–C and C–B both have
/// d* − d = 0.25, 0, −0.25, 0: s² = 0.125/3, t* = (1, 0, 1, 0) · 0.25/s; c = 0.25/s (h = 2.85
/// between two equal order statistics), c · s = 0.25 < 0.5 = d_AC = d_CB. So A > C > B, every
/// interval a single rank.
#[test]
fn a_pair_with_zero_spread() {
    let values = [1.0, 0.0, 0.5];
    let resampled = vec![vec![1.0; 4], vec![0.0; 4], vec![0.25, 0.5, 0.75, 0.5]];
    let x = simultaneous_intervals(&values, &resampled, 0.95);
    let s = (0.125f64 / 3.0).sqrt();
    assert!(close(x.critical_value.unwrap(), 0.25 / s));
    assert!(x.above(0, 1) && x.above(0, 2) && x.above(2, 1));
    assert_eq!((x.rank_lo, x.rank_hi), (vec![1, 3, 2], vec![1, 3, 2]));
}

/// A is undefined on resample 1, B on resample 4: the pair's differences are those of resamples
/// 0, 2, 3 — d* = 0, 0.3, 0.1 against d = 0.2, so d* − d = −0.2, 0.1, −0.1: mean −0.2/3,
/// s² = 0.07/3 — and t* has three values, 0.2/s, 0.1/s, 0.1/s (resamples 1 and 4 have no
/// pair and are dropped). h = 2 · 0.95 = 1.9: c = (0.1 + 0.9 · 0.1)/s = 0.19/s, c · s = 0.19 <
/// 0.2: A certainly ranks above B.
#[test]
fn resamples_where_a_condition_is_undefined() {
    let values = [0.6, 0.4];
    let resampled = vec![vec![0.5, NAN, 0.7, 0.6, 0.4], vec![0.5, 0.4, 0.4, 0.5, NAN]];
    let x = simultaneous_intervals(&values, &resampled, 0.95);
    let s = (0.07f64 / 3.0).sqrt();
    assert!(close(x.critical_value.unwrap(), 0.19 / s));
    assert!(x.above(0, 1));
    // Defined together on one resample only: no spread, nothing certain, no critical value.
    let once = vec![vec![0.5, NAN, 0.7], vec![0.5, 0.4, NAN]];
    let y = simultaneous_intervals(&values, &once, 0.95);
    assert_eq!(y.critical_value, None);
    assert_eq!((y.rank_lo, y.rank_hi), (vec![1, 1], vec![2, 2]));
}

/// Success (0.5, 0.5, 0.7, 0.2) and TER (0.3, 0.6, 0.6, 0.4): pair (0,1) is tied in success and
/// (1,2) in TER; (0,2), (1,3), (2,3) are concordant and (0,3) discordant (0 ahead on success,
/// 3 on TER). τ_b = (3 − 1)/√5/√5 = 0.4 (5 pairs untied in each). Over four resamples: the point
/// values again (0.4); success constant (τ_b undefined, left out); one condition undefined (left
/// out); a perfect agreement (1). Interval of (0.4, 1) at 95%: 0.4 + 0.025 · 0.6 = 0.415 and
/// 1 − 0.025 · 0.6 = 0.985.
#[test]
fn tau_b_with_ties() {
    let success = [0.5, 0.5, 0.7, 0.2];
    let ter = [0.3, 0.6, 0.6, 0.4];
    assert_eq!(
        kendall_tau_b(&success, &ter),
        Some(2.0 / 5f64.sqrt() / 5f64.sqrt())
    );
    assert_eq!(discordant_pairs(&success, &ter), [(0, 3)]);
    let by_condition = |resamples: [[f64; 4]; 4]| -> Vec<Vec<f64>> {
        (0..4)
            .map(|c| resamples.iter().map(|r| r[c]).collect())
            .collect()
    };
    let x = by_condition([
        success,
        [0.5; 4],
        [0.5, NAN, 0.7, 0.2],
        [0.1, 0.2, 0.3, 0.4],
    ]);
    let y = by_condition([
        ter,
        [0.1, 0.2, 0.3, 0.4],
        [0.3, 0.6, 0.6, 0.4],
        [0.1, 0.2, 0.3, 0.4],
    ]);
    let [lo, hi] = tau_b_interval(&x, &y, 0.95).unwrap();
    assert!(close(lo, 0.415) && close(hi, 0.985), "{lo} {hi}");
    // Constant: undefined.
    assert_eq!(kendall_tau_b(&[0.5; 4], &ter), None);
}

// ------------------------------------------------------------------------------------------
// The report's entries.
// ------------------------------------------------------------------------------------------

fn table<'r>(report: &'r Report, dataset: &str, metric: &str) -> &'r RankTable {
    report
        .ranks
        .iter()
        .find(|t| t.dataset == dataset && t.metric == metric)
        .unwrap_or_else(|| panic!("no {metric} ranks for {dataset}"))
}

/// `tasks` tasks of condition (model, method) in dataset `d`: success and a one-step rollout
/// that executes or not, as given per task.
fn condition(
    d: &str,
    model: &str,
    method: &str,
    tasks: usize,
    f: impl Fn(usize) -> (bool, bool),
) -> Vec<Ro> {
    (0..tasks)
        .map(|t| {
            let (success, ok) = f(t);
            ro(
                d,
                &format!("t{t:02}"),
                model,
                method,
                success,
                if ok { "+" } else { "-" },
            )
        })
        .collect()
}

/// K = 1: a dataset of one condition has no ranks; the other dataset's two conditions do.
#[test]
fn one_condition_has_no_ranks() {
    let mut rows = condition("alone", "m", "a", 5, |t| (t % 2 == 0, true));
    rows.extend(condition("pair", "m", "a", 5, |t| (t % 2 == 0, true)));
    rows.extend(condition("pair", "m", "b", 5, |t| (t % 3 == 0, t > 0)));
    let report = score(&jsonl(&rows), &settings(200, 3));
    assert!(report.ranks.iter().all(|t| t.dataset == "pair"));
    assert_eq!(report.ranks.len(), 3);
    assert_eq!(report.rank_divergence.len(), 2);
    let only = score(&jsonl(&rows[..5]), &settings(200, 3));
    assert!(only.ranks.is_empty() && only.rank_divergence.is_empty());
    let json: serde_json::Value = serde_json::from_str(&only.to_json()).unwrap();
    assert_eq!(json["ranks"], serde_json::json!([]));
    assert_eq!(json["rank_divergence"], serde_json::json!([]));
}

/// A succeeds on every task without executing any step, B executes every step and never
/// succeeds: on every resample A is 1 and B 0 in success, and the other way round in TER and
/// AUC-PEC. Each pair never varies (s = 0, no critical value), so each order is certain: a
/// significant flip, τ_b = −1 (two conditions in opposite orders) with the interval (−1, −1).
#[test]
fn a_significant_flip() {
    let mut rows = condition("d", "A", "m", 20, |_| (true, false));
    rows.extend(condition("d", "B", "m", 20, |_| (false, true)));
    let report = score(&jsonl(&rows), &settings(500, 3));
    for metric in ["final_success", "ter", "auc_pec"] {
        let t = table(&report, "d", metric);
        assert_eq!(t.critical_value, None, "{metric}");
        let ahead = if metric == "final_success" { "A" } else { "B" };
        assert_eq!(t.above.len(), 1);
        assert_eq!(t.above[0][0][0], ahead);
        for c in &t.conditions {
            let first = c.model == ahead;
            assert_eq!(c.rank, if first { 1 } else { 2 });
            assert_eq!((c.rank_lo, c.rank_hi), (Some(c.rank), Some(c.rank)));
            assert_eq!(c.top(), first);
        }
    }
    for d in &report.rank_divergence {
        assert_eq!(d.kendall_tau_b.value, Some(-1.0));
        assert_eq!(d.kendall_tau_b.ci, Some([-1.0, -1.0]));
        assert_eq!(d.discordant.len(), 1);
        let p = &d.discordant[0];
        assert!(p.significant);
        assert_eq!(p.ahead_on_success, ["A".to_string(), "m".to_string()]);
        assert_eq!(p.ahead_on_prefix().unwrap()[0], "B");
    }
    let json = report.to_json();
    assert!(json.contains("\"ahead_on_ter\"") && json.contains("\"ahead_on_auc_pec\""));
    // The CLI's text names the flip.
    let text = prefix_exec::report::table::render_text(&report, 2);
    assert!(
        text.contains("Final success vs TER: τ_b -1.00 [-1.00, -1.00]; 1 discordant pair, 1 significant:\n    A / m ahead on final success, B / m ahead on TER\n"),
        "{text}"
    );
}

/// With the bootstrap off: point ranks (ties sharing the best), no interval, no critical value,
/// nothing certain, τ_b without an interval, no flip significant.
#[test]
fn bootstrap_off_gives_point_ranks_only() {
    let mut rows = condition("d", "A", "m", 4, |t| (t < 3, t < 1));
    rows.extend(condition("d", "B", "m", 4, |t| (t < 1, t < 4)));
    rows.extend(condition("d", "C", "m", 4, |t| (t < 3, t < 2)));
    let report = score(&jsonl(&rows), &settings(0, 3));
    let s = table(&report, "d", "final_success");
    let ranks: Vec<usize> = s.conditions.iter().map(|c| c.rank).collect();
    assert_eq!(ranks, [1, 3, 1]); // 0.75, 0.25, 0.75
    assert_eq!(table(&report, "d", "ter").conditions[1].rank, 1); // B: TER 1
    for t in &report.ranks {
        assert_eq!(t.critical_value, None);
        assert!(t.above.is_empty());
        assert!(t
            .conditions
            .iter()
            .all(|c| c.rank_lo.is_none() && c.rank_hi.is_none()));
    }
    for d in &report.rank_divergence {
        assert!(d.kendall_tau_b.value.is_some() && d.kendall_tau_b.ci.is_none());
        assert!(!d.discordant.is_empty() && d.discordant.iter().all(|p| !p.significant));
    }
    // A (0.75, 0.25) and B (0.25, 1) flip on TER; C (0.75, 0.5) and B too; A and C tie on
    // success. τ_b: pairs AB −1, AC 0 (tied), BC −1 → −2/√2/√3.
    let ter = &report.rank_divergence[0];
    assert_eq!(ter.b, "ter");
    assert_eq!(
        ter.kendall_tau_b.value,
        Some(-2.0 / 2f64.sqrt() / 3f64.sqrt())
    );
    assert_eq!(ter.discordant.len(), 2);
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    let first = &json["ranks"][0];
    assert!(first["critical_value"].is_null() && first["conditions"][0]["rank_lo"].is_null());
    assert!(json["rank_divergence"][0]["kendall_tau_b"]["ci"].is_null());
}

// ------------------------------------------------------------------------------------------
// The report's ranks against an independent computation from the same resamples.
// ------------------------------------------------------------------------------------------

/// numpy's type-7 percentile by a full sort.
fn type7(mut v: Vec<f64>, p: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * p;
    let j = h.floor() as usize;
    let g = h - j as f64;
    let (a, b) = (v[j], v[(j + 1).min(v.len() - 1)]);
    Some(a + (b - a) * g)
}

/// The spec's definitions, written plainly: two-pass standard deviations, every pair, every
/// resample. Returns (critical value, above as (i, j) pairs).
#[allow(clippy::needless_range_loop)] // indices as the definitions write them
fn oracle(values: &[f64], series: &[Vec<f64>], level: f64) -> (Option<f64>, Vec<(usize, usize)>) {
    let k = values.len();
    let b = series[0].len();
    let mut spreads = Vec::new();
    for i in 0..k {
        for j in i + 1..k {
            let d: Vec<f64> = (0..b)
                .map(|r| series[i][r] - series[j][r])
                .filter(|x| !x.is_nan())
                .collect();
            let s = if d.len() < 2 {
                None
            } else {
                let mean = d.iter().sum::<f64>() / d.len() as f64;
                let ss: f64 = d.iter().map(|x| (x - mean) * (x - mean)).sum();
                Some((ss / (d.len() - 1) as f64).sqrt())
            };
            spreads.push((i, j, s));
        }
    }
    let tol = 1e-12;
    let mut t = Vec::new();
    for r in 0..b {
        let mut max: Option<f64> = None;
        for &(i, j, s) in &spreads {
            let Some(s) = s.filter(|&s| s > tol) else {
                continue;
            };
            let dev = series[i][r] - series[j][r] - (values[i] - values[j]);
            if !dev.is_nan() {
                max = Some(max.map_or(dev.abs() / s, |m: f64| m.max(dev.abs() / s)));
            }
        }
        t.extend(max);
    }
    let c = type7(t, level);
    let mut above = Vec::new();
    for &(i, j, s) in &spreads {
        let Some(s) = s else { continue };
        let d = values[i] - values[j];
        let margin = if s > tol { c.unwrap() * s } else { tol };
        if d > margin {
            above.push((i, j));
        } else if -d > margin {
            above.push((j, i));
        }
    }
    above.sort();
    (c, above)
}

/// Six conditions of 40 tasks, one with only 3 tasks (so it is undefined on many resamples);
/// outcomes from a fixed hash. The report's critical values, certain pairs and τ_b intervals
/// equal the oracle's on the block's own bootstrap (same seed, same draws).
#[test]
fn ranks_match_an_independent_computation_on_the_same_resamples() {
    let mut rows = Vec::new();
    let hash = |a: usize, b: usize| (a * 2654435761 + b * 40503 + 17) % 1000;
    for c in 0..6usize {
        let tasks = if c == 5 { 3 } else { 40 };
        for t in 0..tasks {
            let strength = 300 + 100 * c;
            let success = hash(c, t) < strength;
            let ok = hash(t, c + 11) < 1000 - strength / 2;
            let steps = if ok { "++" } else { "+-" };
            rows.push(ro(
                "d",
                &format!("t{t:02}"),
                "m",
                &format!("m{c}"),
                success,
                steps,
            ));
        }
    }
    let text = jsonl(&rows);
    let corpus = read_files([("runs.jsonl", text.as_bytes())]);
    let settings = Settings {
        bootstrap: 700,
        seed: 3,
        max_depth: MaxDepth::Fixed(3),
        ..Settings::default()
    };
    let report = build_report(&corpus, &settings);
    let agg = aggregate_with(&corpus, settings.max_depth, 700);
    let samples = bootstrap_block(&agg.blocks[0], 700, 3, &mut |_| {});
    let series = |stat: usize| -> Vec<Vec<f64>> {
        (0..6).map(|c| samples.series(c, stat).collect()).collect()
    };
    let mut undefined = 0;
    for (metric, stat) in [
        ("final_success", STAT_SUCCESS),
        ("ter", STAT_TER),
        ("auc_pec", STAT_AUC),
    ] {
        let t = table(&report, "d", metric);
        let values: Vec<f64> = t.conditions.iter().map(|c| c.value.unwrap()).collect();
        let s = series(stat);
        undefined = s[5].iter().filter(|v| v.is_nan()).count();
        let (c, above) = oracle(&values, &s, 0.95);
        assert!(close(t.critical_value.unwrap(), c.unwrap()), "{metric}");
        let name = |i: usize| format!("m{i}");
        let mut got: Vec<(usize, usize)> = t
            .above
            .iter()
            .map(|[a, b]| {
                let at = |p: &[String; 2]| (0..6).find(|&i| p[1] == name(i)).unwrap();
                (at(a), at(b))
            })
            .collect();
        got.sort();
        assert_eq!(got, above, "{metric}");
        assert!(!above.is_empty(), "{metric}: something is certain");
    }
    // (37/40)^40 ≈ 4.4% of the resamples miss all three of its tasks.
    assert!(
        undefined > 10,
        "the 3-task condition is undefined on {undefined} resamples"
    );
    // τ_b's interval: on the resamples where all six are defined.
    for d in &report.rank_divergence {
        let (sa, sb) = (
            series(STAT_SUCCESS),
            series(if d.b == "ter" { STAT_TER } else { STAT_AUC }),
        );
        let mut taus = Vec::new();
        for r in 0..700 {
            let x: Vec<f64> = sa.iter().map(|s| s[r]).collect();
            let y: Vec<f64> = sb.iter().map(|s| s[r]).collect();
            if x.iter().chain(&y).any(|v| v.is_nan()) {
                continue;
            }
            taus.extend(kendall_tau_b(&x, &y));
        }
        assert!(!taus.is_empty() && taus.len() <= 700 - undefined);
        let ci = d.kendall_tau_b.ci.unwrap();
        assert!(close(ci[0], type7(taus.clone(), 0.025).unwrap()));
        assert!(close(ci[1], type7(taus, 0.975).unwrap()));
    }
}

// ------------------------------------------------------------------------------------------
// Properties of the method on random series.
// ------------------------------------------------------------------------------------------

/// `k` conditions' point values and `b` resamples, values on a coarse grid (ties happen),
/// NaN (undefined) with probability `holes`/16.
fn series() -> impl Strategy<Value = (Vec<f64>, Vec<Vec<f64>>)> {
    (2..=6usize, 2..=40usize, 0..4u8).prop_flat_map(|(k, b, holes)| {
        (
            prop::collection::vec(0..=8u8, k),
            prop::collection::vec(prop::collection::vec((0..=8u8, 0..16u8), b), k),
        )
            .prop_map(move |(values, series)| {
                let values: Vec<f64> = values.iter().map(|&v| f64::from(v) / 8.0).collect();
                let series = series
                    .iter()
                    .map(|s| {
                        s.iter()
                            .map(|&(v, h)| if h < holes { NAN } else { f64::from(v) / 8.0 })
                            .collect()
                    })
                    .collect();
                (values, series)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// rank_lo ≤ rank ≤ rank_hi; "certainly above" is antisymmetric, and transitive where no
    /// value is undefined; a higher level never narrows an interval.
    #[test]
    fn intervals_bracket_ranks_and_above_is_an_order((values, series) in series(), level in 0.5..0.99f64) {
        let k = values.len();
        let x = simultaneous_intervals(&values, &series, level);
        let ranks = point_ranks(&values);
        for (i, &rank) in ranks.iter().enumerate() {
            prop_assert!(x.rank_lo[i] <= rank && rank <= x.rank_hi[i]);
            for j in 0..k {
                prop_assert!(!(x.above(i, j) && x.above(j, i)));
            }
        }
        if series.iter().flatten().all(|v| !v.is_nan()) {
            for i in 0..k {
                for j in 0..k {
                    for l in 0..k {
                        if x.above(i, j) && x.above(j, l) {
                            prop_assert!(x.above(i, l), "{i} > {j} > {l}");
                        }
                    }
                }
            }
        }
        let wider = simultaneous_intervals(&values, &series, (level + 0.01).min(0.999));
        for i in 0..k {
            prop_assert!(wider.rank_lo[i] <= x.rank_lo[i] && wider.rank_hi[i] >= x.rank_hi[i]);
        }
    }

    /// τ_b and its interval lie in [−1, 1].
    #[test]
    fn tau_b_lies_in_minus_one_one((values, series) in series(), (other, others) in series()) {
        let k = values.len().min(other.len());
        if let Some(tau) = kendall_tau_b(&values[..k], &other[..k]) {
            prop_assert!((-1.0..=1.0).contains(&tau));
        }
        let b = series[0].len().min(others[0].len());
        let cut = |s: &[Vec<f64>]| -> Vec<Vec<f64>> { s[..k].iter().map(|v| v[..b].to_vec()).collect() };
        if let Some([lo, hi]) = tau_b_interval(&cut(&series), &cut(&others), 0.95) {
            prop_assert!(-1.0 <= lo && lo <= hi && hi <= 1.0);
        }
    }
}
