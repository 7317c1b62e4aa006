//! Malformed variants of every format: truncated files, wrong types, missing ids, missing
//! companion files, unknown documents. Each gives a clear diagnostic and keeps every valid
//! rollout; nothing panics.

mod import_support;

use import_support::*;
use prefix_exec::formats::ImportOptions;

fn read(files: Vec<(String, Vec<u8>)>) -> prefix_exec::rollout::Corpus {
    ingest_with(&files, &ImportOptions::default(), 13).0
}

fn text(rel: &str) -> (String, String) {
    let (name, bytes) = fixture(rel);
    (name, String::from_utf8(bytes).unwrap())
}

fn replace_once(s: &str, from: &str, to: &str) -> String {
    assert_eq!(s.matches(from).count(), 1, "{from}");
    s.replacen(from, to, 1)
}

#[test]
fn truncated_tau_bench_keeps_the_complete_elements() {
    let (name, t) = text("tau-bench/tiny-model-retail.json");
    // Cut inside the third element (task 1, trial 0).
    let cut = t.find("I am sorry").unwrap();
    let corpus = read(vec![(name, t.as_bytes()[..cut].to_vec())]);
    assert_eq!(
        shapes(&corpus),
        want(&[("0", 2, 3, true), ("0", 2, 1, true)])
    );
    assert!(
        has_message(&corpus, &["truncated", "2 complete elements"]),
        "{:?}",
        messages(&corpus)
    );
    assert_eq!(corpus.files[0].errors, 1);
}

#[test]
fn tau_bench_wrong_types_and_missing_ids_cost_one_element_each() {
    let (name, t) = text("tau-bench/tiny-model-retail.json");
    let t = replace_once(&t, "\"reward\": 0.0,", "\"reward\": \"zero\",");
    let t = replace_once(&t, "\"task_id\": 1,\n    \"trial\": 0,", "\"trial\": 0,");
    let corpus = read(vec![(name, t.into_bytes())]);
    assert_eq!(
        shapes(&corpus),
        want(&[("0", 2, 3, true), ("0", 2, 1, true)])
    );
    let m = messages(&corpus);
    assert!(
        m.iter()
            .any(|m| m.contains("element 2") && m.contains("task_id")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|m| m.contains("element 3") && m.contains("reward")),
        "{m:?}"
    );
    // Each message points at the line where its element starts.
    assert!(corpus
        .diagnostics
        .iter()
        .all(|d| d.line.is_some_and(|l| l > 1)));
}

#[test]
fn truncated_and_broken_tau2_results() {
    let (name, t) = text("tau2/telecom-results.json");
    let cut = t.find("\"id\": \"s3\"").unwrap();
    let corpus = read(vec![(name.clone(), t.as_bytes()[..cut].to_vec())]);
    assert_eq!(
        shapes(&corpus),
        want(&[("a", 2, 2, true), ("b", 1, 2, false)])
    );
    assert!(
        has_message(&corpus, &["truncated"]),
        "{:?}",
        messages(&corpus)
    );

    let broken = replace_once(
        &t,
        r#""reward_info": {"reward": 1.0}"#,
        r#""reward_info": {"reward": "1"}"#,
    );
    let broken = replace_once(&broken, r#""id": "s3", "task_id": "c","#, r#""id": "s3","#);
    let corpus = read(vec![(name, broken.into_bytes())]);
    assert_eq!(
        shapes(&corpus),
        want(&[("b", 1, 2, false), ("a", 1, 1, false), ("c", 1, 1, false)])
    );
    let m = messages(&corpus);
    assert!(
        m.iter()
            .any(|m| m.contains("simulations[0]") && m.contains("reward_info.reward")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|m| m.contains("simulations[2]") && m.contains("task_id")),
        "{m:?}"
    );
}

#[test]
fn a_tau2_results_object_without_info_keeps_its_simulations() {
    let (name, t) = text("tau2/telecom-results.json");
    let start = t.find("\"info\"").unwrap();
    let end = t.find("\"tasks\"").unwrap();
    let t = format!("{}{}", &t[..start], &t[end..]);
    let corpus = read(vec![(name, t.into_bytes())]);
    assert_eq!(corpus.rollouts.len(), 5);
    assert_eq!(
        corpus.condition_names(0),
        ("tau2", "unknown-model", "unknown-method")
    );
    assert!(has_message(&corpus, &["no complete `info`"]));
}

#[test]
fn bfcl_lines_that_break() {
    let (rname, r) = text("bfcl/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json");
    let (sname, s) = text("bfcl/score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json");
    let mut lines: Vec<String> = r.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen("\"id\": \"multi_turn_base_2\", ", "", 1);
    let last = lines.len() - 1;
    let half = lines[last].len() / 2;
    lines[last].truncate(half);
    let corpus = read(vec![
        (rname, lines.join("\n").into_bytes()),
        (sname, s.into_bytes()),
    ]);
    assert_eq!(
        shapes(&corpus),
        want(&[
            // The inference error: a rollout that failed before any step.
            ("multi_turn_base_0", 1, 1, false),
            ("multi_turn_base_1", 3, 2, true),
            ("multi_turn_base_3", 2, 2, false)
        ])
    );
    let lines_with_errors: Vec<_> = corpus.diagnostics.iter().filter_map(|d| d.line).collect();
    assert_eq!(lines_with_errors, [3, 5]);
    assert!(
        has_message(&corpus, &["missing field `id`"]),
        "{:?}",
        messages(&corpus)
    );
    // The published counts no longer match, and the reader is told.
    assert!(
        has_message(&corpus, &["same run"]),
        "{:?}",
        messages(&corpus)
    );
}

#[test]
fn a_bfcl_result_without_its_score_file_is_refused_with_a_reason() {
    let corpus = read(vec![fixture(
        "bfcl/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json",
    )]);
    assert!(corpus.rollouts.is_empty());
    assert!(
        has_message(
            &corpus,
            &["needs its score file", "BFCL_v4_multi_turn_base_score.json"]
        ),
        "{:?}",
        messages(&corpus)
    );
    let corpus = read(vec![fixture(
        "bfcl/score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json",
    )]);
    assert!(has_message(
        &corpus,
        &["lists only the failed tests", "result file"]
    ));
}

#[test]
fn a_bfcl_score_file_with_a_broken_summary() {
    let (rname, r) = text("bfcl/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json");
    let (sname, s) = text("bfcl/score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json");
    let s = s.replacen("\"correct_count\": 2", "\"correct_count\": \"two\"", 1);
    let corpus = read(vec![(rname, r.into_bytes()), (sname, s.into_bytes())]);
    // Failures are still listed, so every rollout keeps its success (the inference error too).
    assert_eq!(corpus.rollouts.len(), 5);
    assert!(has_message(&corpus, &["first line of a BFCL score file"]));
}

#[test]
fn tau2_simulation_files_need_their_results_json() {
    let corpus = read(vec![fixture("tau2/dir-run/simulations/sim-a.json")]);
    assert!(corpus.rollouts.is_empty());
    assert!(
        has_message(&corpus, &["needs its run's results.json"]),
        "{:?}",
        messages(&corpus)
    );
    // With every name given, the simulation stands on its own.
    let options = ImportOptions {
        dataset: Some("tau2/airline".into()),
        model: Some("m".into()),
        method: Some("x".into()),
        ..ImportOptions::default()
    };
    let (corpus, _) = ingest_with(
        &[fixture("tau2/dir-run/simulations/sim-a.json")],
        &options,
        64,
    );
    assert_eq!(shapes(&corpus), want(&[("1", 2, 1, true)]));
}

#[test]
fn unknown_files_name_the_formats_tried() {
    let cases: [(&str, &[u8]); 5] = [
        ("doc.json", b"{\n  \"hello\": \"world\"\n}\n"),
        ("array.json", b"[\n  {\"a\": 1}\n]\n"),
        ("notes.txt", b"just some text\nand more\n"),
        ("table.csv", b"task,success\n1,true\n"),
        ("weird.json", b"{\"foo\": 1}\n{\"bar\": 2}\n"),
    ];
    for (name, bytes) in cases {
        let corpus = read(vec![(name.to_string(), bytes.to_vec())]);
        assert!(corpus.rollouts.is_empty());
        assert!(
            has_message(
                &corpus,
                &[
                    "formats tried",
                    "tau-bench",
                    "tau2",
                    "BFCL",
                    "canonical JSONL"
                ]
            ),
            "{name}: {:?}",
            messages(&corpus)
        );
    }
    let corpus = read(vec![("empty.json".to_string(), b"  \n".to_vec())]);
    assert!(
        has_message(&corpus, &["holds no rollouts"]),
        "{:?}",
        messages(&corpus)
    );
}

#[test]
fn arbitrary_cuts_never_panic_and_keep_a_prefix() {
    for rel in ALL_FIXTURES {
        let (name, bytes) = fixture(rel);
        let full = read(vec![(name.clone(), bytes.clone())]).rollouts.len();
        for cut in (0..bytes.len()).step_by(97) {
            let corpus = read(vec![(name.clone(), bytes[..cut].to_vec())]);
            assert!(corpus.rollouts.len() <= full, "{rel} cut at {cut}");
        }
    }
}

#[test]
fn transcripts_that_break_say_what_and_where() {
    // Line 2 names no outcome; line 3 is not JSON; line 4 has no messages; line 5's outcome is
    // a string; lines 1 and 6 are read.
    let text = [
        r#"{"task_id": "1", "pass": true, "messages": []}"#,
        r#"{"task_id": "2", "messages": [{"role": "assistant", "content": "hi"}]}"#,
        r#"{"task_id": "3", "pass": true, "messages": [}"#,
        r#"{"task_id": "4", "pass": true, "messages": "none"}"#,
        r#"{"task_id": "5", "pass": "yes", "messages": []}"#,
        r#"{"task_id": "6", "pass": false, "messages": []}"#,
    ]
    .join("\n");
    let corpus = read(vec![("runs.jsonl".into(), text.into_bytes())]);
    let tasks: Vec<String> = corpus
        .rollouts
        .iter()
        .map(|r| corpus.task_name(r.task).to_string())
        .collect();
    assert_eq!(tasks, ["1", "6"]);
    let m = messages(&corpus);
    assert!(
        m.iter()
            .any(|d| d.starts_with("2: ") && d.contains("looked for success, pass")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|d| d.starts_with("3: ") && d.contains("not JSON")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|d| d.starts_with("4: ") && d.contains("no list of messages")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|d| d.starts_with("5: ") && d.contains("must be a boolean or a number")),
        "{m:?}"
    );
}
