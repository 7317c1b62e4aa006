//! The cost frontier (issue #29, HAL's view with executability beside success): per dataset, a
//! scatter of mean cost per rollout against final success and against TER, one point per
//! condition with its bootstrap interval as a whisker, the Pareto frontier drawn through the
//! conditions no other beats on both. The cost field is the user's pick among those the
//! rollouts carry; a condition without it has no point. Flags and points are the report's
//! `pareto` entries ([`crate::report::pareto`]).

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::dom::{prefers_dark, target_value};
use super::{canvas_figure, distinct, report};
use crate::plot::frontier::{draw_frontier, frontier_points, FrontierPlot};
use crate::report::pareto::{CostField, FRONTIER_METRICS};
use crate::report::{ParetoEntry, Report};
use crate::web::view_state::ViewState;

const WIDTH: u32 = 620;
const HEIGHT: u32 = 400;

/// The cost fields the report's frontiers are computed on, in `CostField` order.
fn fields(r: &Report) -> Vec<CostField> {
    CostField::ALL
        .into_iter()
        .filter(|f| r.pareto.iter().any(|p| p.cost == f.key()))
        .collect()
}

/// The chosen cost field: the user's pick when the report has it, else the first it has.
fn chosen(r: &Report, pick: &str) -> Option<CostField> {
    let have = fields(r);
    CostField::from_key(pick)
        .filter(|f| have.contains(f))
        .or_else(|| have.first().copied())
}

fn entry<'r>(r: &'r Report, dataset: &str, cost: &str, metric: &str) -> Option<&'r ParetoEntry> {
    r.pareto
        .iter()
        .find(|p| p.dataset == dataset && p.cost == cost && p.metric == metric)
}

#[component]
pub fn Frontier() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let datasets = Memo::new(move |_| {
        let Some(r) = report() else {
            return Vec::new();
        };
        let Some(field) = chosen(&r, &view.cost_field.get()) else {
            return Vec::new();
        };
        let only = view.dataset.get();
        distinct(
            r.pareto
                .iter()
                .filter(|p| p.cost == field.key())
                .map(|p| p.dataset.as_str()),
        )
        .into_iter()
        .filter(|d| only.is_empty() || *d == only)
        .collect::<Vec<String>>()
    });
    let choice = move || {
        let r = report()?;
        let current = chosen(&r, &view.cost_field.get())?;
        let options = fields(&r)
            .into_iter()
            .map(|f| view! { <option value=f.key() selected=f == current>{f.key()}</option> })
            .collect_view();
        Some(view! {
            <div class="controls">
                <label>
                    "Cost "
                    <select data-testid="cost-field" on:change=move |e| view.cost_field.set(target_value(&e))>
                        {options}
                    </select>
                </label>
            </div>
        })
    };
    view! {
        <section class="frontier" data-testid="frontier">
            <h3>"Cost frontier"</h3>
            {move || {
                report().is_some_and(|r| r.pareto.is_empty()).then(|| {
                    view! { <p class="hint" data-testid="frontier-none">"No frontier: no rollout here carries a cost (tokens, latency_s, usd)."</p> }
                })
            }}
            {choice}
            <p class="hint">
                "One point per condition: its mean cost per rollout (over the rollouts that report the field; a condition without it has no point) against the metric, the whisker its bootstrap interval. A condition is on the frontier (larger, vermillion, joined by the staircase) when no other condition of the dataset costs no more and scores no less, one of the two strictly. When the costs span more than a factor of 20, the cost axis is logarithmic."
            </p>
            {move || {
                datasets
                    .get()
                    .into_iter()
                    .map(|dataset| {
                        view! {
                            <h4>{dataset.clone()}</h4>
                            <div class="frontier-plots">
                                {FRONTIER_METRICS
                                    .into_iter()
                                    .map(|m| view! { <FrontierFigure dataset=dataset.clone() metric=m.key()/> })
                                    .collect_view()}
                            </div>
                        }
                        .into_any()
                    })
                    .collect::<Vec<AnyView>>()
            }}
        </section>
    }
}

#[component]
fn FrontierFigure(dataset: String, metric: &'static str) -> AnyView {
    let view = expect_context::<ViewState>();
    let canvas_ref = NodeRef::<Canvas>::new();
    let d2 = dataset.clone();
    let metric_title = crate::report::ranks::RankMetric::from_key(metric).map_or("", |m| m.title());
    Effect::new(move |_| {
        let (Some(r), Some(canvas)) = (report(), canvas_ref.get()) else {
            return;
        };
        let Some(field) = chosen(&r, &view.cost_field.get()) else {
            return;
        };
        let Some(e) = entry(&r, &d2, field.key(), metric) else {
            return;
        };
        let plot = FrontierPlot {
            title: format!("{d2}: {metric_title} against {}", field.key()),
            x_title: field.title().to_string(),
            y_title: metric_title.to_string(),
            points: frontier_points(&r, e),
            dark: prefers_dark(),
        };
        canvas.set_width(WIDTH);
        canvas.set_height(HEIGHT);
        if let Some(backend) = CanvasBackend::with_canvas_object(canvas) {
            let root = backend.into_drawing_area();
            if let Err(err) = draw_frontier(&root, &plot) {
                web_sys::console::error_1(&err.into());
            }
            let _ = root.present();
        }
    });
    let d3 = dataset.clone();
    let on_front = move || {
        let r = report()?;
        let field = chosen(&r, &view.cost_field.get())?;
        let e = entry(&r, &d3, field.key(), metric)?;
        let items = e
            .conditions
            .iter()
            .filter(|p| p.pareto)
            .map(|p| {
                view! {
                    <li data-testid="frontier-member" data-model=p.model.clone() data-method=p.method.clone()>
                        {format!("{} / {}", p.model, p.method)}
                    </li>
                }
            })
            .collect_view();
        let missing = r
            .conditions
            .iter()
            .filter(|c| c.dataset == d3)
            .count()
            .saturating_sub(e.conditions.len());
        let note = (missing > 0).then(|| {
            view! { <p class="hint">{format!("{missing} condition(s) without {}: no point.", field.key())}</p> }
        });
        Some(view! {
            <p class="sub">"On the frontier:"</p>
            <ul class="frontier-list" data-testid="frontier-list" data-metric=metric>{items}</ul>
            {note}
        })
    };
    let file = format!("frontier-{}-{metric}.png", dataset.replace(['/', ' '], "_"));
    canvas_figure(
        canvas_ref,
        "frontier-plot",
        metric,
        format!("Cost against {metric_title} for {dataset}"),
        "export-frontier-png",
        file,
        on_front.into_any(),
    )
}
