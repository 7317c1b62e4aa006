//! Which input files form one run, for the file list: a ToolSandbox run folder (its
//! `result_summary.json` and `trajectories/<scenario>/…`) and a tau2 directory-form run
//! (`results.json` and `simulations/…`) are one run each, however many files they hold; every
//! other file is a run of its own. A leaderboard of thousands of scenario files then lists as a
//! few runs, each expandable to its files.
//!
//! ```
//! use prefix_exec::formats::runs::group_runs;
//! let groups = group_runs(&[
//!     "agent_openai/o3-high_user_openai/gpt-4o_08_13_2025_00_17_37/result_summary.json",
//!     "agent_openai/o3-high_user_openai/gpt-4o_08_13_2025_00_17_37/trajectories/s1/execution_context.json",
//!     "tau-bench/gpt-4o-airline.json",
//! ]);
//! assert_eq!(groups.len(), 2);
//! assert_eq!(groups[0].label(), "ToolSandbox run · openai/o3-high");
//! assert_eq!(groups[0].files, [0, 1]);
//! assert_eq!(groups[1].files, [2]);
//! ```

use super::toolsandbox::{model_from_folder, run_name, run_name_without_agent_folder};

/// What kind of multi-file run a group is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RunKind {
    ToolSandbox,
    Tau2Directory,
    /// One file holding its own run(s).
    File,
}

/// One run of the file list: its folder (or the file's path) and its files, by input index, in
/// input order. Groups are in the order of their first file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunGroup {
    pub kind: RunKind,
    /// The run folder (for a single file, its path).
    pub folder: String,
    /// The agent a ToolSandbox run folder names.
    pub model: Option<String>,
    pub files: Vec<usize>,
}

impl RunGroup {
    /// `ToolSandbox run · o3-high`, `tau2 run`, or the file's path.
    pub fn label(&self) -> String {
        match (self.kind, &self.model) {
            (RunKind::ToolSandbox, Some(m)) => format!("ToolSandbox run · {m}"),
            (RunKind::ToolSandbox, None) => "ToolSandbox run".to_string(),
            (RunKind::Tau2Directory, _) => "tau2 run".to_string(),
            (RunKind::File, _) => self.folder.clone(),
        }
    }

    /// What a rollout of this run is called.
    pub fn unit(&self) -> &'static str {
        match self.kind {
            RunKind::ToolSandbox => "scenarios",
            _ => "rollouts",
        }
    }
}

/// The run a path belongs to: its kind and folder.
fn run_of(path: &str) -> (RunKind, String) {
    let parts: Vec<&str> = super::path::components(path).collect();
    let n = parts.len();
    let dir = |k: usize| parts[..k].join("/");
    if n >= 3 && parts[n - 3] == "trajectories" {
        return (RunKind::ToolSandbox, dir(n - 3));
    }
    if n >= 1 && parts[n - 1] == "result_summary.json" {
        return (RunKind::ToolSandbox, dir(n - 1));
    }
    if n >= 2 && parts[n - 2] == "simulations" {
        return (RunKind::Tau2Directory, dir(n - 2));
    }
    if n >= 1 && parts[n - 1] == "results.json" {
        return (RunKind::Tau2Directory, dir(n - 1));
    }
    (RunKind::File, path.to_string())
}

/// Groups input paths by run; see the module documentation.
pub fn group_runs<S: AsRef<str>>(paths: &[S]) -> Vec<RunGroup> {
    let mut groups: Vec<RunGroup> = Vec::new();
    // (kind, folder) → group, sorted for binary search (a hash map would add its code to the
    // page's wasm for this one use).
    let mut by_key: Vec<((RunKind, String), usize)> = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        let (kind, folder) = run_of(path.as_ref());
        // A run file dropped without its folder stays a file of its own.
        let (kind, folder) = if kind != RunKind::File && folder.is_empty() {
            (RunKind::File, path.as_ref().to_string())
        } else {
            (kind, folder)
        };
        let key = (kind, folder);
        let at = match by_key.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(found) => by_key[found].1,
            Err(slot) => {
                let (kind, folder) = key.clone();
                let model = (kind == RunKind::ToolSandbox).then(|| {
                    run_name(&folder)
                        .or_else(|| run_name_without_agent_folder(&folder))
                        .map_or_else(|| model_from_folder(&folder, &folder), |n| n.agent)
                });
                groups.push(RunGroup {
                    kind,
                    folder,
                    model,
                    files: Vec::new(),
                });
                by_key.insert(slot, (key, groups.len() - 1));
                groups.len() - 1
            }
        };
        groups[at].files.push(i);
    }
    groups
}

/// Short labels that tell a condition's runs apart, one per run key (a ToolSandbox run folder,
/// a file holding a run; `""` for rollouts that name no run), for
/// [`crate::rollout::Corpus::split_runs`]: ToolSandbox runs by their folder's timestamp
/// (`2025-08-15 23:27:18`), other runs by the part of their paths that differs (the common
/// leading folders and common trailing names dropped, a `.json`/`.jsonl` ending too).
///
/// ```
/// use prefix_exec::formats::runs::run_labels;
/// assert_eq!(
///     run_labels(&["x/agent_a/m_user_u/gpt-4o_08_15_2025_02_22_48",
///                  "x/agent_a/m_user_u/gpt-4o_08_15_2025_23_27_18"]),
///     ["2025-08-15 02:22:48", "2025-08-15 23:27:18"]
/// );
/// assert_eq!(run_labels(&["a/run1/x.json", "a/run2/x.json"]), ["run1", "run2"]);
/// ```
pub fn run_labels(keys: &[&str]) -> Vec<String> {
    let stamps: Option<Vec<String>> = keys
        .iter()
        .map(|k| {
            let name = run_name(k).or_else(|| run_name_without_agent_folder(k))?;
            let t: Vec<&str> = name.timestamp.split('_').collect();
            // mm_dd_yyyy_HH_MM_SS
            (t.len() == 6).then(|| format!("{}-{}-{} {}:{}:{}", t[2], t[0], t[1], t[3], t[4], t[5]))
        })
        .collect();
    if let Some(stamps) = stamps.filter(|s| distinct(s)) {
        return stamps;
    }
    let parts: Vec<Vec<&str>> = keys
        .iter()
        .map(|k| super::path::components(k).collect())
        .collect();
    // What the named runs share (a rollout naming no run is `unnamed` whatever they share).
    let named: Vec<&Vec<&str>> = parts.iter().filter(|p| !p.is_empty()).collect();
    let shortest = match named.len() {
        0 | 1 => 0,
        _ => named.iter().map(|p| p.len()).min().unwrap_or(0),
    };
    let common = |at: &dyn Fn(&Vec<&str>, usize) -> Option<String>| {
        (0..shortest)
            .take_while(|&i| {
                let first = at(named[0], i);
                named.iter().all(|p| at(p, i) == first)
            })
            .count()
    };
    let lead = common(&|p, i| p.get(i).map(|c| c.to_string()));
    let trail = common(&|p, i| p.len().checked_sub(i + 1).map(|j| p[j].to_string()));
    let labels: Vec<String> = parts
        .iter()
        .map(|p| {
            let start = lead.min(p.len());
            let end = p.len().saturating_sub(trail).max(start);
            let label = p[start..end].join("/");
            let label = label
                .strip_suffix(".jsonl")
                .or_else(|| label.strip_suffix(".json"))
                .unwrap_or(&label);
            if label.is_empty() {
                "unnamed".to_string()
            } else {
                label.to_string()
            }
        })
        .collect();
    if distinct(&labels) {
        labels
    } else {
        keys.iter()
            .map(|k| if k.is_empty() { "unnamed" } else { k }.to_string())
            .collect()
    }
}

fn distinct(labels: &[String]) -> bool {
    let mut sorted: Vec<&String> = labels.iter().collect();
    sorted.sort();
    sorted.windows(2).all(|w| w[0] != w[1])
}

/// A size in bytes as a person reads it: `812 B`, `4.2 KB`, `48.3 MB`, `1.21 GB` (decimal
/// units, as file managers show them); never "0.0 MB".
pub fn fmt_size(bytes: f64) -> String {
    const KB: f64 = 1e3;
    const MB: f64 = 1e6;
    const GB: f64 = 1e9;
    if bytes < KB {
        format!("{} B", bytes.max(0.0).round())
    } else if bytes < 100.0 * KB {
        format!("{:.1} KB", bytes / KB)
    } else if bytes < MB {
        format!("{:.0} KB", bytes / KB)
    } else if bytes < GB {
        format!("{:.1} MB", bytes / MB)
    } else {
        format!("{:.2} GB", bytes / GB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_group_by_folder() {
        let g = group_runs(&[
            "a/agent_x_user_y_01_02_2025_03_04_05/result_summary.json",
            "b/gpt-4.1_user_openai/gpt-4o_01_02_2025_03_04_05/trajectories/s/conversation.json",
            "a/agent_x_user_y_01_02_2025_03_04_05/trajectories/s/execution_context.json",
            "b/gpt-4.1_user_openai/gpt-4o_01_02_2025_03_04_05/result_summary.json",
            "renamed/result_summary.json",
            "t/run1/results.json",
            "t/run1/simulations/a.json",
            "result_summary.json",
            "x.jsonl",
        ]);
        let got: Vec<(String, Vec<usize>)> =
            g.iter().map(|g| (g.label(), g.files.clone())).collect();
        assert_eq!(
            got,
            [
                ("ToolSandbox run · x".to_string(), vec![0, 2]),
                ("ToolSandbox run · gpt-4.1".to_string(), vec![1, 3]),
                ("ToolSandbox run · renamed".to_string(), vec![4]),
                ("tau2 run".to_string(), vec![5, 6]),
                ("result_summary.json".to_string(), vec![7]),
                ("x.jsonl".to_string(), vec![8]),
            ]
        );
        assert_eq!(g[0].unit(), "scenarios");
    }

    #[test]
    fn run_labels_tell_runs_apart() {
        // Different timestamps of one model: the timestamps.
        assert_eq!(
            run_labels(&[
                "r-abc/ToolSandbox/data/agent_deepseek-ai/DeepSeek-V3-0324_user_openai/gpt-4o-20240806_08_15_2025_02_22_48",
                "r-abc/ToolSandbox/data/agent_deepseek-ai/DeepSeek-V3-0324_user_openai/gpt-4o-20240806_08_15_2025_23_27_18",
            ]),
            ["2025-08-15 02:22:48", "2025-08-15 23:27:18"]
        );
        // Files: the differing folders, then the differing names without their ending.
        assert_eq!(
            run_labels(&["a/b/run1/x.json", "a/b/run2/x.json", "a/b/run3/x.json"]),
            ["run1", "run2", "run3"]
        );
        assert_eq!(
            run_labels(&[
                "sims/2025-08-12_airline.json",
                "sims/2025-08-13_airline.json"
            ]),
            ["2025-08-12_airline", "2025-08-13_airline"]
        );
        // A rollout without a run beside a run.
        assert_eq!(run_labels(&["", "t.jsonl"]), ["unnamed", "t"]);
        // One key a folder of the other.
        assert_eq!(run_labels(&["a/x.json", "a/b/x.json"]), ["unnamed", "b"]);
        // Never a panic, whatever the keys.
        for keys in [&["", ""][..], &[""], &["/", "//"], &["a", "a/"], &[]] {
            let labels = run_labels(keys);
            assert_eq!(labels.len(), keys.len());
        }
    }

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(fmt_size(0.0), "0 B");
        assert_eq!(fmt_size(812.0), "812 B");
        assert_eq!(fmt_size(4_240.0), "4.2 KB");
        assert_eq!(fmt_size(512_000.0), "512 KB");
        assert_eq!(fmt_size(48_312_000.0), "48.3 MB");
        assert_eq!(fmt_size(1_210_000_000.0), "1.21 GB");
    }
}
