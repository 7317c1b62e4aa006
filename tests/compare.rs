//! Cross-condition paired comparisons (`compare = "conditions"`): shared-task handling,
//! hand-computed differences, the same numbers as method/model pairs where both apply, the
//! automatic leaderboard pairs, and the CLI's `--compare`.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use prefix_exec::ingest::read_files;
use prefix_exec::report::{build_report, ConditionRef, PairSide, PairedReport, Report, Settings};

/// One canonical line: `steps` is a string of `+` (executable) and `-` (rejected) steps.
fn line(
    dataset: &str,
    task: &str,
    model: &str,
    method: &str,
    success: bool,
    steps: &str,
) -> String {
    let steps: Vec<String> = steps
        .chars()
        .map(|c| format!(r#"{{"tool":"f","ok":{}}}"#, c == '+'))
        .collect();
    serde_json::json!({
        "dataset": dataset, "task_id": task, "model": model, "method": method,
        "success": success,
    })
    .to_string()
    .trim_end_matches('}')
    .to_string()
        + &format!(r#","steps":[{}]}}"#, steps.join(","))
}

fn report(lines: &[String], settings: &Settings) -> Report {
    let text = lines.join("\n") + "\n";
    build_report(&read_files([("runs.jsonl", text.as_bytes())]), settings)
}

fn settings(bootstrap: u32) -> Settings {
    Settings {
        bootstrap,
        seed: 3,
        max_depth: prefix_exec::score::MaxDepth::Fixed(3),
        ..Settings::default()
    }
}

fn cross<'a>(r: &'a Report, a: (&str, &str), b: (&str, &str)) -> &'a PairedReport {
    r.paired
        .iter()
        .find(|p| {
            p.compare == "conditions"
                && p.a == PairSide::Condition(ConditionRef::new(a.0, a.1))
                && p.b == PairSide::Condition(ConditionRef::new(b.0, b.1))
        })
        .unwrap_or_else(|| panic!("no pair {a:?} − {b:?} in {:#?}", r.paired))
}

/// Each paired entry as "kind A-B", in report order.
fn pair_kinds(r: &Report) -> Vec<String> {
    r.paired
        .iter()
        .map(|p| format!("{} {}-{}", p.compare, p.a, p.b))
        .collect()
}

fn close(x: Option<f64>, y: f64) {
    let x = x.expect("a value");
    assert!((x - y).abs() < 1e-12, "{x} ≠ {y}");
}

/// A ran t1, t2, t3; B ran t2, t3, t4. Only t2 and t3 count:
/// A: t2 `+-` failed (FED 2, T 2), t3 `++` success (FED 3, T 2);
/// B: t2 `++` success (FED 3, T 2), t3 `-` failed (FED 1, T 1).
#[test]
fn shared_tasks_only_hand_computed() {
    let lines = vec![
        line("d", "t1", "ma", "x", true, "++"),
        line("d", "t2", "ma", "x", false, "+-"),
        line("d", "t3", "ma", "x", true, "++"),
        line("d", "t2", "mb", "y", true, "++"),
        line("d", "t3", "mb", "y", false, "-"),
        line("d", "t4", "mb", "y", false, "--"),
    ];
    let r = report(&lines, &settings(0));
    let p = cross(&r, ("ma", "x"), ("mb", "y"));
    assert_eq!(
        (p.n_shared, p.only_a, p.only_b),
        (Some(2), Some(1), Some(1))
    );
    // TER: A 1/2 (t3), B 1/2 (t2) → 0.
    close(p.ter.delta, 0.0);
    // Mean FED: A (2 + 3)/2, B (3 + 1)/2 → 2.5 − 2 = 0.5.
    close(p.mean_fed.delta, 0.5);
    // AUC: A ((2−1)/2 + (3−1)/2)/2 = 0.75, B ((3−1)/2 + 0/1)/2 = 0.5 → 0.25.
    close(p.auc_pec.delta, 0.25);
    // Success: A 1/2, B 1/2 → 0.
    close(p.final_success.delta, 0.0);
    // PEC(k) = #{FED > k}/n: A (1, 1/2, 0), B (1/2, 1/2, 0).
    let pec: Vec<f64> = p.pec.iter().map(|x| x.delta.unwrap()).collect();
    assert_eq!(pec.len(), 3);
    for (got, want) in pec.iter().zip([0.5, 0.0, 0.0]) {
        assert!((got - want).abs() < 1e-12, "{pec:?}");
    }
    // The JSON shape the issue specifies, in this field order.
    let json = serde_json::to_string(p).unwrap();
    assert!(
        json.starts_with(
            r#"{"dataset":"d","compare":"conditions","a":{"model":"ma","method":"x"},"b":{"model":"mb","method":"y"},"n_shared":2,"only_a":1,"only_b":1,"ter":{"delta":0.0,"ci":null},"auc_pec":{"#
        ),
        "{json}"
    );
    assert!(
        json.contains(r#""pec":[{"k":1,"delta":0.5,"ci":null}"#),
        "{json}"
    );
    // Report JSON round-trips.
    let back: Report = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(back, r);
}

/// No shared task: counts, and no difference.
#[test]
fn disjoint_conditions_have_no_difference() {
    let lines = vec![
        line("d", "t1", "ma", "x", true, "+"),
        line("d", "t2", "mb", "y", true, "+"),
    ];
    let r = report(&lines, &settings(50));
    let p = cross(&r, ("ma", "x"), ("mb", "y"));
    assert_eq!(
        (p.n_shared, p.only_a, p.only_b),
        (Some(0), Some(1), Some(1))
    );
    assert!(p.ter.delta.is_none() && p.ter.ci.is_none());
}

/// A grid of `models × methods` on tasks t0..t{n}, outcomes varied by a simple hash.
fn grid(models: &[&str], methods: &[&str], tasks: usize, trials: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (i, m) in models.iter().enumerate() {
        for (j, me) in methods.iter().enumerate() {
            for t in 0..tasks {
                for k in 0..trials {
                    let h = (t * 7 + i * 13 + j * 5 + k * 3) % 11;
                    let steps: String = (0..1 + h % 4)
                        .map(|s| if (h + s) % 5 == 0 { '-' } else { '+' })
                        .collect();
                    out.push(line("d", &format!("t{t}"), m, me, h % 3 != 0, &steps));
                }
            }
        }
    }
    out
}

fn same_numbers(x: &PairedReport, y: &PairedReport) {
    assert_eq!(x.ter, y.ter);
    assert_eq!(x.auc_pec, y.auc_pec);
    assert_eq!(x.mean_fed, y.mean_fed);
    assert_eq!(x.final_success, y.final_success);
    assert_eq!(x.pec, y.pec);
    assert!(x.ter.ci.is_some());
}

/// Two methods of one model on the same tasks, asked as conditions: the same bits as the
/// method pair; likewise two models under one method (the automatic leaderboard pair). A report
/// holds one entry per two conditions, so each side is computed in its own report (the
/// dataset's draws do not depend on which pairs are asked).
#[test]
fn equal_to_method_and_model_pairs_where_both_apply() {
    let lines = grid(&["m"], &["x", "y", "z"], 9, 2);
    let plain = report(&lines, &settings(400));
    let method_pair = plain
        .paired
        .iter()
        .find(|p| p.compare == "methods" && p.a.name() == Some("x") && p.b.name() == Some("z"))
        .unwrap();
    let mut s = settings(400);
    s.compare = vec![(ConditionRef::new("m", "x"), ConditionRef::new("m", "z"))];
    let r = report(&lines, &s);
    let asked = cross(&r, ("m", "x"), ("m", "z"));
    assert_eq!(
        (asked.n_shared, asked.only_a, asked.only_b),
        (Some(9), Some(0), Some(0))
    );
    same_numbers(asked, method_pair);
    // The asked pair replaces the method pair of the same two conditions; the other method
    // pairs stay, and nothing else of the conditions kind is made (the model has 3 methods).
    let kinds = pair_kinds(&r);
    assert_eq!(
        kinds,
        ["methods x-y", "methods y-z", "conditions m / x-m / z"],
        "{kinds:?}"
    );

    let lines = grid(&["m1", "m2", "m3"], &["x"], 9, 3);
    let r = report(&lines, &settings(400));
    let mut named = settings(400);
    named.pairs = vec![("m1".into(), "m3".into())];
    let by_name = report(&lines, &named);
    let model_pair = by_name
        .paired
        .iter()
        .find(|p| p.compare == "models" && p.a.name() == Some("m1") && p.b.name() == Some("m3"))
        .unwrap();
    same_numbers(cross(&r, ("m1", "x"), ("m3", "x")), model_pair);
    assert_eq!(r.conditions, by_name.conditions);
    assert_eq!(
        r.paired
            .iter()
            .filter(|p| p.compare == "conditions")
            .count(),
        3
    );
}

/// Two single-method models sharing a method name (a leaderboard where every agent runs
/// "base"): the report holds one entry per two conditions — the cross-condition pair, never a
/// "models" pair of the same two conditions as well — whether or not they ran the same tasks.
/// A model pair under a shared method stays where no cross-condition pair is made.
#[test]
fn one_entry_per_two_conditions() {
    let mut lines = grid(&["m1", "m2"], &["base"], 6, 1);
    lines.extend(grid(&["m3"], &["other"], 6, 1));
    // m2 skipped t5: the pairs differ in shared tasks.
    lines.retain(|l| !(l.contains(r#""model":"m2""#) && l.contains(r#""task_id":"t5""#)));
    let r = report(&lines, &settings(200));
    let kinds = pair_kinds(&r);
    assert_eq!(
        kinds,
        [
            "conditions m1 / base-m2 / base",
            "conditions m1 / base-m3 / other",
            "conditions m2 / base-m3 / other"
        ]
    );
    let p = cross(&r, ("m1", "base"), ("m2", "base"));
    assert_eq!(
        (p.n_shared, p.only_a, p.only_b),
        (Some(5), Some(1), Some(0))
    );
    // A named model pair is made as asked (automatic pairs are off), with no duplicate.
    let mut s = settings(200);
    s.pairs = vec![("m1".into(), "m2".into())];
    let r = report(&lines, &s);
    let kinds: Vec<&str> = r.paired.iter().map(|p| p.compare.as_str()).collect();
    assert_eq!(kinds, ["models"]);
    // A dataset that is not leaderboard-shaped (m1 has two methods) keeps its model pair.
    let mut lines = grid(&["m1", "m2"], &["base"], 4, 1);
    lines.extend(grid(&["m1"], &["extra"], 4, 1));
    let r = report(&lines, &settings(0));
    let kinds = pair_kinds(&r);
    assert_eq!(kinds, ["methods base-extra", "models m1-m2"], "{kinds:?}");
}

/// Restricting to shared tasks on the dataset's own draws: the cross pair of A and B equals the
/// method pair of A′ and B′ — A and B with their unshared tasks removed — in a report whose
/// dataset still has every task (a third condition C ran them all), so the draws are the same.
#[test]
fn restricted_pair_equals_method_pair_of_restricted_conditions() {
    let full = grid(&["m"], &["a", "b", "c"], 12, 1);
    let keep = |l: &String, method: &str, tasks: &[usize]| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let t: usize = v["task_id"].as_str().unwrap()[1..].parse().unwrap();
        v["method"] != method || tasks.contains(&t)
    };
    // A lacks t0, t1; B lacks t2..t4.
    let a_tasks: Vec<usize> = (2..12).collect();
    let b_tasks: Vec<usize> = (0..12).filter(|t| !(2..5).contains(t)).collect();
    let shared: Vec<usize> = (5..12).collect();
    let one: Vec<String> = full
        .iter()
        .filter(|l| keep(l, "a", &a_tasks) && keep(l, "b", &b_tasks))
        .cloned()
        .collect();
    let two: Vec<String> = full
        .iter()
        .filter(|l| keep(l, "a", &shared) && keep(l, "b", &shared))
        .cloned()
        .collect();
    let mut s = settings(500);
    s.compare = vec![(ConditionRef::new("m", "a"), ConditionRef::new("m", "b"))];
    let r1 = report(&one, &s);
    let r2 = report(&two, &settings(500));
    let p1 = cross(&r1, ("m", "a"), ("m", "b"));
    assert_eq!(
        (p1.n_shared, p1.only_a, p1.only_b),
        (Some(7), Some(3), Some(2))
    );
    let p2 = r2
        .paired
        .iter()
        .find(|p| p.compare == "methods" && p.a.name() == Some("a") && p.b.name() == Some("b"))
        .unwrap();
    same_numbers(p1, p2);
    // The conditions' own rows are unchanged by the extra columns.
    let plain = report(&one, &settings(500));
    assert_eq!(plain.conditions, r1.conditions);
}

/// Every pair of a leaderboard (one method per model) is compared automatically, in report
/// order; named `--pair`s turn the automatic ones off, asked conditions stay.
#[test]
fn automatic_leaderboard_pairs() {
    let mut lines = grid(&["m1"], &["p"], 5, 1);
    lines.extend(grid(&["m2"], &["q"], 5, 1));
    lines.extend(grid(&["m3"], &["r"], 5, 1));
    let r = report(&lines, &settings(0));
    let pairs = pair_kinds(&r);
    assert_eq!(
        pairs,
        [
            "conditions m1 / p-m2 / q",
            "conditions m1 / p-m3 / r",
            "conditions m2 / q-m3 / r"
        ]
    );
    let mut s = settings(0);
    s.pairs = vec![("p".into(), "q".into())];
    s.compare = vec![(ConditionRef::new("m3", "r"), ConditionRef::new("m1", "p"))];
    let r = report(&lines, &s);
    let pairs = pair_kinds(&r);
    assert_eq!(pairs, ["conditions m3 / r-m1 / p"]);
    // An asked pair replaces the automatic pair of the same two conditions, in the asked order.
    let mut s = settings(0);
    s.compare = vec![(ConditionRef::new("m3", "r"), ConditionRef::new("m1", "p"))];
    let r = report(&lines, &s);
    let pairs = pair_kinds(&r);
    assert_eq!(
        pairs,
        [
            "conditions m1 / p-m2 / q",
            "conditions m2 / q-m3 / r",
            "conditions m3 / r-m1 / p"
        ]
    );
    // Same condition twice is refused.
    let mut s = settings(0);
    s.compare = vec![(ConditionRef::new("m1", "p"), ConditionRef::new("m1", "p"))];
    assert!(s.validate().is_err());
}

/// `--compare MODEL_A METHOD_A MODEL_B METHOD_B` with names holding `/`, `:`, `,`, spaces and a
/// leading `-`: the same bytes as the library with the same request.
#[test]
fn cli_compare_with_awkward_names() {
    let (ma, xa, mb, xb) = ("org/model:v1, big", "agent: a,b", "-other model", "m/x y");
    let lines = [
        line("d", "t1", ma, xa, true, "++"),
        line("d", "t2", ma, xa, false, "+-"),
        line("d", "t3", ma, xa, true, "+"),
        line("d", "t1", mb, xb, false, "-"),
        line("d", "t2", mb, xb, true, "++"),
        line("d", "t1", "m3", "q", true, "+"),
        line("d", "t1", "m3", "r", true, "+"),
    ];
    let dir = std::env::temp_dir().join(format!("prefix-exec-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = lines.join("\n") + "\n";
    std::fs::write(dir.join("runs.jsonl"), &text).unwrap();
    let out = cli_bin::command()
        .current_dir(&dir)
        .args([
            "score",
            "runs.jsonl",
            "--bootstrap",
            "100",
            "--seed",
            "3",
            "--max-depth",
            "3",
        ])
        .args(["--compare", ma, xa, mb, xb, "--json", "-", "-q"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut s = settings(100);
    s.compare = vec![(ConditionRef::new(ma, xa), ConditionRef::new(mb, xb))];
    let lib = build_report(&read_files([("runs.jsonl", text.as_bytes())]), &s);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), lib.to_json());
    let p = cross(&lib, (ma, xa), (mb, xb));
    assert_eq!(
        (p.n_shared, p.only_a, p.only_b),
        (Some(2), Some(1), Some(0))
    );
    // m3 has two methods: not a leaderboard, so only the asked cross pair.
    assert_eq!(
        lib.paired
            .iter()
            .filter(|p| p.compare == "conditions")
            .count(),
        1
    );
    let json: serde_json::Value = serde_json::from_str(&lib.to_json()).unwrap();
    assert_eq!(
        json["settings"]["compare"],
        serde_json::json!([[{"model": ma, "method": xa}, {"model": mb, "method": xb}]])
    );
    // Three values are refused.
    let out = cli_bin::command()
        .args(["score", "x.jsonl", "--compare", "a", "b", "c"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// The widened block of a cross-condition pair (its shared-task columns) is resampled chunk by
/// chunk like any block: 1,000 resamples (four chunks) give the same bytes on pools of 1, 2 and
/// 3 threads and when the chunks run one by one in reverse order.
#[test]
fn widened_blocks_do_not_depend_on_threads() {
    let full = grid(&["m"], &["a", "b", "c"], 12, 1);
    let lines: Vec<String> = full
        .iter()
        .filter(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let t: usize = v["task_id"].as_str().unwrap()[1..].parse().unwrap();
            !(v["method"] == "a" && t < 2 || v["method"] == "b" && (2..5).contains(&t))
        })
        .cloned()
        .collect();
    let mut s = settings(1000);
    s.compare = vec![(ConditionRef::new("m", "a"), ConditionRef::new("m", "b"))];
    let text = lines.join("\n") + "\n";
    let corpus = read_files([("runs.jsonl", text.as_bytes())]);
    let reference = build_report(&corpus, &s);
    let p = cross(&reference, ("m", "a"), ("m", "b"));
    assert!(p.ter.ci.is_some() && p.only_a == Some(3) && p.only_b == Some(2));
    let reference = reference.to_json();
    for threads in 1..=3 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let r = pool.install(|| build_report(&corpus, &s).to_json());
        assert!(r == reference, "{threads} threads");
    }
    let plan = prefix_exec::report::ReportPlan::new(&corpus, &s);
    let block = plan.resampled(0).unwrap();
    // Three conditions and the two restricted sides.
    assert_eq!(block.conditions.len(), 5);
    let jobs = plan.jobs();
    assert_eq!(jobs.len(), 4);
    let mut values = vec![Vec::new(); jobs.len()];
    for (j, job) in jobs.iter().enumerate().rev() {
        values[j] = prefix_exec::stats::bootstrap::bootstrap_chunk(block, 1000, 3, job.chunk);
    }
    assert!(plan.finish(&corpus, None, values).to_json() == reference);
}
