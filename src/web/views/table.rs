//! The main table (the paper's Table 2) in the chosen layout ([`Layout`]): bold block maxima
//! (ties at the displayed precision included, over the whole block), columns sortable over the
//! whole block, a page of about [`PAGE_ROWS`] rows at a time (a long leaderboard block is cut
//! into pages; its maxima and order stay the whole block's).

use leptos::prelude::*;

use std::sync::Arc;

use super::{
    current_page, estimate_view, name_cell_read_from, pager, Filters, PageInfo, PAGE_ROWS,
};
use crate::report::ranks::RankMetric;
use crate::report::table::{
    fmt_estimate, fmt_pass_hat, fmt_rank, footnote, latex_rank_metric, layout_blocks, pages, Block,
    Column, Layout, RankIndex, CRASHED_TITLE,
};
use crate::report::Report;
use crate::web::state::{Session, Status};
use crate::web::view_state::ViewState;

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
    // The whole table in the chosen layout and order (sorting and maxima over whole blocks),
    // then the rows the filters keep; pages are cut from those.
    let blocks = move || -> Option<(Arc<Report>, Vec<Block>)> {
        let report = results.report.get()?;
        let layout = view.table_layout(&report);
        let mut blocks = layout_blocks(&report, layout, view.sort.get(), view.decimals.get());
        let (d, m) = (view.dataset.get(), view.model.get());
        for b in &mut blocks {
            b.rows.retain(|&i| {
                let c = &report.conditions[i];
                (d.is_empty() || c.dataset == d) && (m.is_empty() || c.model == m)
            });
        }
        blocks.retain(|b| !b.rows.is_empty());
        Some((report, blocks))
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
                    data-testid=format!("sort-{}", column.key())
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
    // One memo for the blocks and their pages: the body reads both, and a second memo derived
    // from the first would make a diamond in which the body can miss a change of the blocks
    // (sorting changes the rows but not the pages).
    let blocks = Memo::new(move |_| {
        blocks().map(|(report, blocks)| {
            let lens: Vec<usize> = blocks.iter().map(|b| b.rows.len()).collect();
            let pages = pages(&lens, PAGE_ROWS);
            (report, blocks, pages)
        })
    });
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
    // Pages in row numbers (the pager counts rows; a page holds whole blocks where they fit).
    let page_info = move || -> Option<PageInfo> {
        blocks.with(|table| {
            let pages = table.as_ref().map(|t| t.2.as_slice()).unwrap_or_default();
            let mut start = 0;
            let ranges: Vec<std::ops::Range<usize>> = pages
                .iter()
                .map(|p| {
                    let n: usize = p.iter().map(|s| s.rows.len()).sum();
                    start += n;
                    start - n..start
                })
                .collect();
            current_page(ranges, start, "rows")
        })
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
                                    .filter(|r| !r.ranks.is_empty())
                                    .map(|_| {
                                        let metric = latex_rank_metric(view.sort.get());
                                        view! {
                                            <th scope="col" class="num" data-col="rank" title="Rank within the dataset by the sort column (TER, AUC-PEC; else final success), with its simultaneous interval (the Ranks tab)">
                                                {format!("Rank ({})", metric.title())}
                                            </th>
                                        }
                                    })
                            }}
                            {move || {
                                results
                                    .report
                                    .get()
                                    .filter(|r| extra_columns(r).0)
                                    .map(|_| view! {
                                        <th scope="col" class="num" title="Rollouts that crashed (an infrastructure or provider error), counted as failed rollouts">{CRASHED_TITLE}</th>
                                    })
                            }}
                            {move || {
                                results
                                    .report
                                    .get()
                                    .filter(|r| extra_columns(r).1)
                                    .map(|_| view! { <th scope="col" class="num">"pass^1..k"</th> })
                            }}
                        </tr>
                    </thead>
                    {move || {
                        let intervals = view.intervals.get();
                        let layout = layout();
                        let page = page_info().map_or(0, |p| p.page);
                        let metric = latex_rank_metric(view.sort.get());
                        blocks.with(|all| {
                            let Some((report, blocks, pages)) = all else {
                                return Vec::new();
                            };
                            let ranks = RankIndex::new(report);
                            let segments = pages.get(page).cloned().unwrap_or_default();
                            segments
                                .iter()
                                .map(|seg| block_view(report, &blocks[seg.block], seg.rows.clone(), layout, intervals, (&ranks, metric)))
                                .collect::<Vec<_>>()
                        })
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

/// Whether the table shows the crashed-rollouts column (some condition crashed) and the pass^k
/// column (some condition has repeated trials).
fn extra_columns(report: &Report) -> (bool, bool) {
    (
        report.conditions.iter().any(|c| c.crashed > 0),
        report.conditions.iter().any(|c| !c.pass_hat.is_empty()),
    )
}

/// Rows `rows` of one block (a whole block, or a page's part of a long one), under its head.
fn block_view(
    report: &Report,
    block: &Block,
    rows: std::ops::Range<usize>,
    layout: Layout,
    intervals: bool,
    (ranks, metric): (&RankIndex, RankMetric),
) -> AnyView {
    let decimals = block.decimals();
    let (with_crashed, with_pass) = extra_columns(report);
    let with_rank = !ranks.is_empty();
    let total = block.rows.len();
    let part = if rows.len() < total {
        format!(", rows {}–{} of {total}", rows.start + 1, rows.end)
    } else {
        String::new()
    };
    let head = format!("  ({}{part})", block.n_text(report));
    let rows = block.rows[rows]
        .iter()
        .map(|&i| {
            let c = &report.conditions[i];
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
                    let bold = block.is_max(c, column);
                    view! {
                        <td class="num" class:max=bold data-col=column.key() data-value=raw>
                            {estimate_view(text, bold)}
                        </td>
                    }
                })
                .collect_view();
            // The condition's rank in its dataset by the sort metric ("–" where the dataset is
            // not ranked: a single condition, or too many).
            let rank = with_rank.then(|| {
                let r = ranks.get(i, metric);
                let text = r.map_or("–".to_string(), |r| fmt_rank(r, intervals, "–"));
                view! {
                    <td class="num" data-col="rank" data-value=r.map(|r| r.rank.to_string()).unwrap_or_default()>{text}</td>
                }
            });
            let crashed = with_crashed.then(|| {
                view! { <td class="num" data-col="crashed" data-value=c.crashed.to_string()>{c.crashed.to_string()}</td> }
            });
            let pass = with_pass.then(|| {
                view! {
                    <td class="num" data-col="pass_hat" title="pass^1..k over repeated trials">
                        {fmt_pass_hat(&c.pass_hat, decimals)}
                    </td>
                }
            });
            view! {
                <tr data-dataset=c.dataset.clone() data-model=c.model.clone() data-method=c.method.clone()>
                    {match layout {
                        Layout::Leaderboard => name_cell_read_from(
                            c.model.clone(),
                            Some(c.method.clone()),
                            c.model_path.as_deref(),
                        ),
                        Layout::Paper => name_cell_read_from(layout.row_label(c), None, None),
                    }}
                    {cells}
                    {rank}
                    {crashed}
                    {pass}
                </tr>
            }
        })
        .collect_view();
    let span = (1
        + Column::ALL.len()
        + usize::from(with_rank)
        + usize::from(with_crashed)
        + usize::from(with_pass))
    .to_string();
    view! {
        <tbody>
            <tr class="block-head">
                <th colspan=span scope="rowgroup">
                    {block.title.clone()}
                    <span class="muted">{head}</span>
                </th>
            </tr>
            {rows}
        </tbody>
    }
    .into_any()
}
