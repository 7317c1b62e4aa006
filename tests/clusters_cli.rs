//! Failure clusters through the CLI on real released runs (`../shared/data/released-runs`,
//! never committed; skipped when absent): every failed rollout in exactly one cluster — each
//! condition's counts add up to its RR-Eligible —, the clusters' CSV is the report's, and the
//! clusters do not depend on the thread count.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

const FILES: &[&str] = &[
    "toolsandbox/agent_anthropic",
    "toolsandbox/agent_deepseek-ai",
    "tau-bench/gpt-4o-airline.json",
    "tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json",
    "bfcl/gpt-oss-20b-vllm/result/BFCL_v4_multi_turn_base_result.json",
    "bfcl/gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json",
];

fn run(args: &[&str]) -> Output {
    cli_bin::command()
        .current_dir(SHARED)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn clusters_add_up_to_each_condition_s_failures() {
    if !Path::new(SHARED).is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("prefix-exec-clusters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv_path = dir.join("clusters.csv");
    let csv_arg = csv_path.to_str().unwrap();
    let mut reports = Vec::new();
    for threads in ["1", "3"] {
        let out = run(&[
            &["score"],
            FILES,
            &[
                "--bootstrap",
                "0",
                "--json",
                "-",
                "-q",
                "--threads",
                threads,
            ],
            &["--clusters", csv_arg],
        ]
        .concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        reports.push(out.stdout);
    }
    assert_eq!(
        reports[0], reports[1],
        "the report depends on the thread count"
    );
    let r: Value = serde_json::from_slice(&reports[0]).unwrap();
    let clusters = r["failure_clusters"].as_array().unwrap();
    assert!(clusters.len() > 10);
    let mut failures = 0;
    for c in r["conditions"].as_array().unwrap() {
        let n: u64 = clusters
            .iter()
            .filter(|k| k["dataset"] == c["dataset"])
            .flat_map(|k| k["conditions"].as_array().unwrap())
            .filter(|k| k["model"] == c["model"] && k["method"] == c["method"])
            .map(|k| k["n"].as_u64().unwrap())
            .sum();
        assert_eq!(n, c["rr_eligible"].as_u64().unwrap(), "{}", c["model"]);
        failures += n;
    }
    // Each cluster's total is the sum of its conditions'.
    for k in clusters {
        let n: u64 = k["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["n"].as_u64().unwrap())
            .sum();
        assert_eq!(k["total"].as_u64().unwrap(), n);
    }
    // The CSV: a line per (cluster, condition), the same counts.
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "dataset,label,tool,pattern,total,model,method,n,share"
    );
    let rows: usize = clusters
        .iter()
        .map(|k| k["conditions"].as_array().unwrap().len())
        .sum();
    assert_eq!(lines.count(), rows);
    assert!(failures > 100);
    // The crashes and inference errors (no call) have clusters of their own.
    assert!(clusters.iter().any(|k| k["pattern"] == "no call"));
}
