//! Checking a published site's data file against its manifest entry: the size and SHA-256 of
//! the bytes as served, once the worker has read the file while it downloaded.
//!
//! The check runs after the reading, not before it, so a site's numbers come as fast as its
//! data arrives; a mismatch is shown beside them as soon as it is known, never hidden.

use wasm_bindgen_futures::JsFuture;
use web_sys::File;

use crate::site::DataFile;

/// The warning for `file`, the download of `expected`, when it is not the published file.
pub async fn check(file: &File, expected: &DataFile) -> Option<String> {
    let hash = match sha256_hex(file).await {
        Ok(h) => h,
        Err(e) => {
            return Some(format!(
                "{}: could not verify its SHA-256: {e}",
                expected.path
            ))
        }
    };
    let bytes = file.size() as u64;
    if hash == expected.sha256 && bytes == expected.bytes {
        return None;
    }
    Some(format!(
        "{}: the file differs from the one published ({bytes} bytes, SHA-256 {}…; expected {} bytes, {}…). It was modified or truncated: the numbers below are computed from the file as served, not the published one.",
        expected.path,
        &hash[..12],
        expected.bytes,
        &expected.sha256[..expected.sha256.len().min(12)]
    ))
}

/// SHA-256 of a file's bytes by the browser's Web Crypto, as lower-case hex. The bytes go from
/// the file to the digest without a copy in the app's memory.
async fn sha256_hex(file: &File) -> Result<String, String> {
    let crypto = web_sys::window()
        .ok_or("no window")?
        .crypto()
        .map_err(|_| "no Web Crypto in this browser")?;
    let buffer = JsFuture::from(file.array_buffer())
        .await
        .map_err(|_| "the downloaded file could not be read")?;
    let data = js_sys::Uint8Array::new(&buffer);
    let promise = crypto
        .subtle()
        .digest_with_str_and_buffer_source("SHA-256", &data)
        .map_err(|_| {
            "SHA-256 is not available (the page must be served over https or from localhost)"
        })?;
    let digest = JsFuture::from(promise)
        .await
        .map_err(|_| "SHA-256 failed")?;
    Ok(js_sys::Uint8Array::new(&digest)
        .to_vec()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
