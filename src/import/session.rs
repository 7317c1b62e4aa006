//! The import engine behind [`crate::input::Ingest`]: per-file state, the dispatch of lines and
//! documents to the importers, the resolution of what needs several files, and the one path by
//! which every rollout enters the corpus.

use std::collections::HashSet;
use std::sync::Arc;

use super::bfcl::{self, ResultLine, ScoreFile, Test};
use super::detect::{classify_document, strip_bom, tried};
use super::draft::Draft;
use super::scan::{elements, members, skip_ws, LineCounter, Span};
use super::schema_check::ToolSet;
use super::tau2::{self, RunContext, Simulation, Skip};
use super::tau_bench;
use super::{FailureSource, FileImport, Format, ImportOptions, ImportSummary, Readback};
use crate::input::add_rollout;
use crate::input::canonical::{
    parse_line_ext, CanonicalLine, LineContext, LineExtra, ParsedRollout,
};
use crate::rollout::{Corpus, Diagnostic, Source};

/// Per-file state.
struct FileCtx {
    name: String,
    options: ImportOptions,
    /// False when the first line matched no format and canonical JSONL is the fallback.
    recognised: bool,
    lines: LineContext,
    /// BFCL result: the tests, waiting for the score file.
    tests: Vec<(Test, Source)>,
    /// BFCL score file contents.
    score: Option<ScoreFile>,
    score_lines: u64,
    /// tau2: the run context of a `Results` or directory-form `results.json`.
    run: Option<Arc<RunContext>>,
    /// tau2 directory form: a simulation waiting for its `results.json`.
    pending_sims: Vec<(Simulation, Source)>,
    /// Diagnostics are written when the file's rollouts are final (at its end, or when the input
    /// ends for formats that need another file).
    deferred: bool,
    /// Resolved already (a later [`Session::resolve`] leaves it alone).
    resolved: bool,
}

/// The engine; see the module documentation.
pub(crate) struct Session {
    files: Vec<FileCtx>,
    pub(crate) summary: ImportSummary,
    /// Canonical lines of every rollout added, when converting.
    converted: Option<Vec<String>>,
    /// The file whose top-level `tools` line is in force in the converted output.
    output_tools_from: Option<usize>,
    resolved: bool,
}

impl Session {
    pub(crate) fn new() -> Self {
        Session {
            files: Vec::new(),
            summary: ImportSummary::default(),
            converted: None,
            output_tools_from: None,
            resolved: false,
        }
    }

    /// Keeps the canonical line of every rollout added, for `convert`.
    pub(crate) fn keep_converted(&mut self) {
        self.converted.get_or_insert_with(Vec::new);
    }

    /// Takes the converted lines produced so far.
    pub(crate) fn drain_converted(&mut self) -> Vec<String> {
        self.converted
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    pub(crate) fn begin_file(&mut self, name: &str, options: ImportOptions) {
        self.files.push(FileCtx {
            name: name.to_string(),
            lines: LineContext::new(options.schema_checks),
            options,
            recognised: true,
            tests: Vec::new(),
            score: None,
            score_lines: 0,
            run: None,
            pending_sims: Vec::new(),
            deferred: false,
            resolved: false,
        });
        self.summary.files.push(FileImport {
            name: name.to_string(),
            ..FileImport::default()
        });
        self.summary.readback.push(Readback {
            schema_checks: self.files.last().is_some_and(|f| f.options.schema_checks),
            ..Readback::default()
        });
        self.resolved = false;
    }

    pub(crate) fn options(&self, file: usize) -> &ImportOptions {
        &self.files[file].options
    }

    pub(crate) fn format(&self, file: usize) -> Option<Format> {
        self.summary.files.get(file).and_then(|f| f.format)
    }

    pub(crate) fn set_format(&mut self, file: usize, format: Format, recognised: bool) {
        self.files[file].recognised = recognised;
        self.summary.files[file].format = recognised.then_some(format);
        self.summary.readback[file].format = Some(format);
        if matches!(format, Format::BfclResult | Format::BfclScore) {
            self.files[file].deferred = true;
        }
    }

    // ---- lines ------------------------------------------------------------------------------

    /// One non-blank line of a line-based file.
    pub(crate) fn line(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        format: Format,
        number: u64,
        offset: u64,
        bytes: &[u8],
    ) {
        let source = Source {
            file: file as u32,
            line: number,
            offset,
            len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        };
        match format {
            Format::BfclResult => self.bfcl_result_line(corpus, file, source, bytes),
            Format::BfclScore => self.bfcl_score_line(corpus, file, number, bytes),
            _ => self.canonical_line(corpus, file, source, bytes),
        }
    }

    fn canonical_line(&mut self, corpus: &mut Corpus, file: usize, source: Source, bytes: &[u8]) {
        let f = &mut self.files[file];
        match parse_line_ext(bytes, &mut f.lines) {
            Ok(CanonicalLine::Tools(set)) => {
                let n = set.as_ref().map_or(0, |s| s.len() as u64);
                if let Some(s) = set.as_deref().filter(|s| !s.unusable.is_empty()) {
                    let message = tau2::unusable_message(s);
                    warn(corpus, file, Some(source.line), message);
                }
                let f = &mut self.files[file];
                f.lines.tools = set;
                let schema_checks = f.options.schema_checks;
                self.summary.files[file].tools = n;
                self.summary.readback[file].tools = None;
                if schema_checks {
                    self.output(file, line_text(bytes), true);
                }
            }
            Ok(CanonicalLine::Rollout(mut parsed, extra)) => {
                let options = &self.files[file].options;
                if let Some(reason) = &extra.termination_reason {
                    if options.exclude_termination.iter().any(|r| r == reason) {
                        *self.summary.files[file]
                            .excluded
                            .entry(reason.clone())
                            .or_default() += 1;
                        return;
                    }
                }
                if !extra.unusable_tools.is_empty() {
                    let names: Vec<&str> = extra
                        .unusable_tools
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect();
                    warn(
                        corpus,
                        file,
                        Some(source.line),
                        format!(
                            "the parameter schemas of tools {} are not valid JSON Schema; their \
                             arguments are not checked",
                            names.join(", ")
                        ),
                    );
                }
                let overridden = apply_overrides(&mut parsed, options);
                if let (false, true, Some(tools)) = (
                    extra.has_tools,
                    options.schema_checks,
                    &self.files[file].lines.tools,
                ) {
                    let index = corpus.rollouts.len();
                    self.summary.line_tools.insert(index, Arc::clone(tools));
                }
                let drop_tools = extra.has_tools && !options.schema_checks;
                let converted = self.converted.is_some().then(|| {
                    if overridden || drop_tools {
                        rewrite_line(bytes, options, drop_tools)
                    } else {
                        line_text(bytes)
                    }
                });
                self.add(corpus, file, parsed, &extra, source);
                if let Some(line) = converted {
                    self.output(file, line, false);
                }
            }
            Err(e) => reject(corpus, file, Some(source.line), e.to_string()),
        }
    }

    fn bfcl_result_line(&mut self, corpus: &mut Corpus, file: usize, source: Source, bytes: &[u8]) {
        match bfcl::read_result_line(bytes) {
            Ok(ResultLine::Test(t)) => self.files[file].tests.push((t, source)),
            Ok(ResultLine::InferenceError { .. }) => {
                self.summary.files[file].skipped_inference_errors += 1
            }
            Err(e) => reject(corpus, file, Some(source.line), e),
        }
    }

    fn bfcl_score_line(&mut self, corpus: &mut Corpus, file: usize, number: u64, bytes: &[u8]) {
        let f = &mut self.files[file];
        f.score_lines += 1;
        let score = f.score.get_or_insert_with(ScoreFile::default);
        if f.score_lines == 1 {
            match bfcl::read_score_summary(bytes) {
                Ok(s) => score.summary = Some(s),
                Err(e) => reject(corpus, file, Some(number), e),
            }
            return;
        }
        match bfcl::read_score_failure(bytes) {
            Ok(fail) => {
                if score.model.is_none() {
                    score.model = fail.model_name;
                }
                if score.category.is_none() {
                    score.category = fail.category.or_else(|| Some(bfcl::category_of(&fail.id)));
                }
                score.failed.insert(fail.id);
            }
            Err(e) => reject(corpus, file, Some(number), e),
        }
    }

    // ---- documents --------------------------------------------------------------------------

    /// A whole JSON document, at the end of its file.
    pub(crate) fn document(&mut self, corpus: &mut Corpus, file: usize, bytes: &[u8]) {
        let format = match classify_document(bytes) {
            Ok(f) => f,
            Err(message) => {
                self.files[file].recognised = false;
                reject(corpus, file, None, message);
                return;
            }
        };
        self.set_format(file, format, true);
        let bom = bytes.len() - strip_bom(bytes).len();
        let open = skip_ws(bytes, bom);
        match format {
            Format::TauBench => self.tau_bench(corpus, file, bytes, open),
            Format::Tau2Results | Format::Tau2RunMetadata => {
                self.tau2_results(corpus, file, bytes, open, format)
            }
            Format::Tau2Simulations => {
                warn(
                    corpus,
                    file,
                    None,
                    "a bare array of tau2 simulations carries no run info: dataset, model and \
                     method are \"tau2\", \"unknown-model\" and \"unknown-method\" unless set for \
                     the file"
                        .to_string(),
                );
                let ctx = Arc::new(RunContext::default());
                let end = self.tau2_simulations(corpus, file, bytes, open, &ctx);
                trailing(corpus, file, bytes, end);
            }
            Format::Tau2Simulation => {
                let end = bytes.len();
                let mut lc = LineCounter::new(bytes);
                let source = source_of(file, &mut lc, Span { start: open, end });
                match tau2::read_simulation(&bytes[open..end]) {
                    Ok(sim) => self.files[file].pending_sims.push((sim, source)),
                    Err(e) => reject(corpus, file, Some(source.line), e),
                }
                self.files[file].deferred = true;
            }
            Format::Canonical | Format::BfclResult | Format::BfclScore => {}
        }
    }

    fn tau_bench(&mut self, corpus: &mut Corpus, file: usize, bytes: &[u8], open: usize) {
        let defaults = tau_bench::Defaults::for_file(&self.files[file].name);
        let mut lc = LineCounter::new(bytes);
        let mut it = elements(bytes, open);
        let mut read = 0usize;
        for (i, span) in it.by_ref().enumerate() {
            match span {
                Ok(span) => {
                    read += 1;
                    let source = source_of(file, &mut lc, span);
                    match tau_bench::convert(&bytes[span.start..span.end], &defaults) {
                        Ok(mut d) => {
                            d.apply(&self.files[file].options);
                            self.emit(corpus, file, &d, None, source);
                        }
                        Err(e) => {
                            reject(corpus, file, Some(source.line), format!("element {i}: {e}"))
                        }
                    }
                }
                Err(e) => {
                    let line = lc.line_at(bytes.len());
                    reject(corpus, file, Some(line), cut_message(&e.to_string(), read));
                }
            }
        }
        trailing(corpus, file, bytes, it.closed_at());
    }

    fn tau2_results(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        bytes: &[u8],
        open: usize,
        format: Format,
    ) {
        let schema_checks = self.files[file].options.schema_checks;
        let (members, problem) = members(bytes, open);
        let find = |k: &str| members.iter().find(|m| m.key == k);
        let mut ctx = match find("info").map(|m| m.value.clone()) {
            Some(Ok(span)) => {
                match RunContext::from_info(&bytes[span.start..span.end], schema_checks) {
                    Ok(ctx) => ctx,
                    Err(e) => {
                        let line = LineCounter::new(bytes).line_at(span.start);
                        reject(
                            corpus,
                            file,
                            Some(line),
                            format!("{e}; the run's names are unknown"),
                        );
                        RunContext::default()
                    }
                }
            }
            _ => {
                reject(
                    corpus,
                    file,
                    None,
                    "no complete `info`: the run's domain, model and method are unknown (set \
                     them for the file)"
                        .to_string(),
                );
                RunContext::default()
            }
        };
        if let Some(m) = find("tasks") {
            for span in elements(bytes, m.start).flatten() {
                ctx.add_task(&bytes[span.start..span.end]);
            }
        }
        if let Some(m) = find("simulation_index") {
            for span in elements(bytes, m.start).flatten() {
                ctx.add_index_entry(&bytes[span.start..span.end]);
            }
        }
        if let Some(p) = ctx.tools_problem.clone() {
            warn(corpus, file, None, p);
        }
        if ctx.unreadable_tasks > 0 {
            warn(
                corpus,
                file,
                None,
                format!(
                    "{} tasks could not be read; their no-tool rollouts count as executable only \
                     when successful",
                    ctx.unreadable_tasks
                ),
            );
        }
        self.summary.files[file].tools = ctx.tools.as_ref().map_or(0, |t| t.len() as u64);
        self.summary.readback[file].tools = ctx.tools.clone();
        let ctx = Arc::new(ctx);
        self.files[file].run = Some(Arc::clone(&ctx));
        if format == Format::Tau2RunMetadata {
            // Its simulations are other files of the drop, matched when the input ends.
            self.files[file].deferred = true;
            return;
        }
        match find("simulations") {
            Some(m) => {
                self.tau2_simulations(corpus, file, bytes, m.start, &ctx);
            }
            None => {
                if let Some(p) = problem {
                    reject(corpus, file, None, format!("{p}; no simulation was read"));
                }
            }
        }
    }

    fn tau2_simulations(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        bytes: &[u8],
        open: usize,
        ctx: &RunContext,
    ) -> Option<usize> {
        let mut lc = LineCounter::new(bytes);
        let mut it = elements(bytes, open);
        let mut read = 0usize;
        for (i, span) in it.by_ref().enumerate() {
            match span {
                Ok(span) => {
                    read += 1;
                    let source = source_of(file, &mut lc, span);
                    match tau2::read_simulation(&bytes[span.start..span.end]) {
                        Ok(sim) => self.tau2_simulation(corpus, file, sim, ctx, source),
                        Err(e) => reject(
                            corpus,
                            file,
                            Some(source.line),
                            format!("simulations[{i}]: {e}"),
                        ),
                    }
                }
                Err(e) => {
                    let line = lc.line_at(bytes.len());
                    reject(corpus, file, Some(line), cut_message(&e.to_string(), read));
                }
            }
        }
        it.closed_at()
    }

    fn tau2_simulation(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        sim: Simulation,
        ctx: &RunContext,
        source: Source,
    ) {
        match tau2::draft(sim, ctx, &self.files[file].options) {
            Ok(d) => self.emit(corpus, file, &d, ctx.tools.as_deref(), source),
            Err(Skip::Excluded(reason)) => {
                *self.summary.files[file].excluded.entry(reason).or_default() += 1
            }
        }
    }

    /// How many converted lines have been produced (a mark for [`Session::forget_file`]).
    pub(crate) fn converted_len(&self) -> usize {
        self.converted.as_ref().map_or(0, Vec::len)
    }

    /// Forgets a file that repeats the earlier file `original`: whatever it left waiting for
    /// another file (BFCL tests or scores, tau2 simulations), and the per-rollout side tables
    /// from rollout index `rollouts` and converted line `converted` on. Its format is cleared so
    /// no later pairing picks it up.
    pub(crate) fn forget_file(
        &mut self,
        file: usize,
        original: usize,
        rollouts: usize,
        converted: usize,
    ) {
        let f = &mut self.files[file];
        f.tests.clear();
        f.score = None;
        f.run = None;
        f.pending_sims.clear();
        f.deferred = false;
        f.resolved = true;
        self.summary.first_failure_sources.truncate(rollouts);
        let _ = self.summary.line_tools.split_off(&rollouts);
        if let Some(c) = &mut self.converted {
            c.truncate(converted);
        }
        let name = std::mem::take(&mut self.summary.files[file].name);
        self.summary.files[file] = FileImport {
            name,
            repeats: Some(self.files[original].name.clone()),
            ..FileImport::default()
        };
        self.summary.readback[file].format = None;
    }

    // ---- ends -------------------------------------------------------------------------------

    /// The end of one file: its diagnostics, unless its rollouts wait for another file.
    pub(crate) fn end_file(&mut self, corpus: &mut Corpus, file: usize) {
        if !self.files[file].deferred {
            self.notes(corpus, file);
        }
    }

    /// The end of the input: pairs BFCL results with score files and tau2 simulation files
    /// with their `results.json`, then writes the diagnostics of those files. Idempotent.
    pub(crate) fn resolve(&mut self, corpus: &mut Corpus) {
        if self.resolved {
            return;
        }
        self.resolved = true;
        self.resolve_bfcl(corpus);
        self.resolve_tau2(corpus);
        for file in 0..self.files.len() {
            if self.files[file].deferred {
                self.files[file].deferred = false;
                self.notes(corpus, file);
            }
            self.files[file].resolved = true;
        }
    }

    fn resolve_bfcl(&mut self, corpus: &mut Corpus) {
        let scores: Vec<usize> = (0..self.files.len())
            .filter(|&i| self.format(i) == Some(Format::BfclScore))
            .collect();
        // Score files resolved earlier stay available for pairing, without a second message.
        let mut used: HashSet<usize> = scores
            .iter()
            .copied()
            .filter(|&s| self.files[s].resolved)
            .collect();
        for file in 0..self.files.len() {
            if self.format(file) != Some(Format::BfclResult) || self.files[file].resolved {
                continue;
            }
            let tests = std::mem::take(&mut self.files[file].tests);
            let name = self.files[file].name.clone();
            let category = tests
                .first()
                .map(|(t, _)| t.category.clone())
                .or_else(|| bfcl::category_from_name(&name));
            let folder_model = bfcl::model_from_path(&name);
            let score_category = |s: usize| {
                let f = &self.files[s];
                f.score
                    .as_ref()
                    .and_then(|sc| sc.category.clone())
                    .or_else(|| bfcl::category_from_name(&f.name))
            };
            let score_model = |s: usize| {
                let f = &self.files[s];
                f.score
                    .as_ref()
                    .and_then(|sc| sc.model.clone())
                    .or_else(|| bfcl::model_from_path(&f.name))
            };
            let mut candidates: Vec<usize> = scores
                .iter()
                .copied()
                .filter(|&s| score_category(s).is_none() || score_category(s) == category)
                .collect();
            if candidates.len() > 1 {
                let wanted = self.files[file]
                    .options
                    .model
                    .clone()
                    .or(folder_model.clone());
                candidates.retain(|&s| {
                    wanted.is_some()
                        && (score_model(s) == wanted
                            || bfcl::model_from_path(&self.files[s].name) == folder_model)
                });
            }
            let n = tests.len() as u64;
            let score = match candidates.as_slice() {
                [s] => *s,
                [] => {
                    reject_many(
                        corpus,
                        file,
                        n,
                        format!(
                            "a BFCL result file needs its score file to tell which tests \
                             succeeded (the score file lists the failures): add the run's \
                             `{}` (BFCL writes it under score/<model>/) to the same drop",
                            name.rsplit(['/', '\\'])
                                .next()
                                .unwrap_or(&name)
                                .replace("_result.json", "_score.json")
                        ),
                    );
                    continue;
                }
                many => {
                    let names: Vec<&str> =
                        many.iter().map(|&s| self.files[s].name.as_str()).collect();
                    reject_many(
                        corpus,
                        file,
                        n,
                        format!(
                            "several BFCL score files could belong to this result file ({}); \
                             drop one run at a time, or set the model of the result file to the \
                             score file's model name",
                            names.join(", ")
                        ),
                    );
                    continue;
                }
            };
            used.insert(score);
            let sc = self.files[score].score.clone().unwrap_or_default();
            self.summary.files[file].paired_with = Some(self.files[score].name.clone());
            self.summary.files[score].paired_with = Some(name.clone());
            let model = sc
                .model
                .clone()
                .or(folder_model)
                .or_else(|| bfcl::model_from_path(&self.files[score].name))
                .unwrap_or_else(|| "unknown-model".to_string());
            let mut successes = 0u64;
            let mut ids: HashSet<String> = HashSet::new();
            let options = self.files[file].options.clone();
            for (test, source) in tests {
                if !test.has_outputs {
                    self.summary.files[file].without_tool_outputs += 1;
                }
                let success = !sc.failed.contains(&test.id);
                successes += u64::from(success);
                ids.insert(test.id.clone());
                let mut d = bfcl::draft(test, success, model.clone());
                d.apply(&options);
                self.emit(corpus, file, &d, None, source);
            }
            if let Some(summary) = sc.summary {
                let skipped = self.summary.files[file].skipped_inference_errors;
                let imported = self.summary.files[file].rollouts;
                if imported + skipped != summary.total_count || successes != summary.correct_count {
                    warn(
                        corpus,
                        file,
                        None,
                        format!(
                            "the score file {} counts {} tests, {} correct; this result file \
                             gives {imported} rollouts + {skipped} inference errors, {successes} \
                             successful: are they from the same run?",
                            self.files[score].name, summary.total_count, summary.correct_count
                        ),
                    );
                }
            }
            let unknown = sc.failed.iter().filter(|id| !ids.contains(*id)).count();
            let skipped = self.summary.files[file].skipped_inference_errors as usize;
            if unknown > skipped {
                warn(
                    corpus,
                    file,
                    None,
                    format!(
                        "{} failures of the score file have no line in this result file",
                        unknown - skipped
                    ),
                );
            }
        }
        for s in scores {
            if !used.contains(&s) {
                reject(
                    corpus,
                    s,
                    None,
                    "a BFCL score file lists only the failed tests, so it cannot be scored \
                     alone: add the run's result file (BFCL writes it under result/<model>/) to \
                     the same drop"
                        .to_string(),
                );
            }
        }
    }

    fn resolve_tau2(&mut self, corpus: &mut Corpus) {
        let metas: Vec<usize> = (0..self.files.len())
            .filter(|&i| self.format(i) == Some(Format::Tau2RunMetadata))
            .collect();
        for file in 0..self.files.len() {
            let sims = std::mem::take(&mut self.files[file].pending_sims);
            for (sim, source) in sims {
                let matching: Vec<usize> = metas
                    .iter()
                    .copied()
                    .filter(|&m| {
                        let ctx = self.files[m].run.as_ref();
                        match (ctx.and_then(|c| c.index.as_ref()), &sim.id) {
                            (Some(index), Some(id)) => index.contains(id),
                            _ => metas.len() == 1,
                        }
                    })
                    .collect();
                let options = &self.files[file].options;
                let named = options.dataset.is_some()
                    && options.model.is_some()
                    && options.method.is_some();
                let ctx = match matching.as_slice() {
                    [m] => {
                        self.summary.files[file].paired_with = Some(self.files[*m].name.clone());
                        self.files[*m].run.clone().unwrap_or_default()
                    }
                    [] if named => Arc::new(RunContext::default()),
                    [] => {
                        reject(
                            corpus,
                            file,
                            Some(source.line),
                            "a tau2 simulation file needs its run's results.json (the \
                             directory form's metadata, dropped together with it) for the \
                             domain and the model; or set dataset, model and method for the file"
                                .to_string(),
                        );
                        continue;
                    }
                    _ => {
                        reject(
                            corpus,
                            file,
                            Some(source.line),
                            "several tau2 results.json files could hold this simulation; drop \
                             one run at a time"
                                .to_string(),
                        );
                        continue;
                    }
                };
                self.summary.readback[file].tools = ctx.tools.clone();
                self.summary.files[file].tools = ctx.tools.as_ref().map_or(0, |t| t.len() as u64);
                self.tau2_simulation(corpus, file, sim, &ctx, source);
            }
        }
    }

    // ---- the one way in ---------------------------------------------------------------------

    /// Renders a draft and adds it through the canonical parser.
    fn emit(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        draft: &Draft,
        tools: Option<&ToolSet>,
        source: Source,
    ) {
        let line = draft.render(tools);
        match parse_line_ext(line.as_bytes(), &mut LineContext::new(false)) {
            Ok(CanonicalLine::Rollout(parsed, extra)) => {
                self.add(corpus, file, parsed, &extra, source);
                if self.converted.is_some() {
                    self.output(file, line, false);
                }
            }
            Ok(CanonicalLine::Tools(_)) => {}
            Err(e) => reject(corpus, file, Some(source.line), e.to_string()),
        }
    }

    fn add(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        parsed: ParsedRollout,
        extra: &LineExtra,
        source: Source,
    ) {
        add_rollout(corpus, parsed, source);
        corpus.files[file].rollouts += 1;
        let info = &mut self.summary.files[file];
        info.rollouts += 1;
        match extra.failure_source {
            Some(FailureSource::SchemaCheck) => info.schema_first_failures += 1,
            Some(FailureSource::Environment) => info.environment_first_failures += 1,
            None => {}
        }
        if let Some(r) = &extra.termination_reason {
            *info.termination_reasons.entry(r.clone()).or_default() += 1;
        }
        self.summary
            .first_failure_sources
            .push(extra.failure_source);
    }

    fn output(&mut self, file: usize, line: String, tools_line: bool) {
        let Some(out) = self.converted.as_mut() else {
            return;
        };
        if tools_line {
            self.output_tools_from = Some(file);
        } else if self.output_tools_from.is_some_and(|f| f != file) {
            // Tools set by an earlier file must not apply to this file's rollouts.
            out.push(r#"{"tools":null}"#.to_string());
            self.output_tools_from = None;
        }
        out.push(line);
    }

    /// The file's closing diagnostics: exclusions, skips, missing outputs, and "nothing read".
    fn notes(&mut self, corpus: &mut Corpus, file: usize) {
        let info = self.summary.files[file].clone();
        for (reason, n) in &info.excluded {
            warn(
                corpus,
                file,
                None,
                format!("{n} rollouts excluded by termination reason {reason:?}"),
            );
        }
        if info.skipped_inference_errors > 0 {
            warn(
                corpus,
                file,
                None,
                format!(
                    "{} inference-error lines skipped (a `traceback` and no trajectory: the model \
                     call failed before any step)",
                    info.skipped_inference_errors
                ),
            );
        }
        if info.without_tool_outputs > 0 {
            warn(
                corpus,
                file,
                None,
                format!(
                    "{} rollouts have no inference_log, so no tool outputs: their steps are read \
                     from `result` and count as executed, which makes TER, PEC and AUC-PEC upper \
                     bounds for them",
                    info.without_tool_outputs
                ),
            );
        }
        let explained = !info.excluded.is_empty() || info.skipped_inference_errors > 0;
        let holds_none = matches!(
            info.format,
            Some(Format::BfclScore | Format::Tau2RunMetadata)
        );
        let f = &corpus.files[file];
        if f.rollouts == 0 && !explained && !holds_none {
            if !self.files[file].recognised {
                let name = f.name.clone();
                corpus.push_diagnostic(Diagnostic {
                    file: name,
                    line: None,
                    message: format!(
                        "no rollout was read: the file matches no known format; {}",
                        tried()
                    ),
                });
            } else if f.errors == 0 {
                let name = f.name.clone();
                corpus.push_diagnostic(Diagnostic {
                    file: name,
                    line: None,
                    message: "the file holds no rollouts (it is empty or has only blank lines)"
                        .to_string(),
                });
            }
        }
    }
}

/// A rejected line or element: counted as an error of the file.
fn reject(corpus: &mut Corpus, file: usize, line: Option<u64>, message: String) {
    corpus.files[file].errors += 1;
    warn(corpus, file, line, message);
}

/// A file-level rejection of `count` rollouts (at least one error is counted).
fn reject_many(corpus: &mut Corpus, file: usize, count: u64, message: String) {
    corpus.files[file].errors += count.max(1);
    warn(corpus, file, None, message);
}

/// A diagnostic that rejects nothing.
fn warn(corpus: &mut Corpus, file: usize, line: Option<u64>, message: String) {
    let name = corpus.files[file].name.clone();
    corpus.push_diagnostic(Diagnostic {
        file: name,
        line,
        message,
    });
}

fn source_of(file: usize, lc: &mut LineCounter<'_>, span: Span) -> Source {
    Source {
        file: file as u32,
        line: lc.line_at(span.start),
        offset: span.start as u64,
        len: u32::try_from(span.end - span.start).unwrap_or(u32::MAX),
    }
}

fn cut_message(scan: &str, read: usize) -> String {
    format!("{scan}; the {read} complete elements before the cut were read")
}

/// Anything but whitespace after a document is reported (and ignored).
fn trailing(corpus: &mut Corpus, file: usize, bytes: &[u8], closed_at: Option<usize>) {
    let Some(at) = closed_at else { return };
    let rest = skip_ws(bytes, at);
    if rest < bytes.len() {
        let line = LineCounter::new(bytes).line_at(rest);
        warn(
            corpus,
            file,
            Some(line),
            "unexpected data after the end of the JSON document; ignored".to_string(),
        );
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
