//! Paired comparison: two methods of one dataset and model, deltas on the same bootstrap
//! resamples (task-paired), with percentile intervals; an interval containing 0 is said so.

use leptos::prelude::*;

use super::{choice_select, distinct, report};
use crate::report::derive::delta_reading;
use crate::report::table::fmt_num;
use crate::report::{Delta, PairedReport};
use crate::web::view_state::ViewState;

/// The computed pair for (dataset, model, a, b), flipped when the report holds (b, a).
fn find_pair(
    pairs: &[PairedReport],
    dataset: &str,
    model: &str,
    a: &str,
    b: &str,
) -> Option<PairedReport> {
    pairs.iter().find_map(|p| {
        if p.compare != "methods" || p.dataset != dataset || p.model.as_deref() != Some(model) {
            return None;
        }
        let (pa, pb) = (p.a.name()?, p.b.name()?);
        if pa == a && pb == b {
            Some(p.clone())
        } else if pa == b && pb == a {
            // `0.0 - x`, not `-x`: an exact zero must stay +0.0 (and print as 0.00).
            let flip = |d: Delta| Delta {
                delta: d.delta.map(|x| 0.0 - x),
                ci: d.ci.map(|[lo, hi]| [0.0 - hi, 0.0 - lo]),
            };
            Some(PairedReport {
                a: p.b.clone(),
                b: p.a.clone(),
                ter: flip(p.ter),
                auc_pec: flip(p.auc_pec),
                mean_fed: flip(p.mean_fed),
                final_success: flip(p.final_success),
                pec: p
                    .pec
                    .iter()
                    .map(|x| {
                        let d = flip(Delta {
                            delta: x.delta,
                            ci: x.ci,
                        });
                        crate::report::PecDelta {
                            k: x.k,
                            delta: d.delta,
                            ci: d.ci,
                        }
                    })
                    .collect(),
                ..p.clone()
            })
        } else {
            None
        }
    })
}

#[component]
pub fn Compare() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let datasets = move || {
        report()
            .map(|r| distinct(r.conditions.iter().map(|c| c.dataset.as_str())))
            .unwrap_or_default()
    };
    let models = move || {
        let d = view.cmp_dataset.get();
        report()
            .map(|r| {
                distinct(
                    r.conditions
                        .iter()
                        .filter(|c| c.dataset == d)
                        .map(|c| c.model.as_str()),
                )
            })
            .unwrap_or_default()
    };
    let methods = move || {
        let (d, m) = (view.cmp_dataset.get(), view.cmp_model.get());
        report()
            .map(|r| {
                distinct(
                    r.conditions
                        .iter()
                        .filter(|c| c.dataset == d && c.model == m)
                        .map(|c| c.method.as_str()),
                )
            })
            .unwrap_or_default()
    };
    let result = move || {
        let r = report()?;
        let (d, m, a, b) = (
            view.cmp_dataset.get(),
            view.cmp_model.get(),
            view.cmp_a.get(),
            view.cmp_b.get(),
        );
        if d.is_empty() || m.is_empty() || a.is_empty() || b.is_empty() {
            return Some(
                view! { <p class="hint">"Pick a dataset, a model and two methods."</p> }.into_any(),
            );
        }
        if a == b {
            return Some(view! { <p class="hint">"Pick two different methods."</p> }.into_any());
        }
        let Some(p) = find_pair(&r.paired, &d, &m, &a, &b) else {
            // Automatic comparisons are limited on big reports: this pair can be asked for.
            let session = expect_context::<crate::web::state::Session>();
            let ask = move |_| {
                let mut s = session.settings.get_untracked();
                let pair = (a.clone(), b.clone());
                if !s.pairs.contains(&pair) {
                    s.pairs.push(pair);
                }
                session.set_settings(s);
            };
            return Some(
                view! {
                    <p class="hint">
                        "No paired result for this choice (see Not computed). "
                        <button data-testid="compare-request" on:click=ask>
                            "Compare these two"
                        </button>
                    </p>
                }
                .into_any(),
            );
        };
        let dp = view.decimals.get();
        let row = move |name: String, d: Delta| {
            let contains_zero = matches!(d.ci, Some([lo, hi]) if lo <= 0.0 && hi >= 0.0);
            view! {
                <tr class:zero=contains_zero data-contains-zero=contains_zero.to_string()>
                    <th scope="row">{name}</th>
                    <td class="num">{d.delta.map_or("–".to_string(), |v| fmt_num(v, dp))}</td>
                    <td class="num">{d.ci.map_or("–".to_string(), |[lo, hi]| format!("[{}, {}]", fmt_num(lo, dp), fmt_num(hi, dp)))}</td>
                    <td>{delta_reading(&d)}</td>
                </tr>
            }
        };
        let mut rows = vec![
            row("TER".to_string(), p.ter).into_any(),
            row("AUC-PEC".to_string(), p.auc_pec).into_any(),
            row("Mean FED".to_string(), p.mean_fed).into_any(),
            row("Final success".to_string(), p.final_success).into_any(),
        ];
        for x in &p.pec {
            rows.push(
                row(
                    format!("PEC({})", x.k),
                    Delta {
                        delta: x.delta,
                        ci: x.ci,
                    },
                )
                .into_any(),
            );
        }
        Some(
            view! {
                <p>{format!("A = {a}, B = {b}: differences A − B on the same {} task-level resamples (same task draw for both).", r.settings.bootstrap)}</p>
                <table class="data" data-testid="compare-table">
                    <thead>
                        <tr>
                            <th scope="col">"Statistic"</th>
                            <th scope="col" class="num">"A − B"</th>
                            <th scope="col" class="num">{format!("{}% interval", r.settings.level * 100.0)}</th>
                            <th scope="col">"Reading"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
                <p class="footnote">"An interval that contains 0 does not establish a difference. Overlapping marginal intervals in the main table say nothing about the paired difference."</p>
            }
            .into_any(),
        )
    };
    view! {
        <div>
            <div class="filters">
                {choice_select("compare-dataset", "Dataset ", "—", view.cmp_dataset, datasets)}
                {choice_select("compare-model", "Model ", "—", view.cmp_model, models)}
                {choice_select("compare-a", "Method A ", "—", view.cmp_a, methods)}
                {choice_select("compare-b", "Method B ", "—", view.cmp_b, methods)}
            </div>
            {result}
        </div>
    }
}
