//! The library entry points of `cli` (what the Python package calls) against the `prefix-exec`
//! binary: the same report bytes, the same canonical lines, the command line's messages.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use prefix_exec::cli::{convert_inputs, score_inputs, Input};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn run(args: &[&str]) -> Output {
    cli_bin::command()
        .current_dir(golden_dir())
        .args(args)
        .output()
        .expect("the binary runs")
}

fn flags(f: &[&str]) -> Vec<OsString> {
    f.iter().map(OsString::from).collect()
}

#[test]
fn score_inputs_gives_the_binary_s_report_from_a_path_or_from_memory() {
    let settings = ["--bootstrap", "300", "--seed", "4", "--max-depth", "all"];
    let mut args = vec!["score", "small.jsonl", "--json", "-", "--quiet"];
    args.extend(settings);
    let out = run(&args);
    assert!(out.status.success());
    let path = golden_dir().join("small.jsonl");
    let from_path = score_inputs(&flags(&settings), vec![Input::Path(path.clone())]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    // Named as the binary names the file it was given, the in-memory input reads the same.
    let from_memory = score_inputs(
        &flags(&settings),
        vec![Input::Bytes {
            name: "small.jsonl".into(),
            bytes,
        }],
    )
    .unwrap();
    assert_eq!(from_memory.report.to_json().as_bytes(), &out.stdout[..]);
    assert_eq!(
        from_path.report.conditions, from_memory.report.conditions,
        "a path reads as its bytes do"
    );
    // The binary's stderr about the input is the diagnostics, line for line.
    let stderr = String::from_utf8(out.stderr).unwrap();
    for d in &from_memory.diagnostics {
        assert!(stderr.contains(d.as_str()), "{d}");
    }
}

#[test]
fn convert_inputs_gives_the_binary_s_lines() {
    let out = run(&["convert", "small.jsonl", "-o", "-", "--quiet"]);
    let (text, _) =
        convert_inputs(&[], vec![Input::Path(golden_dir().join("small.jsonl"))]).unwrap();
    assert_eq!(text.as_bytes(), &out.stdout[..]);
}

#[test]
fn errors_carry_the_command_line_s_messages() {
    let bad = |f: &[&str], input: Input| score_inputs(&flags(f), vec![input]).unwrap_err();
    let e = bad(
        &["--no-such-flag"],
        Input::Path(golden_dir().join("small.jsonl")),
    );
    assert!(
        format!("{e:#}").contains("unexpected argument '--no-such-flag'"),
        "{e:#}"
    );
    let e = bad(
        &[],
        Input::Bytes {
            name: "mem.jsonl".into(),
            bytes: b"{\"dataset\": 1}\nnot json\n".to_vec(),
        },
    );
    let message = format!("{e:#}");
    assert!(
        message.contains("mem.jsonl:1: ") && message.contains("mem.jsonl:2: "),
        "{message}"
    );
    assert!(message.ends_with("no valid rollout was read; nothing to score"));
    let e = bad(&[], Input::Path(golden_dir().join("no-such-file.jsonl")));
    assert!(format!("{e:#}").starts_with("cannot open"), "{e:#}");
}
