//! Properties of the report on random corpora: the paper's exact identities, agreement with an
//! independent oracle, interval ranges, determinism, and independence from line order, chunking
//! and interleaved bad lines.
//!
//! Corpora: 1–3 datasets × 1–2 models × 1–3 methods × 1–12 tasks, 0–3 rollouts per task and
//! condition (0 = the task is missing from that condition), 0–8 steps (0 = a no-tool rollout),
//! random step outcomes, labels, successes and costs. Every property runs ≤ 64 cases.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use prefix_exec::ingest::{read_files, Ingest};
use prefix_exec::report::{build_report, ConditionReport, RankTable, Report, ReportPlan, Settings};
use prefix_exec::score::MaxDepth;
use prefix_exec::stats::bootstrap::bootstrap_chunk;
use proptest::prelude::*;

const TOL: f64 = 1e-9;

#[derive(Clone, Debug)]
struct Body {
    success: bool,
    steps: String,
    no_tool_ok: bool,
    label: Option<&'static str>,
    tokens: Option<u32>,
    latency: Option<u32>,
    usd: Option<u32>,
}

/// A step from one random byte: mostly executed, else rejected plainly, through an error text,
/// or with one of the five labels. Byte 0 (where shrinking goes) is an executed step.
fn step(code: u8) -> char {
    match code % 16 {
        0..=8 => '+',
        9 => '.',
        10 => '-',
        11 => 'e',
        _ => ['s', 'd', 'p', 't', 'i'][usize::from(code / 16) % 5],
    }
}

const LABELS: [&str; 5] = [
    "schema",
    "dependency",
    "precondition",
    "state",
    "information",
];

/// One rollout's random content, decoded from a few plain integers (much cheaper to generate in
/// a debug build than a tree of strategies, and it still shrinks towards simple rollouts).
fn body() -> impl Strategy<Value = Body> {
    (any::<[u8; 8]>(), 0..=8usize, any::<u32>(), any::<u16>()).prop_map(
        |(codes, len, bits, tokens)| Body {
            success: bits & 1 == 1,
            steps: codes[..len].iter().map(|&c| step(c)).collect(),
            no_tool_ok: bits >> 1 & 1 == 1,
            label: LABELS.get((bits >> 2) as usize % 6).copied(),
            tokens: (bits >> 5 & 3 != 0).then_some(u32::from(tokens) % 5000),
            latency: ((bits >> 7) % 10 < 3).then_some((bits >> 16) % 400),
            usd: ((bits >> 11) % 10 == 0).then_some((bits >> 24) % 100),
        },
    )
}

/// A random corpus, as rollouts in a canonical (grouped) order.
fn corpus() -> impl Strategy<Value = Vec<Ro>> {
    (1..=3usize, 1..=2usize, 1..=3usize, 1..=12usize)
        .prop_flat_map(|dims| {
            let (nd, nm, nme, nt) = dims;
            let cells = nd * nm * nme * nt;
            (
                Just(dims),
                prop::collection::vec(prop_oneof![1 => Just(0usize), 4 => 1..=3usize], cells),
                prop::collection::vec(body(), cells * 3),
            )
        })
        .prop_map(|((nd, nm, nme, nt), mut counts, bodies)| {
            if counts.iter().all(|&c| c == 0) {
                counts[0] = 1;
            }
            let mut rows = Vec::new();
            let mut cell = 0;
            for d in 0..nd {
                for m in 0..nm {
                    for me in 0..nme {
                        for t in 0..nt {
                            for b in &bodies[cell * 3..cell * 3 + counts[cell]] {
                                rows.push(rollout(d, m, me, t, b));
                            }
                            cell += 1;
                        }
                    }
                }
            }
            rows
        })
}

fn rollout(d: usize, m: usize, me: usize, t: usize, b: &Body) -> Ro {
    let mut r = ro(
        &format!("ds{d}"),
        &format!("task-{t}"),
        &format!("model{m}"),
        &format!("method{me}"),
        b.success,
        &b.steps,
    );
    if b.steps.is_empty() {
        r = r.no_tool_ok(b.no_tool_ok);
    }
    if let Some(l) = b.label {
        r = r.label(l);
    }
    r.tokens = b.tokens.map(f64::from);
    r.latency_s = b.latency.map(|x| f64::from(x) / 8.0);
    r.usd = b.usd.map(|x| f64::from(x) / 100.0);
    r
}

fn max_depth() -> impl Strategy<Value = MaxDepth> {
    prop_oneof![3 => (1..=10u32).prop_map(MaxDepth::Fixed), 1 => Just(MaxDepth::All)]
}

fn boot(bootstrap: u32, seed: u64, max_depth: MaxDepth) -> Settings {
    Settings {
        bootstrap,
        seed,
        max_depth,
        ..Settings::default()
    }
}

/// What the spec says about one condition, computed straight from the rollouts.
fn check_against_oracle(rows: &[Ro], c: &ConditionReport, k_max: usize) {
    let mine: Vec<&Ro> = rows
        .iter()
        .filter(|r| (&*r.dataset, &*r.model, &*r.method) == (&*c.dataset, &*c.model, &*c.method))
        .collect();
    let n = mine.len() as u64;
    let hf: Vec<(u32, u32)> = mine.iter().map(|r| r.horizon_fed()).collect();
    let count = |f: &dyn Fn(&Ro, u32, u32) -> bool| {
        mine.iter()
            .zip(&hf)
            .filter(|(r, &(t, fed))| f(r, t, fed))
            .count() as u64
    };
    let tasks: BTreeSet<&str> = mine.iter().map(|r| &*r.task).collect();
    assert_eq!(c.n, n);
    assert_eq!(c.tasks, tasks.len() as u64);
    assert_eq!(c.fully_executable, count(&|_, t, fed| fed == t + 1));
    assert_eq!(c.successes, count(&|r, _, _| r.success));
    assert_eq!(c.recovered, count(&|r, t, fed| r.success && fed <= t));
    assert_eq!(c.max_horizon, hf.iter().map(|h| h.0).max().unwrap());
    let nf = n as f64;
    let fed_sum: u32 = hf.iter().map(|h| h.1).sum();
    let auc_sum: f64 = hf
        .iter()
        .map(|&(t, fed)| f64::from(fed - 1) / f64::from(t))
        .sum();
    assert!((c.mean_fed.value.unwrap() - f64::from(fed_sum) / nf).abs() < TOL);
    assert!((c.auc_pec.value.unwrap() - auc_sum / nf).abs() < TOL);
    assert_eq!(c.pec.len(), k_max);
    for p in &c.pec {
        let k = p.k as u32;
        assert_eq!(p.survivors, count(&|_, _, fed| fed > k), "k={k}");
        assert_eq!(p.n_k, count(&|_, t, _| t >= k), "k={k}");
        assert_eq!(p.first_failures, count(&|_, t, fed| fed == k && k <= t));
        assert_eq!(p.ended_before, count(&|_, t, _| t < k));
        assert!((p.value - p.survivors as f64 / nf).abs() < TOL);
    }
    let mut labels = [0u64; 7];
    for r in &mine {
        if let Some(slot) = r.label_slot() {
            labels[slot] += 1;
        }
    }
    let got: Vec<u64> = c
        .first_failure_labels
        .entries()
        .iter()
        .map(|e| e.1)
        .collect();
    assert_eq!(got, labels);
    type Field = fn(&Ro) -> Option<f64>;
    let fields: [(Field, Option<Option<f64>>); 3] = [
        (|r| r.tokens, c.cost.tokens),
        (|r| r.latency_s, c.cost.latency_s),
        (|r| r.usd, c.cost.usd),
    ];
    for (get, reported) in fields {
        let anywhere = rows.iter().any(|r| get(r).is_some());
        let values: Vec<f64> = mine.iter().filter_map(|r| get(r)).collect();
        let expected = anywhere.then(|| {
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        });
        match (reported, expected) {
            (Some(Some(a)), Some(Some(b))) => assert!((a - b).abs() <= 1e-9 * b.max(1.0)),
            (a, b) => assert_eq!(a, b),
        }
    }
}

/// The identities of `metrics.md` on one condition.
fn check_identities(c: &ConditionReport) {
    let n = c.n as f64;
    let ter = c.ter.value.unwrap();
    let auc = c.auc_pec.value.unwrap();
    assert!(
        0.0 <= ter && ter <= auc && auc <= 1.0,
        "TER {ter}, AUC {auc}"
    );
    assert_eq!(c.rr_eligible, c.n - c.fully_executable);
    assert!((c.rr_eligible as f64 - n * (1.0 - ter)).abs() < TOL);
    let mut previous = 1.0;
    for p in &c.pec {
        assert!(
            (0.0..=previous).contains(&p.value),
            "PEC({}) {}",
            p.k,
            p.value
        );
        previous = p.value;
        match p.elig {
            Some(e) => {
                assert!(p.n_k > 0 && (0.0..=1.0).contains(&e));
                assert!(
                    (p.value - p.n_k as f64 / n * e).abs() < TOL,
                    "eq. 7 at {}",
                    p.k
                );
            }
            None => assert_eq!((p.n_k, p.value), (0, 0.0)),
        }
    }
    let labels: u64 = c.first_failure_labels.entries().iter().map(|e| e.1).sum();
    assert_eq!(labels, c.rr_eligible);
    let py = c.final_success.value.unwrap();
    if 0.0 < ter && ter < 1.0 {
        let (s, r) = (c.uninterrupted_success.unwrap(), c.rr.value.unwrap());
        assert!((py - (ter * s + (1.0 - ter) * r)).abs() < TOL, "eq. 12");
    }
    assert_eq!(c.rr.value.is_none(), c.rr_eligible == 0);
    assert_eq!(c.rr.ci.is_none(), c.rr_eligible == 0);
}

fn in_range(ci: Option<[f64; 2]>, lo: f64, hi: f64) {
    if let Some([a, b]) = ci {
        assert!(
            lo <= a && a <= b && b <= hi,
            "[{a}, {b}] not within [{lo}, {hi}]"
        );
    }
}

/// JSON equality where numbers may differ by one unit in the last place.
fn same_up_to_an_ulp(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x.to_bits() as i64 - y.to_bits() as i64).abs() <= 1
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_up_to_an_ulp(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_up_to_an_ulp(v, w)))
        }
        _ => a == b,
    }
}

fn lines_of(rows: &[Ro]) -> Vec<String> {
    rows.iter().map(Ro::line).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn identities_hold_and_metrics_match_an_oracle(rows in corpus(), depth in max_depth()) {
        let report = score(&jsonl(&rows), &boot(0, 0, depth));
        prop_assert!(report.identity_violations.is_empty(), "{:?}", report.identity_violations);
        prop_assert!(report.diagnostics.is_empty());
        let longest = rows.iter().map(|r| r.horizon_fed().0).max().unwrap();
        let k_max = match depth {
            MaxDepth::Fixed(k) => k as usize,
            MaxDepth::All => longest as usize,
        };
        prop_assert_eq!(report.settings.k_max, k_max);
        let conditions: BTreeSet<(&str, &str, &str)> =
            rows.iter().map(|r| (&*r.dataset, &*r.model, &*r.method)).collect();
        prop_assert_eq!(report.conditions.len(), conditions.len());
        for c in &report.conditions {
            check_identities(c);
            check_against_oracle(&rows, c, k_max);
        }
    }

    #[test]
    fn bootstrap_intervals_lie_in_the_statistics_range(
        rows in corpus(),
        bootstrap in 50..=200u32,
        seed in any::<u64>(),
    ) {
        let report = score(&jsonl(&rows), &boot(bootstrap, seed, MaxDepth::Fixed(10)));
        prop_assert!(report.identity_violations.is_empty(), "{:?}", report.identity_violations);
        // A condition holding every task of its dataset is defined in every resample.
        let mut dataset_tasks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for r in &rows {
            dataset_tasks.entry(&r.dataset).or_default().insert(&r.task);
        }
        for c in &report.conditions {
            check_identities(c);
            for e in [c.ter, c.auc_pec, c.final_success, c.rr] {
                in_range(e.ci, 0.0, 1.0);
            }
            in_range(c.mean_fed.ci, 1.0, f64::from(c.max_horizon) + 1.0);
            for p in &c.pec {
                in_range(p.ci, 0.0, 1.0);
            }
            if c.tasks == dataset_tasks[&*c.dataset].len() as u64 {
                prop_assert!(c.ter.ci.is_some() && c.mean_fed.ci.is_some());
                prop_assert!(c.auc_pec.ci.is_some() && c.final_success.ci.is_some());
                prop_assert!(c.pec.iter().all(|p| p.ci.is_some()));
            }
        }
        let longest = rows.iter().map(|r| r.horizon_fed().0).max().unwrap();
        for p in &report.paired {
            for d in [p.ter, p.auc_pec, p.final_success] {
                in_range(d.ci, -1.0, 1.0);
            }
            in_range(p.mean_fed.ci, -f64::from(longest), f64::from(longest));
            for d in &p.pec {
                in_range(d.ci, -1.0, 1.0);
            }
        }
    }

    #[test]
    fn same_seed_gives_the_same_bytes(rows in corpus(), seed in any::<u64>()) {
        let text = jsonl(&rows);
        let settings = boot(60, seed, MaxDepth::Fixed(6));
        let a = score(&text, &settings);
        let b = score(&text, &settings);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(a.to_json(), b.to_json());
        // The JSON reads back to the same report, up to one ulp per number: serde_json (built
        // without its `float_roundtrip` feature) does not parse every float correctly rounded,
        // e.g. "0.21789062499999998" reads as 0.217890625.
        let back: Report = serde_json::from_str(&a.to_json()).unwrap();
        let (x, y) = (serde_json::to_value(&back).unwrap(), serde_json::to_value(&a).unwrap());
        prop_assert!(same_up_to_an_ulp(&x, &y), "{x}\n{y}");
    }

    #[test]
    fn line_order_does_not_matter(
        (rows, shuffled) in corpus().prop_flat_map(|rows| (Just(rows.clone()), Just(rows).prop_shuffle())),
        seed in 0..4u64,
    ) {
        let settings = boot(50, seed, MaxDepth::Fixed(8));
        let a = score(&jsonl(&rows), &settings);
        let b = score(&jsonl(&shuffled), &settings);
        // Without bad lines nothing in the report refers to a line number: byte-identical.
        prop_assert_eq!(a.to_json(), b.to_json());
    }

    /// The bootstrap's chunks do not depend on who runs them: on pools of 1–4 threads, or one
    /// by one in a random order (as Web Workers finish), the report is the same bytes.
    #[test]
    fn bootstrap_layout_does_not_depend_on_threads(
        rows in corpus(),
        resamples in 1..800u32,
        threads in 1..5usize,
        order in any::<u64>(),
    ) {
        let settings = boot(resamples, 9, MaxDepth::Fixed(4));
        let text = jsonl(&rows);
        let corpus = read_files([("runs.jsonl", text.as_bytes())]);
        let reference = build_report(&corpus, &settings).to_json();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let pooled = pool.install(|| build_report(&corpus, &settings).to_json());
        prop_assert!(pooled == reference, "{threads} threads");
        let plan = ReportPlan::new(&corpus, &settings);
        let jobs = plan.jobs();
        let mut shuffled: Vec<usize> = (0..jobs.len()).collect();
        // A permutation from `order` (an LCG walk), so shrinking stays simple.
        let mut state = order;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (state >> 33) as usize % (i + 1));
        }
        let mut values = vec![Vec::new(); jobs.len()];
        for &j in &shuffled {
            let job = jobs[j];
            values[j] = bootstrap_chunk(plan.resampled(job.block).unwrap(), resamples as usize, 9, job.chunk);
        }
        let shuffled_report = plan.finish(&corpus, None, values).to_json();
        prop_assert!(shuffled_report == reference, "job order");
    }

    #[test]
    fn chunking_does_not_matter(
        rows in corpus(),
        sizes in prop::collection::vec(1..80usize, 1..8),
        bom in any::<bool>(),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let sep = if crlf { "\r\n" } else { "\n" };
        let mut text = if bom { "\u{feff}".to_string() } else { String::new() };
        text.push_str(&lines_of(&rows).join(sep));
        if final_newline {
            text.push_str(sep);
        }
        let bytes = text.as_bytes();
        let settings = boot(20, 5, MaxDepth::Fixed(8));
        let whole = build_report(&read_files([("runs.jsonl", bytes)]), &settings);
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("runs.jsonl");
        let mut at = 0;
        for size in sizes.iter().cycle() {
            if at >= bytes.len() {
                break;
            }
            let end = (at + size).min(bytes.len());
            ingest.push(f, &bytes[at..end]);
            at = end;
        }
        ingest.end_file(f);
        let chunked = build_report(&ingest.finish(), &settings);
        prop_assert!(whole.diagnostics.is_empty(), "{:?}", whole.diagnostics);
        prop_assert_eq!(whole.inputs[0].rollouts, rows.len() as u64);
        prop_assert_eq!(whole.inputs[0].bytes, bytes.len() as u64);
        prop_assert_eq!(&chunked, &whole);
        // Separators, BOM and a final newline change nothing but the input's byte count.
        let plain = score(&jsonl(&rows), &settings);
        prop_assert_eq!(&whole.conditions, &plain.conditions);
        prop_assert_eq!(&whole.paired, &plain.paired);
    }

    #[test]
    fn bad_lines_are_diagnosed_and_change_nothing_else(
        rows in corpus(),
        inserts in prop::collection::vec((any::<prop::sample::Index>(), 0..GARBAGE.len()), 1..6),
    ) {
        let settings = boot(30, 2, MaxDepth::Fixed(5));
        let clean = score(&jsonl(&rows), &settings);
        let mut lines: Vec<Vec<u8>> = lines_of(&rows).into_iter().map(String::into_bytes).collect();
        // Insert from the end so earlier indices stay valid, then read off the line numbers.
        let mut marked: Vec<(Vec<u8>, Option<usize>)> =
            lines.drain(..).map(|l| (l, None)).collect();
        for (at, g) in &inserts {
            let at = at.index(marked.len() + 1);
            marked.insert(at, (GARBAGE[*g].to_vec(), Some(*g)));
        }
        let mut bytes = Vec::new();
        let mut expected_lines = Vec::new();
        for (i, (line, garbage)) in marked.iter().enumerate() {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
            if let Some(g) = garbage {
                if !GARBAGE[*g].iter().all(u8::is_ascii_whitespace) {
                    expected_lines.push(Some(i as u64 + 1));
                }
            }
        }
        let dirty = build_report(&read_files([("runs.jsonl", &bytes[..])]), &settings);
        prop_assert_eq!(&dirty.conditions, &clean.conditions);
        prop_assert_eq!(&dirty.paired, &clean.paired);
        prop_assert!(dirty.identity_violations.is_empty());
        let got: Vec<Option<u64>> = dirty.diagnostics.iter().map(|d| d.line).collect();
        prop_assert_eq!(&got, &expected_lines);
        prop_assert!(dirty.diagnostics.iter().all(|d| d.file == "runs.jsonl" && !d.message.is_empty()));
        prop_assert_eq!(dirty.diagnostics_total, expected_lines.len() as u64);
        let input = &dirty.inputs[0];
        prop_assert_eq!(input.lines, marked.len() as u64);
        prop_assert_eq!(input.rollouts, rows.len() as u64);
        prop_assert_eq!(input.errors, expected_lines.len() as u64);
    }
}

/// The `above` pairs of a rank entry as positions in its `conditions`.
fn above_of(t: &RankTable) -> BTreeSet<(usize, usize)> {
    let at = |p: &[String; 2]| {
        t.conditions
            .iter()
            .position(|c| c.model == p[0] && c.method == p[1])
            .expect("an `above` condition is one of the entry's")
    };
    t.above.iter().map(|[a, b]| (at(a), at(b))).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// rank_lo ≤ rank ≤ rank_hi, the interval ends count the `above` pairs, and `above` is
    /// antisymmetric — and transitive in a dataset where every condition has every task, so that
    /// each pair's spread is taken over every resample and s_ik ≤ s_ij + s_jk. τ_b and its
    /// interval lie in [−1, 1]. Every dataset of two conditions or more has its entries.
    #[test]
    fn rank_intervals_bracket_the_ranks_and_above_is_an_order(
        rows in corpus(),
        bootstrap in prop_oneof![1 => Just(0u32), 4 => 20..=150u32],
        seed in any::<u64>(),
    ) {
        let report = score(&jsonl(&rows), &boot(bootstrap, seed, MaxDepth::Fixed(4)));
        let mut conditions: BTreeMap<&str, BTreeSet<(&str, &str)>> = BTreeMap::new();
        let mut tasks: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut ran: BTreeSet<(&str, &str, &str, &str)> = BTreeSet::new();
        for r in &rows {
            conditions.entry(&r.dataset).or_default().insert((&r.model, &r.method));
            tasks.entry(&r.dataset).or_default().insert(&r.task);
            ran.insert((&r.dataset, &r.model, &r.method, &r.task));
        }
        let ranked: BTreeSet<&str> = conditions.iter().filter(|(_, c)| c.len() >= 2).map(|(d, _)| *d).collect();
        let listed: BTreeSet<&str> = report.ranks.iter().map(|t| t.dataset.as_str()).collect();
        prop_assert_eq!(&listed, &ranked);
        prop_assert_eq!(report.ranks.len(), 3 * ranked.len());
        prop_assert_eq!(report.rank_divergence.len(), 2 * ranked.len());
        for t in &report.ranks {
            let k = t.conditions.len();
            let above = above_of(t);
            for (i, c) in t.conditions.iter().enumerate() {
                match (c.rank_lo, c.rank_hi) {
                    (Some(lo), Some(hi)) => {
                        prop_assert!(lo <= c.rank && c.rank <= hi, "{lo} {} {hi}", c.rank);
                        prop_assert_eq!(lo, 1 + above.iter().filter(|p| p.1 == i).count());
                        prop_assert_eq!(hi, k - above.iter().filter(|p| p.0 == i).count());
                    }
                    (None, None) => prop_assert_eq!(bootstrap, 0),
                    _ => prop_assert!(false, "one interval end without the other"),
                }
            }
            for &(i, j) in &above {
                prop_assert!(!above.contains(&(j, i)));
                prop_assert!(t.conditions[i].value > t.conditions[j].value);
            }
            let complete = t.conditions.iter().all(|c| {
                tasks[t.dataset.as_str()].iter().all(|task| {
                    ran.contains(&(t.dataset.as_str(), c.model.as_str(), c.method.as_str(), *task))
                })
            });
            if complete {
                for &(i, j) in &above {
                    for &(j2, l) in &above {
                        if j2 == j {
                            prop_assert!(above.contains(&(i, l)), "{} > {} > {}", i, j, l);
                        }
                    }
                }
            }
        }
        for d in &report.rank_divergence {
            let tau = d.kendall_tau_b;
            if let Some(v) = tau.value {
                prop_assert!((-1.0..=1.0).contains(&v));
            }
            if let Some([lo, hi]) = tau.ci {
                prop_assert!(-1.0 <= lo && lo <= hi && hi <= 1.0);
            }
            if bootstrap == 0 {
                prop_assert!(tau.ci.is_none() && d.discordant.iter().all(|p| !p.significant));
            }
        }
    }

    /// A higher level gives a larger critical value and never narrows a rank interval: the same
    /// resamples, fewer pairs certain.
    #[test]
    fn a_higher_level_never_narrows_a_rank_interval(
        rows in corpus(),
        seed in 0..16u64,
        level in 0.5..0.95f64,
        more in 0.001..0.049f64,
    ) {
        let at = |level: f64| {
            score(&jsonl(&rows), &Settings { level, ..boot(120, seed, MaxDepth::Fixed(3)) })
        };
        let (low, high) = (at(level), at(level + more));
        prop_assert_eq!(low.ranks.len(), high.ranks.len());
        for (a, b) in low.ranks.iter().zip(&high.ranks) {
            if let (Some(ca), Some(cb)) = (a.critical_value, b.critical_value) {
                prop_assert!(ca <= cb, "{ca} > {cb}");
            }
            prop_assert!(above_of(b).is_subset(&above_of(a)));
            for (x, y) in a.conditions.iter().zip(&b.conditions) {
                prop_assert_eq!(x.rank, y.rank);
                prop_assert!(y.rank_lo <= x.rank_lo && y.rank_hi >= x.rank_hi);
            }
        }
    }
}

/// Lines that are not rollouts; the blank ones are skipped without a diagnostic.
const GARBAGE: &[&[u8]] = &[
    b"not json",
    b"{}",
    b"[1, 2]",
    b"{\"dataset\":\"ds0\"}",
    b"\xff\xfe{}",
    b"{\"dataset\":\"ds0\",\"task_id\":\"task-0\",\"model\":\"model0\",\"method\":\"method0\",\"success\":2,\"steps\":[]}",
    b"{\"dataset\":\"ds0\",\"task_id\":\"task-0\",\"model\":\"model0\",\"method\":\"method0\",\"success\":true,\"steps\":[{\"ok\":false,\"label\":\"oops\"}]}",
    b"{\"dataset\":\"ds0\",\"task_id\":\"task-0\",\"model\":\"model0\",\"method\":\"method0\",\"success\":true,\"steps\":[],\"cost\":{\"tokens\":-1}}",
    b"{\"dataset\":\"ds0\",\"task_id\":\"task-0\",\"model\":\"model0\",\"method\":\"method0\",\"success\":true,\"steps\":[]} trailing",
    b"",
    b"   \t",
];
