//! The README's "Bring your own logs" examples score as they are: each `json` block of that
//! section is read as a file, with hand-computed T, FED and success.

use prefix_exec::ingest::read_files;

#[test]
fn bring_your_own_logs_examples_score_as_is() {
    let readme = include_str!("../README.md");
    let section = readme
        .split("## Bring your own logs")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("README has a Bring your own logs section");
    let blocks: Vec<&str> = section
        .split("```json\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    // OpenAI: get_order rejected ("Error: …"), then executed; success. Anthropic: run_tests
    // executed, edit_file flagged is_error; not resolved. Responses: weather executed; reward 1.
    let want = [
        ("refund-17", 2, 1, true),
        ("fix-3", 2, 2, false),
        ("q-8", 1, 2, true),
    ];
    assert_eq!(blocks.len(), want.len(), "{section}");
    for (block, (task, t, fed, success)) in blocks.iter().zip(want) {
        let corpus = read_files([("example.json", block.as_bytes())]);
        assert!(
            corpus.diagnostics.is_empty(),
            "{task}: {:?}",
            corpus.diagnostics
        );
        let r = &corpus.rollouts[0];
        assert_eq!(
            (corpus.task_name(r.task), r.horizon, r.fed.0, r.success),
            (task, t, fed, success)
        );
    }
}
