//! Static report sites: the manifest (`report.json`) that `prefix-exec site` writes next to the
//! built app and the data, and that the app reads on start.
//!
//! A site is plain files: the app (`index.html`, its JS and wasm), `data/*.jsonl` (canonical
//! rollouts, converted from any supported format) and `report.json`. The app always recomputes
//! the report from the data in its worker; the precomputed report in the manifest serves only a
//! first display and is checked against the recomputation. Each data file's SHA-256 is recorded
//! and verified before use, so a tampered or truncated file is flagged, never silently scored.

use serde::{Deserialize, Serialize};

use std::io::Write;

use crate::report::{build_report_full, Report, Settings};

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
    /// The first-failure label rules the report was computed with (absent: the built-in ones).
    /// The data holds the labels the rules gave (`convert` writes them in), so this matters for
    /// the failures no rule labelled: with the built-in rules off they stay unlabeled.
    #[serde(default, skip_serializing_if = "is_default_labels")]
    pub labels: crate::label::LabelSettings,
}

fn is_default_labels(l: &crate::label::LabelSettings) -> bool {
    *l == crate::label::LabelSettings::default()
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
    /// Whether a recomputed report agrees with the published one (settings, conditions,
    /// paired comparisons, ranks and cost frontiers — a site published before reports had ranks
    /// or frontiers is compared without them; file names and diagnostics may differ without
    /// changing a number).
    pub fn agrees_with(&self, recomputed: &Report) -> bool {
        let p = &self.precomputed;
        let unranked = p.ranks.is_empty() && p.rank_divergence.is_empty();
        p.settings == recomputed.settings
            && p.conditions == recomputed.conditions
            && p.paired == recomputed.paired
            && (unranked
                || (p.ranks == recomputed.ranks && p.rank_divergence == recomputed.rank_divergence))
            && (p.pareto.is_empty() || p.pareto == recomputed.pareto)
    }
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a site publishes, apart from the app itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Publication {
    /// `(path, bytes)` of each data file.
    pub files: Vec<(String, Vec<u8>)>,
    pub manifest: SiteManifest,
}

impl Publication {
    /// `report.json`'s text.
    pub fn manifest_json(&self) -> String {
        let mut json =
            serde_json::to_string_pretty(&self.manifest).expect("a manifest always serialises");
        json.push('\n');
        json
    }
}

/// What a published site's `index.html` carries in its `<head>`: the app fetches the manifest
/// only when it finds this tag, so a plain load of the app never asks for a `report.json` that
/// is not there (no failing request in the console or the server log).
pub const SITE_MARKER: &str = r#"<meta name="prefix-exec-site" content="report.json">"#;

/// The app's `index.html` marked as a site's ([`SITE_MARKER`] before `</head>`); unchanged when
/// already marked. A page without `</head>` gets the tag at its start (browsers still read it).
pub fn mark_site_index(html: &str) -> String {
    if html.contains(SITE_MARKER) {
        return html.to_string();
    }
    match html.find("</head>") {
        Some(at) => format!("{}{SITE_MARKER}\n{}", &html[..at], &html[at..]),
        None => format!("{SITE_MARKER}\n{html}"),
    }
}

/// The name the site's data file takes (and the report's `inputs[].file`).
pub const DATA_NAME: &str = "rollouts.jsonl";

/// Publishes canonical JSONL `data` (all rollouts of the report): the data file (gzip-compressed
/// when asked), and the manifest with its hash and the report computed from exactly those
/// bytes under the name the app will give them, so the app's recomputation must match it.
#[allow(clippy::too_many_arguments)]
pub fn publish(
    data: &[u8],
    rollouts: u64,
    title: &str,
    description: &str,
    job: &SiteSettings,
    settings: &Settings,
    gzip: bool,
    source_diagnostics_total: u64,
    progress: &mut dyn FnMut(crate::report::Progress),
) -> Publication {
    let options = crate::formats::ImportOptions {
        labels: job.labels.clone(),
        ..Default::default()
    };
    let corpus = crate::ingest::read_files_with([(DATA_NAME, data)], &options);
    let settings = with_data_meta(settings, &corpus, data);
    let report = build_report_full(&corpus, None, &settings, progress);
    let (path, served) = if gzip {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        // Writing to a Vec cannot fail.
        let _ = gz.write_all(data);
        (
            format!("data/{DATA_NAME}.gz"),
            gz.finish().unwrap_or_default(),
        )
    } else {
        (format!("data/{DATA_NAME}"), data.to_vec())
    };
    let mut datasets: Vec<String> = report
        .conditions
        .iter()
        .map(|c| c.dataset.clone())
        .collect();
    datasets.dedup();
    let manifest = SiteManifest {
        schema: SITE_SCHEMA.to_string(),
        title: title.to_string(),
        description: description.to_string(),
        settings: job.clone(),
        data: vec![DataFile {
            path: path.clone(),
            name: DATA_NAME.to_string(),
            bytes: served.len() as u64,
            sha256: sha256_hex(&served),
            gzip,
            rollouts,
        }],
        datasets,
        source_diagnostics_total,
        generated_by: format!("prefix-exec {}", env!("CARGO_PKG_VERSION")),
        precomputed: report,
    };
    Publication {
        files: vec![(path, served)],
        manifest,
    }
}

/// `settings` with its filter handed the metadata its `meta.*` clauses need, read from the
/// canonical lines of `data` that `corpus` was read from (the corpus keeps no metadata).
fn with_data_meta(settings: &Settings, corpus: &crate::rollout::Corpus, data: &[u8]) -> Settings {
    let mut settings = settings.clone();
    if let Some(filter) = settings.filter.take() {
        settings.filter = Some(if filter.meta_keys().is_empty() {
            filter
        } else {
            let meta = corpus
                .rollouts
                .iter()
                .map(|r| {
                    let at = (r.source.offset as usize).min(data.len());
                    let end = (at + r.source.len as usize).min(data.len());
                    // Every key (the filter looks up its own): the same walk as the
                    // worker's, so the worker's wasm links one.
                    crate::filter::all_meta_values(&String::from_utf8_lossy(&data[at..end]))
                })
                .collect();
            filter.with_meta(meta)
        });
    }
    settings
}

/// A zip archive of `(path, bytes)` files — the whole site, for hosts that take an upload.
/// Already-compressed files (wasm is not, but `.gz` data is) are stored; the rest deflated.
pub fn zip_files(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (path, bytes) in files {
        let method = if path.ends_with(".gz") {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        zip.start_file(path.as_str(), options)
            .map_err(|e| format!("{path}: {e}"))?;
        zip.write_all(bytes).map_err(|e| format!("{path}: {e}"))?;
    }
    zip.finish()
        .map(|c| c.into_inner())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_reference() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn site_index_is_marked_once() {
        let html = "<html><head><title>x</title></head><body></body></html>";
        let marked = mark_site_index(html);
        assert_eq!(
            marked,
            format!("<html><head><title>x</title>{SITE_MARKER}\n</head><body></body></html>")
        );
        assert_eq!(mark_site_index(&marked), marked);
        assert!(mark_site_index("<p>").starts_with(SITE_MARKER));
    }

    #[test]
    fn zip_round_trip() {
        let files = vec![
            ("index.html".to_string(), b"<!doctype html>".to_vec()),
            (
                "data/rollouts.jsonl.gz".to_string(),
                vec![0x1f, 0x8b, 1, 2, 3],
            ),
        ];
        let bytes = zip_files(&files).unwrap();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        assert_eq!(archive.len(), 2);
        for (path, content) in &files {
            let mut f = archive.by_name(path).unwrap();
            let mut read = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut read).unwrap();
            assert_eq!(&read, content);
        }
    }
}
