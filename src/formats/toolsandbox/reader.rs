//! ToolSandbox as a [`FormatReader`]: a run folder is several files — `result_summary.json` and,
//! per scenario, `trajectories/<scenario>/execution_context.json` (and `conversation.json`) —
//! each recognised by content, each trajectory reduced to its calls as soon as its file ends,
//! and joined with its run's summary when the input ends: by run folder
//! (`<run>/result_summary.json` ↔ `<run>/trajectories/<scenario>/…`), else — when the names lack
//! the run folder — with the one summary that lists the scenario.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::{
    is_conversation_message, is_execution_context, is_summary, join_run, read_conversation,
    read_execution_context, read_summary, reread, run_name, summary_dir, trajectory_path, Located,
    Outcome, RereadFacts, RunFacts, RunSummary, ScenarioRow, Skip, Trajectory, TrajectoryFile,
    TrajectoryKind, TrajectoryPath,
};
use crate::formats::canonical::emit;
use crate::formats::draft::Draft;
use crate::formats::scan::{LineCounter, Member};
use crate::formats::{Format, FormatReader, Keys, LineShape, RereadContext, Sink};
use crate::rollout::Source;

/// Per file, what its document held, until the input ends.
#[derive(Default)]
pub(crate) struct ToolSandbox {
    summaries: BTreeMap<usize, RunSummary>,
    trajectories: BTreeMap<usize, Pending>,
}

/// A trajectory file, read (or not), waiting for its run's summary.
struct Pending {
    kind: TrajectoryKind,
    read: Result<Trajectory, Located>,
    source: Source,
}

impl FormatReader for ToolSandbox {
    fn formats(&self) -> &'static [Format] {
        &[
            Format::ToolSandboxSummary,
            Format::ToolSandboxContext,
            Format::ToolSandboxConversation,
        ]
    }

    /// A summary or execution context written on one line.
    fn recognise_line(&self, keys: &Keys<'_>) -> Option<LineShape> {
        let keys: Vec<&str> = keys.iter().copied().collect();
        (is_summary(&keys) || is_execution_context(&keys)).then_some(LineShape::Document)
    }

    fn recognise_array(&self, first: &Keys<'_>) -> Option<Format> {
        let keys: Vec<&str> = first.iter().copied().collect();
        is_conversation_message(&keys).then_some(Format::ToolSandboxConversation)
    }

    fn recognise_object(&self, _doc: &[u8], members: &[Member]) -> Option<Format> {
        let keys: Vec<&str> = members.iter().map(|m| m.key.as_str()).collect();
        if is_summary(&keys) {
            Some(Format::ToolSandboxSummary)
        } else if is_execution_context(&keys) {
            Some(Format::ToolSandboxContext)
        } else {
            None
        }
    }

    fn needs_other_files(&self, _format: Format) -> bool {
        true
    }

    fn holds_rollouts(&self, format: Format) -> bool {
        format != Format::ToolSandboxSummary
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
            Format::ToolSandboxSummary => match read_summary(bytes) {
                Ok(s) => {
                    self.summaries.insert(file, s);
                }
                Err(e) => out.reject(file, e.line, e.message),
            },
            Format::ToolSandboxContext | Format::ToolSandboxConversation => {
                let kind = if format == Format::ToolSandboxContext {
                    TrajectoryKind::ExecutionContext
                } else {
                    TrajectoryKind::Conversation
                };
                // Reduced to its calls now: the file's bytes are not kept until the input ends.
                let read = match kind {
                    TrajectoryKind::ExecutionContext => read_execution_context(bytes),
                    TrajectoryKind::Conversation => read_conversation(bytes),
                };
                let source = Source {
                    file: file as u32,
                    line: LineCounter::new(bytes).line_at(open),
                    offset: open as u64,
                    len: u32::try_from(bytes.len() - open).unwrap_or(u32::MAX),
                };
                self.trajectories
                    .insert(file, Pending { kind, read, source });
            }
            _ => {}
        }
    }

    fn resolve(&mut self, out: &mut Sink<'_>) {
        let summaries: Vec<usize> = self.summaries.keys().copied().collect();
        let mut runs: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let trajectories: Vec<usize> = self.trajectories.keys().copied().collect();
        for t in trajectories {
            let TrajectoryPath { run_dir, scenario } = trajectory_path(out.name(t));
            let Some(scenario) = scenario else {
                self.trajectories.remove(&t);
                out.reject(
                    t,
                    None,
                    "a ToolSandbox trajectory file is known by its folder \
                     (trajectories/<scenario>/…): drop or pick the run folder, or give the file \
                     with its path"
                        .to_string(),
                );
                continue;
            };
            let same_dir: Vec<usize> = summaries
                .iter()
                .copied()
                .filter(|&s| !run_dir.is_empty() && summary_dir(out.name(s)) == run_dir)
                .collect();
            let candidates: Vec<usize> = if same_dir.is_empty() {
                summaries
                    .iter()
                    .copied()
                    .filter(|s| self.summaries[s].rows.iter().any(|r| r.name == scenario))
                    .collect()
            } else {
                same_dir
            };
            match candidates.as_slice() {
                [s] => runs.entry(*s).or_default().push(t),
                [] => {
                    self.trajectories.remove(&t);
                    out.reject(
                        t,
                        None,
                        format!(
                            "a ToolSandbox trajectory (scenario {scenario:?}) needs its run's \
                             result_summary.json, which holds the scenario's verdict: add it to \
                             the same drop (it sits in the run folder, beside trajectories/)"
                        ),
                    );
                }
                _ => {
                    self.trajectories.remove(&t);
                    out.reject(
                        t,
                        None,
                        format!(
                            "several result_summary.json files list scenario {scenario:?}; drop \
                             one ToolSandbox run at a time, or keep each run's folders"
                        ),
                    );
                }
            }
        }
        for s in summaries {
            let summary = self.summaries.remove(&s).unwrap_or_default();
            let members = runs.remove(&s).unwrap_or_default();
            self.run(out, s, &summary, &members);
        }
    }

    fn forget(&mut self, file: usize) {
        self.summaries.remove(&file);
        self.trajectories.remove(&file);
    }

    fn reread(&self, _: Format, _bytes: &[u8], _success: bool) -> Result<Draft, String> {
        Err("a ToolSandbox scenario is re-read with its summary row".to_string())
    }

    fn reread_with(
        &self,
        format: Format,
        bytes: &[u8],
        success: bool,
        context: Option<&RereadContext>,
    ) -> Result<Draft, String> {
        match context.and_then(|c| c.downcast_ref::<RereadFacts>()) {
            Some(facts) => reread(bytes, facts),
            None => self.reread(format, bytes, success),
        }
    }
}

impl ToolSandbox {
    /// One run: its summary (file `s`) joined with its trajectory files.
    fn run(&mut self, out: &mut Sink<'_>, s: usize, summary: &RunSummary, members: &[usize]) {
        let options = out.options(s).toolsandbox;
        if let Err(e) = options.validate() {
            for t in members {
                self.trajectories.remove(t);
            }
            out.reject_many(s, members.len() as u64, e);
            return;
        }
        let summary_name = out.name(s).to_string();
        let name = run_name(&summary_dir(&summary_name));
        if name.is_none() && out.options(s).model.is_none() {
            out.warn(
                s,
                None,
                "the run folder's name (agent_<model>_user_<user>_<timestamp>) is not in the \
                 file's path, so the model is unknown: set the model for the file, or give the \
                 path from the folder that starts with agent_"
                    .to_string(),
            );
        }
        let facts = RunFacts {
            name,
            git_sha: summary.git_sha.clone(),
        };
        for p in &summary.problems {
            out.reject(s, p.line, p.message.clone());
        }
        let mut sources = Vec::with_capacity(members.len());
        let mut files = Vec::with_capacity(members.len());
        for &t in members {
            let Some(p) = self.trajectories.remove(&t) else {
                continue;
            };
            sources.push((t, p.source));
            files.push(TrajectoryFile {
                scenario: trajectory_path(out.name(t)).scenario.unwrap_or_default(),
                kind: p.kind,
                read: p.read,
            });
        }
        let (outcomes, report, strays) = join_run(summary, &files, &facts, &options);
        let rows: HashMap<&str, &ScenarioRow> =
            summary.rows.iter().map(|r| (r.name.as_str(), r)).collect();
        let mut used = vec![false; files.len()];
        for (scenario, outcome) in outcomes {
            match outcome {
                Outcome::Rollout(mut d, i) => {
                    used[i] = true;
                    let (t, source) = sources[i];
                    d.apply(out.options(t));
                    out.import(t).paired_with = Some(summary_name.clone());
                    if let Some(row) = rows.get(scenario.as_str()) {
                        out.set_reread_context(
                            t,
                            Arc::new(RereadFacts {
                                row: (*row).clone(),
                                run: facts.clone(),
                                options,
                                kind: files[i].kind,
                            }),
                        );
                    }
                    emit(out, t, &d, None, source);
                }
                Outcome::Unreadable(i, e) => {
                    used[i] = true;
                    out.reject(sources[i].0, e.line, e.message);
                }
                Outcome::Skipped(Skip::ProviderError(kind), i) => {
                    used[i] = true;
                    // Counted on the trajectory file, so its empty result is explained.
                    *out.import(sources[i].0)
                        .excluded
                        .entry(format!("provider error {kind}"))
                        .or_default() += 1;
                }
            }
        }
        for i in strays {
            used[i] = true;
            out.reject(
                sources[i].0,
                None,
                format!(
                    "scenario {:?} is not listed in {summary_name} (or its trajectory was given \
                     twice); not scored",
                    files[i].scenario
                ),
            );
        }
        // A conversation.json beside its scenario's execution context is not read: the context
        // is the evidence. It names the file that was read instead.
        for (i, f) in files.iter().enumerate() {
            if used[i] {
                continue;
            }
            let read_instead = files
                .iter()
                .zip(&sources)
                .find(|(g, _)| {
                    g.scenario == f.scenario && g.kind == TrajectoryKind::ExecutionContext
                })
                .map_or(summary_name.clone(), |(_, (c, _))| out.name(*c).to_string());
            let import = out.import(sources[i].0);
            import.paired_with = Some(summary_name.clone());
            import.read_instead = Some(read_instead);
        }
        for m in report.messages() {
            out.warn(s, None, m);
        }
    }
}
