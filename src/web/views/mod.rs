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
            <label>
                "Dataset "
                <select
                    data-testid="filter-dataset"
                    on:change=move |e| view.dataset.set(super::app::target_value(&e))
                    prop:value=move || view.dataset.get()
                >
                    <option value="">"all"</option>
                    {move || {
                        datasets()
                            .into_iter()
                            .map(|d| {
                                let selected = view.dataset.get_untracked() == d;
                                view! { <option value=d.clone() selected=selected>{d.clone()}</option> }
                            })
                            .collect_view()
                    }}
                </select>
            </label>
            <label>
                "Model "
                <select
                    data-testid="filter-model"
                    on:change=move |e| view.model.set(super::app::target_value(&e))
                    prop:value=move || view.model.get()
                >
                    <option value="">"all"</option>
                    {move || {
                        models()
                            .into_iter()
                            .map(|m| {
                                let selected = view.model.get_untracked() == m;
                                view! { <option value=m.clone() selected=selected>{m.clone()}</option> }
                            })
                            .collect_view()
                    }}
                </select>
            </label>
        </div>
    }
}
