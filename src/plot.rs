//! The survival plot (the paper's Figure 1), drawn with plotters on any backend: the browser's
//! canvas in the app, an SVG string in native tests.
//!
//! Fixed-cohort PEC is a survival function of FED, so each method is drawn as a right-continuous
//! step curve starting from `PEC(0) = 1`: on `[k, k+1)` the curve is `PEC(k)`. The optional band
//! is the pointwise bootstrap interval of each `PEC(k)`, drawn as steps too. PEC_elig(k) is a
//! diagnostic, not a survival function, and is drawn as steps without a band or a `k = 0` point.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::ConditionReport;

/// Okabe–Ito colours, distinguishable with the common colour-vision deficiencies; black is left
/// out so curves stay visible on a dark background.
pub const PALETTE: [(u8, u8, u8); 7] = [
    (0, 114, 178),   // blue
    (230, 159, 0),   // orange
    (0, 158, 115),   // bluish green
    (213, 94, 0),    // vermillion
    (204, 121, 167), // reddish purple
    (86, 180, 233),  // sky blue
    (240, 228, 66),  // yellow
];

/// The colour of series `i` as `#rrggbb`.
pub fn color_hex(i: usize) -> String {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Which curve to draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Curve {
    /// Fixed-cohort PEC(k), eq. 4.
    #[default]
    Pec,
    /// Eligible-depth PEC_elig(k), eq. 6.
    Elig,
}

/// One curve: a condition and its colour index.
pub struct Series<'a> {
    pub label: String,
    pub color: usize,
    pub condition: &'a ConditionReport,
}

/// What to draw.
pub struct PecPlot<'a> {
    pub title: String,
    pub series: Vec<Series<'a>>,
    pub curve: Curve,
    /// Shade the bootstrap interval (PEC only).
    pub band: bool,
    /// Depth range shown, `1 ≤ k_from ≤ k_to`.
    pub k_from: usize,
    pub k_to: usize,
    pub dark: bool,
}

/// Pixel extent of the plotting area, to map pointer positions back to depths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlotFrame {
    pub x_px: (i32, i32),
    pub y_px: (i32, i32),
    /// The x value at the left and right edge of the plotting area.
    pub x_range: (f64, f64),
}

impl PlotFrame {
    /// The depth under pixel column `x` (the step `[k, k+1)` containing it), if any.
    pub fn depth_at(&self, x: i32) -> Option<usize> {
        let (l, r) = self.x_px;
        if r <= l || x < l || x > r {
            return None;
        }
        let t = f64::from(x - l) / f64::from(r - l);
        let v = self.x_range.0 + t * (self.x_range.1 - self.x_range.0);
        (v >= 0.0).then(|| v.floor() as usize)
    }

    /// The pixel column of depth `k`.
    pub fn x_of(&self, k: f64) -> f64 {
        let (l, r) = self.x_px;
        f64::from(l) + (k - self.x_range.0) / (self.x_range.1 - self.x_range.0) * f64::from(r - l)
    }
}

fn value_at(c: &ConditionReport, curve: Curve, k: usize) -> Option<f64> {
    if k == 0 {
        return (curve == Curve::Pec).then_some(1.0);
    }
    let p = c.pec.get(k - 1)?;
    match curve {
        Curve::Pec => Some(p.value),
        Curve::Elig => p.elig,
    }
}

/// Draws the plot; returns where the plotting area landed.
pub fn draw_pec<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &PecPlot<'_>,
) -> Result<PlotFrame, String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (fg, bg, grid) = if plot.dark {
        (
            RGBColor(230, 230, 230),
            RGBColor(24, 26, 30),
            RGBColor(70, 72, 78),
        )
    } else {
        (RGBColor(30, 30, 30), WHITE, RGBColor(225, 225, 225))
    };
    root.fill(&bg).map_err(err)?;
    let k_to = plot.k_to.max(plot.k_from);
    let x0 = if plot.curve == Curve::Pec {
        plot.k_from as f64 - 1.0
    } else {
        plot.k_from as f64
    };
    let x1 = k_to as f64 + 1.0;
    let y_label = match plot.curve {
        Curve::Pec => "PEC(k) = P[FED > k]",
        Curve::Elig => "PEC_elig(k)",
    };
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, ("sans-serif", 16).into_font().color(&fg))
        .margin(12)
        .x_label_area_size(34)
        .y_label_area_size(52)
        .build_cartesian_2d(x0..x1, 0.0..1.02)
        .map_err(err)?;
    // x ticks at every depth (thinned to at most ~20 labels), drawn by hand: plotters' automatic
    // ticks pick "nice" numbers, and a survival plot reads best with a tick per step.
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc("depth k")
        .y_desc(y_label)
        .axis_style(fg)
        .label_style(("sans-serif", 12).into_font().color(&fg))
        .bold_line_style(grid)
        .light_line_style(bg)
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.1}"))
        .draw()
        .map_err(err)?;
    let first_tick = x0 as usize;
    let every = (k_to - first_tick).div_ceil(20).max(1);
    let tick_style = TextStyle::from(("sans-serif", 12).into_font())
        .color(&fg)
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
    for k in (first_tick..=k_to).filter(|k| (k - first_tick) % every == 0) {
        let x = k as f64;
        chart
            .draw_series(LineSeries::new([(x, 0.0), (x, 1.02)], grid))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(x, 0.0));
        root.draw_text(&k.to_string(), &tick_style, (px, py + 6))
            .map_err(err)?;
    }

    let first_k = x0 as usize;
    for s in &plot.series {
        let (r, g, b) = PALETTE[s.color % PALETTE.len()];
        let color = RGBColor(r, g, b);
        if plot.band && plot.curve == Curve::Pec {
            for k in first_k.max(1)..=k_to {
                if let Some([lo, hi]) = s.condition.pec.get(k - 1).and_then(|p| p.ci) {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(k as f64, lo), ((k + 1) as f64, hi)],
                            color.mix(0.18).filled(),
                        )))
                        .map_err(err)?;
                }
            }
        }
        // Right-continuous steps: flat on [k, k+1), a vertical drop at k+1.
        let mut points: Vec<(f64, f64)> = Vec::new();
        for k in first_k..=k_to {
            if let Some(v) = value_at(s.condition, plot.curve, k) {
                if let Some(&(_, prev)) = points.last() {
                    points.push((k as f64, prev));
                }
                points.push((k as f64, v));
                points.push(((k + 1) as f64, v));
            }
        }
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(err)?;
    }
    let area = chart.plotting_area();
    let (x_px, y_px) = area.get_pixel_range();
    Ok(PlotFrame {
        x_px: (x_px.start, x_px.end),
        y_px: (y_px.start, y_px.end),
        x_range: (x0, x1),
    })
}
