//! The page layout: a side panel (files, errors, settings, export) and the tabbed report.

use leptos::ev;
use leptos::prelude::*;

use super::state::{Session, Status};
use super::view_state::{Tab, ViewState};
use super::views;
use super::views::dom::file_list;

/// The root component: creates the stores, wires drag-and-drop and the URL hash.
#[component]
pub fn App() -> impl IntoView {
    let session = Session::new();
    let view = ViewState::new();
    provide_context(session);
    provide_context(view);
    session.warm_up();
    super::site::watch_agreement(session);
    leptos::task::spawn_local(super::site::open_with_data(session));

    // The hash restores the view on load and follows it afterwards.
    if let Some(hash) = web_sys::window().and_then(|w| w.location().hash().ok()) {
        view.apply_hash(hash.trim_start_matches('#'));
    }
    // A link's filter is the session's before anything is computed (the worker checks it).
    session
        .settings
        .update_untracked(|s| s.filter = view.filter.get_untracked());
    Effect::new(move |_| {
        let hash = view.to_hash();
        if let Some(w) = web_sys::window() {
            if let Ok(history) = w.history() {
                let _ = history.replace_state_with_url(
                    &wasm_bindgen::JsValue::NULL,
                    "",
                    Some(&format!("#{hash}")),
                );
            }
        }
    });

    // A new tab, filter, table order or layout, or report starts at the first page.
    let report = session.results().report;
    Effect::new(move |_| {
        report.track();
        view.tab.track();
        view.dataset.track();
        view.model.track();
        view.sort.track();
        view.layout.track();
        view.page.set(0);
    });

    // Files can be dropped anywhere on the page.
    let dragging = RwSignal::new(false);
    let _ = window_event_listener(ev::dragover, move |e: web_sys::DragEvent| {
        e.prevent_default();
        dragging.set(true);
    });
    let _ = window_event_listener(ev::dragleave, move |e: web_sys::DragEvent| {
        if e.related_target().is_none() {
            dragging.set(false);
        }
    });
    let _ = window_event_listener(ev::drop, move |e: web_sys::DragEvent| {
        e.prevent_default();
        dragging.set(false);
        let Some(dt) = e.data_transfer() else {
            return;
        };
        // Folders are walked (after the event: the entries stay readable); plain files keep
        // their names.
        let entries = super::folders::dropped_entries(&dt);
        if entries.iter().any(|e| e.is_directory()) {
            leptos::task::spawn_local(async move {
                match super::folders::files_of(entries).await {
                    Ok((files, skipped)) => session.add_files_with_paths(files, skipped),
                    Err(e) => session.notice.set(Some(e)),
                }
            });
        } else if let Some(list) = dt.files() {
            session.add_files(file_list(&list));
        }
    });

    view! {
        <div id="panic-banner" class="banner error" role="alert" hidden></div>
        <div class="drop-overlay" class:visible=move || dragging.get()>
            "Drop rollout files to add them"
        </div>
        <header class="top">
            <h1>"prefix-exec"</h1>
            <p class="tagline">
                "Prefix executability of tool-using agents — computed in your browser; your files never leave it."
            </p>
        </header>
        <div class="layout">
            <aside class="side">
                <views::files::FilesPanel/>
                <views::settings::SettingsPanel/>
                <views::export::ExportPanel/>
                <views::files::ErrorList/>
                <views::files::CheckList/>
                <views::files::ReportNotes/>
            </aside>
            <main class="main">
                <super::site::SiteHeader/>
                <views::progress::ProgressBar/>
                <views::filters::FilterBar/>
                <views::filters::FilterBanner/>
                <Tabs/>
                <TabBody/>
            </main>
        </div>
    }
}

#[component]
fn Tabs() -> impl IntoView {
    let view = expect_context::<ViewState>();
    view! {
        <nav class="tabs" role="tablist">
            {Tab::ALL
                .into_iter()
                .map(|t| {
                    view! {
                        <button
                            role="tab"
                            class="tab"
                            data-testid=format!("tab-{}", t.name())
                            aria-selected=move || (view.tab.get() == t).to_string()
                            on:click=move |_| view.tab.set(t)
                        >
                            {t.title()}
                        </button>
                    }
                })
                .collect_view()}
        </nav>
    }
}

#[component]
fn TabBody() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let session = expect_context::<Session>();
    let results = session.results();
    let has_report = move || results.report.with(|r| r.is_some());
    view! {
        <section class="tab-body" role="tabpanel">
            <Show
                when=has_report
                fallback=move || {
                    view! {
                        <div class="empty">
                            {move || match results.status.get() {
                                Status::Failed(m) => view! { <p class="error">{m}</p> }.into_any(),
                                Status::Cancelled => view! {
                                    <p data-testid="cancelled">
                                        "Cancelled. The files stay listed: remove one, change a setting, or "
                                        <button data-testid="compute-again" on:click=move |_| session.recompute()>
                                            "compute again"
                                        </button>
                                        "."
                                    </p>
                                }.into_any(),
                                Status::Computing { .. } => view! { <p>"Computing…"</p> }.into_any(),
                                _ => view! {
                                    <p>"Drop JSONL rollout files anywhere on this page, pick them with the file button, or load the example."</p>
                                    <p class="hint">"Nothing is uploaded: parsing and statistics run in a worker inside this tab."</p>
                                }.into_any(),
                            }}
                            <views::table::MainTable/>
                        </div>
                    }
                }
            >
                {move || match view.tab.get() {
                    Tab::Table => view! { <views::table::MainTable/> }.into_any(),
                    Tab::Ranks => view! { <views::ranks::Ranks/> }.into_any(),
                    Tab::Curves => view! { <views::curves::Curves/> }.into_any(),
                    Tab::Checkpoints => view! { <views::checkpoints::Checkpoints/> }.into_any(),
                    Tab::Outcomes => view! { <views::outcomes::Outcomes/> }.into_any(),
                    Tab::Labels => view! { <views::labels::Labels/> }.into_any(),
                    Tab::Cost => view! { <views::cost::Cost/> }.into_any(),
                    Tab::Compare => view! { <views::compare::Compare/> }.into_any(),
                    Tab::Rollouts => view! { <views::rollouts::Rollouts/> }.into_any(),
                }}
            </Show>
        </section>
    }
}
