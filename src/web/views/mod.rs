//! The app's components, one file per panel or tab. They read the stores and format; the
//! numbers come from the report and [`crate::report::derive`].

pub mod checkpoints;
pub mod compare;
pub mod cost;
pub mod curves;
pub mod export;
pub mod files;
pub mod labels;
pub mod outcomes;
pub mod progress;
pub mod rollouts;
pub mod settings;
pub mod table;

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
pub fn visible(report: &Report, view: &ViewState) -> Vec<ConditionReport> {
    let (d, m) = (view.dataset.get(), view.model.get());
    report
        .conditions
        .iter()
        .filter(|c| (d.is_empty() || c.dataset == d) && (m.is_empty() || c.model == m))
        .cloned()
        .collect()
}

/// Distinct values in report order.
pub fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.iter().any(|o| o == v) {
            out.push(v.to_string());
        }
    }
    out
}

/// The colour index of a method: its position among all methods of the report, so a method
/// keeps its colour in every plot.
pub fn method_color(report: &Report, method: &str) -> usize {
    let mut methods = distinct(report.conditions.iter().map(|c| c.method.as_str()));
    methods.sort();
    methods.iter().position(|m| m == method).unwrap_or(0)
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
                on:change=move |e| signal.set(super::app::target_value(&e))
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
