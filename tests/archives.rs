//! Archives and compressed files read as the folders they hold (#28): `.zip`, `.tar`,
//! `.tar.gz`, `.tar.zst`, single `.gz`/`.zst` files, archives inside archives, and hostile ones.
//! The archives are built here, from the repository fixture (`tests/fixtures/repo`) and from
//! `../shared/data/released-runs` when it is there (never committed).

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::io::Write;
use std::path::{Path, PathBuf};

use prefix_exec::formats::inspect::archive::build_zip;
use prefix_exec::formats::ImportOptions;
use prefix_exec::ingest::archive::{InOrder, MemberSink};
use prefix_exec::ingest::whole::prepare_encoded;
use prefix_exec::ingest::{Ingest, PreparedFile};
use prefix_exec::rollout::Corpus;
use serde_json::Value;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/repo");
const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every file below `root`, as (path relative to `root`'s parent, bytes), in name order.
fn files_of(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root.parent().unwrap(), &mut out);
    out
}

fn tar_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, name, &bytes[..]).unwrap();
    }
    b.into_inner().unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let entries: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
    build_zip(&entries, 8, None)
}

/// The CLI's report JSON of `paths`.
fn score(paths: &[&Path], extra: &[&str]) -> (Value, String) {
    let out = cli_bin::command()
        .arg("score")
        .args(paths)
        .args(["--bootstrap", "300", "--json", "-", "-q"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// What must be the same for a folder and an archive of it: every number, the names, the runs
/// and the notes (less the archive's note of the members it skipped).
fn reading(r: &Value) -> Value {
    let notes: Vec<&Value> = r["notes"]
        .as_array()
        .map(|n| {
            n.iter()
                .filter(|n| {
                    !n.as_str()
                        .unwrap()
                        .contains("members that are not run data")
                })
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({
        "conditions": r["conditions"],
        "paired": r["paired"],
        "notes": notes,
        "problems": r["problems"].as_array().map_or(0, |p| p.len()),
    })
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn every_kind_of_archive_reads_as_the_folder_it_holds() {
    let top = Path::new(REPO).join("agent_hard_benchmark-face722e");
    let files = files_of(&top);
    let dir = scratch("archives-repo");
    let tar = tar_of(&files);
    let archives = [
        write(&dir, "repo.zip", &zip_of(&files)),
        write(&dir, "repo.tar", &tar),
        write(&dir, "repo.tar.gz", &gzip(&tar)),
        write(&dir, "repo.tar.zst", &zstd(&tar)),
        // Names do not decide: a tar.gz named like anything.
        write(&dir, "download (3)", &gzip(&tar)),
    ];
    let (folder, _) = score(&[&top], &[]);
    let want = reading(&folder);
    assert_eq!(want["conditions"].as_array().unwrap().len(), 4);
    for a in &archives {
        let (r, _) = score(&[a], &[]);
        assert_eq!(reading(&r), want, "{}", a.display());
        let note = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n.as_str().unwrap().contains("not run data"));
        assert!(
            note.is_some_and(|n| n
                .as_str()
                .unwrap()
                .contains("5 members that are not run data")),
            "{}: {:?}",
            a.display(),
            r["notes"]
        );
    }
}

/// A zip's members are read in the order the folder's files are, whatever order the zip lists
/// them in: a folder before a sibling whose name extends its name (`a/` before `a-b/`, where a
/// plain string comparison puts `-` before `/`). That order is the report's input list, its
/// rollouts' order and the order of a task's repeats.
#[test]
fn a_zip_is_read_in_its_folders_order() {
    let dir = scratch("archives-order");
    let run = dir.join("r");
    let line = |ok: bool| {
        format!(
            "{{\"dataset\":\"d\",\"task_id\":1,\"model\":\"m\",\"method\":\"x\",\"success\":{ok},\"steps\":[]}}\n"
        )
    };
    for (sub, ok) in [("a", true), ("a-b", false), ("a.c", false), ("a/b", true)] {
        std::fs::create_dir_all(run.join(sub)).unwrap();
        std::fs::write(run.join(sub).join("x.jsonl"), line(ok)).unwrap();
    }
    let mut files = files_of(&run);
    files.reverse();
    let zip = write(&dir, "r.zip", &zip_of(&files));
    let inputs = |r: &Value, strip: &str| -> Vec<String> {
        r["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                i["file"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches(strip)
                    .to_string()
            })
            .collect()
    };
    let (folder, _) = score(&[&run], &[]);
    let (archive, _) = score(&[&zip], &[]);
    let want = inputs(&folder, &format!("{}/", dir.display()));
    assert_eq!(want.len(), 4);
    assert!(want[0].ends_with("r/a/b/x.jsonl"), "{want:?}");
    assert_eq!(inputs(&archive, &format!("{}/", zip.display())), want);
}

#[test]
fn single_compressed_files_and_archives_inside_archives() {
    let dir = scratch("archives-single");
    let jsonl = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/small.jsonl"
    ))
    .unwrap();
    let plain = write(&dir, "small.jsonl", &jsonl);
    let gz = write(&dir, "small.jsonl.gz", &gzip(&jsonl));
    let zst = write(&dir, "small.jsonl.zst", &zstd(&jsonl));
    let (want, _) = score(&[&plain], &[]);
    for p in [&gz, &zst] {
        let (r, _) = score(&[p], &[]);
        assert_eq!(r["conditions"], want["conditions"], "{}", p.display());
        assert_eq!(
            r["inputs"][0]["file"].as_str().unwrap(),
            plain.to_string_lossy(),
            "the member's name drops the ending"
        );
    }
    // A zip holding a tar.gz holding the file: one level of nesting is read.
    let inner = gzip(&tar_of(&[("runs/small.jsonl".to_string(), jsonl.clone())]));
    let outer = write(
        &dir,
        "outer.zip",
        &zip_of(&[("inner.tar.gz".to_string(), inner.clone())]),
    );
    let (r, _) = score(&[&outer], &[]);
    assert_eq!(r["conditions"], want["conditions"]);
    // Two levels: said, not read.
    let twice = zip_of(&[("outer.zip".to_string(), std::fs::read(&outer).unwrap())]);
    let twice = write(
        &dir,
        "twice.tar",
        &tar_of(&[("deep.zip".to_string(), twice)]),
    );
    let corpus = read(&[&twice]);
    assert!(corpus.rollouts.is_empty());
    assert!(
        corpus
            .diagnostics
            .iter()
            .any(|d| d.message.contains("inside an archive inside an archive")),
        "{:?}",
        corpus.diagnostics
    );
}

/// Reads paths as the CLI does, into a corpus.
fn read(paths: &[&Path]) -> Corpus {
    let mut ingest = Ingest::new();
    let options = ImportOptions::default();
    for p in paths {
        let mut f = std::fs::File::open(p).unwrap();
        assert!(ingest.read_container(&p.to_string_lossy(), &options, &mut f, &mut |_| {}));
    }
    ingest.finish()
}

#[test]
fn an_inspect_log_stays_a_log_and_is_read_inside_an_archive() {
    let eval =
        Path::new(SHARED).join("inspect/METR+inspect-action/tests/core/eval_logs/small.eval");
    let eval = if eval.is_file() {
        eval
    } else {
        // Without the shared data: the project's own .eval fixture.
        let mut found = None;
        for (name, _) in
            files_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/inspect"))
        {
            if name.ends_with(".eval") {
                found = Some(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/fixtures/import")
                        .join(name),
                );
                break;
            }
        }
        found.expect("an .eval fixture")
    };
    let mut f = std::fs::File::open(&eval).unwrap();
    let mut ingest = Ingest::new();
    assert!(
        !ingest.read_container("log.eval", &ImportOptions::default(), &mut f, &mut |_| {}),
        "an Inspect log is not a container"
    );
    let dir = scratch("archives-eval");
    let bytes = std::fs::read(&eval).unwrap();
    let (want, _) = score(&[&eval], &[]);
    let tgz = write(
        &dir,
        "logs.tar.gz",
        &gzip(&tar_of(&[("logs/x.eval".to_string(), bytes.clone())])),
    );
    let (r, _) = score(&[&tgz], &[]);
    assert_eq!(r["conditions"], want["conditions"]);
    // A folder holding the log reads it as the archive does: the folder rule takes `.eval`
    // names as reading an archive's members does (it once skipped them in folders alone).
    let folder = dir.join("logs");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("x.eval"), &bytes).unwrap();
    std::fs::write(folder.join("notes.txt"), b"not run data").unwrap();
    let (f, stderr) = score(&[&folder], &[]);
    assert_eq!(f["conditions"], want["conditions"]);
    assert!(
        stderr.contains("1 files in the given folders are not .json, .jsonl, Inspect .eval or"),
        "{stderr}"
    );
}

#[test]
fn hostile_archives_lose_nothing_else() {
    let dir = scratch("archives-hostile");
    let good = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/small.jsonl"
    ))
    .unwrap();
    let good_n = read_bytes("good.jsonl", &good).rollouts.len();
    assert!(good_n > 0);

    // A zip bomb member (100 MiB of zeros declared, a few KiB compressed): refused by name, the
    // other member read.
    let zeros = vec![0u8; 100 << 20];
    let bomb = zip_of(&[
        ("a/bomb.jsonl".to_string(), zeros.clone()),
        ("b/good.jsonl".to_string(), good.clone()),
    ]);
    let c = read(&[&write(&dir, "bomb.zip", &bomb)]);
    assert_eq!(c.rollouts.len(), good_n);
    assert!(
        c.diagnostics
            .iter()
            .any(|d| d.file.ends_with("a/bomb.jsonl") && d.message.contains("decompression bomb")),
        "{:?}",
        c.diagnostics
    );

    // A gzip stream that inflates past the ratio: cut with a message naming the member; the
    // member before it was read.
    let tgz = gzip(&tar_of(&[
        ("good.jsonl".to_string(), good.clone()),
        ("bomb.jsonl".to_string(), zeros),
    ]));
    let c = read(&[&write(&dir, "bomb.tar.gz", &tgz)]);
    assert_eq!(c.rollouts.len(), good_n);
    assert!(
        c.diagnostics
            .iter()
            .any(|d| d.file.ends_with("bomb.jsonl") && d.message.contains("decompression bomb")),
        "{:?}",
        c.diagnostics
    );

    // A truncated tar.gz: the members before the cut are read, then a clear error.
    // (The second member is large and varied, so the cut falls inside it.)
    let filler: String = (0..20_000u64)
        .map(|i| {
            let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7;
            format!("{{\"dataset\":\"f\",\"task_id\":\"{x:x}\",\"model\":\"m\",\"method\":\"x\",\"success\":true,\"steps\":[]}}\n")
        })
        .collect();
    let tar = tar_of(&[
        ("1.jsonl".to_string(), good.clone()),
        ("2.jsonl".to_string(), filler.into_bytes()),
        ("3.jsonl".to_string(), good.clone()),
    ]);
    let full = gzip(&tar);
    let cut = &full[..full.len() * 9 / 10];
    let c = read(&[&write(&dir, "cut.tar.gz", cut)]);
    assert!(c.rollouts.len() >= good_n, "the first member was read");
    assert!(
        c.diagnostics.iter().any(|d| d.message.contains("cut")),
        "{:?}",
        c.diagnostics
    );

    // A corrupt zip member (its bytes changed, its CRC-32 not): that member rejected alone.
    let mut z = zip_of(&[
        ("1.jsonl".to_string(), good.clone()),
        ("2.jsonl".to_string(), good.clone()),
    ]);
    // The first member's data starts after its 30-byte local header and name.
    z[30 + "1.jsonl".len() + 10] ^= 0xff;
    let c = read(&[&write(&dir, "corrupt.zip", &z)]);
    assert_eq!(c.rollouts.len(), good_n);
    assert!(
        c.diagnostics.iter().any(|d| d.file.ends_with("1.jsonl")),
        "{:?}",
        c.diagnostics
    );

    // Links, devices and folders in a tar are ignored; `..` and absolute paths only name files.
    let mut b = tar::Builder::new(Vec::new());
    for (kind, name) in [
        (tar::EntryType::Symlink, "link.jsonl"),
        (tar::EntryType::Char, "dev.jsonl"),
        (tar::EntryType::Directory, "dir.jsonl"),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(0);
        h.set_path(name).unwrap();
        if kind == tar::EntryType::Symlink {
            h.set_link_name("/etc/passwd").unwrap();
        }
        h.set_cksum();
        b.append(&h, &[][..]).unwrap();
    }
    let mut h = tar::Header::new_gnu();
    h.set_size(good.len() as u64);
    h.set_entry_type(tar::EntryType::Regular);
    // The tar crate refuses `..` when building, so the name is written into the header as is.
    h.as_gnu_mut().unwrap().name[..22].copy_from_slice(b"../../../etc/up.jsonl\0");
    h.set_cksum();
    b.append(&h, &good[..]).unwrap();
    let c = read(&[&write(&dir, "odd.tar", &b.into_inner().unwrap())]);
    assert_eq!(c.rollouts.len(), good_n);
    let names: Vec<&str> = c.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].ends_with("odd.tar/etc/up.jsonl"), "{names:?}");

    // 100,000 empty members: read, each an empty file, nothing else.
    let empties: Vec<(String, Vec<u8>)> = (0..100_000)
        .map(|i| (format!("e/{i}.jsonl"), Vec::new()))
        .collect();
    let c = read(&[&write(&dir, "empties.tar.gz", &gzip(&tar_of(&empties)))]);
    assert_eq!(c.files.len(), 100_000);
    assert!(c.rollouts.is_empty());
    assert_eq!(
        c.problems.len(),
        1,
        "one kind of problem: {:?}",
        c.problems.first()
    );
}

fn read_bytes(name: &str, bytes: &[u8]) -> Corpus {
    prefix_exec::ingest::read_files([(name, bytes)])
}

#[test]
fn released_runs_as_archives_read_as_their_folders() {
    let root = Path::new(SHARED);
    if !root.is_dir() {
        println!("skipped: no {SHARED}");
        return;
    }
    let dir = scratch("archives-released");
    for folder in [
        "tau-bench",
        "toolsandbox/agent_anthropic",
        "bfcl",
        "inspect",
    ] {
        let path = root.join(folder);
        let files = files_of(&path);
        let tar = tar_of(&files);
        let stem = folder.replace('/', "_");
        let (want, _) = score(&[&path], &[]);
        for (name, bytes) in [
            (format!("{stem}.zip"), zip_of(&files)),
            (format!("{stem}.tar.gz"), gzip(&tar)),
            (format!("{stem}.tar.zst"), zstd(&tar)),
        ] {
            let a = write(&dir, &name, &bytes);
            let (r, _) = score(&[&a], &[]);
            assert_eq!(reading(&r), reading(&want), "{name}");
        }
    }
    // A converted run as a .jsonl.gz.
    let out = dir.join("tau.jsonl");
    let o = cli_bin::command()
        .args(["convert"])
        .arg(root.join("tau-bench/gpt-4o-airline.json"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    let gz = write(&dir, "tau.jsonl.gz", &gzip(&std::fs::read(&out).unwrap()));
    let (a, _) = score(&[&out], &[]);
    let (b, _) = score(&[&gz], &[]);
    assert_eq!(a["conditions"], b["conditions"]);
}

/// Natively, an archive's small members are prepared on the thread pool in batches: the report
/// is byte-identical on one thread and on several.
#[test]
fn archives_read_the_same_on_any_thread_count() {
    let top = Path::new(REPO).join("agent_hard_benchmark-face722e");
    // Several copies under other names (more members than one batch), one corrupt member.
    let mut files = Vec::new();
    for copy in 0..12 {
        for (name, bytes) in files_of(&top) {
            let mut bytes = bytes;
            bytes.extend(std::iter::repeat_n(b'\n', copy));
            files.push((format!("c{copy:02}/{name}"), bytes));
        }
    }
    let tar = tar_of(&files);
    let dir = scratch("archives-threads");
    let mut zip = zip_of(&files);
    let at = zip.len() / 2;
    zip[at] ^= 0x5a;
    for a in [
        write(&dir, "many.tar.gz", &gzip(&tar)),
        write(&dir, "many.zip", &zip),
    ] {
        let run = |threads: &str| {
            cli_bin::command()
                .arg("score")
                .arg(&a)
                .args([
                    "--bootstrap",
                    "200",
                    "--json",
                    "-",
                    "-q",
                    "--threads",
                    threads,
                ])
                .output()
                .unwrap()
                .stdout
        };
        let one = run("1");
        assert!(!one.is_empty());
        assert_eq!(one, run("2"), "{}", a.display());
        assert_eq!(one, run("3"), "{}", a.display());
    }
}

/// Every rollout read from an archive can be re-read from it (the rollout viewer): its member
/// found again by name gives the steps the extracted folder gives.
#[test]
fn members_are_found_again_for_the_viewer() {
    use prefix_exec::browse::parse_steps;
    use prefix_exec::ingest::members::read_member;
    let top = Path::new(REPO).join("agent_hard_benchmark-face722e");
    let files = files_of(&top);
    let dir = scratch("archives-viewer");
    let tar = tar_of(&files);
    let nested = zip_of(&[("inner.tar.gz".to_string(), gzip(&tar))]);
    let small = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/small.jsonl"
    ))
    .unwrap();
    for (name, bytes) in [
        ("repo.zip", zip_of(&files)),
        ("repo.tar.gz", gzip(&tar)),
        ("repo.tar.zst", zstd(&tar)),
        ("nested.zip", nested),
        ("small.jsonl.gz", gzip(&small)),
    ] {
        let path = write(&dir, name, &bytes);
        let mut ingest = Ingest::new();
        let mut f = std::fs::File::open(&path).unwrap();
        let archive = path.to_string_lossy().into_owned();
        assert!(ingest.read_container(&archive, &ImportOptions::default(), &mut f, &mut |_| {}));
        let (corpus, summary) = ingest.finish_with_summary();
        assert!(!corpus.rollouts.is_empty(), "{name}");
        for (i, r) in corpus.rollouts.iter().enumerate() {
            let file = &corpus.files[r.source.file as usize];
            assert_eq!(file.archive.as_deref(), Some(archive.as_str()));
            let member = read_member(&mut f, &archive, &file.name)
                .unwrap_or_else(|e| panic!("{name}: {}: {e}", file.name));
            let at = r.source.offset as usize;
            let line = summary
                .rollout_line(&corpus, i, &member[at..at + r.source.len as usize])
                .unwrap();
            let steps = parse_steps(&line).unwrap();
            assert_eq!(
                steps.len() as u32,
                if r.no_tool { 0 } else { r.horizon },
                "{name}: {}",
                file.name
            );
        }
    }
}

/// Members read back many in turn ([`Members`]: a search, the filter's metadata) are the bytes
/// they were packed from — in the order they were read, backwards, and shuffled (a walk of a tar
/// stream that starts again), an archive inside an archive included — as is one member found
/// alone ([`read_member`]).
#[test]
fn members_read_in_turn_are_the_bytes_they_were_packed_from() {
    use prefix_exec::ingest::members::read_member;
    use prefix_exec::ingest::members::Members;
    let top = Path::new(REPO).join("agent_hard_benchmark-face722e");
    let files = files_of(&top);
    let dir = scratch("archives-members");
    let tar = tar_of(&files);
    let small = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/small.jsonl"
    ))
    .unwrap();
    let mut outer = files.clone();
    outer.truncate(3);
    outer.push(("inner.tar.gz".to_string(), gzip(&tar)));
    outer.push(("inner.zip".to_string(), zip_of(&files)));
    for (name, bytes) in [
        ("repo.zip", zip_of(&files)),
        ("repo.tar", tar.clone()),
        ("repo.tar.gz", gzip(&tar)),
        ("repo.tar.zst", zstd(&tar)),
        ("nested.zip", zip_of(&outer)),
        ("nested.tar.gz", gzip(&tar_of(&outer))),
        ("zip.gz", gzip(&zip_of(&files))),
        ("small.jsonl.gz", gzip(&small)),
    ] {
        let path = write(&dir, name, &bytes);
        let archive = path.to_string_lossy().into_owned();
        let mut ingest = Ingest::new();
        let mut f = std::fs::File::open(&path).unwrap();
        assert!(ingest.read_container(&archive, &ImportOptions::default(), &mut f, &mut |_| {}));
        let corpus = ingest.finish();
        let names: Vec<String> = corpus.files.iter().map(|f| f.name.clone()).collect();
        assert!(
            names.len() > 1 || name == "small.jsonl.gz",
            "{name}: {names:?}"
        );
        // What each member holds: the file it was packed from (the longest path its name
        // ends with), found one at a time too.
        let once: Vec<Vec<u8>> = names
            .iter()
            .map(|m| {
                let packed = files
                    .iter()
                    .filter(|(p, _)| m.ends_with(&format!("/{p}")))
                    .max_by_key(|(p, _)| p.len())
                    .map_or(&small, |(_, b)| b);
                let found =
                    read_member(&mut f, &archive, m).unwrap_or_else(|e| panic!("{name}: {m}: {e}"));
                assert!(&found == packed, "{name}: {m}");
                found
            })
            .collect();
        let mut shuffled: Vec<usize> = (0..names.len()).collect();
        // A fixed permutation: every 7th, then the rest backwards.
        shuffled.sort_by_key(|&i| (i % 7 != 0, std::cmp::Reverse(i)));
        let orders = [
            (0..names.len()).collect::<Vec<_>>(),
            (0..names.len()).rev().collect(),
            shuffled,
        ];
        for (o, order) in orders.into_iter().enumerate() {
            let mut members =
                Members::open(Box::new(std::fs::File::open(&path).unwrap()), &archive)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            for &i in &order {
                let got = members
                    .read(&names[i])
                    .unwrap_or_else(|e| panic!("{name}: {}: {e}", names[i]));
                assert!(got == once[i], "{name}: {}", names[i]);
            }
            if o == 0 && name.contains(".tar") {
                // In the stream's order, one walk: nothing is decompressed twice.
                assert_eq!(members.walks(), 1, "{name}");
            }
            let missing = format!("{archive}/no/such.json");
            assert!(members.read(&missing).is_err(), "{name}");
            // The walk still reads after a miss.
            assert!(members.read(&names[0]).unwrap() == once[0], "{name}");
        }
    }
}

/// A zip read member by member (the browser's way: members inflated and prepared elsewhere
/// by `inflate_member` and `prepare_encoded`, handed to `zip_step` in turn, some left to the
/// ingest) gives the corpus
/// the zip read whole gives, corrupt, bomb, nested and non-run members included.
#[test]
fn a_zip_read_step_by_step_reads_as_the_zip_read_whole() {
    use prefix_exec::ingest::archive::{inflate_member, Inflated};
    let top = Path::new(REPO).join("agent_hard_benchmark-face722e");
    let mut files = Vec::new();
    for copy in 0..3 {
        for (name, bytes) in files_of(&top) {
            files.push((format!("c{copy}/{name}"), bytes));
        }
    }
    let inner: Vec<(String, Vec<u8>)> = files_of(&top)
        .into_iter()
        .map(|(n, b)| (format!("inner/{n}"), b))
        .collect();
    files.push(("nested.tar.gz".to_string(), gzip(&tar_of(&inner))));
    files.push(("README.md".to_string(), b"# runs\n".to_vec()));
    let mut zip = zip_of(&files);
    let at = zip.len() / 3;
    zip[at] ^= 0x5a;
    let options = ImportOptions::default();
    let text = |c: &Corpus| {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}",
            c.rollouts, c.diagnostics, c.notes, c.files
        )
    };
    let whole = {
        let mut ingest = Ingest::new();
        assert!(ingest.read_container("runs.zip", &options, &mut &zip[..], &mut |_| {}));
        ingest.finish()
    };
    assert!(whole.rollouts.len() > 3, "the members were read");
    assert!(!whole.diagnostics.is_empty(), "the corrupt member is said");
    let ways: [(&str, &dyn Fn(usize) -> bool); 3] = [
        ("all inflated elsewhere", &|_| true),
        ("none", &|_| false),
        ("every other", &|k| k % 2 == 0),
    ];
    for (way, elsewhere) in ways {
        let mut ingest = Ingest::new();
        let mut src: &[u8] = &zip;
        let mut steps = ingest
            .begin_zip("runs.zip", &options, &mut src)
            .expect("a zip container");
        for k in 0..steps.len() {
            let inflated = steps.ahead(k).filter(|_| elsewhere(k)).map(|r| {
                let mut at = |offset: u64, buf: &mut [u8]| {
                    prefix_exec::formats::RandomAccess::read_at(&mut &zip[..], offset, buf)
                };
                // Prepared there as the pool workers prepare them (every third member not).
                inflate_member(&r, &mut at).map(|bytes| Inflated {
                    prepared: (k % 3 != 1).then(|| prepare_encoded(&bytes)).flatten(),
                    bytes,
                })
            });
            ingest.zip_step(&mut steps, &mut src, inflated, &mut |_| {});
        }
        ingest.end_zip(steps, &mut src);
        assert_eq!(text(&ingest.finish()), text(&whole), "{way}");
    }
    // Not a zip container: nothing read, the caller reads it as usual.
    let log = build_zip(&[("header.json", b"{}")], 8, None);
    assert!(Ingest::new()
        .begin_zip("log.eval", &options, &mut &log[..])
        .is_none());
    let tgz = gzip(&tar_of(&inner));
    assert!(Ingest::new()
        .begin_zip("runs.tar.gz", &options, &mut &tgz[..])
        .is_none());
}

/// A tar whose member's long path is given by a pax record (as GNU tar's `--format=pax`
/// writes it) rather than a GNU long-name entry.
fn pax_tar(path: &str, bytes: &[u8]) -> Vec<u8> {
    let mut record = String::new();
    let body = format!(" path={path}\n");
    let mut len = body.len() + 1;
    while format!("{len}{body}").len() != len {
        len += 1;
    }
    record.push_str(&format!("{len}{body}"));
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_ustar();
    h.set_entry_type(tar::EntryType::XHeader);
    h.set_size(record.len() as u64);
    h.set_path("PaxHeader").unwrap();
    h.set_cksum();
    b.append(&h, record.as_bytes()).unwrap();
    let mut h = tar::Header::new_ustar();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(bytes.len() as u64);
    h.set_path("short.jsonl").unwrap();
    h.set_mode(0o644);
    h.set_cksum();
    b.append(&h, bytes).unwrap();
    b.into_inner().unwrap()
}

/// Members held and pushed later, as the browser's pool sink does (`web::pool::whole`): up to
/// three held, each pushed with its compact preparation (every third without), all at a flush.
#[derive(Default)]
struct Deferred {
    held: std::collections::VecDeque<(String, ImportOptions, Vec<u8>)>,
    pushed: usize,
}

impl Deferred {
    fn land_one(&mut self, ingest: &mut Ingest) {
        if let Some((name, options, bytes)) = self.held.pop_front() {
            self.pushed += 1;
            let encoded = (self.pushed % 3 != 0)
                .then(|| prepare_encoded(&bytes))
                .flatten();
            let file = PreparedFile::with_encoded(bytes, encoded.as_deref());
            ingest.push_whole_file(&name, options, file);
        }
    }
}

impl MemberSink for Deferred {
    fn whole(
        &mut self,
        ingest: &mut Ingest,
        name: String,
        options: &ImportOptions,
        bytes: Vec<u8>,
    ) {
        self.held.push_back((name, options.clone(), bytes));
        while self.held.len() > 3 {
            self.land_one(ingest);
        }
    }

    fn flush(&mut self, ingest: &mut Ingest) {
        while !self.held.is_empty() {
            self.land_one(ingest);
        }
    }
}

/// What a decoder elsewhere (the browser's own) gives of `bytes`: every byte it decoded
/// before it stopped, and whether it failed.
fn decoded_elsewhere(bytes: &[u8]) -> (Vec<u8>, Option<String>) {
    use std::io::Read;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let mut decoder: Box<dyn Read> = if bytes.starts_with(b"\x1f\x8b") {
        Box::new(flate2::read::MultiGzDecoder::new(bytes))
    } else {
        Box::new(bytes)
    };
    loop {
        match decoder.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

#[test]
fn a_stream_decoded_elsewhere_in_pieces_reads_as_the_stream_read_here() {
    use prefix_exec::ingest::archive::{Container, READ};
    let top = Path::new(REPO).join("agent_hard_benchmark-face722e");
    let good = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/small.jsonl"
    ))
    .unwrap();
    let mut files = files_of(&top);
    let long = format!("{}/deep.jsonl", "a-very-long-folder-name".repeat(6));
    files.push((long, good.clone()));
    let big: String = (0..30_000u64)
        .map(|i| {
            let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 9;
            format!("{{\"dataset\":\"f\",\"task_id\":\"{x:x}\",\"model\":\"m\",\"method\":\"x\",\"success\":{},\"steps\":[]}}\n", i % 3 == 0)
        })
        .collect();
    files.push(("big/streamed.jsonl".to_string(), big.into_bytes()));
    files.push(("inner.zip".to_string(), zip_of(&files_of(&top))));
    files.push(("notes.txt".to_string(), b"not run data".to_vec()));
    let tar = tar_of(&files);
    let tgz = gzip(&tar);
    let mut flipped = tgz.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x55;
    let two_members = [gzip(&tar[..tar.len() / 2]), gzip(&tar[tar.len() / 2..])].concat();
    let with_junk = [tgz.clone(), b"junk after the stream".to_vec()].concat();
    let pax = pax_tar(&format!("{}/pax.jsonl", "p".repeat(150)), &good);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("runs.tar.gz", tgz.clone()),
        ("runs.tar", tar.clone()),
        ("cut.tar.gz", tgz[..tgz.len() * 6 / 10].to_vec()),
        ("cut-late.tar.gz", tgz[..tgz.len() - 9].to_vec()),
        ("flipped.tar.gz", flipped),
        ("two.tar.gz", two_members),
        ("junk.tar.gz", with_junk),
        ("cut.tar", tar[..tar.len() / 3 + 100].to_vec()),
        ("pax.tar.gz", gzip(&pax)),
        ("one.jsonl.gz", gzip(&good)),
        ("one-cut.jsonl.gz", gzip(&good)[..200].to_vec()),
        ("zip.gz", gzip(&zip_of(&files_of(&top)))),
        (
            "bomb.tar.gz",
            gzip(&tar_of(&[("z.jsonl".to_string(), vec![b' '; 100 << 20])])),
        ),
    ];
    let options = ImportOptions::default();
    let text = |c: &Corpus| {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}",
            c.rollouts, c.diagnostics, c.notes, c.files
        )
    };
    for (name, bytes) in &cases {
        let here = {
            let mut ingest = Ingest::new();
            assert!(ingest.read_container(name, &options, &mut &bytes[..], &mut |_| {}));
            ingest.finish()
        };
        let kind = Container::of(&bytes[..512.min(bytes.len())]).unwrap();
        let (decoded, error) = decoded_elsewhere(bytes);
        for (piece, deferred) in [
            (1000, false),
            (65_536, false),
            (1 << 20, false),
            (1000, true),
        ] {
            let mut sink: Box<dyn MemberSink> = match deferred {
                false => Box::new(InOrder),
                true => Box::new(Deferred::default()),
            };
            let sink = sink.as_mut();
            let mut ingest = Ingest::new();
            let mut steps = ingest.begin_stream(name, &options, kind, bytes.len() as u64);
            // The browser's way: the last READ bytes held back until the decoder ends well.
            let handed = match error {
                Some(_) => decoded.len().saturating_sub(READ),
                None => decoded.len(),
            };
            for chunk in decoded[..handed].chunks(piece) {
                if steps.done() {
                    break;
                }
                ingest.stream_step(&mut steps, chunk, 0, sink, &mut |_| {});
            }
            let error = match &error {
                Some(_) => {
                    sink.flush(&mut ingest);
                    let (src, skip) = (&mut &bytes[..], handed as u64);
                    ingest.stream_from(&mut steps, src, skip, &mut InOrder, &mut |_| {})
                }
                None => None,
            };
            ingest.end_stream(steps, error, sink, &mut |_| {});
            assert_eq!(
                text(&ingest.finish()),
                text(&here),
                "{name}, pieces of {piece}, deferred: {deferred}"
            );
        }
        if *name == "pax.tar.gz" {
            assert!(
                here.files.iter().any(|f| f.name.ends_with("/pax.jsonl")),
                "{:?}",
                here.files
            );
        }
        if name.starts_with("runs") {
            let damage = |d: &&prefix_exec::rollout::Diagnostic| {
                d.message.contains("cut short") || d.message.contains("was cut")
            };
            assert!(!here.diagnostics.iter().any(|d| damage(&d)), "{name}");
            assert!(here.files.iter().any(|f| f.name.ends_with("/deep.jsonl")));
        }
        if name.contains("cut") || *name == "bomb.tar.gz" {
            assert!(
                here.diagnostics.iter().any(|d| d.file.starts_with(name)
                    && ["cut", "damaged", "bomb", "cannot be read"]
                        .iter()
                        .any(|w| d.message.contains(w))),
                "{name} is said to be damaged: {:?}",
                here.diagnostics
                    .iter()
                    .filter(|d| d.file.starts_with(name) && !d.message.contains("same bytes"))
                    .map(|d| (&d.file, &d.message))
                    .collect::<Vec<_>>()
            );
        }
    }
}
