//! PEC checkpoints (Table G.1): PEC(k) with intervals at chosen depths.

use leptos::prelude::*;

use super::dom::target_value;
use super::{estimate_view, name_cell, page_of, report, rows_pager, visible, Filters, PAGE_ROWS};
use crate::report::table::fmt_num;
use crate::web::view_state::ViewState;

/// Depths typed as "1,2,4" or "1-5", within `1..=k_max`, sorted and unique.
pub fn parse_depths(text: &str, k_max: usize) -> Vec<usize> {
    let mut ks = Vec::new();
    for part in text.split([',', ' ']).filter(|p| !p.is_empty()) {
        if let Some((a, b)) = part.split_once('-') {
            if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                ks.extend(a..=b.min(a + 1000));
            }
        } else if let Ok(k) = part.trim().parse::<usize>() {
            ks.push(k);
        }
    }
    ks.retain(|&k| k >= 1 && k <= k_max);
    ks.sort_unstable();
    ks.dedup();
    ks
}

#[component]
pub fn Checkpoints() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let table = move || {
        let r = report()?;
        let ks = parse_depths(&view.checkpoints.get(), r.settings.k_max);
        let decimals = view.decimals.get();
        let intervals = view.intervals.get();
        let head = ks
            .iter()
            .map(|k| view! { <th scope="col" class="num">{format!("PEC@{k}")}</th> })
            .collect_view();
        let rows = page_of(&visible(&r, &view), PAGE_ROWS)
            .into_iter()
            .map(|c| {
                let cells = ks
                    .iter()
                    .map(|&k| {
                        let p = &c.pec[k - 1];
                        let text = match (intervals, p.ci) {
                            (true, Some([lo, hi])) => format!(
                                "{} [{}, {}]",
                                fmt_num(p.value, decimals),
                                fmt_num(lo, decimals),
                                fmt_num(hi, decimals)
                            ),
                            _ => fmt_num(p.value, decimals),
                        };
                        view! { <td class="num" data-k=k data-value=p.value.to_string()>{estimate_view(text, false)}</td> }
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
        Some(view! {
            <table class="data" data-testid="checkpoint-table">
                <thead><tr><th scope="col">"Condition"</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        })
    };
    view! {
        <div>
            <Filters/>
            <label class="controls">
                "Depths k: "
                <input
                    type="text"
                    data-testid="checkpoint-ks"
                    prop:value=move || view.checkpoints.get()
                    on:change=move |e| view.checkpoints.set(target_value(&e))
                />
                <span class="hint">" e.g. 1,2,4,8 or 1-5"</span>
            </label>
            <div class="table-wrap">{table}</div>
            {move || rows_pager(&view)}
        </div>
    }
}
