//! The main table (the paper's Table 2): a block per dataset × model, methods as rows, bold
//! block maxima (ties at the displayed precision included), sortable, with intervals.

use leptos::prelude::*;

use super::{current_page, pager, visible, Filters, PageInfo, PAGE_ROWS};
use crate::report::table::{fmt_estimate, footnote, is_block_max, Column, Layout};
use crate::report::ConditionReport;
use crate::web::state::{Session, Status};
use crate::web::view_state::ViewState;

fn column_key(c: Column) -> &'static str {
    match c {
        Column::Ter => "ter",
        Column::MeanFed => "mean_fed",
        Column::AucPec => "auc_pec",
        Column::RrEligible => "rr_eligible",
        Column::Rr => "rr",
        Column::FinalSuccess => "final_success",
    }
}

fn sort_value(c: &ConditionReport, column: Column) -> f64 {
    match column.estimate(c) {
        Some(e) => e.value.unwrap_or(f64::NEG_INFINITY),
        None => c.rr_eligible as f64,
    }
}

#[component]
pub fn MainTable() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let results = session.results();
    let state = move || match results.status.get() {
        Status::Computing { .. } => "computing",
        Status::Ready { .. } => "ready",
        Status::Failed(_) => "failed",
        Status::Cancelled => "cancelled",
        Status::Empty => "empty",
    };
    let blocks = move || {
        let Some(report) = results.report.get() else {
            return Vec::new();
        };
        let conditions = visible(&report, &view);
        let by_model = view.table_layout(&report) == Layout::Paper;
        let mut blocks: Vec<Vec<ConditionReport>> = Vec::new();
        for c in conditions {
            match blocks.last_mut() {
                Some(b) if b[0].dataset == c.dataset && (!by_model || b[0].model == c.model) => {
                    b.push(c.clone())
                }
                _ => blocks.push(vec![c.clone()]),
            }
        }
        if let Some((column, desc)) = view.sort.get() {
            for b in &mut blocks {
                b.sort_by(|x, y| {
                    let o = sort_value(x, column).total_cmp(&sort_value(y, column));
                    if desc {
                        o.reverse()
                    } else {
                        o
                    }
                });
            }
        }
        blocks
    };
    let header = move |column: Column| {
        let arrow = move || match view.sort.get() {
            Some((c, true)) if c == column => " ▼",
            Some((c, false)) if c == column => " ▲",
            _ => "",
        };
        let aria = move || match view.sort.get() {
            Some((c, true)) if c == column => "descending",
            Some((c, false)) if c == column => "ascending",
            _ => "none",
        };
        view! {
            <th scope="col" class="num" aria-sort=aria>
                <button
                    class="sort"
                    data-testid=format!("sort-{}", column_key(column))
                    on:click=move |_| {
                        view.sort.update(|s| {
                            *s = match *s {
                                Some((c, true)) if c == column => Some((column, false)),
                                Some((c, false)) if c == column => None,
                                _ => Some((column, true)),
                            }
                        })
                    }
                >
                    {column.title()}
                    {arrow}
                </button>
            </th>
        }
    };
    let blocks = Memo::new(move |_| blocks());
    let layout = move || {
        results
            .report
            .get()
            .map(|r| view.table_layout(&r))
            .unwrap_or_default()
    };
    let layout_choice = move || {
        let current = layout();
        view! {
            <label>
                "Layout "
                <select
                    data-testid="table-layout"
                    on:change=move |e| view.layout.set(super::dom::target_value(&e))
                    prop:value=move || layout().name()
                >
                    <option value="leaderboard" selected=current == Layout::Leaderboard>"leaderboard (one row per condition)"</option>
                    <option value="paper" selected=current == Layout::Paper>"paper (dataset × model blocks)"</option>
                </select>
            </label>
        }
    };
    let page_info = move || -> Option<PageInfo> {
        blocks.with(|all| current_page(block_pages(all), all.len(), "blocks"))
    };
    view! {
        <div class="table-tab">
            <Filters/>
            <div class="filters">{layout_choice}</div>
            <div class="table-wrap">
                <table class="main-table" data-testid="main-table" data-state=state data-layout=move || layout().name()>
                    <thead>
                        <tr>
                            <th scope="col">{move || layout().label_title()}</th>
                            {Column::ALL.into_iter().map(header).collect_view()}
                            {move || {
                                results
                                    .report
                                    .get()
                                    .filter(|r| r.conditions.iter().any(|c| !c.pass_hat.is_empty()))
                                    .map(|_| view! { <th scope="col" class="num">"pass^1..k"</th> })
                            }}
                        </tr>
                    </thead>
                    {move || {
                        let decimals = view.decimals.get();
                        let intervals = view.intervals.get();
                        let layout = layout();
                        let range = page_info().map(|p| p.range);
                        let shown = blocks.with(|all| all[range.unwrap_or(0..all.len())].to_vec());
                        shown
                            .into_iter()
                            .map(|block| {
                                let title = layout.title(&block[0]);
                                let refs: Vec<&ConditionReport> = block.iter().collect();
                                let rows = block
                                    .iter()
                                    .map(|c| {
                                        let cells = Column::ALL
                                            .into_iter()
                                            .map(|column| {
                                                let (text, raw) = match column.estimate(c) {
                                                    Some(e) => (
                                                        fmt_estimate(&e, decimals, intervals),
                                                        e.value.map(|v| v.to_string()).unwrap_or_default(),
                                                    ),
                                                    None => (c.rr_eligible.to_string(), c.rr_eligible.to_string()),
                                                };
                                                let bold = column.estimate(c).is_some()
                                                    && is_block_max(&refs, c, column, decimals);
                                                view! {
                                                    <td
                                                        class="num"
                                                        class:max=bold
                                                        data-col=column_key(column)
                                                        data-value=raw
                                                    >
                                                        {if bold {
                                                            view! { <strong>{text}</strong> }.into_any()
                                                        } else {
                                                            text.into_any()
                                                        }}
                                                    </td>
                                                }
                                            })
                                            .collect_view();
                                        let pass = (!c.pass_hat.is_empty()).then(|| {
                                            view! {
                                                <td class="num" data-col="pass_hat" title="pass^1..k over repeated trials">
                                                    {crate::report::table::fmt_pass_hat(&c.pass_hat, decimals)}
                                                </td>
                                            }
                                        });
                                        view! {
                                            <tr
                                                data-dataset=c.dataset.clone()
                                                data-model=c.model.clone()
                                                data-method=c.method.clone()
                                            >
                                                <th scope="row">{layout.row_label(c)}</th>
                                                {cells}
                                                {pass}
                                            </tr>
                                        }
                                    })
                                    .collect_view();
                                let n_text = if block.iter().all(|c| c.n == block[0].n) {
                                    format!("N = {} per row", block[0].n)
                                } else {
                                    "N varies by row".to_string()
                                };
                                view! {
                                    <tbody>
                                        <tr class="block-head">
                                            <th colspan="7" scope="rowgroup">
                                                {title}
                                                <span class="muted">{format!("  ({n_text})")}</span>
                                            </th>
                                        </tr>
                                        {rows}
                                    </tbody>
                                }
                            })
                            .collect_view()
                    }}
                </table>
            </div>
            {move || pager(page_info())}
            {move || {
                results
                    .report
                    .get()
                    .map(|r| view! { <p class="footnote">{footnote(&r)}</p> })
            }}
        </div>
    }
}

/// Pages of whole blocks (a block is never split, so its bold maxima stay right), each holding
/// about [`PAGE_ROWS`] rows.
fn block_pages(blocks: &[Vec<ConditionReport>]) -> Vec<std::ops::Range<usize>> {
    let mut pages = Vec::new();
    let (mut start, mut rows) = (0, 0);
    for (i, b) in blocks.iter().enumerate() {
        if rows > 0 && rows + b.len() > PAGE_ROWS {
            pages.push(start..i);
            (start, rows) = (i, 0);
        }
        rows += b.len();
    }
    if start < blocks.len() {
        pages.push(start..blocks.len());
    }
    pages
}
