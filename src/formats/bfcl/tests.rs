use super::*;
use serde_json::json;

#[test]
fn rejection_rule() {
    let rejected = |v: Value| matches!(output_verdict(&v), Verdict::Rejected(_));
    assert!(rejected(json!("Error during execution: invalid syntax")));
    assert!(rejected(json!("{\"error\": \"No such file\"}")));
    assert!(rejected(json!("{'error': 'No such file'}")));
    assert!(rejected(json!("[{'error': 'x'}, {'id': 2}]")));
    assert!(rejected(json!([{"error": "x"}])));
    assert!(rejected(json!({"error": "x"})));
    assert!(!rejected(json!("None")));
    assert!(!rejected(json!(null)));
    assert!(!rejected(json!("{\"result\": \"Error in the text only\"}")));
    assert!(!rejected(json!("['RMS', 'SBK']")));
    assert!(!rejected(json!("[{'id': 1}, {'error': 'second'}]")));
    assert!(!rejected(json!("{'result': mpf('0.3')}")));
    assert!(!rejected(json!("Error: not the BFCL prefix")));
}

#[test]
fn a_result_line_with_a_log() {
    let line = json!({
        "id": "multi_turn_base_7",
        "result": [[[{"cd": "{\"folder\": \"a\"}"}]]],
        "input_token_count": [[10, 20], [5]],
        "output_token_count": [[1, 2], [3]],
        "latency": [[0.5, 0.25], [1]],
        "inference_log": [
            [{"role": "state_info", "content": {}}],
            {"begin_of_turn_query": [],
             "step_10": [{"role": "assistant", "content": []},
                         {"role": "handler_log", "content": "Empty response", "model_response_decoded": []}],
             "step_2": [{"role": "assistant", "content": [{"mv": "{}"}]},
                        {"role": "handler_log", "model_response_decoded": ["mv()"]}],
             "step_0": [{"role": "assistant", "content": [{"cd": "{\"folder\": \"a\"}"}, {"ls": "{}"}]},
                        {"role": "handler_log", "model_response_decoded": ["cd(folder='a')", "ls()"]},
                        {"role": "tool", "content": "{\"current_working_directory\": \"a\"}"},
                        {"role": "tool", "content": "{'error': 'ls: denied'}"}]}
        ]
    });
    let ResultLine::Test(t) = read_result_line(line.to_string().as_bytes()).unwrap() else {
        panic!("not a test");
    };
    assert_eq!(t.category, "multi_turn_base");
    let tools: Vec<_> = t.steps.iter().map(|s| s.tool.clone().unwrap()).collect();
    assert_eq!(tools, ["cd", "ls", "mv"]);
    assert_eq!(t.steps[0].args, Some(json!({"folder": "a"})));
    assert_eq!(t.steps[0].verdict, Verdict::Accepted);
    assert!(matches!(t.steps[1].verdict, Verdict::Rejected(Some(ref e)) if e.contains("denied")));
    assert!(
        matches!(t.steps[2].verdict, Verdict::Rejected(Some(ref e)) if e.contains("no tool output"))
    );
    assert_eq!(t.cost.tokens, Some(41.0));
    assert_eq!(t.cost.latency_s, Some(1.75));
    assert!(t.has_outputs);
}

#[test]
fn other_result_lines() {
    let tb = read_result_line(
        br#"{"id": "multi_turn_base_0", "result": "Error during inference", "traceback": "..."}"#,
    );
    assert_eq!(
        tb,
        Ok(ResultLine::InferenceError {
            id: "multi_turn_base_0".into(),
            fingerprint: Some(fingerprint(&json!("Error during inference"))),
            error: "Error during inference".into(),
        })
    );
    // Without a text result, the traceback's last line is the error.
    let ResultLine::InferenceError { error, .. } = read_result_line(
        br#"{"id": "multi_turn_base_1", "result": null, "traceback": "Traceback (most recent call last):\n  File \"x\"\nopenai.APITimeoutError: Request timed out.\n"}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(error, "openai.APITimeoutError: Request timed out.");
    let ResultLine::Test(t) = read_result_line(
        br#"{"id": "multi_turn_miss_func_3", "result": [[[{"pwd": "{}"}, {"ls": "{\"a\": true}"}]], [[{"cd": "{}"}]]], "input_token_count": 5, "output_token_count": 6, "latency": 1.5}"#,
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(
        (t.steps.len(), t.has_outputs, t.category.as_str()),
        (3, false, "multi_turn_miss_func")
    );
    assert_eq!(t.steps[1].args, Some(json!({"a": true})));
    assert_eq!(t.steps[0].verdict, Verdict::Unrecorded);
    assert_eq!(t.cost.tokens, Some(11.0));
    assert!(read_result_line(br#"{"result": []}"#)
        .unwrap_err()
        .contains("id"));
    assert!(read_result_line(br#"{"id": "x"}"#)
        .unwrap_err()
        .contains("inference_log"));
    assert!(read_result_line(br#"{"id": "x", "result": "oops"}"#)
        .unwrap_err()
        .contains("string"));
    assert!(
        read_result_line(br#"{"id": "x", "inference_log": [{"step_0": 3}]}"#)
            .unwrap_err()
            .contains("step_0")
    );
}

#[test]
fn names_and_scores() {
    assert_eq!(
        category_of("multi_turn_long_context_199"),
        "multi_turn_long_context"
    );
    assert_eq!(category_of("weird"), "weird");
    assert_eq!(
        model_from_path("x/result/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_result.json")
            .as_deref(),
        Some("glyphh-ada-1.1")
    );
    // A folder above the layout names no model (the score file's `model_name` does).
    assert_eq!(
        model_from_path("gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json"),
        None
    );
    assert_eq!(
        model_from_path("repo-abc/gorilla/result/m/BFCL_v3_multi_turn_base_result.json").as_deref(),
        Some("m")
    );
    assert_eq!(
        model_from_path("runs/m2/BFCL_v3_multi_turn_base_result.json").as_deref(),
        Some("m2")
    );
    assert_eq!(model_from_path("BFCL_v4_multi_turn_base_score.json"), None);
    assert_eq!(
        category_from_name("a/BFCL_v3_multi_turn_miss_param_score.json").as_deref(),
        Some("multi_turn_miss_param")
    );
    assert_eq!(category_from_name("scores.json"), None);
    let s =
        read_score_summary(br#"{"accuracy": 0.5, "correct_count": 1, "total_count": 2}"#).unwrap();
    assert_eq!(s.total_count, 2);
    assert!(read_score_summary(br#"{"id": "x"}"#)
        .unwrap_err()
        .contains("summary"));
    let f = read_score_failure(br#"{"id": "multi_turn_base_2", "model_name": "m", "test_category": "multi_turn_base", "valid": false}"#).unwrap();
    assert_eq!(
        (f.id.as_str(), f.model_name.as_deref()),
        ("multi_turn_base_2", Some("m"))
    );
}
