//! Message transcripts in the settings: the field mapping each file was read with (detected
//! or set), the mapping and the reject rules for every file (the CLI's `--field` and
//! `--reject-rules`), and the text that shows a file's mapping in the file list.

use std::collections::BTreeMap;

use leptos::prelude::*;

use super::dom::target_value;
use crate::formats::transcript::mapping::{FieldMap, FIELDS};
use crate::formats::transcript::reject::{builtin_rules, RejectRule};
use crate::web::state::Session;

/// `success ← pass · task ← file name · …`, in the order the mapping lists its fields.
pub(super) fn mapping_text(mapping: &BTreeMap<String, String>) -> String {
    FIELDS
        .iter()
        .filter_map(|f| mapping.get(*f).map(|v| format!("{f} ← {v}")))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The inputs of a field mapping: six text fields, empty meaning "detect".
pub(super) fn mapping_inputs(
    prefix: &'static str,
    current: impl Fn() -> FieldMap + Copy + Send + Sync + 'static,
    apply: impl Fn(FieldMap) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let notice = expect_context::<Session>().notice;
    FIELDS
        .iter()
        .map(|&name| {
            view! {
                <label class="mapping-field" title=match name {
                    "threshold" => "a numeric outcome succeeds at or above this (default 1)",
                    _ => "a dotted path into the record, e.g. meta.id; empty: detected",
                }>
                    <span>{name}</span>
                    <input
                        type="text"
                        data-testid=format!("{prefix}-{name}")
                        placeholder=if name == "threshold" { "1" } else { "detected" }
                        prop:value=move || current().get(name)
                        on:change=move |e| {
                            let mut next = current();
                            let text = target_value(&e);
                            let text = Some(text.trim()).filter(|t| !t.is_empty());
                            match next.set_field(name, text) {
                                Ok(()) => apply(next),
                                Err(message) => notice.set(Some(message)),
                            }
                        }
                    />
                </label>
            }
        })
        .collect_view()
}

/// The transcript settings for every file: the mappings the files were read with, the
/// mapping to use, and the reject rules.
#[component]
pub fn TranscriptSettings() -> impl IntoView {
    let session = expect_context::<Session>();
    // Each distinct mapping the files were read with, and how many files used it.
    let detected = Memo::new(move |_| {
        let mut by: BTreeMap<Vec<(String, String)>, usize> = BTreeMap::new();
        if let Some(report) = session.results().report.get() {
            for input in report.inputs.iter().filter(|i| !i.mapping.is_empty()) {
                let fields = FIELDS
                    .iter()
                    .filter_map(|f| Some((f.to_string(), input.mapping.get(*f)?.clone())))
                    .collect();
                *by.entry(fields).or_default() += 1;
            }
        }
        by.into_iter().collect::<Vec<_>>()
    });
    let current = move || session.transcript.get().fields;
    let apply = move |fields: FieldMap| {
        let mut next = session.transcript.get_untracked();
        next.fields = fields;
        session.set_transcript(next);
    };
    view! {
        <details class="transcript-settings" data-testid="transcript-settings" prop:open=move || !detected.get().is_empty()>
            <summary>"Transcripts: fields and reject rules"</summary>
            <p class="hint">
                "Message transcripts (OpenAI, Responses or Anthropic messages with an outcome field) are read with a field mapping: each field is detected from common names unless set here (a dotted path into the record, e.g. evaluation.utility) — for every file, as the CLI's --field; a file's own options can set it for that file. docs/formats.md lists the names looked for."
            </p>
            <ul class="detected-mapping" data-testid="detected-mapping">
                <For
                    each=move || detected.get()
                    key=|(fields, n)| (fields.clone(), *n)
                    children=move |(fields, n)| {
                        view! {
                            <li>
                                <span class="muted">{format!("{n} file{}:", if n == 1 { "" } else { "s" })}</span>
                                {fields
                                    .into_iter()
                                    .map(|(f, from)| view! { <span class="mapping-line">{format!("{f} ← {from}")}</span> })
                                    .collect_view()}
                            </li>
                        }
                    }
                />
            </ul>
            <div class="mapping-fields">{mapping_inputs("transcript-field", current, apply)}</div>
            <label>
                <input
                    type="checkbox"
                    data-testid="transcript-text-rules"
                    prop:checked=move || session.transcript.get().reject.text_rules
                    on:change=move |e| {
                        let mut next = session.transcript.get_untracked();
                        next.reject.text_rules = event_target_checked(&e);
                        session.set_transcript(next);
                    }
                />
                " Text rules reject a call whose reply reads as an error (explicit error flags, unanswered calls and arguments that are not JSON always do)"
            </label>
            <RejectRules/>
        </details>
    }
}

/// The reject rules as JSON (the built-in table until changed).
#[component]
fn RejectRules() -> impl IntoView {
    let session = expect_context::<Session>();
    let shown = |rules: Option<Vec<RejectRule>>| {
        serde_json::to_string_pretty(&rules.unwrap_or_else(builtin_rules)).unwrap_or_default()
    };
    let text = RwSignal::new(shown(session.transcript.get_untracked().reject.rules));
    let problem = RwSignal::new(None::<String>);
    let apply = move |_| {
        let t = text.get_untracked();
        // Patterns are compiled by the worker's reader, which names any that do not compile
        // under Input problems (the page links no regular-expression engine).
        let parsed = if t.trim().is_empty() {
            Ok(None)
        } else {
            serde_json::from_str::<Vec<RejectRule>>(&t)
                .map(Some)
                .map_err(|e| format!("not a list of reject rules {{id, pattern}}: {e}"))
        };
        match parsed {
            Ok(rules) => {
                problem.set(None);
                let mut next = session.transcript.get_untracked();
                next.reject.rules = rules.filter(|r| *r != builtin_rules());
                session.set_transcript(next);
            }
            Err(e) => problem.set(Some(e)),
        }
    };
    view! {
        <details class="reject-rules">
            <summary>"Reject rules (JSON)"</summary>
            <p class="hint">
                "A JSON array of {id, pattern}: a reply whose text (its first text block) matches a pattern rejects its call, and the step records text:<id>. Patterns are regular expressions, case-sensitive; anchor them with ^. As the CLI's --reject-rules FILE."
            </p>
            <textarea
                rows="6"
                data-testid="transcript-reject-rules"
                prop:value=move || text.get()
                on:input=move |e| text.set(event_target_value(&e))
            ></textarea>
            <button data-testid="transcript-reject-rules-apply" on:click=apply>"Apply rules"</button>
            {move || problem.get().map(|p| view! { <p class="error" data-testid="transcript-reject-rules-error">{p}</p> })}
        </details>
    }
}
