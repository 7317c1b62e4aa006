//! The Ranks view's two plots, on any plotters backend (canvas in the app, SVG in tests).
//!
//! - [`draw_rank_intervals`]: one row per condition in rank order, a bar from `rank_lo` to
//!   `rank_hi` (the simultaneous interval) with the point rank marked — the way csranks and the
//!   SWE-bench tie groups show it; the top group (tied with #1) in its own colour.
//! - [`draw_bump`]: a slope chart joining each condition's rank by final success (left) to its
//!   rank by a prefix metric (right); lines of conditions in a discordant pair coloured, those in
//!   a significant flip drawn strongest, the others grey.
//!
//! Both draw what the report holds ([`crate::report::RankTable`],
//! [`crate::report::RankDivergence`]), put in order by [`rank_rows`] and [`bump_lines`]; no
//! rank is computed here.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{order_by, theme, PALETTE};
use crate::report::{RankDivergence, RankTable, RankedCondition};

/// `model / method`.
pub fn condition_label(c: &RankedCondition) -> String {
    format!("{} / {}", c.model, c.method)
}

/// The table's conditions in rank order (ties in report order): indices into
/// `table.conditions`.
pub fn rank_order(table: &RankTable) -> Vec<usize> {
    let c = &table.conditions;
    order_by(c.len(), &|i, j| c[i].rank < c[j].rank)
}

/// The rank-interval plot's rows, top to bottom.
pub fn rank_rows(table: &RankTable) -> Vec<RankRow> {
    rank_order(table)
        .into_iter()
        .map(|i| {
            let c = &table.conditions[i];
            RankRow {
                label: condition_label(c),
                rank: c.rank,
                interval: c.rank_lo.zip(c.rank_hi),
                top: c.top(),
            }
        })
        .collect()
}

/// The bump chart's lines: `success` and `prefix` are one dataset's rank tables (same
/// conditions, same order), `divergence` their entry. Places are rank order on each side, ties
/// in report order; a line is as strong as the strongest discordant pair it is in.
pub fn bump_lines(
    success: &RankTable,
    prefix: &RankTable,
    divergence: &RankDivergence,
) -> Vec<BumpLine> {
    let k = success.conditions.len();
    let mut left = vec![0; k];
    for (place, i) in rank_order(success).into_iter().enumerate() {
        left[i] = place + 1;
    }
    let mut right = vec![0; k];
    for (place, i) in rank_order(prefix).into_iter().enumerate() {
        right[i] = place + 1;
    }
    let index = |p: &[String; 2]| {
        success
            .conditions
            .iter()
            .position(|c| c.model == p[0] && c.method == p[1])
    };
    let mut flip = vec![Flip::None; k];
    for d in &divergence.discordant {
        let strength = if d.significant {
            Flip::Significant
        } else {
            Flip::Discordant
        };
        for p in std::iter::once(&d.ahead_on_success).chain(d.ahead_on_prefix()) {
            if let Some(i) = index(p) {
                flip[i] = flip[i].max(strength);
            }
        }
    }
    (0..k)
        .map(|i| BumpLine {
            label: condition_label(&success.conditions[i]),
            left: left[i],
            right: right[i],
            left_rank: success.conditions[i].rank,
            right_rank: prefix.conditions.get(i).map_or(0, |c| c.rank),
            flip: flip[i],
            color: i,
        })
        .collect()
}

/// One row of the rank-interval plot.
#[derive(Clone, Debug, PartialEq)]
pub struct RankRow {
    pub label: String,
    pub rank: usize,
    /// The simultaneous interval; `None` without the bootstrap (the point alone is drawn).
    pub interval: Option<(usize, usize)>,
    /// In the top group (`rank_lo = 1`).
    pub top: bool,
}

/// What the rank-interval plot draws: `rows` top to bottom (rank order), ranks 1..=`k`.
pub struct RankIntervalPlot {
    pub title: String,
    pub rows: Vec<RankRow>,
    pub dark: bool,
}

/// How a condition's line is drawn in the bump chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Flip {
    /// In no discordant pair.
    None,
    /// In a discordant pair, none significant.
    Discordant,
    /// In a significant flip.
    Significant,
}

/// One condition of the bump chart: its place (1 = top) on each side, as ordered by
/// [`crate::report::derive::bump_lines`], and its point ranks as labelled.
#[derive(Clone, Debug, PartialEq)]
pub struct BumpLine {
    pub label: String,
    pub left: usize,
    pub right: usize,
    pub left_rank: usize,
    pub right_rank: usize,
    pub flip: Flip,
    /// Palette index of a coloured line.
    pub color: usize,
}

pub struct BumpPlot {
    pub title: String,
    pub left_title: String,
    pub right_title: String,
    pub lines: Vec<BumpLine>,
    pub dark: bool,
}

/// Pixels a row takes in both plots.
pub const ROW_PX: u32 = 26;

/// The canvas height for `k` rows.
pub fn rank_plot_height(k: usize) -> u32 {
    (90 + ROW_PX as usize * k.max(1)) as u32
}

/// `label` cut to at most `max` characters, an ellipsis marking the cut.
pub fn shorten(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Characters of a name shown beside a plot (the full names are in the table under it).
const LABEL_CHARS: usize = 24;

fn anchored(size: u32, color: &RGBColor, h: HPos, v: VPos) -> TextStyle<'_> {
    TextStyle::from(("sans-serif", size).into_font())
        .color(color)
        .pos(Pos::new(h, v))
}

/// Draws the rank-interval plot.
pub fn draw_rank_intervals<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &RankIntervalPlot,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (fg, bg, grid) = theme(plot.dark);
    root.fill(&bg).map_err(err)?;
    let k = plot.rows.len().max(1);
    let kf = k as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(&plot.title, ("sans-serif", 15).into_font().color(&fg))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(175)
        .build_cartesian_2d(0.5..kf + 0.5, 0.0..kf)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .x_desc("rank (1 = best)")
        .axis_style(fg)
        .label_style(("sans-serif", 12).into_font().color(&fg))
        .draw()
        .map_err(err)?;
    // A tick and a grid line at every rank (thinned past 20).
    let every = k.div_ceil(20);
    let tick = anchored(12, &fg, HPos::Center, VPos::Top);
    for r in (1..=k).filter(|r| (r - 1) % every == 0) {
        let x = r as f64;
        chart
            .draw_series(LineSeries::new([(x, 0.0), (x, kf)], grid))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(x, 0.0));
        root.draw_text(&r.to_string(), &tick, (px, py + 6))
            .map_err(err)?;
    }
    let (r, g, b) = PALETTE[0];
    let (tr, tg, tb) = PALETTE[1];
    let name = anchored(11, &fg, HPos::Right, VPos::Center);
    for (i, row) in plot.rows.iter().enumerate() {
        let y = kf - i as f64 - 0.5;
        let color = if row.top {
            RGBColor(tr, tg, tb)
        } else {
            RGBColor(r, g, b)
        };
        if let Some((lo, hi)) = row.interval {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(lo as f64 - 0.18, y - 0.22), (hi as f64 + 0.18, y + 0.22)],
                    color.mix(0.35).filled(),
                )))
                .map_err(err)?;
        }
        chart
            .draw_series(std::iter::once(Circle::new(
                (row.rank as f64, y),
                5,
                color.filled(),
            )))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(0.5, y));
        root.draw_text(
            &format!("{}. {}", row.rank, shorten(&row.label, LABEL_CHARS)),
            &name,
            (px - 8, py),
        )
        .map_err(err)?;
    }
    Ok(())
}

/// Draws the bump chart.
pub fn draw_bump<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &BumpPlot,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (fg, bg, grid) = theme(plot.dark);
    root.fill(&bg).map_err(err)?;
    let k = plot.lines.len().max(1) as f64;
    let chart = ChartBuilder::on(root)
        .caption(&plot.title, ("sans-serif", 15).into_font().color(&fg))
        .margin_top(12)
        .margin_bottom(12)
        .margin_left(165)
        .margin_right(165)
        .x_label_area_size(30)
        .build_cartesian_2d(0.0..1.0, 0.0..k)
        .map_err(err)?;
    let mut chart = chart;
    let y_of = |place: usize| k - place as f64 + 0.5;
    let head = anchored(13, &fg, HPos::Center, VPos::Top);
    for (x, title) in [(0.0, &plot.left_title), (1.0, &plot.right_title)] {
        chart
            .draw_series(LineSeries::new([(x, 0.0), (x, k)], grid))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(x, 0.0));
        root.draw_text(title, &head, (px, py + 8)).map_err(err)?;
    }
    // Grey lines first, then the discordant, then the significant: the strongest on top.
    let order = order_by(plot.lines.len(), &|i, j| {
        plot.lines[i].flip < plot.lines[j].flip
    });
    for &i in &order {
        let l = &plot.lines[i];
        let (r, g, b) = PALETTE[l.color % PALETTE.len()];
        let (style, dot) = match l.flip {
            Flip::None => (grid.mix(1.0).stroke_width(2), grid.mix(1.0)),
            Flip::Discordant => (
                RGBColor(r, g, b).mix(0.55).stroke_width(2),
                RGBColor(r, g, b).mix(0.55),
            ),
            Flip::Significant => (
                RGBColor(r, g, b).mix(1.0).stroke_width(4),
                RGBColor(r, g, b).mix(1.0),
            ),
        };
        let (a, b2) = ((0.0, y_of(l.left)), (1.0, y_of(l.right)));
        chart
            .draw_series(LineSeries::new([a, b2], style))
            .map_err(err)?;
        for p in [a, b2] {
            chart
                .draw_series(std::iter::once(Circle::new(p, 4, dot.filled())))
                .map_err(err)?;
        }
    }
    // Names beside both ends, the point rank first.
    let left = anchored(11, &fg, HPos::Right, VPos::Center);
    let right = anchored(11, &fg, HPos::Left, VPos::Center);
    for l in &plot.lines {
        let (px, py) = chart.backend_coord(&(0.0, y_of(l.left)));
        root.draw_text(
            &format!("{} {}.", shorten(&l.label, LABEL_CHARS - 4), l.left_rank),
            &left,
            (px - 10, py),
        )
        .map_err(err)?;
        let (px, py) = chart.backend_coord(&(1.0, y_of(l.right)));
        root.draw_text(
            &format!("{}. {}", l.right_rank, shorten(&l.label, LABEL_CHARS - 4)),
            &right,
            (px + 10, py),
        )
        .map_err(err)?;
    }
    Ok(())
}
