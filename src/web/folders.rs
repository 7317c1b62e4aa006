//! Dropped folders: the files under each dropped directory, with their paths relative to the
//! drop (`run/result/<model>/…_result.json`), so formats that pair files by folder (BFCL result +
//! score, tau2 directory runs) work as with the CLI.
//!
//! A drop's `DataTransfer` items are readable only during the event, so the entries are taken
//! then; the directory walk (callback-based `FileSystemDirectoryReader`) runs afterwards.
//!
//! A folder picked with the File System Access API (`showDirectoryPicker`, where the browser
//! has it) is walked here too, through its directory handle ([`pick_folder`]): the browser does
//! not build a `FileList` of every file under the folder first, as `<input webkitdirectory>`
//! does, and only the files that are read are asked for.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    DataTransfer, File, FileSystemDirectoryEntry, FileSystemDirectoryHandle, FileSystemEntry,
    FileSystemFileEntry, FileSystemFileHandle, FileSystemHandle, FileSystemHandleKind,
};

/// The dropped entries (files and folders), taken while the drop event lasts.
pub fn dropped_entries(dt: &DataTransfer) -> Vec<FileSystemEntry> {
    let items = dt.items();
    (0..items.length())
        .filter_map(|i| items.get(i))
        .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
        .collect()
}

/// Every file under `entries`, with its path relative to the drop (no leading `/`), in the
/// order the browser lists them; of the files inside dropped folders only those
/// [`is_rollout_file_name`] takes, as the CLI walks a folder (the others are counted: the second value).
pub async fn files_of(
    entries: Vec<FileSystemEntry>,
) -> Result<(Vec<(File, String)>, usize), String> {
    let mut out = Vec::new();
    let mut skipped = 0;
    let mut stack: Vec<FileSystemEntry> = entries.into_iter().rev().collect();
    while let Some(entry) = stack.pop() {
        if entry.is_directory() {
            let dir: FileSystemDirectoryEntry = entry.unchecked_into();
            let mut children = read_all(&dir).await?;
            // Listed in name order, so a drop gives the same file order every time.
            children.sort_by_key(|e| std::cmp::Reverse(e.name()));
            stack.extend(children);
        } else if entry.is_file() {
            let path = entry.full_path().trim_start_matches('/').to_string();
            if path.contains('/') && !is_rollout_file_name(&path) {
                skipped += 1;
                continue;
            }
            let file = file_of(entry.unchecked_ref()).await?;
            out.push((file, path));
        }
    }
    Ok((out, skipped))
}

/// Whether a file found in a folder is read, as the CLI decides: a `.json` or `.jsonl` name,
/// an Inspect `.eval` log, or an archive or compressed file's (a folder's READMEs, logs and
/// `.txt` files are skipped).
pub fn is_rollout_file_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [
        ".json", ".jsonl", ".eval", ".zip", ".tar", ".tgz", ".gz", ".zst", ".tzst",
    ]
    .iter()
    .any(|x| lower.ends_with(x))
}

/// A directory's entries: `readEntries` returns them in batches until an empty one.
async fn read_all(dir: &FileSystemDirectoryEntry) -> Result<Vec<FileSystemEntry>, String> {
    let reader = dir.create_reader();
    let mut all = Vec::new();
    loop {
        let promise = js_sys::Promise::new(&mut |resolve, reject| {
            // A synchronous throw settles the promise too, so the walk never hangs.
            if let Err(e) = reader.read_entries_with_callback_and_callback(&resolve, &reject) {
                let _ = reject.call1(&JsValue::NULL, &e);
            }
        });
        let batch = wasm_bindgen_futures::JsFuture::from(promise)
            .await
            .map_err(|_| format!("cannot read the folder {}", dir.full_path()))?;
        let batch: js_sys::Array = batch.unchecked_into();
        if batch.length() == 0 {
            return Ok(all);
        }
        all.extend(batch.iter().map(|e| e.unchecked_into::<FileSystemEntry>()));
    }
}

async fn file_of(entry: &FileSystemFileEntry) -> Result<File, String> {
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        entry.file_with_callback_and_callback(&resolve, &reject);
    });
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|f: JsValue| f.unchecked_into())
        .map_err(|_| format!("cannot read {}", entry.full_path()))
}

/// The browser's `showDirectoryPicker`, where it has one (Chromium; not Firefox or Safari).
pub fn directory_picker() -> Option<js_sys::Function> {
    let window = web_sys::window()?;
    js_sys::Reflect::get(&window, &"showDirectoryPicker".into())
        .ok()?
        .dyn_into()
        .ok()
}

/// Asks for a folder with `picker` ([`directory_picker`]) and lists its files as
/// [`files_of`] lists a dropped folder's: paths relative to the folder's parent (the folder's
/// name first, as a `webkitdirectory` pick names them), only `.json`, `.jsonl` and archive
/// files (the others counted), in the order a folder walk visits them. `None`: the user closed
/// the picker.
pub async fn pick_folder(
    picker: &js_sys::Function,
) -> Result<Option<(Vec<(File, String)>, usize)>, String> {
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"mode".into(), &"read".into());
    let asked = picker
        .call1(&JsValue::UNDEFINED, &options)
        .map_err(|e| format!("cannot open the folder picker: {}", error_text(&e)))?;
    let root = match wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(asked)).await {
        Ok(handle) => handle.unchecked_into::<FileSystemDirectoryHandle>(),
        Err(e) if error_name(&e) == "AbortError" => return Ok(None),
        Err(e) => return Err(format!("cannot open the folder: {}", error_text(&e))),
    };
    let mut wanted: Vec<(FileSystemFileHandle, String)> = Vec::new();
    let mut skipped = 0;
    // Folders are listed many at once: listing one is a few round trips to the browser's
    // process, and a leaderboard folder holds one folder per scenario (thousands).
    let mut frontier = vec![(root.clone(), root.name())];
    while !frontier.is_empty() {
        let batch: Vec<_> = frontier
            .drain(..frontier.len().min(FOLDERS_AT_ONCE))
            .collect();
        let listings: js_sys::Array = batch
            .iter()
            .map(|(dir, path)| {
                let (dir, path) = (dir.clone(), path.clone());
                wasm_bindgen_futures::future_to_promise(async move {
                    children(&dir, &path)
                        .await
                        .map(|c| c.into_iter().collect::<js_sys::Array>().into())
                        .map_err(|e| JsValue::from_str(&e))
                })
            })
            .collect();
        let listings = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::all(&listings))
            .await
            .map_err(|e| e.as_string().unwrap_or_else(|| error_text(&e)))?;
        let listings: js_sys::Array = listings.unchecked_into();
        for ((_, path), listing) in batch.iter().zip(listings.iter()) {
            let listing: js_sys::Array = listing.unchecked_into();
            for child in listing.iter() {
                let child: FileSystemHandle = child.unchecked_into();
                let child_path = format!("{path}/{}", child.name());
                match child.kind() {
                    FileSystemHandleKind::Directory => {
                        frontier.push((child.unchecked_into(), child_path))
                    }
                    _ if is_rollout_file_name(&child_path) => {
                        wanted.push((child.unchecked_into(), child_path))
                    }
                    _ => skipped += 1,
                }
            }
        }
    }
    wanted.sort_by(|a, b| crate::ingest::path_order(&a.1, &b.1));
    // Each `getFile` is a round trip to the browser's process: asked for many at once.
    let mut out = Vec::with_capacity(wanted.len());
    for batch in wanted.chunks(FILES_AT_ONCE) {
        let promises: js_sys::Array = batch.iter().map(|(h, _)| h.get_file()).collect();
        let files = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::all(&promises))
            .await
            .map_err(|e| format!("cannot read a file of the folder: {}", error_text(&e)))?;
        let files: js_sys::Array = files.unchecked_into();
        for ((_, path), file) in batch.iter().zip(files.iter()) {
            out.push((file.unchecked_into::<File>(), path.clone()));
        }
    }
    Ok(Some((out, skipped)))
}

/// `getFile` calls in flight at once.
const FILES_AT_ONCE: usize = 256;
/// Folders listed at once.
const FOLDERS_AT_ONCE: usize = 64;

/// A directory handle's entries (its async iterator of handles, walked to the end).
async fn children(
    dir: &FileSystemDirectoryHandle,
    path: &str,
) -> Result<Vec<FileSystemHandle>, String> {
    let unreadable = |e: JsValue| format!("cannot read the folder {path}: {}", error_text(&e));
    let entries = dir.values();
    let mut out = Vec::new();
    loop {
        let next = entries.next().map_err(unreadable)?;
        let step = wasm_bindgen_futures::JsFuture::from(next)
            .await
            .map_err(unreadable)?;
        let done = js_sys::Reflect::get(&step, &"done".into())
            .ok()
            .is_some_and(|d| d.is_truthy());
        if done {
            return Ok(out);
        }
        if let Ok(value) = js_sys::Reflect::get(&step, &"value".into()) {
            out.push(value.unchecked_into());
        }
    }
}

fn error_name(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_default()
}

fn error_text(e: &JsValue) -> String {
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|n| n.as_string())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| error_name(e))
}
