//! The fuzz harness: one `check_*` function per target, each feeding one fuzz input to the core
//! and asserting what must hold for any input. The targets in `fuzz/fuzz_targets/` call them, and
//! `tests/fuzz_regressions.rs` replays every input that once failed through the same functions.
//!
//! Every check reads its files through the public `Ingest` API twice — whole and in small chunks
//! — and asserts that chunk boundaries change nothing (the browser reads files in 4 MiB chunks,
//! the CLI in whatever `read` returns).

#![allow(dead_code)]

use prefix_exec::browse::{list_rollouts, parse_steps, RolloutQuery};
use prefix_exec::formats::canonical::{parse_line, parse_line_ext, LineContext};
use prefix_exec::formats::{ImportOptions, ImportSummary, ToolSet};
use prefix_exec::ingest::Ingest;
use prefix_exec::report::table::{render_csv, render_latex, render_text};
use prefix_exec::report::{build_report_full, Report, Settings};
use prefix_exec::rollout::Corpus;
use prefix_exec::score::MaxDepth;
use serde_json::Value;

/// Separates the files of one fuzz input (NUL bytes never occur in the JSON the seeds hold).
pub const FILE_SEP: &[u8] = b"\n\x00--file--\x00\n";

/// The input split at [`FILE_SEP`], at most `max` parts (the last keeps any further separators).
pub fn split_files(data: &[u8], max: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() + 1 < max {
        match rest.windows(FILE_SEP.len()).position(|w| w == FILE_SEP) {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i + FILE_SEP.len()..];
            }
            None => break,
        }
    }
    out.push(rest);
    out
}

/// Reads `files` through `Ingest`, each pushed in chunks of `chunk` bytes.
pub fn ingest(
    files: &[(&str, &[u8])],
    chunk: usize,
    schema_checks: bool,
) -> (Corpus, ImportSummary) {
    let mut ingest = Ingest::new();
    for (name, bytes) in files {
        let options = ImportOptions {
            schema_checks,
            ..ImportOptions::default()
        };
        let f = ingest.begin_file_with(name, options);
        for c in bytes.chunks(chunk.max(1)) {
            ingest.push(f, c);
        }
        ingest.end_file(f);
    }
    ingest.finish_with_summary()
}

/// Reads `files` whole and in chunks of 1..=97 bytes (chosen from the input's length, so the
/// input's bytes are all file content) and asserts both readings agree on every rollout and
/// diagnostic. Returns the whole-file reading.
pub fn ingest_both_ways(files: &[(&str, &[u8])], schema_checks: bool) -> (Corpus, ImportSummary) {
    let total: usize = files.iter().map(|(_, b)| b.len()).sum();
    let whole = ingest(files, usize::MAX, schema_checks);
    let chunked = ingest(files, 1 + total % 97, schema_checks);
    assert_eq!(
        whole.0.rollouts, chunked.0.rollouts,
        "chunking changed the rollouts"
    );
    assert_eq!(
        whole.0.diagnostics, chunked.0.diagnostics,
        "chunking changed the diagnostics"
    );
    assert_eq!(whole.0.diagnostics_total, chunked.0.diagnostics_total);
    assert_eq!(
        whole.0.files, chunked.0.files,
        "chunking changed the file summaries"
    );
    whole
}

/// Every rollout is accounted for by a condition and a task the corpus knows.
pub fn assert_consistent(corpus: &Corpus) {
    for r in &corpus.rollouts {
        assert!((r.condition as usize) < corpus.conditions.len());
        assert!((r.source.file as usize) < corpus.files.len());
    }
}

/// Files split out of one input: the names each target gives its parts.
fn named<'a>(data: &'a [u8], names: &[&'a str]) -> Vec<(&'a str, &'a [u8])> {
    let parts = split_files(data, names.len());
    names.iter().copied().zip(parts).collect()
}

/// The canonical JSONL reader: line splitting across chunks (BOM, CRLF, blank lines), line
/// validation and the streaming fold of steps, with `{"tools": …}` lines and schema checks.
pub fn check_canonical(data: &[u8]) {
    let (corpus, _) = ingest_both_ways(&[("run.jsonl", data)], true);
    assert_consistent(&corpus);
    // The line parser on its own, on every line, with and without a schema context.
    let mut ctx = LineContext::new(true);
    for line in data.split(|&b| b == b'\n') {
        let _ = parse_line(line);
        let _ = parse_line_ext(line, &mut ctx);
    }
}

/// The tau-bench (v1) importer: a JSON array of `{task_id, trial, reward, info, traj}`.
pub fn check_tau_bench(data: &[u8]) {
    let (corpus, _) = ingest_both_ways(&[("gpt-4o-airline.json", data)], true);
    assert_consistent(&corpus);
}

/// The message-transcript reader: one record per file (named `<model>_<task>.json`, so the
/// file-name mapping is exercised), an array of records, JSONL — the three API shapes, pairing
/// by id and by position, the field mapping, the reject rules; and re-reading each rollout for
/// the viewer.
pub fn check_transcript(data: &[u8]) {
    let files = named(data, &["model-a_task-1.json", "runs/export.jsonl"]);
    let (corpus, summary) = ingest_both_ways(&files, true);
    assert_consistent(&corpus);
    // The viewer's re-reading of each rollout gives its steps: T of them, or none for a
    // rollout without tool calls (one terminal no-tool action).
    for (i, r) in corpus.rollouts.iter().enumerate() {
        let bytes = files[r.source.file as usize].1;
        let at = r.source.offset as usize;
        let slice = &bytes[at..at + r.source.len as usize];
        let line = summary
            .rollout_line(&corpus, i, slice)
            .expect("a rollout read once is read again");
        let steps = parse_steps(&line).expect("a re-read rollout parses");
        assert!(
            steps.len() as u32 == r.horizon || (steps.is_empty() && r.horizon == 1),
            "re-read {} steps of a rollout with T = {}",
            steps.len(),
            r.horizon
        );
    }
}

/// The tau2 importer in all its forms: a `Results` object, a bare simulations array, and the
/// directory form (a `results.json` plus simulation files, resolved across files).
pub fn check_tau2(data: &[u8]) {
    let files = named(
        data,
        &[
            "run/results.json",
            "run/simulations/sim-a.json",
            "run/simulations/sim-b.json",
            "run/simulations/sim-c.json",
        ],
    );
    let (corpus, _) = ingest_both_ways(&files, true);
    assert_consistent(&corpus);
}

/// The BFCL importer: a `…_result.json` file (JSON lines with inference logs) paired with the
/// run's `…_score.json` when the input ends.
pub fn check_bfcl(data: &[u8]) {
    let files = named(
        data,
        &[
            "BFCL/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json",
            "BFCL/score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json",
        ],
    );
    let (corpus, _) = ingest_both_ways(&files, true);
    assert_consistent(&corpus);
}

/// The ToolSandbox importer: a run folder's `result_summary.json` and trajectory files
/// (execution contexts and conversations), recognised by content and joined by run folder when
/// the input ends; every rollout must re-read, through the viewer, as the scored one.
pub fn check_toolsandbox(data: &[u8]) {
    const RUN: &str = "data/agent_acme/m_user_openai/gpt-4o_01_02_2025_03_04_05";
    let names = [
        format!("{RUN}/result_summary.json"),
        format!("{RUN}/trajectories/a/execution_context.json"),
        format!("{RUN}/trajectories/a/conversation.json"),
        format!("{RUN}/trajectories/b/execution_context.json"),
        format!("{RUN}/trajectories/c/conversation.json"),
    ];
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let files = named(data, &names);
    let (corpus, summary) = ingest_both_ways(&files, true);
    assert_consistent(&corpus);
    for (i, r) in corpus.rollouts.iter().enumerate() {
        let bytes = files[r.source.file as usize].1;
        let start = r.source.offset as usize;
        let line = summary
            .rollout_line(&corpus, i, &bytes[start..start + r.source.len as usize])
            .expect("a scored scenario re-reads from its trajectory file");
        let again = parse_line(line.as_bytes()).expect("a read-back line parses");
        assert_eq!(
            (again.horizon, again.fed, again.success),
            (r.horizon, r.fed.0, r.success),
            "viewer and score disagree"
        );
    }
}

/// The tool-schema checker: compiling arbitrary tool definitions (any JSON Schema a log may
/// carry) and checking arbitrary arguments against them.
/// Input: `tools JSON` FILE_SEP `tool name` FILE_SEP `arguments JSON`.
pub fn check_schema(data: &[u8]) {
    let parts = split_files(data, 3);
    let Ok(tools) = serde_json::from_slice::<Value>(parts[0]) else {
        return;
    };
    let Ok(set) = ToolSet::from_json(&tools) else {
        return;
    };
    let name = parts
        .get(1)
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let args = parts
        .get(2)
        .and_then(|b| serde_json::from_slice::<Value>(b).ok());
    // Every named tool, with the arguments and without them.
    let mut names: Vec<String> = match &tools {
        Value::Array(specs) => specs
            .iter()
            .filter_map(|s| s.get("function").unwrap_or(s).get("name"))
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect(),
        Value::Object(map) => map.keys().cloned().collect(),
        _ => Vec::new(),
    };
    names.extend(name);
    for n in &names {
        let _ = set.check(n, args.as_ref());
        let _ = set.check(n, None);
    }
}

/// End to end: any drop of files (format detected by content) → corpus → report (with a small
/// bootstrap) → every rendering the CLI and the app make. The spec's identity checks are the
/// oracle (a violation on any input is a bug), and every scored rollout must read back, through
/// the rollout viewer, as the same rollout.
pub fn check_report(data: &[u8]) {
    let files = named(data, &["a.jsonl", "b.json", "c.jsonl"]);
    let (corpus, summary) = ingest_both_ways(&files, true);
    let settings = Settings {
        bootstrap: 16,
        seed: data.len() as u64,
        max_depth: if data.len() % 2 == 0 {
            MaxDepth::All
        } else {
            MaxDepth::Fixed(10)
        },
        ..Settings::default()
    };
    let report = build_report_full(&corpus, Some(&summary), &settings, &mut |_| {});
    assert!(
        report.identity_violations.is_empty(),
        "identity violated: {:?}",
        report.identity_violations
    );
    let json = report.to_json();
    let back: Report = serde_json::from_str(&json).expect("a report reads back");
    assert_eq!(back.to_json(), json, "report JSON does not round-trip");
    let _ = render_text(&report, 3);
    let _ = render_csv(&report);
    let _ = render_latex(&report, 3, true);
    for c in &corpus.conditions {
        let q = RolloutQuery {
            dataset: corpus.datasets.get(c.dataset).to_string(),
            model: corpus.models.get(c.model).to_string(),
            method: corpus.methods.get(c.method).to_string(),
            limit: 50,
            ..RolloutQuery::default()
        };
        let _ = list_rollouts(&corpus, &q);
    }
    for (i, r) in corpus.rollouts.iter().enumerate().take(64) {
        let bytes = files[r.source.file as usize].1;
        let start = r.source.offset as usize;
        let end = start + r.source.len as usize;
        let line = summary
            .rollout_line(&corpus, i, &bytes[start..end])
            .expect("a scored rollout's line reads back");
        let again = parse_line(line.as_bytes()).expect("a read-back line parses");
        assert_eq!(
            (again.horizon, again.fed),
            (r.horizon, r.fed.0),
            "viewer and score disagree"
        );
        parse_steps(&line).expect("a read-back line shows its steps");
    }
}

/// Every rollout reads back through the rollout viewer as the rollout that was scored.
fn assert_reads_back(files: &[(&str, &[u8])], corpus: &Corpus, summary: &ImportSummary) {
    for (i, r) in corpus.rollouts.iter().enumerate().take(64) {
        let bytes = files[r.source.file as usize].1;
        let start = r.source.offset as usize;
        let end = start + r.source.len as usize;
        let line = summary
            .rollout_line(corpus, i, &bytes[start..end])
            .expect("a scored rollout's line reads back");
        let again = parse_line(line.as_bytes()).expect("a read-back line parses");
        assert_eq!(
            (again.horizon, again.fed),
            (r.horizon, r.fed.0),
            "viewer and score disagree"
        );
        parse_steps(&line).expect("a read-back line shows its steps");
    }
}

/// The Inspect AI reader. The input is read (1) as one file, whole and in chunks — a `.json`
/// log, a `.eval` zip, or anything else — and, for a zip, (2) by random access, which must
/// agree with pushing it; then (3) its parts (`header` FILE_SEP `sample`) are wrapped in `.eval`
/// archives with DEFLATE and zstd entries, which must read alike. Every rollout reads back.
pub fn check_inspect(data: &[u8]) {
    use prefix_exec::formats::inspect::archive::build_zip;
    let files = [("log.eval", data)];
    let (corpus, summary) = ingest_both_ways(&files, true);
    assert_consistent(&corpus);
    assert_reads_back(&files, &corpus, &summary);
    if data.starts_with(prefix_exec::ingest::ZIP_MAGIC) {
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("log.eval");
        ingest.read_archive(f, &mut &data[..]);
        let random = ingest.finish();
        assert_eq!(
            random.rollouts, corpus.rollouts,
            "random access changed the rollouts"
        );
        assert_eq!(random.diagnostics, corpus.diagnostics);
    }
    let parts = split_files(data, 2);
    let sample = parts.get(1).copied().unwrap_or(b"{}");
    let entries: [(&str, &[u8]); 2] = [
        ("header.json", parts[0]),
        ("samples/1_epoch_1.json", sample),
    ];
    let mut readings = Vec::new();
    for method in [8u16, 93] {
        let zip = build_zip(&entries, method, None);
        let files = [("built.eval", &zip[..])];
        let (corpus, summary) = ingest_both_ways(&files, true);
        assert_consistent(&corpus);
        assert_reads_back(&files, &corpus, &summary);
        // Everything but where each entry sits in the archive (the compressed sizes differ).
        let rollouts: Vec<_> = corpus
            .rollouts
            .into_iter()
            .map(|mut r| {
                r.source.offset = 0;
                r.source.len = 0;
                r
            })
            .collect();
        readings.push((rollouts, corpus.diagnostics));
    }
    assert_eq!(
        readings[0], readings[1],
        "DEFLATE and zstd entries read differently"
    );
}

/// Reads `data` as a container named `name`; never panics, and every rollout is accounted for.
fn read_as_container(name: &str, data: &[u8]) -> Option<Corpus> {
    let mut ingest = Ingest::new();
    let read = ingest.read_container(name, &ImportOptions::default(), &mut &data[..], &mut |_| {});
    let corpus = ingest.finish();
    assert_consistent(&corpus);
    read.then_some(corpus)
}

/// The same rollouts and diagnostics' messages, whatever the files were named.
fn assert_same_reading(a: &Corpus, b: &Corpus, what: &str) {
    assert_eq!(a.rollouts.len(), b.rollouts.len(), "{what}: rollouts");
    for (x, y) in a.rollouts.iter().zip(&b.rollouts) {
        assert_eq!(
            (x.horizon, x.fed, x.success, x.crashed),
            (y.horizon, y.fed, y.success, y.crashed),
            "{what}"
        );
    }
    let messages = |c: &Corpus| {
        c.diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(messages(a), messages(b), "{what}: diagnostics");
}

/// tar framing: the input as a tar archive (any bytes: headers, sizes, truncation, links), and
/// the input as the one member of a tar, read as that file is.
pub fn check_archive_tar(data: &[u8]) {
    let whole = read_as_container("in.tar", data);
    // Handed over in pieces (as the browser's own decoder hands a stream over): the same
    // corpus, wherever the pieces cut a header or a member.
    use prefix_exec::ingest::archive::{Container, InOrder};
    if let (Some(whole), Some(Container::Tar)) =
        (&whole, Container::of(&data[..data.len().min(512)]))
    {
        for piece in [1, 7, 511, 513, 4096] {
            let mut ingest = Ingest::new();
            let options = ImportOptions::default();
            let mut steps =
                ingest.begin_stream("in.tar", &options, Container::Tar, data.len() as u64);
            for chunk in data.chunks(piece) {
                if steps.done() {
                    break;
                }
                ingest.stream_step(&mut steps, chunk, 0, &mut InOrder, &mut |_| {});
            }
            ingest.end_stream(steps, None, &mut InOrder, &mut |_| {});
            let pieces = ingest.finish();
            assert_eq!(
                format!(
                    "{:?}{:?}{:?}",
                    pieces.rollouts, pieces.diagnostics, pieces.files
                ),
                format!(
                    "{:?}{:?}{:?}",
                    whole.rollouts, whole.diagnostics, whole.files
                ),
                "a tar stream in pieces of {piece}"
            );
        }
    }
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_mode(0o644);
    b.append_data(&mut h, "runs/x.jsonl", data).unwrap();
    let tar = b.into_inner().unwrap();
    let archived = read_as_container("a.tar", &tar).expect("a tar is a container");
    let plain = prefix_exec::ingest::read_files([("a.tar/runs/x.jsonl", data)]);
    assert_same_reading(&archived, &plain, "a tar's member");
}

/// gzip framing: the input as a gzip stream (any bytes), and the input gzipped, read as the
/// file it holds; cut anywhere, never a panic.
pub fn check_archive_gzip(data: &[u8]) {
    use std::io::Write;
    let _ = read_as_container("in.gz", data);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    let gz = e.finish().unwrap();
    // A member that is itself an archive is read as one, not as this file.
    if prefix_exec::ingest::archive::Container::of(&data[..data.len().min(512)]).is_none() {
        let archived = read_as_container("x.jsonl.gz", &gz).expect("gzip is a container");
        let plain = prefix_exec::ingest::read_files([("x.jsonl", data)]);
        assert_same_reading(&archived, &plain, "a gzipped file");
    }
    for cut in [gz.len() / 3, gz.len() / 2, gz.len().saturating_sub(9)] {
        let _ = read_as_container("x.jsonl.gz", &gz[..cut]);
    }
}

/// zip framing: the input as a zip (any bytes: a table of contents pointing anywhere), and
/// the input as the member of a built zip (stored, deflate, zstd), read as that file is.
pub fn check_archive_zip(data: &[u8]) {
    use prefix_exec::formats::inspect::archive::build_zip;
    let _ = read_as_container("in.zip", data);
    if prefix_exec::ingest::archive::Container::of(&data[..data.len().min(512)]).is_some() {
        return;
    }
    let plain = prefix_exec::ingest::read_files([("a.zip/runs/x.jsonl", data)]);
    for method in [0u16, 8, 93] {
        let zip = build_zip(&[("runs/x.jsonl", data)], method, None);
        let archived = read_as_container("a.zip", &zip).expect("a zip is a container");
        assert_same_reading(&archived, &plain, "a zip's member");
    }
}
