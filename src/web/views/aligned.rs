//! A task's rollout of A beside its rollout of B, aligned call by call ([`crate::align`]),
//! scrolled to the first call where the runs differ, each run's first rejected call marked.

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::align::{align, Alignment, Row, RowKind};
use crate::browse::{StepView, TaskDiff, TaskSide};
use crate::web::state::StepsResult;

fn kind_name(kind: RowKind) -> &'static str {
    match kind {
        RowKind::Same => "same",
        RowKind::OtherArgs => "other-args",
        RowKind::OtherTool => "other-tool",
        RowKind::OnlyA => "only-a",
        RowKind::OnlyB => "only-b",
    }
}

/// What a row says about its two calls, for the reader of a differing row.
fn kind_hint(row: &Row) -> &'static str {
    match row.kind {
        RowKind::Same if row.differs => "the same call, accepted in one run only",
        RowKind::Same => "the same call",
        RowKind::OtherArgs => "the same tool, other arguments",
        RowKind::OtherTool => "different tools",
        RowKind::OnlyA => "a call A makes and B does not",
        RowKind::OnlyB => "a call B makes and A does not",
    }
}

/// "successes/trials" of one side ("yes"/"no" for one trial).
pub(super) fn share(x: u32, n: u32) -> String {
    if n == 1 {
        if x == 1 { "yes" } else { "no" }.to_string()
    } else {
        format!("{x}/{n}")
    }
}

/// One call in its cell.
fn call_cell(side: &'static str, step: Option<&StepView>) -> AnyView {
    let Some(s) = step else {
        return view! { <td class="call gap" data-side=side></td> }.into_any();
    };
    let class = if s.first_error {
        "call first-error"
    } else if s.after_first_error {
        "call after-error"
    } else {
        "call"
    };
    view! {
        <td
            class=class
            data-testid="step"
            data-side=side
            data-depth=s.depth.to_string()
            data-first-error=s.first_error.to_string()
            data-after-error=s.after_first_error.to_string()
        >
            <span class="depth">{s.depth}</span>
            <code class="tool">{s.tool.clone().unwrap_or_else(|| "(no tool name)".to_string())}</code>
            {s.agent_tool.clone().map(|a| view! { <span class="muted">{format!(" (called as {a})")}</span> })}
            <code class="args">{s.args.clone().unwrap_or_default()}</code>
            {s.first_error.then(|| view! { <span class="tag" data-testid="first-rejected">{format!("{side}'s first rejected call")}</span> })}
            {(!s.executable && !s.first_error).then(|| view! { <span class="tag muted">"rejected"</span> })}
            {s.label.clone().map(|l| view! { <span class="tag">{l}</span> })}
            {s.error.clone().map(|e| view! { <div class="error-text">{e}</div> })}
        </td>
    }
    .into_any()
}

/// The sentence above the aligned rows: where the runs part, where each first breaks.
fn summary(al: &Alignment, a: &[StepView], b: &[StepView]) -> String {
    let same = al.first_difference.unwrap_or(al.rows.len());
    let mut out = match al.first_difference {
        None if al.rows.is_empty() => "Neither run makes a tool call.".to_string(),
        None => format!(
            "The two runs make the same {} calls with the same verdicts.",
            al.rows.len()
        ),
        Some(0) => format!(
            "The runs differ from the first call ({}).",
            kind_hint(&al.rows[0])
        ),
        Some(k) => format!(
            "The same {same} call{} in both runs, then they differ at row {} ({}).",
            if same == 1 { "" } else { "s" },
            k + 1,
            kind_hint(&al.rows[k])
        ),
    };
    let fed = |name: &str, row: Option<usize>, steps: &[StepView]| match row {
        _ if steps.is_empty() => {
            format!(" {name}: no tool call (one terminal no-tool action, T = 1).")
        }
        Some(r) => {
            let depth = al.rows[r]
                .a
                .filter(|_| name == "A")
                .or(al.rows[r].b.filter(|_| name == "B"))
                .map_or(0, |k| steps[k].depth);
            format!(
                " {name}'s first rejected call: step {depth} (row {}).",
                r + 1
            )
        }
        None => format!(" {name}: every call accepted."),
    };
    out.push_str(&fed("A", al.first_error_a, a));
    out.push_str(&fed("B", al.first_error_b, b));
    if al.by_position {
        out.push_str(" (Too many calls to align: shown side by side by position.)");
    }
    out
}

/// The rows of two loaded rollouts, scrolled to the first difference once shown.
fn aligned_table(a: Vec<StepView>, b: Vec<StepView>) -> AnyView {
    let al = align(&a, &b);
    let first = al.first_difference;
    let scroller = NodeRef::<html::Div>::new();
    // Scroll the rows' own box, not the page: the task list above stays where the reader is.
    Effect::new(move |_| {
        let Some(boxed) = scroller.get() else { return };
        let row = boxed.query_selector("tr.first-difference").ok().flatten();
        if let Some(row) = row.and_then(|r| r.dyn_into::<web_sys::HtmlElement>().ok()) {
            boxed.set_scroll_top((row.offset_top() - 40).max(0));
        }
    });
    let text = summary(&al, &a, &b);
    let rows = al
        .rows
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let is_first = first == Some(k);
            view! {
                <tr
                    data-testid="aligned-row"
                    data-kind=kind_name(r.kind)
                    data-differs=r.differs.to_string()
                    data-first-difference=is_first.to_string()
                    class=kind_name(r.kind)
                    class:differs=r.differs
                    class:first-difference=is_first
                    title=kind_hint(r)
                >
                    <th scope="row" class="num muted">{k + 1}</th>
                    {call_cell("A", r.a.map(|i| &a[i]))}
                    {call_cell("B", r.b.map(|j| &b[j]))}
                </tr>
            }
        })
        .collect_view();
    view! {
        <p class="aligned-summary" data-testid="aligned-summary">{text}</p>
        <div class="aligned-scroll" node_ref=scroller>
            <table class="aligned" data-testid="aligned" data-first-difference=first.map_or(String::new(), |k| (k + 1).to_string())>
                <thead>
                    <tr><th scope="col" class="num">"Row"</th><th scope="col">"A's calls"</th><th scope="col">"B's calls"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

/// A trial picker for a side with several trials.
fn trial_picker(name: &'static str, side: &TaskSide, trial: RwSignal<usize>) -> Option<AnyView> {
    (side.rollouts.len() > 1).then(|| {
        let options = (0..side.rollouts.len())
            .map(|t| view! { <option value=t.to_string() selected=move || trial.get() == t>{format!("trial {}", t + 1)}</option> })
            .collect_view();
        view! {
            <label>
                " shown: "
                <select
                    data-testid=format!("aligned-trial-{name}")
                    on:change=move |e| trial.set(super::dom::target_value(&e).parse().unwrap_or(0))
                >
                    {options}
                </select>
            </label>
        }
        .into_any()
    })
}

/// The opened task: A's rollout and B's, aligned. `steps` holds the loaded rollouts' steps by
/// corpus index.
#[component]
pub fn AlignedRollouts(
    task: TaskDiff,
    steps: Signal<Vec<(usize, StepsResult)>>,
    trial_a: RwSignal<usize>,
    trial_b: RwSignal<usize>,
) -> impl IntoView {
    let head = |name: &'static str, side: &TaskSide, trial: RwSignal<usize>| {
        view! {
            <div class="side" data-testid=format!("side-{name}")>
                <h4>
                    {format!("{name}: success {}, fully executable {}", share(side.successes, side.trials), share(side.fully_executable, side.trials))}
                    {trial_picker(name, side, trial)}
                </h4>
            </div>
        }
    };
    let (sa, sb) = (task.a.clone(), task.b.clone());
    let body = move || {
        let index = |side: &TaskSide, trial: RwSignal<usize>| {
            side.rollouts
                .get(trial.get())
                .or(side.rollouts.first())
                .copied()
        };
        let (ia, ib) = (index(&sa, trial_a)?, index(&sb, trial_b)?);
        let loaded = steps.get();
        let find = |i: usize| loaded.iter().find(|(j, _)| *j == i).map(|(_, s)| s.clone());
        Some(match (find(ia), find(ib)) {
            (Some(Ok(a)), Some(Ok(b))) => aligned_table(a, b),
            (Some(Err(e)), _) | (_, Some(Err(e))) => {
                view! { <p class="error">{format!("Cannot show the steps: {e}")}</p> }.into_any()
            }
            _ => view! { <p class="hint">"Loading…"</p> }.into_any(),
        })
    };
    view! {
        <div class="side-by-side" data-testid="side-by-side">
            <h4 class="task">{format!("Task {}", task.task_id)}</h4>
            <div class="sides">
                {head("A", &task.a, trial_a)}
                {head("B", &task.b, trial_b)}
            </div>
            {body}
        </div>
    }
}
