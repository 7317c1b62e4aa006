//! What a file is, from its first bytes: binary or text (`binary_kind`), and which format
//! reads it (`sniff`, asking each `FormatReader` in registry order).
//!
//! Format detection by content, never by file name: browsers hand over files under any name
//! (`results (3).json`, `download.txt`), and the same `.json` extension covers JSON Lines and
//! whole documents.
//!
//! Detection looks at the first bytes only, so canonical JSONL keeps streaming line by line:
//! - the first non-blank byte is `[` and the first line is not a complete array by itself, or
//!   the first line is a lone `{` (pretty-printed), or an object that its first line leaves open
//!   and the first 4 KiB continue without a syntax error (wrapped by hand) → a **whole JSON
//!   document**, buffered and classified by `classify_document` when the file ends;
//! - otherwise the first line is read as a JSON object and its keys decide: `accuracy` +
//!   `correct_count` + `total_count` → BFCL score; `id` with `result`, `inference_log` or
//!   `traceback` → BFCL result; `info`/`simulations`/`traj`/`messages` → a whole document
//!   written on one line; anything else → canonical JSONL.
//!
//! A file whose first line matches nothing is read as canonical JSONL, so each bad line gets its
//! own diagnostic as before; if it then yields no rollout, the file-level message names every
//! format tried ([`tried`]).

use serde::de::IgnoredAny;

use super::framing::{strip_bom, BOM};
use crate::formats::scan::{elements, scan_object, skip_ws, value_end, Scanned};
use crate::formats::{Format, FormatReader, Keys, LineShape};

/// The readers asked, in order.
type Readers = [Box<dyn FormatReader>];

/// How a file is read, as far as its first bytes tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sniff {
    /// Not enough bytes yet (no complete first line).
    NeedMore,
    /// Line by line, in this format; `recognised` is false when the first line matched nothing
    /// and canonical JSONL is only the fallback.
    Lines { format: Format, recognised: bool },
    /// A whole JSON document: buffer the file.
    Document,
}

/// Looks at the start of a file. `eof` says the whole file is in `head`.
pub(crate) fn sniff(head: &[u8], eof: bool, readers: &Readers) -> Sniff {
    if !eof && head.len() < 3 && BOM.starts_with(head) {
        // Possibly the start of a byte-order mark split across chunks.
        return Sniff::NeedMore;
    }
    let body = strip_bom(head);
    let start = skip_ws(body, 0);
    let Some(&first) = body.get(start) else {
        // An empty (or blank) file is not a detection failure: it just holds nothing.
        return if eof {
            Sniff::Lines {
                format: Format::Canonical,
                recognised: true,
            }
        } else {
            Sniff::NeedMore
        };
    };
    let line_end = body[start..].iter().position(|&b| b == b'\n');
    let Some(line) = line_end
        .map(|n| &body[start..start + n])
        .or(eof.then_some(&body[start..]))
    else {
        // `[` starts a document unless the array closes on its first line; wait for the line.
        return Sniff::NeedMore;
    };
    let line = trim_end(line);
    match first {
        b'[' => match value_end(line, 0) {
            // A whole array on the first line: a one-line document if it holds objects of a
            // known format, else a bad canonical line.
            Ok(end) if skip_ws(line, end) == line.len() => match classify_array(line, readers) {
                Some(_) => Sniff::Document,
                None => Sniff::Lines {
                    format: Format::Canonical,
                    recognised: false,
                },
            },
            Ok(_) => Sniff::Lines {
                format: Format::Canonical,
                recognised: false,
            },
            Err(_) => Sniff::Document,
        },
        b'{' if line == b"{" => Sniff::Document,
        b'{' => {
            match serde_json::from_slice::<std::collections::BTreeMap<String, IgnoredAny>>(line) {
                Ok(map) => {
                    let keys: Keys<'_> = map.keys().map(String::as_str).collect();
                    match readers.iter().find_map(|r| r.recognise_line(&keys)) {
                        Some(LineShape::Lines(format)) => Sniff::Lines {
                            format,
                            recognised: true,
                        },
                        Some(LineShape::Document) => Sniff::Document,
                        None => Sniff::Lines {
                            format: Format::Canonical,
                            recognised: false,
                        },
                    }
                }
                // An object that goes on past its first line (a record wrapped by hand or by a
                // pretty-printer that keeps a few members per line) is a document when the
                // probe continues it without a syntax error; a JSONL file whose first line is
                // merely cut is not (its second line breaks the object).
                Err(e) if e.is_eof() && continues_object(head) => Sniff::Document,
                Err(_) => Sniff::Lines {
                    format: Format::Canonical,
                    recognised: false,
                },
            }
        }
        _ => Sniff::Lines {
            format: Format::Canonical,
            recognised: false,
        },
    }
}

/// Whether the first [`PROBE`] bytes (the same bytes however the file is chunked) are the start
/// of one JSON object: they parse, or end before the object does.
fn continues_object(head: &[u8]) -> bool {
    let probe = strip_bom(&head[..head.len().min(PROBE)]);
    match serde_json::from_slice::<IgnoredAny>(probe) {
        Ok(_) => true,
        Err(e) => e.is_eof(),
    }
}

fn trim_end(mut b: &[u8]) -> &[u8] {
    while let [rest @ .., last] = b {
        if last.is_ascii_whitespace() {
            b = rest;
        } else {
            break;
        }
    }
    b
}

/// The format of a whole JSON document, or a message naming every format tried.
#[cfg(test)]
pub(crate) fn classify_document(bytes: &[u8], readers: &Readers) -> Result<Format, String> {
    classify_scanned(bytes, readers).map(|(format, _)| format)
}

/// [`classify_document`], with the document's top-level object as it was scanned to classify
/// it (offsets into `bytes`), when the document is an object.
pub(crate) fn classify_scanned(
    bytes: &[u8],
    readers: &Readers,
) -> Result<(Format, Option<Scanned>), String> {
    let body = strip_bom(bytes);
    let start = skip_ws(body, 0);
    match body.get(start) {
        Some(b'[') => classify_array(&body[start..], readers)
            .map(|f| (f, None))
            .ok_or_else(|| {
                format!(
                "a JSON array whose first element is not a tau-bench result ({{task_id, trial, \
                 reward, info, traj}}), a tau2 simulation ({{task_id, messages, reward_info}}), a \
                 message transcript ({{messages, …}} with an outcome field) nor a ToolSandbox \
                 conversation message ({{role, content}}); {}",
                tried()
            )
            }),
        Some(b'{') => {
            let bom = bytes.len() - body.len();
            let scanned = scan_object(bytes, bom + start, None);
            match readers
                .iter()
                .find_map(|r| r.recognise_object(bytes, &scanned.members))
            {
                Some(format) => Ok((format, Some(scanned))),
                None => Err(format!(
                    "a JSON object that is neither a tau2 Results object ({{info, tasks, \
                     simulations}}), a tau2 results.json with a simulation_index, one tau2 \
                     simulation ({{task_id, messages, reward_info}}), a message transcript \
                     ({{messages, conversation, items or input}} with an outcome field), nor a \
                     ToolSandbox result_summary.json or execution_context.json; {}",
                    tried()
                )),
            }
        }
        _ => Err(format!("not a JSON document; {}", tried())),
    }
}

/// Classifies an array by the keys of its first element.
fn classify_array(b: &[u8], readers: &Readers) -> Option<Format> {
    let mut it = elements(b, 0);
    let first = it.next()?.ok()?;
    let map: std::collections::BTreeMap<String, IgnoredAny> =
        serde_json::from_slice(&b[first.start..first.end]).ok()?;
    let keys: Keys<'_> = map.keys().map(String::as_str).collect();
    readers.iter().find_map(|r| r.recognise_array(&keys))
}

/// How many first bytes of a file decide whether it is binary.
pub(crate) const PROBE: usize = 4096;

/// What a binary file looks like, from its first bytes (at most [`PROBE`]): a known magic
/// number, a UTF-16 byte-order mark, or mostly NUL bytes and bytes that are not UTF-8. `None`
/// for text, including text with a few stray bad bytes: those make line errors, so the valid
/// lines around them are still read.
pub(crate) fn binary_kind(probe: &[u8]) -> Option<&'static str> {
    // UTF-16 is told by its byte-order mark and the NUL bytes of its ASCII characters (a BOM
    // alone could be two stray bytes before UTF-8 text, which is read line by line).
    let after_bom = &probe[probe.len().min(2)..probe.len().min(66)];
    if (probe.starts_with(b"\xff\xfe") || probe.starts_with(b"\xfe\xff")) && after_bom.contains(&0)
    {
        return Some("UTF-16 text (save it as UTF-8)");
    }
    const MAGIC: [(&[u8], &str); 6] = [
        (b"\x89PNG", "a PNG image"),
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a zip archive"),
        (b"\x1f\x8b", "a gzip file (decompress it first)"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
    ];
    if let Some((_, kind)) = MAGIC.iter().find(|(m, _)| probe.starts_with(m)) {
        return Some(kind);
    }
    if probe.len() < 16 {
        return None;
    }
    // Text, the common case, is told without decoding it char by char: valid UTF-8 holding no
    // NUL and no replacement character, but maybe for a character cut at the probe's end (one
    // replacement character when decoded).
    let (valid, cut) = match std::str::from_utf8(probe) {
        Ok(s) => (Some(s), false),
        Err(e) if e.error_len().is_none() => {
            (std::str::from_utf8(&probe[..e.valid_up_to()]).ok(), true)
        }
        Err(_) => (None, true),
    };
    let plain = |v: &&str| {
        memchr::memchr(0, v.as_bytes()).is_none()
            && memchr::memmem::find(v.as_bytes(), "\u{FFFD}".as_bytes()).is_none()
    };
    if let Some(valid) = valid.filter(plain) {
        // Valid UTF-8 is text; a character cut at the probe's end is one bad character, and
        // more than one in ten makes it binary.
        return (cut && 10 > valid.chars().count() + 1).then_some("a binary file");
    }
    let text = String::from_utf8_lossy(probe);
    let bad = text
        .chars()
        .filter(|&c| c == '\u{FFFD}' || c == '\0')
        .count();
    (bad * 10 > text.chars().count()).then_some("a binary file")
}

/// The list of formats tried, for detection failures.
pub fn tried() -> String {
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.describe()).collect();
    format!("formats tried: {}", names.join("; "))
}

#[cfg(test)]
mod tests {
    use super::{Format, Sniff};

    fn sniff(head: &[u8], eof: bool) -> Sniff {
        super::sniff(head, eof, &crate::formats::readers())
    }

    fn classify_document(bytes: &[u8]) -> Result<Format, String> {
        super::classify_document(bytes, &crate::formats::readers())
    }

    fn lines(format: Format) -> Sniff {
        Sniff::Lines {
            format,
            recognised: true,
        }
    }

    const FALLBACK: Sniff = Sniff::Lines {
        format: Format::Canonical,
        recognised: false,
    };

    #[test]
    fn first_lines() {
        let cases: [(&str, Sniff); 14] = [
            (r#"{"dataset":"d","task_id":1}"#, lines(Format::Canonical)),
            (r#"{"tools":[]}"#, lines(Format::Canonical)),
            (
                r#"{"accuracy": 0.5, "correct_count": 1, "total_count": 2}"#,
                lines(Format::BfclScore),
            ),
            (
                r#"{"id": "multi_turn_base_0", "result": []}"#,
                lines(Format::BfclResult),
            ),
            (
                r#"{"id": "x", "traceback": "…", "result": "Error"}"#,
                lines(Format::BfclResult),
            ),
            ("{", Sniff::Document),
            ("  {  \r", Sniff::Document),
            ("[", Sniff::Document),
            (r#"[{"task_id": 0, "traj": []}]"#, Sniff::Document),
            (r#"{"info": {}, "simulations": []}"#, Sniff::Document),
            ("[1, 2]", FALLBACK),
            ("not json", FALLBACK),
            ("{}", FALLBACK),
            (r#"{"dataset":"d"} trailing"#, FALLBACK),
        ];
        for (line, want) in cases {
            assert_eq!(
                sniff(format!("{line}\nmore").as_bytes(), false),
                want,
                "{line}"
            );
            assert_eq!(sniff(line.as_bytes(), true), want, "{line} at eof");
        }
    }

    #[test]
    fn objects_wrapped_past_their_first_line() {
        // A record wrapped by hand: a document (a transcript, here).
        let wrapped = "{\"task_id\": \"t\", \"pass\": true,\n \"messages\": []}\n";
        assert_eq!(sniff(wrapped.as_bytes(), true), Sniff::Document);
        assert_eq!(
            sniff(format!("{wrapped}{}", " ".repeat(5000)).as_bytes(), false),
            Sniff::Document
        );
        // JSONL whose first line was cut: line by line, so the next lines are still read.
        let cut = "{\"dataset\": \"d\", \"task_id\": 1,\n{\"dataset\": \"d\"}\n";
        assert_eq!(sniff(cut.as_bytes(), true), FALLBACK);
        let cut = "{\"dataset\": \"d\", \"task_id\": \"x\n{\"dataset\": \"d\"}\n";
        assert_eq!(sniff(cut.as_bytes(), true), FALLBACK);
    }

    #[test]
    fn waits_for_a_whole_first_line() {
        assert_eq!(sniff(b"", false), Sniff::NeedMore);
        assert_eq!(sniff(b"\xEF\xBB", false), Sniff::NeedMore);
        assert_eq!(sniff(b"  \n\n ", false), Sniff::NeedMore);
        assert_eq!(sniff(b"{\"dataset\"", false), Sniff::NeedMore);
        assert_eq!(sniff(b"\xEF\xBB\xBF\n{\n", false), Sniff::Document);
        assert_eq!(sniff(b"", true), lines(Format::Canonical));
        assert_eq!(sniff(b" \n", true), lines(Format::Canonical));
        assert_eq!(sniff(b"\xEF\xBB", true), FALLBACK);
    }

    /// The fast path for text gives the decoding count's answer.
    #[test]
    fn binary_kind_as_counted() {
        fn counted(probe: &[u8]) -> Option<&'static str> {
            let text = String::from_utf8_lossy(probe);
            let bad = text
                .chars()
                .filter(|&c| c == '\u{FFFD}' || c == '\0')
                .count();
            (probe.len() >= 16 && bad * 10 > text.chars().count()).then_some("a binary file")
        }
        let text = "plain text, ünïcödé and 😀 emoji\n".repeat(200);
        let mut probes: Vec<Vec<u8>> = Vec::new();
        for cut in 0..64 {
            probes.push(text.as_bytes()[..text.len().min(4096) - cut].to_vec());
            probes.push("😀".repeat(5).as_bytes()[..20 - cut % 4].to_vec());
            probes.push("é".repeat(9).as_bytes()[..18 - cut % 3].to_vec());
        }
        probes.push(b"sixteen bytes ok\0".to_vec());
        probes.push([b"abcdefghijklmnop".as_slice(), &[0xff, 0xfe, 0x00][..]].concat());
        probes.push("\u{FFFD}".repeat(10).into_bytes());
        probes.push([&[0xc3u8][..], b"abcdefghijklmnopqrstuvwxyz"].concat());
        let mut x = 7u32;
        for len in [16, 17, 40, 100, 4096] {
            for _ in 0..50 {
                probes.push(
                    (0..len)
                        .map(|_| {
                            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                            let b = (x >> 16) as u8;
                            if x % 3 == 0 {
                                b
                            } else {
                                b'a' + b % 26
                            }
                        })
                        .collect(),
                );
            }
        }
        for probe in probes {
            if super::binary_kind(&probe).is_some_and(|k| k != "a binary file") {
                continue;
            }
            assert_eq!(super::binary_kind(&probe), counted(&probe), "{probe:?}");
        }
    }

    #[test]
    fn documents() {
        let ok = |s: &str| classify_document(s.as_bytes());
        assert_eq!(
            ok(r#"[{"task_id":0,"reward":1,"traj":[]}]"#),
            Ok(Format::TauBench)
        );
        assert_eq!(
            ok(r#"[{"task_id":"0","messages":[],"reward_info":{}}]"#),
            Ok(Format::Tau2Simulations)
        );
        assert_eq!(
            ok(r#"{"info":{},"tasks":[],"simulations":[{"a":1}]}"#),
            Ok(Format::Tau2Results)
        );
        assert_eq!(
            ok(r#"{"info":{},"tasks":[],"simulations":[]}"#),
            Ok(Format::Tau2Results)
        );
        assert_eq!(
            ok(r#"{"info":{},"tasks":[],"simulation_index":[]}"#),
            Ok(Format::Tau2RunMetadata)
        );
        assert_eq!(
            ok(r#"{"info":{},"simulations":[],"simulation_index":[{"id":"a"}]}"#),
            Ok(Format::Tau2RunMetadata)
        );
        assert_eq!(
            ok(r#"{"id":"s","task_id":"1","messages":[]}"#),
            Ok(Format::Tau2Simulation)
        );
        let e = ok(r#"{"hello": 1}"#).unwrap_err();
        assert!(e.contains("formats tried") && e.contains("BFCL"), "{e}");
        assert!(ok(r#"[1]"#).unwrap_err().contains("tau-bench"));
        assert!(ok("").is_err());
    }
}
