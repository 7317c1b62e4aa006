//! Messages between the page and its worker.
//!
//! Each message is a JS object `{msg: "<JSON>", files?: File[]}`: the JSON is one of the enums
//! below, and `File` objects travel beside it (they are structured-cloned by the browser, so the
//! worker reads them itself and no file content is copied through the page).
//!
//! The enums are externally tagged (`{"compute": {…}}`, a unit variant as `"ready"`), not
//! tagged by a `type` field: serde reads an internally tagged enum by buffering the whole
//! message first, which cost the pool workers a tenth of a millisecond and more per message and
//! made the message handlers the largest functions the browser compiles (#28).

use serde::{Deserialize, Serialize};

use crate::browse::{PairTasks, PairTasksQuery, RolloutPage, RolloutQuery, StepView};

/// The report settings as the page sends them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSettings {
    pub bootstrap: u32,
    /// Decimal text: a u64 does not survive a trip through a JS number.
    pub seed: String,
    pub level: f64,
    /// A number, or "all".
    pub max_depth: String,
    /// Pairs to compare (method or model names); empty = the automatic pairs.
    #[serde(default)]
    pub pairs: Vec<(String, String)>,
    /// Cross-condition comparisons asked for (besides the automatic ones).
    #[serde(default)]
    pub compare: Vec<(crate::report::ConditionRef, crate::report::ConditionRef)>,
    /// Web Workers that run the bootstrap (1: the scoring worker alone). Not a report setting:
    /// the report is the same bytes for any number.
    #[serde(default = "one")]
    pub workers: u32,
    /// The filter the report is restricted to, as typed in the grammar of [`crate::filter`]
    /// (`common` for the common cohort); empty: none. Absent from older messages.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub filter: String,
}

fn one() -> u32 {
    1
}

impl Default for JobSettings {
    fn default() -> Self {
        JobSettings {
            bootstrap: 10_000,
            seed: "0".to_string(),
            level: 0.95,
            max_depth: "10".to_string(),
            pairs: Vec::new(),
            compare: Vec::new(),
            workers: 1,
            filter: String::new(),
        }
    }
}

impl JobSettings {
    /// Core settings with the filter parsed, or a message naming the bad value (the filter's
    /// says which clause and what to change). The worker's: parsing compiles the filter's
    /// patterns, and the page does not link the regular-expression engine (a size budget), so
    /// the page checks [`JobSettings::to_settings_unfiltered`] and asks the worker about the
    /// filter ([`ToWorker::CheckFilter`]).
    pub fn to_settings(&self) -> Result<crate::report::Settings, String> {
        let mut settings = self.to_settings_unfiltered()?;
        let filter = crate::filter::Filter::parse(&self.filter).map_err(|e| e.to_string())?;
        settings.filter = filter.is_active().then_some(filter);
        Ok(settings)
    }

    /// Core settings without the filter, or a message naming the bad value.
    pub fn to_settings_unfiltered(&self) -> Result<crate::report::Settings, String> {
        let seed = self
            .seed
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("seed must be a whole number ≥ 0, got {:?}", self.seed))?;
        let max_depth = if self.max_depth.trim().eq_ignore_ascii_case("all") {
            crate::score::MaxDepth::All
        } else {
            crate::score::MaxDepth::Fixed(self.max_depth.trim().parse::<u32>().map_err(|_| {
                format!(
                    "max depth must be a number or \"all\", got {:?}",
                    self.max_depth
                )
            })?)
        };
        let settings = crate::report::Settings {
            bootstrap: self.bootstrap,
            seed,
            level: self.level,
            max_depth,
            pairs: self.pairs.clone(),
            compare: self.compare.clone(),
            filter: None,
        };
        settings.validate()?;
        Ok(settings)
    }
}

/// Page → worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToWorker {
    /// Score the corpus of the last computation again with these settings (a new filter, say):
    /// no file is read again.
    Rescore { job: u32, settings: JobSettings },
    /// Parse a filter's text and say whether it is usable (its canonical spelling) — the page
    /// does not link the regular-expression engine that filters' patterns need.
    CheckFilter { text: String },
    /// What a filter of the last computed corpus can pick ([`crate::filter::choices`]).
    FilterChoices { job: u32 },
    /// Score the files sent alongside (in this order, with these names).
    Compute {
        job: u32,
        names: Vec<String>,
        /// Import options per file (name overrides, exclusions, schema checks), in file order.
        #[serde(default)]
        options: Vec<crate::formats::ImportOptions>,
        settings: JobSettings,
    },
    /// More files of job `job` (in the message's `files` array, in order): a pick of thousands
    /// of files is posted in batches, so the page is never blocked for long (posting a file
    /// asks the browser for its size, a round trip each) and the worker starts on the first.
    MoreFiles { job: u32 },
    /// A page of rollouts of the last computed corpus.
    Rollouts { job: u32, query: RolloutQuery },
    /// One rollout's steps.
    Steps { job: u32, index: usize },
    /// Two conditions compared task by task.
    PairTasks { job: u32, query: PairTasksQuery },
    /// The steps of several rollouts at once (side by side).
    StepsOf { job: u32, indices: Vec<usize> },
    /// Compile the user's label rules (JSON text) and say whether they are usable. The page
    /// does not link the regular-expression engine (a size budget), so the worker checks them.
    CheckRules { text: String },
    /// Coordinator: run the bootstrap on this many pool workers from now on (1: none).
    Pool { size: u32 },
    /// Pool worker: the per-task tables of a run's datasets, by block (`None`: not
    /// bootstrapped); each block's cells are a `Float64Array` in the message's `cells` array.
    PoolBlocks {
        run: u32,
        blocks: Vec<Option<PoolBlock>>,
    },
    /// Pool worker: run these jobs (they are `first..first + jobs.len()` of the run's list).
    PoolChunks {
        run: u32,
        first: usize,
        resamples: usize,
        /// Decimal text, as in [`JobSettings::seed`].
        seed: String,
        jobs: Vec<crate::report::BootstrapJob>,
    },
    /// Pool worker: read bytes `from..to` of the file sent beside the message as `file` and
    /// return the readings of the canonical lines that begin after a line break among them
    /// (`crate::ingest::prepared`); they are piece `piece` of parse run `run`.
    PoolPrepare {
        run: u32,
        piece: usize,
        from: u64,
        to: u64,
    },
    /// Pool worker: read and inflate the zip members `records` (member index, record) of the
    /// file sent beside the message as `file`; batch `batch` of inflate run `run`. The message's
    /// `spare`, where present, is an array of buffers of earlier batches (moved) to fill again.
    PoolInflate {
        run: u32,
        batch: usize,
        records: Vec<(usize, crate::ingest::archive::MemberRecord)>,
    },
    /// Pool worker: decompress the file (or the download's body, moved) sent beside the message
    /// as `file` with the browser's
    /// `DecompressionStream` for `format`, sending its chunks (`FromWorker::PoolGunzipped`) up
    /// to chunk `credit`; run `run`.
    PoolGunzip {
        run: u32,
        format: String,
        credit: u64,
        /// The name a download's `File` is given (a file keeps its own).
        #[serde(default)]
        name: String,
    },
    /// Pool worker: prepare the members (`ingest::whole::prepare_encoded`) whose bytes lie one
    /// after the other, `lens` bytes each, in the `Uint8Array` of the message's `bytes` field
    /// (moved): batch `batch` of whole-member run `run`.
    PoolWhole {
        run: u32,
        batch: usize,
        lens: Vec<u32>,
    },
    /// Pool worker: run `run` may send chunks up to `upto`; or stop.
    PoolGunzipCredit { run: u32, upto: u64, stop: bool },
    /// Search the loaded rollouts (`crate::search`): one page of hits.
    Search {
        job: u32,
        query: crate::search::SearchQuery,
    },
    /// A static report site of the loaded files, as a zip (sent beside the message as `zip`).
    BuildSite {
        job: u32,
        title: String,
        description: String,
    },
}

/// A dataset's per-task table as a pool worker needs it (the cells travel beside the message).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolBlock {
    pub dataset: String,
    pub tasks: usize,
    pub conditions: usize,
    pub width: usize,
}

/// How far reading one archive has come (`ingest::archive::ArchiveProgress`, named).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArchiveRead {
    pub name: String,
    /// Members read (run data).
    pub members: u64,
    /// Bytes of the archive read, of `size`.
    pub read: u64,
    pub size: u64,
    /// Bytes its members decompressed to.
    pub decompressed: u64,
}

/// Worker → page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromWorker {
    /// The worker's code is loaded and it takes messages.
    Ready,
    Progress {
        job: u32,
        /// "parse" or "bootstrap".
        phase: String,
        done: u64,
        total: u64,
        /// While reading: files read and files in all (a folder of thousands of small files).
        #[serde(default)]
        files: [u64; 2],
        /// While reading an archive or compressed file: how far into it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        archive: Option<ArchiveRead>,
    },
    /// The report, as the exact JSON text `prefix-exec score --json` writes.
    Report {
        job: u32,
        /// Not in the message's JSON: sent beside it as UTF-8 bytes (the message's `report`
        /// field, an `ArrayBuffer` moved to the page), so that megabytes of report (the 15-run
        /// leaderboard's is 12.6 MB, most of it the input list) are neither escaped into a JSON
        /// string nor turned into a JS string and back on the way.
        #[serde(skip)]
        json: String,
        compute_ms: f64,
        /// Web Workers that ran the bootstrap or read the files ahead (1: the scoring worker
        /// alone).
        #[serde(default = "one")]
        workers: u32,
        /// Lines whose JSON parse and validation the pool did (`pool::ParseRun`).
        #[serde(default)]
        read_ahead: u64,
        /// With a filter: the rollouts it kept and the rollouts it was applied to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kept: Option<[u64; 2]>,
    },
    /// The verdict on `CheckFilter` for this text: its canonical spelling, or why it cannot be
    /// read (the clause and what to change).
    FilterChecked {
        text: String,
        result: Result<String, String>,
    },
    FilterChoices {
        job: u32,
        choices: crate::filter::choices::FilterChoices,
    },
    Rollouts {
        job: u32,
        page: RolloutPage,
    },
    Steps {
        job: u32,
        index: usize,
        steps: Result<Vec<StepView>, String>,
        line: String,
    },
    PairTasks {
        job: u32,
        result: PairTasks,
    },
    StepsOf {
        job: u32,
        items: Vec<(usize, Result<Vec<StepView>, String>)>,
    },
    Failed {
        job: u32,
        message: String,
    },
    /// The verdict on `CheckRules` for this text: the parsed rules, or why they do not compile.
    RulesChecked {
        text: String,
        result: Result<Vec<crate::label::RuleSpec>, String>,
    },
    /// Pool worker → coordinator: the values of jobs `first..first + count`, one
    /// `Float64Array` each in the message's `values` array.
    PoolChunks {
        run: u32,
        first: usize,
        count: usize,
    },
    /// Pool worker → coordinator: the readings of piece `piece` of parse run `run`, encoded
    /// (`PreparedLines::encode`), as the `Uint8Array` in the message's `lines` field (moved).
    PoolPrepared {
        run: u32,
        piece: usize,
    },
    /// Pool worker → coordinator: batch `batch` of inflate run `run`: its members' bytes one
    /// after the other in the message's `members` (a `Uint8Array` moved: `lens[i]` bytes for
    /// member `i`), their preparations (`ingest::whole::prepare_encoded`) likewise in
    /// `prepared` (`prepared_lens[i]`, `None`: none); `errors[i]` says why member `i` could not
    /// be (its length is then 0).
    PoolInflated {
        run: u32,
        batch: usize,
        errors: Vec<Option<String>>,
        lens: Vec<u32>,
        prepared_lens: Vec<Option<u32>>,
    },
    /// Pool worker → coordinator: the preparations of batch `batch` of whole-member run `run`,
    /// each the `Uint8Array` (moved) or `null` at its member's place in the message's
    /// `prepared` array.
    PoolWholePrepared {
        run: u32,
        batch: usize,
        lens: Vec<Option<u32>>,
    },
    /// Pool worker → coordinator: chunk `seq` of gunzip run `run`, the `Uint8Array` in the
    /// message's `bytes` field (moved); `read` compressed bytes read so far. `end`: the stream
    /// ended well (no bytes); `failed`: the decoder failed.
    PoolGunzipped {
        run: u32,
        seq: u64,
        read: u64,
        end: bool,
        failed: bool,
    },
    /// Pool worker → coordinator: the download run `run` decompressed has all been read; its
    /// bytes as a `File` in the message's `file` field (null where the download failed).
    PoolGunzipFile {
        run: u32,
    },
    /// A `?data=` download of job `job` (file `index` of it) has all been read: its bytes as a
    /// `File` in the message's `file` field, for the page to send in place of the link from now
    /// on.
    Downloaded {
        job: u32,
        index: usize,
    },
    /// A `?data=` download of job `job` (file `index`) could not be made.
    DownloadFailed {
        job: u32,
        index: usize,
        message: String,
    },
    /// The search index of the loaded rollouts (built in the background after a computation):
    /// `done` of `total` rollouts read, and where it stands.
    SearchIndex {
        job: u32,
        done: usize,
        total: usize,
        outcome: IndexOutcome,
    },
    /// The page of hits of a `Search` (the query echoed, so the page knows what it answers),
    /// or why the pattern cannot be searched for; `ms`: the worker's time on it.
    SearchPage {
        job: u32,
        query: crate::search::SearchQuery,
        result: Result<crate::search::SearchPage, String>,
        ms: f64,
        /// Of `ms`, the time spent reading the rollouts' bytes back.
        #[serde(default)]
        read_ms: f64,
    },
    /// The site zip is in the message's `zip` field.
    Site {
        job: u32,
        bytes: u64,
    },
    SiteFailed {
        job: u32,
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_settings_round_trip_with_and_without_a_filter() {
        let plain = JobSettings::default();
        let text = serde_json::to_string(&plain).unwrap();
        assert!(!text.contains("filter"), "no filter, no key: {text}");
        assert_eq!(serde_json::from_str::<JobSettings>(&text).unwrap(), plain);
        assert!(plain.to_settings().unwrap().filter.is_none());
        // An older message (no `filter` key) still parses.
        let old = r#"{"bootstrap":10,"seed":"1","level":0.9,"max_depth":"all"}"#;
        let old: JobSettings = serde_json::from_str(old).unwrap();
        assert_eq!(old.filter, "");
        let filtered = JobSettings {
            filter: "model = a ; common".to_string(),
            ..JobSettings::default()
        };
        let text = serde_json::to_string(&filtered).unwrap();
        assert_eq!(
            serde_json::from_str::<JobSettings>(&text).unwrap(),
            filtered
        );
        let settings = filtered.to_settings().unwrap();
        assert_eq!(settings.filter.unwrap().to_string(), "model=a; common");
        assert!(filtered.to_settings_unfiltered().unwrap().filter.is_none());
        // A blank filter is no filter; a bad one names its clause.
        let blank = JobSettings {
            filter: " ; ".to_string(),
            ..JobSettings::default()
        };
        assert!(blank.to_settings().unwrap().filter.is_none());
        let bad = JobSettings {
            filter: "colour=red".to_string(),
            ..JobSettings::default()
        };
        assert!(bad.to_settings().unwrap_err().contains("unknown field"));
    }

    /// The pool's answers read as [`PoolReply`] on the coordinator, externally tagged; any
    /// other message (`ready`, progress) does not read as one, which the coordinator ignores.
    #[test]
    fn pool_replies_read_from_the_pool_workers_messages() {
        let inflated = FromWorker::PoolInflated {
            run: 3,
            batch: 7,
            errors: vec![None, Some("corrupt".into())],
            lens: vec![12, 0],
            prepared_lens: vec![Some(5), None],
        };
        let text = serde_json::to_string(&inflated).unwrap();
        assert!(text.starts_with(r#"{"pool_inflated":{"#), "{text}");
        assert_eq!(
            serde_json::from_str::<PoolReply>(&text).unwrap(),
            PoolReply::PoolInflated {
                run: 3,
                batch: 7,
                errors: vec![None, Some("corrupt".into())],
                lens: vec![12, 0],
                prepared_lens: vec![Some(5), None],
            }
        );
        let ready = serde_json::to_string(&FromWorker::Ready).unwrap();
        assert_eq!(ready, r#""ready""#);
        assert!(serde_json::from_str::<PoolReply>(&ready).is_err());
        let request = ToWorker::PoolGunzipCredit {
            run: 1,
            upto: 4,
            stop: false,
        };
        let text = serde_json::to_string(&request).unwrap();
        assert_eq!(serde_json::from_str::<ToWorker>(&text).unwrap(), request);
    }

    #[test]
    fn an_empty_filter_gives_the_same_report_bytes() {
        let text = concat!(
            r#"{"dataset":"d","task_id":"t1","model":"m","method":"x","success":true,"steps":[{"ok":true}]}"#,
            "\n",
            r#"{"dataset":"d","task_id":"t2","model":"m","method":"x","success":false,"steps":[{"ok":false}]}"#,
            "\n"
        );
        let corpus = crate::ingest::read_files([("r.jsonl", text.as_bytes())]);
        let report = |filter: &str| {
            let job = JobSettings {
                bootstrap: 200,
                filter: filter.to_string(),
                ..JobSettings::default()
            };
            crate::report::build_report(&corpus, &job.to_settings().unwrap()).to_json()
        };
        assert_eq!(report(""), report("  "));
        assert_eq!(
            report(""),
            crate::report::build_report(
                &corpus,
                &JobSettings {
                    bootstrap: 200,
                    ..JobSettings::default()
                }
                .to_settings_unfiltered()
                .unwrap()
            )
            .to_json()
        );
        assert_ne!(report(""), report("task=t1"));
    }
}

/// What the scoring worker reads of a pool worker's message: the JSON of [`FromWorker`]'s
/// `pool_*` and `failed` messages (any other, such as `ready`, does not read as one and is
/// ignored). A type of its own so that the worker's wasm does not carry `FromWorker`'s
/// deserializer, which only the page needs (a size budget, README "Size").
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolReply {
    PoolChunks {
        run: u32,
        first: usize,
        count: usize,
    },
    PoolPrepared {
        run: u32,
        piece: usize,
    },
    PoolInflated {
        run: u32,
        batch: usize,
        errors: Vec<Option<String>>,
        lens: Vec<u32>,
        prepared_lens: Vec<Option<u32>>,
    },
    PoolWholePrepared {
        run: u32,
        batch: usize,
        lens: Vec<Option<u32>>,
    },
    PoolGunzipped {
        run: u32,
        read: u64,
        end: bool,
        failed: bool,
    },
    PoolGunzipFile {
        run: u32,
    },
    Failed {
        message: String,
    },
}

/// Where the worker's search index stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum IndexOutcome {
    Building,
    /// Built in `ms`: `texts` texts of `bytes` bytes, `kept` bytes once each.
    Ready {
        ms: f64,
        texts: u64,
        bytes: u64,
        kept: u64,
    },
    /// Its texts passed `budget` bytes: each search reads every rollout back.
    TooLarge {
        budget: u64,
    },
}
