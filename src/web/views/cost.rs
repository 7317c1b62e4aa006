//! Cost (Table F.2): mean tokens, latency and USD per condition where the logs have them, and
//! the relative change of each method against a chosen baseline method of the same block; below,
//! the cost frontier ([`super::frontier`]).

use leptos::prelude::*;

use super::{
    choice_select, distinct, name_cell, page_of, report, rows_pager, visible, Filters, PAGE_ROWS,
};
use crate::report::derive::{fmt_percent_change, relative_change};
use crate::report::ConditionReport;
use crate::web::view_state::ViewState;

type CostGet = fn(&ConditionReport) -> Option<Option<f64>>;

const FIELDS: [(&str, CostGet, usize); 3] = [
    ("Tokens", |c| c.cost.tokens, 0),
    ("Latency (s)", |c| c.cost.latency_s, 1),
    ("USD", |c| c.cost.usd, 4),
];

#[component]
pub fn Cost() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let methods = move || {
        report()
            .map(|r| distinct(r.conditions.iter().map(|c| c.method.as_str())))
            .unwrap_or_default()
    };
    let table = move || {
        let r = report()?;
        let fields: Vec<_> = FIELDS
            .into_iter()
            .filter(|(_, get, _)| r.conditions.iter().any(|c| get(c).is_some()))
            .collect();
        if fields.is_empty() {
            return Some(
                view! { <p>"These rollouts carry no cost fields (tokens, latency_s, usd)."</p> }
                    .into_any(),
            );
        }
        let baseline = view.cost_baseline.get();
        let conditions = visible(&r, &view);
        let bases: std::collections::HashMap<(&str, &str), &ConditionReport> = conditions
            .iter()
            .filter(|b| b.method == baseline)
            .map(|&b| ((b.dataset.as_str(), b.model.as_str()), b))
            .collect();
        let head = fields
            .iter()
            .map(|(name, _, _)| {
                let rel = (!baseline.is_empty()).then(
                    || view! { <th scope="col" class="num">{format!("Δ vs {baseline}")}</th> },
                );
                view! { <th scope="col" class="num">{*name}</th>{rel} }
            })
            .collect_view();
        let rows = page_of(&conditions, PAGE_ROWS)
            .iter()
            .map(|c| {
                let base = bases.get(&(c.dataset.as_str(), c.model.as_str())).copied();
                let cells = fields
                    .iter()
                    .map(|(_, get, dp)| {
                        let v = get(c).flatten();
                        let text = v.map_or("–".to_string(), |v| format!("{v:.dp$}", dp = *dp));
                        let rel = (!baseline.is_empty()).then(|| {
                            let change = relative_change(v, base.and_then(|b| get(b).flatten()));
                            view! { <td class="num">{change.map_or("–".to_string(), |x| fmt_percent_change(x, 1))}</td> }
                        });
                        view! { <td class="num">{text}</td>{rel} }
                    })
                    .collect_view();
                view! {
                    <tr>
                        {name_cell(format!("{} / {} / {}", c.dataset, c.model, c.method), None)}
                        {cells}
                    </tr>
                }
            })
            .collect_view();
        Some(
            view! {
                <table class="data" data-testid="cost-table">
                    <thead><tr><th scope="col">"Condition"</th>{head}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            }
            .into_any(),
        )
    };
    view! {
        <div>
            <Filters/>
            <div class="controls">
                {choice_select("cost-baseline", "Baseline method: ", "none", view.cost_baseline, methods)}
            </div>
            <p class="hint">"Means per rollout over the rollouts that report each field."</p>
            <div class="table-wrap">{table}</div>
            {move || rows_pager(&view)}
            <super::frontier::Frontier/>
        </div>
    }
}
