//! Canonical JSONL as a [`FormatReader`]: line by line, with the file's `tools` lines in force,
//! exclusions by termination reason and the per-file name overrides.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{parse_line_ext, parse_line_prepared, CanonicalLine, LineContext, Prepared};
use crate::formats::draft::{unusable_message, Draft};
use crate::formats::schema_check::ToolSet;
use crate::formats::sink::Sink;
use crate::formats::{Format, FormatReader, ImportOptions, Keys, LineShape};
use crate::rollout::{ParsedRollout, Source};

/// Renders an importer's draft and adds it through the canonical parser: the one reading of a
/// rollout, so converting and scoring cannot disagree.
pub(crate) fn emit(
    out: &mut Sink<'_>,
    file: usize,
    draft: &Draft,
    tools: Option<&ToolSet>,
    source: Source,
) {
    emit_line(out, file, draft.render(tools), source);
}

/// Adds an importer's rendered draft (a canonical line) through the canonical parser; for a
/// reader that drops the draft first (a large rollout is then not held twice).
pub(crate) fn emit_line(out: &mut Sink<'_>, file: usize, line: String, source: Source) {
    match parse_line_ext(line.as_bytes(), &mut LineContext::new(false)) {
        Ok(CanonicalLine::Rollout(parsed, extra)) => {
            out.success_rule(&parsed.dataset, extra.success_rule.as_deref());
            out.model_path(&parsed.model, extra.model_path);
            let reason = extra.termination_reason.as_deref();
            let mark = out.add(file, parsed, extra.failure_source, reason, source);
            if out.converting() {
                out.output(file, mark.annotate(line), false);
            }
        }
        Ok(CanonicalLine::Tools(_)) => {}
        Err(e) => out.reject(file, Some(source.line), e.to_string()),
    }
}

/// Keys of a canonical line: a rollout line or a top-level `tools` line.
const CANONICAL_KEYS: [&str; 6] = [
    "dataset",
    "steps",
    "success",
    "no_tool_ok",
    "method",
    "tools",
];

/// The canonical reader: per file, the line context (tools in force, schema checks).
#[derive(Default)]
pub(crate) struct Canonical {
    lines: BTreeMap<usize, LineContext>,
}

impl FormatReader for Canonical {
    fn formats(&self) -> &'static [Format] {
        &[Format::Canonical]
    }

    fn recognise_line(&self, keys: &Keys<'_>) -> Option<LineShape> {
        CANONICAL_KEYS
            .iter()
            .any(|k| keys.contains(k))
            .then_some(LineShape::Lines(Format::Canonical))
    }

    fn line(&mut self, out: &mut Sink<'_>, format: Format, source: Source, bytes: &[u8]) {
        self.prepared_line(out, format, source, bytes, None);
    }

    fn prepared_line(
        &mut self,
        out: &mut Sink<'_>,
        _format: Format,
        source: Source,
        bytes: &[u8],
        prepared: Option<Prepared>,
    ) {
        let file = source.file as usize;
        let schema_checks = out.options(file).schema_checks;
        let ctx = self
            .lines
            .entry(file)
            .or_insert_with(|| LineContext::new(schema_checks));
        match parse_line_prepared(bytes, ctx, prepared) {
            Ok(CanonicalLine::Tools(set)) => {
                let n = set.as_ref().map_or(0, |s| s.len() as u64);
                if let Some(s) = set.as_deref().filter(|s| !s.unusable.is_empty()) {
                    out.warn(file, Some(source.line), unusable_message(s));
                }
                ctx.tools = set;
                out.import(file).tools = n;
                out.summary.readback[file].tools = None;
                if schema_checks {
                    out.output(file, line_text(bytes), true);
                }
            }
            Ok(CanonicalLine::Rollout(mut parsed, extra)) => {
                let options = out.options(file);
                if let Some(reason) = &extra.termination_reason {
                    if options.exclude_termination.iter().any(|r| r == reason) {
                        *out.import(file).excluded.entry(reason.clone()).or_default() += 1;
                        return;
                    }
                }
                if !extra.unusable_tools.is_empty() {
                    let names: Vec<&str> = extra
                        .unusable_tools
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect();
                    out.warn(
                        file,
                        Some(source.line),
                        format!(
                            "the parameter schemas of tools {} are not valid JSON Schema; their \
                             arguments are not checked",
                            names.join(", ")
                        ),
                    );
                }
                let options = out.options(file).clone();
                let overridden = apply_overrides(&mut parsed, &options);
                if let (false, true, Some(tools)) =
                    (extra.has_tools, options.schema_checks, &ctx.tools)
                {
                    let index = out.corpus.rollouts.len();
                    out.summary.line_tools.insert(index, Arc::clone(tools));
                }
                let drop_tools = extra.has_tools && !options.schema_checks;
                let converted = out.converting().then(|| {
                    if overridden || drop_tools {
                        rewrite_line(bytes, &options, drop_tools)
                    } else {
                        line_text(bytes)
                    }
                });
                out.success_rule(&parsed.dataset, extra.success_rule.as_deref());
                out.model_path(&parsed.model, extra.model_path.clone());
                let reason = extra.termination_reason.as_deref();
                let mark = out.add(file, parsed, extra.failure_source, reason, source);
                if let Some(line) = converted {
                    out.output(file, mark.annotate(line), false);
                }
            }
            Err(e) => out.reject(file, Some(source.line), e.to_string()),
        }
    }

    fn reread(&self, _format: Format, _bytes: &[u8], _success: bool) -> Result<Draft, String> {
        // A canonical line is its own reading; `ImportSummary::rollout_line` returns it as is.
        Err("a canonical line is not re-read as a draft".to_string())
    }
}

fn line_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Applies the name overrides to a parsed canonical rollout; whether anything changed.
fn apply_overrides(parsed: &mut ParsedRollout, options: &ImportOptions) -> bool {
    let mut changed = false;
    for (field, value) in [
        (&mut parsed.dataset, &options.dataset),
        (&mut parsed.model, &options.model),
        (&mut parsed.method, &options.method),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.trim().is_empty()) {
            if field != v {
                *field = v.to_string();
                changed = true;
            }
        }
    }
    changed
}

/// A canonical line with the overrides applied (and its `tools` dropped when checks are off),
/// for the converted output.
fn rewrite_line(bytes: &[u8], options: &ImportOptions, drop_tools: bool) -> String {
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_slice::<serde_json::Value>(bytes)
    else {
        return line_text(bytes);
    };
    for (key, value) in [
        ("dataset", &options.dataset),
        ("model", &options.model),
        ("method", &options.method),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.trim().is_empty()) {
            map.insert(key.to_string(), v.into());
        }
    }
    if drop_tools {
        map.remove("tools");
    }
    serde_json::Value::Object(map).to_string()
}
