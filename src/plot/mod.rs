//! The survival plot (the paper's Figure 1), drawn with plotters on any backend: the browser's
//! canvas in the app, an SVG string in native tests.
//!
//! Fixed-cohort PEC is a survival function of FED, so each method is drawn as a right-continuous
//! step curve starting from `PEC(0) = 1`: on `[k, k+1)` the curve is `PEC(k)`. The optional band
//! is the pointwise bootstrap interval of each `PEC(k)`, drawn as steps too. PEC_elig(k) is a
//! diagnostic, not a survival function, and is drawn as steps without a band or a `k = 0` point.
//!
//! Beside it: [`ranks`] (the Ranks view's rank-interval plot and bump chart) and [`frontier`]
//! (the cost frontier scatter), drawn the same way.

pub mod frontier;
pub mod ranks;

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

/// A line's dash pattern: the palette's colours come back with the next pattern, so series
/// `i` and `i + 7` (same colour) differ in their line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    LongDash,
}

impl Dash {
    pub fn name(self) -> &'static str {
        match self {
            Dash::Solid => "solid",
            Dash::Dashed => "dashed",
            Dash::Dotted => "dotted",
            Dash::LongDash => "long-dash",
        }
    }

    /// Dash and gap lengths in pixels (`None` for a solid line), as SVG's `stroke-dasharray`
    /// would take them.
    pub fn pattern(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((7, 4)),
            Dash::Dotted => Some((2, 3)),
            Dash::LongDash => Some((14, 4)),
        }
    }
}

/// The marker drawn on a series' steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
    Cross,
}

impl Marker {
    pub fn name(self) -> &'static str {
        match self {
            Marker::Circle => "circle",
            Marker::Triangle => "triangle",
            Marker::Square => "square",
            Marker::Cross => "cross",
        }
    }
}

const DASHES: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::LongDash];
const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Cross,
];

/// How series `i` looks: its colour (the palette's, cycling), its dash (the next pattern each
/// time the colours come round) and its marker (cycling through four shapes). The three
/// together tell apart the first 28 series; a legend chip shows all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeriesStyle {
    pub color: usize,
    pub dash: Dash,
    pub marker: Marker,
}

pub fn series_style(i: usize) -> SeriesStyle {
    SeriesStyle {
        color: i % PALETTE.len(),
        dash: DASHES[(i / PALETTE.len()) % DASHES.len()],
        marker: MARKERS[i % MARKERS.len()],
    }
}

/// The most curves drawn with their bootstrap bands at once; with more, only the highlighted
/// curve's band is drawn.
pub const MAX_BANDS: usize = 4;

/// Which curve to draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Curve {
    /// Fixed-cohort PEC(k), eq. 4.
    #[default]
    Pec,
    /// Eligible-depth PEC_elig(k), eq. 6.
    Elig,
}

/// One curve: a condition and its style index ([`series_style`]).
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
    /// Shade the bootstrap interval (PEC only; of the highlighted curve alone past
    /// [`MAX_BANDS`] curves).
    pub band: bool,
    /// Depth range shown, `1 ≤ k_from ≤ k_to`.
    pub k_from: usize,
    pub k_to: usize,
    pub dark: bool,
    /// The series (by position in `series`) drawn on top, thicker, the others faded: the one
    /// whose legend chip is under the pointer or focused.
    pub highlight: Option<usize>,
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

/// The pieces of the polyline `points` drawn with `pattern` (dash and gap lengths in pixels;
/// `None`: the whole line), `scale` pixels a unit along each axis: the dashes run on along the
/// line across its corners.
pub fn dashed(
    points: &[(f64, f64)],
    pattern: Option<(u32, u32)>,
    scale: (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    let Some((dash, gap)) = pattern.filter(|&(d, g)| d > 0 && g > 0) else {
        return vec![points.to_vec()];
    };
    let (dash, gap) = (f64::from(dash), f64::from(gap));
    let mut pieces = Vec::new();
    let mut piece: Vec<(f64, f64)> = points.first().copied().into_iter().collect();
    // Whether the pen is down, and how far (in pixels) it still goes before it changes.
    let (mut down, mut left) = (true, dash);
    for w in points.windows(2) {
        let ((ax, ay), b) = (w[0], w[1]);
        let (dx, dy) = (b.0 - ax, b.1 - ay);
        let length = (dx * scale.0).hypot(dy * scale.1);
        let mut at = 0.0;
        while length - at > left {
            at += left;
            // A dash ends here (its piece is done), or a gap does (a piece starts).
            piece.push((ax + dx * at / length, ay + dy * at / length));
            if down {
                pieces.push(std::mem::take(&mut piece));
            }
            down = !down;
            left = if down { dash } else { gap };
        }
        left -= length - at;
        if down {
            piece.push(b);
        }
    }
    if down && piece.len() > 1 {
        pieces.push(piece);
    }
    pieces
}

/// A marker around `at`, `size` pixels from its centre, `scale` pixels a unit along each axis:
/// the strokes that draw it (an open octagon, triangle or square; a cross's two bars).
pub fn marker_strokes(
    marker: Marker,
    at: (f64, f64),
    size: f64,
    scale: (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    // Pixel offsets (y up), then data coordinates.
    let r = size;
    let d = r * 0.414;
    let outline: Vec<(f64, f64)> = match marker {
        Marker::Circle => vec![
            (-d, r),
            (d, r),
            (r, d),
            (r, -d),
            (d, -r),
            (-d, -r),
            (-r, -d),
            (-r, d),
            (-d, r),
        ],
        Marker::Triangle => vec![
            (0.0, r + 1.0),
            (r + 1.0, -r),
            (-r - 1.0, -r),
            (0.0, r + 1.0),
        ],
        Marker::Square => vec![(-r, r), (r, r), (r, -r), (-r, -r), (-r, r)],
        Marker::Cross => vec![(-r, r), (r, -r), (r, r), (-r, -r)],
    };
    let place = |&(x, y): &(f64, f64)| (at.0 + x / scale.0, at.1 + y / scale.1);
    if marker == Marker::Cross {
        outline
            .chunks(2)
            .map(|bar| bar.iter().map(place).collect())
            .collect()
    } else {
        vec![outline.iter().map(place).collect()]
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

/// `0..n` in the order `before` defines (stable: equal items keep their index order). An
/// insertion sort behind a `dyn` comparator: the plots order at most a few dozen rows, and one
/// non-generic sort keeps the page's wasm from holding a sort per call site.
pub(crate) fn order_by(n: usize, before: &dyn Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        let at = order
            .iter()
            .rposition(|&j| !before(i, j))
            .map_or(0, |p| p + 1);
        order.insert(at, i);
    }
    order
}

/// Foreground, background and grid colours, light or dark.
pub(crate) fn theme(dark: bool) -> (RGBColor, RGBColor, RGBColor) {
    if dark {
        (
            RGBColor(230, 230, 230),
            RGBColor(24, 26, 30),
            RGBColor(70, 72, 78),
        )
    } else {
        (RGBColor(30, 30, 30), WHITE, RGBColor(225, 225, 225))
    }
}

/// Draws the plot; returns where the plotting area landed.
pub fn draw_pec<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &PecPlot<'_>,
) -> Result<PlotFrame, String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (fg, bg, grid) = theme(plot.dark);
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
    // Pixels a unit along each axis (for dash lengths and marker sizes).
    let scale = {
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        (
            f64::from(xs.end - xs.start) / (x1 - x0),
            f64::from(ys.end - ys.start) / 1.02,
        )
    };
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
    // The highlighted series last, so it is drawn over the others.
    let n = plot.series.len();
    let last = plot.highlight.filter(|&h| h < n);
    for i in (0..n).filter(|&i| Some(i) != last).chain(last) {
        let s = &plot.series[i];
        let style = series_style(s.color);
        let (r, g, b) = PALETTE[style.color];
        let color = RGBColor(r, g, b);
        let faded = plot.highlight.is_some_and(|h| h != i);
        let (line, width) = match (plot.highlight == Some(i), faded) {
            (true, _) => (color.to_rgba(), 4),
            (_, true) => (color.mix(0.3), 1),
            _ => (color.to_rgba(), 2),
        };
        // Past a few curves the bands would cover each other: then only the highlighted
        // curve's is drawn.
        let band = match plot.highlight {
            Some(h) => h == i,
            None => plot.series.len() <= MAX_BANDS,
        };
        if plot.band && plot.curve == Curve::Pec && band {
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
        let mut flats: Vec<(usize, f64)> = Vec::new();
        for k in first_k..=k_to {
            if let Some(v) = value_at(s.condition, plot.curve, k) {
                if let Some(&(_, prev)) = points.last() {
                    points.push((k as f64, prev));
                }
                points.push((k as f64, v));
                points.push(((k + 1) as f64, v));
                flats.push((k, v));
            }
        }
        // Dashes and markers are drawn as plain line series (the page's wasm then holds no
        // dashed-series or marker element code of plotters').
        let stroke = line.stroke_width(width);
        for piece in dashed(&points, style.dash.pattern(), scale) {
            chart
                .draw_series(LineSeries::new(piece, stroke))
                .map_err(err)?;
        }
        // A marker on the flat part of every `every`-th step, shifted a little per series so
        // that the markers of curves that coincide stay side by side.
        let shift = 0.3 + 0.1 * (s.color % 5) as f64;
        let size = if faded { 2.5 } else { 3.5 };
        for &(k, v) in flats.iter().filter(|(k, _)| (k - first_tick) % every == 0) {
            for bar in marker_strokes(style.marker, (k as f64 + shift, v), size, scale) {
                chart
                    .draw_series(LineSeries::new(bar, line.stroke_width(2)))
                    .map_err(err)?;
            }
        }
    }
    let area = chart.plotting_area();
    let (x_px, y_px) = area.get_pixel_range();
    Ok(PlotFrame {
        x_px: (x_px.start, x_px.end),
        y_px: (y_px.start, y_px.end),
        x_range: (x0, x1),
    })
}
