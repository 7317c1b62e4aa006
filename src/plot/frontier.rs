//! The cost frontier plot: one point per condition, its mean cost per rollout against a metric
//! (final success or TER) with the metric's bootstrap interval as a whisker, and the Pareto
//! frontier (the report's `pareto` flags, [`crate::report::pareto`]) drawn as the staircase
//! through the conditions no other beats on both cost and the metric.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ranks::shorten;
use super::{order_by, theme, PALETTE};
use crate::report::ranks::RankMetric;
use crate::report::{ParetoEntry, Report};

/// The points of one `pareto` entry, each with its metric's interval from the condition's row.
pub fn frontier_points(report: &Report, entry: &ParetoEntry) -> Vec<FrontierPoint> {
    let metric = RankMetric::from_key(&entry.metric);
    entry
        .conditions
        .iter()
        .map(|p| {
            let ci = report
                .conditions
                .iter()
                .find(|c| c.dataset == entry.dataset && c.model == p.model && c.method == p.method)
                .and_then(|c| match metric {
                    Some(RankMetric::FinalSuccess) => c.final_success.ci,
                    Some(RankMetric::Ter) => c.ter.ci,
                    Some(RankMetric::AucPec) => c.auc_pec.ci,
                    None => None,
                });
            FrontierPoint {
                label: format!("{} / {}", p.model, p.method),
                cost: p.cost,
                value: p.value,
                ci,
                pareto: p.pareto,
            }
        })
        .collect()
}

/// One condition's point.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontierPoint {
    pub label: String,
    pub cost: f64,
    pub value: f64,
    /// The metric's interval (the whisker), when the bootstrap ran.
    pub ci: Option<[f64; 2]>,
    pub pareto: bool,
}

pub struct FrontierPlot {
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    pub points: Vec<FrontierPoint>,
    pub dark: bool,
}

/// Whether the cost axis is logarithmic: when every cost is positive and the largest is at
/// least 20 times the smallest (one expensive condition would otherwise squeeze the others into
/// a corner).
pub fn log_cost_axis(points: &[FrontierPoint]) -> bool {
    let min = points.iter().map(|p| p.cost).fold(f64::INFINITY, f64::min);
    let max = points.iter().map(|p| p.cost).fold(0.0, f64::max);
    min > 0.0 && max >= 20.0 * min
}

/// The x range, in axis units (log10 of the cost on a log axis): a little around the costs,
/// never below 0 (a cost is never negative).
fn x_range(points: &[FrontierPoint], log: bool) -> (f64, f64) {
    let max = points.iter().map(|p| p.cost).fold(0.0, f64::max);
    if log {
        let min = points.iter().map(|p| p.cost).fold(f64::INFINITY, f64::min);
        let (lo, hi) = (min.log10(), max.log10());
        let pad = 0.08 * (hi - lo);
        (lo - pad, hi + pad)
    } else {
        let min = points.iter().map(|p| p.cost).fold(f64::INFINITY, f64::min);
        let pad = 0.1 * (max - min).max(0.1 * max).max(f64::MIN_POSITIVE);
        ((min - pad).max(0.0), max + pad)
    }
}

/// A cost as a tick label: `12k`, `350`, `0.29`, `0.0006`.
fn fmt_cost(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 0.01 || v == 0.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// Draws the plot.
pub fn draw_frontier<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &FrontierPlot,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (fg, bg, grid) = theme(plot.dark);
    root.fill(&bg).map_err(err)?;
    let log = log_cost_axis(&plot.points);
    let at = |cost: f64| if log { cost.log10() } else { cost };
    let (x0, x1) = x_range(&plot.points, log);
    let x_title = if log {
        format!("{} (log scale)", plot.x_title)
    } else {
        plot.x_title.clone()
    };
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, ("sans-serif", 15).into_font().color(&fg))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..x1, 0.0..1.02)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_title.as_str())
        .y_desc(plot.y_title.as_str())
        .axis_style(fg)
        .label_style(("sans-serif", 12).into_font().color(&fg))
        .bold_line_style(grid)
        .light_line_style(bg)
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|v| fmt_cost(if log { 10f64.powf(*v) } else { *v }))
        .y_label_formatter(&|v| format!("{v:.1}"))
        .draw()
        .map_err(err)?;
    let (r, g, b) = PALETTE[0];
    let (fr, fgc, fb) = PALETTE[3];
    let (on, off) = (RGBColor(fr, fgc, fb), RGBColor(r, g, b));
    // The staircase: the best metric reachable at each cost, through the frontier points.
    let points = &plot.points;
    let front: Vec<&FrontierPoint> = order_by(points.len(), &|i, j| {
        (points[i].cost, points[i].value) < (points[j].cost, points[j].value)
    })
    .into_iter()
    .map(|i| &points[i])
    .filter(|p| p.pareto)
    .collect();
    let mut steps: Vec<(f64, f64)> = Vec::new();
    for p in &front {
        if let Some(&(_, prev)) = steps.last() {
            steps.push((at(p.cost), prev));
        }
        steps.push((at(p.cost), p.value));
    }
    if let Some(&(_, last)) = steps.last() {
        steps.push((x1, last));
    }
    chart
        .draw_series(LineSeries::new(steps, on.mix(0.8).stroke_width(2)))
        .map_err(err)?;
    // Labels right of their point, or left of it in the plot's right third (so they stay in).
    let label_right = TextStyle::from(("sans-serif", 11).into_font())
        .color(&fg)
        .pos(Pos::new(HPos::Left, VPos::Bottom));
    let label_left = TextStyle::from(("sans-serif", 11).into_font())
        .color(&fg)
        .pos(Pos::new(HPos::Right, VPos::Bottom));
    for p in &plot.points {
        let color = if p.pareto { on } else { off };
        if let Some([lo, hi]) = p.ci {
            chart
                .draw_series(LineSeries::new(
                    [(at(p.cost), lo), (at(p.cost), hi)],
                    color.mix(0.6).stroke_width(2),
                ))
                .map_err(err)?;
        }
        chart
            .draw_series(std::iter::once(Circle::new(
                (at(p.cost), p.value),
                if p.pareto { 6 } else { 4 },
                color.filled(),
            )))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(at(p.cost), p.value));
        let text = shorten(&p.label, 26);
        if at(p.cost) > x0 + (x1 - x0) * 0.62 {
            root.draw_text(&text, &label_left, (px - 7, py - 3))
        } else {
            root.draw_text(&text, &label_right, (px + 7, py - 3))
        }
        .map_err(err)?;
    }
    Ok(())
}
