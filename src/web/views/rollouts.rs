//! The rollout browser: a condition's rollouts, filtered by outcome and task id; one opened
//! shows its steps with the first invalid step highlighted and the later ones greyed.

use leptos::prelude::*;

use super::dom::target_value;
use super::{clip_cell, report};
use crate::browse::{Outcome, RolloutQuery, StepView};
use crate::web::state::{Session, Status};
use crate::web::view_state::ViewState;

const PAGE: usize = 50;
const SEP: char = '\u{1f}';

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::All => "all",
        Outcome::FullyExecutable => "fully_executable",
        Outcome::Recovered => "recovered",
        Outcome::FailedPrefixFailed => "failed_prefix_failed",
        Outcome::NoTool => "no_tool",
    }
}

#[component]
pub fn Rollouts() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let results = session.results();
    let conditions = move || {
        report()
            .map(|r| {
                r.conditions
                    .iter()
                    .map(|c| format!("{}{SEP}{}{SEP}{}", c.dataset, c.model, c.method))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    // Default to the first condition.
    Effect::new(move |_| {
        let all = conditions();
        if !all.is_empty() && !all.contains(&view.rb_condition.get()) {
            view.rb_condition.set(all[0].clone());
        }
    });
    // Ask the worker for the page whenever the query changes and a report is ready.
    Effect::new(move |_| {
        let ready = matches!(results.status.get(), Status::Ready { .. });
        let cond = view.rb_condition.get();
        let parts: Vec<&str> = cond.split(SEP).collect();
        if !ready || parts.len() != 3 {
            return;
        }
        session.query_rollouts(RolloutQuery {
            dataset: parts[0].to_string(),
            model: parts[1].to_string(),
            method: parts[2].to_string(),
            outcome: view.rb_outcome.get(),
            search: view.rb_search.get(),
            offset: view.rb_offset.get(),
            limit: PAGE,
        });
    });
    let selected = RwSignal::new(None::<usize>);
    let list = move || {
        let page = results.rollouts.get()?;
        let rows = page
            .rows
            .iter()
            .map(|r| {
                let index = r.index;
                let status = if r.fully_executable {
                    "fully executable"
                } else if r.success {
                    "recovered"
                } else {
                    "failed prefix, failed"
                };
                view! {
                    <tr
                        data-testid="rollout-row"
                        tabindex="0"
                        class:selected=move || selected.get() == Some(index)
                        on:click=move |_| {
                            selected.set(Some(index));
                            session.query_steps(index);
                        }
                        on:keydown=move |e: web_sys::KeyboardEvent| {
                            if e.key() == "Enter" {
                                selected.set(Some(index));
                                session.query_steps(index);
                            }
                        }
                    >
                        {clip_cell("clip task", r.task_id.clone())}
                        <td class="num">{r.horizon}</td>
                        <td class="num">{r.fed}</td>
                        <td>{if r.success { "yes" } else { "no" }}</td>
                        <td>{status}</td>
                        <td
                            data-testid="rollout-label"
                            title=label_title(r)
                        >{r.label.clone().unwrap_or_default()}</td>
                        {clip_cell("clip error-text", r.error.clone().unwrap_or_default())}
                    </tr>
                }
            })
            .collect_view();
        let (from, to, total) = (page.offset + 1, page.offset + page.rows.len(), page.total);
        Some(view! {
            <p class="hint" data-testid="rollout-count">{format!("{total} rollouts match; showing {}–{to}", from.min(to))}</p>
            <table class="data rollouts">
                <thead>
                    <tr>
                        <th scope="col">"Task"</th>
                        <th scope="col" class="num">"T"</th>
                        <th scope="col" class="num">"FED"</th>
                        <th scope="col">"Success"</th>
                        <th scope="col">"Outcome"</th>
                        <th scope="col">"First-failure label"</th>
                        <th scope="col">"Error"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            <div class="pager">
                <button disabled=move || page.offset == 0 on:click=move |_| view.rb_offset.update(|o| *o = o.saturating_sub(PAGE))>"Previous"</button>
                // No `>` here: inside a view! attribute it would end the tag (the label once
                // showed this code).
                <button disabled=move || total <= to on:click=move |_| view.rb_offset.update(|o| *o += PAGE)>"Next"</button>
            </div>
        })
    };
    let detail = move || {
        let (index, steps) = results.steps.get()?;
        if selected.get() != Some(index) {
            return None;
        }
        Some(match steps {
            Err(e) => view! { <div class="detail" data-testid="rollout-detail"><p class="error">{format!("Cannot show the steps: {e}")}</p></div> }.into_any(),
            Ok(steps) if steps.is_empty() => view! {
                <div class="detail" data-testid="rollout-detail"><p>"No tool call: one terminal no-tool action (T = 1)."</p></div>
            }.into_any(),
            Ok(steps) => view! { <div class="detail" data-testid="rollout-detail">{step_list(steps)}</div> }.into_any(),
        })
    };
    view! {
        <div>
            <div class="filters">
                <label>
                    "Condition "
                    <select
                        data-testid="rollout-condition"
                        on:change=move |e| {
                            view.rb_condition.set(target_value(&e));
                            view.rb_offset.set(0);
                        }
                        prop:value=move || view.rb_condition.get()
                    >
                        {move || conditions().into_iter().map(|c| {
                            let label = c.replace(SEP, " / ");
                            let selected = view.rb_condition.get_untracked() == c;
                            view! { <option value=c selected=selected>{label}</option> }
                        }).collect_view()}
                    </select>
                </label>
                <label>
                    "Show "
                    <select
                        data-testid="rollout-outcome"
                        on:change=move |e| {
                            let v = target_value(&e);
                            let o = [Outcome::All, Outcome::FullyExecutable, Outcome::Recovered, Outcome::FailedPrefixFailed, Outcome::NoTool]
                                .into_iter()
                                .find(|o| outcome_name(*o) == v)
                                .unwrap_or_default();
                            view.rb_outcome.set(o);
                            view.rb_offset.set(0);
                        }
                    >
                        <option value="all">"all"</option>
                        <option value="fully_executable">"fully executable"</option>
                        <option value="recovered">"failed prefix, succeeded (recovered)"</option>
                        <option value="failed_prefix_failed">"failed prefix, failed"</option>
                        <option value="no_tool">"no tool call"</option>
                    </select>
                </label>
                <label>
                    "Task id "
                    <input
                        type="search"
                        data-testid="rollout-search"
                        prop:value=move || view.rb_search.get()
                        on:input=move |e| {
                            view.rb_search.set(target_value(&e));
                            view.rb_offset.set(0);
                        }
                    />
                </label>
            </div>
            <div class="browser">
                <div class="list">{list}</div>
                {detail}
            </div>
        </div>
    }
}

/// The hover text of a first-failure label: where it came from and, for a label rule, why.
fn label_title(r: &crate::browse::RolloutRow) -> String {
    match (&r.label_source, &r.label_rationale) {
        (Some(source), Some(why)) if !why.is_empty() => format!("{source}: {why}"),
        (Some(source), _) => source.clone(),
        (None, _) if r.label.is_some() => "no label rule matched".to_string(),
        (None, _) => String::new(),
    }
}

/// One rollout's steps, as the rollout browser and the paired comparison show them: the first
/// rejected step marked, the later ones greyed, each with its label and error text.
pub(super) fn step_list(steps: Vec<StepView>) -> AnyView {
    let items = steps
        .into_iter()
        .map(|s| {
            let class = if s.first_error {
                "step first-error"
            } else if s.after_first_error {
                "step after-error"
            } else {
                "step"
            };
            view! {
                <li
                    class=class
                    data-testid="step"
                    data-first-error=s.first_error.to_string()
                    data-after-error=s.after_first_error.to_string()
                >
                    <span class="depth">{s.depth}</span>
                    <code class="tool">{s.tool.clone().unwrap_or_else(|| "(no tool name)".to_string())}</code>
                    {s.agent_tool.clone().map(|a| view! { <span class="muted" data-testid="step-agent-tool">{format!(" (called as {a})")}</span> })}
                    <code class="args">{s.args.clone().unwrap_or_default()}</code>
                    {s.first_error.then(|| view! { <span class="tag">"first rejected step"</span> })}
                    {s.after_first_error.then(|| view! { <span class="tag muted">"after first error"</span> })}
                    {s.label.clone().map(|l| view! { <span class="tag">{l}</span> })}
                    {s.reject_source.clone().map(|r| view! { <span class="tag muted" data-testid="step-reject-source" title="the rule that rejected the call">{format!("rejected by {r}")}</span> })}
                    {s.error.clone().map(|e| view! { <div class="error-text">{e}</div> })}
                </li>
            }
        })
        .collect_view();
    view! { <ol class="steps">{items}</ol> }.into_any()
}
