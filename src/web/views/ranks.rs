//! Ranks (issue #29): per dataset, the conditions' ranks by a chosen metric with their
//! simultaneous intervals (a rank-interval plot), a bump chart joining each condition's rank by
//! final success to its rank by TER (or AUC-PEC) with the flips highlighted, τ_b in one plain
//! sentence, the list of flips (each opens the paired comparison of its two conditions) and the
//! figures as a table. Everything is the report's `ranks` and `rank_divergence`.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::dom::prefers_dark;
use super::{canvas_figure, distinct, fixed_select, report, Filters};
use crate::plot::ranks::{
    bump_lines, draw_bump, draw_rank_intervals, rank_order, rank_plot_height, rank_rows, BumpPlot,
    RankIntervalPlot,
};
use crate::report::derive::divergence_sentence;
use crate::report::ranks::RankMetric;
use crate::report::table::{fmt_num, fmt_rank};
use crate::report::{ConditionPair, RankDivergence, RankTable, Report};
use crate::web::view_state::{Tab, ViewState};

/// The canvases' width in pixels (CSS scales them down to their column).
const WIDTH: u32 = 480;

/// Flips listed per divergence at most (the report JSON lists them all).
const MAX_FLIPS: usize = 50;

#[component]
pub fn Ranks() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let datasets = Memo::new(move |_| {
        let Some(r) = report() else {
            return Vec::new();
        };
        let only = view.dataset.get();
        distinct(r.ranks.iter().map(|t| t.dataset.as_str()))
            .into_iter()
            .filter(|d| only.is_empty() || *d == only)
            .collect::<Vec<String>>()
    });
    let metric_choice = fixed_select(
        "rank-metric",
        "Rank intervals by ",
        view.rank_metric,
        &[
            ("final_success", "Final success"),
            ("ter", "TER"),
            ("auc_pec", "AUC-PEC"),
        ],
    );
    let bump_choice = fixed_select(
        "bump-metric",
        " Final success against ",
        view.bump_metric,
        &[("ter", "TER"), ("auc_pec", "AUC-PEC")],
    );
    let empty = move || {
        (report().is_some() && datasets.with(Vec::is_empty)).then(|| {
            view! {
                <p class="hint" data-testid="ranks-empty">
                    "No dataset here has two or more conditions to rank."
                </p>
            }
        })
    };
    view! {
        <div class="ranks-tab">
            <Filters/>
            <div class="controls">{metric_choice}{bump_choice}</div>
            <p class="hint">
                "A bar spans a condition's simultaneous rank interval (every interval of a dataset holds at once with the report's confidence), the dot its rank by point estimate; the top group (tied with #1) is orange. In the bump chart, lines of conditions in a flip (a pair final success orders one way and the prefix metric the other) are coloured; the significant flips — each condition certainly ahead on the metric it leads — are drawn strongest. See docs/ranks.md."
            </p>
            {empty}
            {move || {
                datasets
                    .get()
                    .into_iter()
                    .map(|dataset| view! { <RankPanel dataset/> }.into_any())
                    .collect::<Vec<AnyView>>()
            }}
        </div>
    }
}

/// A dataset's entries: the chosen metric's table, final success's, the prefix metric's, and
/// their divergence.
struct Entries<'r> {
    shown: &'r RankTable,
    success: &'r RankTable,
    prefix: &'r RankTable,
    divergence: Option<&'r RankDivergence>,
}

fn entries<'r>(r: &'r Report, dataset: &str, metric: &str, bump: &str) -> Option<Entries<'r>> {
    let table = |m: &str| {
        r.ranks
            .iter()
            .find(|t| t.dataset == dataset && t.metric == m)
    };
    Some(Entries {
        shown: table(metric).or_else(|| table("final_success"))?,
        success: table("final_success")?,
        prefix: table(bump)?,
        divergence: r
            .rank_divergence
            .iter()
            .find(|d| d.dataset == dataset && d.b == bump),
    })
}

fn title_of(key: &str) -> &'static str {
    RankMetric::from_key(key).map_or("", |m| m.title())
}

fn label(p: &ConditionPair) -> String {
    format!("{} / {}", p[0], p[1])
}

#[component]
fn RankPanel(dataset: String) -> impl IntoView {
    let view = expect_context::<ViewState>();
    let rank_ref = NodeRef::<Canvas>::new();
    let bump_ref = NodeRef::<Canvas>::new();
    let d2 = dataset.clone();
    // Draw both plots whenever the report or the choices change.
    Effect::new(move |_| {
        let Some(r) = report() else {
            return;
        };
        let (metric, bump) = (view.rank_metric.get(), view.bump_metric.get());
        let Some(e) = entries(&r, &d2, &metric, &bump) else {
            return;
        };
        let dark = prefers_dark();
        let height = rank_plot_height(e.shown.conditions.len());
        if let Some(canvas) = rank_ref.get() {
            canvas.set_width(WIDTH);
            canvas.set_height(height);
            let plot = RankIntervalPlot {
                title: format!("{d2}: ranks by {}", title_of(&e.shown.metric)),
                rows: rank_rows(e.shown),
                dark,
            };
            if let Some(backend) = CanvasBackend::with_canvas_object(canvas) {
                let root = backend.into_drawing_area();
                if let Err(err) = draw_rank_intervals(&root, &plot) {
                    web_sys::console::error_1(&err.into());
                }
                let _ = root.present();
            }
        }
        if let (Some(canvas), Some(d)) = (bump_ref.get(), e.divergence) {
            canvas.set_width(WIDTH);
            canvas.set_height(height);
            let plot = BumpPlot {
                title: format!("{d2}: final success vs {}", title_of(&bump)),
                left_title: "Final success".to_string(),
                right_title: title_of(&bump).to_string(),
                lines: bump_lines(e.success, e.prefix, d),
                dark,
            };
            if let Some(backend) = CanvasBackend::with_canvas_object(canvas) {
                let root = backend.into_drawing_area();
                if let Err(err) = draw_bump(&root, &plot) {
                    web_sys::console::error_1(&err.into());
                }
                let _ = root.present();
            }
        }
    });
    let d3 = dataset.clone();
    let sentence = move || {
        let r = report()?;
        let e = entries(&r, &d3, "final_success", &view.bump_metric.get())?;
        let text = divergence_sentence(e.success, e.prefix, e.divergence?, view.decimals.get());
        Some(view! { <p class="rank-sentence" data-testid="rank-sentence">{text}</p> })
    };
    let d4 = dataset.clone();
    let flips = move || {
        let r = report()?;
        let d = r
            .rank_divergence
            .iter()
            .find(|d| d.dataset == d4 && d.b == view.bump_metric.get())?
            .clone();
        let prefix = title_of(&d.b);
        // The significant flips first, each group in the report's order.
        let mut pairs: Vec<_> = d.discordant.iter().filter(|p| p.significant).collect();
        pairs.extend(d.discordant.iter().filter(|p| !p.significant));
        let total = pairs.len();
        let items = pairs
            .into_iter()
            .take(MAX_FLIPS)
            .filter_map(|p| {
                let (a, b) = (p.ahead_on_success.clone(), p.ahead_on_prefix()?.clone());
                let text = format!(
                    "{} ahead on final success, {} ahead on {prefix}",
                    label(&a),
                    label(&b)
                );
                let dataset = d4.clone();
                let open = move |_| {
                    view.cmp_dataset.set(dataset.clone());
                    view.cmp_model.set(a[0].clone());
                    view.cmp_a.set(a[1].clone());
                    view.cmp_b_model.set(b[0].clone());
                    view.cmp_b.set(b[1].clone());
                    view.cmp_task.set(String::new());
                    view.tab.set(Tab::Compare);
                };
                Some(view! {
                    <li class:significant=p.significant>
                        <button
                            class="link"
                            data-testid="rank-flip"
                            data-significant=p.significant.to_string()
                            title="Open the paired comparison of these two conditions"
                            on:click=open
                        >
                            {text}
                        </button>
                        {p.significant.then(|| view! { <span class="tag">"significant"</span> })}
                    </li>
                })
            })
            .collect_view();
        let more = (total > MAX_FLIPS).then(|| {
            view! { <li class="muted">{format!("… and {} more (the report JSON lists them all)", total - MAX_FLIPS)}</li> }
        });
        let heading = match total {
            0 => "No flips: every pair is in the same order (or tied).".to_string(),
            n => format!("Flips ({n}): open one for the paired comparison"),
        };
        Some(view! {
            <h4>{heading}</h4>
            <ul class="flips" data-testid="rank-flips">{items}{more}</ul>
        })
    };
    let d5 = dataset.clone();
    let figures = move || {
        let r = report()?;
        let e = entries(&r, &d5, &view.rank_metric.get(), &view.bump_metric.get())?;
        let dp = view.decimals.get();
        let t = e.shown;
        let rows = rank_order(t)
            .into_iter()
            .map(|i| {
                let c = &t.conditions[i];
                view! {
                    <tr
                        data-testid="rank-row"
                        data-model=c.model.clone()
                        data-method=c.method.clone()
                        data-rank=c.rank.to_string()
                        data-lo=c.rank_lo.map(|x| x.to_string()).unwrap_or_default()
                        data-hi=c.rank_hi.map(|x| x.to_string()).unwrap_or_default()
                    >
                        <th scope="row">{format!("{} / {}", c.model, c.method)}</th>
                        <td class="num">{c.value.map_or("–".to_string(), |v| fmt_num(v, dp))}</td>
                        <td class="num">
                            {fmt_rank(c, true, "–")}
                            {(c.top() && c.rank > 1).then(|| view! { <span class="muted" title="tied with #1: no condition certainly ranks above it">" =#1"</span> })}
                        </td>
                    </tr>
                }
            })
            .collect_view();
        let level = format!("{}%", t.level * 100.0);
        let critical = t.critical_value.map_or(String::new(), |c| {
            format!(" Critical value {}.", fmt_num(c, 2))
        });
        Some(view! {
            <table class="data" data-testid="rank-table" data-metric=t.metric.clone()>
                <thead>
                    <tr>
                        <th scope="col">"Condition"</th>
                        <th scope="col" class="num">{title_of(&t.metric)}</th>
                        <th scope="col" class="num">{format!("Rank ({level} interval)")}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <p class="footnote">{format!("Simultaneous {level} rank intervals over {} conditions.{critical}", t.conditions.len())}</p>
        })
    };
    let safe = dataset.replace(['/', ' '], "_");
    let (rank_file, bump_file) = (format!("ranks-{safe}.png"), format!("bump-{safe}.png"));
    view! {
        <section class="rank-panel" data-testid="rank-panel" data-dataset=dataset.clone()>
            <h3>{dataset.clone()}</h3>
            {sentence}
            <div class="rank-plots">
                {canvas_figure(rank_ref, "rank-plot", "", format!("Rank intervals for {dataset}"), "export-rank-png", rank_file, ().into_any())}
                {canvas_figure(bump_ref, "bump-plot", "", format!("Bump chart for {dataset}"), "export-bump-png", bump_file, ().into_any())}
            </div>
            <div class="rank-details">
                <div class="table-wrap">{figures}</div>
                <div>{flips}</div>
            </div>
        </section>
    }
}
