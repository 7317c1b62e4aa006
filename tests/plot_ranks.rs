//! The Ranks view's plots and the cost frontier plot, drawn from a report whose final success
//! and TER order four methods in opposite ways: the rows and lines are the report's ranks and
//! flips, the frontier points its `pareto` flags, and each plot is the same SVG twice.

use plotters::prelude::*;

use prefix_exec::ingest::read_files;
use prefix_exec::plot::frontier::{draw_frontier, frontier_points, FrontierPlot};
use prefix_exec::plot::ranks::{
    bump_lines, draw_bump, draw_rank_intervals, rank_plot_height, rank_rows, BumpPlot, Flip,
    RankIntervalPlot,
};
use prefix_exec::report::{build_report, Report, Settings};

const TER: [usize; 4] = [9, 7, 4, 1];
const SUCCESS: [usize; 4] = [2, 4, 7, 9];

/// Four methods of one dataset over 40 tasks: TER falls as final success rises; tokens rise
/// with the method.
fn report() -> Report {
    let mut text = String::new();
    for (m, (ter, success)) in TER.iter().zip(SUCCESS).enumerate() {
        for t in 0..40 {
            let ok = (t * 7 + m * 3) % 10 < *ter;
            let won = (t * 3 + m) % 10 < success;
            text += &format!(
                r#"{{"dataset":"d","task_id":"t{t:02}","model":"x","method":"m{m}","success":{won},"steps":[{{"tool":"f","ok":true}},{{"tool":"f","ok":{ok}}}],"cost":{{"tokens":{}}}}}"#,
                100 * (m + 1) + t
            );
            text.push('\n');
        }
    }
    let settings = Settings {
        bootstrap: 400,
        ..Settings::default()
    };
    build_report(&read_files([("runs.jsonl", text.as_bytes())]), &settings)
}

fn table<'r>(r: &'r Report, metric: &str) -> &'r prefix_exec::report::RankTable {
    r.ranks.iter().find(|t| t.metric == metric).unwrap()
}

fn svg(
    size: (u32, u32),
    draw: impl Fn(&DrawingArea<SVGBackend, plotters::coord::Shift>),
) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(&root);
        root.present().unwrap();
    }
    out
}

#[test]
fn the_rank_plot_shows_the_reports_ranks_in_rank_order() {
    let r = report();
    let t = table(&r, "ter");
    let rows = rank_rows(t);
    let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    assert_eq!(labels, ["x / m0", "x / m1", "x / m2", "x / m3"]);
    for row in &rows {
        let c = t
            .conditions
            .iter()
            .find(|c| format!("{} / {}", c.model, c.method) == row.label)
            .unwrap();
        assert_eq!(row.rank, c.rank);
        assert_eq!(row.interval, c.rank_lo.zip(c.rank_hi));
        assert!(row.interval.is_some(), "intervals with the bootstrap");
        assert_eq!(row.top, c.rank_lo == Some(1));
    }
    let plot = RankIntervalPlot {
        title: "d".into(),
        rows,
        dark: false,
    };
    let size = (620, rank_plot_height(4));
    let a = svg(size, |root| draw_rank_intervals(root, &plot).unwrap());
    assert_eq!(
        a,
        svg(size, |root| draw_rank_intervals(root, &plot).unwrap())
    );
    for label in labels {
        assert!(a.contains(label.as_str()), "{label} is named");
    }
    // A bar per condition.
    assert!(a.matches("<rect").count() >= 4);
}

#[test]
fn the_bump_chart_joins_success_ranks_to_ter_ranks_and_marks_the_flips() {
    let r = report();
    let (s, p) = (table(&r, "final_success"), table(&r, "ter"));
    let d = r.rank_divergence.iter().find(|d| d.b == "ter").unwrap();
    // Every pair is discordant here; the extreme ones significantly so.
    assert_eq!(d.discordant.len(), 6);
    assert!(d.discordant.iter().any(|p| p.significant));
    let lines = bump_lines(s, p, d);
    assert_eq!(lines.len(), 4);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l.label, format!("x / m{i}"));
        // m0 is last on success and first on TER, and so on.
        assert_eq!((l.left, l.right), (4 - i, i + 1));
        assert_eq!(
            (l.left_rank, l.right_rank),
            (s.conditions[i].rank, p.conditions[i].rank)
        );
        let significant = d.discordant.iter().any(|x| {
            x.significant
                && (x.ahead_on_success[1] == format!("m{i}")
                    || x.ahead_on_ter.as_ref().unwrap()[1] == format!("m{i}"))
        });
        let want = if significant {
            Flip::Significant
        } else {
            Flip::Discordant
        };
        assert_eq!(l.flip, want, "{}", l.label);
    }
    let plot = BumpPlot {
        title: "d".into(),
        left_title: "Final success".into(),
        right_title: "TER".into(),
        lines,
        dark: true,
    };
    let size = (620, rank_plot_height(4));
    let a = svg(size, |root| draw_bump(root, &plot).unwrap());
    assert_eq!(a, svg(size, |root| draw_bump(root, &plot).unwrap()));
    // The significant lines are the strongest.
    assert!(a.contains(r#"stroke-width="4""#));
    assert!(a.contains("Final success") && a.contains("TER"));
}

#[test]
fn the_frontier_plot_draws_the_reports_pareto_flags() {
    let r = report();
    let success = r
        .pareto
        .iter()
        .find(|p| p.cost == "tokens" && p.metric == "final_success")
        .unwrap();
    let ter = r
        .pareto
        .iter()
        .find(|p| p.cost == "tokens" && p.metric == "ter")
        .unwrap();
    // Dearer methods succeed more: every one is on the success frontier; the cheapest has the
    // best TER: it alone is on the TER frontier.
    let flags = |e: &prefix_exec::report::ParetoEntry| -> Vec<bool> {
        e.conditions.iter().map(|c| c.pareto).collect()
    };
    assert_eq!(flags(success), [true, true, true, true]);
    assert_eq!(flags(ter), [true, false, false, false]);
    assert_eq!(success.conditions[0].cost, 100.0 + 19.5);
    let points = frontier_points(&r, ter);
    assert_eq!(points.len(), 4);
    for (p, c) in points.iter().zip(&r.conditions) {
        assert_eq!(p.ci, c.ter.ci);
        assert_eq!(Some(p.value), c.ter.value);
    }
    let plot = FrontierPlot {
        title: "d".into(),
        x_title: "tokens".into(),
        y_title: "TER".into(),
        points,
        dark: false,
    };
    let a = svg((620, 400), |root| draw_frontier(root, &plot).unwrap());
    assert_eq!(
        a,
        svg((620, 400), |root| draw_frontier(root, &plot).unwrap())
    );
    assert_eq!(a.matches("<circle").count(), 4, "a point per condition");
}

#[test]
fn no_cost_no_frontier_and_one_condition_is_on_its_own() {
    let line = |m: &str, cost: &str| {
        format!(
            r#"{{"dataset":"d","task_id":"t","model":"x","method":"{m}","success":true,"steps":[{{"tool":"f","ok":true}}]{cost}}}"#
        )
    };
    let settings = Settings {
        bootstrap: 0,
        ..Settings::default()
    };
    let none = format!("{}\n{}\n", line("a", ""), line("b", ""));
    let r = build_report(&read_files([("a.jsonl", none.as_bytes())]), &settings);
    assert!(r.pareto.is_empty());
    assert!(!r.to_json().contains("\"pareto\""));
    // One condition with a cost, one without: the one is on the frontier, the other has no
    // point.
    let one = format!(
        "{}\n{}\n",
        line("a", r#","cost":{"usd":0.5}"#),
        line("b", "")
    );
    let r = build_report(&read_files([("a.jsonl", one.as_bytes())]), &settings);
    assert_eq!(r.pareto.len(), 2, "usd × (final success, TER)");
    for e in &r.pareto {
        assert_eq!(e.cost, "usd");
        assert_eq!(e.conditions.len(), 1);
        assert_eq!(e.conditions[0].method, "a");
        assert!(e.conditions[0].pareto);
    }
}

#[test]
fn a_wide_cost_range_is_drawn_on_a_log_axis() {
    use prefix_exec::plot::frontier::{log_cost_axis, FrontierPoint};
    let point = |cost: f64| FrontierPoint {
        label: "x".into(),
        cost,
        value: 0.5,
        ci: None,
        pareto: true,
    };
    // The tau2 airline runs by USD: 0.0006 to 0.29 a rollout.
    let usd: Vec<FrontierPoint> = [0.000632, 0.001046, 0.001102, 0.289].map(point).to_vec();
    assert!(log_cost_axis(&usd));
    // Their tokens: 44k to 81k; a zero cost; a single condition.
    assert!(!log_cost_axis(&[44_197.0, 80_671.0].map(point)));
    assert!(!log_cost_axis(&[0.0, 5.0].map(point)));
    assert!(!log_cost_axis(&[3.0].map(point)));
    let plot = FrontierPlot {
        title: "d".into(),
        x_title: "usd".into(),
        y_title: "TER".into(),
        points: usd,
        dark: false,
    };
    let a = svg((620, 400), |root| draw_frontier(root, &plot).unwrap());
    assert!(a.contains("(log scale)"));
    assert_eq!(a.matches("<circle").count(), 4);
}
