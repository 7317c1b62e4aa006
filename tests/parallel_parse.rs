//! The parallel parse of canonical JSONL (`ingest::ParallelParse`) reads the same corpus as the
//! single-threaded path: the same rollouts in the same order, the same diagnostics with the same
//! line numbers (and the same first 1,000 kept), the same repeats and import summary, the same
//! converted lines — whatever the groups of lines the chunks are cut into and however the file
//! arrives in chunks. So does the browser's split (`ingest::prepared`): lines read ahead by
//! file slices, taken where they match, whatever the slices.

use prefix_exec::ingest::prepared::{prepare_slice, PreparedLines};
use prefix_exec::ingest::{FileId, Ingest, ParallelParse};
use proptest::prelude::*;

/// Tools set at file level: a step calling another tool, or `cd` without a string `folder`, is
/// rejected by the schema check.
const TOOLS: &str = r#"{"tools":[{"type":"function","function":{"name":"cd","parameters":{"type":"object","properties":{"folder":{"type":"string"}},"required":["folder"]}}}]}"#;

const GARBAGE: &[&str] = &[
    "not json",
    "{}",
    "[1, 2]",
    r#"{"dataset":"ds0"}"#,
    r#"{"dataset":"ds0","task_id":"t0","model":"m0","method":"x0","success":2,"steps":[]}"#,
    r#"{"dataset":"ds0","task_id":"t0","model":"m0","method":"x0","success":true,"steps":[{"ok":false,"label":"oops"}]}"#,
    r#"{"dataset":"ds0","task_id":"t0","model":"m0","method":"x0","success":true,"steps":[]} trailing"#,
    r#"{"dataset":"ds0","task_id":"t0","model":"m0","method":"x0","success":true,"steps":[],"cost":{"tokens":-1}}"#,
];

/// One line from a few random numbers: mostly rollouts (from small pools of names, so tasks
/// repeat), else malformed, blank, tools lines or rollouts with their own tools.
fn line(kind: u8, a: u32) -> Vec<u8> {
    let names = format!(
        r#""dataset":"ds{}","task_id":"t{}","model":"m{}","method":"x{}""#,
        a % 2,
        a / 2 % 5,
        a / 10 % 2,
        a / 20 % 2
    );
    let success = a / 40 % 2 == 1;
    let step = |c: u32| match c % 5 {
        0 | 1 => r#"{"tool":"cd","args":{"folder":"a"},"ok":true}"#,
        2 => r#"{"tool":"mv","args":{"to":"b"},"ok":false,"error":"No such file"}"#,
        3 => r#"{"tool":"cd","args":{"folder":1}}"#,
        _ => r#"{"tool":"ls","error":"denied","label":"precondition"}"#,
    };
    let steps: Vec<&str> = (0..a / 80 % 4).map(|i| step(a >> (8 + 3 * i))).collect();
    let steps = steps.join(",");
    let text = match kind % 16 {
        0..=7 => format!(r#"{{{names},"success":{success},"steps":[{steps}]}}"#),
        8 | 9 => GARBAGE[a as usize % GARBAGE.len()].to_string(),
        10 => ["", " ", "\t "][a as usize % 3].to_string(),
        11 => TOOLS.to_string(),
        12 => r#"{"tools":null}"#.to_string(),
        13 => {
            let tools = &TOOLS[9..TOOLS.len() - 1];
            format!(r#"{{{names},"success":{success},"steps":[{steps}],"tools":{tools}}}"#)
        }
        // "tools" inside a text: read in its turn, like a tools line.
        14 => format!(
            r#"{{{names},"success":false,"steps":[{{"tool":"x","ok":false,"error":"\"tools\" missing"}}]}}"#
        ),
        _ => "\u{1F600} ünïcode".to_string(),
    };
    let mut bytes = text.into_bytes();
    if kind == 255 {
        bytes.push(0xff);
    }
    bytes
}

/// A file: its lines, with a BOM, CRLF or LF per line and an optional last line break; with
/// `bad` malformed lines inserted in the middle (over 1,000 fills the kept diagnostics).
fn file(lines: &[(u8, u32, bool)], bom: bool, final_newline: bool, bad: usize) -> Vec<u8> {
    let mut bytes = if bom {
        b"\xEF\xBB\xBF".to_vec()
    } else {
        Vec::new()
    };
    let mut all: Vec<(Vec<u8>, bool)> = lines
        .iter()
        .map(|&(k, a, crlf)| (line(k, a), crlf))
        .collect();
    let at = all.len() / 2;
    all.splice(
        at..at,
        (0..bad).map(|i| (format!("bad {i}").into_bytes(), i % 3 == 0)),
    );
    for (i, (text, crlf)) in all.iter().enumerate() {
        bytes.extend_from_slice(text);
        if i + 1 < all.len() || final_newline {
            bytes.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
        }
    }
    bytes
}

/// Everything the ingest produces, as text: rollouts, names, diagnostics, files, the import
/// summary and the converted lines.
fn read(files: &[(&str, &[u8])], parallel: ParallelParse, sizes: &[usize]) -> String {
    read_with(files, parallel, &mut |ingest, f, bytes, converted| {
        let mut at = 0;
        for size in sizes.iter().cycle() {
            if at >= bytes.len() {
                break;
            }
            let end = at.saturating_add(*size).min(bytes.len());
            ingest.push(f, &bytes[at..end]);
            at = end;
            converted.extend(ingest.drain_converted());
        }
    })
}

/// A file's bytes handed to the ingest, the lines converted so far collected after each push.
type Push<'a> = dyn FnMut(&mut Ingest, FileId, &[u8], &mut Vec<String>) + 'a;

/// [`read`] with each file's bytes handed over by `push`.
fn read_with(files: &[(&str, &[u8])], parallel: ParallelParse, push: &mut Push<'_>) -> String {
    let mut ingest = Ingest::converting();
    ingest.set_parallel_parse(parallel);
    let mut converted = Vec::new();
    for (name, bytes) in files {
        let f = ingest.begin_file(name);
        push(&mut ingest, f, bytes, &mut converted);
        ingest.end_file(f);
    }
    let (corpus, summary) = ingest.finish_with_summary();
    let names = |i: &prefix_exec::rollout::Interner| -> Vec<String> {
        (0..i.len() as u32)
            .map(|id| i.get(id).to_string())
            .collect()
    };
    format!(
        "{:#?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:#?}\n{:#?}\n{}\n{:#?}\n{:?}\n{:?}\n{:#?}",
        corpus.rollouts,
        names(&corpus.datasets),
        names(&corpus.models),
        names(&corpus.methods),
        names(&corpus.tasks),
        names(&corpus.texts),
        corpus.diagnostics,
        corpus.files,
        corpus.diagnostics_total,
        summary.files,
        summary.first_failure_sources,
        corpus.success_rules,
        converted,
    )
}

/// How the browser's split hands a file over: slices of `piece` bytes, each pushed (in chunks
/// of `sizes`) with the readings of its own lines, read from `a - 1..b` and passed through their
/// encoding. `shift` hands each slice the readings of the slice `shift` places later instead (so
/// readings arrive for lines not pushed yet, or already pushed), testing that only matching
/// readings are taken. Returns the result and how many readings were taken.
fn read_sliced(
    files: &[(&str, &[u8])],
    piece: usize,
    sizes: &[usize],
    shift: usize,
) -> (String, usize) {
    let mut taken = 0;
    let text = read_with(
        files,
        ParallelParse::OFF,
        &mut |ingest, f, bytes, converted| {
            let starts: Vec<usize> = (0..bytes.len()).step_by(piece.max(1)).collect();
            for (k, &a) in starts.iter().enumerate() {
                let b = (a + piece).min(bytes.len());
                let (ra, rb) = match starts.get(k + shift) {
                    Some(&ra) => (ra, (ra + piece).min(bytes.len())),
                    None => (a, b),
                };
                let from = ra.saturating_sub(1);
                let encoded = prepare_slice(&bytes[from..rb], from as u64).encode();
                let mut lines = PreparedLines::decode(&encoded).expect("decodes");
                let held = lines.len();
                let mut at = a;
                for size in sizes.iter().cycle() {
                    if at >= b {
                        break;
                    }
                    let end = at.saturating_add(*size).min(b);
                    ingest.push_prepared(f, &bytes[at..end], &mut lines);
                    at = end;
                    converted.extend(ingest.drain_converted());
                }
                taken += held - lines.len();
            }
        },
    );
    (text, taken)
}

fn forced(min_chunk: usize, group: usize) -> ParallelParse {
    ParallelParse {
        min_chunk,
        group: Some(group),
        forced: true,
    }
}

/// A file of every kind of line, twice over, with CRLF on every third line.
fn mixed() -> Vec<u8> {
    let lines: Vec<(u8, u32, bool)> = (0..34u32)
        .map(|i| ((i % 17) as u8, i.wrapping_mul(2_654_435_761), i % 3 == 0))
        .chain([(255, 7, false), (0, 3, true)])
        .collect();
    file(&lines, true, false, 3)
}

#[test]
fn every_group_size_gives_the_same_corpus() {
    let bytes = mixed();
    let whole = [("runs.jsonl", &bytes[..])];
    let reference = read(&whole, ParallelParse::OFF, &[usize::MAX]);
    assert!(
        reference.contains("line: Some("),
        "the file has diagnostics"
    );
    for group in 1..=bytes.len() + 1 {
        let got = read(&whole, forced(0, group), &[usize::MAX]);
        assert!(got == reference, "group size {group}");
    }
    // In chunks, split only where a chunk is long enough.
    for (size, min_chunk) in [(1, 0), (7, 0), (64, 32), (300, 100), (1000, 0)] {
        let got = read(&whole, forced(min_chunk, 40), &[size]);
        assert!(got == reference, "chunks of {size} split from {min_chunk}");
    }
}

#[test]
fn the_default_split_reads_the_same_corpus() {
    let bytes = mixed().repeat(40);
    let whole = [("runs.jsonl", &bytes[..])];
    let reference = read(&whole, ParallelParse::OFF, &[usize::MAX]);
    let parallel = ParallelParse {
        min_chunk: 0,
        ..ParallelParse::default()
    };
    assert!(read(&whole, parallel, &[usize::MAX]) == reference);
    assert!(read(&whole, parallel, &[4096]) == reference);
}

#[test]
fn every_slice_size_gives_the_same_corpus() {
    // Over the 4 KiB a file's format is told from: the lines before are read at detection.
    let bytes = mixed().repeat(3);
    assert!(bytes.len() > 8192);
    let whole = [("runs.jsonl", &bytes[..])];
    let reference = read(&whole, ParallelParse::OFF, &[usize::MAX]);
    let mut taken = 0;
    let pieces = (1..300).chain((300..=bytes.len() + 1).step_by(97));
    for piece in pieces.chain([bytes.len(), bytes.len() + 1]) {
        for shift in [0, 1] {
            let (got, n) = read_sliced(&whole, piece, &[usize::MAX], shift);
            assert!(got == reference, "slices of {piece}, shifted by {shift}");
            taken += n;
        }
    }
    assert!(taken > 0, "readings were taken");
    // The readings of whole slices are taken, all but the lines cut by slice boundaries.
    let (_, n) = read_sliced(&whole, bytes.len() / 3, &[usize::MAX], 0);
    assert!(n >= 10, "{n} readings taken");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Both splits, natively by groups of lines and in the browser by slices of the file, read
    /// the corpus one thread reads.
    #[test]
    fn parallel_parse_reads_the_same_corpus(
        lines in prop::collection::vec((any::<u8>(), any::<u32>(), any::<bool>()), 0..60),
        bom in any::<bool>(),
        final_newline in any::<bool>(),
        many_bad in prop::sample::select(vec![0usize, 0, 2, 1_001, 1_010]),
        repeated in any::<bool>(),
        sizes in prop::collection::vec(1..400usize, 1..6),
        min_chunk in 0..200usize,
        group in 1..600usize,
        piece in 1..3_000usize,
        shift in prop::sample::select(vec![0usize, 0, 0, 1, 2]),
    ) {
        let bytes = file(&lines, bom, final_newline, many_bad);
        let mut files = vec![("a/runs.jsonl", &bytes[..])];
        if repeated {
            files.push(("b/runs.jsonl", &bytes[..]));
        }
        let reference = read(&files, ParallelParse::OFF, &[usize::MAX]);
        let got = read(&files, forced(min_chunk, group), &sizes);
        prop_assert!(got == reference, "sizes {:?}, min_chunk {}, group {}", sizes, min_chunk, group);
        // Every group size on the whole file at once.
        let got = read(&files, forced(0, group), &[usize::MAX]);
        prop_assert!(got == reference, "group {}", group);
        let (got, _) = read_sliced(&files, piece, &sizes, shift);
        prop_assert!(got == reference, "sizes {:?}, piece {}, shift {}", sizes, piece, shift);
    }
}
