//! The progress bar: bytes parsed, then resamples done.

use leptos::prelude::*;

use crate::web::state::{Session, Status};

#[component]
pub fn ProgressBar() -> impl IntoView {
    let session = expect_context::<Session>();
    let results = session.results();
    let computing = move || matches!(results.status.get(), Status::Computing { .. });
    let state = move || match results.status.get() {
        Status::Computing { .. } => "computing",
        Status::Ready { .. } => "ready",
        Status::Failed(_) => "failed",
        Status::Cancelled => "cancelled",
        Status::Empty => "empty",
    };
    let fraction = move || match results.status.get() {
        Status::Computing {
            phase,
            done,
            total,
            files: [read, all],
            ..
        } if total > 0 || all > 0 => {
            // Parsing is the first half of the bar, the bootstrap the second; files are read
            // counted in bytes, or in files where the total size is not asked.
            let f = if total > 0 {
                done as f64 / total as f64
            } else {
                read as f64 / all as f64
            };
            if phase == "parse" || phase.starts_with("download ") {
                f * 0.5
            } else {
                0.5 + f * 0.5
            }
        }
        Status::Ready { .. } => 1.0,
        _ => 0.0,
    };
    let text = move || match results.status.get() {
        Status::Computing {
            phase,
            done,
            total,
            files: [read, all],
            archive,
        } if phase == "parse" => {
            if let Some(a) = archive {
                return archive_text(&a);
            }
            let mb = if total > 0 {
                format!("{:.1} of {:.1} MB", done as f64 / 1e6, total as f64 / 1e6)
            } else {
                format!("{:.1} MB", done as f64 / 1e6)
            };
            if all > 1 {
                format!("Reading files: {read} of {all} files, {mb}")
            } else {
                format!("Reading files: {mb}")
            }
        }
        // A `?data=` link downloaded before it is read (a zip, a body of unknown length).
        Status::Computing {
            phase, done, total, ..
        } if phase.starts_with("download ") => {
            let name = phase["download ".len()..]
                .rsplit('/')
                .next()
                .unwrap_or_default();
            if total > 0 {
                format!(
                    "Downloading {name}: {:.1} of {:.1} MB",
                    done as f64 / 1e6,
                    total as f64 / 1e6
                )
            } else {
                format!("Downloading {name}: {:.1} MB", done as f64 / 1e6)
            }
        }
        Status::Computing { done, total, .. } => {
            format!("Bootstrap: {done} of {total} resamples")
        }
        Status::Ready {
            compute_ms,
            workers,
            ..
        } => match workers {
            0 | 1 => format!("Done in {compute_ms:.0} ms"),
            n => format!("Done in {compute_ms:.0} ms on {n} workers"),
        },
        Status::Failed(m) => m,
        Status::Cancelled => "Cancelled".to_string(),
        Status::Empty => String::new(),
    };
    let read_ahead = move || match results.status.get() {
        Status::Ready { read_ahead, .. } => read_ahead,
        _ => 0,
    };
    view! {
        <div class="progress" data-testid="progress" data-state=state data-read-ahead=read_ahead>
            <div
                class="bar"
                role="progressbar"
                aria-valuemin="0"
                aria-valuemax="100"
                aria-valuenow=move || format!("{:.0}", fraction() * 100.0)
            >
                <div class="fill" style=move || format!("width: {:.1}%", fraction() * 100.0)></div>
            </div>
            <span class="progress-text" aria-live="polite">{text}</span>
            <Show when=computing>
                <button class="cancel" data-testid="cancel" on:click=move |_| session.cancel()>
                    "Cancel"
                </button>
            </Show>
        </div>
    }
}

/// "Reading runs.tar.gz: 1204 members, 40.1 of 126.0 MB read, 812.3 MB decompressed"; a
/// single compressed file (no members) without the count.
fn archive_text(a: &crate::web::protocol::ArchiveRead) -> String {
    let name = a.name.rsplit('/').next().unwrap_or(&a.name);
    let members = match a.members {
        0 => String::new(),
        n => format!("{n} members, "),
    };
    format!(
        "Reading {name}: {members}{:.1} of {:.1} MB read, {:.1} MB decompressed",
        a.read as f64 / 1e6,
        a.size as f64 / 1e6,
        a.decompressed as f64 / 1e6
    )
}
