//! The Inspect AI reader on hand-written logs (built in the test, so every rule has its own
//! sample), read end to end through [`Ingest`]: both containers and every compression, each
//! tool-error type, orphan tool messages, limits, calls only in events, each score kind,
//! crashed samples and runs, the per-file options, and hostile archives.

use serde_json::{json, Value};

use prefix_exec::formats::inspect::archive::build_zip;
use prefix_exec::formats::inspect::InspectOptions;
use prefix_exec::formats::{Format, ImportOptions, ImportSummary};
use prefix_exec::ingest::Ingest;
use prefix_exec::rollout::Corpus;

fn header() -> Value {
    json!({
        "version": 2,
        "status": "success",
        "eval": {"task": "demo/arith", "dataset": {"name": "arith-ds"}, "model": "openai/m1",
                 "scorers": [{"name": "match"}], "packages": {"inspect_ai": "0.3.90"},
                 "future_field": {"x": 1}},
        "plan": {"steps": [{"solver": "use_tools"}, {"solver": "basic_agent_loop"}]},
        "results": {"scores": [{"name": "match", "scorer": "match",
                                "metrics": {"accuracy": {"value": 0.6}, "stderr": {"value": 0.1}}}]},
        "stats": {"model_usage": {}}
    })
}

fn call(id: &str, function: &str, args: Value) -> Value {
    json!({"id": id, "function": function, "arguments": args, "type": "function"})
}

fn assistant(calls: Vec<Value>) -> Value {
    json!({"role": "assistant", "content": [{"type": "reasoning", "reasoning": "hm"}],
           "tool_calls": calls})
}

fn tool(id: &str, error: Value) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": "out", "error": error})
}

fn score(v: Value) -> Value {
    json!({"match": {"value": v, "answer": "x"}})
}

/// The samples: every pairing rule, error type and score kind.
fn samples() -> Vec<Value> {
    vec![
        // 1: parallel calls (ok, timeout), then a parse error; C; usage and working time.
        json!({"id": 1, "epoch": 1, "messages": [
            {"role": "user", "content": "go"},
            assistant(vec![call("a", "bash", json!({"cmd": "ls"})), call("b", "bash", json!({"cmd": "sleep"}))]),
            tool("a", Value::Null),
            tool("b", json!({"type": "timeout", "message": "Command timed out before completing."})),
            assistant(vec![json!({"id": "c", "function": "python", "arguments": {},
                                  "parse_error": "bad JSON"})]),
            tool("c", json!({"type": "parsing", "message": "bad JSON"})),
            {"role": "assistant", "content": "done", "tool_calls": null}],
          "scores": score(json!("C")),
          "model_usage": {"openai/m1": {"input_tokens": 100, "output_tokens": 20,
              "input_tokens_cache_read": 1000, "input_tokens_cache_write": 5, "total_tokens": 1125},
              "openai/grader": {"input_tokens": 7, "output_tokens": 1}},
          "total_time": 20.0, "working_time": 12.5, "unknown_new_key": [1, 2]}),
        // 2: same task, epoch 2: no tool call, I.
        json!({"id": 1, "epoch": 2, "messages": [{"role": "assistant", "content": "42"}],
               "scores": score(json!("I")), "total_time": 3.0}),
        // 3: unanswered calls: ran per events, failed per events, nowhere; message limit; 1.0.
        json!({"id": "t-3", "epoch": 1, "messages": [
            assistant(vec![call("d", "bash", json!({"cmd": "a"}))]),
            assistant(vec![call("e", "web", json!({}))]),
            assistant(vec![call("f", "bash", json!({"cmd": "c"}))])],
          "events": [
            {"event": "model"},
            {"event": "tool", "id": "d", "function": "bash", "arguments": {}, "result": "ok", "error": null},
            {"event": "tool", "id": "e", "function": "web", "arguments": {}, "result": "",
             "error": {"type": "approval", "message": "attachment://h1"}}],
          "attachments": {"h1": "The call was rejected by the approver."},
          "limit": {"type": "message", "limit": 50},
          "scores": score(json!(1.0))}),
        // 4: errored sample (sandbox crash), no score.
        json!({"id": 4, "epoch": 1, "messages": [], "scores": {},
               "error": {"message": "RuntimeError('No services started.')", "traceback": "…"}}),
        // 5: NaN score (written by Python as a bare NaN).
        json!({"id": 5, "epoch": 1, "messages": [], "scores": score(json!("__NAN__"))}),
        // 6: dict score.
        json!({"id": 6, "epoch": 1, "messages": [], "scores": score(json!({"a": 1}))}),
        // 7: orphan tool message, legacy tool_error; P.
        json!({"id": 7, "epoch": 1, "messages": [
            tool("zz", Value::Null),
            assistant(vec![call("g", "bash", json!({"cmd": "x"}))]),
            {"role": "tool", "tool_call_id": "g", "content": "", "tool_error": "Exit 1"}],
          "scores": score(json!("P"))}),
        // 8: a final submit() only in events; bool true.
        json!({"id": 8, "epoch": 1, "messages": [
            assistant(vec![call("h", "bash", json!({"cmd": "y"}))]), tool("h", Value::Null)],
          "events": [
            {"event": "tool", "id": "sub-inner", "function": "search", "arguments": {}},
            {"event": "tool", "id": "h", "function": "bash", "arguments": {}},
            {"event": "tool", "id": "s", "function": "submit", "arguments": {"answer": "1"}}],
          "scores": score(json!(true))}),
    ]
}

/// A `.json` log with its members in Inspect's order (serde_json's maps would sort them).
fn json_log_with(h: &Value, samples: &[Value]) -> String {
    let mut text = String::from("{\n");
    for key in ["version", "status", "eval", "plan", "results", "stats"] {
        text.push_str(&format!(
            "  {:?}: {},\n",
            key,
            serde_json::to_string_pretty(&h[key]).unwrap()
        ));
    }
    text.push_str("  \"samples\": ");
    text.push_str(&serde_json::to_string_pretty(&samples.to_vec()).unwrap());
    text.push_str(",\n  \"reductions\": []\n}\n");
    text.replace("\"__NAN__\"", "NaN")
}

fn json_log(samples: &[Value]) -> Vec<u8> {
    json_log_with(&header(), samples).into_bytes()
}

fn eval_log(samples: &[Value], method: u16, with_header: bool) -> Vec<u8> {
    let mut entries: Vec<(String, Vec<u8>)> = vec![(
        "_journal/start.json".into(),
        serde_json::to_vec(
            &json!({"version": 2, "eval": header()["eval"], "plan": header()["plan"]}),
        )
        .unwrap(),
    )];
    for s in samples {
        let name = format!(
            "samples/{}_epoch_{}.json",
            s["id"]
                .as_str()
                .map(str::to_string)
                .unwrap_or(s["id"].to_string()),
            s["epoch"]
        );
        let text = serde_json::to_string(s)
            .unwrap()
            .replace("\"__NAN__\"", "NaN");
        entries.push((name, text.into_bytes()));
    }
    entries.push(("summaries.json".into(), b"[]".to_vec()));
    if with_header {
        entries.push(("header.json".into(), serde_json::to_vec(&header()).unwrap()));
    }
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    build_zip(&refs, method, None)
}

fn read(name: &str, bytes: &[u8], chunk: usize, options: ImportOptions) -> (Corpus, ImportSummary) {
    let mut ingest = Ingest::new();
    let f = ingest.begin_file_with(name, options);
    for c in bytes.chunks(chunk.max(1)) {
        ingest.push(f, c);
    }
    ingest.end_file(f);
    ingest.finish_with_summary()
}

fn messages(corpus: &Corpus) -> Vec<String> {
    corpus
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect()
}

/// (task, fed, horizon, success, first error) per rollout.
fn outcomes(corpus: &Corpus) -> Vec<(String, u32, u32, bool, Option<String>)> {
    corpus
        .rollouts
        .iter()
        .map(|r| {
            (
                corpus.task_name(r.task).to_string(),
                r.fed.0,
                r.horizon,
                r.success,
                r.first_failure
                    .as_ref()
                    .and_then(|f| f.error)
                    .map(|e| corpus.texts.get(e).to_string()),
            )
        })
        .collect()
}

fn expected() -> Vec<(String, u32, u32, bool, Option<String>)> {
    let s = |x: &str| Some(x.to_string());
    vec![
        (
            "1".into(),
            2,
            3,
            true,
            s("timeout: Command timed out before completing."),
        ),
        ("1".into(), 1, 1, false, None),
        (
            "t-3".into(),
            2,
            3,
            true,
            s("approval: The call was rejected by the approver."),
        ),
        ("7".into(), 1, 1, false, s("unknown: Exit 1")),
        ("8".into(), 3, 2, true, None),
    ]
}

fn check_default_reading(corpus: &Corpus, summary: &ImportSummary, format: Format) {
    assert_eq!(outcomes(corpus), expected(), "{:#?}", messages(corpus));
    assert_eq!(
        corpus.condition_names(0),
        ("demo/arith (arith-ds)", "openai/m1", "basic_agent_loop")
    );
    assert_eq!(summary.files[0].format, Some(format));
    let r = &corpus.rollouts[0];
    // Tokens of the agent model only: 100 + 1000 + 5 + 20; latency = working time.
    assert_eq!(r.cost.tokens(), Some(1125.0));
    assert_eq!(r.cost.latency_s(), Some(12.5));
    assert_eq!(r.cost.usd(), None);
    let m = messages(corpus).join("\n");
    for want in [
        "1 samples errored",
        "2 samples not scored, excluded: 1 × the score is NaN (unscored); 1 × the score is a dict",
        "samples that hit a limit are kept (meta.limit): message: 1",
        "1 tool messages answer no call",
        "3 calls have no tool message: 2 found in the sample's tool events (their verdict taken from there), 1 found nowhere (rejected as unanswered)",
        "1 calls exist only as tool events after",
        "1 tool events belong to calls outside",
    ] {
        assert!(m.contains(want), "missing {want:?} in\n{m}");
    }
    // The self-check that agrees is a check passed, not a problem.
    assert!(!m.contains("self-check"), "{m}");
    let checks: Vec<&str> = corpus.checks.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        checks,
        ["self-check: the recomputed success rate 0.6000 (3/5 scored samples) agrees with the log's match accuracy"]
    );
    assert_eq!(corpus.files[0].errors, 0, "{m}");
}

#[test]
fn a_json_log_whatever_the_chunking() {
    let log = json_log(&samples());
    let (corpus, summary) = read("run.json", &log, log.len(), ImportOptions::default());
    check_default_reading(&corpus, &summary, Format::InspectJson);
    for chunk in [1, 7, 100, 4095, 4096, 5000] {
        let (c, _) = read("run.json", &log, chunk, ImportOptions::default());
        assert_eq!(outcomes(&c), expected(), "chunk {chunk}");
        assert_eq!(messages(&c), messages(&corpus), "chunk {chunk}");
    }
}

#[test]
fn eval_archives_deflate_zstd_and_stored() {
    for method in [8, 93, 0] {
        let log = eval_log(&samples(), method, true);
        let (corpus, summary) = read("run.eval", &log, 1000, ImportOptions::default());
        check_default_reading(&corpus, &summary, Format::InspectEval);
        // Random access gives the same reading.
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("run.eval");
        ingest.read_archive(f, &mut &log[..]);
        let (c, _) = ingest.finish_with_summary();
        assert_eq!(outcomes(&c), expected(), "method {method}");
        assert_eq!(messages(&c), messages(&corpus));
    }
}

#[test]
fn steps_and_meta_as_the_viewer_rereads_them() {
    let log = eval_log(&samples(), 93, true);
    let (corpus, summary) = read("run.eval", &log, 1 << 20, ImportOptions::default());
    let r = &corpus.rollouts[2];
    let s = &r.source;
    let bytes = &log[s.offset as usize..s.offset as usize + s.len as usize];
    let line = summary.rollout_line(&corpus, 2, bytes).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["task_id"], "t-3");
    assert_eq!(
        v["steps"][0],
        json!({"tool": "bash", "args": {"cmd": "a"}, "ok": true})
    );
    assert_eq!(
        v["steps"][1]["error"],
        "approval: The call was rejected by the approver."
    );
    assert!(v["steps"][2]["error"]
        .as_str()
        .unwrap()
        .starts_with("unanswered"));
    assert_eq!(v["meta"]["limit"], json!({"type": "message", "limit": 50}));
    assert_eq!(v["meta"]["trial"], 1);
    assert_eq!(v["meta"]["answered_by_events"], 2);
    assert_eq!(v["steps"].as_array().map(Vec::len), Some(3));
    // The same from a .json log.
    let log = json_log(&samples());
    let (corpus, summary) = read("run.json", &log, 1 << 20, ImportOptions::default());
    let s = &corpus.rollouts[0].source;
    let bytes = &log[s.offset as usize..s.offset as usize + s.len as usize];
    let v: Value = serde_json::from_str(&summary.rollout_line(&corpus, 0, bytes).unwrap()).unwrap();
    assert_eq!(v["steps"][2]["error"], "parsing: bad JSON");
}

#[test]
fn options_scorer_success_value_threshold_and_errored() {
    let inverted = ImportOptions {
        inspect: InspectOptions {
            success_value: Some("I".into()),
            threshold: Some(2.0),
            keep_errored: true,
            ..InspectOptions::default()
        },
        model: Some("renamed".into()),
        ..ImportOptions::default()
    };
    let log = json_log(&samples());
    let (corpus, _) = read("run.json", &log, 1 << 20, inverted);
    let got: Vec<(String, bool)> = outcomes(&corpus)
        .into_iter()
        .map(|(t, _, _, s, _)| (t, s))
        .collect();
    // C → fail, I → success, 1.0 < 2.0 → fail, errored kept as a failure, P → fail, true → fail
    // (the success value names a string, so `true` is not it).
    let want = [
        ("1", false),
        ("1", true),
        ("t-3", false),
        ("4", false),
        ("7", false),
        ("8", false),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(t, s)| (t.to_string(), *s))
            .collect::<Vec<_>>()
    );
    assert_eq!(corpus.condition_names(0).1, "renamed");
    let m = messages(&corpus).join("\n");
    assert!(m.contains("1 errored samples kept as failures"), "{m}");
    assert!(
        m.contains("differs from the log's match accuracy 0.6000"),
        "{m}"
    );
    // A scorer the samples lack: nothing is scored, and the note says so.
    let other = ImportOptions {
        inspect: InspectOptions {
            scorer: Some("judge".into()),
            ..InspectOptions::default()
        },
        ..ImportOptions::default()
    };
    let (corpus, _) = read("run.json", &log, 1 << 20, other);
    assert!(corpus.rollouts.is_empty());
    let m = messages(&corpus).join("\n");
    assert!(m.contains("no score from scorer \"judge\""), "{m}");
}

#[test]
fn a_crashed_run_has_only_its_journal() {
    let log = eval_log(&samples()[..2], 8, false);
    let (corpus, summary) = read("crashed.eval", &log, 1 << 20, ImportOptions::default());
    assert_eq!(corpus.rollouts.len(), 2);
    assert_eq!(summary.files[0].format, Some(Format::InspectEval));
    assert_eq!(
        corpus.condition_names(0),
        ("demo/arith (arith-ds)", "openai/m1", "basic_agent_loop")
    );
    let m = messages(&corpus).join("\n");
    assert!(m.contains("no header.json"), "{m}");
}

#[test]
fn hostile_archives() {
    // Not an Inspect log: the zip message stays.
    let other = build_zip(&[("readme.txt", b"hello")], 8, None);
    let (corpus, _) = read("x.zip", &other, 1 << 20, ImportOptions::default());
    let m = messages(&corpus).join("\n");
    assert!(
        m.contains("a zip archive that is not an Inspect log"),
        "{m}"
    );
    assert!(corpus.rollouts.is_empty() && corpus.files[0].errors == 1);

    // Truncated: the central directory is gone.
    let log = eval_log(&samples(), 8, true);
    let (corpus, _) = read(
        "cut.eval",
        &log[..log.len() / 2],
        1 << 20,
        ImportOptions::default(),
    );
    let m = messages(&corpus).join("\n");
    assert!(m.contains("not a readable zip archive"), "{m}");
    assert!(corpus.files[0].errors >= 1);

    // A damaged entry: its CRC fails, the others are read.
    let mut bad = log.clone();
    let s = samples();
    let target = serde_json::to_string(&s[1]).unwrap();
    let stored = eval_log(&s, 0, true);
    let at = stored
        .windows(target.len())
        .position(|w| w == target.as_bytes())
        .unwrap();
    bad.clear();
    bad.extend_from_slice(&stored);
    bad[at + 10] ^= 1;
    let (corpus, _) = read("bad.eval", &bad, 1 << 20, ImportOptions::default());
    let m = messages(&corpus).join("\n");
    assert!(m.contains("CRC-32 does not match"), "{m}");
    assert_eq!(corpus.rollouts.len(), 4);

    // A bomb: an entry that inflates past the cap (and one that declares it) is refused.
    let zeros = vec![b' '; 3 << 20];
    let mut sample = serde_json::to_vec(&s[0]).unwrap();
    sample.extend_from_slice(&zeros);
    let header = serde_json::to_vec(&header()).unwrap();
    for declared in [None, Some(u32::MAX)] {
        let zip = build_zip(
            &[
                ("header.json", &header),
                ("samples/1_epoch_1.json", &sample),
            ],
            8,
            declared,
        );
        let mut ingest = Ingest::new();
        let mut options = ImportOptions::default();
        options.inspect.max_sample = Some(1 << 20);
        let f = ingest.begin_file_with("bomb.eval", options);
        ingest.read_archive(f, &mut &zip[..]);
        let corpus = ingest.finish();
        let m = messages(&corpus).join("\n");
        assert!(m.contains("zip bomb"), "{m}");
        assert!(corpus.rollouts.is_empty());
    }
}

#[test]
fn json_edge_cases() {
    // Version 3 with an unknown key, a truncated samples array, a bad sample.
    let mut h = header();
    h["version"] = json!(3);
    let text = json_log_with(
        &h,
        &[
            samples()[0].clone(),
            json!({"id": 2, "epoch": "one"}),
            samples()[1].clone(),
        ],
    );
    let text = text.replace(",\n  \"reductions\": []\n}\n", "");
    let cut = &text[..text.len() - 30];
    let (corpus, _) = read("v3.json", cut.as_bytes(), 100, ImportOptions::default());
    let m = messages(&corpus).join("\n");
    assert!(m.contains("version 3 is newer"), "{m}");
    assert!(m.contains("epoch"), "{m}");
    assert!(m.contains("truncated"), "{m}");
    assert_eq!(corpus.rollouts.len(), 1);
    // Not Inspect: a plain JSON object falls back to the other formats.
    let (_, summary) = read(
        "tau2.json",
        br#"{"info": {}, "tasks": [], "simulations": []}"#,
        5,
        ImportOptions::default(),
    );
    assert_eq!(summary.files[0].format, Some(Format::Tau2Results));
}

/// A requeued sample is written again under the same entry name: Inspect reads the last entry
/// of a name, and so does this reader (the earlier entry is never read; a note says so). Samples in
/// the newest chunked layout are counted and said, not guessed at.
#[test]
fn requeued_samples_last_entry_wins_chunked_samples_counted() {
    let first = json!({"id": 1, "epoch": 1, "messages": [
        assistant(vec![call("a", "bash", json!({"cmd": "ls"}))]),
        tool("a", json!({"type": "timeout", "message": "slow"}))],
      "scores": score(json!("I"))});
    let again = json!({"id": 1, "epoch": 1, "messages": [
        assistant(vec![call("a", "bash", json!({"cmd": "ls"}))]), tool("a", Value::Null),
        assistant(vec![call("b", "bash", json!({"cmd": "cat"}))]), tool("b", Value::Null)],
      "scores": score(json!("C"))});
    let other = json!({"id": 2, "epoch": 1, "messages": [], "scores": score(json!("I"))});
    let text = |v: &Value| serde_json::to_vec(v).unwrap();
    let start = serde_json::to_vec(
        &json!({"version": 2, "eval": header()["eval"], "plan": header()["plan"]}),
    )
    .unwrap();
    let (t1, t2, t3) = (text(&first), text(&again), text(&other));
    for method in [8, 93] {
        let zip = build_zip(
            &[
                ("_journal/start.json", &start),
                ("samples/1_epoch_1.json", &t1),
                ("samples/2_epoch_1.json", &t3),
                ("samples/1_epoch_1.json", &t2),
                ("samples/3_epoch_1/sample.json", b"{}"),
                ("samples/3_epoch_1/messages/0.json", b"[]"),
            ],
            method,
            None,
        );
        let (corpus, _) = read("requeued.eval", &zip, 1 << 20, ImportOptions::default());
        // Sample 1 as last written (two ok steps, C), then sample 2; never the first attempt.
        assert_eq!(
            outcomes(&corpus),
            [
                ("1".into(), 3, 2, true, None),
                ("2".into(), 1, 1, false, None)
            ],
            "{:#?}",
            messages(&corpus)
        );
        let m = messages(&corpus).join("\n");
        assert!(
            m.contains(
                "some entries were written again later under the same name (requeued samples)"
            ),
            "{m}"
        );
        assert!(
            m.contains("1 samples are stored in Inspect's newest chunked layout"),
            "{m}"
        );
        assert!(!m.contains("appears again"), "{m}");
    }
}

/// A large `.eval` reports progress while its entries are read, not only at its end: the bytes
/// read so far grow block by block (256 KiB) up to the archive's size.
#[test]
fn archive_progress_while_entries_are_read() {
    let padding = "x".repeat(60_000);
    let samples: Vec<Value> = (0..100)
        .map(|i| {
            json!({"id": i, "epoch": 1, "messages": [
                assistant(vec![call("a", "bash", json!({"cmd": padding}))]), tool("a", Value::Null)],
              "scores": score(json!("C"))})
        })
        .collect();
    let log = eval_log(&samples, 0, true);
    let size = log.len() as u64;
    assert!(size > 6_000_000, "{size}");
    let mut seen: Vec<u64> = Vec::new();
    let mut on_read = |read: u64| seen.push(read);
    let mut bytes = &log[..];
    let mut src = prefix_exec::formats::inspect::Progressing::new(&mut bytes, &mut on_read);
    let mut ingest = Ingest::new();
    let f = ingest.begin_file("big.eval");
    ingest.read_archive(f, &mut src);
    let (corpus, _) = ingest.finish_with_summary();
    assert_eq!(corpus.rollouts.len(), 100);
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "never backwards");
    assert_eq!(seen.last(), Some(&size), "ends at the archive's size");
    // Many steps in between (≈ one per 256 KiB block), not a jump from 0 to the end.
    let between = seen.iter().filter(|&&r| r > 0 && r < size).count();
    assert!(
        between as u64 >= size / (512 * 1024),
        "{between} steps for {size} bytes"
    );
}
