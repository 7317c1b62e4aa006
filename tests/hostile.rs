//! The hostile corpus: what a harness may write, or a researcher may drop by mistake, and what
//! must come of it. Small files live in `tests/hostile/` (remade by `generate.py`); big ones are
//! generated here. For every case: clear, line-numbered diagnostics; every valid rollout kept and
//! scored exactly as if the bad lines were absent (asserted by scoring the file without them); no
//! panic. Memory bounds of the big cases are asserted in `tests/hostile_memory.rs`.

#[path = "../fuzz/fuzz_targets/common/mod.rs"]
mod harness;

use prefix_exec::ingest::{read_files, Ingest};
use prefix_exec::report::{build_report, Report, Settings};
use prefix_exec::rollout::Corpus;
use prefix_exec::score::MaxDepth;

fn file(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hostile")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn settings() -> Settings {
    Settings {
        bootstrap: 300,
        seed: 11,
        max_depth: MaxDepth::Fixed(6),
        ..Settings::default()
    }
}

fn score_files(files: &[(&str, &[u8])]) -> (Corpus, Report) {
    let corpus = read_files(files.iter().copied());
    let report = build_report(&corpus, &settings());
    assert!(
        report.identity_violations.is_empty(),
        "{:?}",
        report.identity_violations
    );
    (corpus, report)
}

/// (line, words the message must contain) of every diagnostic, in order.
fn diagnostics(report: &Report) -> Vec<(Option<u64>, String)> {
    report
        .diagnostics
        .iter()
        .map(|d| (d.line, d.message.clone()))
        .collect()
}

fn assert_diagnostics(name: &str, report: &Report, expected: &[(Option<u64>, &str)]) {
    let got = diagnostics(report);
    assert_eq!(
        got.len(),
        expected.len(),
        "{name}: diagnostics {got:#?}, expected {expected:#?}"
    );
    for ((line, message), (want_line, words)) in got.iter().zip(expected) {
        assert_eq!(line, want_line, "{name}: {message}");
        assert!(
            message.contains(words),
            "{name}:{line:?}: {message:?} does not say {words:?}"
        );
    }
    assert!(report.diagnostics.iter().all(|d| d.file == name));
}

/// The file without the lines its diagnostics name, scored on its own, gives the same numbers.
fn assert_as_if_absent(name: &str, bytes: &[u8], report: &Report) {
    let bad: Vec<u64> = report.diagnostics.iter().filter_map(|d| d.line).collect();
    let clean: Vec<u8> = bytes
        .split_inclusive(|&b| b == b'\n')
        .enumerate()
        .filter(|(i, _)| !bad.contains(&(*i as u64 + 1)))
        .flat_map(|(_, l)| l.iter().copied())
        .collect();
    let (_, expected) = report_of(name, &clean);
    assert!(
        expected.diagnostics.is_empty(),
        "{name} without its bad lines: {:?}",
        expected.diagnostics
    );
    assert_eq!(report.conditions, expected.conditions, "{name}");
    assert_eq!(report.paired, expected.paired, "{name}");
}

fn report_of(name: &str, bytes: &[u8]) -> (Corpus, Report) {
    score_files(&[(name, bytes)])
}

/// The four valid rollouts every small file is built around.
fn good() -> Report {
    report_of("good.jsonl", &file("good.jsonl")).1
}

/// A committed file with bad lines: `rollouts` valid ones are read, the diagnostics are exactly
/// `expected`, and the report is that of the file without the lines they name.
fn bad_lines_case(name: &str, rollouts: usize, expected: &[(Option<u64>, &str)]) -> Report {
    let bytes = file(name);
    let (corpus, report) = report_of(name, &bytes);
    assert_eq!(corpus.rollouts.len(), rollouts, "{name}");
    assert_diagnostics(name, &report, expected);
    assert_as_if_absent(name, &bytes, &report);
    report
}

#[test]
fn every_hostile_file_reads_the_same_in_any_chunks_and_passes_every_check() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "py") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        harness::check_canonical(&bytes);
        harness::check_report(&bytes);
        n += 1;
    }
    assert!(n >= 16, "{n} hostile files");
}

#[test]
fn empty_and_blank_files_hold_nothing_and_say_so() {
    for name in ["empty.jsonl", "blank-only.jsonl"] {
        let (corpus, report) = report_of(name, &file(name));
        assert!(corpus.rollouts.is_empty());
        assert_diagnostics(name, &report, &[(None, "holds no rollouts")]);
    }
}

#[test]
fn bom_and_crlf_change_nothing() {
    let good = good();
    for name in ["bom.jsonl", "crlf.jsonl"] {
        let (corpus, report) = report_of(name, &file(name));
        assert_eq!(corpus.rollouts.len(), 4, "{name}");
        assert_diagnostics(name, &report, &[]);
        assert_eq!(report.conditions, good.conditions, "{name}");
    }
}

#[test]
fn invalid_utf8_costs_its_line_only() {
    let report = bad_lines_case("invalid-utf8.jsonl", 4, &[(Some(3), "not valid UTF-8")]);
    assert_eq!(report.conditions, good().conditions);
}

#[test]
fn nan_infinity_and_out_of_range_numbers_are_line_errors() {
    bad_lines_case(
        "nonfinite.jsonl",
        4,
        &[
            (Some(2), "expected value"),      // NaN
            (Some(4), "expected value"),      // Infinity
            (Some(5), "number out of range"), // 1e400 in cost
            (Some(6), "number out of range"), // 1e400 as success
            (Some(7), "invalid number"),      // -Infinity
            (Some(8), "number out of range"), // -1e400
        ],
    );
}

#[test]
fn a_repeated_key_is_refused_not_resolved() {
    bad_lines_case(
        "duplicate-keys.jsonl",
        4,
        &[
            (Some(2), "duplicate field `success`"),
            (Some(3), "duplicate field `model`"),
            (Some(4), "steps[0]: duplicate field `ok`"),
            (Some(5), "steps[0]: duplicate field `args`"),
        ],
    );
}

#[test]
fn a_wrong_type_in_any_field_names_the_field() {
    // Lines 1, 36, 37 and 38 are the valid rollouts; lines 28-35 are the step cases and 39-43
    // whole-line garbage (see generate.py).
    let fields = [
        "dataset",
        "dataset",
        "dataset",
        "task_id",
        "task_id",
        "task_id",
        "task_id",
        "model",
        "model",
        "method",
        "method",
        "success",
        "success",
        "success",
        "steps",
        "steps",
        "steps",
        "steps",
        "no_tool_ok",
        "label",
        "label",
        "cost",
        "cost",
        "cost.tokens",
        "cost.usd",
        "cost.latency_s",
        "steps[1]",
        "steps[1]",
        "steps[1]",
        "steps[1]",
        "steps[1].ok",
        "steps[1].ok",
        "steps[1].label",
        "steps[1].label",
    ];
    let mut expected: Vec<(Option<u64>, &str)> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| (Some(i as u64 + 2), *f))
        .collect();
    expected.extend([
        (Some(39), "expected a JSON object"),
        (Some(40), "expected a JSON object"),
        (Some(41), "expected a JSON object"),
        (Some(42), "EOF while parsing"),
        (Some(43), "expected a JSON object"),
    ]);
    let report = bad_lines_case("wrong-types.jsonl", 4, &expected);
    // An array is never read as an object of positional fields.
    assert!(diagnostics(&report)[22]
        .1
        .contains("expected an object {tokens"));
    assert!(diagnostics(&report)[29]
        .1
        .contains("expected a step object"));
    assert_eq!(report.conditions, good().conditions);
}

#[test]
fn success_is_true_false_one_or_zero_and_nothing_else() {
    // The 4 good lines, and success 1 and 0.
    let expected: Vec<(Option<u64>, &str)> = (2..=7).map(|l| (Some(l), "success")).collect();
    let report = bad_lines_case("bad-success.jsonl", 6, &expected);
    assert!(diagnostics(&report)[0].1.contains("-1"));
    assert!(diagnostics(&report)[1].1.contains("0.5"));
}

#[test]
fn steps_must_be_an_array() {
    bad_lines_case(
        "steps-not-array.jsonl",
        4,
        &[
            (Some(2), "steps: invalid type: map"),
            (Some(3), "steps: invalid type: string"),
            (Some(4), "steps: invalid type: integer"),
            (Some(5), "missing field `steps`"),
        ],
    );
}

#[test]
fn binary_files_get_one_message_and_spoil_nothing_else() {
    let good_bytes = file("good.jsonl");
    for (name, kind) in [
        ("image.png.jsonl", "a PNG image"),
        ("document.pdf.jsonl", "a PDF document"),
        ("archive.zip.jsonl", "a zip archive"),
        ("utf16.jsonl", "UTF-16 text"),
    ] {
        let bytes = file(name);
        let (corpus, report) = score_files(&[("good.jsonl", &good_bytes), (name, &bytes)]);
        assert_eq!(corpus.rollouts.len(), 4, "{name}");
        assert_eq!(
            report.diagnostics.len(),
            1,
            "{name}: {:?}",
            report.diagnostics
        );
        let d = &report.diagnostics[0];
        assert_eq!((d.file.as_str(), d.line), (name, None));
        assert!(
            d.message.contains(kind) && d.message.contains("skipped"),
            "{}",
            d.message
        );
        assert_eq!(report.conditions, good().conditions, "{name}");
    }
}

#[test]
fn two_formats_in_one_drop_are_both_read() {
    let canonical = file("good.jsonl");
    let tau_bench = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/import/tau-bench/tiny-model-retail.json"),
    )
    .unwrap();
    let tau_name = "tiny-model-retail.json";
    let (_, both) = score_files(&[("good.jsonl", &canonical), (tau_name, &tau_bench)]);
    let (_, alone) = score_files(&[(tau_name, &tau_bench)]);
    assert!(both.diagnostics.is_empty(), "{:?}", both.diagnostics);
    // The conditions of each format, scored together, are those scored apart (different
    // datasets draw from their own bootstrap streams).
    let mut expected = good().conditions;
    expected.extend(alone.conditions);
    expected
        .sort_by(|a, b| (&a.dataset, &a.model, &a.method).cmp(&(&b.dataset, &b.model, &b.method)));
    assert_eq!(both.conditions, expected);
}

#[test]
fn lines_of_another_format_inside_a_canonical_file_are_line_errors() {
    bad_lines_case(
        "mixed-lines.jsonl",
        4,
        &[
            (Some(2), "missing field `dataset`"),
            (Some(4), "missing field `dataset`"),
        ],
    );
}

#[test]
fn the_same_file_twice_is_counted_once_and_said() {
    let bytes = file("good.jsonl");
    let once = good();
    // The same name twice (dropped again), and the same bytes under another name (a copy).
    for second in ["good.jsonl", "good (1).jsonl"] {
        let (corpus, report) = score_files(&[("good.jsonl", &bytes), (second, &bytes)]);
        assert_eq!(corpus.rollouts.len(), 4, "{second}");
        assert_eq!(report.conditions, once.conditions, "{second}");
        assert_eq!(report.diagnostics.len(), 1);
        let d = &report.diagnostics[0];
        assert_eq!((d.file.as_str(), d.line), (second, None));
        assert!(d.message.contains("already loaded") && d.message.contains("not counted again"));
        assert_eq!(report.inputs[1].repeats.as_deref(), Some("good.jsonl"));
        assert_eq!(report.inputs[1].rollouts, 0);
    }
    // A file with bad lines, twice: its diagnostics are not repeated either.
    let dirty = file("invalid-utf8.jsonl");
    let (_, report) = score_files(&[("a.jsonl", &dirty), ("b.jsonl", &dirty)]);
    assert_eq!(report.diagnostics.len(), 2, "{:?}", report.diagnostics);
    assert_eq!(report.diagnostics_total, 2);
    // Documents and paired formats too: a tau-bench file and a BFCL result + score, twice.
    let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let tau = std::fs::read(fx.join("tau-bench/tiny-model-retail.json")).unwrap();
    let result_name = "result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json";
    let score_name = "score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json";
    let result = std::fs::read(fx.join("bfcl").join(result_name)).unwrap();
    let score = std::fs::read(fx.join("bfcl").join(score_name)).unwrap();
    let files: Vec<(&str, &[u8])> = vec![
        ("tiny-model-retail.json", &tau),
        (result_name, &result),
        (score_name, &score),
    ];
    let (c1, r1) = score_files(&files);
    let mut twice = files.clone();
    twice.extend([
        ("copy/tiny-model-retail.json", &tau[..]),
        ("copy/BFCL_v4_multi_turn_base_result.json", &result[..]),
        ("copy/BFCL_v4_multi_turn_base_score.json", &score[..]),
    ]);
    let (c2, r2) = score_files(&twice);
    assert_eq!(c1.rollouts.len(), c2.rollouts.len());
    assert_eq!(r1.conditions, r2.conditions);
    assert_eq!(
        r2.diagnostics.len() - r1.diagnostics.len(),
        3,
        "{:?}",
        r2.diagnostics
    );
}

#[test]
fn different_options_make_a_repeat_a_new_file() {
    // The same bytes under another method name is a deliberate relabelling, not a repeat.
    let bytes = file("good.jsonl");
    let mut ingest = Ingest::new();
    for method in [None, Some("b".to_string())] {
        let options = prefix_exec::formats::ImportOptions {
            method,
            ..Default::default()
        };
        let f = ingest.begin_file_with("good.jsonl", options);
        ingest.push(f, &bytes);
        ingest.end_file(f);
    }
    let corpus = ingest.finish();
    assert_eq!(corpus.rollouts.len(), 8);
    assert!(corpus.diagnostics.is_empty());
}

// ---- big inputs, generated -------------------------------------------------------------------

fn rollout_line(task: &str, model: &str, steps: &str) -> String {
    format!(
        r#"{{"dataset":"d","task_id":"{task}","model":"{model}","method":"a","success":true,"steps":[{steps}]}}"#
    )
}

#[test]
fn a_50_mb_line_is_one_rollout_or_one_error() {
    let big = "x".repeat(50 << 20);
    let valid = rollout_line(
        "big",
        "m",
        &format!(r#"{{"tool":"w","args":{{"text":"{big}"}},"ok":true}}"#),
    );
    let garbage = format!("{{\"not json {big}");
    let small = rollout_line("t", "m", r#"{"ok":false,"label":"state"}"#);
    let text = [valid.as_str(), garbage.as_str(), small.as_str(), ""].join("\n");
    // The browser reads 4 MiB chunks; the line spans thirteen of them.
    let mut ingest = Ingest::new();
    let f = ingest.begin_file("big.jsonl");
    for chunk in text.as_bytes().chunks(4 << 20) {
        ingest.push(f, chunk);
    }
    ingest.end_file(f);
    let corpus = ingest.finish();
    assert_eq!(corpus.rollouts.len(), 2);
    assert_eq!(corpus.rollouts[0].horizon, 1);
    assert_eq!(corpus.diagnostics.len(), 1);
    assert_eq!(corpus.diagnostics[0].line, Some(2));
    assert!(
        corpus.diagnostics[0].message.len() < 300,
        "a message never quotes the line"
    );
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn json_nested_10000_deep_is_an_error_not_a_stack_overflow() {
    let deep = nested(10_000);
    let as_args = rollout_line(
        "t",
        "m",
        &format!(r#"{{"tool":"x","args":{deep},"ok":true}}"#),
    );
    let as_error = rollout_line("t2", "m", &format!(r#"{{"tool":"x","error":{deep}}}"#));
    let as_tools = format!(r#"{{"tools":{deep}}}"#);
    let as_line = deep.clone();
    let good_line = rollout_line("t3", "m", r#"{"ok":true}"#);
    let text = [
        as_args.as_str(),
        as_error.as_str(),
        as_tools.as_str(),
        as_line.as_str(),
        good_line.as_str(),
    ]
    .join("\n");
    let (corpus, report) = report_of("deep.jsonl", text.as_bytes());
    // `args` is never parsed, so a deep value there is skipped like any other: the rollout counts.
    let lines: Vec<Option<u64>> = report.diagnostics.iter().map(|d| d.line).collect();
    assert_eq!(corpus.rollouts.len(), 2, "{:?}", report.diagnostics);
    assert_eq!(
        lines,
        [Some(2), Some(3), Some(4)],
        "{:?}",
        report.diagnostics
    );
    assert!(report
        .diagnostics
        .iter()
        .all(|d| d.message.contains("recursion limit")
            || d.message.contains("expected a JSON object")));
    // The first line decides the format; a deep first line must not overflow detection either,
    // nor a deep element in a tau-bench document or a BFCL line.
    let deep_first = [as_line.as_str(), good_line.as_str()].join("\n");
    let _ = report_of("deep-first.jsonl", deep_first.as_bytes());
    let doc = format!(r#"[{{"task_id":1,"trial":0,"reward":1,"info":{deep},"traj":[]}}]"#);
    let _ = report_of("gpt-4o-airline.json", doc.as_bytes());
    let bfcl = format!(r#"{{"id":"multi_turn_base_0","result":{deep},"inference_log":[]}}"#);
    let _ = report_of("BFCL_v4_multi_turn_base_result.json", bfcl.as_bytes());
    harness::check_report(text.as_bytes());
}

#[test]
fn a_rollout_of_100000_steps_is_scored_exactly() {
    let mut steps = vec![r#"{"ok":true}"#; 100_000];
    steps[99_998] = r#"{"ok":false,"label":"dependency"}"#;
    let line = rollout_line("t", "m", &steps.join(","));
    let corpus = read_files([("long.jsonl", line.as_bytes())]);
    assert_eq!(corpus.rollouts.len(), 1);
    let r = &corpus.rollouts[0];
    assert_eq!((r.horizon, r.fed.0), (100_000, 99_999));
    let report = build_report(
        &corpus,
        &Settings {
            bootstrap: 50,
            max_depth: MaxDepth::All,
            ..Settings::default()
        },
    );
    let c = &report.conditions[0];
    assert_eq!(c.mean_fed.value, Some(99_999.0));
    assert_eq!(c.ter.value, Some(0.0));
    // PEC is tabulated to the cap; the rollout survives every tabulated depth.
    assert_eq!(c.pec.len(), prefix_exec::score::MAX_DEPTH_CAP as usize);
    assert!(c.pec.iter().all(|p| p.value == 1.0));
    assert!(report.identity_violations.is_empty());
}

#[test]
fn twenty_thousand_conditions_are_scored_with_limits_said() {
    let mut text = String::new();
    for i in 0..20_000 {
        let steps = if i % 2 == 0 {
            r#"{"ok":true},{"ok":true}"#
        } else {
            r#"{"ok":true},{"ok":false}"#
        };
        text.push_str(&rollout_line(
            &format!("t{}", i % 50),
            &format!("m{i:05}"),
            steps,
        ));
        text.push('\n');
    }
    let corpus = read_files([("wide.jsonl", text.as_bytes())]);
    assert_eq!(corpus.conditions.len(), 20_000);
    // The default 10,000 resamples would need 21 GB: the report has point estimates and says
    // why there are no intervals; pairs of 20,000 models are not made automatically.
    let report = build_report(&corpus, &Settings::default());
    assert_eq!(report.conditions.len(), 20_000);
    assert!(report
        .conditions
        .iter()
        .all(|c| c.ter.ci.is_none() && c.ter.value.is_some()));
    assert!(report.paired.is_empty());
    assert_eq!(report.notes.len(), 3, "{:?}", report.notes);
    assert!(report.notes[0].contains("no bootstrap intervals") && report.notes[0].contains("MiB"));
    assert!(report.notes[1].contains("20000 models under method a"));
    // Nor ranks: 2·10⁸ pairs.
    assert!(report.ranks.is_empty() && report.rank_divergence.is_empty());
    assert!(report.notes[2].contains("no ranks — 20000 conditions"));
    // Fewer resamples fit: intervals for all, still no automatic pairs.
    let small = build_report(
        &corpus,
        &Settings {
            bootstrap: 100,
            ..Settings::default()
        },
    );
    assert!(small.conditions.iter().all(|c| c.ter.ci.is_some()));
    assert_eq!(small.notes.len(), 2, "{:?}", small.notes);
    // Named pairs are made whatever the group size.
    let pair = build_report(
        &corpus,
        &Settings {
            bootstrap: 100,
            pairs: vec![("m00001".to_string(), "m00000".to_string())],
            ..Settings::default()
        },
    );
    assert_eq!(pair.paired.len(), 1);
    assert_eq!(
        (
            pair.paired[0].a.name().unwrap(),
            pair.paired[0].b.name().unwrap()
        ),
        ("m00001", "m00000")
    );
    assert_eq!(pair.notes.len(), 1, "{:?}", pair.notes);
    assert!(pair.notes[0].contains("no ranks"));
}

#[test]
fn an_array_is_never_read_as_a_result_by_position() {
    let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let tau = std::fs::read_to_string(fx.join("tau-bench/tiny-model-retail.json")).unwrap();
    let name = "tiny-model-retail.json";
    let (before, _) = report_of(name, tau.as_bytes());
    // One more element, written as an array of the fields in their declared order.
    let at = tau.rfind(']').unwrap();
    let spiked = format!("{}, [99, 0, 1.0, {{}}, []]{}", &tau[..at], &tau[at..]);
    let (corpus, report) = report_of(name, spiked.as_bytes());
    assert_eq!(corpus.rollouts.len(), before.rollouts.len());
    assert_eq!(report.diagnostics.len(), 1, "{:?}", report.diagnostics);
    assert!(report.diagnostics[0]
        .message
        .contains("expected a tau-bench result"));
}

#[test]
fn numbers_no_double_holds_where_the_scorer_does_not_look_are_kept_and_shown() {
    // Found by fuzzing: the scorer skips `meta`, `args` and unknown fields unparsed, so `1e400`
    // there is legal; the rollout browser must then show the line too.
    let line = r#"{"dataset":"d","task_id":"t","model":"m","method":"a","success":true,"meta":{"x":1e400},"extra":-1e999,"steps":[{"tool":"w","args":{"n":1e400},"ok":true},{"tool":"w","ok":false}]}"#;
    harness::check_report(line.as_bytes());
    let (corpus, report) = report_of("big-numbers.jsonl", line.as_bytes());
    assert_eq!(corpus.rollouts.len(), 1);
    assert!(report.diagnostics.is_empty());
    let steps = prefix_exec::browse::parse_steps(line).unwrap();
    assert_eq!(steps[0].args.as_deref(), Some(r#"{"n":1e400}"#));
    assert!(steps[1].first_error);
}
