use super::*;

fn ok(line: &str) -> ParsedRollout {
    parse_line(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn err(line: &str) -> String {
    match parse_line(line.as_bytes()) {
        Ok(r) => panic!("accepted {line}: {r:?}"),
        Err(e) => e.to_string(),
    }
}

const HEAD: &str = r#""dataset":"d","task_id":"t","model":"m","method":"x""#;

#[test]
fn the_issue_example_parses() {
    let r = ok(
        r#"{"dataset": "bfcl-v3", "task_id": "multi_turn_base_12", "model": "gpt-4.1", "method": "Dual-Loop",
 "success": true,
 "steps": [{"tool": "cd", "args": {"folder": "docs"}, "ok": true},
       {"tool": "mv", "args": {"source": "a"}, "ok": false, "error": "No such file", "label": "precondition"}],
 "no_tool_ok": false,
 "cost": {"tokens": 5312, "latency_s": 12.4},
 "meta": {"category": "multi_turn_base"}}"#,
    );
    assert_eq!((r.horizon, r.fed, r.success), (2, 2, true));
    let f = r.failure.unwrap();
    assert_eq!(f.label, Some(Label::Precondition));
    assert_eq!(f.error.as_deref(), Some("No such file"));
    assert_eq!(f.tool.as_deref(), Some("mv"));
    assert_eq!(r.cost.tokens, Some(5312.0));
    assert_eq!(r.cost.latency_s, Some(12.4));
    assert_eq!(r.cost.usd, None);
}

#[test]
fn rejection_rules() {
    let fed = |steps: &str| ok(&format!(r#"{{{HEAD},"success":0,"steps":{steps}}}"#)).fed;
    assert_eq!(fed(r#"[{"ok":true},{"ok":true}]"#), 3);
    assert_eq!(fed(r#"[{"ok":false},{"ok":true}]"#), 1);
    assert_eq!(fed(r#"[{},{"error":"boom"}]"#), 2);
    for quiet in [r#"null"#, r#"false"#, r#""""#, r#"[]"#, r#"{}"#] {
        assert_eq!(fed(&format!(r#"[{{"error":{quiet}}}]"#)), 2, "{quiet}");
    }
    for loud in [r#"true"#, r#"1"#, r#""x""#, r#"{"code":3}"#, r#"["x"]"#] {
        assert_eq!(fed(&format!(r#"[{{"error":{loud}}}]"#)), 1, "{loud}");
    }
    // An explicit ok wins over an error field.
    assert_eq!(fed(r#"[{"ok":true,"error":"warning"}]"#), 2);
    assert_eq!(fed(r#"[{"ok":null,"error":"e"}]"#), 1);
}

#[test]
fn no_tool_rollouts() {
    let r = ok(&format!(
        r#"{{{HEAD},"success":true,"steps":[],"no_tool_ok":true}}"#
    ));
    assert_eq!((r.horizon, r.fed, r.failure), (1, 2, None));
    let r = ok(&format!(
        r#"{{{HEAD},"success":false,"steps":[],"label":"information"}}"#
    ));
    assert_eq!((r.horizon, r.fed), (1, 1));
    assert_eq!(r.failure.unwrap().label, Some(Label::Information));
}

#[test]
fn integer_task_ids_and_success() {
    let r = ok(r#"{"dataset":"d","task_id":42,"model":"m","method":"x","success":1,"steps":[]}"#);
    assert_eq!(r.task_id, "42");
    assert!(r.success);
}

#[test]
fn bad_lines_say_what_is_wrong() {
    assert!(
        err(r#"{"task_id":"t","model":"m","method":"x","success":true,"steps":[]}"#)
            .contains("missing field `dataset`")
    );
    assert!(err(&format!(r#"{{{HEAD},"success":2,"steps":[]}}"#)).contains("success"));
    assert!(err(&format!(r#"{{{HEAD},"success":0.5,"steps":[]}}"#)).contains("success"));
    assert!(err(&format!(r#"{{{HEAD},"success":-1,"steps":[]}}"#)).contains("success"));
    assert!(err(&format!(r#"{{{HEAD},"success":true,"steps":{{}}}}"#)).contains("steps"));
    let e = err(&format!(
        r#"{{{HEAD},"success":true,"steps":[{{"ok":true}},{{"ok":false,"label":"oops"}}]}}"#
    ));
    assert!(
        e.contains("steps[1].label") && e.contains("unknown label"),
        "{e}"
    );
    let e = err(&format!(
        r#"{{{HEAD},"success":true,"steps":[],"cost":{{"tokens":-3}}}}"#
    ));
    assert!(e.contains("cost.tokens"), "{e}");
    assert!(err(
        r#"{"dataset":"d","task_id":1.5,"model":"m","method":"x","success":true,"steps":[]}"#
    )
    .contains("task_id"));
    assert!(err(
        r#"{"dataset":"","task_id":"t","model":"m","method":"x","success":true,"steps":[]}"#
    )
    .contains("dataset"));
    assert!(err("[1,2]").contains("expected a JSON object"));
    assert!(err("{\"dataset\": ").contains("EOF"));
    assert!(matches!(
        parse_line(b"{\"dataset\":\"\xff\"}"),
        Err(LineError::InvalidUtf8 { at_byte: 12 })
    ));
}

#[test]
fn long_error_texts_are_truncated() {
    let long = "é".repeat(MAX_ERROR_CHARS + 10);
    let r = ok(&format!(
        r#"{{{HEAD},"success":true,"steps":[{{"error":"{long}"}}]}}"#
    ));
    let text = r.failure.unwrap().error.unwrap();
    assert_eq!(text.chars().count(), MAX_ERROR_CHARS + 1);
    assert!(text.ends_with('…'));
}

#[test]
fn tools_lines_and_schema_checks() {
    let mut ctx = LineContext::new(true);
    let tools =
        r#"{"tools": [{"name": "cd", "parameters": {"type": "object", "required": ["folder"]}}]}"#;
    match parse_line_ext(tools.as_bytes(), &mut ctx).unwrap() {
        CanonicalLine::Tools(Some(set)) => ctx.tools = Some(set),
        other => panic!("{other:?}"),
    }
    let line =
        format!(r#"{{{HEAD},"success":true,"steps":[{{"tool":"cd","args":{{}},"ok":true}}]}}"#);
    let CanonicalLine::Rollout(r, extra) = parse_line_ext(line.as_bytes(), &mut ctx).unwrap()
    else {
        panic!("not a rollout")
    };
    assert_eq!(
        (r.fed, extra.failure_source),
        (1, Some(FailureSource::SchemaCheck))
    );
    assert_eq!(r.failure.unwrap().label, Some(Label::Schema));
    // The plain parser is unchanged: the step executed.
    assert_eq!(parse_line(line.as_bytes()).unwrap().fed, 2);
    // Checks off: even malformed definitions are not read.
    let mut off = LineContext::new(false);
    let bad = format!(r#"{{{HEAD},"success":true,"tools":7,"steps":[{{"tool":"cd","ok":true}}]}}"#);
    assert!(matches!(
        parse_line_ext(bad.as_bytes(), &mut off),
        Ok(CanonicalLine::Rollout(..))
    ));
    let e = parse_line_ext(bad.as_bytes(), &mut ctx)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("tools:"), "{e}");
    assert!(matches!(
        parse_line_ext(br#"{"tools": 7}"#, &mut off),
        Ok(CanonicalLine::Tools(None))
    ));
    // meta.termination_reason is read; meta of any other shape is ignored.
    let m = format!(
        r#"{{{HEAD},"success":true,"steps":[],"meta":{{"termination_reason":"timeout","x":[1]}}}}"#
    );
    let CanonicalLine::Rollout(_, extra) = parse_line_ext(m.as_bytes(), &mut off).unwrap() else {
        panic!()
    };
    assert_eq!(extra.termination_reason.as_deref(), Some("timeout"));
    let m = format!(r#"{{{HEAD},"success":true,"steps":[],"meta":[1,{{"a":2}}]}}"#);
    assert!(parse_line(m.as_bytes()).is_ok());
}
