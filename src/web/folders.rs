//! Dropped folders: the files under each dropped directory, with their paths relative to the
//! drop (`run/result/<model>/…_result.json`), so formats that pair files by folder (BFCL result +
//! score, tau2 directory runs) work as with the CLI.
//!
//! A drop's `DataTransfer` items are readable only during the event, so the entries are taken
//! then; the directory walk (callback-based `FileSystemDirectoryReader`) runs afterwards.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DataTransfer, File, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry};

/// The dropped entries (files and folders), taken while the drop event lasts.
pub fn dropped_entries(dt: &DataTransfer) -> Vec<FileSystemEntry> {
    let items = dt.items();
    (0..items.length())
        .filter_map(|i| items.get(i))
        .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
        .collect()
}

/// Every file under `entries`, with its path relative to the drop (no leading `/`), in the
/// order the browser lists them; of the files inside dropped folders only `.json` and `.jsonl`
/// ones, as the CLI walks a folder (the others are counted: the second value).
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
/// or an archive or compressed file's (a folder's READMEs, logs and `.txt` files are skipped).
pub fn is_rollout_file_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [
        ".json", ".jsonl", ".zip", ".tar", ".tgz", ".gz", ".zst", ".tzst",
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
