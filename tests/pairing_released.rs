//! One pairing of calls with replies (`formats::pairing`) for every reader: `convert` of each
//! shared released-runs folder (tau-bench, tau2, BFCL, Inspect, ToolSandbox; never committed
//! here), without the built-in label rules, is byte-identical to what it was before the readers shared it — the SHA-256 and line
//! count recorded in `tests/golden/released-convert.sha256`. Skipped (passing) when the shared
//! folder is absent. The top-level `run` each line has gained since (#27: runs are told apart)
//! is taken out before hashing, so the hashes still prove that nothing else changed.

use std::path::Path;

use prefix_exec::cli::{convert_inputs, Input};
use sha2::{Digest, Sha256};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

#[test]
fn convert_of_every_released_run_is_unchanged() {
    let root = Path::new(SHARED);
    if !root.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let recorded = include_str!("golden/released-convert.sha256");
    let mut checked = 0;
    for line in recorded.lines().filter(|l| !l.starts_with('#')) {
        let (folder, hash, lines, later) = match line.split(' ').collect::<Vec<_>>()[..] {
            [folder, hash, lines] => (folder, hash, lines, None),
            [folder, hash, lines, later] => (folder, hash, lines, Some(later)),
            _ => panic!("bad line {line:?}"),
        };
        // Files added to the shared folder after the hash was recorded are left out: the
        // folder is copied without them.
        let copy = later.map(|later| {
            let dir = std::env::temp_dir()
                .join(format!("prefix-exec-pairing-{}", std::process::id()))
                .join(folder);
            let _ = std::fs::remove_dir_all(&dir);
            copy_without(&root.join(folder), &dir, later);
            dir
        });
        let input = copy.clone().unwrap_or_else(|| root.join(folder));
        let (text, _) =
            convert_inputs(&["--no-builtin-labels".into()], vec![Input::Path(input)]).unwrap();
        if let Some(dir) = copy {
            let _ = std::fs::remove_dir_all(dir);
        }
        let text: String = text.lines().map(|l| without_run(l) + "\n").collect();
        let mut bytes = text.trim_end_matches('\n').to_string().into_bytes();
        // `convert -o FILE` ends the last line.
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        let got: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let n = bytes.iter().filter(|&&b| b == b'\n').count();
        assert_eq!(
            (got.as_str(), n.to_string().as_str()),
            (hash, lines),
            "{folder}"
        );
        checked += 1;
    }
    assert_eq!(checked, 5);
}

/// The line without its top-level `"run":"…"` member (a string; the line's other bytes as
/// they are).
fn without_run(line: &str) -> String {
    let b = line.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && &line[start..=i] == "\"run\"" && b[start - 1] == b',' {
                    // `,"run":"…"`: skip the value string too.
                    let mut j = i + 2;
                    assert_eq!(b[j], b'"', "run is a string");
                    j += 1;
                    while b[j] != b'"' {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    return format!("{}{}", &line[..start - 1], &line[j + 1..]);
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    line.to_string()
}

#[test]
fn without_run_takes_out_the_top_level_run_only() {
    assert_eq!(
        without_run(r#"{"a":{"run":"x"},"steps":[],"run":"p/q \"r\".json","meta":{"run":"t"}}"#),
        r#"{"a":{"run":"x"},"steps":[],"meta":{"run":"t"}}"#
    );
    assert_eq!(without_run(r#"{"tools":[]}"#), r#"{"tools":[]}"#);
}

/// Copies a folder, leaving out the files whose names are in `later` (comma-separated).
fn copy_without(from: &Path, to: &Path, later: &str) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if later.split(',').any(|l| l == name) {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_without(&entry.path(), &to.join(&name), later);
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}
