//! Export: the report JSON (byte-identical to the CLI's), the main table as CSV and LaTeX in
//! the table's layout and sort order.

use leptos::prelude::*;

use crate::report::table::{render_csv_as, render_latex_as};
use crate::web::download::download_text;
use crate::web::state::Session;
use crate::web::view_state::ViewState;

#[component]
pub fn ExportPanel() -> impl IntoView {
    let session = expect_context::<Session>();
    let view = expect_context::<ViewState>();
    let results = session.results();
    let ready = move || results.report.with(|r| r.is_some());
    let export_json = move |_| {
        let json = results.report_json.get_untracked();
        download_text("prefix-exec-report.json", "application/json", &json);
    };
    let export_csv = move |_| {
        if let Some(r) = results.report.get_untracked() {
            // As the table shows it: layout, sort order and bold maxima (every page, every
            // row the filters hide too).
            let csv = render_csv_as(
                &r,
                view.table_layout(&r),
                view.sort.get_untracked(),
                view.decimals.get_untracked(),
            );
            download_text("prefix-exec-table.csv", "text/csv", &csv);
        }
    };
    let export_latex = move |_| {
        if let Some(r) = results.report.get_untracked() {
            let layout = view.table_layout(&r);
            let tex = render_latex_as(
                &r,
                view.decimals.get_untracked(),
                view.intervals.get_untracked(),
                layout,
                view.sort.get_untracked(),
            );
            download_text("prefix-exec-table.tex", "application/x-tex", &tex);
        }
    };
    let site_title = RwSignal::new("Prefix-executability report".to_string());
    let build_site = move |_| {
        let title = session
            .site
            .get_untracked()
            .map(|s| s.manifest.title.clone())
            .filter(|_| site_title.get_untracked() == "Prefix-executability report")
            .unwrap_or_else(|| site_title.get_untracked());
        let description = session
            .site
            .get_untracked()
            .map(|s| s.manifest.description.clone())
            .unwrap_or_default();
        session.build_site(title, description);
    };
    view! {
        <section class="panel export">
            <h2>"Export"</h2>
            <div class="export-buttons">
                <button data-testid="export-report-json" disabled=move || !ready() on:click=export_json>
                    "Report JSON"
                </button>
                <button data-testid="export-csv" disabled=move || !ready() on:click=export_csv>
                    "Table CSV"
                </button>
                <button data-testid="export-latex" disabled=move || !ready() on:click=export_latex>
                    "Table LaTeX"
                </button>
            </div>
            <h3 class="sub">"Publish"</h3>
            <label class="stack">
                "Site title "
                <input
                    type="text"
                    data-testid="site-title-input"
                    prop:value=move || site_title.get()
                    on:change=move |e| site_title.set(super::dom::target_value(&e))
                />
            </label>
            <button data-testid="export-site" disabled=move || !ready() on:click=build_site>
                "Download this report (site .zip)"
            </button>
            {move || results.site_build.get().map(|m| view! { <p class="hint" data-testid="site-build">{m}</p> })}
        </section>
    }
}
