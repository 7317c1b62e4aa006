//! Static report sites: the manifest (`report.json`) that `prefix-exec site` writes next to the
//! built app and the data, and that the app reads on start.
//!
//! A site is plain files: the app (`index.html`, its JS and wasm), `data/*.jsonl` (canonical
//! rollouts, converted from any supported format) and `report.json`. The app always recomputes
//! the report from the data in its worker; the precomputed report in the manifest serves only a
//! first display and is checked against the recomputation. Each data file's SHA-256 is recorded
//! and verified before use, so a tampered or truncated file is flagged, never silently scored.

use serde::{Deserialize, Serialize};

use crate::report::Report;

/// The manifest's schema name.
pub const SITE_SCHEMA: &str = "prefix-exec/site/v1";
/// The manifest's file name, at the site's root.
pub const MANIFEST: &str = "report.json";

/// The settings a site was published with (the app's settings form: seed and depth as text).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteSettings {
    pub bootstrap: u32,
    pub seed: String,
    pub level: f64,
    pub max_depth: String,
}

/// One data file of a site.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataFile {
    /// Path relative to the site root, e.g. `data/rollouts.jsonl`.
    pub path: String,
    /// The name the app gives the file (the report's `inputs[].file`).
    pub name: String,
    pub bytes: u64,
    /// Lower-case hex SHA-256 of the file's bytes as served (compressed, when `gzip`).
    pub sha256: String,
    /// Served gzip-compressed; the app decompresses it after checking the hash.
    #[serde(default)]
    pub gzip: bool,
    pub rollouts: u64,
}

/// `report.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteManifest {
    pub schema: String,
    pub title: String,
    /// Plain text; blank lines separate paragraphs. Shown as text, never as HTML.
    pub description: String,
    pub settings: SiteSettings,
    pub data: Vec<DataFile>,
    pub datasets: Vec<String>,
    /// Problems in the original inputs (their bad lines are not in the site's data).
    pub source_diagnostics_total: u64,
    pub generated_by: String,
    /// The report computed when the site was written, from exactly these data files and
    /// settings; the app recomputes it and flags any difference.
    pub precomputed: Report,
}

impl SiteManifest {
    /// Whether a recomputed report agrees with the published one (settings, conditions and
    /// paired comparisons; file names and diagnostics may differ without changing a number).
    pub fn agrees_with(&self, recomputed: &Report) -> bool {
        let p = &self.precomputed;
        p.settings == recomputed.settings
            && p.conditions == recomputed.conditions
            && p.paired == recomputed.paired
    }
}
