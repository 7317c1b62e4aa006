//! Unit tests of the ToolSandbox rules on small hand-written rows and files.

use super::*;
use crate::formats::canonical::parse_line;
use serde_json::json;

/// A SANDBOX row.
fn row(sender: &str, recipient: &str, content: &str) -> Value {
    json!({"sandbox_message_index": 0, "sender": sender, "recipient": recipient,
           "content": content, "openai_tool_call_id": null, "openai_function_name": null,
           "conversation_active": true, "tool_call_exception": null, "tool_trace": null,
           "visible_to": null})
}

const HEADGUARD: &str = r#"{"sandbox_message_index": 3, "sender": null, "recipient": null,
    "content": null, "openai_tool_call_id": null, "openai_function_name": null,
    "conversation_active": null, "tool_call_exception": null, "tool_trace": null,
    "visible_to": null}"#;

fn code(id: &str, tool: &str, params: &str) -> String {
    format!("{id}_parameters = {params}\n{id}_response = {tool}(**{id}_parameters)\nprint(repr({id}_response))")
}

fn call(id: &str, agent_name: &str, tool: &str, params: &str) -> Value {
    let mut r = row("AGENT", "EXECUTION_ENVIRONMENT", &code(id, tool, params));
    r["openai_tool_call_id"] = id.into();
    r["openai_function_name"] = agent_name.into();
    r
}

fn reply(id: &str, agent_name: &str, exception: Option<&str>) -> Value {
    let mut r = row(
        "EXECUTION_ENVIRONMENT",
        "AGENT",
        exception.unwrap_or("None"),
    );
    r["openai_tool_call_id"] = id.into();
    r["openai_function_name"] = agent_name.into();
    r["tool_call_exception"] = exception.into();
    r
}

/// Setup rows, a few-shot dialogue (which holds an agent call that must be dropped), the
/// first real user turn, then `rows`.
fn context(rows: Vec<Value>) -> Vec<u8> {
    let mut few = call("fs", "search_contacts", "search_contacts", "{}");
    few["visible_to"] = json!(["USER"]);
    let mut few_end = row("USER", "EXECUTION_ENVIRONMENT", "end_conversation()");
    few_end["visible_to"] = json!(["USER"]);
    let mut all = vec![
        serde_json::from_str::<Value>(HEADGUARD).unwrap(),
        row("SYSTEM", "EXECUTION_ENVIRONMENT", "import json"),
        row("SYSTEM", "AGENT", "Don't make assumptions"),
        few,
        few_end,
        row("USER", "AGENT", "Turn on wifi"),
        serde_json::from_str::<Value>(HEADGUARD).unwrap(),
    ];
    all.extend(rows);
    serde_json::to_vec_pretty(
        &json!({"_dbs": {"SANDBOX": all, "SETTING": [], "CONTACT": []},
        "interactive_console": null, "tool_allow_list": null, "tool_deny_list": null,
        "trace_tool": true, "tool_augmentation_list": [], "preferred_tool_backend": "DEFAULT"}),
    )
    .unwrap()
}

fn ended(mut rows: Vec<Value>) -> Vec<Value> {
    let mut end = row("USER", "EXECUTION_ENVIRONMENT", "end_conversation()");
    end["conversation_active"] = false.into();
    rows.push(end);
    rows
}

fn summary_row(name: &str, similarity: f64, exception: Option<(&str, &str)>) -> ScenarioRow {
    ScenarioRow {
        name: name.into(),
        categories: vec!["STATE_DEPENDENCY".into()],
        traceback: exception.map(|(_, tb)| tb.to_string()),
        exception_type: exception.map(|(t, _)| t.to_string()),
        similarity,
        milestone_similarity: Some(similarity),
        minefield_similarity: Some(0.0),
        turn_count: Some(5.0),
    }
}

fn facts() -> RunFacts {
    RunFacts {
        name: run_name("data/agent_acme/m-1_user_openai/gpt-4o_01_02_2025_03_04_05"),
        git_sha: None,
        fallback_model: None,
    }
}

/// The draft and its canonical reading.
fn convert(
    row: &ScenarioRow,
    traj: &Trajectory,
    options: &Options,
) -> (Draft, crate::rollout::ParsedRollout) {
    let d = scenario_draft(row, traj, &facts(), options).unwrap();
    let r = parse_line(d.render(None).as_bytes()).unwrap();
    (d, r)
}

fn verdicts(d: &Draft) -> Vec<(Option<&str>, bool)> {
    d.steps
        .iter()
        .map(|s| (s.tool.as_deref(), s.verdict == Verdict::Accepted))
        .collect()
}

#[test]
fn run_folder_names() {
    let n = run_name("data/agent_togetherai/moonshotai/Kimi-K2-Instruct_user_openai/gpt-4o-20240806_08_15_2025_02_22_48").unwrap();
    assert_eq!(n.agent, "togetherai/moonshotai/Kimi-K2-Instruct");
    assert_eq!(n.user, "openai/gpt-4o-20240806");
    assert_eq!(n.timestamp, "08_15_2025_02_22_48");
    let n = run_name("agent_gpt-4o_user_gpt-4o_01_02_2025_03_04_05").unwrap();
    assert_eq!((n.agent.as_str(), n.user.as_str()), ("gpt-4o", "gpt-4o"));
    // `(.+?)_user_`: the first `_user_` splits.
    let n = run_name(r"x\agent_a_user_b_user_c_01_02_2025_03_04_05").unwrap();
    assert_eq!((n.agent.as_str(), n.user.as_str()), ("a", "b_user_c"));
    // A repository's top folder that starts with `agent_` is above the layout.
    let n = run_name("agent_hard_benchmark-face722e/ToolSandbox/data/agent_openai/o3-high_user_openai/gpt-4o-20240806_08_13_2025_00_17_37").unwrap();
    assert_eq!(n.agent, "openai/o3-high");
    let n = run_name("agent_hard_benchmark-face722e/ToolSandbox/data/o3-high_user_openai/gpt-4o-20240806_08_13_2025_00_17_37");
    assert_eq!(n, None);
    let n = run_name_without_agent_folder("agent_hard_benchmark-face722e/ToolSandbox/data/o3-high_user_openai/gpt-4o-20240806_08_13_2025_00_17_37").unwrap();
    assert_eq!(n.agent, "o3-high");
    for bad in [
        "agent_a_user_b_1_02_2025_03_04_05",
        "agent_a_user_b",
        "agent__user_b_01_02_2025_03_04_05",
        "runs/a_user_b_01_02_2025_03_04_05",
        "agent_a_user__01_02_2025_03_04_05",
        "agent_é_user_b_01_02_2025_03_04_0é",
        "",
    ] {
        assert_eq!(run_name(bad), None, "{bad}");
    }
    assert_eq!(
        trajectory_path("r/trajectories/wifi_off/execution_context.json"),
        TrajectoryPath {
            run_dir: "r".into(),
            scenario: Some("wifi_off".into())
        }
    );
    assert_eq!(trajectory_path("execution_context.json").scenario, None);
    assert_eq!(summary_dir("/r//result_summary.json"), "r");
}

#[test]
fn code_lines_and_literals() {
    let c = code("call_0_a9-f8", "get_current_timestamp", "{'a': \"it's\"}");
    assert_eq!(
        parse_code(&c, Some("call_0_a9-f8")),
        Some(("get_current_timestamp", "{'a': \"it's\"}"))
    );
    // Without (or with a wrong) id, the shortest id on which both lines agree.
    assert_eq!(
        parse_code(&c, None).map(|p| p.0),
        Some("get_current_timestamp")
    );
    assert_eq!(
        parse_code(&c, Some("other")).map(|p| p.0),
        Some("get_current_timestamp")
    );
    // As the regex: the id may itself hold `_parameters = `.
    let tricky = "a_parameters = b_parameters = {}\na_parameters = b_response = f(**x)";
    assert_eq!(parse_code(tricky, None), Some(("f", "{}")));
    let tricky = "a_parameters = {}\nb_response = f(**x)";
    assert_eq!(parse_code(tricky, None), None);
    let plain = "a_parameters = {}\na_response = f(**a_parameters)";
    assert_eq!(parse_code(plain, None), Some(("f", "{}")));
    assert_eq!(parse_code("end_conversation()", None), None);
    assert_eq!(parse_code("x_parameters = {}\nx_response = (", None), None);

    let v = py_literal_to_json(
        r#"{'s': 'it\'s', "d": "say \"hi\"", 'n': -3, 'f': 1e-05, 'b': True, 'z': None, 'l': [1, (2, 3)], 'u': '\xe9\u00e9\U0001f600\n', 'e': {}}"#,
    )
    .unwrap();
    assert_eq!(
        v,
        json!({"s": "it's", "d": "say \"hi\"", "n": -3, "f": 1e-05, "b": true, "z": null,
               "l": [1, [2, 3]], "u": "éé😀\n", "e": {}})
    );
    assert_eq!(
        py_literal_to_json("{'big': 18446744073709551615}"),
        Some(json!({"big": 18446744073709551615u64}))
    );
    for bad in [
        "{'a': inf}",
        "{'a' 1}",
        "{'a': 1",
        "Nonesuch",
        "{1: 2}",
        "'a\nb'",
        "{'a': 1} x",
    ] {
        assert_eq!(py_literal_to_json(bad), None, "{bad}");
    }
    assert_eq!(py_literal_to_json(&"[".repeat(100_000)), None);
}

#[test]
fn parallel_replies_pair_by_id_not_position() {
    let rows = ended(vec![
        call("c1", "set_wifi_status", "set_wifi_status", "{'on': True}"),
        call("c2", "get_wifi_status", "get_wifi_status", "{}"),
        // The failing permutation ran c2 first: its replies come back in that order.
        reply("c2", "get_wifi_status", None),
        reply(
            "c1",
            "set_wifi_status",
            Some("PermissionError: Wifi cannot be turned on in low battery mode"),
        ),
        row("AGENT", "USER", "Done"),
    ]);
    let t = read_execution_context(&context(rows)).unwrap();
    assert!(!t.ended_active);
    let (d, r) = convert(&summary_row("wifi", 1.0, None), &t, &Options::default());
    assert_eq!(
        verdicts(&d),
        [
            (Some("set_wifi_status"), false),
            (Some("get_wifi_status"), true)
        ]
    );
    assert_eq!(d.steps[0].args, Some(json!({"on": true})));
    assert_eq!(
        d.steps[0].verdict,
        Verdict::Rejected(Some(
            "PermissionError: Wifi cannot be turned on in low battery mode".into()
        ))
    );
    assert_eq!((r.horizon, r.fed, r.success), (2, 1, true));
    assert_eq!(d.model, "acme/m-1");
    assert_eq!(
        (d.dataset.as_str(), d.method.as_str(), d.task_id.as_str()),
        ("toolsandbox", "default", "wifi")
    );
    assert_eq!(d.meta["termination_reason"], "end_conversation");
    assert_eq!(d.meta["user_model"], "openai/gpt-4o");
    assert_eq!(d.meta["similarity_threshold"], 1.0);
}

#[test]
fn scrambled_names_resolve_from_the_code() {
    let rows = ended(vec![
        call("c1", "utilities_2", "get_current_timestamp", "{}"),
        reply("c1", "utilities_2", None),
    ]);
    let t = read_execution_context(&context(rows)).unwrap();
    let (d, _) = convert(&summary_row("s", 1.0, None), &t, &Options::default());
    assert_eq!(d.steps[0].tool.as_deref(), Some("get_current_timestamp"));
    assert_eq!(d.steps[0].agent_tool.as_deref(), Some("utilities_2"));
    let line: Value = serde_json::from_str(&d.render(None)).unwrap();
    assert_eq!(line["steps"][0]["agent_tool"], "utilities_2");
    // An unscrambled name is not repeated.
    let rows = ended(vec![call("c1", "f", "f", "{}"), reply("c1", "f", None)]);
    let t = read_execution_context(&context(rows)).unwrap();
    let (d, _) = convert(&summary_row("s", 1.0, None), &t, &Options::default());
    assert_eq!(d.steps[0].agent_tool, None);
}

const KEY_UNKNOWN: &str = "Traceback (most recent call last):\n  File \"message_conversion.py\", line 79, in openai_tool_call_to_python_code\n    raise KeyError(\nKeyError: \"Agent tool call agent_facing_tool_name='<|tool_call_begin|>functions.set_wifi_status' is not a known allowed tool. Options are available_tool_names={'set_wifi_status'}\"\n";
const KEY_SCRAMBLED: &str = "Traceback (most recent call last):\n  File \"execution_context.py\", line 303, in get_execution_facing_tool_name\n    self._scrambled_to_actual_tool_name[agent_facing_tool_name]\nKeyError: 'messaging_1'\n";
const JSON_BAD: &str = "Traceback (most recent call last):\n  File \"decoder.py\", line 353, in raw_decode\njson.decoder.JSONDecodeError: Unterminated string starting at: line 1 column 45 (char 44)\n";

#[test]
fn agent_side_crashes_add_one_rejected_call() {
    let rows = vec![
        call("c1", "get_wifi_status", "get_wifi_status", "{}"),
        reply("c1", "get_wifi_status", None),
    ];
    let t = read_execution_context(&context(rows)).unwrap();
    for (kind, tb, name) in [
        (
            "KeyError",
            KEY_UNKNOWN,
            Some("<|tool_call_begin|>functions.set_wifi_status"),
        ),
        ("KeyError", KEY_SCRAMBLED, Some("messaging_1")),
        ("JSONDecodeError", JSON_BAD, None),
    ] {
        let (d, r) = convert(
            &summary_row("k", 0.0, Some((kind, tb))),
            &t,
            &Options::default(),
        );
        assert_eq!(
            verdicts(&d),
            [(Some("get_wifi_status"), true), (name, false)],
            "{kind}"
        );
        assert_eq!((r.horizon, r.fed, r.success), (2, 2, false));
        let Verdict::Rejected(Some(e)) = &d.steps[1].verdict else {
            panic!()
        };
        assert!(e.starts_with(kind) || e.starts_with("json.decoder"), "{e}");
        assert_eq!(d.meta["termination_reason"], "crash");
        assert_eq!(d.meta["exception_type"], kind);
    }
    // A name holding an apostrophe is repr-quoted with double quotes.
    let tb = "KeyError: 'Agent tool call agent_facing_tool_name=\"it\\'s\" is not a known allowed tool.'";
    assert_eq!(agent_side_tool_name(tb).as_deref(), Some("it's"));
    assert_eq!(
        agent_side_tool_name("KeyError: ''\n in get_execution_facing_tool_name").as_deref(),
        None
    );
    // A harness KeyError elsewhere names no tool.
    assert_eq!(
        agent_side_tool_name("File x\nKeyError: 'sandbox_message_index'"),
        None
    );
}

#[test]
fn other_crashes_reject_unanswered_calls() {
    let rows = vec![
        call("c1", "get_wifi_status", "get_wifi_status", "{}"),
        reply("c1", "get_wifi_status", None),
        call("c2", "set_wifi_status", "set_wifi_status", "{'on': True}"),
    ];
    let t = read_execution_context(&context(rows)).unwrap();
    let tb = "Traceback …\n    assert len(tool_trace) == 1\nAssertionError\n";
    let (d, r) = convert(
        &summary_row("a", 0.0, Some(("AssertionError", tb))),
        &t,
        &Options::default(),
    );
    assert_eq!(
        verdicts(&d),
        [
            (Some("get_wifi_status"), true),
            (Some("set_wifi_status"), false)
        ]
    );
    assert_eq!((r.horizon, r.fed), (2, 2));
    let Verdict::Rejected(Some(e)) = &d.steps[1].verdict else {
        panic!()
    };
    assert!(e.contains("crashed (AssertionError)"), "{e}");
}

#[test]
fn provider_errors_are_excluded_unless_kept() {
    let rows = vec![call("c1", "f", "f", "{}")];
    let t = read_execution_context(&context(rows)).unwrap();
    for t_name in PROVIDER_ERRORS {
        let row = summary_row("p", 0.0, Some((t_name, "Traceback\nopenai.X: 500")));
        assert_eq!(
            scenario_draft(&row, &t, &facts(), &Options::default()),
            Err(Skip::ProviderError(t_name.into()))
        );
        let keep = Options {
            keep_provider_errors: true,
            ..Options::default()
        };
        let (d, r) = convert(&row, &t, &keep);
        // Kept as a failure: the unanswered call is rejected, no call is invented.
        assert_eq!(verdicts(&d), [(Some("f"), false)]);
        assert!(!r.success);
    }
}

#[test]
fn max_turns_drop_unanswered_calls() {
    let rows = vec![
        call("c1", "f", "f", "{}"),
        reply("c1", "f", None),
        call("c2", "g", "g", "{}"),
        call("c3", "h", "h", "{}"),
    ];
    let t = read_execution_context(&context(rows)).unwrap();
    assert!(t.ended_active);
    let (d, r) = convert(&summary_row("m", 0.5, None), &t, &Options::default());
    assert_eq!(verdicts(&d), [(Some("f"), true)]);
    assert_eq!((r.horizon, r.fed, r.success), (1, 2, false));
    assert_eq!(d.meta["termination_reason"], "max_turns");
    // An unexecuted end_conversation ends a max-turn run too.
    let mut end = row("USER", "EXECUTION_ENVIRONMENT", "end_conversation()");
    end["conversation_active"] = true.into();
    let t = read_execution_context(&context(vec![end])).unwrap();
    assert!(t.ended_active);
    // An unanswered call in a scenario that ended normally is rejected.
    let t = read_execution_context(&context(ended(vec![call("c9", "f", "f", "{}")]))).unwrap();
    let (d, _) = convert(&summary_row("e", 1.0, None), &t, &Options::default());
    assert_eq!(verdicts(&d), [(Some("f"), false)]);
}

#[test]
fn success_threshold_and_no_tool_scenarios() {
    let t = read_execution_context(&context(ended(vec![row(
        "AGENT",
        "USER",
        "I need more information",
    )])))
    .unwrap();
    assert!(t.calls.is_empty(), "the few-shot call is not the agent's");
    let (_, r) = convert(&summary_row("n", 1.0, None), &t, &Options::default());
    assert_eq!((r.horizon, r.fed, r.success, r.no_tool), (1, 2, true, true));
    let (_, r) = convert(&summary_row("n", 0.95, None), &t, &Options::default());
    assert_eq!((r.horizon, r.fed, r.success), (1, 1, false));
    let lower = Options {
        tau: 0.9,
        ..Options::default()
    };
    let (d, r) = convert(&summary_row("n", 0.95, None), &t, &lower);
    assert_eq!((r.fed, r.success), (2, true));
    assert_eq!(d.meta["similarity_threshold"], 0.9);
    assert!(Options {
        tau: 1.5,
        ..Options::default()
    }
    .validate()
    .is_err());
    assert!(Options {
        tau: f64::NAN,
        ..Options::default()
    }
    .validate()
    .is_err());
}

fn summary_bytes(rows: &[(&str, f64, Option<&str>)], all: f64) -> Vec<u8> {
    let rows: Vec<Value> = rows
        .iter()
        .map(|(n, s, e)| {
            json!({"name": n, "categories": ["A"], "traceback": e.map(|_| "Traceback\nX: y"),
            "exception_type": e, "milestone_similarity": s, "minefield_similarity": 0,
            "similarity": s, "turn_count": 4, "milestone_mapping": {"0": [17, 1.0]},
            "minefield_mapping": {}})
        })
        .collect();
    serde_json::to_vec_pretty(&json!({"per_scenario_results": rows,
        "category_aggregated_results": {"A": {"similarity": all, "turn_count": 4},
                                        "ALL_CATEGORIES": {"similarity": all, "turn_count": 4}},
        "git_sha": "abc + local changes"}))
    .unwrap()
}

#[test]
fn a_whole_run() {
    let summary = summary_bytes(
        &[
            ("a", 1.0, None),
            ("b", 0.5, None),
            ("gone", 1.0, None),
            ("p", 0.0, Some("APITimeoutError")),
        ],
        0.625,
    );
    let a = context(ended(vec![
        call("c1", "f", "f", "{}"),
        reply("c1", "f", None),
    ]));
    let b_conv = serde_json::to_vec(&json!([
        {"role": "system", "content": "x"},
        {"role": "user", "content": "y"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "utilities_1", "arguments": "{\"q\": 1}"}},
            {"id": "t2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"tool_call_id": "t2", "role": "tool", "name": "g", "content": "phonenumbers.phonenumberutil.NumberParseException: (1) bad"},
        {"tool_call_id": "t1", "role": "tool", "name": "utilities_1", "content": "'ok'"},
        {"role": "assistant", "content": "done"}
    ]))
    .unwrap();
    let p = context(vec![call("c1", "f", "f", "{}")]);
    let stray = context(vec![]);
    let files: Vec<(&str, &[u8])> = vec![
        ("run/trajectories/a/execution_context.json", &a),
        ("run/trajectories/a/conversation.json", b"not even json"),
        ("run/trajectories/b/conversation.json", &b_conv),
        ("run/trajectories/p/execution_context.json", &p),
        ("run/trajectories/zz/execution_context.json", &stray),
    ];
    let (outcomes, report, notes) = convert_run(
        "agent_m_user_u_01_02_2025_03_04_05/result_summary.json",
        &summary,
        &files,
        &Options::default(),
    )
    .unwrap();
    assert_eq!(outcomes.len(), 3);
    let Outcome::Rollout(a, 0) = &outcomes[0].1 else {
        panic!()
    };
    assert!(a.success && a.model == "m");
    let Outcome::Rollout(b, 2) = &outcomes[1].1 else {
        panic!()
    };
    assert_eq!(
        verdicts(b),
        [(Some("utilities_1"), true), (Some("g"), false)]
    );
    assert_eq!(b.steps[0].args, Some(json!({"q": 1})));
    assert_eq!(b.meta["read_from"], "conversation.json");
    assert_eq!(b.meta["termination_reason"], "unknown");
    assert!(
        matches!(&outcomes[2].1, Outcome::Skipped(Skip::ProviderError(t), 3) if t == "APITimeoutError")
    );
    assert_eq!(
        (report.scenarios, report.imported, report.successes),
        (4, 2, 1)
    );
    assert_eq!(report.missing, ["gone"]);
    assert_eq!(report.provider_errors.get("APITimeoutError"), Some(&1));
    let all = notes.join("\n");
    assert!(
        all.contains("1 scenarios excluded") && all.contains("APITimeoutError"),
        "{all}"
    );
    assert!(
        all.contains("1 of the 4 scenarios listed") && all.contains("gone"),
        "{all}"
    );
    assert!(
        all.contains("self-check: the mean similarity of the 4 scenario rows, 0.625000, matches"),
        "{all}"
    );
    assert!(all.contains("\"zz\""), "{all}");
    assert!(all.contains("conversation.json alone"), "{all}");
    // A disagreeing aggregate is said.
    let bad = summary_bytes(&[("a", 1.0, None)], 0.5);
    let (_, _, notes) =
        convert_run("s/result_summary.json", &bad, &[], &Options::default()).unwrap();
    assert!(
        notes.iter().any(|n| n.starts_with("self-check failed")),
        "{notes:?}"
    );
}

#[test]
fn syntax_error_runs_are_flagged() {
    let syntax = "  File \"<input>\", line 1\n    call_0_a-b_parameters = {}\n          ^\nSyntaxError: invalid syntax\n";
    let mut rows = Vec::new();
    for i in 0..10 {
        let id = format!("call_{i}_a-b");
        rows.push(call(&id, "f", "f", "{}"));
        rows.push(reply(&id, "f", (i > 0).then_some(syntax)));
    }
    let t = read_execution_context(&context(ended(rows))).unwrap();
    assert_eq!(t.syntax_errors(), 9);
    let report = |calls, syntax_errors| RunReport {
        calls,
        syntax_errors,
        ..RunReport::default()
    };
    assert!(
        !report(10, 9).syntax_flagged(),
        "90 % is not more than 90 %"
    );
    assert!(report(10, 10).syntax_flagged());
    assert!(report(4838, 4834).syntax_flagged());
    assert!(report(10, 10)
        .messages()
        .iter()
        .any(|m| m.contains("SyntaxError")));
    assert!(!report(0, 0).syntax_flagged());
}

#[test]
fn hostile_files_give_located_errors() {
    let good = context(ended(vec![
        call("c1", "f", "f", "{}"),
        reply("c1", "f", None),
    ]));
    // Truncated anywhere: a located error, never a panic and never a partial scenario.
    for cut in (0..good.len()).step_by(7) {
        if let Ok(t) = read_execution_context(&good[..cut]) {
            panic!("a cut at {cut} read {t:?}");
        }
    }
    let e = read_execution_context(&good[..good.len() / 2]).unwrap_err();
    assert!(e.line.is_some() && e.message.contains("truncated"), "{e}");
    let wrong = String::from_utf8(good.clone()).unwrap().replacen(
        "\"conversation_active\": true",
        "\"conversation_active\": \"yes\"",
        1,
    );
    let e = read_execution_context(wrong.as_bytes()).unwrap_err();
    assert!(
        e.message
            .starts_with("_dbs.SANDBOX[1]: conversation_active: invalid type"),
        "{e}"
    );
    assert!(e.line.is_some_and(|l| l > 1), "{e:?}");
    for (bad, want) in [
        (&b"[]"[..], "a JSON object"),
        (b"{\"_dbs\": []}", "_dbs: expected an object"),
        (
            b"{\"_dbs\": {\"SANDBOX\": {}}}",
            "_dbs.SANDBOX: expected an array",
        ),
        (b"{\"x\": 1}", "missing field `_dbs`"),
        (
            b"{\"_dbs\": {\"SANDBOX\": [[1, 2]]}}",
            "_dbs.SANDBOX[0]: expected a SANDBOX row",
        ),
    ] {
        let e = read_execution_context(bad).unwrap_err();
        assert!(e.message.contains(want), "{e}");
    }
    let e = read_summary(b"{\"per_scenario_results\": 3}").unwrap_err();
    assert!(e.message.contains("expected an array"), "{e}");
    let s = read_summary(
        br#"{"per_scenario_results": [{"name": "a", "similarity": 1},
            {"name": 5, "similarity": 1}, {"name": "c", "similarity": "x"}, {"name": "a", "similarity": 0}]}"#,
    )
    .unwrap();
    assert_eq!(s.rows.len(), 1);
    let msgs: Vec<String> = s.problems.iter().map(|p| p.to_string()).collect();
    assert!(
        msgs[0].starts_with("line 2: per_scenario_results[1]: name: invalid type"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].contains("per_scenario_results[2]: similarity"),
        "{msgs:?}"
    );
    assert!(msgs[2].contains("listed twice"), "{msgs:?}");
    let s = read_summary(br#"{"per_scenario_results": [{"name": "a", "similarity": 1}, {"name": "#)
        .unwrap();
    assert_eq!(s.rows.len(), 1);
    assert!(
        s.problems[0].message.contains("truncated"),
        "{:?}",
        s.problems
    );
    let e = read_conversation(br#"[{"role": "assistant", "tool_calls": [{"function": {}}]}]"#)
        .unwrap_err();
    assert!(
        e.message
            .contains("[0]: tool_calls[0].function: missing field `name`"),
        "{e}"
    );
    assert!(read_conversation(b"[{\"role\": \"user\"}] x").is_err());
}

#[test]
fn exception_heuristic() {
    for yes in [
        "PermissionError: no",
        "phonenumbers.phonenumberutil.NumberParseException: (1) x",
        "polars.exceptions.NoDataError: empty",
        "  File \"<input>\", line 1\nSyntaxError: invalid syntax",
        "Error: The given code was incomplete and cannot be executed",
        "KeyboardInterrupt",
        "SystemExit: 1",
        "UserWarning",
    ] {
        assert!(looks_like_exception(yes), "{yes}");
    }
    for no in [
        "None",
        "'bb59'",
        "[{'person_id': 1}]",
        "Errors: none",
        "Error",
        "MyErrorX: y",
        "  x",
        "",
    ] {
        assert!(!looks_like_exception(no), "{no}");
    }
}
