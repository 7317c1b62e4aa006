//! Hostile Inspect logs, with memory measured by a counting allocator (one test, so nothing else
//! runs in this process while it measures): a 50 MB sample in a `.json` log and in a `.eval`
//! archive is read with bounded memory; a zip bomb (an entry inflating far past the 256 MiB
//! per-entry cap, and one that declares such a size) is refused with a clear message, costing at
//! most the cap.

use std::sync::atomic::Ordering;

use prefix_exec::formats::inspect::archive::build_zip;
use prefix_exec::formats::inspect::MAX_ENTRY_BYTES;
use prefix_exec::ingest::Ingest;
use prefix_exec::rollout::Corpus;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{LIVE, PEAK};

fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - base)
}

const MB: usize = 1 << 20;

const HEADER: &str = r#"{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"},
 "results": {"scores": [{"name": "s", "scorer": "s", "metrics": {"accuracy": {"value": 1.0}}}]}}"#;

/// A sample whose one tool call carries `n` bytes of arguments.
fn big_sample(id: u32, n: usize) -> String {
    format!(
        r#"{{"id": {id}, "epoch": 1, "messages": [{{"role": "assistant", "tool_calls": [{{"id": "a", "function": "write", "arguments": {{"text": "{}"}}}}]}}, {{"role": "tool", "tool_call_id": "a", "content": "ok"}}], "scores": {{"s": {{"value": "C"}}}}}}"#,
        "x".repeat(n)
    )
}

fn messages(c: &Corpus) -> String {
    c.diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn big_and_bomb_inspect_logs_take_bounded_memory() {
    // A .json log with a 50 MB sample between two small ones, pushed in 4 MiB chunks.
    let json = format!(
        "{}, \"samples\": [{}, {}, {}]}}",
        &HEADER[..HEADER.len() - 1],
        big_sample(1, 10),
        big_sample(2, 50 * MB),
        big_sample(3, 10)
    );
    let (corpus, peak) = peak_during(|| {
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("big.json");
        for c in json.as_bytes().chunks(4 * MB) {
            ingest.push(f, c);
        }
        ingest.end_file(f);
        ingest.finish()
    });
    eprintln!(".json log with a 50 MB sample: peak {} MB", peak / MB);
    assert_eq!(corpus.rollouts.len(), 3, "{}", messages(&corpus));
    // The sample's bytes, its parsed form, the rendered canonical line and that line's parse
    // are each about 50 MB, one after another, with some overlap (measured: 200 MB; a 50 MB
    // canonical line peaks at 114 MB): linear in the largest sample, never the whole log.
    assert!(peak < 9 * 50 * MB / 2, "{} MB", peak / MB);

    // The same samples in a .eval, read by random access.
    let samples = [big_sample(1, 10), big_sample(2, 50 * MB), big_sample(3, 10)];
    let mut entries: Vec<(String, &[u8])> = vec![("header.json".into(), HEADER.as_bytes())];
    for (i, s) in samples.iter().enumerate() {
        entries.push((format!("samples/{}_epoch_1.json", i + 1), s.as_bytes()));
    }
    let refs: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let zip = build_zip(&refs, 8, None);
    drop(samples);
    let (corpus, peak) = peak_during(|| {
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("big.eval");
        ingest.read_archive(f, &mut &zip[..]);
        ingest.finish()
    });
    eprintln!(".eval with a 50 MB sample: peak {} MB", peak / MB);
    assert_eq!(corpus.rollouts.len(), 3, "{}", messages(&corpus));
    assert!(peak < 9 * 50 * MB / 2, "{} MB", peak / MB);

    // A zip bomb: 300 zstd frames of 1 MiB of spaces each (a few KB compressed) inflate to
    // 300 MiB, over the cap. Declaring 1,000 bytes, it stops at its declared size; declaring
    // 4 GiB, it is refused before any decompression; declaring 255 MiB (under the cap), it stops
    // there.
    let frame = ruzstd::encoding::compress_to_vec(
        &vec![b' '; MB][..],
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let bomb: Vec<u8> = frame.repeat(300);
    let cap = MAX_ENTRY_BYTES as usize;
    for declared in [None, Some(u32::MAX), Some(255 << 20)] {
        let zip = bomb_zip(&bomb, declared);
        let (corpus, peak) = peak_during(|| {
            let mut ingest = Ingest::new();
            let f = ingest.begin_file("bomb.eval");
            ingest.read_archive(f, &mut &zip[..]);
            ingest.finish()
        });
        eprintln!("zip bomb (declared {declared:?}): peak {} MB", peak / MB);
        let m = messages(&corpus);
        assert!(m.contains("zip bomb"), "{m}");
        assert!(corpus.rollouts.is_empty());
        let bound = match declared {
            None | Some(u32::MAX) => 8 * MB,
            Some(d) => d as usize + 8 * MB,
        };
        assert!(peak < bound.min(cap + 8 * MB), "{} MB", peak / MB);
    }
}

/// A .eval whose one sample entry is the raw zstd data `body` (its CRC is irrelevant: the cap
/// stops decompression first).
fn bomb_zip(body: &[u8], declared: Option<u32>) -> Vec<u8> {
    let header = build_zip(&[("header.json", HEADER.as_bytes())], 8, None);
    // Build with a placeholder, then splice the raw body in: build_zip compresses its input,
    // so write the entry by hand from the same layout.
    let name = b"samples/1_epoch_1.json";
    let local_at = header.len() - (header.len() - central_start(&header));
    let mut out = header[..local_at].to_vec();
    let offset = out.len() as u32;
    let mut fields = Vec::new();
    fields.extend_from_slice(&20u16.to_le_bytes());
    fields.extend_from_slice(&0u16.to_le_bytes());
    fields.extend_from_slice(&93u16.to_le_bytes());
    fields.extend_from_slice(&[0, 0, 0x21, 0]);
    fields.extend_from_slice(&0u32.to_le_bytes());
    fields.extend_from_slice(&(body.len() as u32).to_le_bytes());
    fields.extend_from_slice(&declared.unwrap_or(1000).to_le_bytes());
    fields.extend_from_slice(&(name.len() as u16).to_le_bytes());
    fields.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(b"PK\x03\x04");
    out.extend_from_slice(&fields);
    out.extend_from_slice(name);
    out.extend_from_slice(body);
    let cd_at = out.len() as u32;
    let old_cd = &header[central_start(&header)..header.len() - 22];
    out.extend_from_slice(old_cd);
    out.extend_from_slice(b"PK\x01\x02");
    out.extend_from_slice(&20u16.to_le_bytes());
    out.extend_from_slice(&fields);
    out.extend_from_slice(&[0; 6]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(name);
    let cd_len = out.len() as u32 - cd_at;
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&cd_len.to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// Where a zip's central directory starts (from its end record, the last 22 bytes).
fn central_start(zip: &[u8]) -> usize {
    let end = &zip[zip.len() - 22..];
    u32::from_le_bytes([end[16], end[17], end[18], end[19]]) as usize
}
