//! What the importers found beside the corpus: per-file counts, first-failure sources, and what
//! it takes to re-read a rollout for a viewer.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{draft, readers, FailureSource, Format, ToolSet};
use crate::rollout::{ConditionId, Corpus};

/// What was imported from one file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileImport {
    pub name: String,
    /// The detected format; `None` when nothing was recognised.
    pub format: Option<Format>,
    /// Rollouts added to the corpus from this file.
    pub rollouts: u64,
    /// Rollouts excluded, by termination reason.
    pub excluded: BTreeMap<String, u64>,
    /// BFCL result lines that were inference errors (`traceback`), left out because the file's
    /// options exclude them.
    pub skipped_inference_errors: u64,
    /// BFCL inference errors scored as rollouts that failed before any step.
    #[serde(default)]
    pub inference_errors: u64,
    /// Rollouts whose tool outputs the file does not have (BFCL without `inference_log`): their
    /// steps carry no verdict and count as executed.
    pub without_tool_outputs: u64,
    /// Inspect samples left out (errored, or without a usable score), each reason said in a
    /// file diagnostic.
    pub excluded_samples: u64,
    /// Rollouts whose first failure came from the tool-schema check.
    pub schema_first_failures: u64,
    /// Rollouts whose first failure came from the environment's verdict.
    pub environment_first_failures: u64,
    /// Termination reasons of the imported rollouts (tau2).
    pub termination_reasons: BTreeMap<String, u64>,
    /// Tools whose schemas the steps were checked against (0 when none).
    pub tools: u64,
    /// The file this one was paired with (a BFCL score file, a tau2 results.json).
    pub paired_with: Option<String>,
    /// The earlier file with the same bytes; this one was not read again.
    pub repeats: Option<String>,
    /// Another file of the drop that was read in this one's place (a ToolSandbox
    /// `conversation.json` beside its scenario's `execution_context.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_instead: Option<String>,
    /// Transcripts: where each field (success, task, model, method, dataset) came from.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mapping: BTreeMap<String, String>,
    /// Lines skipped because the paper's protocol does not define them (BFCL's single-turn
    /// categories); one report note names them for every such file.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outside_protocol: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Per-condition counts of first-failure sources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCounts {
    pub condition: ConditionId,
    pub schema_check: u64,
    pub environment: u64,
}

/// What the importers found, beside the corpus.
#[derive(Clone, Debug, Default)]
pub struct ImportSummary {
    /// One entry per input file, in input order.
    pub files: Vec<FileImport>,
    /// For each rollout of the corpus (same index), where its first failure came from; `None`
    /// for a fully executable rollout.
    pub first_failure_sources: Vec<Option<FailureSource>>,
    pub(crate) readback: Vec<Readback>,
    /// Canonical rollouts checked against a file-level `tools` line: that tool set, by rollout
    /// index (a rollout's own `tools` field is in its line).
    pub(crate) line_tools: BTreeMap<usize, Arc<ToolSet>>,
}

/// What it takes to re-read a rollout of a file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Readback {
    pub(crate) format: Option<Format>,
    pub(crate) tools: Option<Arc<ToolSet>>,
    pub(crate) schema_checks: bool,
    /// What the file's reader kept to re-read its rollout (a ToolSandbox scenario's row).
    pub(crate) context: Option<Arc<super::RereadContext>>,
}

impl ImportSummary {
    /// First failures by source, per condition (conditions without any first failure omitted).
    pub fn source_counts(&self, corpus: &Corpus) -> Vec<SourceCounts> {
        let mut counts: BTreeMap<ConditionId, SourceCounts> = BTreeMap::new();
        for (r, s) in corpus.rollouts.iter().zip(&self.first_failure_sources) {
            let Some(s) = s else { continue };
            let c = counts.entry(r.condition).or_insert(SourceCounts {
                condition: r.condition,
                ..SourceCounts::default()
            });
            match s {
                FailureSource::SchemaCheck => c.schema_check += 1,
                FailureSource::Environment => c.environment += 1,
            }
        }
        counts.into_values().collect()
    }

    /// The summary of a filtered corpus ([`crate::filter`]): the per-rollout entries of the
    /// rollouts at `original` (indices into this summary's corpus), in that order; the files
    /// unchanged.
    pub fn restricted(&self, original: &[usize]) -> ImportSummary {
        let position: BTreeMap<usize, usize> = original
            .iter()
            .enumerate()
            .map(|(new, &old)| (old, new))
            .collect();
        ImportSummary {
            files: self.files.clone(),
            first_failure_sources: original
                .iter()
                .map(|&i| self.first_failure_sources.get(i).copied().flatten())
                .collect(),
            readback: self.readback.clone(),
            line_tools: self
                .line_tools
                .iter()
                .filter_map(|(old, tools)| position.get(old).map(|&new| (new, tools.clone())))
                .collect(),
        }
    }

    /// The canonical line of rollout `index`, given the bytes at its [`crate::rollout::Source`]
    /// (a canonical line, a tau-bench element, a tau2 simulation or a BFCL result line). A
    /// viewer re-reads those bytes from the file and hands them here, then shows the steps with
    /// [`crate::browse::parse_steps`]; names and success are the corpus's.
    pub fn rollout_line(
        &self,
        corpus: &Corpus,
        index: usize,
        bytes: &[u8],
    ) -> Result<String, String> {
        let r = corpus.rollouts.get(index).ok_or("no such rollout")?;
        let rb = self
            .readback
            .get(r.source.file as usize)
            .ok_or("the rollout's file is unknown")?;
        let (dataset, model, method) = corpus.condition_names(r.condition);
        let head = |d: &mut draft::Draft| {
            d.dataset = dataset.to_string();
            d.model = model.to_string();
            d.method = method.to_string();
            d.task_id = corpus.task_name(r.task).to_string();
            d.success = r.success;
            // Whether finishing without tools was allowed came from the run's context.
            d.no_tool_ok = r.fully_executable();
        };
        let format = match rb.format {
            None | Some(Format::Canonical) => {
                let line = std::str::from_utf8(bytes)
                    .map_err(|_| "the line is not valid UTF-8".to_string())?;
                if !rb.schema_checks {
                    return Ok(line.to_string());
                }
                return Ok(draft::annotate_canonical(line, self.line_tools.get(&index)));
            }
            Some(format) => format,
        };
        let readers = readers();
        let reader = readers
            .iter()
            .find(|r| r.formats().contains(&format))
            .ok_or("the rollout's format is unknown")?;
        if !reader.holds_rollouts(format) {
            return Err("this file holds no rollouts".to_string());
        }
        let mut d = reader.reread_with(format, bytes, r.success, rb.context.as_deref())?;
        head(&mut d);
        Ok(d.render(rb.tools.as_deref()))
    }
}
