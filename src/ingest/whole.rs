//! Whole files read ahead: natively, a folder of many small files is read on several threads.
//!
//! [`PreparedFile::new`] takes a file's bytes and computes, on whatever thread it is called,
//! what follows from those bytes alone: their hash (to tell repeats), whether the file is a whole
//! JSON document, its line count, its format
//! (`classify_document`, with the top-level object's scan) and its format reader's context-free
//! reading ([`crate::formats::FormatReader::prepare_document`]: a ToolSandbox trajectory reduced
//! to its calls). The CLI prepares the small files of its inputs this way on rayon's pool, a
//! bounded window ahead of the file being ingested, and hands each to
//! [`Ingest::push_prepared_file`](super::Ingest::push_prepared_file) in input order.
//!
//! A prepared reading is a pure function of the file's bytes, which the [`PreparedFile`] owns
//! and pushes itself, and it is used only where the file, read as usual, reaches the same
//! step (a buffered document, classified); everything order-dependent (repeats, joins with
//! other files, diagnostics, [`crate::rollout::Corpus::add_rollout`]) still happens in input
//! order in the ingest. The corpus is therefore the one [`Ingest::push`](super::Ingest::push)
//! and [`Ingest::end_file`](super::Ingest::end_file) build, whatever the number of threads
//! (`tests/parallel_parse.rs`).

use xxhash_rust::xxh3::{xxh3_128, Xxh3};

use super::framing::{count_lines, strip_bom};
use super::sniff::{binary_kind, classify_scanned, sniff, Sniff, PROBE};
use super::ZIP_MAGIC;
use crate::formats::scan::{skip_ws, Scanned};
use crate::formats::{readers, Format, FormatReader};

/// A whole file's bytes and what was computed from them ahead; see the module documentation.
pub struct PreparedFile {
    pub(crate) bytes: Vec<u8>,
    /// The hash of the bytes, as a fresh file's mark would take it when they are pushed.
    pub(crate) hash: Hash,
    pub(crate) document: Option<PreparedDocument>,
}

/// A prepared file's hash. A document's is final (`xxh3_128`: the digest the ingest's streaming
/// hash reaches, taken where the file was prepared, a pool worker say): nothing more is hashed
/// for a file read as a document. Any other file's is the hasher, which the ingest goes on
/// feeding (its first bytes are pushed again once its format is told).
pub(crate) enum Hash {
    Digest(u128),
    Hasher(Box<Xxh3>),
}

/// A whole JSON document's classification and its reader's reading, computed ahead.
pub(crate) struct PreparedDocument {
    pub(crate) classified: Result<(Format, Option<Scanned>), String>,
    pub(crate) reading: Option<crate::formats::PreparedDocument>,
    /// The file's lines ([`count_lines`]).
    pub(crate) lines: u64,
}

impl std::fmt::Debug for PreparedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedFile")
            .field("bytes", &self.bytes.len())
            .field("document", &self.document.is_some())
            .finish()
    }
}

impl PreparedFile {
    /// The whole file `bytes`, with what can be read from them alone (a pure function: call it
    /// on any thread).
    pub fn new(bytes: Vec<u8>) -> PreparedFile {
        let document = prepare_document(&bytes, &readers());
        PreparedFile::hashed(bytes, document)
    }

    /// The whole file `bytes`, with what a pool worker computed from the same bytes
    /// ([`prepare_encoded`]: the hash too); `encoded` that does not decode (or `None`) leaves
    /// the file to be read as usual, and the hash is taken here.
    pub fn with_encoded(bytes: Vec<u8>, encoded: Option<&[u8]>) -> PreparedFile {
        match encoded.and_then(|e| decode_document(e, &bytes)) {
            Some((document, digest)) => PreparedFile {
                bytes,
                hash: Hash::Digest(digest),
                document: Some(document),
            },
            None => PreparedFile::hashed(bytes, None),
        }
    }

    fn hashed(bytes: Vec<u8>, document: Option<PreparedDocument>) -> PreparedFile {
        let hash = if document.is_some() {
            Hash::Digest(xxh3_128(&bytes))
        } else {
            let mut hasher = Box::new(Xxh3::new());
            hasher.update(&bytes);
            Hash::Hasher(hasher)
        };
        PreparedFile {
            bytes,
            hash,
            document,
        }
    }

    /// The file's bytes, as [`Ingest::push_prepared_file`](super::Ingest::push_prepared_file)
    /// will push them.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// What [`PreparedFile::new`] computes from `bytes` besides their hash, in the compact form
/// sent between workers (postcard), for [`PreparedFile::with_encoded`] on the worker holding
/// the ingest: the browser's pool workers prepare an archive's members this way. `None` where
/// there is nothing to send: not a whole document, or its reader's reading has no compact form
/// ([`crate::formats::FormatReader::prepare_encoded`]), or it was classified without one (the
/// classification's scan is not sent; a reader that reads the document from it reads it where
/// it is ingested).
pub fn prepare_encoded(bytes: &[u8]) -> Option<Vec<u8>> {
    let readers = readers();
    let classified = match classify_whole(bytes, &readers)? {
        Err(message) => Err(message),
        Ok((format, scanned)) => {
            let reader = readers.iter().find(|r| r.formats().contains(&format))?;
            Ok((
                format,
                reader.prepare_encoded(format, bytes, scanned.as_ref())?,
            ))
        }
    };
    postcard::to_allocvec(&WireDocument {
        classified,
        lines: count_lines(bytes),
        digest: xxh3_128(bytes),
    })
    .ok()
}

/// Whether [`prepare_encoded`]'s bytes can spare the worker holding the ingest more than the
/// copies to another worker and back cost: only an object's can (a ToolSandbox summary's or
/// execution context's reading comes back whole). An array's (a ToolSandbox
/// `conversation.json`, tau-bench results) comes back as its format alone, which its first
/// element tells there for less. Where a file is prepared never changes its reading.
pub fn worth_encoding(bytes: &[u8]) -> bool {
    let body = strip_bom(bytes);
    body.get(skip_ws(body, 0)) == Some(&b'{')
}

/// A [`PreparedDocument`] as sent between workers.
#[derive(serde::Serialize, serde::Deserialize)]
struct WireDocument {
    /// The format and its reader's encoded reading, or why the document was not classified.
    classified: Result<(Format, Vec<u8>), String>,
    lines: u64,
    /// The bytes' hash, taken where they were prepared (off the thread holding the ingest).
    digest: u128,
}

fn decode_document(encoded: &[u8], bytes: &[u8]) -> Option<(PreparedDocument, u128)> {
    let wire: WireDocument = postcard::from_bytes(encoded).ok()?;
    let (classified, reading) = match wire.classified {
        Err(message) => (Err(message), None),
        Ok((format, reading)) => {
            let readers = readers();
            let reader = readers.iter().find(|r| r.formats().contains(&format))?;
            let reading = reader.decode_prepared(format, &reading, bytes)?;
            (Ok((format, None)), Some(reading))
        }
    };
    Some((
        PreparedDocument {
            classified,
            reading,
            lines: wire.lines,
        },
        wire.digest,
    ))
}

/// The document's classification and reading, when the file looks like a whole JSON document
/// (as the ingest will tell at its end: not an archive, not binary, not streamed, a document by
/// its first line). A guess only decides whether the work is done ahead: the ingest uses it
/// only for a file it buffered as a document.
fn prepare_document(bytes: &[u8], readers: &[Box<dyn FormatReader>]) -> Option<PreparedDocument> {
    let classified = classify_whole(bytes, readers)?;
    let reading = classified.as_ref().ok().and_then(|(format, scanned)| {
        readers
            .iter()
            .find(|r| r.formats().contains(format))?
            .prepare_document(*format, bytes, scanned.as_ref())
    });
    Some(PreparedDocument {
        classified,
        reading,
        lines: count_lines(bytes),
    })
}

/// The classification of `bytes` as a whole JSON document, when they look like one (see
/// [`prepare_document`]).
fn classify_whole(
    bytes: &[u8],
    readers: &[Box<dyn FormatReader>],
) -> Option<Result<(Format, Option<Scanned>), String>> {
    let probe = &bytes[..bytes.len().min(PROBE)];
    if bytes.starts_with(ZIP_MAGIC) || binary_kind(probe).is_some() {
        return None;
    }
    if readers.iter().any(|r| r.recognise_stream(probe).is_some())
        || sniff(bytes, true, readers) != Sniff::Document
    {
        return None;
    }
    Some(classify_scanned(bytes, readers))
}

#[cfg(test)]
mod tests {
    use super::{prepare_encoded, worth_encoding, Hash, PreparedFile};
    use xxhash_rust::xxh3::Xxh3;

    fn digest(file: PreparedFile) -> u128 {
        match file.hash {
            Hash::Digest(d) => d,
            Hash::Hasher(h) => h.digest128(),
        }
    }

    /// A prepared file's digest (one pass, here or on a pool worker) is the one the ingest's
    /// streaming hasher reaches on the same bytes pushed in pieces: repeats are told the same.
    #[test]
    fn a_prepared_digest_is_the_streamed_one() {
        let doc = br#"{"_dbs": {"a": [1, 2, 3]}, "text": "x"}"#.to_vec();
        let long: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for bytes in [
            Vec::new(),
            b"x".to_vec(),
            vec![b'a'; 240],
            vec![b'b'; 241],
            doc,
            long,
        ] {
            let mut streamed = Xxh3::new();
            for piece in bytes.chunks(1000) {
                streamed.update(piece);
            }
            let want = streamed.digest128();
            assert_eq!(digest(PreparedFile::new(bytes.clone())), want);
            let encoded = prepare_encoded(&bytes);
            let file = PreparedFile::with_encoded(bytes.clone(), encoded.as_deref());
            // Only a document's hash is taken whole.
            assert_eq!(
                matches!(file.hash, Hash::Digest(_)),
                file.document.is_some()
            );
            assert_eq!(digest(file), want);
        }
    }

    #[test]
    fn only_objects_are_worth_encoding() {
        assert!(worth_encoding(b"{\"_dbs\": {}}"));
        assert!(worth_encoding(b"\xEF\xBB\xBF \n\t{\n}"));
        assert!(!worth_encoding(b"[\n  {\"role\": \"system\"}\n]"));
        assert!(!worth_encoding(b"\xEF\xBB\xBF  [1]"));
        assert!(!worth_encoding(b""));
        assert!(!worth_encoding(b" \n "));
        assert!(!worth_encoding(b"{\"dataset\": 1}"[1..].as_ref()));
    }
}
