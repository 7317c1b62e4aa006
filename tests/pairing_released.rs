//! One pairing of calls with replies (`formats::pairing`) for every reader: `convert` of each
//! shared released-runs folder (tau-bench, tau2, BFCL, Inspect, ToolSandbox; never committed
//! here), without the built-in label rules, is byte-identical to what it was before the readers shared it — the SHA-256 and line
//! count recorded in `tests/golden/released-convert.sha256`. Skipped (passing) when the shared
//! folder is absent.

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
        let [folder, hash, lines] = line.split(' ').collect::<Vec<_>>()[..] else {
            panic!("bad line {line:?}");
        };
        let (text, _) = convert_inputs(
            &["--no-builtin-labels".into()],
            vec![Input::Path(root.join(folder))],
        )
        .unwrap();
        let mut bytes = text.into_bytes();
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
