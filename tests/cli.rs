//! The `prefix-exec` binary on the golden input: exit codes, diagnostics on stderr, and a
//! `--json -` report identical to the library's for the same settings.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::path::{Path, PathBuf};
use std::process::Output;

use prefix_exec::report::{build_report, Report, Settings};
use serde_json::Value;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Runs `prefix-exec <args>` in `dir`.
fn run(dir: &Path, args: &[&str]) -> Output {
    cli_bin::command()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The library's report of the golden input under the name the CLI sees.
fn library_report(settings: &Settings) -> Report {
    let bytes = std::fs::read(golden_dir().join("small.jsonl")).unwrap();
    // The golden file is the report without the built-in label rules (see tests/golden.rs).
    let options = prefix_exec::formats::ImportOptions {
        labels: prefix_exec::label::LabelSettings::off(),
        ..Default::default()
    };
    build_report(
        &prefix_exec::ingest::read_files_with([("small.jsonl", &bytes[..])], &options),
        settings,
    )
}

fn golden_settings() -> Settings {
    Settings {
        bootstrap: 200,
        seed: 1,
        ..Settings::default()
    }
}

const SCORE: &[&str] = &[
    "score",
    "small.jsonl",
    "--bootstrap",
    "200",
    "--seed",
    "1",
    "--json",
    "-",
    "--no-builtin-labels",
];

#[test]
fn scores_the_golden_input() {
    let out = run(&golden_dir(), SCORE);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    for line in [9, 18, 23] {
        assert!(
            stderr.contains(&format!("small.jsonl:{line}:")),
            "no diagnostic for line {line}:\n{stderr}"
        );
    }
    assert!(!stderr.contains("small.jsonl:14:"), "blank line diagnosed");
    // stdout is the report alone: valid JSON, byte-identical to the library's.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(json["schema"], "prefix-exec/report/v1");
    let expected = library_report(&golden_settings()).to_json();
    assert!(stdout == expected, "CLI and library reports differ");
    // ... and therefore equal to the committed golden file.
    let golden = std::fs::read_to_string(golden_dir().join("small.report.json")).unwrap();
    assert!(
        stdout == golden,
        "CLI report differs from small.report.json"
    );
}

#[test]
fn json_to_a_file_and_table_to_stdout() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-json-file");
    std::fs::create_dir_all(&dir).unwrap();
    let input = golden_dir().join("small.jsonl");
    let out_path = dir.join("report.json");
    let out = run(
        &dir,
        &[
            "score",
            input.to_str().unwrap(),
            "--bootstrap",
            "0",
            "--json",
            out_path.to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    let written: Report =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    assert_eq!(written.conditions.len(), 6);
    assert_eq!(written.settings.bootstrap, 0);
    // The table names every dataset / model block.
    let table = String::from_utf8_lossy(&out.stdout);
    for block in ["bfcl / gpt-4.1", "bfcl / llama-4", "toolsandbox / gpt-4.1"] {
        assert!(table.contains(block), "{block} missing from\n{table}");
    }
}

#[test]
fn only_bad_lines_fail() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-bad-only");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.jsonl"), "not json\n{\"dataset\":\"d\"}\n").unwrap();
    let out = run(&dir, &["score", "bad.jsonl", "--bootstrap", "0"]);
    assert!(!out.status.success(), "{:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.jsonl:1:") && stderr.contains("bad.jsonl:2:"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_file_fails() {
    let out = run(&golden_dir(), &["score", "no-such-file.jsonl"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-file.jsonl"));
}

#[test]
fn pair_restricts_and_orients_the_paired_comparisons() {
    let mut args = SCORE.to_vec();
    args.extend(["--pair", "ReAct,Dual-Loop"]);
    let out = run(&golden_dir(), &args);
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paired = report["paired"].as_array().unwrap();
    // bfcl has Dual-Loop and ReAct under both models; toolsandbox has no Dual-Loop, and no pair
    // of models is named.
    assert_eq!(paired.len(), 2);
    for (p, model) in paired.iter().zip(["gpt-4.1", "llama-4"]) {
        assert_eq!(
            (&p["a"], &p["b"]),
            (&Value::from("ReAct"), &Value::from("Dual-Loop"))
        );
        assert_eq!(
            (&p["compare"], &p["model"]),
            (&Value::from("methods"), &Value::from(model))
        );
    }
    // a = ReAct: TER 1/2 − 3/4 under gpt-4.1.
    assert!((paired[0]["ter"]["delta"].as_f64().unwrap() + 0.25).abs() < 1e-12);
    assert_eq!(
        report["settings"]["pairs"],
        serde_json::json!([["ReAct", "Dual-Loop"]])
    );
    // Same bytes as the library with the same pair.
    let settings = Settings {
        pairs: vec![("ReAct".to_string(), "Dual-Loop".to_string())],
        ..golden_settings()
    };
    assert!(String::from_utf8(out.stdout).unwrap() == library_report(&settings).to_json());
}

/// `score FILE --json -` on `threads` threads, without built-in labels.
fn threads_args<'a>(
    file: &'a str,
    bootstrap: &'a str,
    seed: &'a str,
    threads: &'a str,
) -> Vec<&'a str> {
    vec![
        "score",
        file,
        "--bootstrap",
        bootstrap,
        "--seed",
        seed,
        "--threads",
        threads,
        "--json",
        "-",
        "--quiet",
        "--no-builtin-labels",
    ]
}

/// The report bytes of `threads_args` on 1, 2 and 8 threads, each run asserted successful.
fn reports_by_threads(
    dir: &std::path::Path,
    file: &str,
    bootstrap: &str,
    seed: &str,
) -> Vec<Vec<u8>> {
    ["1", "2", "8"]
        .into_iter()
        .map(|n| {
            let out = run(dir, &threads_args(file, bootstrap, seed, n));
            assert!(out.status.success(), "--threads {n}: {:?}", out.status);
            out.stdout
        })
        .collect()
}

/// The bootstrap's chunks are the same work whatever runs them: `--threads 1`, `2` and `8` write
/// the same bytes, equal to the library's (which uses every core), with several chunks per
/// dataset (1,000 resamples = 4 chunks) and paired deltas.
#[test]
fn report_bytes_do_not_depend_on_threads() {
    let reports = reports_by_threads(&golden_dir(), "small.jsonl", "1000", "3");
    let expected = library_report(&Settings {
        bootstrap: 1000,
        seed: 3,
        ..Settings::default()
    })
    .to_json();
    let json: Value = serde_json::from_slice(&reports[0]).unwrap();
    assert!(!json["paired"].as_array().unwrap().is_empty());
    for (n, r) in ["1", "2", "8"].iter().zip(&reports) {
        assert!(
            r == expected.as_bytes(),
            "--threads {n} differs from the library"
        );
    }
    let bad = run(
        &golden_dir(),
        &threads_args("small.jsonl", "1000", "3", "0"),
    );
    assert!(!bad.status.success(), "--threads 0 accepted");
}

/// A canonical file of several 1 MiB chunks is parsed on several threads (`ingest::ParallelParse`)
/// with the same result as on one: `--threads 1`, `2` and `8` write the same bytes, equal to the
/// library reading the file line by line on one thread. The file mixes rollouts, repeats of the
/// same tasks, CRLF, blank lines, a tools line and over 1,000 malformed lines (so the kept
/// diagnostics are cut at 1,000 at the same line).
#[test]
fn parallel_parse_does_not_change_the_report() {
    let golden = std::fs::read_to_string(golden_dir().join("small.jsonl")).unwrap();
    let rollouts: Vec<&str> = golden.lines().collect();
    let mut text = String::new();
    let mut i = 0usize;
    while text.len() < 3 << 20 {
        let line = match i % 11 {
            3 => "not json",
            7 if i % 2 == 0 => "",
            _ => rollouts[i % rollouts.len()],
        };
        text.push_str(line);
        text.push_str(if i % 5 == 0 { "\r\n" } else { "\n" });
        if i == 9_000 {
            text.push_str(r#"{"tools":[{"type":"function","function":{"name":"ls","parameters":{"type":"object"}}}]}"#);
            text.push('\n');
        }
        i += 1;
    }
    let dir =
        std::env::temp_dir().join(format!("prefix-exec-parallel-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("big.jsonl"), &text).unwrap();
    let reports = reports_by_threads(&dir, "big.jsonl", "50", "2");
    let options = prefix_exec::formats::ImportOptions {
        labels: prefix_exec::label::LabelSettings::off(),
        ..Default::default()
    };
    let mut ingest = prefix_exec::ingest::Ingest::new();
    ingest.set_parallel_parse(prefix_exec::ingest::ParallelParse::OFF);
    let f = ingest.begin_file_with("big.jsonl", options);
    for chunk in text.as_bytes().chunks(1 << 20) {
        ingest.push(f, chunk);
    }
    ingest.end_file(f);
    let settings = Settings {
        bootstrap: 50,
        seed: 2,
        ..Settings::default()
    };
    let (corpus, summary) = ingest.finish_with_summary();
    let expected =
        prefix_exec::report::build_report_full(&corpus, Some(&summary), &settings, &mut |_| {})
            .to_json();
    let json: Value = serde_json::from_slice(&reports[0]).unwrap();
    assert!(json["diagnostics_total"].as_u64().unwrap() > 1_000);
    for (n, r) in ["1", "2", "8"].iter().zip(&reports) {
        assert!(
            r == expected.as_bytes(),
            "--threads {n} differs from one thread"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
