//! The `prefix-exec` command line (`score`, `convert`, `site`), native only. It lives in the
//! library, not in the binary, so that other front ends (the Python package's `prefix-exec`
//! command) run the very same code: same subcommands, flags, output and exit codes.
//! `src/bin/prefix-exec.rs` only calls [`main_with`].

use std::ffi::OsString;
use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use crate::formats::transcript::mapping::FieldMap;
use crate::formats::transcript::reject::RejectSettings;
use crate::formats::ImportOptions;
use crate::ingest::{Ingest, PreparedFile};
use crate::label::LabelSettings;
use crate::report::{build_report_full, table, ConditionRef, Settings};
use crate::score::MaxDepth;

#[derive(Parser)]
#[command(
    name = "prefix-exec",
    version,
    about = "Prefix-executability metrics (PEC, FED, TER, AUC-PEC, RR) for tool-using LLM agents",
    long_about = "Scores rollout logs of tool-using agents by prefix executability: per-rollout \
                  first-error depth, fixed-cohort PEC survival curves, TER, AUC-PEC, recovery \
                  rate and final success, with task-level paired bootstrap intervals and Wilson \
                  intervals for RR. The same core runs in the browser app."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Score rollout files: print the main table and write the report JSON.
    #[command(after_help = "Examples:\n  \
        prefix-exec score runs.jsonl\n  \
        prefix-exec score a.jsonl b.jsonl --bootstrap 2000 --seed 7 --json report.json\n  \
        prefix-exec score runs.jsonl --pair Dual-Loop,\"Plan-Cond. ReAct\" --json - | jq .paired\n  \
        prefix-exec score a.json b.json --compare claude-opus-4-6 experimental_agent \
        openai/gpt-oss-120b langchain_agent --json - | jq .paired\n  \
        prefix-exec score runs.jsonl --bootstrap 0 --max-depth all")]
    Score(ScoreArgs),
    /// Convert released runs (tau-bench, tau2-bench, BFCL multi-turn, canonical) into one
    /// canonical JSONL file that `score` reads back to the same numbers.
    #[command(
        after_help = "Formats are recognised by content: tau-bench result arrays, \
        tau2 Results files (or a results.json with its simulation files), BFCL result files \
        with their score files, canonical JSONL.\n\nExamples:\n  \
        prefix-exec convert gpt-4o-airline.json -o tau-bench.jsonl\n  \
        prefix-exec convert result/m/multi_turn/BFCL_v4_multi_turn_base_result.json \
        score/m/multi_turn/BFCL_v4_multi_turn_base_score.json -o bfcl.jsonl\n  \
        prefix-exec convert run.json --exclude-termination infrastructure_error --model gpt-5 -o run.jsonl"
    )]
    Convert(ConvertArgs),
    /// Publish a report as a static site: the app, the data (canonical JSONL) and a
    /// report.json manifest with each data file's SHA-256 — plain files for any static host.
    #[command(
        after_help = "The site opens straight into the report: the app loads report.json \
        and its data by itself and recomputes every number in the reader's browser.\n\n\
        Examples:\n  \
        prefix-exec site runs.jsonl -o site --title \"Agent runs, Nov 2026\"\n  \
        prefix-exec site gpt-4o-airline.json -o site --description \"tau-bench, gpt-4o\"\n  \
        python3 -m http.server --directory site   # then open http://127.0.0.1:8000/"
    )]
    Site(SiteArgs),
    /// Search every rollout's tool names, call arguments, the replies of rejected calls and
    /// the messages for a regular expression (case-insensitive unless it says "(?-i)").
    #[command(
        after_help = "Each hit is one field of one step (or a message) of one rollout: \
        condition, task, trial, step and a snippet with the first match marked [[like this]].\n\n\
        Examples:\n  \
        prefix-exec search runs/ --query 'no such file'\n  \
        prefix-exec search runs/ --query '^(cd|ls)$' --field tool --json | jq length\n  \
        prefix-exec search runs/ --query 'timeout|rate limit' --field error \
        --condition toolsandbox gpt-4.1 default"
    )]
    // `--field` says where to search; the transcripts' field mapping (`score --field`) is
    // `--map-field` here.
    #[command(mut_arg("fields", |a| a.long("map-field")))]
    Search(SearchArgs),
}

#[derive(Args)]
struct SearchArgs {
    /// Rollout files of any supported format, or folders (read recursively), as for `score`.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The regular expression (the regex crate's syntax; case-insensitive by default).
    #[arg(long, short = 'e', value_name = "REGEX", allow_hyphen_values = true)]
    query: String,
    /// Where to look: tool (tool names), args (call arguments as compact JSON), error (the
    /// whole reply text of rejected calls), message (the messages in the rollout's source), or
    /// all.
    #[arg(long, default_value = "all", value_parser = ["tool", "args", "error", "message", "all"])]
    field: String,
    /// Only this condition (repeatable): three separate arguments.
    #[arg(
        long = "condition",
        num_args = 3,
        value_names = ["DATASET", "MODEL", "METHOD"],
        allow_hyphen_values = true,
        action = clap::ArgAction::Append
    )]
    conditions: Vec<String>,
    /// Skip this many hits (paging).
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// At most this many hits (default: all).
    #[arg(long)]
    limit: Option<usize>,
    /// Print the hits as a JSON array (dataset, model, method, task_id, trial, step, field,
    /// text, with mark, matches and rollout) instead of lines.
    #[arg(long)]
    json: bool,
    /// Threads for reading and matching (default: every available core); the hits are the
    /// same for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// Read every rollout's texts into a search index first, then search the index (what the
    /// browser's worker does, so that its later searches need not read again): the same hits;
    /// for tests and benchmarks of the index.
    #[arg(long, hide = true)]
    indexed: bool,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    import: ImportArgs,
}

#[derive(Args)]
struct SiteArgs {
    /// Input files of any supported format, or folders (read recursively); they are
    /// converted to one canonical JSONL file.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The folder to write (created; must be empty if it exists).
    #[arg(long, short, value_name = "DIR")]
    output: PathBuf,
    /// The report's title.
    #[arg(long, default_value = "Prefix-executability report")]
    title: String,
    /// A description shown under the title (plain text; blank lines separate paragraphs).
    #[arg(long, default_value = "")]
    description: String,
    #[command(flatten)]
    report: ReportArgs,
    /// Publish the report of the rollouts this filter keeps (the grammar of `score --filter`;
    /// repeatable, clauses added). The data holds every rollout; the page states the filter
    /// and recomputes the filtered report from the data.
    #[arg(long = "filter", value_name = "EXPR")]
    filter: Vec<String>,
    /// Publish the report of the tasks every condition of a dataset ran (the common cohort).
    #[arg(long)]
    common_tasks: bool,
    /// Store the data gzip-compressed (the app decompresses it in the browser).
    #[arg(long)]
    gzip: bool,
    /// The built app (Trunk's release dist/); default: dist/ next to the executable or in
    /// the source tree it was built from (rebuilt with trunk when missing).
    #[arg(long, value_name = "DIR")]
    app: Option<PathBuf>,
    #[command(flatten)]
    import: ImportArgs,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

/// Report settings shared by `score` and `site`.
#[derive(Args)]
struct ReportArgs {
    /// Bootstrap resamples (0 disables the bootstrap intervals).
    #[arg(long, default_value_t = 10_000)]
    bootstrap: u32,
    /// Seed of the resampler: same input + same seed = byte-identical report.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Confidence level of every interval.
    #[arg(long, default_value_t = 0.95)]
    level: f64,
    /// PEC depths: a number K (k = 1..K), or "all" (up to the longest rollout).
    #[arg(long, default_value = "10", value_parser = parse_depth)]
    max_depth: MaxDepth,
    /// Threads for the bootstrap, the intervals and the parse of large canonical JSONL files
    /// (default: every available core). The report is byte-identical for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

impl ReportArgs {
    /// The checked settings, comparing the given pairs; sizes the thread pool as asked.
    fn settings(&self, pairs: Vec<(String, String)>) -> Result<Settings> {
        if let Some(n) = self.threads {
            rayon::ThreadPoolBuilder::new()
                .num_threads(usize::from(n))
                .build_global()
                .context("cannot start the thread pool")?;
        }
        let settings = Settings {
            bootstrap: self.bootstrap,
            seed: self.seed,
            level: self.level,
            max_depth: self.max_depth,
            pairs,
            compare: Vec::new(),
            filter: None,
        };
        settings.validate().map_err(anyhow::Error::msg)?;
        Ok(settings)
    }
}

/// Import options shared by `score` and `convert`; they apply to every input file.
#[derive(Args)]
struct ImportArgs {
    /// Use this dataset name for every rollout (instead of the one the format implies).
    #[arg(long)]
    dataset: Option<String>,
    /// Use this model name for every rollout.
    #[arg(long)]
    model: Option<String>,
    /// Use this method name for every rollout.
    #[arg(long)]
    method: Option<String>,
    /// Leave out rollouts with this termination reason (tau2, or a canonical
    /// meta.termination_reason), e.g. infrastructure_error; repeatable. Exclusions are
    /// counted and reported.
    #[arg(long = "exclude-termination", value_name = "REASON")]
    exclude_termination: Vec<String>,
    /// Do not check steps against the tool definitions a file carries.
    #[arg(long)]
    no_schema_checks: bool,
    /// First-failure label rules (a JSON array of {id, label, error, tool, except_tool,
    /// args, dataset, no_tool, reference, rationale}; see docs/metrics.md); they take
    /// precedence over the built-in rules.
    #[arg(long, value_name = "FILE")]
    label_rules: Option<PathBuf>,
    /// Do not use the built-in label rules: first failures keep only the labels their logs
    /// (or the schema check) give, as before the labeller existed.
    #[arg(long)]
    no_builtin_labels: bool,
    /// Inspect logs: the scorer whose value decides success (default: the log's first
    /// result score).
    #[arg(long, value_name = "NAME")]
    scorer: Option<String>,
    /// Inspect logs: the score value that means success (e.g. I for a scorer whose I means
    /// "safe"); other string values mean failure.
    #[arg(long, value_name = "VALUE")]
    success_value: Option<String>,
    /// Inspect logs: numeric scores succeed at or above this (default 1.0).
    #[arg(long, value_name = "X")]
    threshold: Option<f64>,
    /// Inspect logs: keep samples that errored (sandbox or provider crash) as failures
    /// instead of excluding them.
    #[arg(long)]
    keep_errored: bool,
    /// ToolSandbox: a scenario succeeds when it did not raise and its similarity is at least
    /// this (the benchmark defines no threshold; the report states the one used).
    #[arg(long, value_name = "TAU", default_value_t = crate::formats::toolsandbox::DEFAULT_TAU)]
    similarity_threshold: f64,
    /// ToolSandbox: keep scenarios that failed with a provider error (BadRequestError,
    /// InternalServerError, APITimeoutError) as failures instead of excluding them.
    #[arg(long)]
    keep_provider_errors: bool,
    /// Leave out BFCL inference errors (result lines with a traceback and no trajectory)
    /// instead of scoring them as rollouts that failed before any step, as the leaderboard
    /// does; they are counted and reported.
    #[arg(long)]
    exclude_inference_errors: bool,
    /// Episodes, samples and tests that crashed (an infrastructure or provider error: tau-bench
    /// episodes with an empty trajectory and info.error, BFCL inference errors, errored Inspect
    /// samples, ToolSandbox provider errors): `benchmark` counts them as each benchmark's
    /// leaderboard does (tau-bench, BFCL: failed rollouts; Inspect, ToolSandbox: left out),
    /// `count` counts them as failed rollouts for every format, `exclude` leaves them out for
    /// every format. Counted crashes are reported per condition.
    #[arg(long, value_name = "POLICY", default_value = "benchmark", value_parser = parse_crash_policy)]
    crashed: crate::formats::CrashPolicy,
    /// Message transcripts: where a field comes from, as FIELD=PATH (a dotted path into the
    /// record, e.g. success=evaluation.utility, task=meta.id, threshold=0.5); repeatable. Fields
    /// not set are detected (docs/formats.md lists the names looked for).
    #[arg(long = "field", value_name = "FIELD=PATH")]
    fields: Vec<String>,
    /// Message transcripts: a field mapping as a JSON file ({"success": "…", "threshold": 1,
    /// "task": "…", "model": "…", "method": "…", "dataset": "…"}); --field wins over it.
    #[arg(long, value_name = "FILE")]
    mapping: Option<PathBuf>,
    /// Message transcripts: the text rules for rejected calls (a JSON array of {id, pattern},
    /// patterns regular expressions on the reply's text), instead of the built-in ones.
    #[arg(long, value_name = "FILE")]
    reject_rules: Option<PathBuf>,
    /// Message transcripts: no text rules; only explicit error flags, unanswered calls and
    /// arguments that are not JSON reject a call.
    #[arg(long)]
    no_reject_text_rules: bool,
    /// Score the runs of one model and method (two ToolSandbox run folders, two tau-bench or
    /// tau2 files of one model, …) as trials of one condition. Without it each run is a
    /// condition of its own, its method naming the run (`default (run 2025-08-15 23:27:18)`).
    #[arg(long)]
    merge_runs: bool,
    /// Print every problem found in the input (the first 1,000), one a line, instead of one
    /// line per kind of problem with its count and its first example.
    #[arg(long)]
    verbose: bool,
}

fn parse_crash_policy(s: &str) -> std::result::Result<crate::formats::CrashPolicy, String> {
    crate::formats::CrashPolicy::parse(s)
        .ok_or_else(|| format!("expected benchmark, count or exclude, got {s:?}"))
}

impl ImportArgs {
    fn options(&self) -> Result<ImportOptions> {
        let rules = match &self.label_rules {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                LabelSettings::parse_user_rules(&text)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
            }
            None => Vec::new(),
        };
        let toolsandbox = crate::formats::toolsandbox::Options {
            tau: self.similarity_threshold,
            keep_provider_errors: self.keep_provider_errors,
        };
        toolsandbox.validate().map_err(anyhow::Error::msg)?;
        let read = |path: &PathBuf| {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
        };
        let mut fields = match &self.mapping {
            Some(path) => FieldMap::parse(&read(path)?)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
            None => FieldMap::default(),
        };
        for f in &self.fields {
            fields.set(f).map_err(|e| anyhow::anyhow!("--field: {e}"))?;
        }
        let reject_rules = match &self.reject_rules {
            Some(path) => Some(
                RejectSettings::parse_rules(&read(path)?)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
            ),
            None => None,
        };
        let transcript = crate::formats::transcript::Options {
            fields,
            reject: RejectSettings {
                text_rules: !self.no_reject_text_rules,
                rules: reject_rules,
            },
        };
        Ok(ImportOptions {
            transcript,
            dataset: self.dataset.clone(),
            model: self.model.clone(),
            method: self.method.clone(),
            exclude_termination: self.exclude_termination.clone(),
            schema_checks: !self.no_schema_checks,
            exclude_inference_errors: self.exclude_inference_errors,
            crashed: self.crashed,
            merge_runs: self.merge_runs,
            labels: LabelSettings {
                builtin: !self.no_builtin_labels,
                rules,
            },
            inspect: crate::formats::inspect::InspectOptions {
                scorer: self.scorer.clone(),
                success_value: self.success_value.clone(),
                threshold: self.threshold,
                keep_errored: self.keep_errored,
                ..Default::default()
            },
            toolsandbox,
        })
    }
}

/// The files to read: each path as given, a folder walked recursively for its `.json` and
/// `.jsonl` files (in name order, so a run folder — a ToolSandbox run, a tau2 directory
/// form, BFCL's result/ and score/ — reads the same every time). Other files in folders
/// (`pretty_print.txt`, logs) are skipped, and their number said.
fn expand(paths: &[PathBuf]) -> Result<Vec<Input>> {
    expand_inputs(paths.iter().cloned().map(Input::Path).collect())
}

/// [`expand`] over [`Input`]s: folders are expanded, files and bytes in memory kept in place.
fn expand_inputs(inputs: Vec<Input>) -> Result<Vec<Input>> {
    /// A folder's files, in name order, and how many were skipped. Its subfolders are walked
    /// on the thread pool, each into a list of its own, joined in name order: the list, and the
    /// first error in that order, are the one-by-one walk's.
    fn walk(dir: &Path) -> Result<(Vec<Input>, u64)> {
        // With each entry's type as the folder listing gives it (no `stat` per file); a
        // symbolic link, or an entry of unknown type, is followed as `Path::is_dir` does.
        let mut entries: Vec<(PathBuf, Option<std::fs::FileType>)> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the folder {}", dir.display()))?
            .map(|e| e.map(|e| (e.path(), e.file_type().ok())))
            .collect::<std::io::Result<_>>()
            .with_context(|| format!("cannot read the folder {}", dir.display()))?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        enum Entry {
            File(PathBuf),
            Dir(PathBuf),
            Skipped,
        }
        let entries: Vec<Entry> = entries
            .into_iter()
            .filter(|(p, _)| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .map(|(p, kind)| {
                let is_dir = match kind {
                    Some(kind) if !kind.is_symlink() => kind.is_dir(),
                    _ => p.is_dir(),
                };
                let listed = p.extension().is_some_and(|x| {
                    [
                        "json", "jsonl", "eval", "zip", "tar", "tgz", "gz", "zst", "tzst",
                    ]
                    .iter()
                    .any(|e| x.eq_ignore_ascii_case(e))
                });
                match (is_dir, listed) {
                    (true, _) => Entry::Dir(p),
                    (false, true) => Entry::File(p),
                    (false, false) => Entry::Skipped,
                }
            })
            .collect();
        let dirs: Vec<&PathBuf> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Dir(p) => Some(p),
                _ => None,
            })
            .collect();
        let mut walked = crate::parallel::map(&dirs, |d| walk(d)).into_iter();
        let (mut out, mut skipped) = (Vec::new(), 0);
        for entry in entries {
            match entry {
                Entry::File(p) => out.push(Input::Path(p)),
                Entry::Skipped => skipped += 1,
                Entry::Dir(_) => {
                    let (files, n) = walked.next().expect("one walk per folder")?;
                    out.extend(files);
                    skipped += n;
                }
            }
        }
        Ok((out, skipped))
    }
    let mut out = Vec::new();
    let mut skipped = 0;
    for input in inputs {
        match input {
            Input::Path(p) if p.is_dir() => {
                let (files, n) = walk(&p)?;
                if files.is_empty() {
                    bail!(
                        "the folder {} holds no .json, .jsonl, .eval or archive file",
                        p.display()
                    );
                }
                out.extend(files);
                skipped += n;
            }
            other => out.push(other),
        }
    }
    if skipped > 0 {
        eprintln!(
            "prefix-exec: {skipped} files in the given folders are not .json, .jsonl, Inspect \
             .eval or archive files and were skipped"
        );
    }
    Ok(out)
}

#[derive(Args)]
struct ConvertArgs {
    /// Input files of any supported format, or folders (read recursively); files that
    /// belong together (a BFCL result and its score file, a tau2 results.json and its
    /// simulation files, a ToolSandbox run folder) must be given together.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The canonical JSONL file to write, or "-" for stdout.
    #[arg(long, short, value_name = "OUT|-")]
    output: String,
    #[command(flatten)]
    import: ImportArgs,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
struct ScoreArgs {
    /// Rollout files of any supported format, or folders (read recursively, e.g. a
    /// ToolSandbox run folder); rows of all files are pooled.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
    /// Restrict paired comparisons to methods (or models) A and B; repeatable.
    #[arg(long = "pair", value_name = "A,B", value_parser = parse_pair)]
    pairs: Vec<(String, String)>,
    /// Also compare condition A with condition B (any two conditions of a dataset, paired
    /// by task on their shared tasks): four separate arguments, so names may hold any
    /// character (quote those with spaces); repeatable.
    #[arg(
        long = "compare",
        num_args = 4,
        value_names = ["MODEL_A", "METHOD_A", "MODEL_B", "METHOD_B"],
        allow_hyphen_values = true,
        action = clap::ArgAction::Append
    )]
    compare: Vec<String>,
    /// Score only the rollouts this filter keeps, recomputing every number on them: clauses
    /// such as "model=gpt-4.1,gpt-5", "task~^multi_turn", "trial=1", "outcome!=crashed",
    /// "label=schema", "meta.termination_reason!=max_steps", joined by ";" (docs/search.md);
    /// repeatable (the clauses add up).
    #[arg(long = "filter", value_name = "EXPR")]
    filter: Vec<String>,
    /// Score only the tasks every condition of a dataset ran (the common cohort; the filter
    /// clause "common", applied after the other clauses).
    #[arg(long)]
    common_tasks: bool,
    /// Write the report JSON (prefix-exec/report/v1) to this file, or "-" for stdout
    /// (the table then goes to stderr).
    #[arg(long, value_name = "OUT|-")]
    json: Option<String>,
    /// Write the failure clusters (every failed rollout's first rejected call grouped by
    /// label, tool and normalised message, counted per condition) as CSV to this file, or "-"
    /// for stdout.
    #[arg(long, value_name = "OUT|-")]
    clusters: Option<String>,
    /// Decimal places in the table.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=6))]
    decimals: u8,
    /// Table layout: "paper" (a block per dataset × model, methods as rows) or
    /// "leaderboard" (a block per dataset, a row per condition); default: leaderboard when
    /// every model has a single method.
    #[arg(long, value_parser = ["paper", "leaderboard"])]
    layout: Option<String>,
    /// No progress output.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    import: ImportArgs,
}

fn parse_depth(s: &str) -> Result<MaxDepth, String> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(MaxDepth::All);
    }
    s.parse::<u32>()
        .ok()
        .filter(|&k| (1..=crate::score::MAX_DEPTH_CAP).contains(&k))
        .map(MaxDepth::Fixed)
        .ok_or_else(|| {
            format!(
                "expected a depth from 1 to {} or \"all\", got {s:?}",
                crate::score::MAX_DEPTH_CAP
            )
        })
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once(',') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() && a != b => {
            Ok((a.to_string(), b.to_string()))
        }
        _ => Err(format!(
            "expected two different names separated by a comma, got {s:?}"
        )),
    }
}

/// Runs the command line on `args` (the first item is the program's name, as in
/// `std::env::args_os`) and returns the process's exit code: 0 on success, 1 when no valid
/// rollout was read, 2 on any other error (clap's own code for usage errors, 0 for `--help`).
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    ExitCode::from(run(args))
}

/// [`main_with`], returning the exit code as a number (for callers that are not `main`, such
/// as the Python package, which cannot read one out of an [`ExitCode`]).
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // What `Cli::parse` does, without ending the process: help and version on stdout,
            // usage errors on stderr.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let result = match cli.command {
        Command::Score(args) => score(args),
        Command::Convert(args) => convert(args),
        Command::Site(args) => site(args),
        Command::Search(args) => search(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("prefix-exec: {e:#}");
            2
        }
    }
}

/// Progress lines on stderr, only when it is a terminal and not more than ~5 per second.
struct Progress {
    enabled: bool,
    last: Instant,
}

impl Progress {
    fn new(quiet: bool) -> Self {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            last: Instant::now(),
        }
    }
    fn show(&mut self, text: &str) {
        if self.enabled && self.last.elapsed().as_millis() >= 200 {
            self.last = Instant::now();
            eprint!("\r\x1b[2K{text}");
        }
    }
    fn done(&mut self) {
        if self.enabled {
            eprint!("\r\x1b[2K");
        }
    }
}

/// `score`'s checked settings (`--pair`s and `--compare`s included); sizes the thread pool as
/// `--threads` asks.
fn score_settings(args: &ScoreArgs) -> Result<Settings> {
    let mut settings = args.report.settings(args.pairs.clone())?;
    // clap hands each `--compare` over as exactly four values, in order.
    settings.compare = args
        .compare
        .chunks_exact(4)
        .map(|c| {
            (
                ConditionRef::new(&c[0], &c[1]),
                ConditionRef::new(&c[2], &c[3]),
            )
        })
        .collect();
    settings.filter = filter_of(&args.filter, args.common_tasks)?;
    settings.validate().map_err(anyhow::Error::msg)?;
    Ok(settings)
}

/// The filter of `--filter`s (their clauses added) and `--common-tasks`; `None` when it keeps
/// everything.
fn filter_of(texts: &[String], common_tasks: bool) -> Result<Option<crate::filter::Filter>> {
    let mut filter = crate::filter::Filter::default();
    for text in texts {
        filter = filter.and(crate::filter::Filter::parse(text)?);
    }
    if common_tasks {
        filter = filter.and(crate::filter::Filter::common_tasks());
    }
    Ok(filter.is_active().then_some(filter))
}

/// The message when a filter keeps no rollout (nothing to score), or `None`.
fn filter_emptied(report: &crate::report::Report) -> Option<String> {
    let filter = report.settings.filter.as_ref()?;
    report
        .conditions
        .is_empty()
        .then(|| format!("the filter {filter} keeps no rollout; nothing to score (loosen it)"))
}

/// Reads `inputs` (already expanded) into a corpus, as `score` reads its files.
fn read_corpus(
    inputs: &[Input],
    options: &ImportOptions,
    progress: &mut Progress,
) -> Result<(crate::rollout::Corpus, crate::formats::ImportSummary)> {
    let mut ingest = Ingest::new();
    read_inputs(&mut ingest, inputs, options, progress, &mut |_| Ok(()))?;
    let result = ingest.finish_with_summary();
    progress.done();
    Ok(result)
}

/// The command's files read into a corpus, their diagnostics printed; `None` (with a message
/// ending in `then`) when no valid rollout was read.
fn read_rollouts(
    files: &[PathBuf],
    import: &ImportArgs,
    progress: &mut Progress,
    then: &str,
) -> Result<
    Option<(
        Vec<Input>,
        crate::rollout::Corpus,
        crate::formats::ImportSummary,
    )>,
> {
    let inputs = expand(files)?;
    let (corpus, summary) = read_corpus(&inputs, &import.options()?, progress)?;
    print_diagnostics(&corpus, import.verbose);
    if corpus.rollouts.is_empty() {
        eprintln!("prefix-exec: no valid rollout was read; {then}");
        return Ok(None);
    }
    Ok(Some((inputs, corpus, summary)))
}

/// Hands a filter that names `meta.*` keys the metadata of every rollout of `corpus`, re-read
/// from `inputs` (the corpus keeps none) on the thread pool; the lines about rollouts whose
/// metadata could not be read (their `meta.*` values are absent).
fn resolve_meta(
    settings: &mut Settings,
    corpus: &crate::rollout::Corpus,
    summary: &crate::formats::ImportSummary,
    inputs: &[Input],
) -> Vec<String> {
    use crate::search::ByteSource;
    let Some(filter) = settings.filter.take() else {
        return Vec::new();
    };
    let keys = filter.meta_keys();
    if keys.is_empty() {
        settings.filter = Some(filter);
        return Vec::new();
    }
    let memory = in_memory(inputs);
    let indices: Vec<usize> = (0..corpus.rollouts.len()).collect();
    let chunks = read_chunks(corpus, &indices);
    let read = crate::parallel::map(&chunks, |chunk| {
        let mut source = InputSource::new(&memory);
        chunk
            .iter()
            .map(|&i| {
                source
                    .read(corpus, i)
                    .and_then(|bytes| summary.rollout_line(corpus, i, &bytes))
                    .map(|line| crate::filter::meta_values(&line, &keys))
            })
            .collect::<Vec<_>>()
    });
    let mut values = Vec::with_capacity(corpus.rollouts.len());
    let mut unreadable = Vec::new();
    for (i, r) in read.into_iter().flatten().enumerate() {
        match r {
            Ok(v) => values.push(v),
            Err(e) => {
                if unreadable.len() < crate::search::MAX_UNREADABLE {
                    let s = corpus.rollouts[i].source;
                    let file = corpus.files.get(s.file as usize).map_or("?", |f| &f.name);
                    unreadable.push(format!(
                        "cannot read the metadata of the rollout at {file}:{}: {e} (its meta.* \
                         values are absent)",
                        s.line
                    ));
                }
                values.push(Default::default());
            }
        }
    }
    settings.filter = Some(filter.with_meta(values));
    unreadable
}

fn score(args: ScoreArgs) -> Result<u8> {
    if args.json.as_deref() == Some("-") && args.clusters.as_deref() == Some("-") {
        bail!("--json - and --clusters - would both write to stdout: send one to a file");
    }
    let mut settings = score_settings(&args)?;
    let mut progress = Progress::new(args.quiet);
    let Some((inputs, corpus, summary)) =
        read_rollouts(&args.files, &args.import, &mut progress, "nothing to score")?
    else {
        return Ok(1);
    };
    for line in resolve_meta(&mut settings, &corpus, &summary, &inputs) {
        eprintln!("prefix-exec: {line}");
    }

    let report = build_report_full(&corpus, Some(&summary), &settings, &mut |p| {
        progress.show(&format!("bootstrap: {} / {} resamples", p.done, p.total))
    });
    progress.done();
    if let Some(message) = filter_emptied(&report) {
        eprintln!("prefix-exec: {message}");
        return Ok(1);
    }

    let layout = args
        .layout
        .as_deref()
        .and_then(table::Layout::from_name)
        .unwrap_or_else(|| table::Layout::default_for(&report));
    let text = table::render_text_as(&report, usize::from(args.decimals), layout);
    let json = report.to_json();
    match args.json.as_deref() {
        Some("-") => {
            eprint!("{text}");
            std::io::stdout().write_all(json.as_bytes())?;
        }
        Some(path) => {
            std::fs::write(path, &json).with_context(|| format!("cannot write {path}"))?;
            if args.clusters.as_deref() == Some("-") {
                eprint!("{text}");
            } else {
                print!("{text}");
            }
        }
        // The clusters' CSV on stdout: the table goes to stderr, as with `--json -`.
        None if args.clusters.as_deref() == Some("-") => eprint!("{text}"),
        None => print!("{text}"),
    }
    match args.clusters.as_deref() {
        Some("-") => std::io::stdout().write_all(table::render_clusters_csv(&report).as_bytes())?,
        Some(path) => std::fs::write(path, table::render_clusters_csv(&report))
            .with_context(|| format!("cannot write {path}"))?,
        None => {}
    }
    for note in &report.notes {
        eprintln!("prefix-exec: note: {note}");
    }
    if !report.identity_violations.is_empty() {
        eprintln!(
            "prefix-exec: {} identity violations — this is a bug, please report it:",
            report.identity_violations.len()
        );
        for v in &report.identity_violations {
            eprintln!(
                "  {} / {} / {}: {} ({})",
                v.dataset, v.model, v.method, v.identity, v.detail
            );
        }
    }
    Ok(0)
}

/// Files up to this size are read whole, ahead of the ingest, on the thread pool.
const READ_AHEAD_MAX_BYTES: u64 = 1 << 20;
/// Files read ahead by one task of the pool (one hand-over each, not one per file).
const READ_AHEAD_BATCH: usize = 8;
/// How many batches are read ahead of the file being ingested, at most.
const READ_AHEAD_BATCHES: usize = 8;

/// Reads `inputs` into `ingest`, in order. With more than one thread, the small files are read
/// and prepared ([`PreparedFile::new`]: their context-free reading) on the pool, a bounded
/// window ahead of the file being ingested, while this thread ingests them in input order
/// (`Ingest::push_prepared_file`): the corpus is the one reading them one by one builds.
fn read_inputs(
    ingest: &mut Ingest,
    inputs: &[Input],
    options: &ImportOptions,
    progress: &mut Progress,
    after_chunk: &mut dyn FnMut(&mut Ingest) -> Result<()>,
) -> Result<()> {
    if crate::parallel::threads() < 2 || inputs.len() < 2 {
        for input in inputs {
            read_input(ingest, input, options, progress, after_chunk)?;
        }
        return Ok(());
    }
    let mut result = Ok(());
    let batches: Vec<std::ops::Range<usize>> = (0..inputs.len())
        .step_by(READ_AHEAD_BATCH)
        .map(|k| k..(k + READ_AHEAD_BATCH).min(inputs.len()))
        .collect();
    let read_batch = |batch: &std::ops::Range<usize>| -> Vec<(usize, Option<PreparedFile>)> {
        batch.clone().map(|k| (k, read_ahead(&inputs[k]))).collect()
    };
    crate::parallel::map_each_ahead(&batches, READ_AHEAD_BATCHES, read_batch, |batch| {
        batch.into_iter().all(|(k, prepared)| {
            let input = &inputs[k];
            result = match prepared {
                Some(prepared) => {
                    let name = input_name(input);
                    ingest.push_whole_file(&name, options.clone(), prepared);
                    progress.show(&format!(
                        "reading {name}: {} rollouts",
                        ingest.rollouts_read()
                    ));
                    after_chunk(ingest)
                }
                // Large files, archives and files that could not be read ahead (their error is
                // reported as usual) are read here, in their turn.
                None => read_input(ingest, input, options, progress, after_chunk),
            };
            result.is_ok()
        })
    });
    result
}

/// The name a file of the input is read under.
fn input_name(input: &Input) -> String {
    match input {
        Input::Path(path) => path.to_string_lossy().into_owned(),
        Input::Bytes { name, .. } => name.clone(),
    }
}

/// A small file of the input read whole and prepared, or `None` (read it in its turn instead).
fn read_ahead(input: &Input) -> Option<PreparedFile> {
    let Input::Path(path) = input else {
        return None;
    };
    let mut file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    if size > READ_AHEAD_MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(size as usize + 1);
    file.read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > READ_AHEAD_MAX_BYTES
        || crate::ingest::archive::Container::of(&bytes[..bytes.len().min(512)]).is_some()
    {
        return None;
    }
    Some(PreparedFile::new(bytes))
}

/// Reads one input into `ingest`: a file by [`read_file`], bytes in memory as a file of that
/// name is read.
fn read_input(
    ingest: &mut Ingest,
    input: &Input,
    options: &ImportOptions,
    progress: &mut Progress,
    after_chunk: &mut dyn FnMut(&mut Ingest) -> Result<()>,
) -> Result<()> {
    let (name, bytes) = match input {
        Input::Path(path) => return read_file(ingest, path, options, progress, after_chunk),
        Input::Bytes { name, bytes } => (name, bytes.as_slice()),
    };
    let mut access = bytes;
    if read_container(
        ingest,
        name,
        options,
        &mut access,
        bytes.len() as u64,
        progress,
    ) {
        return after_chunk(ingest);
    }
    let id = ingest.begin_file_with(name, options.clone());
    if bytes.starts_with(crate::ingest::ZIP_MAGIC) {
        let mut access = bytes;
        ingest.read_archive(id, &mut access);
        return after_chunk(ingest);
    }
    // In the chunks a file is read in, so converted lines are written as they come.
    for chunk in bytes.chunks(1 << 20) {
        ingest.push(id, chunk);
        after_chunk(ingest)?;
    }
    ingest.end_file(id);
    after_chunk(ingest)
}

/// Reads an archive or compressed file's members into `ingest` ([`Ingest::read_container`]),
/// showing members and megabytes; false (nothing read) when `src` is not one.
fn read_container(
    ingest: &mut Ingest,
    name: &str,
    options: &ImportOptions,
    src: &mut dyn crate::formats::RandomAccess,
    size: u64,
    progress: &mut Progress,
) -> bool {
    let mut on_progress = |p: crate::ingest::archive::ArchiveProgress| {
        progress.show(&format!(
            "reading {name}: {} members, {} / {} MB read, {} MB decompressed",
            p.members,
            p.read >> 20,
            size >> 20,
            p.decompressed >> 20
        ))
    };
    if crate::parallel::threads() < 2 {
        return ingest.read_container(name, options, src, &mut on_progress);
    }
    let mut sink = PoolSink::default();
    ingest.read_container_into(name, options, src, &mut sink, &mut on_progress)
}

/// An archive's small members prepared on the thread pool (as a folder's small files are,
/// [`PreparedFile`]) while this thread decompresses the next ones: one batch in flight at a
/// time, each pushed in the archive's order, so the corpus is the one-thread corpus.
#[derive(Default)]
struct PoolSink {
    pending: Vec<(String, ImportOptions, Vec<u8>)>,
    in_flight: Option<InFlight>,
}

type InFlight = (
    Vec<(String, ImportOptions)>,
    std::sync::mpsc::Receiver<Vec<PreparedFile>>,
);

/// Members per batch (at most two batches of members of at most 1 MiB are held).
const MEMBER_BATCH: usize = 64;

impl crate::ingest::archive::MemberSink for PoolSink {
    fn whole(
        &mut self,
        ingest: &mut Ingest,
        name: String,
        options: &ImportOptions,
        bytes: Vec<u8>,
    ) {
        self.pending.push((name, options.clone(), bytes));
        if self.pending.len() >= MEMBER_BATCH {
            self.launch(ingest);
        }
    }

    fn flush(&mut self, ingest: &mut Ingest) {
        self.launch(ingest);
        self.land(ingest);
    }
}

impl PoolSink {
    /// Pushes the batch in flight, once prepared.
    fn land(&mut self, ingest: &mut Ingest) {
        if let Some((names, prepared)) = self.in_flight.take() {
            let prepared = prepared
                .recv()
                .expect("a pool task prepares every member of its batch");
            for ((name, options), p) in names.into_iter().zip(prepared) {
                ingest.push_whole_file(&name, options, p);
            }
        }
    }

    /// Lands the batch in flight, then sends the pending members to the pool.
    fn launch(&mut self, ingest: &mut Ingest) {
        self.land(ingest);
        if self.pending.is_empty() {
            return;
        }
        let (names, bytes): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .map(|(n, o, b)| ((n, o), b))
            .unzip();
        let (tx, rx) = std::sync::mpsc::channel();
        rayon::spawn(move || {
            use rayon::prelude::*;
            let prepared: Vec<PreparedFile> =
                bytes.into_par_iter().map(PreparedFile::new).collect();
            let _ = tx.send(prepared);
        });
        self.in_flight = Some((names, rx));
    }
}

/// Reads one file into `ingest` in 1 MiB chunks, showing progress; `after_chunk` runs after
/// each chunk and after the file's end (e.g. to write converted lines as they come).
fn read_file(
    ingest: &mut Ingest,
    path: &Path,
    options: &ImportOptions,
    progress: &mut Progress,
    after_chunk: &mut dyn FnMut(&mut Ingest) -> Result<()>,
) -> Result<()> {
    let name = path.to_string_lossy();
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    // An archive or compressed file is a folder in one file: its members are read as files.
    if read_container(ingest, &name, options, &mut file, size, progress) {
        return after_chunk(ingest);
    }
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))?;
    let id = ingest.begin_file_with(&name, options.clone());
    // A zip (an Inspect .eval log) is read by offset: its table of contents is at its end.
    let mut magic = [0u8; 4];
    let n = file.read(&mut magic).unwrap_or(0);
    if magic[..n] == *crate::ingest::ZIP_MAGIC {
        let mut on_read = |read: u64| {
            progress.show(&format!(
                "reading {name} (an archive): {} / {} MB",
                read >> 20,
                size >> 20
            ))
        };
        let mut progressing = crate::formats::inspect::Progressing::new(&mut file, &mut on_read);
        ingest.read_archive(id, &mut progressing);
        return after_chunk(ingest);
    }
    ingest.push(id, &magic[..n]);
    // No bigger than the file needs: a folder of thousands of small files would otherwise
    // zero a fresh MiB for each.
    let mut buf = vec![0u8; (size as usize).saturating_add(1).clamp(4096, 1 << 20)];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        ingest.push(id, &buf[..n]);
        progress.show(&format!(
            "reading {name}: {} / {} MB, {} rollouts",
            ingest.bytes_read(id) >> 20,
            size >> 20,
            ingest.rollouts_read()
        ));
        after_chunk(ingest)?;
    }
    ingest.end_file(id);
    after_chunk(ingest)
}

/// Reads `files` through the same [`Ingest`] as `score`, writing each rollout's canonical
/// line to `out` as it enters the corpus, so scoring the output reads the same rollouts in
/// the same order. Returns the corpus, the import summary and the rollouts written.
fn convert_into(
    files: &[Input],
    options: &ImportOptions,
    progress: &mut Progress,
    out: &mut dyn Write,
) -> Result<(crate::rollout::Corpus, crate::formats::ImportSummary, u64)> {
    let mut ingest = Ingest::converting();
    let mut written = 0u64;
    let mut write_lines = |ingest: &mut Ingest, out: &mut dyn Write| -> Result<()> {
        for line in ingest.drain_converted() {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            written += u64::from(!line.starts_with(r#"{"tools""#));
        }
        Ok(())
    };
    read_inputs(&mut ingest, files, options, progress, &mut |ingest| {
        write_lines(ingest, out)
    })?;
    ingest.end_all();
    write_lines(&mut ingest, out)?;
    out.flush()?;
    let (corpus, summary) = ingest.finish_with_summary();
    progress.done();
    Ok((corpus, summary, written))
}

/// Prints a corpus's problems to stderr: one line per kind with its count and first example,
/// or with `verbose` every diagnostic kept (the first ones, then a count); then the self-checks
/// that passed (one line for all of them unless `verbose`).
fn print_diagnostics(corpus: &crate::rollout::Corpus, verbose: bool) {
    let mut lines = if verbose {
        diagnostic_lines(corpus)
    } else {
        problem_lines(corpus)
    };
    lines.extend(check_lines(corpus, verbose));
    for line in lines {
        eprintln!("{line}");
    }
}

/// The self-checks that passed: each one with `verbose` or when it is the only one, else their
/// count (they are confirmations, not problems).
fn check_lines(corpus: &crate::rollout::Corpus, verbose: bool) -> Vec<String> {
    match corpus.checks.len() {
        0 => Vec::new(),
        1 => vec![corpus.checks[0].to_string()],
        _ if verbose => corpus.checks.iter().map(|d| d.to_string()).collect(),
        n => vec![format!(
            "{n} self-checks passed: figures the files state themselves, recomputed from their \
             rows and found equal (--verbose lists them)"
        )],
    }
}

/// One line per kind of problem: the first of its kind, and how many read the same way.
fn problem_lines(corpus: &crate::rollout::Corpus) -> Vec<String> {
    let mut lines: Vec<String> = corpus
        .problems
        .iter()
        .map(|p| match p.count {
            1 => p.example.to_string(),
            n => format!(
                "{} [{n} problems of this kind; --verbose lists them]",
                p.example
            ),
        })
        .collect();
    if corpus.diagnostics_total > corpus.problems.len() as u64 {
        let kinds = match corpus.problems.len() {
            1 => "one kind".to_string(),
            n => format!("{n} kinds"),
        };
        lines.push(format!(
            "{} problems of {kinds} in the input; every valid line was scored",
            corpus.diagnostics_total
        ));
    }
    lines
}

/// The lines [`print_diagnostics`] prints: the first diagnostics, then how many more there are.
fn diagnostic_lines(corpus: &crate::rollout::Corpus) -> Vec<String> {
    let mut lines: Vec<String> = corpus.diagnostics.iter().map(|d| d.to_string()).collect();
    let shown = corpus.diagnostics.len() as u64;
    if corpus.diagnostics_total > shown {
        lines.push(format!(
            "… and {} more problems (the first {shown} are listed)",
            corpus.diagnostics_total - shown
        ));
    }
    lines
}

/// `convert`: see [`convert_into`].
fn convert(args: ConvertArgs) -> Result<u8> {
    let mut progress = Progress::new(args.quiet);
    let options = args.import.options()?;
    let files = expand(&args.files)?;
    let mut out: Box<dyn Write> = if args.output == "-" {
        Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
    } else {
        let file =
            File::create(&args.output).with_context(|| format!("cannot create {}", args.output))?;
        Box::new(std::io::BufWriter::new(file))
    };
    let (corpus, summary, written) = convert_into(&files, &options, &mut progress, &mut out)
        .with_context(|| format!("cannot convert into {}", args.output))?;
    drop(out);
    print_diagnostics(&corpus, args.import.verbose);
    for f in &summary.files {
        let format = f.format.map_or("not recognised", |f| f.name());
        eprintln!("{}: {format}, {} rollouts", f.name, f.rollouts);
    }
    let target = if args.output == "-" {
        "stdout"
    } else {
        &args.output
    };
    eprintln!("wrote {written} rollouts to {target}");
    Ok(if corpus.rollouts.is_empty() { 1 } else { 0 })
}

/// Finds the built app: `--app`, else `dist/` beside the executable, else the source tree
/// the executable was built in (`target/<profile>/` → `../../dist`), rebuilding it there
/// with trunk when it is missing.
fn find_app(explicit: Option<&Path>) -> Result<PathBuf> {
    let is_app = |d: &Path| d.join("index.html").is_file() && d.join("worker-loader.js").is_file();
    if let Some(d) = explicit {
        if is_app(d) {
            return Ok(d.to_path_buf());
        }
        bail!(
            "{} is not a built prefix-exec app (no index.html and worker-loader.js)",
            d.display()
        );
    }
    let exe = std::env::current_exe().context("cannot locate the executable")?;
    let exe_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    if is_app(&exe_dir.join("dist")) {
        return Ok(exe_dir.join("dist"));
    }
    if let Some(root) = exe_dir.parent().and_then(Path::parent) {
        let dist = root.join("dist");
        if is_app(&dist) {
            return Ok(dist);
        }
        if root.join("index.html").is_file() && root.join("Trunk.toml").is_file() {
            eprintln!("prefix-exec: building the app with trunk (dist/ is missing)…");
            let status = std::process::Command::new("trunk")
                .args(["build", "--release"])
                .env("TRUNK_SKIP_VERSION_CHECK", "true")
                .current_dir(root)
                .status();
            if matches!(status, Ok(s) if s.success()) && is_app(&dist) {
                return Ok(dist);
            }
        }
    }
    bail!(
        "cannot find the built app: run `trunk build --release` in the prefix-exec source \
         tree (scripts/serve.sh does it), then pass its dist/ folder with --app DIR"
    )
}

/// Copies the app's files (not its bundled example) into the site.
fn copy_app(from: &Path, to: &Path) -> Result<u64> {
    let mut bytes = 0;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        if entry.file_type()?.is_dir() {
            if name == "examples" {
                continue;
            }
            std::fs::create_dir_all(to.join(&name))?;
            bytes += copy_app(&path, &to.join(&name))?;
        } else {
            bytes += std::fs::copy(&path, to.join(&name))
                .with_context(|| format!("cannot copy {}", path.display()))?;
        }
    }
    Ok(bytes)
}

/// `site`: the app + canonical data + report.json manifest; see [`crate::site`].
fn site(args: SiteArgs) -> Result<u8> {
    use crate::site::MANIFEST;
    let mut settings = args.report.settings(Vec::new())?;
    settings.filter = filter_of(&args.filter, args.common_tasks)?;
    let job = crate::site::SiteSettings {
        bootstrap: settings.bootstrap,
        seed: settings.seed.to_string(),
        level: settings.level,
        max_depth: match settings.max_depth {
            MaxDepth::Fixed(k) => k.to_string(),
            MaxDepth::All => "all".to_string(),
        },
        labels: args.import.options()?.labels,
    };
    let app = find_app(args.app.as_deref())?;
    if args.output.exists()
        && std::fs::read_dir(&args.output)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!(
            "{} exists and is not empty; choose a new folder",
            args.output.display()
        );
    }
    std::fs::create_dir_all(args.output.join("data"))
        .with_context(|| format!("cannot create {}", args.output.display()))?;

    let mut progress = Progress::new(args.quiet);
    let mut data: Vec<u8> = Vec::new();
    let (source, _, written) = convert_into(
        &expand(&args.files)?,
        &args.import.options()?,
        &mut progress,
        &mut data,
    )?;
    print_diagnostics(&source, args.import.verbose);
    if written == 0 {
        eprintln!("prefix-exec: no valid rollout was read; no site written");
        return Ok(1);
    }
    let publication = crate::site::publish(
        &data,
        written,
        &args.title,
        &args.description,
        &job,
        &settings,
        args.gzip,
        source.diagnostics_total,
        &mut |p| progress.show(&format!("bootstrap: {} / {} resamples", p.done, p.total)),
    );
    progress.done();
    if let Some(message) = filter_emptied(&publication.manifest.precomputed) {
        eprintln!("prefix-exec: {message}; no site written");
        return Ok(1);
    }
    let mut served = 0;
    for (path, bytes) in &publication.files {
        std::fs::write(args.output.join(path), bytes)
            .with_context(|| format!("cannot write {path}"))?;
        served += bytes.len();
    }
    let json = publication.manifest_json();
    std::fs::write(args.output.join(MANIFEST), &json)?;
    let app_bytes = copy_app(&app, &args.output)?;
    // The copied index.html says the page is a site, so the app looks for its manifest.
    let index = args.output.join("index.html");
    let html = std::fs::read_to_string(&index)
        .with_context(|| format!("cannot read {}", index.display()))?;
    std::fs::write(&index, crate::site::mark_site_index(&html))
        .with_context(|| format!("cannot write {}", index.display()))?;
    eprintln!(
        "wrote {}: app {:.1} MB, data {:.1} MB ({written} rollouts), report.json {:.1} MB",
        args.output.display(),
        app_bytes as f64 / 1e6,
        served as f64 / 1e6,
        json.len() as f64 / 1e6
    );
    Ok(0)
}

/// An input of [`score_inputs`] and [`convert_inputs`]: a file or folder (read as the command
/// line reads it), or a file's bytes held in memory under a name (used in diagnostics).
#[derive(Debug, Clone)]
pub enum Input {
    Path(PathBuf),
    Bytes { name: String, bytes: Vec<u8> },
}

/// What [`score_inputs`] returns: the report and the input's diagnostics.
#[derive(Debug)]
pub struct Scored {
    pub report: crate::report::Report,
    /// The lines `score` prints to stderr about the input (line-located), in order.
    pub diagnostics: Vec<String>,
}

/// Parses `flags` as the flags of the subcommand `sub` (its positional arguments given as
/// `positional`), with the command line's own parser, so options and their errors are the
/// command line's.
fn parse_flags(sub: &str, positional: &[&str], flags: &[OsString]) -> Result<Command> {
    let head = ["prefix-exec", sub];
    let argv = head
        .iter()
        .chain(positional)
        .map(OsString::from)
        .chain(flags.iter().cloned());
    match Cli::try_parse_from(argv) {
        Ok(cli) => Ok(cli.command),
        Err(e) => {
            // clap's message without its usage and "--help" lines, which name the command
            // line, not the caller's API.
            let text = e.render().to_string();
            let first = text.split("\n\n").next().unwrap_or(&text).trim();
            bail!("{}", first.strip_prefix("error: ").unwrap_or(first))
        }
    }
}

/// `score` for library callers (the Python API): `inputs` with `score`'s `flags` (e.g.
/// `--bootstrap 2000 --seed 7 --pair A,B`), giving the report `score --json` writes for the same
/// input and settings, without printing anything. `--threads` is ignored: the caller runs this
/// inside the rayon pool it wants. Fails, with the command line's message, where `score` exits
/// with a non-zero code (no valid rollout: the diagnostics, then that).
pub fn score_inputs(flags: &[OsString], inputs: Vec<Input>) -> Result<Scored> {
    let Command::Score(mut args) = parse_flags("score", &["-"], flags)? else {
        unreachable!("parsed as score")
    };
    args.report.threads = None;
    let mut settings = score_settings(&args)?;
    let (inputs, corpus, summary, mut diagnostics) =
        read_for_caller(inputs, &args.import, "nothing to score")?;
    diagnostics.extend(resolve_meta(&mut settings, &corpus, &summary, &inputs));
    let report = build_report_full(&corpus, Some(&summary), &settings, &mut |_| {});
    if let Some(message) = filter_emptied(&report) {
        return Err(anyhow::anyhow!(message));
    }
    Ok(Scored {
        report,
        diagnostics,
    })
}

/// The error of an input without a valid rollout: its diagnostics, one a line, then `what`.
/// [`read_rollouts`] for library callers: the inputs read quietly, with their diagnostics as
/// lines; no valid rollout is an error carrying the diagnostics, then "… ; `then`".
fn read_for_caller(
    inputs: Vec<Input>,
    import: &ImportArgs,
    then: &str,
) -> Result<(
    Vec<Input>,
    crate::rollout::Corpus,
    crate::formats::ImportSummary,
    Vec<String>,
)> {
    let inputs = expand_inputs(inputs)?;
    let (corpus, summary) = read_corpus(&inputs, &import.options()?, &mut Progress::new(true))?;
    let diagnostics = diagnostic_lines(&corpus);
    if corpus.rollouts.is_empty() {
        return Err(nothing_read(
            &diagnostics,
            &format!("no valid rollout was read; {then}"),
        ));
    }
    Ok((inputs, corpus, summary, diagnostics))
}

fn nothing_read(diagnostics: &[String], what: &str) -> anyhow::Error {
    let mut message = diagnostics.join("\n");
    if !message.is_empty() {
        message.push('\n');
    }
    anyhow::anyhow!("{message}{what}")
}

/// `convert -o -` for library callers: the canonical JSONL `convert` writes for `inputs` with
/// `convert`'s `flags` (the same bytes), and the input's diagnostics. Fails where `convert`
/// exits with a non-zero code.
pub fn convert_inputs(flags: &[OsString], inputs: Vec<Input>) -> Result<(String, Vec<String>)> {
    let Command::Convert(args) = parse_flags("convert", &["-", "--output", "-"], flags)? else {
        unreachable!("parsed as convert")
    };
    let options = args.import.options()?;
    let mut out = Vec::new();
    let (corpus, _, _) = convert_into(
        &expand_inputs(inputs)?,
        &options,
        &mut Progress::new(true),
        &mut out,
    )?;
    let diagnostics = diagnostic_lines(&corpus);
    if corpus.rollouts.is_empty() {
        return Err(nothing_read(&diagnostics, "no valid rollout was read"));
    }
    // Canonical lines are rendered by serde_json: always UTF-8.
    let text = String::from_utf8(out).context("the converted lines are not UTF-8")?;
    Ok((text, diagnostics))
}

impl SearchArgs {
    fn query(&self) -> crate::search::SearchQuery {
        crate::search::SearchQuery {
            pattern: self.query.clone(),
            field: crate::search::Field::parse(&self.field).unwrap_or_default(),
            conditions: self
                .conditions
                .chunks_exact(3)
                .map(|c| (c[0].clone(), c[1].clone(), c[2].clone()))
                .collect(),
            offset: self.offset,
            limit: self.limit.unwrap_or(usize::MAX),
        }
    }
}

/// Whether some rollouts come from an archive's members.
fn has_archive_members(corpus: &crate::rollout::Corpus) -> bool {
    corpus.files.iter().any(|f| f.archive.is_some())
}

/// `items` (rollouts in corpus order) cut into chunks to read back on the pool, each chunk
/// with its own [`InputSource`]: [`SEARCH_CHUNK`] rollouts each, or, when some come from an
/// archive, one run per thread — each source walks a tar stream forward from its start (and
/// reads a zip's table of contents) once, so small chunks would decompress it hundreds of times.
fn read_chunks<'t, T>(corpus: &crate::rollout::Corpus, items: &'t [T]) -> Vec<&'t [T]> {
    let size = if has_archive_members(corpus) {
        items.len().div_ceil(crate::parallel::threads()).max(1)
    } else {
        SEARCH_CHUNK
    };
    items.chunks(size).collect()
}

/// Rollouts' bytes read back from the input: files by their path (an archive's member found
/// again in its archive, the last one kept), in-memory inputs by their name.
pub struct InputSource<'a> {
    memory: &'a std::collections::HashMap<String, &'a [u8]>,
    open: Option<(u32, File)>,
    /// The archive last read from, its members found without walking it again for each.
    members: Option<(String, crate::ingest::members::Members<'a>)>,
    member: Option<(u32, Vec<u8>)>,
}

impl<'a> InputSource<'a> {
    pub fn new(memory: &'a std::collections::HashMap<String, &'a [u8]>) -> Self {
        InputSource {
            memory,
            open: None,
            members: None,
            member: None,
        }
    }
}

impl<'a> crate::search::ByteSource for InputSource<'a> {
    fn read(&mut self, corpus: &crate::rollout::Corpus, index: usize) -> Result<Vec<u8>, String> {
        use crate::formats::RandomAccess;
        let source = corpus.rollouts[index].source;
        let input = corpus
            .files
            .get(source.file as usize)
            .ok_or("the rollout's file is unknown")?;
        let slice = |bytes: &[u8]| -> Vec<u8> {
            let at = (source.offset as usize).min(bytes.len());
            let end = at.saturating_add(source.len as usize).min(bytes.len());
            bytes[at..end].to_vec()
        };
        if let Some(archive) = &input.archive {
            if self.member.as_ref().is_none_or(|(f, _)| *f != source.file) {
                if self.members.as_ref().is_none_or(|(a, _)| a != archive) {
                    let src: Box<dyn RandomAccess + 'a> = match self.memory.get(archive) {
                        Some(&bytes) => Box::new(bytes),
                        None => Box::new(
                            File::open(archive)
                                .map_err(|e| format!("cannot open {archive}: {e}"))?,
                        ),
                    };
                    let members = crate::ingest::members::Members::open(src, archive)?;
                    self.members = Some((archive.clone(), members));
                }
                let (_, members) = self.members.as_mut().expect("opened above");
                self.member = Some((source.file, members.read(&input.name)?));
            }
            return Ok(self
                .member
                .as_ref()
                .map(|(_, b)| slice(b))
                .unwrap_or_default());
        }
        if let Some(bytes) = self.memory.get(&input.name) {
            return Ok(slice(bytes));
        }
        if self.open.as_ref().is_none_or(|(f, _)| *f != source.file) {
            let file =
                File::open(&input.name).map_err(|e| format!("cannot open {}: {e}", input.name))?;
            self.open = Some((source.file, file));
        }
        let (_, file) = self.open.as_mut().expect("opened above");
        let mut buf = vec![0u8; source.len as usize];
        let n = file
            .read_at(source.offset, &mut buf)
            .map_err(|e| format!("cannot read {}: {e}", input.name))?;
        if n < buf.len() {
            return Err(format!(
                "{} is shorter than when it was read (changed since?)",
                input.name
            ));
        }
        Ok(buf)
    }
}

/// The inputs held in memory (given as bytes, not paths), by name: what an [`InputSource`]
/// reads them back from.
fn in_memory(inputs: &[Input]) -> std::collections::HashMap<String, &[u8]> {
    inputs
        .iter()
        .filter_map(|i| match i {
            Input::Bytes { name, bytes } => Some((name.clone(), bytes.as_slice())),
            Input::Path(_) => None,
        })
        .collect()
}

/// Rollouts searched per task of the thread pool (each task re-reads its rollouts in result
/// order and hands them over whole).
const SEARCH_CHUNK: usize = 64;

/// Searches `corpus` with `query` on the thread pool, in fixed chunks merged in result order
/// (the same page at any thread count), reading the rollouts back from `inputs`.
pub fn search_corpus(
    corpus: &crate::rollout::Corpus,
    summary: &crate::formats::ImportSummary,
    inputs: &[Input],
    query: &crate::search::SearchQuery,
) -> std::result::Result<crate::search::SearchPage, crate::search::SearchError> {
    use crate::search::{ByteSource, Pager, Searcher};
    let searcher = Searcher::new(query)?;
    let candidates = searcher.candidates(corpus)?;
    let memory = in_memory(inputs);
    let mut pager = Pager::new(query, candidates.len());
    if has_archive_members(corpus) {
        // Read in corpus order (an archive's members in the order they lie in it), each hit
        // made at once, then paged in result order.
        let mut order = candidates.clone();
        order.sort_unstable();
        let chunks = read_chunks(corpus, &order);
        let read = crate::parallel::map(&chunks, |chunk| {
            let mut source = InputSource::new(&memory);
            chunk
                .iter()
                .map(|&(index, _)| {
                    source
                        .read(corpus, index)
                        .and_then(|b| searcher.search_rollout(corpus, summary, index, &b))
                        .map(|hits| hits.into_iter().map(|m| searcher.hit(m)).collect())
                })
                .collect::<Vec<_>>()
        });
        let mut by_index: std::collections::HashMap<usize, Result<Vec<_>, String>> = order
            .iter()
            .map(|&(index, _)| index)
            .zip(read.into_iter().flatten())
            .collect();
        for &(index, trial) in &candidates {
            match by_index.remove(&index) {
                Some(Ok(hits)) => pager.add_lazy(corpus, index, trial, hits, |h| h),
                Some(Err(e)) => pager.unreadable(index, e),
                None => {}
            }
        }
        return Ok(pager.finish());
    }
    let chunks: Vec<&[(usize, u32)]> = candidates.chunks(SEARCH_CHUNK).collect();
    crate::parallel::map_each(
        &chunks,
        |chunk| {
            let mut source = InputSource::new(&memory);
            chunk
                .iter()
                .map(|&(index, trial)| {
                    let hits = source
                        .read(corpus, index)
                        .and_then(|b| searcher.search_rollout(corpus, summary, index, &b));
                    (index, trial, hits)
                })
                .collect::<Vec<_>>()
        },
        |results| {
            for (index, trial, hits) in results {
                pager.add(corpus, &searcher, index, trial, hits);
            }
        },
    );
    Ok(pager.finish())
}

/// The search index of `corpus` ([`crate::search::SearchIndex`]), its rollouts read back from
/// `inputs` on the thread pool in fixed chunks, added in corpus order.
pub fn index_corpus(
    corpus: &crate::rollout::Corpus,
    summary: &crate::formats::ImportSummary,
    inputs: &[Input],
) -> crate::search::SearchIndex {
    use crate::search::{rollout_texts, ByteSource, Field, SearchIndexBuilder};
    let memory = in_memory(inputs);
    let indices: Vec<usize> = (0..corpus.rollouts.len()).collect();
    let chunks = read_chunks(corpus, &indices);
    let mut builder = SearchIndexBuilder::new();
    crate::parallel::map_each(
        &chunks,
        |chunk| {
            let mut source = InputSource::new(&memory);
            chunk
                .iter()
                .map(|&i| {
                    source
                        .read(corpus, i)
                        .map(|b| rollout_texts(corpus, summary, i, &b, Field::All))
                })
                .collect::<Vec<_>>()
        },
        |texts| texts.into_iter().for_each(|t| builder.add(t)),
    );
    builder.finish()
}

/// A hit as a line: condition, task, trial, step, field, the snippet with its match marked.
fn hit_line(h: &crate::search::Hit) -> String {
    let chars: Vec<char> = h.text.chars().collect();
    let [a, b] = h.mark;
    let (a, b) = (a.min(chars.len()), b.min(chars.len()));
    let text: String = chars[..a]
        .iter()
        .chain("[[".chars().collect::<Vec<_>>().iter())
        .chain(&chars[a..b])
        .chain("]]".chars().collect::<Vec<_>>().iter())
        .chain(&chars[b..])
        .collect();
    let step = h.step.map_or("-".to_string(), |s| s.to_string());
    format!(
        "{}: {} · {}\ttask {}\ttrial {}\tstep {step}\t{}: {}",
        h.dataset,
        h.model,
        h.method,
        h.task_id,
        h.trial,
        h.field.name(),
        text.replace(['\n', '\r', '\t'], " ")
    )
}

fn search(args: SearchArgs) -> Result<u8> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .context("cannot start the thread pool")?;
    }
    let query = args.query();
    // A bad pattern fails before anything is read.
    crate::search::Searcher::new(&query)?;
    let started = Instant::now();
    let mut progress = Progress::new(args.quiet);
    let Some((inputs, corpus, summary)) = read_rollouts(
        &args.files,
        &args.import,
        &mut progress,
        "nothing to search",
    )?
    else {
        return Ok(1);
    };
    let read = started.elapsed();
    progress.show(&format!("searching {} rollouts", corpus.rollouts.len()));
    let searching = Instant::now();
    let page = if args.indexed {
        let index = index_corpus(&corpus, &summary, &inputs);
        let (texts, bytes, kept) = index.size();
        let indexed = searching.elapsed();
        let page = index.search(&corpus, &query)?;
        if !args.quiet {
            eprintln!(
                "prefix-exec: indexed {texts} texts ({:.1} MB, {:.1} MB kept) in {:.3} s, \
                 searched the index in {:.3} s",
                bytes as f64 / 1e6,
                kept as f64 / 1e6,
                indexed.as_secs_f64(),
                (searching.elapsed() - indexed).as_secs_f64()
            );
        }
        page
    } else {
        search_corpus(&corpus, &summary, &inputs, &query)?
    };
    let searched = searching.elapsed();
    progress.done();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &page.hits)?;
        out.write_all(b"\n")?;
    } else {
        for h in &page.hits {
            writeln!(out, "{}", hit_line(h))?;
        }
    }
    report_search(&page, &corpus, args.quiet);
    if !args.quiet {
        eprintln!(
            "prefix-exec: searched in {:.3} s, after reading the input in {:.3} s",
            searched.as_secs_f64(),
            read.as_secs_f64()
        );
    }
    Ok(0)
}

/// What a search could not read, and its totals, on stderr.
fn report_search(page: &crate::search::SearchPage, corpus: &crate::rollout::Corpus, quiet: bool) {
    for (index, e) in &page.unreadable {
        let r = &corpus.rollouts[*index];
        let file = corpus
            .files
            .get(r.source.file as usize)
            .map_or("?", |f| f.name.as_str());
        eprintln!(
            "prefix-exec: cannot search the rollout at {file}:{}: {e}",
            r.source.line
        );
    }
    if page.unreadable_total > page.unreadable.len() {
        eprintln!(
            "prefix-exec: … and {} more rollouts that could not be read",
            page.unreadable_total - page.unreadable.len()
        );
    }
    if !quiet {
        eprintln!(
            "prefix-exec: {} hits in {} rollouts{}",
            page.total,
            page.rollouts,
            if page.unreadable_total > 0 {
                format!(" ({} could not be read)", page.unreadable_total)
            } else {
                String::new()
            }
        );
    }
}

/// `search --json` for library callers (the Python API): the hits of `inputs` for `search`'s
/// `flags` (e.g. `--query x --field error`), and the input's diagnostics followed by what could
/// not be searched. Fails where `search` exits with a non-zero code.
pub fn search_inputs(
    flags: &[OsString],
    inputs: Vec<Input>,
) -> Result<(crate::search::SearchPage, Vec<String>)> {
    let Command::Search(args) = parse_flags("search", &["-"], flags)? else {
        unreachable!("parsed as search")
    };
    let query = args.query();
    crate::search::Searcher::new(&query)?;
    let (inputs, corpus, summary, mut diagnostics) =
        read_for_caller(inputs, &args.import, "nothing to search")?;
    let page = search_corpus(&corpus, &summary, &inputs, &query)?;
    for (index, e) in &page.unreadable {
        let r = &corpus.rollouts[*index];
        let file = corpus
            .files
            .get(r.source.file as usize)
            .map_or("?", |f| f.name.as_str());
        diagnostics.push(format!(
            "cannot search the rollout at {file}:{}: {e}",
            r.source.line
        ));
    }
    Ok((page, diagnostics))
}
