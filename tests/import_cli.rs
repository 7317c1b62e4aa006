//! `prefix-exec convert` and the import flags of `prefix-exec score`, through the binary.

#[path = "support/cli_bin.rs"]
mod cli_bin;

mod import_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use import_support::{fixtures, ALL_FIXTURES};

fn run(args: &[&str]) -> Output {
    cli_bin::command()
        .args(args)
        .output()
        .expect("the binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn paths(rels: &[&str]) -> Vec<String> {
    rels.iter()
        .map(|r| fixtures().join(r).to_string_lossy().into_owned())
        .collect()
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn convert_then_score_gives_the_same_report() {
    let dir = scratch("import-cli-roundtrip");
    let out = dir.join("all.jsonl");
    let inputs = paths(&ALL_FIXTURES);
    let mut args = vec!["convert"];
    args.extend(inputs.iter().map(String::as_str));
    let out_s = out.to_string_lossy().into_owned();
    args.extend([
        "-o",
        &out_s,
        "--exclude-termination",
        "infrastructure_error",
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    // 24 since inference errors count as failed rollouts (the fixture has one).
    assert!(stderr.contains("wrote 24 rollouts"), "{stderr}");
    assert!(
        stderr.contains("excluded by termination reason \"infrastructure_error\""),
        "{stderr}"
    );
    assert!(stderr.contains("tau-bench results, 4 rollouts"), "{stderr}");

    let direct = dir.join("direct.json");
    let back = dir.join("back.json");
    let mut args = vec!["score"];
    args.extend(inputs.iter().map(String::as_str));
    let direct_s = direct.to_string_lossy().into_owned();
    args.extend([
        "--bootstrap",
        "300",
        "--exclude-termination",
        "infrastructure_error",
        "--json",
        &direct_s,
    ]);
    assert!(run(&args).status.success());
    let back_s = back.to_string_lossy().into_owned();
    let o = run(&["score", &out_s, "--bootstrap", "300", "--json", &back_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (report(&direct), report(&back));
    assert_eq!(a["conditions"], b["conditions"]);
    assert_eq!(a["paired"], b["paired"]);
    assert_eq!(b["diagnostics_total"], 0);
}

#[test]
fn overrides_and_schema_flags() {
    let input = paths(&["tau2/telecom-results.json"]);
    let o = run(&[
        "convert",
        &input[0],
        "-o",
        "-",
        "--model",
        "renamed",
        "--method",
        "agent",
        "--no-schema-checks",
    ]);
    assert!(o.status.success());
    let stdout = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert!(lines.iter().all(|l| l["model"] == "renamed"
        && l["method"] == "agent"
        && l["dataset"] == "tau2/telecom"));
    // No schema check: toggle_data {"on": "yes"} stands as the environment accepted it.
    assert_eq!(lines[0]["steps"][1]["ok"], true);
    assert_eq!(
        lines[3]["meta"]["termination_reason"],
        "infrastructure_error"
    );

    // Scoring the converted file can exclude by the kept termination reason.
    let dir = scratch("import-cli-flags");
    let file = dir.join("telecom.jsonl");
    std::fs::write(&file, &stdout).unwrap();
    let o = run(&[
        "score",
        &file.to_string_lossy(),
        "--bootstrap",
        "0",
        "--exclude-termination",
        "infrastructure_error",
        "--json",
        "-",
    ]);
    assert!(o.status.success());
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["conditions"][0]["n"], 4);
    assert_eq!(r["conditions"][0]["model"], "renamed");
}

#[test]
fn a_lone_bfcl_result_fails_with_a_reason() {
    let input = paths(&["bfcl/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json"]);
    let dir = scratch("import-cli-lone");
    let out = dir.join("x.jsonl").to_string_lossy().into_owned();
    let o = run(&["convert", &input[0], "-o", &out]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs its score file"));
    let o = run(&["score", &input[0], "--bootstrap", "0"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn transcript_flags_field_mapping_and_reject_rules() {
    let dir = scratch("import-cli-transcripts");
    let input = paths(&["transcript/responses.json"]).remove(0);
    let json = |extra: &[&str]| {
        let out = dir.join("r.json");
        let out_s = out.to_string_lossy().into_owned();
        let mut args = vec!["score", input.as_str(), "--bootstrap", "0", "-q", "--json"];
        args.push(&out_s);
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        report(&out)
    };
    let success = |r: &serde_json::Value| r["conditions"][0]["final_success"]["value"].clone();
    assert_eq!(success(&json(&[])), 0.5);
    // --field and a mapping file say the same; the mapping used is in the report.
    let mapping = dir.join("mapping.json");
    std::fs::write(&mapping, r#"{"success": "reward", "threshold": 0.5}"#).unwrap();
    let by_file = json(&["--mapping", &mapping.to_string_lossy()]);
    let by_flag = json(&["--field", "threshold=0.5"]);
    assert_eq!(success(&by_file), 1.0);
    assert_eq!(by_file["conditions"], by_flag["conditions"]);
    assert_eq!(by_file["inputs"][0]["mapping"]["success"], "reward ≥ 0.5");
    // Text rules replaced or off: the r-1 lookup ("Tool lookup not found") then executes.
    let rules = dir.join("rules.json");
    std::fs::write(&rules, r#"[{"id": "hits", "pattern": "hits$"}]"#).unwrap();
    let fed = |r: &serde_json::Value| r["conditions"][0]["mean_fed"]["value"].clone();
    assert_eq!(fed(&json(&[])), 1.0);
    assert_eq!(
        fed(&json(&["--reject-rules", &rules.to_string_lossy()])),
        1.5
    );
    assert_eq!(fed(&json(&["--no-reject-text-rules"])), 2.0);
    // Wrong flags fail with what is wrong.
    for (args, says) in [
        (vec!["--field", "colour=x"], "unknown field \"colour\""),
        (
            vec!["--field", "threshold=high"],
            "threshold must be a number",
        ),
    ] {
        let mut all = vec!["score", input.as_str()];
        all.extend(args);
        let o = run(&all);
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{says}");
    }
    std::fs::write(&rules, r#"[{"id": "a", "pattern": "("}]"#).unwrap();
    let o = run(&["score", &input, "--reject-rules", &rules.to_string_lossy()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("reject rule \"a\""));
}
