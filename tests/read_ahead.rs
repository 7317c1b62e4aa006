//! Files read whole and prepared ahead on other threads (`ingest::PreparedFile`, the CLI's
//! folder read) give the corpus of the plain path: the same rollouts in the same order, the
//! same diagnostics, repeats, import summary and converted lines — for every format's
//! fixtures and for damaged ToolSandbox files (cut, with trailing data, a byte-order mark,
//! CRLF, odd literals), whichever thread prepared them, whether or not something was
//! pushed for the file before, and whether the preparation came whole or through the compact
//! form the browser's pool workers send (`ingest::whole::prepare_encoded`).

#[path = "support/cli_bin.rs"]
mod cli_bin;

mod import_support;

use import_support::{fixture, fixtures, walk};
use prefix_exec::ingest::whole::prepare_encoded;
use prefix_exec::ingest::{Ingest, PreparedFile};
use rayon::prelude::*;

/// How a file is handed to the ingest.
#[derive(Clone, Copy, Debug)]
enum Way {
    /// Pushed in chunks of this size, then ended.
    Chunks(usize),
    /// Prepared (on the pool) and pushed whole.
    Prepared,
    /// Prepared in the compact form (on the pool), read back and pushed whole.
    Encoded,
    /// Its first byte pushed, then the rest prepared: the preparation is not used.
    Late,
}

/// Everything the ingest produces, as text.
fn read(files: &[(String, Vec<u8>)], way: &(dyn Fn(&[u8]) -> Way + Sync)) -> String {
    let prepared: Vec<Option<PreparedFile>> = files
        .par_iter()
        .map(|(_, bytes)| match way(bytes) {
            Way::Prepared => Some(PreparedFile::new(bytes.clone())),
            Way::Encoded => Some(PreparedFile::with_encoded(
                bytes.clone(),
                prepare_encoded(bytes).as_deref(),
            )),
            Way::Late => Some(PreparedFile::new(bytes[bytes.len().min(1)..].to_vec())),
            Way::Chunks(_) => None,
        })
        .collect();
    let mut ingest = Ingest::converting();
    let mut converted = Vec::new();
    for ((name, bytes), prepared) in files.iter().zip(prepared) {
        let f = ingest.begin_file(name);
        match (way(bytes), prepared) {
            (Way::Chunks(size), _) => {
                for chunk in bytes.chunks(size.max(1)) {
                    ingest.push(f, chunk);
                    converted.extend(ingest.drain_converted());
                }
                ingest.end_file(f);
            }
            (Way::Late, Some(p)) => {
                ingest.push(f, &bytes[..bytes.len().min(1)]);
                ingest.push_prepared_file(f, p);
            }
            (_, p) => ingest.push_prepared_file(f, p.expect("prepared")),
        }
        converted.extend(ingest.drain_converted());
    }
    ingest.end_all();
    converted.extend(ingest.drain_converted());
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

/// A change made to a file's bytes.
type Damage = dyn Fn(&[u8]) -> Vec<u8>;

/// Every fixture of every format, then damaged copies of the ToolSandbox run's files under
/// other run folders, and repeats.
fn files() -> Vec<(String, Vec<u8>)> {
    let base = fixtures();
    let mut files = walk(&base, &base);
    for rel in ["inspect/log.eval", "canonical/tools.jsonl"] {
        files.push(fixture(rel));
    }
    let run = "toolsandbox/agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05";
    let originals: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter(|(name, _)| name.starts_with(run))
        .cloned()
        .collect();
    assert!(originals.len() > 5, "the ToolSandbox fixture run");
    let damages: [(&str, &Damage); 9] = [
        ("cut-half", &|b| b[..b.len() / 2].to_vec()),
        ("cut-end", &|b| b[..b.len().saturating_sub(2)].to_vec()),
        ("trailing", &|b| [b, b"\n}x".as_slice()].concat()),
        ("bom", &|b| [b"\xEF\xBB\xBF".as_slice(), b].concat()),
        ("crlf", &|b| {
            String::from_utf8_lossy(b)
                .replace('\n', "\r\n")
                .into_bytes()
        }),
        // A bare value holding a quote or a bracket: read differently by the document's scan
        // and by a member's.
        ("odd-literal", &|b| {
            let text = String::from_utf8_lossy(b);
            text.replacen('{', "{\"odd\": n\"},", 1).into_bytes()
        }),
        ("odd-literal-2", &|b| {
            let text = String::from_utf8_lossy(b);
            text.replacen('{', "{\"odd\": 1[, ", 1).into_bytes()
        }),
        ("wrong-brackets", &|b| {
            let text = String::from_utf8_lossy(b);
            match text.rfind('}') {
                Some(i) => format!("{}]{}", &text[..i], &text[i + 1..]).into_bytes(),
                None => b.to_vec(),
            }
        }),
        ("empty", &|_| Vec::new()),
    ];
    for (tag, damage) in damages {
        let agent =
            format!("toolsandbox/agent_{tag}/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05");
        for (name, bytes) in &originals {
            // The summary stays whole, so the damaged trajectories join a run.
            let bytes = if name.ends_with("result_summary.json") {
                bytes.clone()
            } else {
                damage(bytes)
            };
            files.push((name.replacen(run, &agent, 1), bytes));
        }
    }
    // Repeats: the same bytes under another name, and the same name twice.
    let again: Vec<(String, Vec<u8>)> = files.iter().step_by(7).cloned().collect();
    for (k, (name, bytes)) in again.into_iter().enumerate() {
        let name = if k % 2 == 0 {
            name
        } else {
            format!("copy/{name}")
        };
        files.push((name, bytes));
    }
    files.push(("binary.json".to_string(), vec![0u8; 5000]));
    files
}

#[test]
fn prepared_files_read_as_pushed_files() {
    let files = files();
    let plain = read(&files, &|_| Way::Chunks(1 << 20));
    assert!(plain.contains("toolsandbox"), "the fixtures were read");
    assert_eq!(read(&files, &|_| Way::Prepared), plain, "prepared");
    assert_eq!(read(&files, &|_| Way::Encoded), plain, "encoded");
    let encoded = files
        .iter()
        .filter(|(_, b)| prepare_encoded(b).is_some())
        .count();
    assert!(
        encoded > 20,
        "only {encoded} files had a compact preparation"
    );
    for size in [1, 7, 4096] {
        assert_eq!(
            read(&files, &|_| Way::Chunks(size)),
            plain,
            "chunks of {size}"
        );
    }
    // The way is chosen by the bytes, so a repeat is read the same way as its original: a file
    // read line by line is told a repeat by a hash that depends on where its chunks ended (the
    // bytes held until its format was told are hashed twice), so a repeat read another way
    // is not told (as before; the CLI reads a file the same way on any number of threads).
    let mixed = |bytes: &[u8]| match bytes.len() % 4 {
        0 => Way::Prepared,
        1 => Way::Chunks(333),
        2 => Way::Encoded,
        _ => Way::Late,
    };
    assert_eq!(read(&files, &mixed), plain, "mixed");
    // On a pool of one thread and of several.
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let got = pool.install(|| read(&files, &|_| Way::Prepared));
        assert_eq!(got, plain, "{threads} threads");
    }
}

/// The CLI reads a folder the same on one thread (file by file) and on several (small files
/// read ahead on the pool).
#[test]
fn the_cli_reads_a_folder_the_same_on_any_number_of_threads() {
    let dir = fixtures().join("toolsandbox");
    let out = std::env::temp_dir().join(format!("prefix-exec-read-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut reports = Vec::new();
    for threads in ["1", "2", "4"] {
        let json = out.join(format!("report-{threads}.json"));
        let status = cli_bin::command()
            .args([
                "score",
                "--bootstrap",
                "200",
                "-q",
                "--threads",
                threads,
                "--json",
            ])
            .arg(&json)
            .arg(&dir)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
        reports.push((std::fs::read(&json).unwrap(), status.stdout, status.stderr));
    }
    std::fs::remove_dir_all(&out).ok();
    assert!(reports.windows(2).all(|w| w[0] == w[1]));
}
