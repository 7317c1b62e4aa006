//! The app's components, one file per panel or tab. They read the stores and format; the
//! numbers come from the report and [`crate::report::derive`].

pub mod aligned;
pub mod checkpoints;
pub mod clusters;
pub mod compare;
pub mod cost;
pub mod curves;
pub mod dom;
pub mod export;
pub mod files;
pub mod filters;
pub mod frontier;
pub mod labels;
pub mod outcomes;
pub mod progress;
pub mod ranks;
pub mod rollouts;
pub mod search;
pub mod settings;
pub mod table;
pub mod transcripts;

use std::sync::Arc;

use leptos::prelude::*;

use super::state::Session;
use super::view_state::ViewState;
use crate::report::{ConditionReport, Report};

/// The current report, if any.
pub fn report() -> Option<Arc<Report>> {
    expect_context::<Session>().results().report.get()
}

/// Conditions passing the dataset/model filters, in report order.
pub fn visible<'a>(report: &'a Report, view: &ViewState) -> Vec<&'a ConditionReport> {
    let (d, m) = (view.dataset.get(), view.model.get());
    report
        .conditions
        .iter()
        .filter(|c| (d.is_empty() || c.dataset == d) && (m.is_empty() || c.model == m))
        .collect()
}

/// The pager of a table of the visible conditions, [`PAGE_ROWS`] a page.
pub fn rows_pager(view: &ViewState) -> Option<AnyView> {
    let r = report()?;
    Some(pager_for(visible(&r, view).len(), PAGE_ROWS, "rows"))
}

/// Distinct values in report order.
pub fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    values
        .filter(|v| seen.insert(*v))
        .map(str::to_string)
        .collect()
}

/// The colour index of every method: its position among all methods of the report, so a
/// method keeps its colour in every plot.
pub fn method_colors(report: &Report) -> std::collections::HashMap<String, usize> {
    let mut methods = distinct(report.conditions.iter().map(|c| c.method.as_str()));
    methods.sort();
    methods
        .into_iter()
        .enumerate()
        .map(|(i, m)| (m, i))
        .collect()
}

/// A row's name in a table's first column: a bounded width, two lines at most (CSS `th.name`),
/// the whole name (`name / sub`) on hover; `sub` (the leaderboard's method) on a line of its own.
pub fn name_cell(name: String, sub: Option<String>) -> impl IntoView {
    name_cell_read_from(name, sub, None)
}

/// [`name_cell`], the hover also saying where the model's name was read from (a local path the
/// report keeps as `model_path`).
pub fn name_cell_read_from(
    name: String,
    sub: Option<String>,
    read_from: Option<&str>,
) -> impl IntoView {
    let mut title = match &sub {
        Some(s) => format!("{name} / {s}"),
        None => name.clone(),
    };
    if let Some(path) = read_from {
        title.push_str(&format!(" (the model named by {path})"));
    }
    let sub = sub.map(|s| {
        view! { <div class="name-sub">{s}</div> }
    });
    view! {
        <th scope="row" class="name" title=title>
            <div class="name-text">{name}</div>
            {sub}
        </th>
    }
}

/// A cell of long free text (a task id, an error): one line of a bounded width (CSS `td.clip`
/// and the cell's `class`, e.g. `"clip task"`), the whole text on hover.
pub fn clip_cell(class: &'static str, text: String) -> impl IntoView {
    let title = text.clone();
    view! {
        <td class=class title=title>
            <div class="clip-text">{text}</div>
        </td>
    }
}

/// An estimate as the report's formatter wrote it (`0.62 [0.55, 0.69]`, `0.62`, `–`), the
/// interval on a line of its own under the value, the value in bold when `bold`: a column then
/// is as wide as its interval, and the headline columns fit the first screen.
pub fn estimate_view(text: String, bold: bool) -> impl IntoView {
    let (value, interval) = match text.split_once(' ') {
        Some((v, i)) => (v.to_string(), Some(i.to_string())),
        None => (text, None),
    };
    let value = if bold {
        view! { <strong>{value}</strong> }.into_any()
    } else {
        value.into_any()
    };
    (
        value,
        interval.map(|i| view! { <span class="ci">" "{i}</span> }),
    )
}

/// Rows of a table shown at once; a report with 20,000 conditions is read a page at a time.
pub const PAGE_ROWS: usize = 100;

/// Survival plots shown at once.
pub const PAGE_PLOTS: usize = 12;

/// Where a paged list stands.
#[derive(Clone, Debug, PartialEq)]
pub struct PageInfo {
    pub page: usize,
    pub pages: usize,
    pub range: std::ops::Range<usize>,
    pub total: usize,
    pub noun: &'static str,
}

/// Pages of `size` items.
pub fn even_pages(len: usize, size: usize) -> Vec<std::ops::Range<usize>> {
    (0..len.div_ceil(size))
        .map(|p| p * size..((p + 1) * size).min(len))
        .collect()
}

/// The current page among `pages` (clamped), or `None` when one page holds everything.
pub fn current_page(
    pages: Vec<std::ops::Range<usize>>,
    total: usize,
    noun: &'static str,
) -> Option<PageInfo> {
    if pages.len() <= 1 {
        return None;
    }
    let page = expect_context::<ViewState>()
        .page
        .get()
        .min(pages.len() - 1);
    Some(PageInfo {
        page,
        pages: pages.len(),
        range: pages[page].clone(),
        total,
        noun,
    })
}

/// The current page of `items`, `size` per page (all of them when they fit one page).
pub fn page_of<T: Clone>(items: &[T], size: usize) -> Vec<T> {
    match current_page(even_pages(items.len(), size), items.len(), "") {
        Some(p) => items[p.range].to_vec(),
        None => items.to_vec(),
    }
}

/// The pager of a list of `len` items, `size` a page.
pub fn pager_for(len: usize, size: usize, noun: &'static str) -> AnyView {
    pager(current_page(even_pages(len, size), len, noun))
}

/// Previous / next buttons and where the page stands; nothing for a single page.
pub fn pager(info: Option<PageInfo>) -> AnyView {
    let Some(info) = info else {
        return ().into_any();
    };
    let view = expect_context::<ViewState>();
    let (page, last) = (info.page, info.pages - 1);
    let label = format!(
        "{} {}–{} of {} (page {} of {})",
        info.noun,
        info.range.start + 1,
        info.range.end,
        info.total,
        page + 1,
        info.pages
    );
    view! {
        <nav class="pager" data-testid="pager" aria-label="pages">
            <button
                data-testid="page-prev"
                disabled=page == 0
                on:click=move |_| view.page.set(page.saturating_sub(1))
            >
                "‹ previous"
            </button>
            <span data-testid="page-label">{label}</span>
            <button
                data-testid="page-next"
                disabled=page == last
                on:click=move |_| view.page.set((page + 1).min(last))
            >
                "next ›"
            </button>
        </nav>
    }
    .into_any()
}
/// A plot's figure: its canvas (`testid`, described by `aria`) and a "Save PNG" button
/// (`export`) saving it as `file`. One function for every plot of the Ranks and Cost tabs, so
/// the page's wasm holds one copy of it.
pub fn canvas_figure(
    canvas: NodeRef<leptos::html::Canvas>,
    testid: &'static str,
    metric: &'static str,
    aria: String,
    export: &'static str,
    file: String,
    below: AnyView,
) -> AnyView {
    view! {
        <figure class="plot">
            <canvas node_ref=canvas data-testid=testid data-metric=metric role="img" aria-label=aria></canvas>
            <button
                class="small"
                data-testid=export
                on:click=move |_| {
                    if let Some(c) = canvas.get_untracked() {
                        crate::web::download::download_canvas(&file, &c);
                    }
                }
            >
                "Save PNG"
            </button>
            {below}
        </figure>
    }
    .into_any()
}

/// A labelled `<select>` of fixed `(value, title)` options bound to a string signal.
pub fn fixed_select(
    testid: &'static str,
    label: &'static str,
    signal: RwSignal<String>,
    options: &'static [(&'static str, &'static str)],
) -> AnyView {
    let current = signal.get_untracked();
    let options = options
        .iter()
        .map(|&(value, title)| view! { <option value=value selected=current == value>{title}</option> })
        .collect_view();
    view! {
        <label>
            {label}
            <select
                data-testid=testid
                on:change=move |e| signal.set(dom::target_value(&e))
                prop:value=move || signal.get()
            >
                {options}
            </select>
        </label>
    }
    .into_any()
}

/// A labelled `<select>` bound to a string signal: a first option for "" (`empty` as its
/// label), then `options()`.
pub fn choice_select(
    testid: &'static str,
    label: &'static str,
    empty: &'static str,
    signal: RwSignal<String>,
    options: impl Fn() -> Vec<String> + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <label>
            {label}
            <select
                data-testid=testid
                on:change=move |e| signal.set(dom::target_value(&e))
                prop:value=move || signal.get()
            >
                <option value="">{empty}</option>
                {move || {
                    options()
                        .into_iter()
                        .map(|o| {
                            let selected = signal.get_untracked() == o;
                            view! { <option value=o.clone() selected=selected>{o.clone()}</option> }
                        })
                        .collect_view()
                }}
            </select>
        </label>
    }
}

/// The dataset and model filter selects, shared by several tabs.
#[component]
pub fn Filters() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let datasets = move || {
        report()
            .map(|r| distinct(r.conditions.iter().map(|c| c.dataset.as_str())))
            .unwrap_or_default()
    };
    let models = move || {
        report()
            .map(|r| {
                let d = view.dataset.get();
                distinct(
                    r.conditions
                        .iter()
                        .filter(|c| d.is_empty() || c.dataset == d)
                        .map(|c| c.model.as_str()),
                )
            })
            .unwrap_or_default()
    };
    view! {
        <div class="filters">
            {choice_select("filter-dataset", "Dataset ", "all", view.dataset, datasets)}
            {choice_select("filter-model", "Model ", "all", view.model, models)}
        </div>
    }
}
