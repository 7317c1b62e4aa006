//! The filter bar (a filter's text, the common-cohort box, pickers that write clauses) and the
//! banner of a filtered report. The filter's text is checked by the worker (its patterns need
//! the regular-expression engine, which the page does not link); once usable, it is the
//! view's `filter` (in the URL hash) and the session's, which rescores the loaded corpus.

use leptos::prelude::*;

use crate::filter::{add_clause, equals_clause, has_common, with_common};
use crate::web::state::Session;
use crate::web::view_state::ViewState;

/// Makes `text` (checked) the report's filter: the view's (the hash) and the session's.
fn apply(view: ViewState, session: Session, text: String) {
    view.filter.set(text.clone());
    session.set_filter(text);
}

/// The filter bar, shown once files are loaded.
#[component]
pub fn FilterBar() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let results = session.results();
    // The session's filter: what the next computation applies (a link's, a published site's,
    // the last one applied here). A memo, so other settings changes leave the draft alone.
    let applied = Memo::new(move |_| session.settings.with(|s| s.filter.clone()));
    // What is typed; starts as the applied filter and follows it when it changes elsewhere
    // (a cleared banner, a loaded link or site).
    let draft = RwSignal::new(applied.get_untracked());
    Effect::new(move |_| draft.set(applied.get()));
    // The text sent to the worker for checking, and its verdict when it is an error.
    let pending = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let Some((checked, result)) = results.filter_checked.get() else {
            return;
        };
        if pending.get_untracked().as_deref() != Some(checked.as_str()) {
            return;
        }
        pending.set(None);
        match result {
            Ok(canonical) => {
                error.set(None);
                apply(view, session, canonical);
            }
            // The typed text stays, and so does the report shown.
            Err(message) => error.set(Some(message)),
        }
    });
    let submit = move |text: String| {
        pending.set(Some(text.clone()));
        session.check_filter(text);
    };
    let shown =
        move || session.files.with(|f| !f.is_empty()) || view.filter.with(|f| !f.is_empty());
    view! {
        <Show when=shown>
            <section class="filter-bar" data-testid="filter-bar">
                <form on:submit=move |e: leptos::ev::SubmitEvent| {
                    e.prevent_default();
                    submit(draft.get_untracked());
                }>
                    <label class="filter-text">
                        "Filter "
                        <input
                            type="text"
                            data-testid="filter-input"
                            spellcheck="false"
                            placeholder="model=gpt-4o; meta.termination_reason!=max_turns; task~^multi"
                            prop:value=move || draft.get()
                            on:input=move |e| draft.set(event_target_value(&e))
                        />
                    </label>
                    <button type="submit" data-testid="filter-apply">"Apply"</button>
                    <label class="filter-common" title="Score, per dataset, only the tasks every condition ran (the common cohort)">
                        <input
                            type="checkbox"
                            data-testid="filter-common"
                            prop:checked=move || applied.with(|f| has_common(f))
                            on:change=move |e| {
                                let on = event_target_checked(&e);
                                submit(with_common(&draft.get_untracked(), on));
                            }
                        />
                        " tasks every condition ran"
                    </label>
                </form>
                {move || {
                    error
                        .get()
                        .map(|m| view! { <p class="error" role="alert" data-testid="filter-error">{m}</p> })
                }}
                <Pickers draft=draft/>
            </section>
        </Show>
    }
}

/// Pickers built from the corpus's choices (asked of the worker when opened): a field, one of
/// its values, and "Add", which writes `field=value` into the filter's text.
#[component]
fn Pickers(draft: RwSignal<String>) -> impl IntoView {
    let session = expect_context::<Session>();
    let results = session.results();
    let field = RwSignal::new(String::new());
    let value = RwSignal::new(String::new());
    let on_toggle = move |e: leptos::ev::Event| {
        let open = event_target::<web_sys::Element>(&e).has_attribute("open");
        if open && results.filter_choices.with_untracked(Option::is_none) {
            session.query_filter_choices();
        }
    };
    // The fields and, for the chosen field, its values with their counts.
    let fields = move || {
        results
            .filter_choices
            .get()
            .map(|c| c.fields().into_iter().map(|(f, _)| f).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let values = move || {
        let chosen = field.get();
        results
            .filter_choices
            .get()
            .and_then(|c| {
                c.fields()
                    .into_iter()
                    .find(|(f, _)| *f == chosen)
                    .map(|(_, v)| v.to_vec())
            })
            .unwrap_or_default()
    };
    let others = move || {
        let chosen = field.get();
        let key = chosen.strip_prefix("meta.")?.to_string();
        let c = results.filter_choices.get()?;
        let f = c.meta.iter().find(|f| f.key == key)?;
        (f.others > 0).then(|| format!("{} more values not listed", f.others))
    };
    let add = move |_| {
        let (f, v) = (field.get_untracked(), value.get_untracked());
        if !f.is_empty() && !v.is_empty() {
            draft.update(|d| *d = add_clause(d, &equals_clause(&f, &[&v])));
        }
    };
    view! {
        <details class="filter-pickers" data-testid="filter-pickers" on:toggle=on_toggle>
            <summary>"Pick values"</summary>
            {move || {
                if results.filter_choices.with(Option::is_none) {
                    return view! { <p class="hint">"Reading the rollouts' fields…"</p> }.into_any();
                }
                view! {
                    <div class="filter-pick">
                        <label>
                            "Field "
                            <select
                                data-testid="filter-field"
                                on:change=move |e| {
                                    field.set(event_target_value(&e));
                                    value.set(String::new());
                                }
                                prop:value=move || field.get()
                            >
                                <option value="">"—"</option>
                                {move || fields().into_iter().map(|f| view! { <option value=f.clone()>{f.clone()}</option> }).collect_view()}
                            </select>
                        </label>
                        <label>
                            "Value "
                            <select
                                data-testid="filter-value"
                                on:change=move |e| value.set(event_target_value(&e))
                                prop:value=move || value.get()
                            >
                                <option value="">"—"</option>
                                {move || {
                                    values()
                                        .into_iter()
                                        .map(|(v, n)| view! { <option value=v.clone()>{format!("{v} ({n})")}</option> })
                                        .collect_view()
                                }}
                            </select>
                        </label>
                        <button data-testid="filter-add" on:click=add>"Add to filter"</button>
                        {move || others().map(|o| view! { <span class="hint">{o}</span> })}
                    </div>
                }
                .into_any()
            }}
        </details>
    }
}

/// "Filtered: F — N of M rollouts", with a button that clears the filter; shown while the
/// report shown is a filtered one.
#[component]
pub fn FilterBanner() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let results = session.results();
    move || {
        let filter = results.report.get()?.settings.filter.clone()?;
        let counts = results
            .kept
            .get()
            .map(|[kept, of]| format!(" — {kept} of {of} rollouts"))
            .unwrap_or_default();
        Some(view! {
            <p class="banner filtered" data-testid="filter-banner" role="status">
                <strong>"Filtered: "</strong>
                <code data-testid="filter-banner-text">{filter}</code>
                {counts}
                " "
                <button data-testid="filter-clear" on:click=move |_| apply(view, session, String::new())>
                    "Clear filter"
                </button>
            </p>
        })
    }
}
