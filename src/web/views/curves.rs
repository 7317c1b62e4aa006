//! Survival curves (Figure 1): one plot per dataset × model (the paper's layout) or one per
//! dataset overlaying every condition (the leaderboard layout), drawn with plotters on a canvas,
//! with a legend that toggles series, a hover readout and an at-risk table aligned to the ticks.

use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;

use super::dom::{prefers_dark, target_value};
use super::{method_colors, page_of, pager_for, report, visible, Filters, PAGE_PLOTS};
use crate::plot::{color_hex, draw_pec, series_style, Curve, PecPlot, PlotFrame, Series};
use crate::report::ConditionReport;
use crate::web::download::download_canvas;
use crate::web::view_state::ViewState;

/// Reads one figure of the at-risk table from a PEC point.
type RiskFigure = fn(&crate::report::PecPoint) -> u64;

const WIDTH: u32 = 760;
const HEIGHT: u32 = 380;

#[component]
pub fn Curves() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let blocks = move || {
        let Some(r) = report() else {
            return Vec::new();
        };
        // Overlaid: one plot per dataset, its model "" meaning every model.
        let overlay = view.table_layout(&r) == crate::report::table::Layout::Leaderboard;
        let mut seen = std::collections::HashSet::new();
        visible(&r, &view)
            .into_iter()
            .map(|c| {
                let model = if overlay {
                    String::new()
                } else {
                    c.model.clone()
                };
                (c.dataset.clone(), model)
            })
            .filter(|b| seen.insert(b.clone()))
            .collect::<Vec<(String, String)>>()
    };
    // Plots are drawn a page at a time: a report with thousands of models would otherwise draw
    // thousands of canvases.
    let page = Memo::new(move |_| blocks());
    let shown_blocks = move || page.with(|b| page_of(b, PAGE_PLOTS));
    let plot_pager = move || page.with(|b| pager_for(b.len(), PAGE_PLOTS, "plots"));
    let k_max = move || report().map(|r| r.settings.k_max).unwrap_or(10);
    let layout_name = move || {
        report()
            .map(|r| view.table_layout(&r).name())
            .unwrap_or("paper")
    };
    view! {
        <div class="curves-tab">
            <Filters/>
            <div class="controls">
                <label>
                    <input
                        type="checkbox"
                        data-testid="toggle-elig"
                        prop:checked=move || view.elig.get()
                        on:change=move |e| view.elig.set(event_target_checked(&e))
                    />
                    " Show PEC_elig(k) (eligible-depth diagnostic) instead of PEC(k)"
                </label>
                <label>
                    <input
                        type="checkbox"
                        data-testid="toggle-band"
                        prop:checked=move || view.band.get()
                        on:change=move |e| view.band.set(event_target_checked(&e))
                    />
                    " Bootstrap band"
                </label>
                <label>
                    "k from "
                    <input
                        type="number"
                        min="1"
                        data-testid="k-from"
                        prop:value=move || view.k_from.get().to_string()
                        on:change=move |e| {
                            let v = target_value(&e).parse::<usize>().unwrap_or(1).clamp(1, k_max());
                            view.k_from.set(v);
                            if view.k_to.get_untracked() < v {
                                view.k_to.set(v);
                            }
                        }
                    />
                </label>
                <label>
                    " to "
                    <input
                        type="number"
                        min="1"
                        data-testid="k-to"
                        prop:value=move || view.k_to.get().to_string()
                        on:change=move |e| {
                            let v = target_value(&e)
                                .parse::<usize>()
                                .unwrap_or(10)
                                .clamp(view.k_from.get_untracked(), k_max());
                            view.k_to.set(v);
                        }
                    />
                </label>
            </div>
            <div class="controls">
                <label>
                    "Plots "
                    <select
                        data-testid="curves-layout"
                        on:change=move |e| view.layout.set(target_value(&e))
                        prop:value=layout_name
                    >
                        <option value="leaderboard" selected=move || layout_name() == "leaderboard">"one per dataset, every condition overlaid"</option>
                        <option value="paper" selected=move || layout_name() == "paper">"one per dataset × model (the paper's)"</option>
                    </select>
                </label>
            </div>
            <p class="hint">
                "Fixed-cohort PEC(k) = share of all N rollouts whose first k actions all executed; a rollout that ended before k counts as not surviving (no censoring correction). Steps are right-continuous from PEC(0) = 1."
                {format!(
                    " A legend entry under the pointer or focused highlights its curve (click it to hide or show the curve); past {} curves, the bootstrap band is drawn for the highlighted curve only.",
                    crate::plot::MAX_BANDS
                )}
            </p>
            {plot_pager}
            <For
                each=shown_blocks
                key=|b| b.clone()
                children=move |(dataset, model)| view! { <PecPanel dataset model/> }
            />
        </div>
    }
}

/// A series' name: the method in a per-model plot, "model / method" when overlaid.
fn series_label(c: &ConditionReport, overlay: bool) -> String {
    if overlay {
        format!("{} / {}", c.model, c.method)
    } else {
        c.method.clone()
    }
}

/// One survival plot with its legend, readout and at-risk table.
#[component]
fn PecPanel(dataset: String, model: String) -> impl IntoView {
    let view = expect_context::<ViewState>();
    let canvas_ref = NodeRef::<Canvas>::new();
    let frame = RwSignal::new(None::<PlotFrame>);
    let hover = RwSignal::new(None::<usize>);
    // The series whose legend chip is under the pointer or focused: drawn on top, the others
    // faded.
    let highlight = RwSignal::new(None::<String>);
    // An empty model overlays every condition of the dataset: each gets its own colour and is
    // named "model / method"; per-model plots keep a method's colour across plots.
    let overlay = model.is_empty();
    let title = if overlay {
        dataset.clone()
    } else {
        format!("{dataset} / {model}")
    };
    let (d2, m2) = (dataset.clone(), model.clone());
    let conditions = Memo::new(move |_| {
        report()
            .map(|r| {
                let colors = method_colors(&r);
                let only = view.model.get();
                r.conditions
                    .iter()
                    .filter(|c| c.dataset == d2 && (c.model == m2 || overlay))
                    .filter(|c| !overlay || only.is_empty() || c.model == only)
                    .enumerate()
                    .map(|(i, c)| {
                        let color = if overlay {
                            i
                        } else {
                            colors.get(&c.method).copied().unwrap_or(0)
                        };
                        (color, series_label(c, overlay), c.clone())
                    })
                    .collect::<Vec<(usize, String, ConditionReport)>>()
            })
            .unwrap_or_default()
    });
    let shown = move || {
        let hidden = view.hidden.get();
        conditions
            .get()
            .into_iter()
            .filter(|(_, label, _)| !hidden.contains(label))
            .collect::<Vec<_>>()
    };
    let range = move || {
        let k_max = report().map(|r| r.settings.k_max).unwrap_or(10);
        let to = view.k_to.get().min(k_max).max(1);
        (view.k_from.get().min(to), to)
    };
    let title2 = title.clone();
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let series_data = shown();
        let (k_from, k_to) = range();
        let lit = highlight.get();
        let highlight = series_data
            .iter()
            .position(|(_, label, _)| Some(label) == lit.as_ref());
        let plot = PecPlot {
            title: title2.clone(),
            series: series_data
                .iter()
                .map(|(color, label, c)| Series {
                    label: label.clone(),
                    color: *color,
                    condition: c,
                })
                .collect(),
            curve: if view.elig.get() {
                Curve::Elig
            } else {
                Curve::Pec
            },
            band: view.band.get(),
            k_from,
            k_to,
            dark: prefers_dark(),
            highlight,
        };
        canvas.set_width(WIDTH);
        canvas.set_height(HEIGHT);
        if let Some(backend) = CanvasBackend::with_canvas_object(canvas) {
            let root = backend.into_drawing_area();
            match draw_pec(&root, &plot) {
                Ok(f) => frame.set(Some(f)),
                Err(e) => web_sys::console::error_1(&e.into()),
            }
            let _ = root.present();
        }
    });
    let on_move = move |e: web_sys::MouseEvent| {
        let (Some(canvas), Some(f)) = (canvas_ref.get_untracked(), frame.get_untracked()) else {
            return;
        };
        let rect = canvas.get_bounding_client_rect();
        if rect.width() <= 0.0 {
            return;
        }
        let x = (f64::from(e.client_x()) - rect.left()) * f64::from(WIDTH) / rect.width();
        let (k_from, k_to) = range();
        let first = if view.elig.get_untracked() {
            k_from
        } else {
            k_from - 1
        };
        hover.set(f.depth_at(x as i32).filter(|k| *k >= first && *k <= k_to));
    };
    let readout = move || {
        let k = hover.get()?;
        let elig = view.elig.get();
        let lines = shown()
            .into_iter()
            .map(|(color, label, c)| {
                let text = if k == 0 {
                    format!("{label}: PEC(0) = 1 (N = {})", c.n)
                } else if let Some(p) = c.pec.get(k - 1) {
                    let value = if elig {
                        p.elig
                            .map_or("undefined".to_string(), |v| format!("{v:.3}"))
                    } else {
                        format!("{:.3}", p.value)
                    };
                    let ci = match (elig, p.ci) {
                        (false, Some([lo, hi])) => format!(" [{lo:.3}, {hi:.3}]"),
                        _ => String::new(),
                    };
                    format!("{label}: {value}{ci}  n_k = {}", p.n_k)
                } else {
                    format!("{label}: –")
                };
                view! { <li style=format!("border-left-color: {}", color_hex(color))>{text}</li> }
            })
            .collect_view();
        Some(view! {
            <div class="readout" data-testid="plot-readout">
                <strong>{format!("k = {k}")}</strong>
                <ul>{lines}</ul>
            </div>
        })
    };
    let legend = move || {
        conditions
            .get()
            .into_iter()
            .map(|(color, label, _)| {
                let method = label.clone();
                let m2 = method.clone();
                let pressed = move || (!view.hidden.get().contains(&m2)).to_string();
                let (lit, lit2, title) = (label.clone(), label.clone(), label.clone());
                let style = series_style(color);
                view! {
                    <button
                        class="legend-item"
                        data-testid="legend-item"
                        data-style=format!("{} {} {}", style.color, style.dash.name(), style.marker.name())
                        title=title
                        aria-pressed=pressed
                        on:mouseenter=move |_| highlight.set(Some(lit.clone()))
                        on:focus=move |_| highlight.set(Some(lit2.clone()))
                        on:mouseleave=move |_| highlight.set(None)
                        on:blur=move |_| highlight.set(None)
                        on:click=move |_| {
                            let m = method.clone();
                            view.hidden.update(|h| {
                                if let Some(i) = h.iter().position(|x| *x == m) {
                                    h.remove(i);
                                } else {
                                    h.push(m);
                                }
                            })
                        }
                    >
                        {swatch(color)}
                        <span class="legend-label">{label}</span>
                    </button>
                }
            })
            .collect_view()
    };
    // At-risk table: per visible method, three rows of figures placed under the k ticks; the
    // row names sit in the plot's left margin, like a survival plot's number-at-risk table.
    let at_risk = move || {
        let f = frame.get()?;
        let (k_from, k_to) = range();
        let pct = |x: f64| x / f64::from(WIDTH) * 100.0;
        let left = move |k: usize| format!("left: {:.2}%", pct(f.x_of(k as f64)));
        let margin = format!("width: {:.2}%", pct(f64::from(f.x_px.0)) - 0.5);
        let every = (k_to + 1 - k_from).div_ceil(20).max(1);
        let ks: Vec<usize> = (k_from..=k_to)
            .filter(|k| (k - k_from) % every == 0)
            .collect();
        let ks2 = ks.clone();
        let m2 = margin.clone();
        let ticks = ks
            .iter()
            .map(|&k| view! { <span class="cell head" style=left(k)>{k}</span> })
            .collect_view();
        let groups = shown()
            .into_iter()
            .map(|(color, label, c)| {
                let figures: [(&str, RiskFigure); 3] = [
                    ("at risk", |p| p.n_k),
                    ("fail at k", |p| p.first_failures),
                    ("ended < k", |p| p.ended_before),
                ];
                let rows = figures
                    .into_iter()
                    .map(|(name, get)| {
                        let cells = ks2
                            .iter()
                            .filter_map(|&k| c.pec.get(k - 1).map(|p| (k, get(p))))
                            .map(|(k, v)| view! { <span class="cell" style=left(k)>{v}</span> })
                            .collect_view();
                        view! {
                            <div class="risk-row">
                                <span class="risk-name" style=m2.clone()>{name}</span>
                                {cells}
                            </div>
                        }
                    })
                    .collect_view();
                view! {
                    <div class="risk-group">
                        <div class="risk-method" style=format!("border-left-color: {}", color_hex(color))>
                            {label}
                        </div>
                        {rows}
                    </div>
                }
            })
            .collect_view();
        Some(view! {
            <div class="at-risk" data-testid="at-risk">
                <div class="risk-row ticks"><span class="risk-name" style=margin>"k"</span>{ticks}</div>
                {groups}
            </div>
        })
    };
    let file_name = if overlay {
        format!("pec-{dataset}.png")
    } else {
        format!("pec-{dataset}-{model}.png")
    }
    .replace(['/', ' '], "_");
    view! {
        <figure class="plot">
            <div class="legend" role="group" aria-label="series">{legend}</div>
            <div class="canvas-wrap">
                <canvas
                    node_ref=canvas_ref
                    data-testid="pec-plot"
                    role="img"
                    aria-label=format!("PEC survival curves for {title}")
                    on:mousemove=on_move
                    on:mouseleave=move |_| hover.set(None)
                ></canvas>
                {readout}
            </div>
            {at_risk}
            <button
                class="small"
                data-testid="export-png"
                on:click=move |_| {
                    if let Some(c) = canvas_ref.get_untracked() {
                        download_canvas(&file_name, &c);
                    }
                }
            >
                "Save PNG"
            </button>
        </figure>
    }
}

/// A legend chip's sample of series `i`: a short line in its colour and dash (a CSS gradient
/// of the plot's dash lengths); CSS puts its marker on it, from the chip's `data-style`.
fn swatch(i: usize) -> impl IntoView {
    let color = color_hex(i);
    let (dash, gap) = series_style(i).dash.pattern().unwrap_or((1, 0));
    let css = format!(
        "color: {color}; background-image: repeating-linear-gradient(to right, {color} 0 {dash}px, transparent {dash}px {}px)",
        dash + gap
    );
    view! { <span class="swatch-line" aria-hidden="true" style=css></span> }
}
