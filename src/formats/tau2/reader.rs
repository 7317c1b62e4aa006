//! tau2 as a [`FormatReader`]: the `Results` object, the bare simulations array, and the
//! directory form, whose simulation files are matched with their `results.json` when the input
//! ends.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{draft, read_simulation, RunContext, Simulation, Skip};
use crate::formats::canonical::emit;
use crate::formats::draft::Draft;
use crate::formats::scan::{elements, members, skip_ws, LineCounter, Member, Span};
use crate::formats::sink::{for_each_element, source_of, Sink};
use crate::formats::{Format, FormatReader, ImportOptions, Keys, LineShape};
use crate::rollout::Source;

/// The tau2 reader: per file, the run context of a `Results` object or a directory-form
/// `results.json`, and the simulation files waiting for theirs.
#[derive(Default)]
pub(crate) struct Tau2 {
    runs: BTreeMap<usize, Arc<RunContext>>,
    pending: BTreeMap<usize, Vec<(Simulation, Source)>>,
}

impl FormatReader for Tau2 {
    fn formats(&self) -> &'static [Format] {
        &[
            Format::Tau2Results,
            Format::Tau2Simulations,
            Format::Tau2RunMetadata,
            Format::Tau2Simulation,
        ]
    }

    /// A document written on one line.
    /// A Results object or a simulation written on one line (other one-line objects with
    /// `messages` are transcripts).
    fn recognise_line(&self, keys: &Keys<'_>) -> Option<LineShape> {
        let has = |k: &str| keys.contains(k);
        (has("info") || has("simulations") || (has("messages") && has("task_id")))
            .then_some(LineShape::Document)
    }

    fn recognise_array(&self, first: &Keys<'_>) -> Option<Format> {
        (first.contains("task_id") && (first.contains("messages") || first.contains("reward_info")))
            .then_some(Format::Tau2Simulations)
    }

    fn recognise_object(&self, doc: &[u8], members: &[Member]) -> Option<Format> {
        let has = |k: &str| members.iter().any(|m| m.key == k);
        let sims_non_empty = members.iter().any(|m| {
            m.key == "simulations" && {
                let i = skip_ws(doc, m.start + 1);
                doc.get(m.start) == Some(&b'[') && doc.get(i) != Some(&b']')
            }
        });
        if has("simulations") && (sims_non_empty || !has("simulation_index")) {
            Some(Format::Tau2Results)
        } else if has("info") && (has("simulation_index") || has("tasks")) {
            Some(Format::Tau2RunMetadata)
        } else if has("task_id") && (has("messages") || has("reward_info") || has("ticks")) {
            Some(Format::Tau2Simulation)
        } else {
            None
        }
    }

    fn needs_other_files(&self, format: Format) -> bool {
        matches!(format, Format::Tau2RunMetadata | Format::Tau2Simulation)
    }

    fn holds_rollouts(&self, format: Format) -> bool {
        format != Format::Tau2RunMetadata
    }

    fn document(
        &mut self,
        out: &mut Sink<'_>,
        file: usize,
        format: Format,
        bytes: &[u8],
        open: usize,
    ) {
        match format {
            Format::Tau2Results | Format::Tau2RunMetadata => {
                self.results(out, file, bytes, open, format)
            }
            Format::Tau2Simulations => {
                out.warn(
                    file,
                    None,
                    "a bare array of tau2 simulations carries no run info: dataset, model and \
                     method are \"tau2\", \"unknown-model\" and \"unknown-method\" unless set for \
                     the file"
                        .to_string(),
                );
                let ctx = Arc::new(RunContext::default());
                let end = simulations(out, file, bytes, open, &ctx);
                out.trailing(file, bytes, end);
            }
            Format::Tau2Simulation => {
                let end = bytes.len();
                let mut lc = LineCounter::new(bytes);
                let source = source_of(file, &mut lc, Span { start: open, end });
                match read_simulation(&bytes[open..end]) {
                    Ok(sim) => self.pending.entry(file).or_default().push((sim, source)),
                    Err(e) => out.reject(file, Some(source.line), e),
                }
            }
            _ => {}
        }
    }

    /// Matches each directory-form simulation file with its run's `results.json`.
    fn resolve(&mut self, out: &mut Sink<'_>) {
        let metas: Vec<usize> = (0..out.file_count())
            .filter(|&i| out.format(i) == Some(Format::Tau2RunMetadata))
            .collect();
        for file in 0..out.file_count() {
            let sims = self.pending.remove(&file).unwrap_or_default();
            for (sim, source) in sims {
                let matching: Vec<usize> = metas
                    .iter()
                    .copied()
                    .filter(|&m| {
                        let ctx = self.runs.get(&m);
                        match (ctx.and_then(|c| c.index.as_ref()), &sim.id) {
                            (Some(index), Some(id)) => index.contains(id),
                            _ => metas.len() == 1,
                        }
                    })
                    .collect();
                let options = out.options(file);
                let named = options.dataset.is_some()
                    && options.model.is_some()
                    && options.method.is_some();
                // The run is the directory's `results.json`, else the file itself.
                let mut run = out.name(file).to_string();
                let ctx = match matching.as_slice() {
                    [m] => {
                        out.import(file).paired_with = Some(out.name(*m).to_string());
                        run = out.name(*m).to_string();
                        self.runs.get(m).cloned().unwrap_or_default()
                    }
                    [] if named => Arc::new(RunContext::default()),
                    [] => {
                        out.reject(
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
                        out.reject(
                            file,
                            Some(source.line),
                            "several tau2 results.json files could hold this simulation; drop \
                             one run at a time"
                                .to_string(),
                        );
                        continue;
                    }
                };
                out.set_tools(file, ctx.tools.clone());
                simulation(out, file, sim, &ctx, source, run.clone());
            }
        }
    }

    fn forget(&mut self, file: usize) {
        self.runs.remove(&file);
        self.pending.remove(&file);
    }

    fn reread(&self, _: Format, bytes: &[u8], _success: bool) -> Result<Draft, String> {
        let sim = read_simulation(bytes)?;
        draft(sim, &RunContext::default(), &ImportOptions::default())
            .map_err(|_| "excluded".to_string())
    }
}

impl Tau2 {
    /// A `Results` object or a directory-form `results.json`: the run context, then (for
    /// `Results`) the simulations.
    fn results(
        &mut self,
        out: &mut Sink<'_>,
        file: usize,
        bytes: &[u8],
        open: usize,
        format: Format,
    ) {
        let schema_checks = out.options(file).schema_checks;
        let (members, problem) = members(bytes, open);
        let find = |k: &str| members.iter().find(|m| m.key == k);
        let mut ctx = match find("info").map(|m| m.value.clone()) {
            Some(Ok(span)) => {
                match RunContext::from_info(&bytes[span.start..span.end], schema_checks) {
                    Ok(ctx) => ctx,
                    Err(e) => {
                        let line = LineCounter::new(bytes).line_at(span.start);
                        out.reject(
                            file,
                            Some(line),
                            format!("{e}; the run's names are unknown"),
                        );
                        RunContext::default()
                    }
                }
            }
            _ => {
                out.reject(
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
            out.warn(file, None, p);
        }
        if ctx.unreadable_tasks > 0 {
            out.warn(
                file,
                None,
                format!(
                    "{} tasks could not be read; their no-tool rollouts count as executable only \
                     when successful",
                    ctx.unreadable_tasks
                ),
            );
        }
        out.set_tools(file, ctx.tools.clone());
        let ctx = Arc::new(ctx);
        self.runs.insert(file, Arc::clone(&ctx));
        if format == Format::Tau2RunMetadata {
            // Its simulations are other files of the drop, matched when the input ends.
            return;
        }
        match find("simulations") {
            Some(m) => {
                simulations(out, file, bytes, m.start, &ctx);
            }
            None => {
                if let Some(p) = problem {
                    out.reject(file, None, format!("{p}; no simulation was read"));
                }
            }
        }
    }
}

/// The simulations array starting at `open`; where it closed.
fn simulations(
    out: &mut Sink<'_>,
    file: usize,
    bytes: &[u8],
    open: usize,
    ctx: &RunContext,
) -> Option<usize> {
    for_each_element(
        out,
        file,
        bytes,
        open,
        |out, i, source, element| match read_simulation(element) {
            Ok(sim) => {
                let run = out.name(file).to_string();
                simulation(out, file, sim, ctx, source, run)
            }
            Err(e) => out.reject(file, Some(source.line), format!("simulations[{i}]: {e}")),
        },
    )
}

fn simulation(
    out: &mut Sink<'_>,
    file: usize,
    sim: Simulation,
    ctx: &RunContext,
    source: Source,
    run: String,
) {
    match draft(sim, ctx, out.options(file)) {
        Ok(mut d) => {
            d.run = Some(run);
            emit(out, file, &d, ctx.tools.as_deref(), source)
        }
        Err(Skip::Excluded(reason)) => *out.import(file).excluded.entry(reason).or_default() += 1,
    }
}
