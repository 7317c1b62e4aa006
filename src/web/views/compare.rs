//! Paired comparison: any two conditions (model + method) of one dataset, deltas on the same
//! bootstrap resamples (task-paired), with percentile intervals; an interval containing 0 is
//! said so. Below, the two conditions task by task: the four success cells, the tasks where
//! they differ, and a task's rollouts of A and B side by side.

use leptos::prelude::*;

use super::aligned::{share, AlignedRollouts};
use super::{choice_select, clip_cell, distinct, report};
use crate::browse::{PairTasksQuery, TaskDiff};
use crate::report::derive::delta_reading;
use crate::report::table::fmt_num;
use crate::report::{ConditionRef, Delta, PairSide, PairedReport, PecDelta};
use crate::web::state::{Session, Status};
use crate::web::view_state::ViewState;

/// `0.0 - x`, not `-x`: an exact zero must stay +0.0 (and print as 0.00).
fn flip(d: Delta) -> Delta {
    Delta {
        delta: d.delta.map(|x| 0.0 - x),
        ci: d.ci.map(|[lo, hi]| [0.0 - hi, 0.0 - lo]),
    }
}

/// `p` read as B − A instead of A − B.
fn flipped(p: &PairedReport) -> PairedReport {
    PairedReport {
        a: p.b.clone(),
        b: p.a.clone(),
        only_a: p.only_b,
        only_b: p.only_a,
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
                PecDelta {
                    k: x.k,
                    delta: d.delta,
                    ci: d.ci,
                }
            })
            .collect(),
        ..p.clone()
    }
}

/// Whether `p` compares `a` with `b` (in this order) in `dataset`.
fn matches(p: &PairedReport, dataset: &str, a: &ConditionRef, b: &ConditionRef) -> bool {
    if p.dataset != dataset {
        return false;
    }
    match (&p.a, &p.b) {
        (PairSide::Condition(x), PairSide::Condition(y)) => x == a && y == b,
        (PairSide::Name(x), PairSide::Name(y)) => match p.compare.as_str() {
            "methods" => {
                p.model.as_deref() == Some(&a.model)
                    && a.model == b.model
                    && *x == a.method
                    && *y == b.method
            }
            "models" => {
                p.method.as_deref() == Some(&a.method)
                    && a.method == b.method
                    && *x == a.model
                    && *y == b.model
            }
            _ => false,
        },
        _ => false,
    }
}

/// The computed pair A − B: a cross-condition pair first (it carries the shared-task counts),
/// else the method or model pair; flipped when the report holds B − A.
fn find_pair(
    pairs: &[PairedReport],
    dataset: &str,
    a: &ConditionRef,
    b: &ConditionRef,
) -> Option<PairedReport> {
    let find = |kind: &str| {
        pairs.iter().filter(|p| p.compare == kind).find_map(|p| {
            if matches(p, dataset, a, b) {
                Some(p.clone())
            } else if matches(p, dataset, b, a) {
                Some(flipped(p))
            } else {
                None
            }
        })
    };
    find("conditions")
        .or_else(|| find("methods"))
        .or_else(|| find("models"))
}

#[component]
pub fn Compare() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let session = expect_context::<Session>();
    let results = session.results();
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
    let methods_of = move |m: String| {
        let d = view.cmp_dataset.get();
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
    let b_model = move || {
        let m = view.cmp_b_model.get();
        if m.is_empty() {
            view.cmp_model.get()
        } else {
            m
        }
    };
    let methods_a = move || methods_of(view.cmp_model.get());
    let methods_b = move || methods_of(b_model());
    // The chosen pair, when complete and two different conditions.
    let chosen = move || {
        let (d, ma, a, b) = (
            view.cmp_dataset.get(),
            view.cmp_model.get(),
            view.cmp_a.get(),
            view.cmp_b.get(),
        );
        let mb = b_model();
        if d.is_empty() || ma.is_empty() || a.is_empty() || b.is_empty() {
            return None;
        }
        let (ca, cb) = (ConditionRef::new(ma, a), ConditionRef::new(mb, b));
        (ca != cb).then_some((d, ca, cb))
    };
    // The task-by-task comparison comes from the worker (it holds the rollouts).
    Effect::new(move |_| {
        let ready = matches!(results.status.get(), Status::Ready { .. });
        if let (true, Some((dataset, a, b))) = (ready, chosen()) {
            session.query_pair_tasks(PairTasksQuery { dataset, a, b });
        }
    });
    // The opened task's rollouts of both sides.
    Effect::new(move |_| {
        let task = view.cmp_task.get();
        let Some(pt) = results.pair_tasks.get() else {
            return;
        };
        if let Some(t) = pt.differing.iter().find(|t| t.task_id == task) {
            let indices: Vec<usize> = t.a.rollouts.iter().chain(&t.b.rollouts).copied().collect();
            session.query_steps_of(indices);
        }
    });
    let result = move || {
        let r = report()?;
        let Some((d, a, b)) = chosen() else {
            let complete = !view.cmp_a.get().is_empty() && !view.cmp_b.get().is_empty();
            let text = if complete {
                "Pick two different conditions."
            } else {
                "Pick a dataset, then condition A (model, method) and condition B (model, method)."
            };
            return Some(view! { <p class="hint">{text}</p> }.into_any());
        };
        let Some(p) = find_pair(&r.paired, &d, &a, &b) else {
            // Automatic comparisons are limited on big reports, and cross-condition pairs are
            // automatic only in leaderboard-shaped datasets: this pair can be asked for.
            let ask = move |_| {
                let mut s = session.settings.get_untracked();
                if a.model == b.model {
                    let pair = (a.method.clone(), b.method.clone());
                    if !s.pairs.contains(&pair) {
                        s.pairs.push(pair);
                    }
                } else {
                    let pair = (a.clone(), b.clone());
                    if !s.compare.contains(&pair) {
                        s.compare.push(pair);
                    }
                }
                session.set_settings(s);
            };
            return Some(
                view! {
                    <p class="hint">
                        "No paired result for this choice yet. "
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
        let scope = match p.n_shared {
            Some(n) => format!(
                "on the {n} tasks both ran ({} only in A, {} only in B, left out)",
                p.only_a.unwrap_or(0),
                p.only_b.unwrap_or(0)
            ),
            None => "on all their tasks".to_string(),
        };
        let (na, nb) = (PairSide::Condition(a), PairSide::Condition(b));
        Some(
            view! {
                <p data-testid="compare-caption">{format!("A = {na}, B = {nb}: differences A − B {scope}, on the same {} task-level resamples (same task draw for both).", r.settings.bootstrap)}</p>
                <table class="data" data-testid="compare-table" data-kind=p.compare.clone()>
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
                {choice_select("compare-model", "A: model ", "—", view.cmp_model, models)}
                {choice_select("compare-a", "method ", "—", view.cmp_a, methods_a)}
                {choice_select("compare-b-model", "B: model ", "same as A", view.cmp_b_model, models)}
                {choice_select("compare-b", "method ", "—", view.cmp_b, methods_b)}
            </div>
            {result}
            <TaskTable/>
        </div>
    }
}

/// Which of success and full executability tell A and B apart on a task.
fn differs_in(t: &TaskDiff) -> &'static str {
    match TaskDiff::differs(&t.a, &t.b) {
        (true, true) => "success and executability",
        (true, false) => "success",
        _ => "executability",
    }
}

/// The four success cells and the tasks where A and B differ; a task opens side by side.
#[component]
fn TaskTable() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let results = expect_context::<Session>().results();
    move || {
        let pt = results.pair_tasks.get()?;
        view.cmp_b.get(); // re-render on a new choice
        let [both, a_only, b_only, neither] = pt.cells;
        let rows = pt
            .differing
            .iter()
            .map(|t| {
                let id = t.task_id.clone();
                let open = id.clone();
                let selected = id.clone();
                view! {
                    <tr
                        data-testid="pair-task"
                        tabindex="0"
                        class:selected=move || view.cmp_task.get() == selected
                        on:click=move |_| view.cmp_task.set(open.clone())
                    >
                        {clip_cell("clip task", id)}
                        <td class="num">{share(t.a.successes, t.a.trials)}</td>
                        <td class="num">{share(t.b.successes, t.b.trials)}</td>
                        <td class="num">{share(t.a.fully_executable, t.a.trials)}</td>
                        <td class="num">{share(t.b.fully_executable, t.b.trials)}</td>
                        <td data-testid="pair-task-differs">{differs_in(t)}</td>
                    </tr>
                }
            })
            .collect_view();
        Some(view! {
            <h3>"Task by task"</h3>
            <p data-testid="pair-counts">{format!("{} shared tasks; {} only in A; {} only in B.", pt.shared, pt.only_a, pt.only_b)}</p>
            <table class="data cells" data-testid="pair-cells">
                <thead>
                    <tr><th scope="col">"Success (every trial)"</th><th scope="col" class="num">"B succeeded"</th><th scope="col" class="num">"B failed"</th></tr>
                </thead>
                <tbody>
                    <tr><th scope="row">"A succeeded"</th><td class="num" data-cell="both">{both}</td><td class="num" data-cell="a_only">{a_only}</td></tr>
                    <tr><th scope="row">"A failed"</th><td class="num" data-cell="b_only">{b_only}</td><td class="num" data-cell="neither">{neither}</td></tr>
                </tbody>
            </table>
            <p class="hint">{format!("{} shared tasks differ in success or full executability; open one to see A's and B's rollouts side by side.", pt.differing.len())}</p>
            <div class="browser">
                <div class="list">
                    <table class="data" data-testid="pair-tasks">
                        <thead>
                            <tr>
                                <th scope="col">"Task"</th>
                                <th scope="col" class="num">"A success"</th>
                                <th scope="col" class="num">"B success"</th>
                                <th scope="col" class="num">"A fully exec."</th>
                                <th scope="col" class="num">"B fully exec."</th>
                                <th scope="col">"Differs in"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </div>
            <SideBySide/>
        })
    }
}

/// The opened task: A's rollout beside B's, aligned call by call.
#[component]
fn SideBySide() -> impl IntoView {
    let view = expect_context::<ViewState>();
    let results = expect_context::<Session>().results();
    // The trials shown, back to the first on another task.
    let (trial_a, trial_b) = (RwSignal::new(0usize), RwSignal::new(0usize));
    Effect::new(move |_| {
        view.cmp_task.track();
        trial_a.set(0);
        trial_b.set(0);
    });
    let steps = Signal::derive(move || results.pair_steps.get());
    move || {
        let task = view.cmp_task.get();
        let pt = results.pair_tasks.get()?;
        let t = pt.differing.into_iter().find(|t| t.task_id == task)?;
        Some(view! { <AlignedRollouts task=t steps=steps trial_a=trial_a trial_b=trial_b/> })
    }
}
