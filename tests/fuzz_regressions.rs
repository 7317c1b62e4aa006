//! Every input the fuzzers once failed on (`tests/fuzz_regressions/<target>-<hash>`), replayed
//! through the fuzz harness's own checks (`fuzz/fuzz_targets/common`), so each fixed bug stays
//! fixed under the normal test command. `FUZZ_CORPUS=fuzz/corpus` also replays the corpora the
//! fuzzers grew (`bash scripts/fuzz.sh`), target by target (an ignored test: run it with
//! `--ignored`).

#[path = "../fuzz/fuzz_targets/common/mod.rs"]
mod harness;

use std::path::Path;

fn check(target: &str) -> fn(&[u8]) {
    match target {
        "canonical" => harness::check_canonical,
        "tau_bench" => harness::check_tau_bench,
        "tau2" => harness::check_tau2,
        "bfcl" => harness::check_bfcl,
        "toolsandbox" => harness::check_toolsandbox,
        "schema_check" => harness::check_schema,
        "report" => harness::check_report,
        "inspect" => harness::check_inspect,
        "transcript" => harness::check_transcript,
        "archive_tar" => harness::check_archive_tar,
        "archive_gzip" => harness::check_archive_gzip,
        "archive_zip" => harness::check_archive_zip,
        other => panic!("no fuzz target {other:?}"),
    }
}

#[test]
fn inputs_that_once_failed_pass_every_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (target, _) = name
            .rsplit_once('-')
            .expect("files are named <target>-<hash>");
        let data = std::fs::read(&path).unwrap();
        check(target)(&data);
        // Every end-to-end check holds for every input, whatever target found it.
        harness::check_report(&data);
        n += 1;
    }
    assert!(n >= 5, "the regression inputs are missing ({n} found)");
}

#[test]
#[ignore = "replays the corpora bash scripts/fuzz.sh grew: FUZZ_CORPUS=fuzz/corpus cargo test --release --test fuzz_regressions -- --ignored"]
fn grown_fuzz_corpora_pass_every_check() {
    let root = std::env::var_os("FUZZ_CORPUS").expect("FUZZ_CORPUS names the corpus folder");
    for target in [
        "canonical",
        "tau_bench",
        "tau2",
        "bfcl",
        "toolsandbox",
        "schema_check",
        "report",
        "inspect",
    ] {
        let Ok(dir) = std::fs::read_dir(Path::new(&root).join(target)) else {
            continue;
        };
        for entry in dir {
            check(target)(&std::fs::read(entry.unwrap().path()).unwrap());
        }
    }
}

/// The Inspect harness on the hand-made fixtures (its fuzz seeds): a `.json` log, a `.eval`
/// archive, a crashed run, and a header + sample pair wrapped in built archives.
#[test]
fn inspect_checks_hold_on_the_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/inspect");
    for name in ["log.json", "log.eval", "crashed.eval"] {
        harness::check_inspect(&std::fs::read(dir.join(name)).unwrap());
    }
    // (serde_json has no NaN; the header's NaN stderr does not matter here.)
    let text = std::fs::read_to_string(dir.join("log.json")).unwrap();
    let log: serde_json::Value = serde_json::from_str(&text.replace("NaN", "null")).unwrap();
    let mut header = log.clone();
    header.as_object_mut().unwrap().remove("samples");
    for sample in log["samples"].as_array().unwrap() {
        let mut data = serde_json::to_vec(&header).unwrap();
        data.extend_from_slice(harness::FILE_SEP);
        data.extend_from_slice(&serde_json::to_vec(sample).unwrap());
        harness::check_inspect(&data);
    }
}

/// The ToolSandbox target's seed (the committed run folder, in the file order the harness names
/// them) passes its checks in every normal test run, before any fuzzing.
#[test]
fn toolsandbox_seed_passes_its_checks() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/fixtures/import/toolsandbox/agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05",
    );
    let parts = [
        "result_summary.json",
        "trajectories/wifi_on_parallel/execution_context.json",
        "trajectories/timestamp_scrambled/conversation.json",
        "trajectories/max_turns_cut/execution_context.json",
        "trajectories/only_conversation/conversation.json",
    ];
    let mut data = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            data.extend_from_slice(harness::FILE_SEP);
        }
        data.extend(std::fs::read(run.join(p)).unwrap());
    }
    harness::check_toolsandbox(&data);
    // Cut anywhere, the files still never panic the reader.
    for cut in (0..data.len()).step_by(997) {
        harness::check_toolsandbox(&data[..cut]);
    }
}

/// The archive harness (tar, gzip and zip framing) on the hand-made fixtures and on bytes that
/// look like each framing's start but are not one.
#[test]
fn archive_checks_hold_on_the_fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for dir in [
        "tests/fixtures/import/canonical",
        "tests/fixtures/import/tau-bench",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            inputs.push(std::fs::read(entry.unwrap().path()).unwrap());
        }
    }
    inputs.push(std::fs::read(root.join("tests/golden/small.jsonl")).unwrap());
    let mut fake_tar = vec![b'x'; 1024];
    fake_tar[257..262].copy_from_slice(b"ustar");
    inputs.extend([
        b"\x1f\x8b\x08\x00garbage".to_vec(),
        b"\x28\xb5\x2f\xfdgarbage".to_vec(),
        b"PK\x03\x04garbage".to_vec(),
        fake_tar,
        Vec::new(),
    ]);
    for data in &inputs {
        harness::check_archive_tar(data);
        harness::check_archive_gzip(data);
        harness::check_archive_zip(data);
    }
}

/// The tar framing's check (`check_archive_tar`: a tar handed over in pieces of any size reads
/// as the tar read whole) on archives built here, so it runs under the normal test command
/// even where no fuzzer ever failed on a tar: GNU and pax long names, links, a cut.
#[test]
fn the_tar_framing_check_holds_on_built_archives() {
    let good = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/small.jsonl"
    ))
    .unwrap();
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in [
        (format!("{}/long.jsonl", "n".repeat(120)), &good[..]),
        ("short.jsonl".to_string(), &good[..200]),
        ("notes.txt".to_string(), &b"not run data"[..]),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, name, bytes).unwrap();
    }
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    h.set_path("link.jsonl").unwrap();
    h.set_link_name("short.jsonl").unwrap();
    h.set_cksum();
    b.append(&h, &[][..]).unwrap();
    let tar = b.into_inner().unwrap();
    harness::check_archive_tar(&tar);
    harness::check_archive_tar(&tar[..tar.len() / 2 + 3]);
    harness::check_archive_tar(&tar[..1100]);
}
