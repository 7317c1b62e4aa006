//! Settings: resamples, seed, confidence level, max depth; a change recomputes in the worker.

use leptos::prelude::*;

use super::dom::target_value;
use crate::web::state::Session;
use crate::web::view_state::ViewState;

/// Applies a typed value to the settings.
type Edit = dyn Fn(&mut crate::web::protocol::JobSettings, String);

#[component]
pub fn SettingsPanel() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let s = session.settings;
    let update = move |f: Box<Edit>| {
        move |e: web_sys::Event| {
            let mut next = s.get_untracked();
            f(&mut next, target_value(&e));
            session.set_settings(next);
        }
    };
    view! {
        <section class="panel settings">
            <h2>"Settings"</h2>
            <div class="grid">
                <label for="set-bootstrap">"Resamples"</label>
                <input
                    id="set-bootstrap"
                    type="number"
                    min="0"
                    max="1000000"
                    step="1000"
                    data-testid="settings-bootstrap"
                    prop:value=move || s.get().bootstrap.to_string()
                    on:change=update(Box::new(|n, v| n.bootstrap = v.trim().parse().unwrap_or(n.bootstrap)))
                />
                <label for="set-seed">"Seed"</label>
                <input
                    id="set-seed"
                    type="text"
                    inputmode="numeric"
                    data-testid="settings-seed"
                    prop:value=move || s.get().seed
                    on:change=update(Box::new(|n, v| n.seed = v.trim().to_string()))
                />
                <label for="set-level">"Confidence"</label>
                <select
                    id="set-level"
                    data-testid="settings-level"
                    on:change=update(Box::new(|n, v| n.level = v.parse().unwrap_or(n.level)))
                    prop:value=move || s.get().level.to_string()
                >
                    <option value="0.9">"90%"</option>
                    <option value="0.95" selected>"95%"</option>
                    <option value="0.99">"99%"</option>
                </select>
                <label for="set-depth">"Max depth"</label>
                <input
                    id="set-depth"
                    type="text"
                    data-testid="settings-max-depth"
                    title="a number, or all"
                    prop:value=move || s.get().max_depth
                    on:change=update(Box::new(|n, v| n.max_depth = v.trim().to_string()))
                />
                <label for="set-dp">"Decimals"</label>
                <select
                    id="set-dp"
                    data-testid="settings-decimals"
                    on:change=move |e| view.decimals.set(target_value(&e).parse().unwrap_or(2))
                    prop:value=move || view.decimals.get().to_string()
                >
                    <option value="2">"2"</option>
                    <option value="3">"3"</option>
                    <option value="4">"4"</option>
                </select>
                <label for="set-schema">"Schema checks"</label>
                <input
                    id="set-schema"
                    type="checkbox"
                    data-testid="settings-schema-checks"
                    title="Check each step against the tool definitions a file carries"
                    prop:checked=move || session.schema_checks.get()
                    on:change=move |e| session.set_schema_checks(event_target_checked(&e))
                />
                <label for="set-ci">"Intervals"</label>
                <input
                    id="set-ci"
                    type="checkbox"
                    data-testid="settings-intervals"
                    prop:checked=move || view.intervals.get()
                    on:change=move |e| view.intervals.set(event_target_checked(&e))
                />
            </div>
        </section>
    }
}
