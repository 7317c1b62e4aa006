//! The main table (the paper's Table 2) as text, CSV and LaTeX.
//!
//! In the paper's layout one block per dataset × model, methods as rows; in the leaderboard
//! layout ([`Layout`]) one block per dataset, one row per condition. Columns TER, Mean FED, AUC-PEC, RR-Eligible,
//! RR, Final success, each score with its interval. The block maximum of each score column is
//! marked (bold in LaTeX, `*` in text), ties at the displayed precision included. The mark never
//! means statistical significance. RR-Eligible is a count, not a score, and is not marked.

use super::{ConditionReport, Estimate, Report};

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

    /// The table's blocks in this layout, in report order.
    pub fn blocks(self, report: &Report) -> Vec<Vec<&ConditionReport>> {
        match self {
            Layout::Paper => blocks(report),
            Layout::Leaderboard => dataset_blocks(report),
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

/// Conditions grouped into one block per dataset, in report order.
pub fn dataset_blocks(report: &Report) -> Vec<Vec<&ConditionReport>> {
    let mut out: Vec<Vec<&ConditionReport>> = Vec::new();
    for c in &report.conditions {
        match out.last_mut() {
            Some(block) if block[0].dataset == c.dataset => block.push(c),
            _ => out.push(vec![c]),
        }
    }
    out
}

/// Conditions grouped into (dataset, model) blocks, in report order.
pub fn blocks(report: &Report) -> Vec<Vec<&ConditionReport>> {
    let mut out: Vec<Vec<&ConditionReport>> = Vec::new();
    for c in &report.conditions {
        match out.last_mut() {
            Some(block) if block[0].dataset == c.dataset && block[0].model == c.model => {
                block.push(c)
            }
            _ => out.push(vec![c]),
        }
    }
    out
}

/// Whether `c`'s value in `column` is the block maximum at `decimals` places (ties included).
pub fn is_block_max(
    block: &[&ConditionReport],
    c: &ConditionReport,
    column: Column,
    decimals: usize,
) -> bool {
    let shown = |x: &ConditionReport| {
        column
            .estimate(x)
            .and_then(|e| e.value)
            .map(|v| fmt_num(v, decimals).parse::<f64>().unwrap_or(f64::NAN))
    };
    let Some(mine) = shown(c) else {
        return false;
    };
    block
        .iter()
        .filter_map(|x| shown(x))
        .all(|other| other <= mine)
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
    let rules: String = report
        .settings
        .success_rules
        .iter()
        .map(|r| format!(" Success on {}: {}.", r.dataset, r.rule))
        .collect();
    format!(
        "{intervals} Marked = block maximum at the displayed precision, ties included; a mark is \
         not a significance test, and overlapping intervals do not establish a paired \
         difference.{rules}"
    )
}

/// The CLI's text table: one block per dataset × model; `*` marks block maxima.
pub fn render_text(report: &Report, decimals: usize) -> String {
    render_text_as(report, decimals, Layout::Paper)
}

/// [`render_text`] in a chosen layout.
pub fn render_text_as(report: &Report, decimals: usize, layout: Layout) -> String {
    let mut out = String::new();
    for block in layout.blocks(report) {
        let first = block[0];
        let ns: Vec<u64> = block.iter().map(|c| c.n).collect();
        let n_text = if ns.iter().all(|&n| n == ns[0]) {
            format!("N = {} per row", ns[0])
        } else {
            "N varies by row".to_string()
        };
        out.push_str(&format!("{}  ({n_text})\n", layout.title(first)));
        let with_pass = block.iter().any(|c| !c.pass_hat.is_empty());
        let mut rows: Vec<Vec<String>> = vec![std::iter::once(layout.label_title().to_string())
            .chain(Column::ALL.iter().map(|c| c.title().to_string()))
            .chain(with_pass.then(|| "pass^1..k".to_string()))
            .collect()];
        for c in &block {
            let mut row = vec![layout.row_label(c)];
            for column in Column::ALL {
                let cell = match column.estimate(c) {
                    None => c.rr_eligible.to_string(),
                    Some(e) => {
                        let mark = if is_block_max(&block, c, column, decimals) {
                            "*"
                        } else {
                            " "
                        };
                        format!("{}{mark}", fmt_estimate(&e, decimals, true))
                    }
                };
                row.push(cell);
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
    out
}

/// The main table as CSV: one row per condition, value and interval ends in separate columns.
pub fn render_csv(report: &Report) -> String {
    let mut out = String::from(
        "dataset,model,method,n,ter,ter_lo,ter_hi,mean_fed,mean_fed_lo,mean_fed_hi,auc_pec,\
         auc_pec_lo,auc_pec_hi,rr_eligible,rr,rr_lo,rr_hi,final_success,final_success_lo,\
         final_success_hi\n",
    );
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for c in &report.conditions {
        let mut fields = vec![
            csv_field(&c.dataset),
            csv_field(&c.model),
            csv_field(&c.method),
        ];
        fields.push(c.n.to_string());
        for column in Column::ALL {
            match column.estimate(c) {
                None => fields.push(c.rr_eligible.to_string()),
                Some(e) => {
                    fields.push(num(e.value));
                    fields.push(num(e.ci.map(|ci| ci[0])));
                    fields.push(num(e.ci.map(|ci| ci[1])));
                }
            }
        }
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

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
    render_latex_as(report, decimals, intervals, Layout::Paper)
}

/// [`render_latex`] in a chosen layout.
pub fn render_latex_as(
    report: &Report,
    decimals: usize,
    intervals: bool,
    layout: Layout,
) -> String {
    let mut out = String::new();
    out.push_str("% Generated by prefix-exec. Requires \\usepackage{booktabs}.\n");
    out.push_str("\\begin{tabular}{l");
    out.push_str(&"r".repeat(Column::ALL.len()));
    out.push_str("}\n\\toprule\n");
    out.push_str(layout.label_title());
    for column in Column::ALL {
        out.push_str(" & ");
        out.push_str(column.title());
    }
    out.push_str(" \\\\\n");
    for block in layout.blocks(report) {
        out.push_str("\\midrule\n");
        out.push_str(&format!(
            "\\multicolumn{{{}}}{{l}}{{\\textit{{{}}}}} \\\\\n",
            Column::ALL.len() + 1,
            latex_escape(&layout.title(block[0]))
        ));
        for c in &block {
            out.push_str(&latex_escape(&layout.row_label(c)));
            for column in Column::ALL {
                out.push_str(" & ");
                match column.estimate(c) {
                    None => out.push_str(&c.rr_eligible.to_string()),
                    Some(e) => {
                        let value = e.value.map_or("--".to_string(), |v| fmt_num(v, decimals));
                        if is_block_max(&block, c, column, decimals) {
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
            out.push_str(" \\\\\n");
        }
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n");
    out.push_str(&format!("% {}\n", footnote(report)));
    out
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
        let tex = render_latex_as(&r, 2, false, Layout::Leaderboard);
        assert!(tex.contains("\\multicolumn{7}{l}{\\textit{d}}"), "{tex}");
        assert!(tex.contains("m2 / q & \\textbf{0.50}"), "{tex}");
        // The paper layout: three blocks of one row, every cell its own maximum.
        let paper = render_text_as(&r, 2, Layout::Paper);
        assert_eq!(paper.matches("N = 2 per row").count(), 3);
        assert_eq!(paper, render_text(&r, 2));
        assert_eq!(Layout::from_name("paper"), Some(Layout::Paper));
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
