//! Loading files (picker, drop, bundled example), the file list, and the line-error list.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::dom::file_list;
use crate::formats::runs::{fmt_size, group_runs, RunGroup};
use crate::formats::ImportOptions;
use crate::web::state::{IdSet, Session};

/// The bundled example: a synthetic grid shaped like the paper's Table 2.
pub const EXAMPLE_URL: &str = "./examples/synthetic-grid.jsonl";
pub const EXAMPLE_NAME: &str = "synthetic-grid.jsonl";
/// The second example: real released tau-bench and tau2-bench runs (MIT; see
/// static/examples/NOTICE.md), converted to canonical JSONL.
pub const PUBLIC_EXAMPLE_URL: &str = "./examples/public-leaderboard-runs.jsonl";
pub const PUBLIC_EXAMPLE_NAME: &str = "public-leaderboard-runs.jsonl";

use crate::web::site::fetch_file;

#[component]
pub fn FilesPanel() -> impl IntoView {
    let session = expect_context::<Session>();
    let load = move |url: &'static str, name: &'static str| {
        leptos::task::spawn_local(async move {
            match fetch_file(url, name).await {
                Ok(file) => session.add_files(vec![file]),
                Err(e) => session.notice.set(Some(e)),
            }
        });
    };
    let on_pick = move |e: web_sys::Event| {
        let input: Option<web_sys::HtmlInputElement> = e.target().and_then(|t| t.dyn_into().ok());
        if let Some(input) = input {
            if let Some(list) = input.files() {
                session.add_files(file_list(&list));
            }
            input.set_value("");
        }
    };
    // Where the browser has the File System Access API, the folder is walked through its
    // handle (see `folders`); the `webkitdirectory` input stays the fallback.
    let on_folder_click = move |e: web_sys::MouseEvent| {
        let Some(picker) = crate::web::folders::directory_picker() else {
            return;
        };
        e.prevent_default();
        leptos::task::spawn_local(async move {
            match crate::web::folders::pick_folder(&picker).await {
                Ok(Some((files, skipped))) => session.add_files_with_paths(files, skipped),
                Ok(None) => {}
                Err(message) => session.notice.set(Some(message)),
            }
        });
    };
    view! {
        <section class="panel files">
            <h2>"Rollout files"</h2>
            <div class="file-actions">
                <label class="button">
                    "Choose files…"
                    <input
                        type="file"
                        multiple
                        accept=".jsonl,.json,.txt,.eval,application/json"
                        data-testid="file-input"
                        class="visually-hidden"
                        on:change=on_pick
                    />
                </label>
                <label class="button" data-testid="folder-button" on:click=on_folder_click>
                    "Choose a folder…"
                    <input
                        type="file"
                        multiple
                        prop:webkitdirectory=true
                        data-testid="folder-input"
                        class="visually-hidden"
                        on:change=on_pick
                    />
                </label>
                <Show when=move || session.site.with(|s| s.is_none())>
                    <button data-testid="load-example" on:click=move |_| load(EXAMPLE_URL, EXAMPLE_NAME)>
                        "Load example"
                    </button>
                    <button
                        data-testid="load-example-public"
                        title="Released tau-bench and tau2-bench runs (MIT), converted to canonical JSONL"
                        on:click=move |_| load(PUBLIC_EXAMPLE_URL, PUBLIC_EXAMPLE_NAME)
                    >
                        "Load public runs"
                    </button>
                </Show>
            </div>
            <p class="hint">"…or drop files or whole run folders anywhere on the page (BFCL result and score files pair by their folders)."</p>
            <FileList/>
            {move || {
                session
                    .notice
                    .get()
                    .map(|n| view! { <p class="notice" data-testid="notice">{n}</p> })
            }}
        </section>
    }
}

/// Import options of a file, or of every file of a run: dataset / model / method overrides (for
/// formats that imply them, e.g. a tau-bench file's model from its name) and termination
/// reasons to exclude. A run's options are read from its first file and set on all of them.
#[component]
fn FileOptions(ids: Vec<u32>) -> impl IntoView {
    let session = expect_context::<Session>();
    let ids = StoredValue::new(ids);
    let first = ids.with_value(|i| i.first().copied().unwrap_or_default());
    let current = move || {
        session
            .files
            .with_untracked(|f| f.iter().find(|e| e.id == first).map(|e| e.options.clone()))
            .unwrap_or_default()
    };
    let apply = move |o: ImportOptions| ids.with_value(|ids| session.set_files_options(ids, o));
    let field = move |label: &'static str,
                      testid: &'static str,
                      get: fn(&ImportOptions) -> String,
                      set: fn(&mut ImportOptions, String)| {
        view! {
            <label class="stack">
                {label}
                <input
                    type="text"
                    data-testid=testid
                    placeholder="as in the file"
                    prop:value=move || get(&current())
                    on:change=move |e| {
                        let mut o = current();
                        set(&mut o, super::dom::target_value(&e));
                        apply(o);
                    }
                />
            </label>
        }
    };
    let check = move |label: &'static str,
                      testid: &'static str,
                      get: fn(&ImportOptions) -> bool,
                      set: fn(&mut ImportOptions, bool)| {
        view! {
            <label>
                <input
                    type="checkbox"
                    data-testid=testid
                    prop:checked=move || get(&current())
                    on:change=move |e| {
                        let mut o = current();
                        set(&mut o, event_target_checked(&e));
                        apply(o);
                    }
                />
                {label}
            </label>
        }
    };
    view! {
        <details class="file-options">
            <summary>"Options"</summary>
            {field("Dataset", "file-dataset", |o| o.dataset.clone().unwrap_or_default(), |o, v| {
                o.dataset = Some(v.trim().to_string()).filter(|s| !s.is_empty())
            })}
            {field("Model", "file-model", |o| o.model.clone().unwrap_or_default(), |o, v| {
                o.model = Some(v.trim().to_string()).filter(|s| !s.is_empty())
            })}
            {field("Method", "file-method", |o| o.method.clone().unwrap_or_default(), |o, v| {
                o.method = Some(v.trim().to_string()).filter(|s| !s.is_empty())
            })}
            {field(
                "Exclude termination reasons (comma-separated)",
                "file-exclude",
                |o| o.exclude_termination.join(", "),
                |o, v| {
                    o.exclude_termination = v
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                },
            )}
            {check(
                " Exclude BFCL inference errors (scored as failed before any step otherwise, as the leaderboard counts them)",
                "file-exclude-inference-errors",
                |o| o.exclude_inference_errors,
                |o, v| o.exclude_inference_errors = v,
            )}
            <p class="hint">"Excluded rollouts are counted under Input problems."</p>
            <fieldset class="inspect-options">
                <legend>"Inspect logs"</legend>
                {field("Scorer", "file-scorer", |o| o.inspect.scorer.clone().unwrap_or_default(), |o, v| {
                    o.inspect.scorer = Some(v.trim().to_string()).filter(|s| !s.is_empty())
                })}
                {field(
                    "Success value (e.g. I when I means success)",
                    "file-success-value",
                    |o| o.inspect.success_value.clone().unwrap_or_default(),
                    |o, v| o.inspect.success_value = Some(v.trim().to_string()).filter(|s| !s.is_empty()),
                )}
                {field(
                    "Numeric threshold (default 1)",
                    "file-threshold",
                    |o| o.inspect.threshold.map(|t| t.to_string()).unwrap_or_default(),
                    |o, v| o.inspect.threshold = v.trim().parse::<f64>().ok().filter(|t| t.is_finite()),
                )}
                {check(
                " Keep errored samples as failures",
                "file-keep-errored",
                |o| o.inspect.keep_errored,
                |o, v| o.inspect.keep_errored = v,
            )}
            </fieldset>
            <fieldset class="stack transcript-options">
                <legend>"Message transcripts: fields (empty = detected)"</legend>
                {super::transcripts::mapping_inputs(
                    "file-field",
                    move || current().transcript.fields,
                    move |fields| {
                        let mut o = current();
                        o.transcript.fields = fields;
                        apply(o);
                    },
                )}
            </fieldset>
            <fieldset class="stack">
                <legend>"ToolSandbox run (set on its result_summary.json)"</legend>
                <label class="stack">
                    "Success threshold τ on similarity"
                    <input
                        type="number"
                        min="0"
                        max="1"
                        step="0.01"
                        data-testid="file-ts-threshold"
                        prop:value=move || current().toolsandbox.tau.to_string()
                        on:change=move |e| {
                            let text = super::dom::target_value(&e);
                            let mut o = current();
                            match text.trim().parse::<f64>() {
                                Ok(tau) if (0.0..=1.0).contains(&tau) => {
                                    o.toolsandbox.tau = tau;
                                    apply(o);
                                }
                                _ => {
                                    session
                                        .notice
                                        .set(
                                            Some(
                                                format!(
                                                    "the similarity threshold must be a number from 0 to 1, got {text:?}",
                                                ),
                                            ),
                                        )
                                }
                            }
                        }
                    />
                </label>
                {check(
                " Keep scenarios that failed with a provider error (as failures)",
                "file-ts-provider",
                |o| o.toolsandbox.keep_provider_errors,
                |o, v| o.toolsandbox.keep_provider_errors = v,
            )}
            </fieldset>
        </details>
    }
}

/// The loaded files, one entry per run ([`group_runs`]): a file holding its own run(s) as it is;
/// a run folder (a ToolSandbox run's thousands of scenario files) as one entry with its kind,
/// model, rollouts, file count and size, its options (set on every file of the run) and its
/// files listed only when opened. The list scrolls inside its panel, so the report starts
/// within the first screen.
#[component]
fn FileList() -> impl IntoView {
    let session = expect_context::<Session>();
    // Each run with its files' ids and the folders that tell each file apart, and the run's
    // folder without those every listed file shares.
    let groups = Memo::new(move |_| {
        session.files.with(|fs| {
            let paths: Vec<&str> = fs.iter().map(|f| f.path.as_str()).collect();
            let folders = telling_folders(&paths);
            let lead = common_lead(&paths);
            group_runs(&paths)
                .into_iter()
                .map(|g| {
                    let files: Vec<(u32, String)> = g
                        .files
                        .iter()
                        .map(|&i| (fs[i].id, folders[i].clone()))
                        .collect();
                    let parts: Vec<&str> = g.folder.split('/').filter(|c| !c.is_empty()).collect();
                    let shown = match parts.get(lead..) {
                        Some(rest) if lead > 0 && !rest.is_empty() => {
                            format!(" …/{}/", rest.join("/"))
                        }
                        _ => format!(" {}/", g.folder),
                    };
                    (g, files, shown)
                })
                .collect::<Vec<_>>()
        })
    });
    view! {
        <ul class="file-list" data-testid="file-list">
            <For
                each=move || groups.get()
                key=|(g, files, shown)| (g.folder.clone(), files.clone(), shown.clone())
                children=move |(group, files, shown)| {
                    if files.len() == 1 {
                        let (id, folder) = files[0].clone();
                        view! { <FileItem id options=true folder/> }.into_any()
                    } else {
                        view! { <RunItem group files shown/> }.into_any()
                    }
                }
            />
        </ul>
    }
}

/// What the worker read of one file, once a report is in: its own input, or — for an
/// archive — its members' summed (the report lists each member as an input of its own).
fn input_of(session: Session, id: u32) -> Option<crate::report::InputOut> {
    let (index, name) = session.files.with(|fs| {
        fs.iter()
            .position(|e| e.id == id)
            .map(|i| (i, fs[i].path.clone()))
    })?;
    let report = session.results().report.get()?;
    read_of(&report, index, &name)
}

/// The read entry of the file read as `name` (its path), the `index`-th of the file list: the input at that index
/// when it is the file's own (no archive before it), else found by name.
fn read_of(
    report: &crate::report::Report,
    index: usize,
    name: &str,
) -> Option<crate::report::InputOut> {
    if let Some(own) = report
        .inputs
        .get(index)
        .filter(|i| i.archive.is_none() && i.file == name)
    {
        return Some(own.clone());
    }
    if let Some(own) = report
        .inputs
        .iter()
        .find(|i| i.archive.is_none() && i.file == name)
    {
        return Some(own.clone());
    }
    let mut members = report
        .inputs
        .iter()
        .filter(|i| i.archive.as_deref() == Some(name));
    let first = members.next()?;
    Some(members.fold(
        crate::report::InputOut {
            file: name.to_string(),
            mapping: Default::default(),
            repeats: None,
            ..first.clone()
        },
        |mut sum, m| {
            sum.bytes += m.bytes;
            sum.lines += m.lines;
            sum.rollouts += m.rollouts;
            sum.errors += m.errors;
            sum
        },
    ))
}

/// Rollouts and bytes read from these files, once a report is in.
fn inputs_of(session: Session, ids: &[u32]) -> Option<(u64, u64)> {
    let report = session.results().report.get()?;
    session.files.with(|fs| {
        let wanted = IdSet::new(ids);
        Some(
            fs.iter()
                .enumerate()
                .filter(|(_, e)| wanted.contains(&e.id))
                .filter_map(|(i, e)| read_of(&report, i, &e.path))
                .fold((0, 0), |(n, b), r| (n + r.rollouts, b + r.bytes)),
        )
    })
}

/// A run of several files: one line, its options, and its files when opened.
#[component]
fn RunItem(group: RunGroup, files: Vec<(u32, String)>, shown: String) -> impl IntoView {
    let session = expect_context::<Session>();
    let open = RwSignal::new(false);
    let ids = StoredValue::new(files.iter().map(|(id, _)| *id).collect::<Vec<u32>>());
    let files = StoredValue::new(files);
    let count = ids.with_value(Vec::len);
    // The files' sizes when the page knows them all, else the bytes the worker read.
    let known: Option<f64> = ids.with_value(|ids| {
        session.files.with_untracked(|fs| {
            let set = IdSet::new(ids);
            fs.iter()
                .filter(|e| set.contains(&e.id))
                .map(|e| e.size)
                .sum()
        })
    });
    let unit = group.unit();
    let summary = move || {
        let read = ids.with_value(|ids| inputs_of(session, ids));
        let rollouts = read
            .map(|(n, _)| format!(" · {} {unit}", fmt_count(n)))
            .unwrap_or_default();
        let size = known
            .or(read.map(|(_, b)| b as f64))
            .map(|b| format!(" · {}", fmt_size(b)))
            .unwrap_or_default();
        format!("{rollouts} · {} files{size}", fmt_count(count as u64))
    };
    let label = group.label();
    let folder = group.folder.clone();
    view! {
        <li data-testid="file-group" data-files=count.to_string()>
            <div class="file-row">
                <button
                    class="icon"
                    data-testid="file-group-toggle"
                    aria-expanded=move || open.get().to_string()
                    aria-label=format!("files of {folder}")
                    on:click=move |_| open.update(|o| *o = !*o)
                >
                    {move || if open.get() { "▾" } else { "▸" }}
                </button>
                <span class="file-name run-name" title=group.folder.clone()>
                    <strong>{label}</strong>
                    <span class="muted" data-testid="file-group-summary">{summary}</span>
                    <span class="file-folder muted">{shown}</span>
                </span>
                <button
                    class="icon"
                    data-testid="file-group-remove"
                    aria-label=format!("remove the run {}", group.folder)
                    on:click=move |_| ids.with_value(|ids| session.remove_files(ids))
                >
                    "×"
                </button>
            </div>
            <FileOptions ids=ids.get_value()/>
            {move || {
                open.get().then(|| {
                    let files = files.get_value();
                    let listed = files.len().min(MAX_LISTED);
                    let more = files.len() - listed;
                    view! {
                        <ul class="run-files">
                            {files[..listed].iter().map(|(id, folder)| view! { <FileItem id=*id options=false folder=folder.clone()/> }).collect_view()}
                            {(more > 0).then(|| view! { <li class="muted">{format!("… and {} more files", fmt_count(more as u64))}</li> })}
                        </ul>
                    }
                })
            }}
        </li>
    }
}

/// The most files a run lists when opened (the DOM stays small; the counts cover all).
const MAX_LISTED: usize = 500;

/// `31,032`.
fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How many leading folders every path shares (a repository extracted as one top folder).
pub fn common_lead(paths: &[&str]) -> usize {
    let mut split = paths.iter().map(|p| folders_of(p).0);
    let Some(first) = split.next() else {
        return 0;
    };
    split.fold(first.len(), |n, f| {
        n.min(f.len())
            .min(first.iter().zip(&f).take_while(|(a, b)| a == b).count())
    })
}

/// A path's folders and its name.
fn folders_of(path: &str) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = crate::formats::path::components(path).collect();
    let name = parts.pop().unwrap_or_default();
    (parts, name)
}

/// For each path, the folders that tell it apart from the other paths with the same file name
/// (`""` for a name no other path has), each left-out run of folders shown as `…/`:
/// - the folders every path of that name shares at the start or at the end are left out (a
///   repository extracted as one top folder, a `result/` folder every run has);
/// - of the rest, the first folder (where a run's or a model's folder usually is), and after it,
///   when others start with the same folder, the fewest last folders that no other path of that
///   name and first folder ends with: `…/gpt-oss-20b-vllm/`, `…/codex1/…/airport/t04/…/`.
///
/// The full path stays the entry's hover text. (Counted in string-keyed maps, the kind the page
/// already links: a map per key type would add its code to the page's wasm.)
pub fn telling_folders(paths: &[&str]) -> Vec<String> {
    use std::collections::HashMap;
    let split: Vec<(Vec<&str>, &str)> = paths.iter().map(|p| folders_of(p)).collect();
    // Each name's group: its first path, its size, its shortest path's folder count, and the
    // folders all its paths share at the start and (past those) at the end.
    let mut group_of: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<[usize; 5]> = Vec::new(); // [first, size, shortest, lead, trail]
    let group: Vec<usize> = split
        .iter()
        .enumerate()
        .map(|(i, (folders, name))| {
            let g = *group_of.entry(name.to_string()).or_insert_with(|| {
                groups.push([i, 0, folders.len(), folders.len(), folders.len()]);
                groups.len() - 1
            });
            let [first, size, shortest, lead, trail] = &mut groups[g];
            let other = &split[*first].0;
            *size += 1;
            *shortest = (*shortest).min(folders.len());
            *lead = (*lead).min(
                folders
                    .iter()
                    .zip(other)
                    .take_while(|(a, b)| a == b)
                    .count(),
            );
            let same_end = folders.iter().rev().zip(other.iter().rev());
            *trail = (*trail).min(same_end.take_while(|(a, b)| a == b).count());
            g
        })
        .collect();
    for [_, _, shortest, lead, trail] in &mut groups {
        *trail = (*trail).min(*shortest - *lead);
    }
    // The folders between the shared ends.
    let middle = |i: usize| -> &[&str] {
        let [_, _, _, lead, trail] = groups[group[i]];
        let f = &split[i].0;
        &f[lead..f.len() - trail]
    };
    let repeated: Vec<usize> = (0..split.len())
        .filter(|&i| groups[group[i]][1] > 1)
        .collect();
    let key = |i: usize, end: &[&str]| {
        let m = middle(i);
        format!(
            "{}\u{1f}{}\u{1f}{}",
            split[i].1,
            m.first().copied().unwrap_or_default(),
            end.join("/")
        )
    };
    // Paths sharing their name and first folder: the fewest last folders that tell each apart
    // (0 for a first folder no other path of its name starts with).
    let mut keep: Vec<usize> = vec![0; split.len()];
    let mut open: Vec<usize> = Vec::new();
    let mut firsts: HashMap<String, usize> = HashMap::new();
    for &i in &repeated {
        *firsts.entry(key(i, &[])).or_default() += 1;
    }
    for &i in &repeated {
        if middle(i).len() > 1 && firsts[&key(i, &[])] > 1 {
            open.push(i);
        }
    }
    let mut s = 1;
    while !open.is_empty() {
        let mut ends: HashMap<String, usize> = HashMap::new();
        for &i in &repeated {
            let m = middle(i);
            if m.len() >= s {
                *ends.entry(key(i, &m[m.len() - s..])).or_default() += 1;
            }
        }
        open.retain(|&i| {
            let m = middle(i);
            keep[i] = s;
            m.len() > s + 1 && ends[&key(i, &m[m.len() - s..])] > 1
        });
        s += 1;
    }
    let mut out = vec![String::new(); split.len()];
    for &i in &repeated {
        let [_, _, _, lead, trail] = groups[group[i]];
        let m = middle(i);
        let mut parts: Vec<&str> = Vec::new();
        if lead > 0 {
            parts.push("…");
        }
        if m.is_empty() {
            // No folder of its own: the last of those it shares.
            parts.extend(split[i].0.get(lead.saturating_sub(1)));
        } else {
            // The first folder, those between (one as it is, more as "…"), the last `keep`.
            let cut = m.len().saturating_sub(keep[i]).max(1);
            parts.push(m[0]);
            match cut - 1 {
                0 => {}
                1 => parts.push(m[1]),
                _ => parts.push("…"),
            }
            parts.extend(&m[cut..]);
        }
        if trail > 0 && parts.last() != Some(&"…") {
            parts.push("…");
        }
        if !parts.is_empty() {
            out[i] = parts.join("/") + "/";
        }
    }
    out
}

/// One file: its name (with the folders that tell it apart where another file has the same
/// name), size, removal, whether it repeats an earlier file, and its options when it is a run
/// of its own.
#[component]
fn FileItem(id: u32, options: bool, folder: String) -> impl IntoView {
    let session = expect_context::<Session>();
    let Some(f) = session
        .files
        .with_untracked(|fs| fs.iter().find(|e| e.id == id).cloned())
    else {
        return ().into_any();
    };
    // Where names repeat (two runs' identically named files), their folders tell them apart.
    let shown_folder = (!folder.is_empty()).then(
        || view! { <span class="file-folder muted" data-testid="file-folder">{folder}</span> },
    );
    // What the worker read of the file, looked up once per report (the lookup scans the list).
    let input = Memo::new(move |_| input_of(session, id));
    // Same bytes as a file listed earlier: the worker did not count it again.
    let repeats = move || input.get()?.repeats;
    // The size the page knows, else the bytes the worker read.
    let known = f.size;
    let size = move || {
        known
            .or_else(|| input.with(|i| i.as_ref().map(|i| i.bytes as f64)))
            .map(fmt_size)
            .unwrap_or_default()
    };
    view! {
        <li data-testid="file-item">
            <div class="file-row file-entry">
                <span class="file-name" title=f.path.clone()>{shown_folder}<span class="file-base">{f.name.clone()}</span></span>
                <span class="file-size">{size}</span>
                <button
                    class="icon"
                    data-testid="file-remove"
                    aria-label=format!("remove {}", f.name)
                    on:click=move |_| session.remove_files(&[id])
                >
                    "×"
                </button>
            </div>
            {move || {
                repeats()
                    .map(|original| {
                        view! {
                            <p class="notice" data-testid="file-repeats">
                                {format!("same bytes as {original}: already loaded, not counted again")}
                            </p>
                        }
                    })
            }}
            {move || {
                input
                    .get()
                    .map(|i| i.mapping)
                    .filter(|m| !m.is_empty())
                    .map(|m| {
                        view! {
                            <p class="hint" data-testid="file-mapping">
                                {format!("Read as a transcript: {}", super::transcripts::mapping_text(&m))}
                            </p>
                        }
                    })
            }}
            {options.then(|| view! { <FileOptions ids=vec![id]/> })}
        </li>
    }
    .into_any()
}

/// Problems in the input, one entry per kind (the report's `problems`: the message with its
/// numbers, paths and quoted names set aside) with its count; the listed diagnostics of a kind
/// after its first fold under it. Valid lines were still scored.
#[component]
pub fn ErrorList() -> impl IntoView {
    let results = expect_context::<Session>().results();
    let report = move || results.report.get();
    let place = |d: &crate::report::DiagnosticOut| match d.line {
        Some(l) => format!("{}:{}", d.file, l),
        None => d.file.clone(),
    };
    let item = move |d: &crate::report::DiagnosticOut| located("error-item", place(d), None, d);
    view! {
        {move || {
            report()
                .filter(|r| r.diagnostics_total > 0)
                .map(|r| {
                    let total = r.diagnostics_total;
                    let shown = r.diagnostics.len();
                    // The listed diagnostics by kind, in the order the kinds first appear.
                    let mut kinds: Vec<(String, u64, Vec<&crate::report::DiagnosticOut>)> = r
                        .problems
                        .iter()
                        .map(|p| (p.kind.clone(), p.count, Vec::new()))
                        .collect();
                    for d in &r.diagnostics {
                        let kind = crate::rollout::problem_kind(&d.message);
                        match kinds.iter_mut().find(|k| k.0 == kind) {
                            Some(k) => k.2.push(d),
                            None => kinds.push((kind, 1, vec![d])),
                        }
                    }
                    let heading = format!(
                        "Input problems: {total}{}",
                        if kinds.len() > 1 && (kinds.len() as u64) < total {
                            format!(" of {} kinds", kinds.len())
                        } else {
                            String::new()
                        }
                    );
                    view! {
                        <section class="panel errors" data-testid="error-list">
                            <h2>{heading}</h2>
                            <p class="hint">
                                {if total as usize > shown {
                                    format!("Counted over all {total}; the first {shown} are listed. ")
                                } else {
                                    String::new()
                                }}
                                "Every valid line was still scored."
                            </p>
                            <ol class="error-items">
                                {kinds
                                    .into_iter()
                                    .filter(|(_, _, listed)| !listed.is_empty())
                                    .map(|(_, count, listed)| {
                                        let first = item(listed[0]);
                                        let more = (count > 1)
                                            .then(|| {
                                                view! {
                                                    <details class="error-kind" data-testid="error-kind">
                                                        <summary>
                                                            {format!("{count} problems of this kind")}
                                                        </summary>
                                                        <ol>
                                                            {listed[1..].iter().map(|d| item(d)).collect_view()}
                                                        </ol>
                                                    </details>
                                                }
                                            });
                                        view! { {first} {more} }
                                    })
                                    .collect_view()}
                            </ol>
                        </section>
                    }
                })
        }}
    }
}

/// The input's own figures that reading recomputed and found equal (the report's `checks`):
/// confirmations, listed apart from the problems, folded when there are many.
#[component]
pub fn CheckList() -> impl IntoView {
    let results = expect_context::<Session>().results();
    move || {
        results
            .report
            .get()
            .filter(|r| !r.checks.is_empty())
            .map(|r| {
                let items = r
                    .checks
                    .iter()
                    .map(|d| located("check-item", short_path(&d.file), Some(d.file.clone()), d))
                    .collect_view();
                let n = r.checks.len();
                // A few are shown open; many (one per run of a leaderboard) fold.
                let open = n <= 3;
                view! {
                    <section class="panel notes checks" data-testid="check-list">
                        <details open=open>
                            <summary>
                                <h2>{format!("Self-checks passed: {n}")}</h2>
                            </summary>
                            <p class="hint">
                                "Figures the files state themselves, recomputed from their rows and found equal."
                            </p>
                            <ul>{items}</ul>
                        </details>
                    </section>
                }
            })
    }
}

/// One entry of a list of located messages: where (`place`, the whole path on hover when
/// `title` is given), then the message.
fn located(
    testid: &'static str,
    place: String,
    title: Option<String>,
    d: &crate::report::DiagnosticOut,
) -> impl IntoView {
    view! {
        <li data-testid=testid title=title>
            <code>{place}</code>
            " "
            <span>{d.message.clone()}</span>
        </li>
    }
}

/// A file's path as a narrow column shows it: its last two parts (a run folder and its
/// summary, a log's folder and its name), the whole path on hover.
fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.rsplitn(3, '/').collect();
    match parts.as_slice() {
        [name, folder, _] => format!("…/{folder}/{name}"),
        _ => path.to_string(),
    }
}

/// What the report left out and why (a dataset too big to bootstrap, too many pairs).
#[component]
pub fn ReportNotes() -> impl IntoView {
    let results = expect_context::<Session>().results();
    move || {
        results
            .report
            .get()
            .filter(|r| !r.notes.is_empty())
            .map(|r| {
                view! {
                    <section class="panel notes" data-testid="report-notes">
                        <h2>"Notes"</h2>
                        <ul>
                            {r
                                .notes
                                .iter()
                                .map(|n| view! { <li data-testid="report-note">{n.clone()}</li> })
                                .collect_view()}
                        </ul>
                    </section>
                }
            })
    }
}
