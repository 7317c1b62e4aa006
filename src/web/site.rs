//! Opening the app with data: a published report site (`report.json` beside the app),
//! `?data=URL` links, or a `?files=URL` list (how `prefix-exec view`, the Python package's local
//! viewer, preloads files and folders).
//!
//! A site's numbers are always recomputed from its data files in the worker. The precomputed
//! report in the manifest is shown first, marked as such, and compared with the recomputation.
//! Data files are read as `?data=` links are, while they download; each one's size and SHA-256
//! are then checked against the manifest ([`super::integrity`]). Any mismatch is shown, never
//! hidden.

use std::sync::Arc;

use leptos::prelude::*;

use super::protocol::JobSettings;
use super::state::{Session, SiteState, Status};
use crate::site::{SiteManifest, MANIFEST, SITE_SCHEMA};

/// Fetches a URL's body.
pub async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    // The request is made from the URL exactly as given: gloo-net's `Request::get` rebuilds the
    // query string (appending `&` to an existing one), which could break a signed `?data=` URL.
    let request =
        web_sys::Request::new_with_str(url).map_err(|_| format!("could not load {url}"))?;
    let response = gloo_net::http::Request::from(request)
        .send()
        .await
        .map_err(|_| format!("could not load {url}"))?;
    if !response.ok() {
        return Err(format!("could not load {url}: HTTP {}", response.status()));
    }
    response
        .binary()
        .await
        .map_err(|_| format!("could not read {url}"))
}

/// Fetches `url` into a `File` named `name` without its bytes passing through the page's
/// memory: the browser streams the body into its blob storage (which pages big blobs to disk),
/// and the worker then reads the file by slices as a picked one — an archive's tar stream
/// decompressed as a stream, a zip by random access, never whole in memory.
pub async fn fetch_file(url: &str, name: &str) -> Result<web_sys::File, String> {
    let request =
        web_sys::Request::new_with_str(url).map_err(|_| format!("could not load {url}"))?;
    let response = gloo_net::http::Request::from(request)
        .send()
        .await
        .map_err(|_| format!("could not load {url}"))?;
    if !response.ok() {
        return Err(format!("could not load {url}: HTTP {}", response.status()));
    }
    let body = web_sys::Response::from(response)
        .blob()
        .map_err(|_| format!("could not read {url}"))?;
    let blob = wasm_bindgen_futures::JsFuture::from(body)
        .await
        .map_err(|_| format!("could not read {url}"))?;
    let parts = js_sys::Array::of1(&blob);
    let options = web_sys::FilePropertyBag::new();
    options.set_type("application/octet-stream");
    web_sys::File::new_with_blob_sequence_and_options(&parts, name, &options)
        .map_err(|_| "could not create a file".to_string())
}

/// Loads a site's manifest and data if the page was opened as a site, else `?data=` URLs.
pub async fn open_with_data(session: Session) {
    // Only a published site's index.html carries the marker: a plain load of the app asks for
    // no manifest (a request that would fail). A marked page whose manifest cannot be fetched
    // is still opened as the plain app.
    if is_site_page() {
        if let Ok(bytes) = fetch_bytes(&format!("./{MANIFEST}")).await {
            // Parsed from text, as the worker's reports are: `from_slice` would link a second
            // copy of the whole report's JSON reader (serde instantiates it per input type).
            let text = std::str::from_utf8(&bytes).map_err(|e| e.to_string());
            match text
                .and_then(|t| serde_json::from_str::<SiteManifest>(t).map_err(|e| e.to_string()))
            {
                Ok(m) if m.schema == SITE_SCHEMA => return open_site(session, m).await,
                Ok(_) => {}
                Err(e) => session.notice.set(Some(format!(
                    "{MANIFEST} is not a readable report site manifest: {e}"
                ))),
            }
        }
    }
    open_data_links(session).await;
}

/// The page's `index.html` is a published site's ([`crate::site::SITE_MARKER`]).
fn is_site_page() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector(r#"meta[name="prefix-exec-site"]"#)
                .ok()
                .flatten()
        })
        .is_some()
}

async fn open_site(session: Session, manifest: SiteManifest) {
    let manifest = Arc::new(manifest);
    let results = session.results();
    // Each data file is read as a link, from its absolute URL (the worker's base differs).
    let here = web_sys::window().and_then(|w| w.location().href().ok());
    let links: Vec<(String, String)> = manifest
        .data
        .iter()
        .map(|d| {
            let url = here
                .as_deref()
                .and_then(|base| web_sys::Url::new_with_base(&format!("./{}", d.path), base).ok())
                .map(|u| u.href())
                .unwrap_or_else(|| d.path.clone());
            (url, d.name.clone())
        })
        .collect();
    session.site.set(Some(SiteState {
        manifest: manifest.clone(),
        urls: links.iter().map(|(url, _)| url.clone()).collect(),
        warnings: Vec::new(),
        agrees: None,
    }));
    let s = &manifest.settings;
    // The site's label rules, before its files are added (they take the session's rules).
    session.labels.set(s.labels.clone());
    session.settings.set(JobSettings {
        bootstrap: s.bootstrap,
        seed: s.seed.clone(),
        level: s.level,
        max_depth: s.max_depth.clone(),
        pairs: manifest
            .precomputed
            .settings
            .pairs
            .iter()
            .map(|[a, b]| (a.clone(), b.clone()))
            .collect(),
        compare: manifest
            .precomputed
            .settings
            .compare
            .iter()
            .map(|[a, b]| (a.clone(), b.clone()))
            .collect(),
        workers: session.settings.get_untracked().workers,
        // The published filter, unless the link's hash chose one (`filter=`, already applied).
        filter: Some(session.settings.get_untracked().filter)
            .filter(|f| !f.is_empty())
            .or_else(|| manifest.precomputed.settings.filter.clone())
            .unwrap_or_default(),
    });
    // The published numbers first, for an instant display; the recomputation replaces them.
    results
        .report
        .set(Some(Arc::new(manifest.precomputed.clone())));
    results.status.set(Status::Computing {
        phase: "parse".to_string(),
        done: 0,
        total: manifest.data.iter().map(|d| d.bytes).sum(),
        files: [0, manifest.data.len() as u64],
        archive: None,
    });
    session.add_links(links);
}

async fn open_data_links(session: Session) {
    let Some(search) = web_sys::window().and_then(|w| w.location().search().ok()) else {
        return;
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return;
    };
    let urls: Vec<String> = params
        .get_all("data")
        .iter()
        .filter_map(|v| v.as_string())
        .filter(|v| !v.is_empty())
        .collect();
    // Each link is fetched by the worker and read while it downloads (`web::fetched`), from
    // its absolute URL (the worker's own base could differ). The worker is outside the page's
    // Content-Security-Policy, so its rule for links is kept here: this site, or https.
    let here = web_sys::window().and_then(|w| w.location().href().ok());
    let mut links = Vec::new();
    for url in urls {
        let name = url
            .split(['?', '#'])
            .next()
            .and_then(|u| u.rsplit('/').next())
            .filter(|n| !n.is_empty())
            .unwrap_or("data.jsonl")
            .to_string();
        let resolved = here
            .as_deref()
            .and_then(|base| web_sys::Url::new_with_base(&url, base).ok());
        let origin = here
            .as_deref()
            .and_then(|h| web_sys::Url::new(h).ok())
            .map(|h| h.origin());
        match resolved {
            Some(u) if Some(u.origin()) == origin || u.protocol() == "https:" => {
                links.push((u.href(), name))
            }
            _ => session.notice.set(Some(format!(
                "{url} was not opened: a ?data= URL must be on this site or use https"
            ))),
        }
    }
    session.add_links(links);
    for url in params
        .get_all("files")
        .iter()
        .filter_map(|v| v.as_string())
        .filter(|v| !v.is_empty())
    {
        open_file_list(session, &url).await;
    }
}

/// One entry of a `?files=URL` list: a file's path relative to what was opened (`run/
/// trajectories/<scenario>/execution_context.json` for a file of the folder `run`) and the URL of
/// its bytes.
#[derive(serde::Deserialize)]
struct FileLink {
    name: String,
    url: String,
}

/// `?files=URL`: `URL` serves a JSON list `[{"name": "relative/path", "url": "…"}, …]`; every
/// entry is fetched and added as a file of a dropped folder is, with its relative path as its
/// name, so formats that pair files by folder (a ToolSandbox run, BFCL result + score) read as
/// from a drop. `?data=` cannot do this: it names a file by the URL's last component only, and
/// takes one URL per file. Same-origin (or CORS-enabled) URLs only, like `?data=`: the page's CSP
/// refuses the rest.
async fn open_file_list(session: Session, url: &str) {
    let list = fetch_bytes(url).await.and_then(|b| {
        let text = std::str::from_utf8(&b).map_err(|e| e.to_string())?;
        serde_json::from_str::<Vec<FileLink>>(text)
            .map_err(|e| format!("{url} is not a list of {{name, url}} entries: {e}"))
    });
    let list = match list {
        Ok(l) => l,
        Err(e) => return session.notice.set(Some(e)),
    };
    let mut files = Vec::with_capacity(list.len());
    for link in list {
        // The file's own name is the path's last component, as for a file of a dropped folder.
        let base = link.name.rsplit('/').next().unwrap_or(&link.name);
        match fetch_file(&link.url, base).await {
            Ok(f) => files.push((f, link.name)),
            Err(e) => session.notice.set(Some(e)),
        }
    }
    if !files.is_empty() {
        session.add_files_with_paths(files, 0);
    }
}

/// After each computation of a site, record whether it matched the published report.
pub fn watch_agreement(session: Session) {
    let results = session.results();
    Effect::new(move |_| {
        let ready = matches!(results.status.get(), Status::Ready { .. });
        let report = results.report.get();
        if !ready {
            return;
        }
        session.site.update(|s| {
            if let (Some(s), Some(r)) = (s.as_mut(), report.as_ref()) {
                let published = s.manifest.settings.bootstrap == r.settings.bootstrap
                    && s.manifest.settings.seed == r.settings.seed.to_string()
                    && s.manifest.precomputed.settings.filter == r.settings.filter;
                // Only the published settings can be compared with the published numbers.
                s.agrees = published.then(|| s.manifest.agrees_with(r));
            }
        });
    });
}

/// The site's title, description and verification status.
#[component]
pub fn SiteHeader() -> impl IntoView {
    let session = expect_context::<Session>();
    move || {
        session.site.get().map(|s| {
            let paragraphs = s
                .manifest
                .description
                .split("\n\n")
                .filter(|p| !p.trim().is_empty())
                .map(|p| view! { <p>{p.to_string()}</p> })
                .collect_view();
            let (state, text) = match s.agrees {
                None => ("pending", "Showing the published numbers while your browser recomputes them from the data…".to_string()),
                Some(true) => ("match", "Every number was recomputed in your browser from the data files and matches the published report.".to_string()),
                Some(false) => ("differ", "The numbers recomputed from the data files differ from the published report.json — the table shows the recomputed ones.".to_string()),
            };
            let warnings = s
                .warnings
                .iter()
                .map(|w| view! { <p class="banner error" data-testid="integrity-warning" role="alert">{w.clone()}</p> })
                .collect_view();
            view! {
                <section class="site-header" data-testid="site-header">
                    <h2 data-testid="site-title">{s.manifest.title.clone()}</h2>
                    {paragraphs}
                    <p class="hint" data-testid="site-verify" data-state=state>{text}</p>
                    {warnings}
                </section>
            }
        })
    }
}
