//! The survival plot told apart beyond its palette: each series' colour, dash and marker, the
//! highlighted series drawn over the others, the same SVG for the same input.

use plotters::prelude::*;

use prefix_exec::ingest::read_files;
use prefix_exec::plot::{draw_pec, series_style, Curve, Dash, PecPlot, Series, PALETTE};
use prefix_exec::report::{build_report, Report, Settings};

/// 13 conditions of one dataset, each failing at a depth of its own.
fn report() -> Report {
    let mut text = String::new();
    for m in 0..13 {
        for task in 0..6 {
            let at = (task + m) % 7;
            let steps: Vec<String> = (0..5)
                .map(|d| format!(r#"{{"tool":"f","ok":{}}}"#, d != at))
                .collect();
            text += &format!(
                r#"{{"dataset":"d","task_id":"t{task}","model":"model-{m:02}","method":"x","success":{},"steps":[{}]}}"#,
                at > 4,
                steps.join(",")
            );
            text.push('\n');
        }
    }
    let settings = Settings {
        bootstrap: 50,
        ..Settings::default()
    };
    build_report(&read_files([("runs.jsonl", text.as_bytes())]), &settings)
}

fn svg(report: &Report, highlight: Option<usize>) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (760, 380)).into_drawing_area();
        let plot = PecPlot {
            title: "d".to_string(),
            series: report
                .conditions
                .iter()
                .enumerate()
                .map(|(i, c)| Series {
                    label: c.model.clone(),
                    color: i,
                    condition: c,
                })
                .collect(),
            curve: Curve::Pec,
            band: true,
            k_from: 1,
            k_to: 6,
            dark: false,
            highlight,
        };
        draw_pec(&root, &plot).expect("drawn");
        root.present().expect("presented");
    }
    out
}

#[test]
fn series_differ_beyond_the_palette() {
    let n = PALETTE.len() * 4;
    let styles: Vec<_> = (0..n).map(series_style).collect();
    for i in 0..n {
        for j in 0..i {
            assert_ne!(styles[i], styles[j], "series {j} and {i}");
            // Two series of the same colour differ in their line, not only in their marker.
            if styles[i].color == styles[j].color {
                assert_ne!(styles[i].dash, styles[j].dash, "series {j} and {i}");
            }
        }
    }
    assert_eq!(styles[0].dash, Dash::Solid);
    assert_eq!(styles[PALETTE.len()].color, styles[0].color);
    assert_eq!(styles[PALETTE.len()].dash, Dash::Dashed);
}

#[test]
fn the_plot_is_deterministic_and_a_highlight_redraws_it() {
    let report = report();
    assert_eq!(report.conditions.len(), 13);
    let plain = svg(&report, None);
    assert_eq!(plain, svg(&report, None), "the same SVG twice");
    let lit = svg(&report, Some(7));
    assert_ne!(plain, lit);
    assert_eq!(lit, svg(&report, Some(7)));
    // The highlighted curve is drawn thicker than any other.
    assert!(lit.contains(r#"stroke-width="4""#) && !plain.contains(r#"stroke-width="4""#));
    // Past MAX_BANDS curves, only the highlighted curve has a band: fewer shaded rectangles.
    let bands = |s: &str| s.matches(r#"opacity="0.18""#).count();
    assert_eq!(
        bands(&plain),
        0,
        "no band without a highlight past MAX_BANDS curves"
    );
    assert!(bands(&lit) > 0, "the highlighted curve's band");
}

#[test]
fn dashes_run_on_across_corners() {
    use prefix_exec::plot::dashed;
    // 1 px a unit: 7 on, 4 off along a line of 30 px.
    let line = [(0.0, 0.0), (30.0, 0.0)];
    assert_eq!(
        dashed(&line, Some((7, 4)), (1.0, 1.0)),
        vec![
            vec![(0.0, 0.0), (7.0, 0.0)],
            vec![(11.0, 0.0), (18.0, 0.0)],
            vec![(22.0, 0.0), (29.0, 0.0)],
        ]
    );
    // A step of 5 px then 10 px down: the first dash turns the corner and goes on down the
    // drop, a gap, then the last 4 px.
    let step = [(0.0, 1.0), (0.5, 1.0), (0.5, 0.0)];
    let pieces = dashed(&step, Some((7, 4)), (10.0, 10.0));
    let near = |a: &[(f64, f64)], b: &[(f64, f64)]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| (p.0 - q.0).abs() < 1e-12 && (p.1 - q.1).abs() < 1e-12)
    };
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert!(
        near(&pieces[0], &[(0.0, 1.0), (0.5, 1.0), (0.5, 0.8)]),
        "{pieces:?}"
    );
    assert!(near(&pieces[1], &[(0.5, 0.4), (0.5, 0.0)]), "{pieces:?}");
    // Solid: the line as it is.
    assert_eq!(dashed(&line, None, (1.0, 1.0)), vec![line.to_vec()]);
}
