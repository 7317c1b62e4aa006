//! Figures the views derive from a report: label shares, cost changes, the outcome reading, the
//! wording of a paired interval. Kept here, not in the views, so they are tested natively.

use super::ranks::RankMetric;
use super::table::fmt_num;
use super::{ConditionReport, Delta, RankDivergence, RankTable};

/// `(a − b)/b`, the relative change of `a` against the baseline `b`; `None` when `b` is 0 or
/// either is missing.
pub fn relative_change(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some((a - b) / b),
        _ => None,
    }
}

/// A signed percentage, e.g. `+3%` or `−22.5%`.
pub fn fmt_percent_change(change: f64, decimals: usize) -> String {
    let sign = if change > 0.0 {
        "+"
    } else if change < 0.0 {
        "−"
    } else {
        ""
    };
    format!("{sign}{:.decimals$}%", (change * 100.0).abs())
}

/// First-failure labels with their share of RR-Eligible: `(name, count, share)`, non-zero only
/// (`environment` included).
pub fn label_shares(c: &ConditionReport) -> Vec<(&'static str, u64, f64)> {
    c.first_failure_labels
        .entries()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| (name, n, n as f64 / c.rr_eligible.max(1) as f64))
        .collect()
}

/// The agent's first failures split by label — the paper's five and "unlabeled" — each with
/// its share of the agent's first failures (RR-Eligible without the environment's faults, which
/// are shown apart): `(name, count, share)`, non-zero only.
pub fn agent_label_shares(c: &ConditionReport) -> Vec<(&'static str, u64, f64)> {
    let agent = c.first_failure_labels.agent_failures();
    c.first_failure_labels
        .entries()
        .into_iter()
        .filter(|(name, n)| *n > 0 && *name != "environment")
        .map(|(name, n)| (name, n, n as f64 / agent.max(1) as f64))
        .collect()
}

/// Where a condition's first-failure labels came from, summed by kind — `rule` (any label
/// rule), `given`, `schema check`, `none` — as text, largest first; `None` when the report has
/// no sources (label rules were off).
pub fn label_source_summary(c: &ConditionReport) -> Option<String> {
    let sources = c.first_failure_label_sources.as_ref()?;
    let mut kinds: Vec<(&str, u64)> = Vec::new();
    for (name, n) in sources {
        let kind = if name.starts_with("rule:") {
            "rules"
        } else {
            name.as_str()
        };
        match kinds.iter_mut().find(|k| k.0 == kind) {
            Some(k) => k.1 += n,
            None => kinds.push((kind, *n)),
        }
    }
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    Some(
        kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The outcome decomposition (eq. 12) in one plain sentence.
pub fn outcome_reading(c: &ConditionReport) -> String {
    let pct = |v: f64| format!("{:.0}%", v * 100.0);
    let success = c.final_success.value.unwrap_or(0.0);
    let ter = c.ter.value.unwrap_or(0.0);
    let mut s = format!(
        "{} of {} rollouts executed every step ({}), and {} succeeded overall ({}).",
        c.fully_executable,
        c.n,
        pct(ter),
        c.successes,
        pct(success)
    );
    match (c.success_after_failed_prefix, c.rr.value) {
        (Some(share), Some(rr)) => s.push_str(&format!(
            " {} of the successes ({}) came after an invalid step; among rollouts with an invalid \
             step, {} recovered (RR {}).",
            c.recovered,
            pct(share),
            pct(rr),
            format_args!("{rr:.2}")
        )),
        (None, Some(rr)) => s.push_str(&format!(
            " No rollout succeeded; RR is {rr:.2} on {} rollouts with an invalid step.",
            c.rr_eligible
        )),
        (_, None) => s.push_str(" No rollout had an invalid step, so RR is undefined."),
    }
    s
}

/// How to read a paired difference's interval.
pub fn delta_reading(d: &Delta) -> &'static str {
    match d.ci {
        None => "no interval",
        Some([lo, hi]) if lo <= 0.0 && hi >= 0.0 => {
            "interval contains 0: no difference established"
        }
        Some([lo, _]) if lo > 0.0 => "A higher",
        Some(_) => "B higher",
    }
}

/// Of a dataset's pairs of conditions: how many `success` and `prefix` (the two rank tables of
/// `divergence`, same conditions in the same order) put in the same order, how many in
/// opposite orders (the discordant pairs), and all pairs (a pair tied on either metric is
/// neither in the same nor in the opposite order).
pub fn pair_orders(
    success: &RankTable,
    prefix: &RankTable,
    divergence: &RankDivergence,
) -> (usize, usize, usize) {
    let k = success.conditions.len().min(prefix.conditions.len());
    let all = k * k.saturating_sub(1) / 2;
    let mut tied = 0;
    for i in 0..k {
        for j in i + 1..k {
            if success.conditions[i].rank == success.conditions[j].rank
                || prefix.conditions[i].rank == prefix.conditions[j].rank
            {
                tied += 1;
            }
        }
    }
    let discordant = divergence.discordant.len();
    (all - tied - discordant, discordant, all)
}

/// Rank divergence in one plain sentence: `By final success and by TER, 18 of 28 pairs are in
/// the same order and 7 in opposite orders (2 of them significant flips); τ_b 0.29 [0.07,
/// 0.43].`
pub fn divergence_sentence(
    success: &RankTable,
    prefix: &RankTable,
    divergence: &RankDivergence,
    decimals: usize,
) -> String {
    let title = |key: &str| {
        RankMetric::from_key(key)
            .map_or(key, |m| m.title())
            .to_string()
    };
    let (same, opposite, all) = pair_orders(success, prefix, divergence);
    let significant = divergence
        .discordant
        .iter()
        .filter(|p| p.significant)
        .count();
    let flips = match (opposite, significant) {
        (0, _) => " and none in opposite orders".to_string(),
        (n, 0) => format!(" and {n} in opposite orders (none a significant flip)"),
        (n, s) => format!(
            " and {n} in opposite orders ({s} of them significant flip{})",
            if s == 1 { "" } else { "s" }
        ),
    };
    let tau = &divergence.kendall_tau_b;
    let tau_text = match (tau.value, tau.ci) {
        (None, _) => "τ_b undefined (a metric is constant over the conditions)".to_string(),
        (Some(v), None) => format!("τ_b {}", fmt_num(v, decimals)),
        (Some(v), Some([lo, hi])) => format!(
            "τ_b {} [{}, {}]",
            fmt_num(v, decimals),
            fmt_num(lo, decimals),
            fmt_num(hi, decimals)
        ),
    };
    format!(
        "By {} and by {}, {same} of {all} pair{} {} in the same order{flips}; {tau_text}.",
        title(&divergence.a).to_lowercase(),
        title(&divergence.b),
        if all == 1 { "" } else { "s" },
        if same == 1 { "is" } else { "are" },
    )
}

/// One dataset's failure clusters as the app's table shows them: clusters × the dataset's
/// conditions (report order), each cell a count and its share of the condition's failures
/// (RR-Eligible), the rows sorted.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterTable<'a> {
    pub dataset: String,
    /// (model, method, RR-Eligible) per column.
    pub conditions: Vec<(String, String, u64)>,
    pub rows: Vec<ClusterRow<'a>>,
}

/// A row of a [`ClusterTable`].
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterRow<'a> {
    pub cluster: &'a super::FailureCluster,
    /// Per column: the count and its share of the condition's failures (`None` when the
    /// condition has none).
    pub cells: Vec<(u64, Option<f64>)>,
}

/// How a [`ClusterTable`] is sorted: by the total or by a column's count, largest first
/// unless `ascending`; ties keep the report's order (total, label, tool, pattern).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterSort {
    /// `None`: the total; else a condition (model, method).
    pub column: Option<(String, String)>,
    pub ascending: bool,
}

/// The clusters tables of `report`, one per dataset in report order, restricted to the
/// datasets `keep` accepts.
pub fn cluster_tables<'a>(
    report: &'a super::Report,
    sort: &ClusterSort,
    keep: impl Fn(&str) -> bool,
) -> Vec<ClusterTable<'a>> {
    let mut out: Vec<ClusterTable<'a>> = Vec::new();
    for k in &report.failure_clusters {
        if !keep(&k.dataset) {
            continue;
        }
        if out.last().is_none_or(|t| t.dataset != k.dataset) {
            let conditions = report
                .conditions
                .iter()
                .filter(|c| c.dataset == k.dataset)
                .map(|c| (c.model.clone(), c.method.clone(), c.rr_eligible))
                .collect();
            out.push(ClusterTable {
                dataset: k.dataset.clone(),
                conditions,
                rows: Vec::new(),
            });
        }
        let Some(table) = out.last_mut() else {
            continue;
        };
        let cells = table
            .conditions
            .iter()
            .map(|(m, me, failures)| {
                let n = k
                    .conditions
                    .iter()
                    .find(|c| c.model == *m && c.method == *me)
                    .map_or(0, |c| c.n);
                (n, (*failures > 0).then(|| n as f64 / *failures as f64))
            })
            .collect();
        table.rows.push(ClusterRow { cluster: k, cells });
    }
    for table in &mut out {
        let column = sort.column.as_ref().and_then(|(m, me)| {
            table
                .conditions
                .iter()
                .position(|(cm, cme, _)| cm == m && cme == me)
        });
        let value = |r: &ClusterRow| match column {
            Some(i) => r.cells[i].0,
            None => r.cluster.total,
        };
        // A stable sort: equal values stay in the report's order.
        table.rows.sort_by(|a, b| {
            let o = value(a).cmp(&value(b));
            if sort.ascending {
                o
            } else {
                o.reverse()
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn cluster_tables_count_share_and_sort() {
        use super::{cluster_tables, ClusterSort};
        let line = |t: &str, m: &str, err: &str| {
            format!(
                r#"{{"dataset":"d","task_id":"{t}","model":"{m}","method":"x","success":false,"steps":[{{"tool":"cd","ok":false,"error":"{err}"}}]}}"#
            ) + "\n"
        };
        let text: String = [
            line("1", "a", "no dir 1"),
            line("2", "a", "no dir 2"),
            line("3", "a", "denied"),
            line("1", "b", "denied"),
            line("2", "b", "denied"),
            line("3", "b", "no dir 9"),
            line("4", "b", "denied"),
        ]
        .concat();
        let corpus = crate::ingest::read_files([("r.jsonl", text.as_bytes())]);
        let settings = crate::report::Settings {
            bootstrap: 0,
            ..crate::report::Settings::default()
        };
        let report = crate::report::build_report(&corpus, &settings);
        let rows = |sort: &ClusterSort| -> Vec<(String, u64, Vec<u64>)> {
            let tables = cluster_tables(&report, sort, |_| true);
            assert_eq!(tables.len(), 1);
            tables[0]
                .rows
                .iter()
                .map(|r| {
                    let cells = r.cells.iter().map(|c| c.0).collect();
                    (r.cluster.pattern.clone(), r.cluster.total, cells)
                })
                .collect()
        };
        let s = |p: &str, t, c: [u64; 2]| (p.to_string(), t, c.to_vec());
        // By total: denied (4) before no dir (3).
        assert_eq!(
            rows(&ClusterSort::default()),
            [s("denied", 4, [1, 3]), s("no dir <num>", 3, [2, 1])]
        );
        // By a's count, largest first; then ascending.
        let by_a = ClusterSort {
            column: Some(("a".into(), "x".into())),
            ascending: false,
        };
        assert_eq!(
            rows(&by_a),
            [s("no dir <num>", 3, [2, 1]), s("denied", 4, [1, 3])]
        );
        let tables = cluster_tables(&report, &by_a, |_| true);
        // Shares are of the condition's failures: a failed 3 times, b 4.
        assert_eq!(tables[0].rows[0].cells[0].1, Some(2.0 / 3.0));
        assert_eq!(tables[0].rows[0].cells[1].1, Some(1.0 / 4.0));
        assert_eq!(
            tables[0].conditions[1],
            ("b".to_string(), "x".to_string(), 4)
        );
        assert!(cluster_tables(&report, &by_a, |d| d != "d").is_empty());
    }

    use super::*;
    use crate::report::{DiscordantPair, Estimate, RankedCondition};

    fn table(metric: &str, ranks: &[usize]) -> RankTable {
        RankTable {
            dataset: "d".into(),
            metric: metric.into(),
            level: 0.95,
            critical_value: None,
            conditions: ranks
                .iter()
                .enumerate()
                .map(|(i, &rank)| RankedCondition {
                    model: format!("m{i}"),
                    method: "x".into(),
                    value: None,
                    rank,
                    rank_lo: None,
                    rank_hi: None,
                })
                .collect(),
            above: Vec::new(),
        }
    }

    #[test]
    fn divergence_sentences() {
        // Four conditions; success 1 2 3 3 (a tie), TER 2 1 3 4: pair (0, 1) is discordant,
        // (2, 3) tied on success, the other four concordant.
        let s = table("final_success", &[1, 2, 3, 3]);
        let p = table("ter", &[2, 1, 3, 4]);
        let flip = |significant| DiscordantPair {
            ahead_on_success: ["m0".into(), "x".into()],
            ahead_on_ter: Some(["m1".into(), "x".into()]),
            ahead_on_auc_pec: None,
            significant,
        };
        let mut d = RankDivergence {
            dataset: "d".into(),
            a: "final_success".into(),
            b: "ter".into(),
            kendall_tau_b: Estimate {
                value: Some(0.5477),
                ci: Some([-0.2, 1.0]),
            },
            discordant: vec![flip(true)],
        };
        assert_eq!(pair_orders(&s, &p, &d), (4, 1, 6));
        assert_eq!(
            divergence_sentence(&s, &p, &d, 2),
            "By final success and by TER, 4 of 6 pairs are in the same order and 1 in opposite \
             orders (1 of them significant flip); τ_b 0.55 [-0.20, 1.00]."
        );
        d.discordant = vec![flip(false)];
        d.kendall_tau_b.ci = None;
        assert!(divergence_sentence(&s, &p, &d, 2)
            .ends_with("1 in opposite orders (none a significant flip); τ_b 0.55."));
        d.discordant.clear();
        d.kendall_tau_b.value = None;
        let two = table("final_success", &[1, 2]);
        let two_p = table("ter", &[1, 2]);
        assert_eq!(
            divergence_sentence(&two, &two_p, &d, 2),
            "By final success and by TER, 1 of 1 pair is in the same order and none in opposite \
             orders; τ_b undefined (a metric is constant over the conditions)."
        );
    }

    #[test]
    fn relative_changes() {
        assert_eq!(relative_change(Some(103.0), Some(100.0)), Some(0.03));
        assert_eq!(relative_change(Some(1.0), Some(0.0)), None);
        assert_eq!(relative_change(None, Some(1.0)), None);
        assert_eq!(fmt_percent_change(0.03, 0), "+3%");
        assert_eq!(fmt_percent_change(-0.225, 1), "−22.5%");
        assert_eq!(fmt_percent_change(0.0, 0), "0%");
    }

    #[test]
    fn delta_readings() {
        let d = |ci| Delta {
            delta: Some(0.1),
            ci,
        };
        assert_eq!(
            delta_reading(&d(Some([-0.1, 0.2]))),
            "interval contains 0: no difference established"
        );
        assert_eq!(
            delta_reading(&d(Some([0.0, 0.2]))),
            "interval contains 0: no difference established"
        );
        assert_eq!(delta_reading(&d(Some([0.05, 0.2]))), "A higher");
        assert_eq!(delta_reading(&d(Some([-0.3, -0.2]))), "B higher");
        assert_eq!(delta_reading(&d(None)), "no interval");
    }
}
