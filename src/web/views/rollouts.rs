//! The rollout browser: a condition's rollouts, filtered by outcome and task id; one opened
//! shows its steps with the first invalid step highlighted and the later ones greyed.

use leptos::prelude::*;

use wasm_bindgen::JsCast;

use super::dom::target_value;
use super::{clip_cell, report};
use crate::browse::{Outcome, RolloutKey, RolloutQuery, StepView};
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

/// The page's own address with the current view's hash: the link to what is shown.
fn current_link(view: &ViewState) -> String {
    let base = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let base = base.split('#').next().unwrap_or_default().to_string();
    format!("{base}#{}", view.to_hash())
}

/// Puts `text` on the clipboard when the browser lets the page (a secure context); the link
/// beside the button stays there to copy by hand otherwise.
fn copy_to_clipboard(text: &str) -> bool {
    let Some(clipboard) = web_sys::window()
        .map(|w| w.navigator())
        .and_then(|n| js_sys::Reflect::get(&n, &"clipboard".into()).ok())
        .filter(|c| !c.is_undefined())
    else {
        return false;
    };
    let write = js_sys::Reflect::get(&clipboard, &"writeText".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    write.is_some_and(|f| f.call1(&clipboard, &text.into()).is_ok())
}

/// Whether a key press belongs to a text field (typing there moves nothing).
fn typing(e: &web_sys::KeyboardEvent) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| {
            matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
                || el.has_attribute("contenteditable")
        })
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
        let focus = view.rb_open.get().map(|l| RolloutKey {
            dataset: parts[0].to_string(),
            model: parts[1].to_string(),
            method: parts[2].to_string(),
            task_id: l.task_id,
            trial: l.trial,
        });
        session.query_rollouts(RolloutQuery {
            dataset: parts[0].to_string(),
            model: parts[1].to_string(),
            method: parts[2].to_string(),
            outcome: view.rb_outcome.get(),
            search: view.rb_search.get(),
            offset: view.rb_offset.get(),
            limit: PAGE,
            cluster: view.rb_cluster.get(),
            focus,
            seek: view.rb_seek.get(),
        });
    });
    // The page holding the opened rollout is shown: keep its offset, stop seeking, and ask
    // for its steps (once per rollout and report).
    let asked = StoredValue::new(None::<usize>);
    Effect::new(move |_| {
        results.report.track();
        asked.set_value(None);
    });
    Effect::new(move |_| {
        let Some(page) = results.rollouts.get() else {
            return;
        };
        if view.rb_seek.get_untracked() {
            if view.rb_offset.get_untracked() != page.offset {
                view.rb_offset.set(page.offset);
            }
            view.rb_seek.set(false);
        }
        if let Some(f) = &page.focus {
            let shown = results
                .steps
                .with_untracked(|s| s.as_ref().map(|(i, _)| *i));
            if shown != Some(f.index) && asked.get_value() != Some(f.index) {
                asked.set_value(Some(f.index));
                session.query_steps(f.index);
            }
        }
    });
    let focus = Memo::new(move |_| results.rollouts.get().and_then(|p| p.focus));
    // The neighbour of the opened rollout: from the page shown where it holds the neighbour
    // (so that holding j moves on at the keyboard's repeat rate, not once per answer of the
    // worker), else the one the worker named beside the opened rollout. A press while the
    // worker has not answered for the opened rollout yet is dropped: it would repeat a move.
    let go = move |next: bool| {
        let Some(page) = results.rollouts.get_untracked() else {
            return;
        };
        let open = view.rb_open.get_untracked();
        let condition = view.rb_condition.get_untracked();
        let is_open = |k: &crate::browse::RolloutKey| {
            open.as_ref()
                .is_some_and(|l| l.task_id == k.task_id && l.trial == k.trial)
                && condition == format!("{}{SEP}{}{SEP}{}", k.dataset, k.model, k.method)
        };
        let at = page.rows.iter().position(|r| is_open(&r.key));
        let to = at.and_then(|at| {
            if next {
                at.checked_add(1)
            } else {
                at.checked_sub(1)
            }
        });
        if let Some(row) = to.and_then(|t| page.rows.get(t)) {
            view.open_rollout(&row.key, None, true);
            return;
        }
        let Some(f) = page.focus else {
            return;
        };
        let answered = page
            .rows
            .iter()
            .any(|r| r.index == f.index && is_open(&r.key));
        if let Some(key) = (if next { f.next } else { f.prev }).filter(|_| answered) {
            view.open_rollout(&key, None, true);
        }
    };
    // j / → next, k / ← previous, as in mail readers; never while typing in a field.
    let keys = window_event_listener(leptos::ev::keydown, move |e: web_sys::KeyboardEvent| {
        if typing(&e) || e.ctrl_key() || e.meta_key() || e.alt_key() {
            return;
        }
        match e.key().as_str() {
            "j" | "ArrowRight" => go(true),
            "k" | "ArrowLeft" => go(false),
            _ => return,
        }
        e.prevent_default();
    });
    on_cleanup(move || keys.remove());
    // The step of a hit or a link, scrolled into view once its steps are drawn.
    Effect::new(move |_| {
        let steps_for = results.steps.with(|s| s.as_ref().map(|(i, _)| *i));
        let step = view.rb_open.get().and_then(|l| l.step);
        if steps_for.is_none() || step.is_none() {
            return;
        }
        request_animation_frame(|| {
            let el = web_sys::window().and_then(|w| w.document()).and_then(|d| {
                d.query_selector("[data-testid=rollout-detail] [data-focus=true]")
                    .ok()
                    .flatten()
            });
            if let Some(el) = el {
                el.scroll_into_view_with_bool(false);
            }
        });
    });
    let list = move || {
        let page = results.rollouts.get()?;
        let across = view
            .rb_cluster
            .with(|c| c.as_ref().is_some_and(|c| c.condition.is_none()));
        let opened = page.focus.as_ref().map(|f| f.index);
        let rows = page
            .rows
            .iter()
            .map(|r| {
                let index = r.index;
                let key = r.key.clone();
                let key2 = r.key.clone();
                let status = if r.fully_executable {
                    "fully executable"
                } else if r.success {
                    "recovered"
                } else {
                    "failed prefix, failed"
                };
                let condition = across
                    .then(|| clip_cell("clip", format!("{} · {}", r.key.model, r.key.method)));
                view! {
                    <tr
                        data-testid="rollout-row"
                        data-task=r.key.task_id.clone()
                        data-trial=r.key.trial.to_string()
                        tabindex="0"
                        class:selected=opened == Some(index)
                        on:click=move |_| view.open_rollout(&key, None, false)
                        on:keydown=move |e: web_sys::KeyboardEvent| {
                            if e.key() == "Enter" {
                                view.open_rollout(&key2, None, false);
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
                        // Last, so the columns before keep their places.
                        <td class="num">{r.key.trial}</td>
                        {condition}
                    </tr>
                }
            })
            .collect_view();
        let (from, to, total) = (page.offset + 1, page.offset + page.rows.len(), page.total);
        let missing = view.rb_open.get().filter(|_| page.focus.is_none()).map(|l| {
            view! {
                <p class="hint" data-testid="rollout-not-listed">
                    {format!("Task {} (trial {}) is not in this list: change the condition or the filters above.", l.task_id, l.trial)}
                </p>
            }
        });
        Some(view! {
            {missing}
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
                        <th scope="col" class="num">"Trial"</th>
                        {across.then(|| view! { <th scope="col">"Condition"</th> })}
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
    let copied = RwSignal::new(false);
    let detail = move || {
        let f = focus.get()?;
        let (index, steps) = results.steps.get()?;
        let link = view.rb_open.get()?;
        if index != f.index {
            return None;
        }
        let (has_prev, has_next) = (f.prev.is_some(), f.next.is_some());
        let position = f.position + 1;
        let total = results.rollouts.with(|p| p.as_ref().map_or(0, |p| p.total));
        let href = current_link(&view);
        let href2 = href.clone();
        let head = view! {
            <div class="detail-head">
                <button data-testid="rollout-prev" title="Previous rollout of the list (k or ←)" disabled=!has_prev on:click=move |_| go(false)>"← Previous"</button>
                <span data-testid="rollout-position">{format!("{position} of {total}: task {} · trial {}", link.task_id, link.trial)}</span>
                <button data-testid="rollout-next" title="Next rollout of the list (j or →)" disabled=!has_next on:click=move |_| go(true)>"Next →"</button>
                <button
                    data-testid="rollout-copy-link"
                    on:click=move |_| copied.set(copy_to_clipboard(&href2))
                >"Copy link"</button>
                <a data-testid="rollout-link" href=href class="muted">{move || if copied.get() { "link copied" } else { "link" }}</a>
            </div>
        };
        let body = match steps {
            Err(e) => {
                view! { <p class="error">{format!("Cannot show the steps: {e}")}</p> }.into_any()
            }
            Ok(steps) if steps.is_empty() => view! {
                <p>"No tool call: one terminal no-tool action (T = 1)."</p>
            }
            .into_any(),
            Ok(steps) => step_list_at(steps, link.step),
        };
        Some(
            view! { <div class="detail" data-testid="rollout-detail" data-index=index.to_string()>{head}{body}</div> },
        )
    };
    let cluster_note = move || {
        let c = view.rb_cluster.get()?;
        let whose = match &c.condition {
            Some((m, me)) => format!("{m} · {me}"),
            None => "every condition".to_string(),
        };
        Some(view! {
            <p class="hint cluster-note" data-testid="rollout-cluster">
                {format!("Failure cluster of {} ({whose}): {} · {} · {}. ", c.dataset, c.label, c.tool.clone().unwrap_or_else(|| "no tool".to_string()), c.pattern)}
                <button data-testid="rollout-cluster-clear" on:click=move |_| {
                    view.rb_cluster.set(None);
                    view.rb_offset.set(0);
                }>"Show the whole condition"</button>
            </p>
        })
    };
    view! {
        <div>
            <super::search::SearchPanel/>
            <div class="filters">
                <label>
                    "Condition "
                    <select
                        data-testid="rollout-condition"
                        on:change=move |e| {
                            view.rb_condition.set(target_value(&e));
                            view.rb_cluster.set(None);
                            view.rb_open.set(None);
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
                        prop:value=move || outcome_name(view.rb_outcome.get())
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
            {cluster_note}
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

/// One rollout's steps, as the rollout browser shows them: the first rejected step marked, the
/// later ones greyed, each with its label and error text; step `focus` (1-based: a search hit's,
/// a link's) marked.
fn step_list_at(steps: Vec<StepView>, focus: Option<usize>) -> AnyView {
    let items = steps
        .into_iter()
        .map(|s| {
            let focused = focus == Some(s.depth);
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
                    class:focus=focused
                    data-focus=focused.to_string()
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
