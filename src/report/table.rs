//! The main table (the paper's Table 2) as text, CSV and LaTeX.
//!
//! In the paper's layout one block per dataset × model, methods as rows; in the leaderboard
//! layout ([`Layout`]) one block per dataset, one row per condition. Columns TER, Mean FED, AUC-PEC, RR-Eligible,
//! RR, Final success, each score with its interval. The block maximum of each score column is
//! marked (bold in LaTeX, `*` in text), ties at the displayed precision included. The mark never
//! means statistical significance. RR-Eligible is a count, not a score, and is not marked.

use super::ranks::RankMetric;
use super::{ConditionReport, Estimate, RankDivergence, RankTable, RankedCondition, Report};

/// A score column of the main table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Ter,
    MeanFed,
    AucPec,
    RrEligible,
    Rr,
    FinalSuccess,
}

impl Column {
    pub const ALL: [Column; 6] = [
        Column::Ter,
        Column::MeanFed,
        Column::AucPec,
        Column::RrEligible,
        Column::Rr,
        Column::FinalSuccess,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Column::Ter => "TER",
            Column::MeanFed => "Mean FED",
            Column::AucPec => "AUC-PEC",
            Column::RrEligible => "RR-Eligible",
            Column::Rr => "RR",
            Column::FinalSuccess => "Final success",
        }
    }

    /// The column's key in CSV headers and the app's `data-col` attributes.
    pub fn key(self) -> &'static str {
        match self {
            Column::Ter => "ter",
            Column::MeanFed => "mean_fed",
            Column::AucPec => "auc_pec",
            Column::RrEligible => "rr_eligible",
            Column::Rr => "rr",
            Column::FinalSuccess => "final_success",
        }
    }

    /// The estimate shown in this column (`None` for the RR-Eligible count).
    pub fn estimate(self, c: &ConditionReport) -> Option<Estimate> {
        match self {
            Column::Ter => Some(c.ter),
            Column::MeanFed => Some(c.mean_fed),
            Column::AucPec => Some(c.auc_pec),
            Column::RrEligible => None,
            Column::Rr => Some(c.rr),
            Column::FinalSuccess => Some(c.final_success),
        }
    }
}

/// Formats a number at `decimals` places (correctly rounded, as Rust's formatter does).
pub fn fmt_num(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// A count with its thousands grouped by commas (`558643` → `558,643`): counts in sentences
/// on screen, where six-digit figures are read at a glance.
///
/// ```
/// assert_eq!(prefix_exec::report::table::fmt_count(558_643), "558,643");
/// assert_eq!(prefix_exec::report::table::fmt_count(999), "999");
/// assert_eq!(prefix_exec::report::table::fmt_count(1_000_000), "1,000,000");
/// ```
pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `0.62 [0.55, 0.69]`, `0.62` without an interval, `–` when undefined.
pub fn fmt_estimate(e: &Estimate, decimals: usize, intervals: bool) -> String {
    match (e.value, e.ci) {
        (None, _) => "–".to_string(),
        (Some(v), Some([lo, hi])) if intervals => format!(
            "{} [{}, {}]",
            fmt_num(v, decimals),
            fmt_num(lo, decimals),
            fmt_num(hi, decimals)
        ),
        (Some(v), _) => fmt_num(v, decimals),
    }
}

/// The title of the column that counts crashed rollouts (shown where a condition has any).
pub const CRASHED_TITLE: &str = "Crashed";

/// pass^1..k as `0.42/0.27/0.22/0.20` (`–` without repeated trials).
pub fn fmt_pass_hat(values: &[f64], decimals: usize) -> String {
    if values.is_empty() {
        return "–".to_string();
    }
    values
        .iter()
        .map(|v| fmt_num(*v, decimals))
        .collect::<Vec<_>>()
        .join("/")
}

/// How the main table is laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// The paper's: one block per dataset × model, methods as rows.
    #[default]
    Paper,
    /// A leaderboard: one block per dataset, one row per condition (model / method).
    Leaderboard,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Paper => "paper",
            Layout::Leaderboard => "leaderboard",
        }
    }

    pub fn from_name(name: &str) -> Option<Layout> {
        [Layout::Paper, Layout::Leaderboard]
            .into_iter()
            .find(|l| l.name() == name)
    }

    /// Leaderboard when every model of every dataset has a single method (paper blocks would be
    /// one row each), else the paper's.
    pub fn default_for(report: &Report) -> Layout {
        let single = report
            .conditions
            .windows(2)
            .all(|w| !(w[0].dataset == w[1].dataset && w[0].model == w[1].model));
        if single && !report.conditions.is_empty() {
            Layout::Leaderboard
        } else {
            Layout::Paper
        }
    }

    /// A block's title.
    pub fn title(self, c: &ConditionReport) -> String {
        match self {
            Layout::Paper => format!("{} / {}", c.dataset, c.model),
            Layout::Leaderboard => c.dataset.clone(),
        }
    }

    /// A row's label.
    pub fn row_label(self, c: &ConditionReport) -> String {
        match self {
            Layout::Paper => c.method.clone(),
            Layout::Leaderboard => format!("{} / {}", c.model, c.method),
        }
    }

    /// The heading of the label column.
    pub fn label_title(self) -> &'static str {
        match self {
            Layout::Paper => "Method",
            Layout::Leaderboard => "Model / method",
        }
    }
}

/// The value `column` shows for `c` at `decimals` places, as a number (what bold compares).
fn shown(c: &ConditionReport, column: Column, decimals: usize) -> Option<f64> {
    column
        .estimate(c)
        .and_then(|e| e.value)
        .map(|v| fmt_num(v, decimals).parse::<f64>().unwrap_or(f64::NAN))
        .filter(|v| !v.is_nan())
}

/// Whether `c`'s value in `column` is the block maximum at `decimals` places (ties included).
pub fn is_block_max(
    block: &[&ConditionReport],
    c: &ConditionReport,
    column: Column,
    decimals: usize,
) -> bool {
    let Some(mine) = shown(c, column, decimals) else {
        return false;
    };
    block
        .iter()
        .filter_map(|x| shown(x, column, decimals))
        .all(|other| other <= mine)
}

/// The main table's sort: a column and whether descending; `None` keeps report order.
pub type Sort = Option<(Column, bool)>;

/// The value a row sorts by in `column` (an undefined score sorts below every number).
pub fn sort_value(c: &ConditionReport, column: Column) -> f64 {
    match column.estimate(c) {
        Some(e) => e.value.unwrap_or(f64::NEG_INFINITY),
        None => c.rr_eligible as f64,
    }
}

/// One block of the main table as shown: its rows (indices into `report.conditions`) in display
/// order, and each score column's maximum at the displayed precision over the whole block, so
/// a page or a filtered view of a block marks the same cells as the whole block does.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub title: String,
    pub rows: Vec<usize>,
    /// Per column of [`Column::ALL`]: the block maximum as shown (`None`: no value, or the
    /// RR-Eligible count, which is never marked).
    maxima: [Option<f64>; 6],
    decimals: usize,
}

impl Block {
    /// Whether `c` (a row of this block) shows the block maximum of `column`, ties included.
    pub fn is_max(&self, c: &ConditionReport, column: Column) -> bool {
        let i = Column::ALL.iter().position(|&x| x == column).unwrap_or(0);
        match (self.maxima[i], shown(c, column, self.decimals)) {
            (Some(max), Some(mine)) => mine >= max,
            _ => false,
        }
    }

    /// The precision the maxima were taken at.
    pub fn decimals(&self) -> usize {
        self.decimals
    }

    /// "N = 50 per row", or "N varies by row".
    pub fn n_text(&self, report: &Report) -> String {
        let mut ns = self.rows.iter().map(|&i| report.conditions[i].n);
        let first = ns.next().unwrap_or(0);
        if ns.all(|n| n == first) {
            format!("N = {first} per row")
        } else {
            "N varies by row".to_string()
        }
    }
}

/// The main table's blocks in `layout`, rows sorted within each block by `sort` (stable, so
/// ties keep report order), maxima at `decimals` places. The app's table, its CSV and LaTeX
/// exports and the CLI's text all lay out these blocks.
pub fn layout_blocks(report: &Report, layout: Layout, sort: Sort, decimals: usize) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for (i, c) in report.conditions.iter().enumerate() {
        let same = out.last().is_some_and(|b| {
            let first = &report.conditions[b.rows[0]];
            first.dataset == c.dataset && (layout == Layout::Leaderboard || first.model == c.model)
        });
        if same {
            if let Some(b) = out.last_mut() {
                b.rows.push(i);
            }
        } else {
            out.push(Block {
                title: layout.title(c),
                rows: vec![i],
                maxima: [None; 6],
                decimals,
            });
        }
    }
    for b in &mut out {
        for (slot, column) in b.maxima.iter_mut().zip(Column::ALL) {
            if column.estimate(&report.conditions[b.rows[0]]).is_none() {
                continue;
            }
            *slot = b
                .rows
                .iter()
                .filter_map(|&i| shown(&report.conditions[i], column, decimals))
                .reduce(f64::max);
        }
        if let Some((column, desc)) = sort {
            b.rows.sort_by(|&x, &y| {
                let o = sort_value(&report.conditions[x], column)
                    .total_cmp(&sort_value(&report.conditions[y], column));
                if desc {
                    o.reverse()
                } else {
                    o
                }
            });
        }
    }
    out
}

/// A piece of a page: rows `rows` (positions in the block's row list) of block `block`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub block: usize,
    pub rows: std::ops::Range<usize>,
}

/// Pages of about `page_rows` rows over blocks of `lens` rows: a block that fits on the current
/// page is never split (so a page of the paper's layout holds whole blocks); a block longer than
/// a page (a leaderboard of 20,000 models) is cut into pages of `page_rows` rows. Empty blocks
/// are skipped. Each page lists its segments in order.
pub fn pages(lens: &[usize], page_rows: usize) -> Vec<Vec<Segment>> {
    let page_rows = page_rows.max(1);
    let mut out: Vec<Vec<Segment>> = Vec::new();
    let (mut page, mut rows): (Vec<Segment>, usize) = (Vec::new(), 0);
    for (block, &len) in lens.iter().enumerate() {
        if len == 0 {
            continue;
        }
        if rows > 0 && rows + len > page_rows {
            out.push(std::mem::take(&mut page));
            rows = 0;
        }
        let mut start = 0;
        while start < len {
            let end = (start + page_rows - rows).min(len);
            page.push(Segment {
                block,
                rows: start..end,
            });
            rows += end - start;
            start = end;
            if rows >= page_rows {
                out.push(std::mem::take(&mut page));
                rows = 0;
            }
        }
    }
    if !page.is_empty() {
        out.push(page);
    }
    out
}

/// The note printed under every rendering of the table.
pub fn footnote(report: &Report) -> String {
    let level = (report.settings.level * 100.0).to_string();
    let intervals = if report.settings.bootstrap > 0 {
        format!(
            "[{level}% CI]: task-level percentile bootstrap, {} resamples (seed {}), same task draw \
             for every condition of a dataset; RR: Wilson score interval on RR-Eligible.",
            report.settings.bootstrap, report.settings.seed
        )
    } else {
        format!("Bootstrap off; RR: Wilson score {level}% interval on RR-Eligible.")
    };
    // Datasets that share a rule (a folder of one harness's runs, one suite a dataset) are
    // named together, in report order.
    let mut grouped: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in &report.settings.success_rules {
        match grouped.iter_mut().find(|(rule, _)| *rule == r.rule) {
            Some((_, datasets)) => datasets.push(&r.dataset),
            None => grouped.push((&r.rule, vec![&r.dataset])),
        }
    }
    let rules: String = grouped
        .iter()
        .map(|(rule, datasets)| format!(" Success on {}: {rule}.", datasets.join(", ")))
        .collect();
    // The subset a filtered report covers, said where every rendering of the table says how
    // its numbers were made.
    let filter = report.settings.filter.as_ref().map_or(String::new(), |f| {
        format!(" Restricted to the rollouts of filter {f} (every number recomputed on them).")
    });
    format!(
        "{intervals} Marked = block maximum at the displayed precision, ties included; a mark is \
         not a significance test, and overlapping intervals do not establish a paired \
         difference.{rules}{filter}"
    )
}

/// The CLI's text table: one block per dataset × model; `*` marks block maxima.
pub fn render_text(report: &Report, decimals: usize) -> String {
    render_text_as(report, decimals, Layout::Paper)
}

/// [`render_text`] in a chosen layout.
pub fn render_text_as(report: &Report, decimals: usize, layout: Layout) -> String {
    let mut out = String::new();
    for block in layout_blocks(report, layout, None, decimals) {
        out.push_str(&format!("{}  ({})\n", block.title, block.n_text(report)));
        let with_pass = block
            .rows
            .iter()
            .any(|&i| !report.conditions[i].pass_hat.is_empty());
        let with_crashed = block.rows.iter().any(|&i| report.conditions[i].crashed > 0);
        let mut rows: Vec<Vec<String>> = vec![std::iter::once(layout.label_title().to_string())
            .chain(Column::ALL.iter().map(|c| c.title().to_string()))
            .chain(with_crashed.then(|| CRASHED_TITLE.to_string()))
            .chain(with_pass.then(|| "pass^1..k".to_string()))
            .collect()];
        for &i in &block.rows {
            let c = &report.conditions[i];
            let mut row = vec![layout.row_label(c)];
            for column in Column::ALL {
                let cell = match column.estimate(c) {
                    None => c.rr_eligible.to_string(),
                    Some(e) => {
                        let mark = if block.is_max(c, column) { "*" } else { " " };
                        format!("{}{mark}", fmt_estimate(&e, decimals, true))
                    }
                };
                row.push(cell);
            }
            if with_crashed {
                row.push(c.crashed.to_string());
            }
            if with_pass {
                row.push(fmt_pass_hat(&c.pass_hat, decimals));
            }
            rows.push(row);
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for row in &rows {
            out.push_str("  ");
            for (i, cell) in row.iter().enumerate() {
                let pad = widths[i] - cell.chars().count();
                if i == 0 {
                    out.push_str(cell);
                    out.push_str(&" ".repeat(pad));
                } else {
                    out.push_str("  ");
                    out.push_str(&" ".repeat(pad));
                    out.push_str(cell);
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str(&footnote(report));
    out.push('\n');
    let ranks = render_ranks_text(report, decimals);
    if !ranks.is_empty() {
        out.push('\n');
        out.push_str(&ranks);
    }
    out
}

/// Every condition's rank entries, by its position in `report.conditions`: one per metric of
/// [`RankMetric::ALL`], where the report ranks the condition's dataset.
pub struct RankIndex<'r> {
    by_condition: Vec<[Option<&'r RankedCondition>; 3]>,
    any: bool,
}

impl<'r> RankIndex<'r> {
    pub fn new(report: &'r Report) -> Self {
        let conditions = &report.conditions;
        let mut by_condition = vec![[None; 3]; conditions.len()];
        for table in &report.ranks {
            let Some(m) = RankMetric::ALL.iter().position(|m| m.key() == table.metric) else {
                continue;
            };
            // A dataset's conditions are a run of the report's, in the same order.
            let start = conditions.partition_point(|c| c.dataset < table.dataset);
            for (j, r) in table.conditions.iter().enumerate() {
                let is = |i: &usize| {
                    let c = &conditions[*i];
                    c.dataset == table.dataset && c.model == r.model && c.method == r.method
                };
                let at = Some(start + j)
                    .filter(|i| *i < conditions.len() && is(i))
                    .or_else(|| (0..conditions.len()).find(is));
                if let Some(i) = at {
                    by_condition[i][m] = Some(r);
                }
            }
        }
        RankIndex {
            by_condition,
            any: !report.ranks.is_empty(),
        }
    }

    /// The rank by `metric` of `report.conditions[i]`, when its dataset is ranked.
    pub fn get(&self, i: usize, metric: RankMetric) -> Option<&'r RankedCondition> {
        let m = RankMetric::ALL.iter().position(|&x| x == metric)?;
        self.by_condition.get(i)?[m]
    }

    /// Whether any condition is ranked.
    pub fn is_empty(&self) -> bool {
        !self.any
    }
}

/// A rank with its interval: `2 (1–4)`, or `2` without one (or when `intervals` is false);
/// `dash` between the ends.
pub fn fmt_rank(r: &RankedCondition, intervals: bool, dash: &str) -> String {
    match (r.rank_lo, r.rank_hi) {
        (Some(lo), Some(hi)) if intervals => format!("{} ({lo}{dash}{hi})", r.rank),
        _ => r.rank.to_string(),
    }
}

/// The significant flips the text names per rank divergence, at most.
const MAX_FLIPS_LISTED: usize = 25;

/// The mark of a condition in the top group that is not ranked first itself.
pub const TIED_WITH_FIRST: &str = "=#1";

/// `model / method`.
fn pair_label(p: &[String; 2]) -> String {
    format!("{} / {}", p[0], p[1])
}

/// The CLI's Ranks sections: per ranked dataset, its conditions by final-success rank with each
/// ranking metric's rank, interval and value, the critical values, and each rank divergence
/// (τ_b with its interval, the discordant pairs, the significant ones named); then a legend.
/// Empty when the report ranks no dataset.
pub fn render_ranks_text(report: &Report, decimals: usize) -> String {
    let mut out = String::new();
    let mut datasets: Vec<&str> = report.ranks.iter().map(|t| t.dataset.as_str()).collect();
    datasets.dedup();
    let level = (report.settings.level * 100.0).to_string();
    let mut any_intervals = false;
    for dataset in datasets {
        let tables: Vec<&RankTable> = RankMetric::ALL
            .iter()
            .filter_map(|m| {
                report
                    .ranks
                    .iter()
                    .find(|t| t.dataset == dataset && t.metric == m.key())
            })
            .collect();
        let Some(first) = tables.first() else {
            continue;
        };
        let intervals = tables
            .iter()
            .any(|t| t.conditions.iter().any(|c| c.rank_lo.is_some()));
        any_intervals |= intervals;
        let k = first.conditions.len();
        out.push_str(&format!(
            "Ranks: {dataset}  ({k} conditions; {})\n",
            if intervals {
                format!(
                    "simultaneous {level}% rank intervals, {} pairs",
                    k * (k - 1) / 2
                )
            } else {
                "no intervals without the bootstrap".to_string()
            }
        ));
        let mut rows: Vec<Vec<String>> = vec![std::iter::once("Model / method".to_string())
            .chain(tables.iter().map(|t| {
                RankMetric::from_key(&t.metric).map_or(t.metric.clone(), |m| m.title().into())
            }))
            .collect()];
        // Rows by the first metric's (final success's) rank, ties in report order.
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by_key(|&i| first.conditions[i].rank);
        for &i in &order {
            let c = &first.conditions[i];
            let mut row = vec![format!("{} / {}", c.model, c.method)];
            for t in &tables {
                let r = &t.conditions[i];
                let mark = if r.top() && r.rank > 1 {
                    TIED_WITH_FIRST
                } else {
                    ""
                };
                let value = r.value.map_or("–".to_string(), |v| fmt_num(v, decimals));
                row.push(format!("{value}  {} {mark}", fmt_rank(r, true, "–")));
            }
            rows.push(row);
        }
        if intervals {
            rows.push(
                std::iter::once("critical value".to_string())
                    .chain(
                        tables
                            .iter()
                            .map(|t| t.critical_value.map_or("–".to_string(), |c| fmt_num(c, 2))),
                    )
                    .collect(),
            );
        }
        push_columns(&mut out, &rows, true);
        for d in report
            .rank_divergence
            .iter()
            .filter(|d| d.dataset == dataset)
        {
            out.push_str(&format!("  {}\n", divergence_line(d, decimals)));
            // The significant flips by the success rank of the one ahead on success, then the
            // prefix rank of the other.
            let rank_by = |metric: &str, p: &[String; 2]| {
                tables
                    .iter()
                    .find(|t| t.metric == metric)
                    .and_then(|t| {
                        t.conditions
                            .iter()
                            .find(|c| c.model == p[0] && c.method == p[1])
                    })
                    .map_or(usize::MAX, |c| c.rank)
            };
            let mut flips: Vec<(usize, usize, &[String; 2], &[String; 2])> = d
                .discordant
                .iter()
                .filter(|p| p.significant)
                .filter_map(|p| {
                    let other = p.ahead_on_prefix()?;
                    let a = &p.ahead_on_success;
                    Some((rank_by(&d.a, a), rank_by(&d.b, other), a, other))
                })
                .collect();
            flips.sort_by_key(|&(ra, rb, _, _)| (ra, rb));
            for &(_, _, a, other) in flips.iter().take(MAX_FLIPS_LISTED) {
                out.push_str(&format!(
                    "    {} ahead on {}, {} ahead on {}\n",
                    pair_label(a),
                    metric_title(&d.a).to_lowercase(),
                    pair_label(other),
                    metric_title(&d.b)
                ));
            }
            if flips.len() > MAX_FLIPS_LISTED {
                out.push_str(&format!(
                    "    … and {} more (the report JSON's rank_divergence lists them all)\n",
                    flips.len() - MAX_FLIPS_LISTED
                ));
            }
        }
        out.push('\n');
    }
    if out.is_empty() {
        return out;
    }
    out.push_str(&if any_intervals {
        format!(
            "Rank (lo–hi): simultaneous {level}% intervals from the table's resamples (single-step \
             max-t over every pair of a dataset's conditions): all of a dataset's intervals hold at \
             once with probability ≈ {level}%. {TIED_WITH_FIRST}: tied with #1 (no condition \
             certainly ranks above it). τ_b: Kendall's rank correlation of the conditions' final \
             success and prefix metric, with its {level}% percentile interval. A discordant pair \
             (a flip) is ordered one way by final success and the other way by the prefix metric; \
             it is significant when each condition certainly ranks above the other on the metric \
             it leads.\n"
        )
    } else {
        "Ranks by point estimate (ties share the best rank); rank intervals and significance \
         need the bootstrap.\n"
            .to_string()
    });
    out
}

fn metric_title(key: &str) -> &str {
    match RankMetric::from_key(key) {
        Some(m) => m.title(),
        None => key,
    }
}

/// `Final success vs TER: τ_b 0.33 [−0.33, 1.00]; 3 discordant pairs, 1 significant:`.
fn divergence_line(d: &RankDivergence, decimals: usize) -> String {
    let tau = &d.kendall_tau_b;
    let tau_text = match tau.value {
        None => "τ_b undefined (a metric is constant over the conditions)".to_string(),
        Some(_) => format!("τ_b {}", fmt_estimate(tau, decimals, true)),
    };
    let significant = d.discordant.iter().filter(|p| p.significant).count();
    let pairs = match d.discordant.len() {
        0 => "no discordant pair".to_string(),
        n => format!(
            "{n} discordant pair{}, {}",
            if n == 1 { "" } else { "s" },
            match significant {
                0 => "none significant".to_string(),
                s => format!("{s} significant:"),
            }
        ),
    };
    format!(
        "{} vs {}: {tau_text}; {pairs}",
        metric_title(&d.a),
        metric_title(&d.b)
    )
}

/// Writes `rows` as aligned columns, each line indented by two spaces: the first column
/// left-aligned, the others right-aligned (or left-aligned when `left` is true).
fn push_columns(out: &mut String, rows: &[Vec<String>], left: bool) {
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::from("  ");
        for (i, cell) in row.iter().enumerate() {
            let pad = " ".repeat(widths[i] - cell.chars().count());
            if i == 0 || left {
                if i > 0 {
                    line.push_str("   ");
                }
                line.push_str(cell);
                line.push_str(&pad);
            } else {
                line.push_str("  ");
                line.push_str(&pad);
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// The main table as CSV in the paper's layout, report order, maxima at 2 places.
pub fn render_csv(report: &Report) -> String {
    render_csv_as(report, Layout::Paper, None, 2)
}

/// The main table as CSV, laid out as the table shown: one line per row, blocks in order and
/// rows in the chosen sort order; `block` is the block's title (dataset × model in the paper's
/// layout, dataset in the leaderboard's); each score has its value and interval ends at full
/// precision and a `_max` flag (1 = marked as the block maximum at `decimals` places, ties
/// included, as the table marks it). Last, for each ranking metric (TER, AUC-PEC, final
/// success) the condition's rank within its dataset and its simultaneous interval
/// (`ter_rank`, `ter_rank_lo`, `ter_rank_hi`, …; empty where the dataset is not ranked, and the
/// interval ends without the bootstrap).
pub fn render_csv_as(report: &Report, layout: Layout, sort: Sort, decimals: usize) -> String {
    let mut out = String::from("block,dataset,model,method,n,crashed");
    for column in Column::ALL {
        let key = column.key();
        match column {
            Column::RrEligible => out.push_str(&format!(",{key}")),
            _ => out.push_str(&format!(",{key},{key}_lo,{key}_hi,{key}_max")),
        }
    }
    for metric in CSV_RANKS {
        let key = metric.key();
        out.push_str(&format!(",{key}_rank,{key}_rank_lo,{key}_rank_hi"));
    }
    // A filtered report's rows say which subset they score, in a last column (a comment line
    // would trip CSV readers); an unfiltered report's CSV is unchanged.
    let filter = report.settings.filter.as_deref().map(csv_field);
    if filter.is_some() {
        out.push_str(",filter");
    }
    out.push('\n');
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let int = |v: Option<usize>| v.map_or(String::new(), |v| v.to_string());
    let ranks = RankIndex::new(report);
    for block in layout_blocks(report, layout, sort, decimals) {
        for &i in &block.rows {
            let c = &report.conditions[i];
            let mut fields = vec![
                csv_field(&block.title),
                csv_field(&c.dataset),
                csv_field(&c.model),
                csv_field(&c.method),
            ];
            fields.push(c.n.to_string());
            fields.push(c.crashed.to_string());
            for column in Column::ALL {
                match column.estimate(c) {
                    None => fields.push(c.rr_eligible.to_string()),
                    Some(e) => {
                        fields.push(num(e.value));
                        fields.push(num(e.ci.map(|ci| ci[0])));
                        fields.push(num(e.ci.map(|ci| ci[1])));
                        fields.push(u8::from(block.is_max(c, column)).to_string());
                    }
                }
            }
            for metric in CSV_RANKS {
                let r = ranks.get(i, metric);
                fields.push(int(r.map(|r| r.rank)));
                fields.push(int(r.and_then(|r| r.rank_lo)));
                fields.push(int(r.and_then(|r| r.rank_hi)));
            }
            fields.extend(filter.clone());
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

/// The failure clusters (`report.failure_clusters`, [`crate::clusters`]) as CSV, one line per
/// (cluster, condition with rollouts in it), in the report's order: `dataset`, `label`, `tool`
/// (empty when none), `pattern`, `total` (the cluster's rollouts), `model`, `method`, `n` (the
/// condition's rollouts in the cluster) and `share` (`n` over the condition's failures, its
/// RR-Eligible), then `filter` when the report is filtered.
pub fn render_clusters_csv(report: &Report) -> String {
    let mut out = String::from("dataset,label,tool,pattern,total,model,method,n,share");
    let filter = report.settings.filter.as_deref().map(csv_field);
    if filter.is_some() {
        out.push_str(",filter");
    }
    out.push('\n');
    let failures: std::collections::HashMap<(&str, &str, &str), u64> = report
        .conditions
        .iter()
        .map(|c| {
            (
                (c.dataset.as_str(), c.model.as_str(), c.method.as_str()),
                c.rr_eligible,
            )
        })
        .collect();
    for k in &report.failure_clusters {
        for c in &k.conditions {
            let of = failures
                .get(&(k.dataset.as_str(), c.model.as_str(), c.method.as_str()))
                .copied()
                .unwrap_or(0);
            let share = if of > 0 {
                (c.n as f64 / of as f64).to_string()
            } else {
                String::new()
            };
            let mut fields = vec![
                csv_field(&k.dataset),
                csv_field(&k.label),
                csv_field(k.tool.as_deref().unwrap_or("")),
                csv_field(&k.pattern),
                k.total.to_string(),
                csv_field(&c.model),
                csv_field(&c.method),
                c.n.to_string(),
                share,
            ];
            fields.extend(filter.clone());
            out.push_str(&fields.join(","));
            out.push('\n');
        }
    }
    out
}

/// The rank columns of the CSV export, in the table's column order.
const CSV_RANKS: [RankMetric; 3] = [
    RankMetric::Ter,
    RankMetric::AucPec,
    RankMetric::FinalSuccess,
];

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Escapes text for LaTeX.
pub fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '\\' => out.push_str("\\textbackslash{}"),
            _ => out.push(ch),
        }
    }
    out
}

/// The main table as a LaTeX `booktabs` table: bold block maxima, intervals in brackets.
pub fn render_latex(report: &Report, decimals: usize, intervals: bool) -> String {
    render_latex_as(report, decimals, intervals, Layout::Paper, None)
}

/// The metric of the LaTeX table's rank column for a table sorted by `sort`: the sort column
/// when it is a ranking metric (TER, AUC-PEC, final success), else final success.
pub fn latex_rank_metric(sort: Sort) -> RankMetric {
    match sort {
        Some((Column::Ter, _)) => RankMetric::Ter,
        Some((Column::AucPec, _)) => RankMetric::AucPec,
        _ => RankMetric::FinalSuccess,
    }
}

/// [`render_latex`] in a chosen layout and row order, with a rank column by
/// [`latex_rank_metric`]`(sort)`.
pub fn render_latex_as(
    report: &Report,
    decimals: usize,
    intervals: bool,
    layout: Layout,
    sort: Sort,
) -> String {
    render_latex_ranked(
        report,
        decimals,
        intervals,
        layout,
        sort,
        latex_rank_metric(sort),
    )
}

/// [`render_latex_as`] with the rank column's metric given: when the report ranks any
/// dataset, a last column holds each condition's rank by `rank` within its dataset, with its
/// simultaneous interval in parentheses when `intervals` is true (`--` where the dataset is not
/// ranked).
pub fn render_latex_ranked(
    report: &Report,
    decimals: usize,
    intervals: bool,
    layout: Layout,
    sort: Sort,
    rank: RankMetric,
) -> String {
    let mut out = String::new();
    let ranks = RankIndex::new(report);
    let with_rank = !ranks.is_empty();
    // The paper's columns, how many rollouts crashed when any did, and the rank.
    let with_crashed = report.conditions.iter().any(|c| c.crashed > 0);
    let columns = Column::ALL.len() + usize::from(with_crashed) + usize::from(with_rank);
    out.push_str("% Generated by prefix-exec. Requires \\usepackage{booktabs}.\n");
    if let Some(filter) = &report.settings.filter {
        // One comment line: a filter's text never holds a line break that matters here.
        out.push_str(&format!(
            "% Restricted to the rollouts of filter {}.\n",
            filter.replace(['\n', '\r'], " ")
        ));
    }
    out.push_str("\\begin{tabular}{l");
    out.push_str(&"r".repeat(columns));
    out.push_str("}\n\\toprule\n");
    out.push_str(layout.label_title());
    for column in Column::ALL {
        out.push_str(" & ");
        out.push_str(column.title());
    }
    if with_crashed {
        out.push_str(" & ");
        out.push_str(CRASHED_TITLE);
    }
    if with_rank {
        out.push_str(&format!(" & Rank ({})", latex_escape(rank.title())));
    }
    out.push_str(" \\\\\n");
    for block in layout_blocks(report, layout, sort, decimals) {
        out.push_str("\\midrule\n");
        out.push_str(&format!(
            "\\multicolumn{{{}}}{{l}}{{\\textit{{{}}}}} \\\\\n",
            columns + 1,
            latex_escape(&block.title)
        ));
        for &i in &block.rows {
            let c = &report.conditions[i];
            out.push_str(&latex_escape(&layout.row_label(c)));
            for column in Column::ALL {
                out.push_str(" & ");
                match column.estimate(c) {
                    None => out.push_str(&c.rr_eligible.to_string()),
                    Some(e) => {
                        let value = e.value.map_or("--".to_string(), |v| fmt_num(v, decimals));
                        if block.is_max(c, column) {
                            out.push_str(&format!("\\textbf{{{value}}}"));
                        } else {
                            out.push_str(&value);
                        }
                        if let (true, Some([lo, hi])) = (intervals, e.ci) {
                            out.push_str(&format!(
                                " [{}, {}]",
                                fmt_num(lo, decimals),
                                fmt_num(hi, decimals)
                            ));
                        }
                    }
                }
            }
            if with_crashed {
                out.push_str(&format!(" & {}", c.crashed));
            }
            if with_rank {
                let cell = ranks
                    .get(i, rank)
                    .map_or("--".to_string(), |r| fmt_rank(r, intervals, "--"));
                out.push_str(&format!(" & {cell}"));
            }
            out.push_str(" \\\\\n");
        }
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n");
    out.push_str(&format!("% {}\n", footnote(report)));
    if with_rank {
        out.push_str(&format!("% {}\n", latex_rank_note(report, rank, intervals)));
    }
    out
}

/// The LaTeX table's note on its rank column.
fn latex_rank_note(report: &Report, rank: RankMetric, intervals: bool) -> String {
    let level = (report.settings.level * 100.0).to_string();
    let interval = if intervals && report.ranks.iter().any(|t| t.critical_value.is_some()) {
        format!(
            " (lo--hi): its simultaneous {level}% rank interval (single-step max-t over every pair \
             of the dataset's conditions, on the table's resamples)"
        )
    } else {
        String::new()
    };
    format!(
        "Rank ({}): the condition's rank within its dataset, ties sharing the best rank{interval}.",
        rank.title()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaderboard() -> Report {
        let line = |t: &str, m: &str, me: &str, ok: bool, step: bool| {
            format!(
                r#"{{"dataset":"d","task_id":"{t}","model":"{m}","method":"{me}","success":{ok},"steps":[{{"ok":{step}}}]}}"#
            ) + "\n"
        };
        let text = [
            line("1", "m1", "p", true, true),
            line("2", "m1", "p", false, false),
            line("1", "m2", "q", true, true),
            line("2", "m2", "q", true, false),
            line("1", "m3", "r", false, true),
            line("2", "m3", "r", false, false),
        ]
        .concat();
        let corpus = crate::ingest::read_files([("r.jsonl", text.as_bytes())]);
        crate::report::build_report(
            &corpus,
            &crate::report::Settings {
                bootstrap: 0,
                ..Default::default()
            },
        )
    }

    #[test]
    fn leaderboard_layout_one_block_per_dataset_bold_over_the_dataset() {
        let r = leaderboard();
        assert_eq!(Layout::default_for(&r), Layout::Leaderboard);
        let text = render_text_as(&r, 2, Layout::Leaderboard);
        // One block; TER 0.50 for all three (ties: all marked); success max m2 only.
        assert_eq!(text.matches("N = 2 per row").count(), 1, "{text}");
        assert!(
            text.starts_with("d  (N = 2 per row)\n  Model / method"),
            "{text}"
        );
        let row = |name: &str| text.lines().find(|l| l.contains(name)).unwrap().to_string();
        assert!(row("m1 / p").contains("0.50*"), "{text}");
        assert!(row("m2 / q").ends_with("1.00*"), "{text}");
        assert!(!row("m3 / r").ends_with('*'), "{text}");
        let tex = render_latex_as(&r, 2, false, Layout::Leaderboard, None);
        // Six score columns and the rank by final success (no interval without the bootstrap).
        assert!(tex.contains("\\multicolumn{8}{l}{\\textit{d}}"), "{tex}");
        assert!(tex.contains("m2 / q & \\textbf{0.50}"), "{tex}");
        assert!(tex.contains("& Rank (Final success) \\\\\n"), "{tex}");
        assert!(tex.contains("& \\textbf{1.00} & 1 \\\\\n"), "{tex}");
        assert!(tex.contains("& 0.00 & 3 \\\\\n"), "{tex}");
        // Sorted by TER, the rank column is TER's: a three-way tie, all first.
        let by_ter = render_latex_as(&r, 2, true, Layout::Leaderboard, Some((Column::Ter, true)));
        assert!(by_ter.contains("& Rank (TER) \\\\\n"), "{by_ter}");
        assert_eq!(by_ter.matches(" & 1 \\\\\n").count(), 3, "{by_ter}");
        // The text's Ranks section: by final-success rank, point ranks only.
        let ranks = text.split_once("Ranks: d").unwrap().1;
        assert!(
            ranks.starts_with("  (3 conditions; no intervals without the bootstrap)"),
            "{text}"
        );
        let m2 = ranks.find("m2 / q").unwrap();
        assert!(m2 < ranks.find("m1 / p").unwrap() && m2 < ranks.find("m3 / r").unwrap());
        assert!(
            ranks.contains("Final success vs TER: τ_b undefined"),
            "{text}"
        );
        // The paper layout: three blocks of one row, every cell its own maximum.
        let paper = render_text_as(&r, 2, Layout::Paper);
        assert_eq!(paper.matches("N = 2 per row").count(), 3);
        assert_eq!(paper, render_text(&r, 2));
        assert_eq!(Layout::from_name("paper"), Some(Layout::Paper));
    }

    #[test]
    fn pages_keep_small_blocks_whole_and_cut_long_ones() {
        let seg = |block, rows: std::ops::Range<usize>| Segment { block, rows };
        // Paper-like: blocks of 4 rows, pages of 10 → two whole blocks a page.
        assert_eq!(
            pages(&[4, 4, 4], 10),
            vec![vec![seg(0, 0..4), seg(1, 0..4)], vec![seg(2, 0..4)]]
        );
        // A leaderboard block of 25 rows: pages of 10, 10, 5; the next block joins the last page.
        assert_eq!(
            pages(&[25, 3], 10),
            vec![
                vec![seg(0, 0..10)],
                vec![seg(0, 10..20)],
                vec![seg(0, 20..25), seg(1, 0..3)]
            ]
        );
        // A long block after a partial page starts a page of its own; empty blocks are skipped.
        assert_eq!(
            pages(&[3, 0, 12], 10),
            vec![
                vec![seg(0, 0..3)],
                vec![seg(2, 0..10)],
                vec![seg(2, 10..12)]
            ]
        );
        assert_eq!(pages(&[10, 10], 10).len(), 2);
        assert!(pages(&[], 10).is_empty());
        // 20,000 rows in one block: 200 pages of 100, every row once, in order.
        let p = pages(&[20_000], 100);
        assert_eq!(p.len(), 200);
        assert!(p
            .iter()
            .enumerate()
            .all(|(i, page)| page == &vec![seg(0, i * 100..(i + 1) * 100)]));
    }

    #[test]
    fn blocks_sort_whole_dataset_and_mark_maxima_over_it() {
        let r = leaderboard();
        let by_success = Some((Column::FinalSuccess, true));
        let blocks = layout_blocks(&r, Layout::Leaderboard, by_success, 2);
        assert_eq!(blocks.len(), 1);
        let b = &blocks[0];
        let models: Vec<&str> = b
            .rows
            .iter()
            .map(|&i| r.conditions[i].model.as_str())
            .collect();
        // Success m1 0.5, m2 1.0, m3 0.0: descending.
        assert_eq!(models, ["m2", "m1", "m3"]);
        let marked = |column| {
            b.rows
                .iter()
                .filter(|&&i| b.is_max(&r.conditions[i], column))
                .map(|&i| r.conditions[i].model.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(marked(Column::FinalSuccess), ["m2"]);
        // TER 0.50 everywhere: a three-way tie, all marked.
        assert_eq!(marked(Column::Ter), ["m2", "m1", "m3"]);
        assert_eq!(marked(Column::RrEligible), Vec::<&str>::new());
        // Ascending, and the paper's layout: three blocks of one row, each its own maximum.
        let asc = layout_blocks(
            &r,
            Layout::Leaderboard,
            Some((Column::FinalSuccess, false)),
            2,
        );
        assert_eq!(asc[0].rows, [2, 0, 1]);
        let paper = layout_blocks(&r, Layout::Paper, by_success, 2);
        assert_eq!(paper.len(), 3);
        assert_eq!(paper[2].title, "d / m3");
        assert!(paper[2].is_max(&r.conditions[2], Column::FinalSuccess));
    }

    #[test]
    fn csv_follows_the_layout_and_sort() {
        let r = leaderboard();
        let board = render_csv_as(
            &r,
            Layout::Leaderboard,
            Some((Column::FinalSuccess, true)),
            2,
        );
        let lines: Vec<&str> = board.lines().collect();
        assert_eq!(
            lines[0],
            "block,dataset,model,method,n,crashed,ter,ter_lo,ter_hi,ter_max,mean_fed,mean_fed_lo,\
             mean_fed_hi,mean_fed_max,auc_pec,auc_pec_lo,auc_pec_hi,auc_pec_max,rr_eligible,rr,\
             rr_lo,rr_hi,rr_max,final_success,final_success_lo,final_success_hi,final_success_max,\
             ter_rank,ter_rank_lo,ter_rank_hi,auc_pec_rank,auc_pec_rank_lo,auc_pec_rank_hi,\
             final_success_rank,final_success_rank_lo,final_success_rank_hi"
        );
        assert_eq!(lines.len(), 4);
        // The table's fields, and the ranks (TER and AUC-PEC 0.5 for all: all first; no
        // intervals without the bootstrap).
        let (board_fields, board_ranks): (Vec<&str>, Vec<&str>) = lines[1..]
            .iter()
            .map(|l| l.rsplit_once(",1,,,1,,,").unwrap())
            .unzip();
        assert_eq!(board_ranks, ["1,,", "2,,", "3,,"]);
        // Leaderboard: block = dataset, rows by success descending, maxima over the dataset.
        assert!(
            board_fields[0].starts_with("d,d,m2,q,2,0,0.5,,,1,"),
            "{board_fields:?}"
        );
        assert!(board_fields[0].ends_with(",1,,,1"), "{board_fields:?}");
        assert!(board_fields[1].starts_with("d,d,m1,p,2,"));
        assert!(board_fields[1].ends_with(",0.5,,,0"), "{board_fields:?}");
        assert!(board_fields[2].ends_with(",0,,,0"), "{board_fields:?}");
        // Paper: block = dataset / model, report order, every row its block's maximum; the ranks
        // are the dataset's whatever the layout.
        let paper = render_csv_as(&r, Layout::Paper, None, 2);
        let plines: Vec<&str> = paper.lines().collect();
        assert!(
            plines[1].starts_with("d / m1,d,m1,p,2,0,0.5,,,1,"),
            "{paper}"
        );
        assert!(plines[1].ends_with(",1,,,1,,,2,,"), "{paper}");
        assert!(plines[3].starts_with("d / m3,d,m3,r,2,"), "{paper}");
        assert!(plines[3].ends_with(",0,,,1,1,,,1,,,3,,"), "{paper}");
        assert_eq!(render_csv(&r), paper);
        // Same numbers, only block, order and marks differ.
        let strip = |l: &str| l.split_once(',').unwrap().1.to_string();
        let mut a: Vec<String> = lines[1..]
            .iter()
            .map(|l| strip(l).split(',').take(4).collect::<Vec<_>>().join(","))
            .collect();
        let mut b: Vec<String> = plines[1..]
            .iter()
            .map(|l| strip(l).split(',').take(4).collect::<Vec<_>>().join(","))
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        // LaTeX follows the sort too.
        let tex = render_latex_as(
            &r,
            2,
            false,
            Layout::Leaderboard,
            Some((Column::FinalSuccess, true)),
        );
        let m2 = tex.find("m2 / q").unwrap();
        let m1 = tex.find("m1 / p").unwrap();
        assert!(m2 < m1, "{tex}");
    }

    #[test]
    fn latex_escapes_specials() {
        assert_eq!(latex_escape("a_b & 50% #1"), "a\\_b \\& 50\\% \\#1");
        assert_eq!(
            latex_escape("~^\\"),
            "\\textasciitilde{}\\textasciicircum{}\\textbackslash{}"
        );
    }

    #[test]
    fn csv_quotes_when_needed() {
        assert_eq!(csv_field("Plan-Cond. ReAct"), "Plan-Cond. ReAct");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }
}
