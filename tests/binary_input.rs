//! A binary file dropped as rollouts gets one clear message and is skipped; a text file with
//! one invalid byte only loses that line.

use prefix_exec::ingest::read_files;

#[test]
fn binary_files_get_one_message() {
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "a.png",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(),
            "PNG image",
        ),
        (
            "a.pdf",
            b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n".to_vec(),
            "PDF document",
        ),
        (
            "a.zip",
            b"PK\x03\x04\x14\0\0\0\x08\0".to_vec(),
            "zip archive",
        ),
        (
            "a.bin",
            (0u8..=255).cycle().take(4000).collect(),
            "binary file",
        ),
    ];
    for (name, bytes, kind) in cases {
        let corpus = read_files([(name, &bytes[..])]);
        assert!(corpus.rollouts.is_empty());
        assert_eq!(
            corpus.diagnostics.len(),
            1,
            "{name}: {:?}",
            corpus.diagnostics
        );
        let d = &corpus.diagnostics[0];
        assert_eq!((d.file.as_str(), d.line), (name, None));
        assert!(d.message.contains(kind), "{name}: {}", d.message);
    }
}

#[test]
fn one_bad_byte_costs_one_line() {
    let good =
        r#"{"dataset":"d","task_id":"t","model":"m","method":"a","success":true,"steps":[]}"#;
    let text = [
        good.as_bytes(),
        b"\n{\"dataset\":\"\xff\"}\n",
        good.as_bytes(),
        b"\n",
    ]
    .concat();
    let corpus = read_files([("mixed.jsonl", &text[..])]);
    assert_eq!(corpus.rollouts.len(), 2);
    assert_eq!(corpus.diagnostics.len(), 1);
    assert_eq!(corpus.diagnostics[0].line, Some(2));
    assert!(corpus.diagnostics[0].message.contains("UTF-8"));
}
