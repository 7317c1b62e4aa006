//! ToolSandbox as a [`FormatReader`]: a run folder is several files — `result_summary.json` and,
//! per scenario, `trajectories/<scenario>/execution_context.json` (and `conversation.json`) —
//! each recognised by content.
//!
//! A scenario is joined with its summary row and emitted as soon as both are in (its
//! execution context and the run's summary, matched by run folder), and what was held for it is
//! dropped: memory is bounded by the largest scenario plus the corpus, not by the run or the
//! number of runs. Files may come in any order. What cannot be decided on arrival waits for the
//! end of the input: a `conversation.json` (its execution context may still come; the context is
//! the evidence), a trajectory that came before its summary, and trajectories whose names lack
//! the run folder, which join the one summary that lists their scenario.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{
    is_conversation_message, is_execution_context, is_summary, join_scenario, model_from_folder,
    read_conversation, read_execution_context_scanned, read_summary_scanned, reread, run_name,
    run_name_without_agent_folder, summary_dir, trajectory_path, Joined, Located, RereadFacts,
    RunFacts, RunReport, RunSummary, Skip, Trajectory, TrajectoryKind, TrajectoryPath,
};
use crate::formats::canonical::emit;
use crate::formats::draft::Draft;
use crate::formats::scan::{LineCounter, Member, Scanned};
use crate::formats::{
    Format, FormatReader, Keys, LineShape, PreparedDocument, RereadContext, Sink,
};
use crate::rollout::Source;

/// The runs whose summary has come, and the trajectory files still waiting.
#[derive(Default)]
pub(crate) struct ToolSandbox {
    /// By the summary's file index.
    runs: BTreeMap<usize, Run>,
    /// Trajectory files whose run's summary has not come (or whose name lacks the run folder).
    waiting: BTreeMap<usize, Pending>,
    /// Bytes of the `conversation.json` files held unread ([`Read::Unread`]).
    unread: Arc<AtomicUsize>,
}

/// A trajectory file, read (or not).
struct Pending {
    kind: TrajectoryKind,
    scenario: String,
    run_dir: String,
    read: Read,
    source: Source,
}

/// A trajectory file's reading: an execution context is reduced to its calls on arrival; a
/// `conversation.json` is usually answered by its scenario's execution context, which comes
/// next in a run folder, so its bytes are kept unread until it is needed (at the input's end)
/// or dropped unread — within [`UNREAD_BUDGET`], past which it is read on arrival. Either way
/// the reading is the same (a pure function of the bytes).
enum Read {
    Done(Result<Trajectory, Located>),
    Unread(Unread),
}

/// Bytes of `conversation.json` files kept unread at most at any time, per reader.
const UNREAD_BUDGET: usize = 64 << 20;

/// A `conversation.json`'s bytes kept unread, counted in its reader's total while held.
struct Unread {
    bytes: Vec<u8>,
    held: Arc<AtomicUsize>,
}

impl Drop for Unread {
    fn drop(&mut self) {
        self.held.fetch_sub(self.bytes.len(), Ordering::Relaxed);
    }
}

impl Read {
    fn reading(&self) -> std::borrow::Cow<'_, Result<Trajectory, Located>> {
        match self {
            Read::Done(read) => std::borrow::Cow::Borrowed(read),
            Read::Unread(u) => std::borrow::Cow::Owned(read_conversation(&u.bytes)),
        }
    }
}

/// One run: its summary and what has been joined so far.
struct Run {
    /// The run folder (the summary's folder, normalised like a trajectory's).
    dir: String,
    summary: RunSummary,
    /// Scenario name → row index.
    rows: HashMap<String, usize>,
    facts: RunFacts,
    report: RunReport,
    /// Scenarios emitted (or skipped) from their execution context, with that file.
    from_context: HashMap<String, usize>,
    /// Scenarios read from a conversation.json alone (at the end of the input).
    from_conversation: HashSet<String>,
    /// A scenario's conversation.json, held until its execution context comes or the input ends.
    conversations: BTreeMap<String, (usize, Pending)>,
    /// Conversation files answered by an execution context, named for the file summary.
    read_instead: Vec<(usize, usize)>,
    /// The options' error, when the run's options are invalid: every trajectory is refused.
    invalid: Option<String>,
    refused: u64,
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
        self.prepared_document(out, file, format, bytes, open, None, None);
    }

    fn prepare_document(
        &self,
        format: Format,
        bytes: &[u8],
        scanned: Option<&Scanned>,
    ) -> Option<PreparedDocument> {
        Some(Box::new(read_document(format, bytes, scanned)))
    }

    fn prepare_encoded(
        &self,
        format: Format,
        bytes: &[u8],
        scanned: Option<&Scanned>,
    ) -> Option<Vec<u8>> {
        // A conversation's reading is its bytes, which the other side has: neither copied nor
        // sent again.
        let reading = match format {
            Format::ToolSandboxConversation => None,
            _ => Some(read_document(format, bytes, scanned)),
        };
        let wire = reading
            .as_ref()
            .map_or(WireReading::Conversation, Reading::wire);
        postcard::to_allocvec(&wire).ok()
    }

    fn decode_prepared(&self, _: Format, encoded: &[u8], bytes: &[u8]) -> Option<PreparedDocument> {
        let reading = match postcard::from_bytes::<OwnedWireReading>(encoded).ok()? {
            OwnedWireReading::Summary(read) => Reading::Summary(read),
            OwnedWireReading::Context(read) => Reading::Context(read),
            OwnedWireReading::Conversation => Reading::Conversation(bytes.to_vec()),
            OwnedWireReading::Other => Reading::Other,
        };
        Some(Box::new(reading))
    }

    fn prepared_document(
        &mut self,
        out: &mut Sink<'_>,
        file: usize,
        format: Format,
        bytes: &[u8],
        open: usize,
        scanned: Option<&Scanned>,
        prepared: Option<PreparedDocument>,
    ) {
        let reading = match prepared.and_then(|p| p.downcast::<Reading>().ok()) {
            Some(reading) => *reading,
            None => read_document(format, bytes, scanned),
        };
        match reading {
            Reading::Summary(read) => match read {
                Ok(s) => self.add_summary(out, file, s),
                Err(e) => out.reject(file, e.line, e.message),
            },
            Reading::Context(read) => {
                let kind = TrajectoryKind::ExecutionContext;
                self.trajectory(out, file, kind, Read::Done(read), bytes, open)
            }
            Reading::Conversation(unread) => {
                let held = self.unread.fetch_add(unread.len(), Ordering::Relaxed);
                let read = Read::Unread(Unread {
                    bytes: unread,
                    held: self.unread.clone(),
                });
                let read = if held.saturating_add(bytes.len()) <= UNREAD_BUDGET {
                    read
                } else {
                    Read::Done(read.reading().into_owned())
                };
                let kind = TrajectoryKind::Conversation;
                self.trajectory(out, file, kind, read, bytes, open)
            }
            Reading::Other => {}
        }
    }

    fn resolve(&mut self, out: &mut Sink<'_>) {
        // Trajectories still waiting: their run folder's summary never came, or their names
        // lack the run folder; they join the one summary that lists their scenario.
        for (t, p) in std::mem::take(&mut self.waiting) {
            let same_dir = self.run_in_folder(&p.run_dir);
            let candidates: Vec<usize> = match same_dir {
                Some(s) => vec![s],
                None => self
                    .runs
                    .iter()
                    .filter(|(_, r)| r.rows.contains_key(&p.scenario))
                    .map(|(&s, _)| s)
                    .collect(),
            };
            match candidates.as_slice() {
                [s] => self.join(out, *s, t, p),
                [] => out.reject(
                    t,
                    None,
                    format!(
                        "a ToolSandbox trajectory (scenario {:?}) needs its run's \
                         result_summary.json, which holds the scenario's verdict: add it to \
                         the same drop (it sits in the run folder, beside trajectories/)",
                        p.scenario
                    ),
                ),
                _ => out.reject(
                    t,
                    None,
                    format!(
                        "several result_summary.json files list scenario {:?}; drop \
                         one ToolSandbox run at a time, or keep each run's folders",
                        p.scenario
                    ),
                ),
            }
        }
        for (s, run) in std::mem::take(&mut self.runs) {
            finish_run(out, s, run);
        }
    }

    fn forget(&mut self, file: usize) {
        // A repeat is taken back before its document is read, so it left nothing behind; a
        // file that did is dropped whole.
        self.waiting.remove(&file);
        self.runs.remove(&file);
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

/// A ToolSandbox file's reading, which needs its bytes alone (done ahead natively, see
/// [`FormatReader::prepare_document`]).
enum Reading {
    Summary(Result<RunSummary, Located>),
    /// An execution context reduced to its calls: the file's bytes are not kept.
    Context(Result<Trajectory, Located>),
    /// A conversation's bytes (see [`Read`]).
    Conversation(Vec<u8>),
    Other,
}

impl Reading {
    /// The reading as sent between workers (a conversation's without its bytes).
    fn wire(&self) -> WireReading<'_> {
        match self {
            Reading::Summary(read) => WireReading::Summary(read),
            Reading::Context(read) => WireReading::Context(read),
            Reading::Conversation(_) => WireReading::Conversation,
            Reading::Other => WireReading::Other,
        }
    }
}

/// A [`Reading`] as sent between workers ([`FormatReader::prepare_encoded`]).
#[derive(serde::Serialize)]
enum WireReading<'r> {
    Summary(&'r Result<RunSummary, Located>),
    Context(&'r Result<Trajectory, Located>),
    Conversation,
    Other,
}

/// [`WireReading`] read back (the same variants, in the same order).
#[derive(serde::Deserialize)]
enum OwnedWireReading {
    Summary(Result<RunSummary, Located>),
    Context(Result<Trajectory, Located>),
    Conversation,
    Other,
}

fn read_document(format: Format, bytes: &[u8], scanned: Option<&Scanned>) -> Reading {
    match format {
        Format::ToolSandboxSummary => Reading::Summary(read_summary_scanned(bytes, scanned)),
        Format::ToolSandboxContext => {
            Reading::Context(read_execution_context_scanned(bytes, scanned))
        }
        Format::ToolSandboxConversation => Reading::Conversation(bytes.to_vec()),
        _ => Reading::Other,
    }
}

impl ToolSandbox {
    /// A trajectory file read: it joins its run now, or waits for the run's summary.
    fn trajectory(
        &mut self,
        out: &mut Sink<'_>,
        file: usize,
        kind: TrajectoryKind,
        read: Read,
        bytes: &[u8],
        open: usize,
    ) {
        let TrajectoryPath { run_dir, scenario } = trajectory_path(out.name(file));
        let Some(scenario) = scenario else {
            out.reject(
                file,
                None,
                "a ToolSandbox trajectory file is known by its folder \
                 (trajectories/<scenario>/…): drop or pick the run folder, or give the \
                 file with its path"
                    .to_string(),
            );
            return;
        };
        let source = Source {
            file: file as u32,
            line: LineCounter::new(bytes).line_at(open),
            offset: open as u64,
            len: u32::try_from(bytes.len() - open).unwrap_or(u32::MAX),
        };
        let pending = Pending {
            kind,
            scenario,
            run_dir,
            read,
            source,
        };
        match self.run_in_folder(&pending.run_dir) {
            Some(s) => self.join(out, s, file, pending),
            None => {
                self.waiting.insert(file, pending);
            }
        }
    }

    /// The run whose summary sits in `run_dir` (an empty folder matches none).
    fn run_in_folder(&self, run_dir: &str) -> Option<usize> {
        if run_dir.is_empty() {
            return None;
        }
        self.runs
            .iter()
            .find(|(_, r)| r.dir == run_dir)
            .map(|(&s, _)| s)
    }

    /// A summary has come: its run starts, and the trajectories that waited for it join it.
    fn add_summary(&mut self, out: &mut Sink<'_>, s: usize, summary: RunSummary) {
        let summary_name = out.name(s).to_string();
        let dir = summary_dir(&summary_name);
        let mut name = run_name(&dir);
        let mut fallback_model = None;
        if name.is_none() && out.options(s).model.is_none() {
            name = run_name_without_agent_folder(&dir);
            let stem = summary_name
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or(&summary_name)
                .trim_end_matches(".json")
                .to_string();
            let model = match &name {
                Some(n) => n.agent.clone(),
                None => model_from_folder(&dir, &stem),
            };
            out.warn(
                s,
                None,
                format!(
                    "the run folder's name (agent_<model>_user_<user>_<timestamp>) is not in the \
                     file's path, so the model is taken from {}: {model:?}; set the model for \
                     the run to name it otherwise",
                    if name.is_some() {
                        "the folder <model>_user_<user>_<timestamp>"
                    } else if dir.is_empty() {
                        "the summary file's name"
                    } else {
                        "the run folder's own name"
                    }
                ),
            );
            fallback_model = Some(model);
        }
        let rows = summary
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name.clone(), i))
            .collect();
        let run = Run {
            dir: dir.clone(),
            report: RunReport::new(&summary),
            facts: RunFacts {
                name,
                git_sha: summary.git_sha.clone(),
                fallback_model,
            },
            summary,
            rows,
            from_context: HashMap::new(),
            from_conversation: HashSet::new(),
            conversations: BTreeMap::new(),
            read_instead: Vec::new(),
            invalid: out.options(s).toolsandbox.validate().err(),
            refused: 0,
        };
        self.runs.insert(s, run);
        if dir.is_empty() {
            return;
        }
        let joining: Vec<usize> = self
            .waiting
            .iter()
            .filter(|(_, p)| p.run_dir == dir)
            .map(|(&t, _)| t)
            .collect();
        for t in joining {
            if let Some(p) = self.waiting.remove(&t) {
                self.join(out, s, t, p);
            }
        }
    }

    /// Trajectory file `t` of run `s`: its scenario is emitted now from an execution context;
    /// a conversation.json waits for its scenario's execution context (or the input's end).
    fn join(&mut self, out: &mut Sink<'_>, s: usize, t: usize, p: Pending) {
        let summary_name = out.name(s).to_string();
        let Some(run) = self.runs.get_mut(&s) else {
            return;
        };
        if run.invalid.is_some() {
            run.refused += 1;
            return;
        }
        let stray = |out: &mut Sink<'_>, t: usize, scenario: &str| {
            out.reject(
                t,
                None,
                format!(
                    "scenario {scenario:?} is not listed in {summary_name} (or its trajectory \
                     was given twice); not scored"
                ),
            )
        };
        if !run.rows.contains_key(&p.scenario) || run.from_conversation.contains(&p.scenario) {
            return stray(out, t, &p.scenario);
        }
        match p.kind {
            TrajectoryKind::Conversation => {
                if let Some(&c) = run.from_context.get(&p.scenario) {
                    run.read_instead.push((t, c));
                } else if run.conversations.contains_key(&p.scenario) {
                    stray(out, t, &p.scenario);
                } else {
                    run.conversations.insert(p.scenario.clone(), (t, p));
                }
            }
            TrajectoryKind::ExecutionContext => {
                if run.from_context.contains_key(&p.scenario) {
                    return stray(out, t, &p.scenario);
                }
                run.from_context.insert(p.scenario.clone(), t);
                if let Some((c, _)) = run.conversations.remove(&p.scenario) {
                    run.read_instead.push((c, t));
                }
                emit_scenario(out, s, run, t, &p);
            }
        }
    }
}

/// Joins one scenario of run `s` (from trajectory file `t`) and emits its rollout.
fn emit_scenario(out: &mut Sink<'_>, s: usize, run: &mut Run, t: usize, p: &Pending) {
    let summary_name = out.name(s).to_string();
    let mut options = out.options(s).toolsandbox;
    // The one crash policy decides; the run's own option is what "as the benchmark" means for
    // ToolSandbox (provider errors are left out unless kept).
    options.keep_provider_errors = out.options(s).crashed.counts(options.keep_provider_errors);
    let row = &run.summary.rows[run.rows[&p.scenario]];
    match join_scenario(
        row,
        &p.read.reading(),
        &run.facts,
        &options,
        &mut run.report,
    ) {
        Joined::Rollout(mut d) => {
            d.apply(out.options(t));
            d.run = Some(if run.dir.is_empty() {
                summary_name.clone()
            } else {
                run.dir.clone()
            });
            out.import(t).paired_with = Some(summary_name);
            out.set_reread_context(
                t,
                Arc::new(RereadFacts {
                    row: row.clone(),
                    run: run.facts.clone(),
                    options,
                    kind: p.kind,
                }),
            );
            emit(out, t, &d, None, p.source);
        }
        Joined::Unreadable(e) => out.reject(t, e.line, e.message),
        // Counted on the trajectory file, so its empty result is explained.
        Joined::Skipped(Skip::ProviderError(kind)) => {
            *out.import(t)
                .excluded
                .entry(format!("provider error {kind}"))
                .or_default() += 1;
        }
    }
}

/// The end of the input for run `s`: scenarios with a conversation.json alone are read from it,
/// the files answered by an execution context say so, and the run's notes are written.
fn finish_run(out: &mut Sink<'_>, s: usize, mut run: Run) {
    let summary_name = out.name(s).to_string();
    if let Some(e) = run.invalid.take() {
        out.reject_many(s, run.refused, e);
        return;
    }
    for p in &run.summary.problems {
        out.reject(s, p.line, p.message.clone());
    }
    for (scenario, (t, p)) in std::mem::take(&mut run.conversations) {
        run.from_conversation.insert(scenario);
        emit_scenario(out, s, &mut run, t, &p);
    }
    // A conversation.json beside its scenario's execution context is not read: the context is
    // the evidence. It names the file that was read instead.
    for &(conversation, context) in &run.read_instead {
        let instead = out.name(context).to_string();
        let import = out.import(conversation);
        import.paired_with = Some(summary_name.clone());
        import.read_instead = Some(instead);
    }
    let mut report = run.report;
    report.missing = run
        .summary
        .rows
        .iter()
        .filter(|r| {
            !run.from_context.contains_key(&r.name) && !run.from_conversation.contains(&r.name)
        })
        .map(|r| r.name.clone())
        .collect();
    for m in report.messages() {
        out.warn(s, None, m);
    }
    if let Some(m) = report.passed_check() {
        out.passed(s, m);
    }
}
