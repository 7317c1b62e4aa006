//! Ranks on real released runs (`../shared/data/released-runs`, never committed) through the
//! CLI: the four tau-bench airline runs (gpt-4o, 4 trials a task; gpt-4.1, Qwen3-8B and
//! Qwen3-235B, one) and the four tau2 airline runs (claude-sonnet-4-5, Kimi-K2, Qwen3-32B,
//! gpt-4o-mini). The report's `ranks` and `rank_divergence` entries, the text's Ranks section,
//! the same bytes on one thread and on two, and point ranks alone without the bootstrap.
//! Skipped when the folder is absent.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::path::Path;

use serde_json::Value;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

const TAU_BENCH: &[&str] = &[
    "tau-bench/gpt-4o-airline.json",
    "tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-Qwen3-235B-A22B-Thinking-2507-FP8-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0816084901.json",
    "tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-Qwen3-8B-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0808092844.json",
    "tau-bench/jibf+agent_hard_benchmark/tau-bench/results/tool-calling-airline-gpt-4.1-0.0_range_0--1_user-openai-gpt-4o-20240806-llm_0816022412.json",
];

const TAU2: &[&str] = &[
    "tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json",
    "tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-07-25T09-08-37.941596_airline_llm_agent_gpt-4o-mini_user_simulator_gpt-4o-mini.json",
    "tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-08-12T21-04-49.372563_airline_llm_agent_Kimi-K2-Instruct_user_simulator_gpt-4o-20240806.json",
    "tau2-bench/jibf+agent_hard_benchmark/tau2-bench/data/simulations/2025-08-13T13-52-31.016323_airline_llm_agent_models--Qwen--Qwen3-32B_user_simulator_gpt-4o-20240806.json",
];

/// `score FILES --json - ARGS`: the report and the text table (on stderr with `--json -`).
fn score(files: &[&str], args: &[&str]) -> Option<(Value, String, String)> {
    if !Path::new(SHARED).is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return None;
    }
    let out = cli_bin::command()
        .current_dir(SHARED)
        .arg("score")
        .args(files)
        .args(["--json", "-", "-q"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let json = String::from_utf8(out.stdout).unwrap();
    Some((serde_json::from_str(&json).unwrap(), json, stderr))
}

fn entry<'a>(r: &'a Value, metric: &str) -> &'a Value {
    r["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} ranks"))
}

fn ranked<'a>(t: &'a Value, model: &str) -> &'a Value {
    t["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["model"] == model)
        .unwrap_or_else(|| panic!("no {model}"))
}

/// `(rank, rank_lo, rank_hi)`.
fn rank(t: &Value, model: &str) -> (u64, Option<u64>, Option<u64>) {
    let c = ranked(t, model);
    (
        c["rank"].as_u64().unwrap(),
        c["rank_lo"].as_u64(),
        c["rank_hi"].as_u64(),
    )
}

#[test]
fn tau_bench_airline_runs_are_ranked_with_simultaneous_intervals() {
    let Some((r, json, text)) = score(TAU_BENCH, &["--bootstrap", "2000", "--threads", "1"]) else {
        return;
    };
    assert_eq!(r["ranks"].as_array().unwrap().len(), 3);
    assert_eq!(r["rank_divergence"].as_array().unwrap().len(), 2);
    for metric in ["final_success", "ter", "auc_pec"] {
        let t = entry(&r, metric);
        assert_eq!(t["dataset"], "tau-bench/airline");
        assert_eq!(t["level"], 0.95);
        let c = t["critical_value"].as_f64().unwrap();
        // Six pairs: above the two-sided 1.96 of one pair, about Bonferroni's 2.64 at most.
        assert!((2.2..2.7).contains(&c), "{metric}: c = {c}");
        assert_eq!(t["conditions"].as_array().unwrap().len(), 4);
        // gpt-4.1 leads all three metrics (success 0.54, TER 0.90, AUC-PEC 0.95).
        assert_eq!(rank(t, "gpt-4.1").0, 1, "{metric}");
        for c in t["conditions"].as_array().unwrap() {
            let (k, lo, hi) = (
                c["rank"].as_u64(),
                c["rank_lo"].as_u64(),
                c["rank_hi"].as_u64(),
            );
            assert!(lo <= k && k <= hi, "{metric}: {c}");
        }
    }
    // Final success: 27 of 50 against 22 and 18 of 50 and 84 of 200 — nothing is certain.
    let success = entry(&r, "final_success");
    assert!(success["above"].as_array().unwrap().is_empty());
    assert!([
        "gpt-4.1",
        "gpt-4o",
        "Qwen3-8B",
        "Qwen3-235B-A22B-Thinking-2507-FP8"
    ]
    .iter()
    .all(|m| rank(success, m).1 == Some(1) && rank(success, m).2 == Some(4)));
    // AUC-PEC: gpt-4.1's 0.95 is certainly above each of the others' 0.79-0.85.
    let auc = entry(&r, "auc_pec");
    assert_eq!(rank(auc, "gpt-4.1"), (1, Some(1), Some(1)));
    assert_eq!(auc["above"].as_array().unwrap().len(), 3);
    // TER: gpt-4.1 certainly above gpt-4o (4 trials a task, the narrowest spread).
    let ter = entry(&r, "ter");
    assert_eq!(
        ter["above"],
        serde_json::json!([[["gpt-4.1", "tool-calling"], ["gpt-4o", "tool-calling"]]])
    );
    assert_eq!(rank(ter, "gpt-4o"), (3, Some(2), Some(4)));
    // Success and TER agree on the order; AUC-PEC swaps gpt-4o and Qwen3-235B (0.85 against
    // 0.84; 0.42 against 0.44 in success): one flip, not significant.
    let divergence = r["rank_divergence"].as_array().unwrap();
    assert_eq!(divergence[0]["b"], "ter");
    assert_eq!(divergence[0]["kendall_tau_b"]["value"], 1.0);
    assert!(divergence[0]["discordant"].as_array().unwrap().is_empty());
    assert_eq!(divergence[1]["b"], "auc_pec");
    let flip = &divergence[1]["discordant"][0];
    assert_eq!(
        flip["ahead_on_success"][0],
        "Qwen3-235B-A22B-Thinking-2507-FP8"
    );
    assert_eq!(flip["ahead_on_auc_pec"][0], "gpt-4o");
    assert_eq!(flip["significant"], false);
    for d in divergence {
        let [lo, hi] = [0, 1].map(|i| d["kendall_tau_b"]["ci"][i].as_f64().unwrap());
        assert!(-1.0 <= lo && lo <= hi && hi <= 1.0);
    }
    // The text: one Ranks section, by final-success rank, with the marks and the divergences.
    let ranks = text
        .split_once(
            "Ranks: tau-bench/airline  (4 conditions; simultaneous 95% rank intervals, 6 pairs)\n",
        )
        .unwrap_or_else(|| panic!("{text}"))
        .1;
    let lines: Vec<&str> = ranks.lines().collect();
    assert!(lines[1].starts_with("  gpt-4.1 / tool-calling "), "{ranks}");
    assert!(lines[1].contains("0.95  1 (1–1)"), "{ranks}");
    assert!(lines[2].contains("0.44  2 (1–4) =#1"), "{ranks}");
    assert!(lines[5].starts_with("  critical value "), "{ranks}");
    assert!(
        ranks.contains("  Final success vs TER: τ_b 1.00 ["),
        "{ranks}"
    );
    assert!(
        ranks.contains("  Final success vs AUC-PEC: τ_b 0.67 [")
            && ranks.contains("; 1 discordant pair, none significant\n"),
        "{ranks}"
    );
    assert!(ranks.contains("=#1: tied with #1"), "{ranks}");
    // Any thread count, the same bytes.
    let (_, two, _) = score(TAU_BENCH, &["--bootstrap", "2000", "--threads", "2"]).unwrap();
    assert!(two == json, "the report differs on two threads");
}

#[test]
fn tau2_airline_runs_ranked_and_without_the_bootstrap() {
    let Some((r, _, _)) = score(TAU2, &["--bootstrap", "2000"]) else {
        return;
    };
    let success = entry(&r, "final_success");
    assert_eq!(success["dataset"], "tau2/airline");
    // claude-sonnet-4-5 36/50, Kimi-K2 27/50, Qwen3-32B 19/50, gpt-4o-mini 16/50.
    assert_eq!(rank(success, "claude-sonnet-4-5").0, 1);
    assert_eq!(rank(success, "togetherai/moonshotai/Kimi-K2-Instruct").0, 2);
    assert_eq!(rank(success, "openai/gpt-4o-mini").0, 4);
    let above = success["above"].as_array().unwrap();
    assert!(above.contains(&serde_json::json!([
        ["claude-sonnet-4-5", "llm_agent"],
        ["openai/gpt-4o-mini", "llm_agent"]
    ])));
    // TER puts Qwen3-32B (0.92) ahead of Kimi-K2 (0.86), success the other way round.
    let ter = &r["rank_divergence"][0];
    assert_eq!(ter["discordant"].as_array().unwrap().len(), 1);
    assert_eq!(ter["discordant"][0]["ahead_on_ter"][0], "Qwen/Qwen3-32B");
    // Without the bootstrap: the same point ranks, nothing else.
    let (off, _, text) = score(TAU2, &["--bootstrap", "0"]).unwrap();
    for (a, b) in off["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .zip(r["ranks"].as_array().unwrap())
    {
        assert!(a["critical_value"].is_null());
        assert!(a["above"].as_array().unwrap().is_empty());
        for (x, y) in a["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["conditions"].as_array().unwrap())
        {
            assert_eq!(x["rank"], y["rank"]);
            assert!(x["rank_lo"].is_null() && x["rank_hi"].is_null());
        }
    }
    for d in off["rank_divergence"].as_array().unwrap() {
        assert!(d["kendall_tau_b"]["ci"].is_null() && !d["kendall_tau_b"]["value"].is_null());
        assert!(d["discordant"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["significant"] == false));
    }
    assert!(
        text.contains("Ranks: tau2/airline  (4 conditions; no intervals without the bootstrap)"),
        "{text}"
    );
    assert!(
        text.contains("rank intervals and significance need the bootstrap"),
        "{text}"
    );
}
