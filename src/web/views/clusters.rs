//! The failure clusters table (under First failures): per dataset, the report's
//! `failure_clusters` as clusters × conditions — each cell the condition's rollouts in the
//! cluster and their share of its failures — sortable by the total or any condition; a cell
//! (or a total) opens those rollouts in the Rollouts tab; CSV as `score --clusters` writes it.

use leptos::prelude::*;

use super::report;
use crate::browse::{ClusterPick, Outcome};
use crate::report::derive::{cluster_tables, ClusterSort};
use crate::report::FailureCluster;
use crate::web::download::download_text;
use crate::web::view_state::{Tab, ViewState};

/// Clusters shown per dataset until "show all".
const FIRST_ROWS: usize = 20;
const SEP: char = '\u{1f}';

/// Opens the Rollouts tab on a cluster's rollouts (of one condition, or all of its dataset's).
fn open_cluster(view: &ViewState, k: &FailureCluster, condition: Option<(String, String)>) {
    let (model, method) = condition
        .clone()
        .or_else(|| {
            k.conditions
                .first()
                .map(|c| (c.model.clone(), c.method.clone()))
        })
        .unwrap_or_default();
    view.rb_cluster.set(Some(ClusterPick {
        dataset: k.dataset.clone(),
        label: k.label.clone(),
        tool: k.tool.clone(),
        pattern: k.pattern.clone(),
        condition,
    }));
    view.rb_condition
        .set(format!("{}{SEP}{model}{SEP}{method}", k.dataset));
    view.rb_outcome.set(Outcome::All);
    view.rb_search.set(String::new());
    view.rb_open.set(None);
    view.rb_offset.set(0);
    view.tab.set(Tab::Rollouts);
}

#[component]
pub fn FailureClusters() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let sort = RwSignal::new(ClusterSort::default());
    let expanded = RwSignal::new(Vec::<String>::new());
    // A click on the sorted column flips its order; on another, sorts by it, largest first.
    let sort_by = move |column: Option<(String, String)>| {
        sort.update(|s| {
            if s.column == column {
                s.ascending = !s.ascending;
            } else {
                *s = ClusterSort {
                    column,
                    ascending: false,
                };
            }
        })
    };
    let arrow = move |column: &Option<(String, String)>| {
        let s = sort.get();
        match (s.column == *column, s.ascending) {
            (true, true) => " ▲",
            (true, false) => " ▼",
            _ => "",
        }
    };
    let tables = move || {
        let r = report()?;
        let d = view.dataset.get();
        let sort = sort.get();
        let tables = cluster_tables(&r, &sort, |ds| d.is_empty() || ds == d);
        if tables.is_empty() {
            return Some(
                view! { <p class="hint">"No rollout failed: there is no failure cluster."</p> }
                    .into_any(),
            );
        }
        Some(
            tables
                .into_iter()
                .map(|t| {
                    let dataset = t.dataset.clone();
                    let all = expanded.with(|e| e.contains(&dataset));
                    let count = t.rows.len();
                    let heads = t
                        .conditions
                        .iter()
                        .map(|(m, me, failures)| {
                            let column = Some((m.clone(), me.clone()));
                            let c2 = column.clone();
                            view! {
                                <th scope="col" class="num sortable" data-testid="cluster-sort" title=format!("{failures} failures (RR-Eligible)")>
                                    <button on:click=move |_| sort_by(c2.clone())>{format!("{m} · {me}")}{move || arrow(&column)}</button>
                                </th>
                            }
                        })
                        .collect_view();
                    let rows = t
                        .rows
                        .iter()
                        .take(if all { usize::MAX } else { FIRST_ROWS })
                        .map(|row| {
                            let k = row.cluster.clone();
                            let k_total = k.clone();
                            let cells = row
                                .cells
                                .iter()
                                .zip(&t.conditions)
                                .map(|(&(n, share), (m, me, _))| {
                                    if n == 0 {
                                        return view! { <td class="num muted">"–"</td> }.into_any();
                                    }
                                    let k = k.clone();
                                    let condition = Some((m.clone(), me.clone()));
                                    let share = share.map(|s| format!(" ({:.0}%)", s * 100.0)).unwrap_or_default();
                                    view! {
                                        <td class="num">
                                            <button
                                                class="link"
                                                data-testid="cluster-cell"
                                                data-model=m.clone()
                                                data-method=me.clone()
                                                data-n=n.to_string()
                                                title="Open these rollouts"
                                                on:click=move |_| open_cluster(&view, &k, condition.clone())
                                            >{format!("{n}{share}")}</button>
                                        </td>
                                    }
                                    .into_any()
                                })
                                .collect_view();
                            view! {
                                <tr data-testid="cluster-row">
                                    <td>{k.label.clone()}</td>
                                    <td><code>{k.tool.clone().unwrap_or_default()}</code></td>
                                    <td class="clip pattern" title=k.pattern.clone()><div class="clip-text">{k.pattern.clone()}</div></td>
                                    <td class="num">
                                        <button
                                            class="link"
                                            data-testid="cluster-total"
                                            data-n=k.total.to_string()
                                            title="Open these rollouts (every condition)"
                                            on:click=move |_| open_cluster(&view, &k_total, None)
                                        >{k.total}</button>
                                    </td>
                                    {cells}
                                </tr>
                            }
                        })
                        .collect_view();
                    let more = (count > FIRST_ROWS).then(|| {
                        let ds = dataset.clone();
                        view! {
                            <button data-testid="cluster-more" on:click=move |_| expanded.update(|e| {
                                if let Some(i) = e.iter().position(|x| *x == ds) { e.remove(i); } else { e.push(ds.clone()); }
                            })>
                                {if all { "Show the largest only".to_string() } else { format!("Show all {count} clusters") }}
                            </button>
                        }
                    });
                    view! {
                        <h3>{dataset.clone()}</h3>
                        <div class="table-wrap">
                            <table class="data" data-testid="cluster-table" data-dataset=dataset.clone()>
                                <thead>
                                    <tr>
                                        <th scope="col">"Label"</th>
                                        <th scope="col">"Tool"</th>
                                        <th scope="col">"Message pattern"</th>
                                        <th scope="col" class="num sortable" data-testid="cluster-sort-total">
                                            <button on:click=move |_| sort_by(None)>"Total"{move || arrow(&None)}</button>
                                        </th>
                                        {heads}
                                    </tr>
                                </thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                        {more}
                    }
                })
                .collect_view()
                .into_any(),
        )
    };
    let export = move |_| {
        if let Some(r) = report() {
            let csv = crate::report::table::render_clusters_csv(&r);
            download_text("prefix-exec-failure-clusters.csv", "text/csv", &csv);
        }
    };
    view! {
        <section class="clusters" data-testid="failure-clusters">
            <h2>"Failure clusters"</h2>
            <p class="hint">"Every failed rollout's first rejected call, grouped by label, tool and message with numbers, ids, quoted values and paths set aside (docs/search.md). A cell: the condition's rollouts in the cluster and their share of its failures (RR-Eligible). Click a count to open those rollouts; click a column to sort."</p>
            <button data-testid="export-clusters-csv" on:click=export>"Export clusters (CSV)"</button>
            {tables}
        </section>
    }
}
