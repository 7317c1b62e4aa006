//! First-failure labels: the agent's first failures per condition as a stacked bar of the
//! paper's five labels (and "unlabeled"); the environment's faults are counted apart. With the
//! environment they sum to RR-Eligible. Diagnostic only: no metric depends on them.

use leptos::prelude::*;

use super::{name_cell, page_of, report, rows_pager, visible, Filters, PAGE_ROWS};
use crate::plot::color_hex;
use crate::report::derive::{agent_label_shares, label_source_summary};
use crate::web::view_state::ViewState;

fn label_color(name: &str) -> String {
    match name {
        "schema" => color_hex(0),
        "dependency" => color_hex(1),
        "precondition" => color_hex(2),
        "state" => color_hex(3),
        "information" => color_hex(4),
        _ => "#999999".to_string(),
    }
}

#[component]
pub fn Labels() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let legend = ["schema", "dependency", "precondition", "state", "information", "unlabeled"]
        .into_iter()
        .map(|n| {
            view! { <span class="legend-static"><span class="swatch" style=format!("background: {}", label_color(n))></span>{n}</span> }
        })
        .collect_view();
    let rows = move || {
        let r = report()?;
        Some(
            page_of(&visible(&r, &view), PAGE_ROWS)
                .into_iter()
                .map(|c| {
                    let shares = agent_label_shares(c);
                    let environment = c.first_failure_labels.environment.unwrap_or(0);
                    let sources = label_source_summary(c).unwrap_or_default();
                    let segments = shares
                        .iter()
                        .map(|(name, n, share)| {
                            view! {
                                <span
                                    class="segment"
                                    title=format!("{name}: {n} ({:.1}%)", share * 100.0)
                                    style=format!("width: {:.3}%; background: {}", share * 100.0, label_color(name))
                                ></span>
                            }
                        })
                        .collect_view();
                    let text = shares
                        .iter()
                        .map(|(name, n, share)| format!("{name} {n} ({:.0}%)", share * 100.0))
                        .collect::<Vec<_>>()
                        .join(", ");
                    view! {
                        <tr>
                            {name_cell(format!("{} / {} / {}", c.dataset, c.model, c.method), None)}
                            <td class="num">{c.rr_eligible}</td>
                            <td class="num" data-testid="label-environment">{environment}</td>
                            <td class="bar-cell"><div class="stacked">{segments}</div></td>
                            <td data-testid="label-counts">{if text.is_empty() { "no failed prefix of the agent's".to_string() } else { text }}</td>
                            <td class="muted">{sources}</td>
                        </tr>
                    }
                })
                .collect_view(),
        )
    };
    view! {
        <div>
            <Filters/>
            <p class="hint">"The label of the first invalid action of each failed rollout (tie-break: schema, dependency, precondition, state, information), from the log, the schema check or a label rule (see Settings). Faults of the environment (server errors, timeouts, rate limits) are counted apart and are not in the five-way split; shares are of the agent's first failures. Environment + the agent's = RR-Eligible."</p>
            <div class="legend">{legend}</div>
            <div class="table-wrap">
                <table class="data" data-testid="label-table">
                    <thead>
                        <tr>
                            <th scope="col">"Condition"</th>
                            <th scope="col" class="num">"RR-Eligible"</th>
                            <th scope="col" class="num" title="First failures a label rule judged the environment's, not the agent's">"Environment"</th>
                            <th scope="col">"Shares of the agent's"</th>
                            <th scope="col">"Counts"</th>
                            <th scope="col">"Label sources"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {move || rows_pager(&view)}
            <super::clusters::FailureClusters/>
        </div>
    }
}
