//! Settings: resamples, seed, confidence level, max depth, workers; a change recomputes in the
//! worker.

use leptos::prelude::*;

use super::dom::target_value;
use crate::web::state::Session;
use crate::web::view_state::ViewState;

/// Applies a typed value to the settings.
type Edit = dyn Fn(&mut crate::web::protocol::JobSettings, String);

#[component]
pub fn SettingsPanel() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let s = session.settings;
    let update = move |f: Box<Edit>| {
        move |e: web_sys::Event| {
            let mut next = s.get_untracked();
            f(&mut next, target_value(&e));
            session.set_settings(next);
        }
    };
    view! {
        <section class="panel settings">
            <h2>"Settings"</h2>
            <div class="grid">
                <label for="set-bootstrap">"Resamples"</label>
                <input
                    id="set-bootstrap"
                    type="number"
                    min="0"
                    max="1000000"
                    step="1000"
                    data-testid="settings-bootstrap"
                    prop:value=move || s.get().bootstrap.to_string()
                    on:change=update(Box::new(|n, v| n.bootstrap = v.trim().parse().unwrap_or(n.bootstrap)))
                />
                <label for="set-seed">"Seed"</label>
                <input
                    id="set-seed"
                    type="text"
                    inputmode="numeric"
                    data-testid="settings-seed"
                    prop:value=move || s.get().seed
                    on:change=update(Box::new(|n, v| n.seed = v.trim().to_string()))
                />
                <label for="set-level">"Confidence"</label>
                <select
                    id="set-level"
                    data-testid="settings-level"
                    on:change=update(Box::new(|n, v| n.level = v.parse().unwrap_or(n.level)))
                    prop:value=move || s.get().level.to_string()
                >
                    <option value="0.9">"90%"</option>
                    <option value="0.95" selected>"95%"</option>
                    <option value="0.99">"99%"</option>
                </select>
                <label for="set-depth">"Max depth"</label>
                <input
                    id="set-depth"
                    type="text"
                    data-testid="settings-max-depth"
                    title="a number, or all"
                    prop:value=move || s.get().max_depth
                    on:change=update(Box::new(|n, v| n.max_depth = v.trim().to_string()))
                />
                <label for="set-workers">"Workers"</label>
                <input
                    id="set-workers"
                    type="number"
                    min="1"
                    max=crate::web::pool::MAX_POOL
                    step="1"
                    title="Web Workers that run the bootstrap (the numbers do not depend on it)"
                    data-testid="settings-workers"
                    prop:value=move || s.get().workers.to_string()
                    on:change=update(Box::new(|n, v| {
                        n.workers = v
                            .trim()
                            .parse::<u32>()
                            .map_or(n.workers, |w| w.clamp(1, crate::web::pool::MAX_POOL))
                    }))
                />
                <label for="set-dp">"Decimals"</label>
                <select
                    id="set-dp"
                    data-testid="settings-decimals"
                    on:change=move |e| view.decimals.set(target_value(&e).parse().unwrap_or(2))
                    prop:value=move || view.decimals.get().to_string()
                >
                    <option value="2">"2"</option>
                    <option value="3">"3"</option>
                    <option value="4">"4"</option>
                </select>
                <label for="set-schema">"Schema checks"</label>
                <input
                    id="set-schema"
                    type="checkbox"
                    data-testid="settings-schema-checks"
                    title="Check each step against the tool definitions a file carries"
                    prop:checked=move || session.schema_checks.get()
                    on:change=move |e| session.set_schema_checks(event_target_checked(&e))
                />
                <label for="set-crashed" class="wide">"Crashed rollouts"</label>
                <select
                    id="set-crashed"
                    class="wide"
                    data-testid="settings-crashed"
                    title="Episodes, samples and tests that crashed (an infrastructure or provider error): as each benchmark's leaderboard counts them (tau-bench, BFCL: failed rollouts; Inspect, ToolSandbox: left out), counted as failed rollouts, or left out, for every format (the CLI's --crashed)"
                    on:change=move |e| {
                        if let Some(p) = crate::formats::CrashPolicy::parse(&target_value(&e)) {
                            session.set_crashed(p);
                        }
                    }
                    prop:value=move || session.crashed.get().name()
                >
                    <option value="benchmark">"as the benchmark"</option>
                    <option value="count">"count as failed"</option>
                    <option value="exclude">"exclude"</option>
                </select>
                <label for="set-merge-runs">"Merge runs"</label>
                <input
                    id="set-merge-runs"
                    type="checkbox"
                    data-testid="settings-merge-runs"
                    title="Score the runs of one model and method (two run folders, two files of one model) as trials of one condition; off, each run is a condition of its own, its method naming the run (the CLI's --merge-runs)"
                    prop:checked=move || session.merge_runs.get()
                    on:change=move |e| session.set_merge_runs(event_target_checked(&e))
                />
                <label for="set-builtin-labels">"Built-in label rules"</label>
                <input
                    id="set-builtin-labels"
                    type="checkbox"
                    data-testid="settings-builtin-labels"
                    title="Label first failures the logs leave unlabeled with the built-in rules (docs/metrics.md)"
                    prop:checked=move || session.labels.get().builtin
                    on:change=move |e| {
                        let mut next = session.labels.get_untracked();
                        next.builtin = event_target_checked(&e);
                        session.set_labels(next);
                    }
                />
                <label for="set-ci">"Intervals"</label>
                <input
                    id="set-ci"
                    type="checkbox"
                    data-testid="settings-intervals"
                    prop:checked=move || view.intervals.get()
                    on:change=move |e| view.intervals.set(event_target_checked(&e))
                />
            </div>
            <LabelRules/>
            <super::transcripts::TranscriptSettings/>
        </section>
    }
}

/// The user's label rules as JSON: applied with the button, refused with the reason when they
/// do not compile. They take precedence over the built-in rules.
#[component]
fn LabelRules() -> impl IntoView {
    let session = expect_context::<Session>();
    let text = RwSignal::new(rules_text(&session.labels.get_untracked().rules));
    let problem = RwSignal::new(None::<String>);
    // The text whose verdict is awaited: the worker compiles the rules (the page links no
    // regular-expression engine), and only the answer for this text is applied.
    let pending = RwSignal::new(None::<String>);
    let take = move |parsed: Result<Vec<crate::label::RuleSpec>, String>| match parsed {
        Ok(rules) => {
            problem.set(None);
            let mut next = session.labels.get_untracked();
            next.rules = rules;
            session.set_labels(next);
        }
        Err(e) => problem.set(Some(e)),
    };
    Effect::new(move |_| {
        let Some((checked, result)) = session.results().rules_checked.get() else {
            return;
        };
        if pending.get_untracked().as_deref() == Some(checked.as_str()) {
            pending.set(None);
            take(result);
        }
    });
    let apply = move |_| {
        let t = text.get_untracked();
        if t.trim().is_empty() {
            pending.set(None);
            take(Ok(Vec::new()));
        } else {
            pending.set(Some(t.clone()));
            session.check_rules(t);
        }
    };
    view! {
        <details class="label-rules">
            <summary>"Label rules (JSON)"</summary>
            <p class="hint">
                "A JSON array of rules {id, label, error, tool, except_tool, args, dataset, termination, no_tool, reference, rationale}; patterns are case-insensitive regular expressions. They take precedence over the built-in rules."
            </p>
            <textarea
                rows="6"
                data-testid="settings-label-rules"
                placeholder=r#"[{"id": "mine", "label": "state", "error": "quota", "rationale": "why"}]"#
                prop:value=move || text.get()
                on:input=move |e| text.set(event_target_value(&e))
            ></textarea>
            <button data-testid="settings-label-rules-apply" on:click=apply>"Apply rules"</button>
            {move || problem.get().map(|p| view! { <p class="error" data-testid="settings-label-rules-error">{p}</p> })}
        </details>
    }
}

fn rules_text(rules: &[crate::label::RuleSpec]) -> String {
    if rules.is_empty() {
        String::new()
    } else {
        serde_json::to_string_pretty(rules).unwrap_or_default()
    }
}
