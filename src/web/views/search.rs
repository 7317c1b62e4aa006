//! Search across every loaded rollout (`crate::search`, run by the worker): a regular
//! expression over tool names, arguments, rejected calls' replies and messages, with a field
//! and a condition to narrow it; hits listed a page at a time, each opening its rollout at its
//! step in the browser below.

use leptos::prelude::*;

use super::dom::target_value;
use super::report;
use crate::browse::{Outcome, RolloutKey};
use crate::report::table::fmt_count;
use crate::search::{Field, Hit, SearchQuery};
use crate::web::protocol::IndexOutcome;
use crate::web::state::{SearchAnswer, Session, Status};
use crate::web::view_state::ViewState;

/// Hits per page.
const HITS_PAGE: usize = 50;
const SEP: char = '\u{1f}';

/// The snippet of a hit with its first match in a `<mark>` (`mark` counts characters).
fn snippet(hit: &Hit) -> impl IntoView {
    let chars: Vec<char> = hit.text.chars().collect();
    let [a, b] = hit.mark;
    let (a, b) = (
        a.min(chars.len()),
        b.min(chars.len()).max(a.min(chars.len())),
    );
    let part = |r: std::ops::Range<usize>| chars[r].iter().collect::<String>();
    view! {
        <code class="snippet">{part(0..a)}<mark>{part(a..b)}</mark>{part(b..chars.len())}</code>
    }
}

fn hit_key(h: &Hit) -> RolloutKey {
    RolloutKey {
        dataset: h.dataset.clone(),
        model: h.model.clone(),
        method: h.method.clone(),
        task_id: h.task_id.clone(),
        trial: h.trial,
    }
}

#[component]
pub fn SearchPanel() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let results = session.results();
    let pattern = RwSignal::new(String::new());
    let field = RwSignal::new(Field::All);
    let condition = RwSignal::new(String::new());
    // The last page that answered, kept while a bad pattern's message is shown.
    let last_ok = RwSignal::new(None::<SearchAnswer>);
    Effect::new(move |_| match results.search.get() {
        Some(a) if a.result.is_ok() => last_ok.set(Some(a)),
        None => last_ok.set(None),
        _ => {}
    });
    let run = move |offset: usize| {
        let conditions = condition.with_untracked(|c| {
            let parts: Vec<&str> = c.split(SEP).collect();
            match parts[..] {
                [d, m, me] => vec![(d.to_string(), m.to_string(), me.to_string())],
                _ => Vec::new(),
            }
        });
        session.search(SearchQuery {
            pattern: pattern.get_untracked(),
            field: field.get_untracked(),
            conditions,
            offset,
            limit: HITS_PAGE,
        });
    };
    let conditions = move || {
        report()
            .map(|r| {
                r.conditions
                    .iter()
                    .map(|c| {
                        let value = format!("{}{SEP}{}{SEP}{}", c.dataset, c.model, c.method);
                        let label = format!("{} / {} / {}", c.dataset, c.model, c.method);
                        view! { <option value=value>{label}</option> }
                    })
                    .collect_view()
            })
            .unwrap_or_default()
    };
    let open = move |h: &Hit| {
        // The hit's rollout must be in the list: its whole condition, any outcome.
        view.rb_cluster.set(None);
        view.rb_outcome.set(Outcome::All);
        view.rb_search.set(String::new());
        view.open_rollout(&hit_key(h), h.step, true);
    };
    let error = move || {
        let a = results.search.get()?;
        let e = a.result.err()?;
        Some(view! { <p class="error" data-testid="search-error">{e}</p> })
    };
    let hits = move || {
        let a = last_ok.get()?;
        let page = a.result.ok()?;
        let rows = page
            .hits
            .iter()
            .map(|h| {
                let hit = h.clone();
                let step = h.step.map_or("message".to_string(), |s| s.to_string());
                view! {
                    <tr
                        data-testid="search-hit"
                        data-rollout=h.rollout.to_string()
                        data-step=h.step.map(|s| s.to_string()).unwrap_or_default()
                        tabindex="0"
                        on:click=move |_| open(&hit)
                    >
                        <td>{format!("{} / {} · {}", h.dataset, h.model, h.method)}</td>
                        <td>{h.task_id.clone()}</td>
                        <td class="num">{h.trial}</td>
                        <td class="num">{step}</td>
                        <td>{h.field.name()}</td>
                        <td class="clip">{snippet(h)}</td>
                    </tr>
                }
            })
            .collect_view();
        let (offset, shown, total) = (page.offset, page.hits.len(), page.total);
        let unreadable = (page.unreadable_total > 0).then(|| {
            let first = page
                .unreadable
                .first()
                .map(|(_, e)| format!(" (first: {e})"))
                .unwrap_or_default();
            view! {
                <p class="error" data-testid="search-unreadable">
                    {format!("{} rollouts could not be read back and were not searched{first}.", fmt_count(page.unreadable_total as u64))}
                </p>
            }
        });
        let query = a.query.clone();
        Some(view! {
            <p
                class="hint"
                data-testid="search-count"
                data-total=total.to_string()
                data-ms=format!("{:.0}", a.ms)
                data-seq=a.seq.to_string()
                data-worker-ms=format!("{:.0}", a.worker_ms[0])
                data-read-ms=format!("{:.0}", a.worker_ms[1])
            >
                {format!(
                    "{} hits for /{}/ ({}) in {} rollouts; showing {}–{} · {:.1} s",
                    fmt_count(total as u64),
                    query.pattern,
                    query.field.name(),
                    fmt_count(page.rollouts as u64),
                    fmt_count((offset + 1).min(offset + shown) as u64),
                    fmt_count((offset + shown) as u64),
                    a.ms / 1000.0
                )}
            </p>
            {unreadable}
            <div class="table-wrap">
                <table class="data search-hits">
                    <thead>
                        <tr>
                            <th scope="col">"Condition"</th>
                            <th scope="col">"Task"</th>
                            <th scope="col" class="num">"Trial"</th>
                            <th scope="col" class="num">"Step"</th>
                            <th scope="col">"Field"</th>
                            <th scope="col">"Match"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            <div class="pager">
                <button data-testid="search-prev" disabled=offset == 0 on:click=move |_| run(offset.saturating_sub(HITS_PAGE))>"Previous hits"</button>
                <button data-testid="search-next" disabled=offset + shown >= total on:click=move |_| run(offset + HITS_PAGE)>"Next hits"</button>
            </div>
        })
    };
    let ready = move || matches!(results.status.get(), Status::Ready { .. });
    let index = move || {
        let (done, total, outcome) = results.search_index.get()?;
        let mb = |b: u64| b as f64 / 1e6;
        let (state, text, ms) = match outcome {
            IndexOutcome::Building => (
                "building",
                format!(
                    "Reading every rollout's texts for search: {} of {} (a search waits for \
                     this, then answers from it)…",
                    fmt_count(done as u64),
                    fmt_count(total as u64)
                ),
                None,
            ),
            IndexOutcome::Ready {
                ms,
                texts,
                bytes,
                kept,
            } => (
                "ready",
                format!(
                    "Searches answer from an index of {} rollouts' {} texts ({:.1} MB; {:.1} MB \
                     kept, texts held many times once), read in {:.1} s.",
                    fmt_count(total as u64),
                    fmt_count(texts),
                    mb(bytes),
                    mb(kept),
                    ms / 1000.0
                ),
                Some(ms),
            ),
            IndexOutcome::TooLarge { budget } => (
                "too-large",
                format!(
                    "The rollouts' texts pass {:.0} MB, more than the search index keeps: each \
                     search reads every rollout back (slower).",
                    mb(budget)
                ),
                None,
            ),
        };
        Some(view! {
            <p
                class="hint"
                data-testid="search-index"
                data-state=state
                data-ms=ms.map(|m| format!("{m:.0}")).unwrap_or_default()
            >
                {text}
            </p>
        })
    };
    view! {
        <details class="search-panel" data-testid="search-panel" open>
            <summary>"Search every rollout"</summary>
            <form
                class="filters"
                on:submit=move |e: leptos::ev::SubmitEvent| {
                    e.prevent_default();
                    run(0);
                }
            >
                <label>
                    "Regular expression "
                    <input
                        type="search"
                        data-testid="search-pattern"
                        placeholder="e.g. no such file|permission"
                        title="The regex crate's syntax; case-insensitive unless it starts with (?-i)"
                        prop:value=move || pattern.get()
                        on:input=move |e| pattern.set(target_value(&e))
                    />
                </label>
                <label>
                    "in "
                    <select
                        data-testid="search-field"
                        on:change=move |e| field.set(Field::parse(&target_value(&e)).unwrap_or_default())
                    >
                        <option value="all">"every field"</option>
                        <option value="tool">"tool names"</option>
                        <option value="args">"arguments"</option>
                        <option value="error">"rejected calls' replies"</option>
                        <option value="message">"messages"</option>
                    </select>
                </label>
                <label>
                    "of "
                    <select data-testid="search-condition" on:change=move |e| condition.set(target_value(&e))>
                        <option value="">"every condition"</option>
                        {conditions}
                    </select>
                </label>
                <button type="submit" data-testid="search-run" disabled=move || !ready() || results.searching.get()>
                    {move || if results.searching.get() { "Searching…" } else { "Search" }}
                </button>
            </form>
            {index}
            {error}
            {hits}
        </details>
    }
}
