//! Bounded memory on the big hostile inputs, measured by a counting allocator: the peak of live
//! heap bytes while reading and scoring, beyond the input itself. One test, so nothing else runs
//! in this process while it measures.

use std::sync::atomic::Ordering;

use prefix_exec::ingest::Ingest;
use prefix_exec::report::{build_report, Settings};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{LIVE, PEAK};

/// Peak live bytes above the level at the call, while `f` runs.
fn peak_during(f: impl FnOnce()) -> usize {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - base
}

/// Reads `text` in 4 MiB chunks, as the browser does, and scores it.
fn read_and_score(text: &[u8], settings: &Settings) {
    let mut ingest = Ingest::new();
    let f = ingest.begin_file("big.jsonl");
    for chunk in text.chunks(4 << 20) {
        ingest.push(f, chunk);
    }
    ingest.end_file(f);
    let report = build_report(&ingest.finish(), settings);
    assert!(report.identity_violations.is_empty());
}

fn line(task: &str, model: &str, steps: &str) -> String {
    format!(
        r#"{{"dataset":"d","task_id":"{task}","model":"{model}","method":"a","success":true,"steps":[{steps}]}}"#
    )
}

const MB: usize = 1 << 20;

#[test]
fn big_inputs_take_bounded_memory() {
    let quick = Settings {
        bootstrap: 200,
        ..Settings::default()
    };

    // A line is buffered whole until it ends (while the format is detected, then while it is
    // parsed): memory grows with the longest line, never with the file, and its steps are not
    // kept.
    let big = "x".repeat(50 * MB);
    let text = line(
        "big",
        "m",
        &format!(r#"{{"tool":"w","args":{{"text":"{big}"}},"ok":true}}"#),
    );
    drop(big);
    let peak = peak_during(|| read_and_score(text.as_bytes(), &quick));
    eprintln!("50 MB line: peak {} MB", peak / MB);
    assert!(peak < 3 * 50 * MB, "50 MB line: {} MB", peak / MB);
    drop(text);

    // 100,000 steps fold as they stream: memory does not grow with the steps.
    let steps = vec![r#"{"tool":"x","args":{"a":1},"ok":true}"#; 100_000].join(",");
    let text = line("t", "m", &steps);
    let peak = peak_during(|| read_and_score(text.as_bytes(), &quick));
    eprintln!(
        "100,000 steps ({} MB line): peak {} MB",
        text.len() / MB,
        peak / MB
    );
    assert!(
        peak < 4 * text.len() + 16 * MB,
        "100,000 steps: {} MB",
        peak / MB
    );
    drop(text);

    // A 50 MB ToolSandbox execution context (10,000 long agent messages and 1,000 calls): it is
    // buffered as one document, then reduced to its calls row by row, never to a JSON tree.
    let (summary, context) = toolsandbox_run(10_000, 1_000, 5_000);
    let peak = peak_during(|| {
        let mut ingest = Ingest::new();
        for (name, bytes) in [
            (
                "agent_m_user_u_01_02_2025_03_04_05/result_summary.json",
                &summary,
            ),
            (
                "agent_m_user_u_01_02_2025_03_04_05/trajectories/big/execution_context.json",
                &context,
            ),
        ] {
            let f = ingest.begin_file(name);
            for chunk in bytes.chunks(4 << 20) {
                ingest.push(f, chunk);
            }
            ingest.end_file(f);
        }
        let corpus = ingest.finish();
        assert_eq!(corpus.rollouts.len(), 1);
        assert_eq!(corpus.rollouts[0].horizon, 1_000);
        let report = build_report(&corpus, &quick);
        assert!(report.identity_violations.is_empty());
    });
    eprintln!(
        "{} MB ToolSandbox execution context: peak {} MB",
        context.len() / MB,
        peak / MB
    );
    assert!(
        peak < 3 * context.len() + 16 * MB,
        "ToolSandbox execution context: {} MB",
        peak / MB
    );
    drop((summary, context));

    // A 20 MB message transcript (one record, 20,000 messages, 5,000 calls): one record is held
    // as a JSON tree while its steps are read, never more than one; a JSONL of 10,000 records
    // is read one line at a time.
    let transcript = |messages: usize, text: usize| {
        let long = "z".repeat(text);
        let mut m = Vec::new();
        for i in 0..messages {
            if i % 4 == 0 {
                m.push(format!(
                    r#"{{"role":"assistant","tool_calls":[{{"id":"c{i}","function":{{"name":"f","arguments":"{{\"q\":{i}}}"}}}}]}}"#
                ));
            } else if i % 4 == 1 {
                m.push(format!(
                    r#"{{"role":"tool","tool_call_id":"c{}","content":"{long}"}}"#,
                    i - 1
                ));
            } else {
                m.push(format!(r#"{{"role":"user","content":"{long}"}}"#));
            }
        }
        format!(
            r#"{{"task_id":"t","pass":true,"messages":[{}]}}"#,
            m.join(",")
        )
    };
    let big = transcript(20_000, 1_000);
    let peak = peak_during(|| {
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("big-transcript.json");
        for chunk in big.as_bytes().chunks(4 << 20) {
            ingest.push(f, chunk);
        }
        ingest.end_file(f);
        let corpus = ingest.finish();
        assert_eq!(corpus.rollouts[0].horizon, 5_000);
    });
    eprintln!("{} MB transcript: peak {} MB", big.len() / MB, peak / MB);
    assert!(
        peak < 4 * big.len() + 16 * MB,
        "transcript: {} MB",
        peak / MB
    );
    drop(big);
    let one = transcript(40, 200);
    let jsonl: String = (0..10_000).map(|_| format!("{one}\n")).collect();
    let peak = peak_during(|| {
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("runs.jsonl");
        for chunk in jsonl.as_bytes().chunks(4 << 20) {
            ingest.push(f, chunk);
        }
        ingest.end_file(f);
        assert_eq!(ingest.finish().rollouts.len(), 10_000);
    });
    eprintln!(
        "{} MB transcript JSONL: peak {} MB",
        jsonl.len() / MB,
        peak / MB
    );
    assert!(peak < 32 * MB, "transcript JSONL: {} MB", peak / MB);
    drop(jsonl);

    // 20,000 conditions at the default 10,000 resamples: the bootstrap that would need 21 GB is
    // not run (the report says so), so memory stays that of scoring.
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&line(
            &format!("t{}", i % 50),
            &format!("m{i:05}"),
            r#"{"ok":true}"#,
        ));
        text.push('\n');
    }
    let peak = peak_during(|| read_and_score(text.as_bytes(), &Settings::default()));
    eprintln!("20,000 conditions, B = 10,000: peak {} MB", peak / MB);
    assert!(peak < 256 * MB, "20,000 conditions: {} MB", peak / MB);
    // With resamples that fit, the bootstrap stays under its 1 GiB limit.
    let peak = peak_during(|| read_and_score(text.as_bytes(), &quick));
    eprintln!("20,000 conditions, B = 200: peak {} MB", peak / MB);
    assert!(
        peak < 1024 * MB + 256 * MB,
        "20,000 conditions: {} MB",
        peak / MB
    );
}

/// A ToolSandbox run of one scenario: its `result_summary.json` and an execution context with
/// `messages` agent messages of `text` bytes each and `calls` answered calls.
fn toolsandbox_run(messages: usize, calls: usize, text: usize) -> (Vec<u8>, Vec<u8>) {
    // Pretty-printed as the harness writes them: `{` alone on the first line.
    let summary = br#"{
        "per_scenario_results": [{"name": "big", "categories": [], "traceback": null,
        "exception_type": null, "milestone_similarity": 1.0, "minefield_similarity": 0,
        "similarity": 1.0, "turn_count": 9}],
        "category_aggregated_results": {"ALL_CATEGORIES": {"similarity": 1.0, "turn_count": 9}}}"#
        .to_vec();
    let row = |sender: &str, recipient: &str, content: &str, id: &str| {
        format!(
            r#"{{"sandbox_message_index": 0, "sender": "{sender}", "recipient": "{recipient}", "content": "{content}", "openai_tool_call_id": {id}, "openai_function_name": "f", "conversation_active": true, "tool_call_exception": null, "tool_trace": null, "visible_to": null}}"#
        )
    };
    let long = "y".repeat(text);
    let mut rows = vec![row("USER", "AGENT", "hi", "null")];
    for i in 0..messages {
        rows.push(row("AGENT", "USER", &long, "null"));
        if i < calls {
            let id = format!("c{i}");
            let code =
                format!("{id}_parameters = {{'q': {i}}}\\n{id}_response = f(**{id}_parameters)");
            rows.push(row(
                "AGENT",
                "EXECUTION_ENVIRONMENT",
                &code,
                &format!("\"{id}\""),
            ));
            rows.push(row(
                "EXECUTION_ENVIRONMENT",
                "AGENT",
                "None",
                &format!("\"{id}\""),
            ));
        }
    }
    let mut end = row(
        "USER",
        "EXECUTION_ENVIRONMENT",
        "end_conversation()",
        "null",
    );
    end = end.replace(
        "\"conversation_active\": true",
        "\"conversation_active\": false",
    );
    rows.push(end);
    let context = format!(
        "{{\n\"_dbs\": {{\"SANDBOX\": [{}], \"SETTING\": []}}}}",
        rows.join(",\n")
    );
    (summary, context.into_bytes())
}
