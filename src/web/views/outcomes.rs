//! Outcome decomposition (eq. 12): P(Y) = q·s + (1 − q)·r, per condition, with a plain reading.

use leptos::prelude::*;

use super::{name_cell, page_of, report, rows_pager, visible, Filters, PAGE_ROWS};
use crate::report::derive::outcome_reading;
use crate::report::table::fmt_num;
use crate::web::view_state::ViewState;

#[component]
pub fn Outcomes() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let rows = move || {
        let r = report()?;
        let d = view.decimals.get();
        let f = move |v: Option<f64>| v.map_or("–".to_string(), |v| fmt_num(v, d));
        Some(
            page_of(&visible(&r, &view), PAGE_ROWS)
                .into_iter()
                .map(|c| {
                    view! {
                        <tr>
                            {name_cell(format!("{} / {} / {}", c.dataset, c.model, c.method), None)}
                            <td class="num">{f(c.ter.value)}</td>
                            <td class="num">{f(c.uninterrupted_success)}</td>
                            <td class="num">{f(c.rr.value)}</td>
                            <td class="num">{f(c.final_success.value)}</td>
                            <td class="num">{f(c.success_after_failed_prefix)}</td>
                            <td class="reading">{outcome_reading(c)}</td>
                        </tr>
                    }
                })
                .collect_view(),
        )
    };
    view! {
        <div>
            <Filters/>
            <p class="hint">
                "Final success splits into uninterrupted execution and recovery: P(Y) = q·s + (1 − q)·r, with q = TER, s = P(Y | every step executed), r = RR (eq. 12)."
            </p>
            <div class="table-wrap">
                <table class="data" data-testid="outcome-table">
                    <thead>
                        <tr>
                            <th scope="col">"Condition"</th>
                            <th scope="col" class="num">"q = TER"</th>
                            <th scope="col" class="num">"s"</th>
                            <th scope="col" class="num">"r = RR"</th>
                            <th scope="col" class="num">"P(Y)"</th>
                            <th scope="col" class="num">"successes after a failed prefix"</th>
                            <th scope="col">"Reading"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {move || rows_pager(&view)}
        </div>
    }
}
