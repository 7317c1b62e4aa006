//! The app's state, held in a few stores provided as context, and the bridge to the worker.
//!
//! - [`Session`]: the loaded files and the settings — the inputs of a computation;
//! - [`Results`]: what the worker sent back — status, progress, the report;
//! - [`ViewState`]: what the user is looking at — tab, filters, comparison (mirrored in the URL
//!   hash by [`super::hash`]).
//!
//! Only [`Session::recompute`] talks to the worker; views read signals and call it.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, MessageEvent, Worker};

use super::protocol::{FromWorker, JobSettings, ToWorker};
use crate::browse::{RolloutPage, RolloutQuery, StepView};
use crate::report::Report;

/// A file in the session.
#[derive(Clone, Debug, PartialEq)]
pub struct FileEntry {
    pub id: u32,
    pub name: String,
    /// The path relative to a dropped or picked folder (`run/score/<model>/….json`), or the
    /// name: the name the worker gets, so formats can pair files by folder.
    pub path: String,
    /// The size, when known on the page: a file's size is asked of the browser only for picks
    /// of up to [`SIZES_ASKED_UP_TO`] files (for a file on disk each is a round trip to the
    /// browser's process, 0.14 ms: 4.4 s of frozen page for a 31,000-file folder); the others
    /// show the size the worker read ([`crate::report::InputOut::bytes`]).
    pub size: Option<f64>,
    /// Name overrides and termination-reason exclusions for this file.
    pub options: crate::formats::ImportOptions,
}

/// A published report site: its manifest and what checking it found.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteState {
    pub manifest: Arc<crate::site::SiteManifest>,
    /// The absolute URL each data file of the manifest is downloaded from, in its order.
    pub urls: Vec<String>,
    /// Integrity problems (hash or size mismatches, unreadable files).
    pub warnings: Vec<String>,
    /// Whether the recomputed report matched the published one (`None` until known).
    pub agrees: Option<bool>,
}

/// Where a computation stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Nothing loaded yet.
    Empty,
    Computing {
        phase: String,
        done: u64,
        total: u64,
        /// Files read and files in all, while reading.
        files: [u64; 2],
        /// The archive being read, if one is.
        archive: Option<super::protocol::ArchiveRead>,
    },
    Ready {
        compute_ms: f64,
        /// Web Workers that ran the bootstrap or read the files ahead.
        workers: u32,
        /// Lines the pool read ahead (shown to tests as `data-read-ahead`).
        read_ahead: u64,
    },
    Failed(String),
    /// Stopped by the user's Cancel.
    Cancelled,
}

/// What the page holds of an input: a file, or a `?data=` link not downloaded yet, which the
/// worker is sent as `{url}`, reads as it downloads (`web::fetched`) and sends back as a `File`
/// (`FromWorker::Downloaded`).
#[derive(Clone)]
enum Handle {
    File(File),
    Link(String),
}

impl Handle {
    fn file(&self) -> Option<&File> {
        match self {
            Handle::File(f) => Some(f),
            Handle::Link(_) => None,
        }
    }

    /// What a message to the worker carries for it.
    fn message_value(&self) -> JsValue {
        match self {
            Handle::File(f) => f.clone().into(),
            Handle::Link(url) => {
                let link = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&link, &"url".into(), &url.into());
                link.into()
            }
        }
    }
}

/// The inputs: files and settings.
#[derive(Clone, Copy)]
pub struct Session {
    pub files: RwSignal<Vec<FileEntry>>,
    handles: StoredValue<Vec<(u32, Handle)>, LocalStorage>,
    /// A recomputation asked for while the worker reads links as they download: run once their
    /// files are in ([`Session::link_downloaded`]), so no download starts over (a recomputation
    /// replaces the worker, and its downloads with it).
    deferred: StoredValue<bool>,
    next_id: StoredValue<u32>,
    pub settings: RwSignal<JobSettings>,
    /// A message about the last file action (e.g. a duplicate), shown near the file list.
    pub notice: RwSignal<Option<String>>,
    /// Set when the page was opened as a published report site.
    pub site: RwSignal<Option<SiteState>>,
    /// Tool-schema checks on (the default) or off, for every file.
    pub schema_checks: RwSignal<bool>,
    /// The first-failure label rules for every file (built-in on by default, user rules).
    pub labels: RwSignal<crate::label::LabelSettings>,
    /// What to do with crashed rollouts, for every file (the CLI's `--crashed`).
    pub crashed: RwSignal<crate::formats::CrashPolicy>,
    /// Runs of one model and method scored as trials of one condition (the CLI's
    /// `--merge-runs`); off: each run is a condition of its own.
    pub merge_runs: RwSignal<bool>,
    /// Message transcripts: the field mapping and reject rules for every file (the CLI's
    /// `--field`, `--reject-rules`); a file's own options can change them for that file.
    pub transcript: RwSignal<crate::formats::transcript::Options>,
    results: Results,
    bridge: StoredValue<Bridge, LocalStorage>,
}

/// Resolves on the event loop's next turn (a zero timeout), letting the page handle input.
async fn next_turn() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback(&resolve);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Said while a change waits for links to download ([`Session::recompute`]).
const DEFERRED: &str = "The change applies once the linked data has downloaded.";

/// Files per message to the worker (see [`Session::recompute`]); a pick of at most
/// [`SIZES_ASKED_UP_TO`] files goes whole.
const FILES_PER_MESSAGE: usize = 2_000;

/// The most files of one pick whose sizes the page asks the browser for (see [`FileEntry::size`]).
pub const SIZES_ASKED_UP_TO: usize = 1_000;

/// File ids to look up many times (a run's thousands of files): sorted, searched by halves (a
/// hash set would add its code to the page's wasm for this one use).
pub struct IdSet(Vec<u32>);

impl IdSet {
    pub fn new(ids: &[u32]) -> IdSet {
        let mut v = ids.to_vec();
        v.sort_unstable();
        IdSet(v)
    }

    pub fn contains(&self, id: &u32) -> bool {
        self.0.binary_search(id).is_ok()
    }
}

/// One rollout's steps, or why they cannot be shown.
pub type StepsResult = Result<Vec<StepView>, String>;

/// The worker and the handler that keeps its messages flowing.
type WorkerParts = (Worker, Closure<dyn FnMut(MessageEvent)>);

/// The outputs: status, report, rollout pages.
#[derive(Clone, Copy)]
pub struct Results {
    pub status: RwSignal<Status>,
    pub report: RwSignal<Option<Arc<Report>>>,
    /// The report's JSON text exactly as the worker produced it (what "Export report" saves).
    pub report_json: RwSignal<Arc<String>>,
    pub rollouts: RwSignal<Option<RolloutPage>>,
    pub steps: RwSignal<Option<(usize, StepsResult)>>,
    /// The compared pair task by task (Paired comparison).
    pub pair_tasks: RwSignal<Option<crate::browse::PairTasks>>,
    /// Steps of the rollouts shown side by side.
    pub pair_steps: RwSignal<Vec<(usize, StepsResult)>>,
    /// The state of "Download this report" (a site zip built in the worker).
    pub site_build: RwSignal<Option<String>>,
    /// The worker's last verdict on user label rules: (the JSON text, its rules or the error).
    pub rules_checked: RwSignal<Option<RulesVerdict>>,
    /// The worker's last verdict on a filter's text: (the text, its canonical spelling or the
    /// error).
    pub filter_checked: RwSignal<Option<(String, Result<String, String>)>>,
    /// What a filter of the loaded corpus can pick (asked for when the pickers open).
    pub filter_choices: RwSignal<Option<Arc<crate::filter::choices::FilterChoices>>>,
    /// With a filtered report: the rollouts kept and the rollouts it was applied to.
    pub kept: RwSignal<Option<[u64; 2]>>,
    /// The last search's answer.
    pub search: RwSignal<Option<SearchAnswer>>,
    /// A search is on its way to the worker or running there.
    pub searching: RwSignal<bool>,
    /// The worker's search index: (rollouts read, of, where it stands).
    pub search_index: RwSignal<Option<(usize, usize, super::protocol::IndexOutcome)>>,
}

/// A search's answer: the query it answers, its page of hits or why it cannot run, and the
/// milliseconds from asking to the answer (the page's view of it: what a user waits).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchAnswer {
    pub query: crate::search::SearchQuery,
    pub result: Result<crate::search::SearchPage, String>,
    pub ms: f64,
    /// The worker's time on it, and of that the time reading rollouts back.
    pub worker_ms: [f64; 2],
    /// Answers so far in this page's life, this one included: tells two equal answers apart
    /// (a benchmark repeating a query waits for the next one).
    pub seq: u64,
}

/// Label rules checked by the worker: the text sent and the parsed rules or why they failed.
pub type RulesVerdict = (String, Result<Vec<crate::label::RuleSpec>, String>);

/// The current job and its worker.
struct Bridge {
    worker: Option<Worker>,
    job: u32,
    busy: bool,
    /// The worker holds the corpus of the files and import options listed (its last full
    /// computation finished): a change of report settings rescores it without reading again.
    has_corpus: bool,
    /// Keeps the message handler alive as long as its worker.
    _handler: Option<Closure<dyn FnMut(MessageEvent)>>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub fn new() -> Self {
        let results = Results {
            status: RwSignal::new(Status::Empty),
            report: RwSignal::new(None),
            report_json: RwSignal::new(Arc::new(String::new())),
            rollouts: RwSignal::new(None),
            steps: RwSignal::new(None),
            pair_tasks: RwSignal::new(None),
            pair_steps: RwSignal::new(Vec::new()),
            site_build: RwSignal::new(None),
            rules_checked: RwSignal::new(None),
            filter_checked: RwSignal::new(None),
            filter_choices: RwSignal::new(None),
            kept: RwSignal::new(None),
            search: RwSignal::new(None),
            searching: RwSignal::new(false),
            search_index: RwSignal::new(None),
        };
        Session {
            files: RwSignal::new(Vec::new()),
            handles: StoredValue::new_local(Vec::new()),
            deferred: StoredValue::new(false),
            next_id: StoredValue::new(1),
            settings: RwSignal::new(JobSettings {
                workers: default_workers(),
                ..JobSettings::default()
            }),
            notice: RwSignal::new(None),
            site: RwSignal::new(None),
            schema_checks: RwSignal::new(true),
            labels: RwSignal::new(crate::label::LabelSettings::default()),
            crashed: RwSignal::new(crate::formats::CrashPolicy::default()),
            merge_runs: RwSignal::new(false),
            transcript: RwSignal::new(crate::formats::transcript::Options::default()),
            results,
            bridge: StoredValue::new_local(Bridge {
                worker: None,
                job: 0,
                busy: false,
                has_corpus: false,
                _handler: None,
            }),
        }
    }

    /// Starts the worker now, so its WebAssembly is compiled before the first file arrives
    /// (and its pool's).
    pub fn warm_up(&self) {
        let (bridge, results, session) = (self.bridge, self.results, *self);
        let size = self.settings.get_untracked().workers;
        bridge.update_value(|b| {
            if b.worker.is_none() {
                match spawn_worker(session) {
                    Ok((w, h)) => {
                        send(&w, &ToWorker::Pool { size }, None);
                        b.worker = Some(w);
                        b._handler = Some(h);
                    }
                    Err(e) => results.status.set(Status::Failed(e)),
                }
            }
        });
    }

    pub fn results(&self) -> Results {
        self.results
    }

    /// Adds files; one already loaded (same path, size and modification time) is not added
    /// again but reported, so nothing is counted twice.
    pub fn add_files(&self, files: Vec<File>) {
        // A file of a folder picked with the directory picker knows its relative path.
        let mut from_folder = false;
        let mut with_paths: Vec<(File, String)> = files
            .into_iter()
            .map(|f| {
                let path = js_sys::Reflect::get(&f, &"webkitRelativePath".into())
                    .ok()
                    .and_then(|p| p.as_string())
                    .filter(|p| !p.is_empty());
                from_folder |= path.is_some();
                let path = path.unwrap_or_else(|| f.name());
                (f, path)
            })
            .collect();
        // A picked folder lists its files in the browser's order; read them in name order, as
        // the CLI walks a folder and a drop is walked, so a pick reads like either, and only
        // its .json, .jsonl, .eval and archive files, as the CLI reads a folder.
        let mut skipped = 0;
        if from_folder {
            let before = with_paths.len();
            with_paths.retain(|(_, p)| super::folders::is_rollout_file_name(p));
            skipped = before - with_paths.len();
            with_paths.sort_by(|a, b| crate::ingest::path_order(&a.1, &b.1));
        }
        self.add_files_with_paths(with_paths, skipped);
    }

    /// [`Session::add_files`] with each file's path relative to its dropped folder; `skipped`
    /// files of the folders were not .json, .jsonl, Inspect .eval or archive files (said in the
    /// notice).
    pub fn add_files_with_paths(&self, files: Vec<(File, String)>, skipped: usize) {
        // A file is loaded already when one with its path, size and modification time is. Paths
        // are compared first, by hash: the size and modification time are asked of the browser
        // (a round trip to its process for a file on disk) only where a path repeats. And one
        // update of the file list for the whole pick (a folder can hold tens of thousands).
        let loaded: Vec<(String, File)> = self.files.with_untracked(|es| {
            self.handles.with_value(|h| {
                es.iter()
                    .zip(h.iter())
                    .filter_map(|(e, (_, h))| Some((e.path.clone(), h.file()?.clone())))
                    .collect()
            })
        });
        let same =
            |a: &File, b: &File| a.size() == b.size() && a.last_modified() == b.last_modified();
        // Path → the files with that path so far (loaded, then kept from this pick).
        let mut by_path: std::collections::HashMap<&str, Vec<&File>> =
            std::collections::HashMap::new();
        for (p, f) in &loaded {
            by_path.entry(p.as_str()).or_default().push(f);
        }
        let keep: Vec<bool> = files
            .iter()
            .map(|(file, path)| {
                let same_path = by_path.entry(path.as_str()).or_default();
                let repeat = same_path.iter().any(|f| same(f, file));
                if !repeat {
                    same_path.push(file);
                }
                !repeat
            })
            .collect();
        drop(by_path);
        let mut duplicates = Vec::new();
        let mut entries = Vec::new();
        let mut handles = Vec::new();
        let options = self.import_options();
        let count = files.len();
        for ((file, path), keep) in files.into_iter().zip(keep) {
            if !keep {
                duplicates.push(file.name());
                continue;
            }
            let id = self.new_id();
            entries.push(FileEntry {
                id,
                name: file.name(),
                path,
                size: (count <= SIZES_ASKED_UP_TO).then(|| file.size()),
                options: options.clone(),
            });
            handles.push((id, Handle::File(file)));
        }
        let added = entries.len();
        if added > 0 {
            self.files.update(|f| f.extend(entries));
            self.handles.update_value(|h| h.extend(handles));
        }
        let mut notes = Vec::new();
        if skipped > 0 {
            notes.push(format!(
                "{skipped} files in the folders are not .json, .jsonl, Inspect .eval or archive files and were skipped"
            ));
        }
        if !duplicates.is_empty() {
            let shown: Vec<String> = duplicates.iter().take(10).cloned().collect();
            notes.push(format!(
                "already loaded, not added again: {}{}",
                shown.join(", "),
                if duplicates.len() > shown.len() {
                    format!(" and {} more", duplicates.len() - shown.len())
                } else {
                    String::new()
                }
            ));
        }
        self.notice
            .set((!notes.is_empty()).then(|| notes.join("; ")));
        if added > 0 {
            self.recompute();
        }
    }

    /// Changes the import options of several files (a run's) at once and recomputes.
    pub fn set_files_options(&self, ids: &[u32], options: crate::formats::ImportOptions) {
        let ids = IdSet::new(ids);
        let mut changed = false;
        self.files.update(|f| {
            for e in f.iter_mut().filter(|e| ids.contains(&e.id)) {
                if e.options != options {
                    e.options = options.clone();
                    changed = true;
                }
            }
        });
        if changed {
            self.recompute();
        }
    }

    /// A new file id.
    fn new_id(&self) -> u32 {
        let id = self.next_id.get_value();
        self.next_id.set_value(id + 1);
        id
    }

    /// Whether a `?data=` link is still to be downloaded.
    fn links_pending(&self) -> bool {
        self.handles
            .with_value(|h| h.iter().any(|(_, h)| matches!(h, Handle::Link(_))))
    }

    /// Adds `?data=` links (URL, file name): each is fetched by the worker and read while it
    /// downloads ([`Handle::Link`]).
    pub fn add_links(&self, links: Vec<(String, String)>) {
        if links.is_empty() {
            return;
        }
        let options = self.import_options();
        let (entries, handles): (Vec<_>, Vec<_>) = links
            .into_iter()
            .map(|(url, name)| {
                let id = self.new_id();
                let entry = FileEntry {
                    id,
                    name: name.clone(),
                    path: name,
                    size: None,
                    options: options.clone(),
                };
                (entry, (id, Handle::Link(url)))
            })
            .unzip();
        self.files.update(|f| f.extend(entries));
        self.handles.update_value(|h| h.extend(handles));
        self.recompute();
    }

    /// The worker has read link `index` of job `job` whole: its `File` from now on.
    fn link_downloaded(&self, job: u32, index: usize, file: File) {
        if self.bridge.with_value(|b| b.job) != job {
            return;
        }
        let size = file.size();
        let Some((id, old)) = self
            .handles
            .try_update_value(|h| {
                let (id, handle) = h.get_mut(index)?;
                Some((*id, std::mem::replace(handle, Handle::File(file.clone()))))
            })
            .flatten()
        else {
            return;
        };
        if let Handle::Link(url) = old {
            self.verify_site_data(&url, file);
        }
        self.files.update(|f| {
            if let Some(e) = f.iter_mut().find(|e| e.id == id) {
                e.size = Some(size);
            }
        });
        if self.deferred.get_value() && !self.links_pending() {
            self.recompute();
        }
    }

    /// Link `index` of job `job` could not be downloaded: dropped, with the reason said.
    fn link_failed(&self, job: u32, index: usize, message: String) {
        if self.bridge.with_value(|b| b.job) != job {
            return;
        }
        let Some((id, handle)) = self.handles.with_value(|h| h.get(index).cloned()) else {
            return;
        };
        // The worker's computation ends with this failure: nothing of it is waited for.
        self.bridge.update_value(|b| b.busy = false);
        self.remove_files(&[id]);
        if let Handle::Link(url) = handle {
            if let Some(d) = self.site_data(&url) {
                let warning = format!("{}: {message}", d.path);
                self.site
                    .update(|s| s.iter_mut().for_each(|s| s.warnings.push(warning.clone())));
            }
        }
        self.notice.set(Some(message));
    }

    /// The manifest entry of a published site's data file downloaded from `url`.
    fn site_data(&self, url: &str) -> Option<crate::site::DataFile> {
        self.site.with_untracked(|s| {
            let s = s.as_ref()?;
            let i = s.urls.iter().position(|u| u == url)?;
            s.manifest.data.get(i).cloned()
        })
    }

    /// Checks a site's data file, read as it downloaded, against the manifest: a mismatch is
    /// added to the site's warnings when the digest is known.
    fn verify_site_data(&self, url: &str, file: File) {
        let Some(expected) = self.site_data(url) else {
            return;
        };
        let site = self.site;
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(warning) = super::integrity::check(&file, &expected).await {
                site.update(|s| s.iter_mut().for_each(|s| s.warnings.push(warning.clone())));
            }
        });
    }

    fn import_options(&self) -> crate::formats::ImportOptions {
        crate::formats::ImportOptions {
            schema_checks: self.schema_checks.get_untracked(),
            labels: self.labels.get_untracked(),
            crashed: self.crashed.get_untracked(),
            merge_runs: self.merge_runs.get_untracked(),
            transcript: self.transcript.get_untracked(),
            ..Default::default()
        }
    }

    /// Removes files (one, or a run's) and recomputes.
    pub fn remove_files(&self, ids: &[u32]) {
        let ids = IdSet::new(ids);
        self.files.update(|f| f.retain(|e| !ids.contains(&e.id)));
        self.handles
            .update_value(|h| h.retain(|(i, _)| !ids.contains(i)));
        self.notice.set(None);
        self.recompute_with(true);
    }

    /// Switches the tool-schema checks for every file and recomputes.
    pub fn set_schema_checks(&self, on: bool) {
        self.files
            .update(|f| f.iter_mut().for_each(|e| e.options.schema_checks = on));
        self.schema_checks.set(on);
        self.recompute();
    }

    /// Sets the crash policy of every file and recomputes.
    pub fn set_crashed(&self, policy: crate::formats::CrashPolicy) {
        if self.crashed.get_untracked() == policy {
            return;
        }
        self.files
            .update(|f| f.iter_mut().for_each(|e| e.options.crashed = policy));
        self.crashed.set(policy);
        self.recompute();
    }

    /// Merges (or keeps apart) the runs of one condition for every file and recomputes.
    pub fn set_merge_runs(&self, on: bool) {
        if self.merge_runs.get_untracked() == on {
            return;
        }
        self.files
            .update(|f| f.iter_mut().for_each(|e| e.options.merge_runs = on));
        self.merge_runs.set(on);
        self.recompute();
    }

    /// Sets the transcript field mapping and reject rules of every file and recomputes.
    pub fn set_transcript(&self, options: crate::formats::transcript::Options) {
        if self.transcript.get_untracked() == options {
            return;
        }
        self.files.update(|f| {
            f.iter_mut()
                .for_each(|e| e.options.transcript = options.clone())
        });
        self.transcript.set(options);
        self.recompute();
    }

    /// Sets the first-failure label rules of every file and recomputes (labels never change a
    /// metric, only the label counts and the rollout browser's labels).
    pub fn set_labels(&self, labels: crate::label::LabelSettings) {
        if self.labels.get_untracked() == labels {
            return;
        }
        self.files
            .update(|f| f.iter_mut().for_each(|e| e.options.labels = labels.clone()));
        self.labels.set(labels);
        self.recompute();
    }

    /// Changes the settings and recomputes.
    pub fn set_settings(&self, settings: JobSettings) {
        if self.settings.get_untracked().workers != settings.workers {
            // Start (or stop) pool workers now, so they are ready when a computation needs them.
            let size = settings.workers;
            self.bridge.with_value(|b| {
                if let (Some(w), false) = (&b.worker, b.busy) {
                    send(w, &ToWorker::Pool { size }, None);
                }
            });
        }
        if self.settings.get_untracked() != settings {
            self.settings.set(settings);
            self.rescore();
        }
    }

    /// Sets the filter (the grammar's text, already checked by the worker) and rescores.
    pub fn set_filter(&self, filter: String) {
        let mut settings = self.settings.get_untracked();
        if settings.filter != filter {
            settings.filter = filter;
            self.set_settings(settings);
        }
    }

    /// Asks the worker whether a filter's text is usable (the answer lands in
    /// `results.filter_checked`); sent even while a job runs, so it is answered after it.
    pub fn check_filter(&self, text: String) {
        self.warm_up();
        self.bridge.with_value(|b| {
            if let Some(w) = &b.worker {
                send(w, &ToWorker::CheckFilter { text }, None);
            }
        });
    }

    /// Asks the worker what a filter of the loaded corpus can pick.
    pub fn query_filter_choices(&self) {
        self.ask(|job| ToWorker::FilterChoices { job });
    }

    /// Scores the loaded corpus again with the current settings, in the worker that holds it
    /// (no file is read again); falls back to [`Session::recompute`] when it holds none (a
    /// computation in flight, or none finished since the files changed).
    pub fn rescore(&self) {
        let results = self.results;
        if self
            .settings
            .get_untracked()
            .to_settings_unfiltered()
            .is_err()
        {
            return self.recompute();
        }
        let settings = self.settings.get_untracked();
        let sent = self
            .bridge
            .try_update_value(|b| match (&b.worker, b.busy, b.has_corpus) {
                (Some(w), false, true) => {
                    b.job += 1;
                    b.busy = true;
                    send(
                        w,
                        &ToWorker::Rescore {
                            job: b.job,
                            settings: settings.clone(),
                        },
                        None,
                    );
                    true
                }
                _ => false,
            });
        if sent != Some(true) {
            return self.recompute();
        }
        results.rollouts.set(None);
        results.steps.set(None);
        results.pair_tasks.set(None);
        results.pair_steps.set(Vec::new());
        results.status.set(Status::Computing {
            phase: "bootstrap".to_string(),
            done: 0,
            total: 0,
            files: [0, 0],
            archive: None,
        });
    }

    /// Starts a computation of the current files and settings, cancelling one in flight (its
    /// worker is terminated: a synchronous computation cannot be interrupted otherwise).
    pub fn recompute(&self) {
        self.recompute_with(false)
    }

    /// [`Session::recompute`]; `now`: even while links download (a file removed: the running
    /// job's files are numbered as they were, which only a new job may change).
    fn recompute_with(&self, now: bool) {
        if !now && self.bridge.with_value(|b| b.busy) && self.links_pending() {
            self.deferred.set_value(true);
            self.notice.set(Some(DEFERRED.to_string()));
            return;
        }
        if self.deferred.get_value() {
            self.deferred.set_value(false);
            if self
                .notice
                .with_untracked(|n| n.as_deref() == Some(DEFERRED))
            {
                self.notice.set(None);
            }
        }
        let (results, session) = (self.results, *self);
        results.rollouts.set(None);
        results.steps.set(None);
        results.pair_tasks.set(None);
        results.pair_steps.set(Vec::new());
        results.filter_choices.set(None);
        // Hits name corpus indices, which a new computation renumbers.
        results.search.set(None);
        results.searching.set(false);
        results.search_index.set(None);
        // A file from a dropped or picked folder keeps its relative path: some formats pair
        // files by folder (BFCL result + score, tau2 directory runs). Files and handles are
        // added and removed together, so their orders agree (no search per file: a folder
        // holds tens of thousands).
        let (names, files): (Vec<String>, Vec<JsValue>) = self.handles.with_value(|h| {
            self.files.with_untracked(|es| {
                h.iter()
                    .zip(es.iter())
                    .map(|((_, handle), e)| (e.path.clone(), handle.message_value()))
                    .unzip()
            })
        });
        if files.is_empty() {
            results.status.set(Status::Empty);
            results.report.set(None);
            results.report_json.set(Arc::new(String::new()));
            return;
        }
        // The filter is checked by the worker (its patterns need the regular-expression
        // engine, which the page does not link).
        if let Err(message) = self.settings.get_untracked().to_settings_unfiltered() {
            results.status.set(Status::Failed(message));
            return;
        }
        let settings = self.settings.get_untracked();
        let bridge = self.bridge;
        let (worker, job) = bridge
            .try_update_value(|b| {
                if b.busy {
                    if let Some(w) = b.worker.take() {
                        w.terminate();
                    }
                    b._handler = None;
                }
                if b.worker.is_none() {
                    match spawn_worker(session) {
                        Ok((w, h)) => {
                            send(
                                &w,
                                &ToWorker::Pool {
                                    size: settings.workers,
                                },
                                None,
                            );
                            b.worker = Some(w);
                            b._handler = Some(h);
                        }
                        Err(e) => {
                            results.status.set(Status::Failed(e));
                            return None;
                        }
                    }
                }
                b.job += 1;
                b.busy = true;
                b.has_corpus = false;
                Some((b.worker.clone()?, b.job))
            })
            .flatten()
            .unzip();
        let (Some(worker), Some(job)) = (worker, job) else {
            return;
        };
        results.status.set(Status::Computing {
            phase: "parse".to_string(),
            done: 0,
            // The worker says the total once it has the sizes (a big pick's are not asked here).
            total: self
                .files
                .with_untracked(|f| f.iter().map(|e| e.size.unwrap_or(0.0) as u64).sum()),
            files: [0, files.len() as u64],
            archive: None,
        });
        let options = self.files.with_untracked(|f| {
            // Files and handles are added and removed together, so the orders agree.
            f.iter().map(|e| e.options.clone()).collect()
        });
        let msg = ToWorker::Compute {
            job,
            names,
            options,
            settings,
        };
        // Posting a file asks the browser for its size and date (a round trip to its process
        // for a file on disk, 0.14 ms): a pick of thousands goes in batches, one per turn of
        // the event loop, so the page stays responsive and the worker starts on the first.
        let batch = |part: &[JsValue]| {
            let array = js_sys::Array::new();
            for f in part {
                array.push(f);
            }
            array
        };
        let mut parts = files.chunks(FILES_PER_MESSAGE);
        send(
            &worker,
            &msg,
            Some(&batch(parts.next().unwrap_or_default())),
        );
        let rest: Vec<js_sys::Array> = parts.map(batch).collect();
        if rest.is_empty() {
            return;
        }
        leptos::task::spawn_local(async move {
            for array in rest {
                next_turn().await;
                // A newer computation (or Cancel) replaced this one: its worker is gone.
                if bridge.with_value(|b| b.job != job || !b.busy) {
                    return;
                }
                send(&worker, &ToWorker::MoreFiles { job }, Some(&array));
            }
        });
    }

    /// Stops the computation in flight: its worker is terminated (the next computation starts a
    /// new one), and no report is shown, since none matches the files listed. The files stay.
    pub fn cancel(&self) {
        self.deferred.set_value(false);
        let mut stopped = false;
        self.bridge.update_value(|b| {
            if b.busy {
                if let Some(w) = b.worker.take() {
                    w.terminate();
                }
                b._handler = None;
                b.busy = false;
                b.has_corpus = false;
                // Late messages of the stopped job are ignored.
                b.job += 1;
                stopped = true;
            }
        });
        if stopped {
            self.results.report.set(None);
            self.results.report_json.set(Arc::new(String::new()));
            self.results.status.set(Status::Cancelled);
        }
    }

    /// Asks the worker for a page of rollouts.
    pub fn query_rollouts(&self, query: RolloutQuery) {
        self.ask(|job| ToWorker::Rollouts { job, query });
    }

    /// Asks the worker for a static site of the loaded files (downloaded as a zip when ready).
    pub fn build_site(&self, title: String, description: String) {
        self.results
            .site_build
            .set(Some("Building the site…".to_string()));
        self.ask(|job| ToWorker::BuildSite {
            job,
            title,
            description,
        });
    }

    /// Asks the worker for a page of search hits (the answer lands in `results.search`).
    pub fn search(&self, query: crate::search::SearchQuery) {
        let results = self.results;
        let sent = self.bridge.with_value(|b| match (&b.worker, b.busy) {
            (Some(w), false) => {
                send(w, &ToWorker::Search { job: b.job, query }, None);
                true
            }
            _ => false,
        });
        if sent {
            results.searching.set(true);
            SEARCH_SENT.with(|t| t.set(now_ms()));
        }
    }

    /// Asks the worker for one rollout's steps.
    pub fn query_steps(&self, index: usize) {
        self.ask(|job| ToWorker::Steps { job, index });
    }

    /// Asks the worker to compare two conditions task by task.
    pub fn query_pair_tasks(&self, query: crate::browse::PairTasksQuery) {
        self.ask(|job| ToWorker::PairTasks { job, query });
    }

    /// Asks the worker for the steps of several rollouts (shown side by side).
    pub fn query_steps_of(&self, indices: Vec<usize>) {
        self.ask(|job| ToWorker::StepsOf { job, indices });
    }

    /// Asks the worker to compile user label rules (the answer lands in
    /// `results.rules_checked`); sent even while a job runs, so it is answered after it.
    pub fn check_rules(&self, text: String) {
        self.warm_up();
        self.bridge.with_value(|b| {
            if let Some(w) = &b.worker {
                send(w, &ToWorker::CheckRules { text }, None);
            }
        });
    }

    fn ask(&self, make: impl FnOnce(u32) -> ToWorker) {
        self.bridge.with_value(|b| {
            if let (Some(w), false) = (&b.worker, b.busy) {
                send(w, &make(b.job), None);
            }
        });
    }
}

thread_local! {
    /// When the last search was sent (the page's clock, ms).
    static SEARCH_SENT: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
    static SEARCH_ANSWERS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// The default pool size: the cores the browser reports, at most [`super::pool::MAX_POOL`].
fn default_workers() -> u32 {
    web_sys::window()
        .map(|w| w.navigator().hardware_concurrency())
        .filter(|n| n.is_finite() && *n >= 1.0)
        .map_or(1, |n| (n as u32).min(super::pool::MAX_POOL))
}

fn send(worker: &Worker, msg: &ToWorker, files: Option<&js_sys::Array>) {
    let obj = js_sys::Object::new();
    let text = serde_json::to_string(msg).unwrap_or_default();
    let _ = js_sys::Reflect::set(&obj, &"msg".into(), &text.into());
    if let Some(files) = files {
        let _ = js_sys::Reflect::set(&obj, &"files".into(), files);
    }
    let _ = worker.post_message(&obj);
}

/// A report message with its text put back from the bytes sent beside it (the message's
/// `report` field, see `FromWorker::Report`); other messages as they are.
fn with_report(mut msg: FromWorker, data: &JsValue) -> FromWorker {
    if let FromWorker::Report { json, .. } = &mut msg {
        let bytes = js_sys::Reflect::get(data, &"report".into())
            .ok()
            .and_then(|b| b.dyn_into::<js_sys::Uint8Array>().ok())
            .map(|b| b.to_vec())
            .unwrap_or_default();
        // Not UTF-8 (it always is) reads as an unreadable report, said so on the page.
        *json = String::from_utf8(bytes).unwrap_or_default();
    }
    msg
}

fn spawn_worker(session: Session) -> Result<WorkerParts, String> {
    let (bridge, results) = (session.bridge, session.results);
    // A classic worker script of our own origin (no blob: URL, so a strict CSP allows it).
    let worker = Worker::new("./worker-loader.js")
        .map_err(|_| "could not start the background worker".to_string())?;
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let text = js_sys::Reflect::get(&e.data(), &"msg".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        match serde_json::from_str::<FromWorker>(&text).map(|m| with_report(m, &e.data())) {
            Ok(FromWorker::Site { bytes, .. }) => {
                let zip = js_sys::Reflect::get(&e.data(), &"zip".into())
                    .ok()
                    .map(|z| js_sys::Uint8Array::new(&z).to_vec())
                    .unwrap_or_default();
                super::download::download_bytes("prefix-exec-site.zip", "application/zip", &zip);
                results.site_build.set(Some(format!(
                    "Site downloaded ({:.1} MB): unzip it onto any static host.",
                    bytes as f64 / 1e6
                )));
            }
            Ok(FromWorker::Downloaded { job, index }) => {
                let file = js_sys::Reflect::get(&e.data(), &"file".into())
                    .ok()
                    .and_then(|f| f.dyn_into::<File>().ok());
                if let Some(file) = file {
                    session.link_downloaded(job, index, file);
                }
            }
            Ok(FromWorker::DownloadFailed {
                job,
                index,
                message,
            }) => session.link_failed(job, index, message),
            Ok(FromWorker::SiteFailed { message, .. }) => results
                .site_build
                .set(Some(format!("Could not build the site: {message}"))),
            Ok(msg) => {
                on_worker_message(bridge, results, msg);
                // A computation asked for while links downloaded, whose job ended otherwise.
                if session.deferred.get_value() && !bridge.with_value(|b| b.busy) {
                    session.recompute();
                }
            }
            Err(e) => results.status.set(Status::Failed(format!(
                "unreadable message from the worker: {e}"
            ))),
        }
    });
    worker.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |_e: web_sys::Event| {
        bridge.update_value(|b| {
            b.busy = false;
            b.has_corpus = false;
        });
        results.status.set(Status::Failed(
            "the background worker stopped unexpectedly; reload the page or remove the last file"
                .to_string(),
        ));
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    on_error.forget();
    Ok((worker, handler))
}

fn on_worker_message(bridge: StoredValue<Bridge, LocalStorage>, results: Results, msg: FromWorker) {
    let current = bridge.with_value(|b| b.job);
    match msg {
        FromWorker::Ready => {}
        FromWorker::Progress {
            job,
            phase,
            done,
            total,
            files,
            archive,
        } if job == current => results.status.set(Status::Computing {
            phase,
            done,
            total,
            files,
            archive,
        }),
        FromWorker::Report {
            job,
            json,
            compute_ms,
            workers,
            read_ahead,
            kept,
        } if job == current => {
            bridge.update_value(|b| {
                b.busy = false;
                b.has_corpus = true;
            });
            match serde_json::from_str::<Report>(&json) {
                Ok(report) => {
                    results.kept.set(kept);
                    results.report.set(Some(Arc::new(report)));
                    results.report_json.set(Arc::new(json));
                    results.status.set(Status::Ready {
                        compute_ms,
                        workers,
                        read_ahead,
                    });
                }
                Err(e) => results
                    .status
                    .set(Status::Failed(format!("unreadable report: {e}"))),
            }
        }
        FromWorker::Rollouts { job, page } if job == current => results.rollouts.set(Some(page)),
        FromWorker::Steps {
            job, index, steps, ..
        } if job == current => results.steps.set(Some((index, steps))),
        FromWorker::PairTasks { job, result } if job == current => {
            results.pair_tasks.set(Some(result))
        }
        FromWorker::StepsOf { job, items } if job == current => results.pair_steps.set(items),
        FromWorker::SearchIndex {
            job,
            done,
            total,
            outcome,
        } if job == current => results.search_index.set(Some((done, total, outcome))),
        FromWorker::SearchPage {
            job,
            query,
            result,
            ms: worker,
            read_ms,
        } if job == current => {
            results.searching.set(false);
            let ms = now_ms() - SEARCH_SENT.with(|t| t.get());
            let seq = SEARCH_ANSWERS.with(|n| {
                n.set(n.get() + 1);
                n.get()
            });
            results.search.set(Some(SearchAnswer {
                seq,
                query,
                result,
                ms,
                worker_ms: [worker, read_ms],
            }));
        }
        FromWorker::RulesChecked { text, result } => {
            results.rules_checked.set(Some((text, result)))
        }
        FromWorker::FilterChecked { text, result } => {
            results.filter_checked.set(Some((text, result)))
        }
        FromWorker::FilterChoices { job, choices } if job == current => {
            results.filter_choices.set(Some(Arc::new(choices)))
        }
        // Job 0 is the worker itself (it could not start or could not read a message).
        FromWorker::Failed { job, message } if job == current || job == 0 => {
            bridge.update_value(|b| b.busy = false);
            results.status.set(Status::Failed(message));
        }
        _ => {} // a message of a cancelled job
    }
}
