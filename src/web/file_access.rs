//! A dropped (or downloaded) file read by offset with `FileReaderSync`, which workers have: what
//! the readers of archives and compressed files take as their `RandomAccess` (`web::worker`,
//! `web::native_decoder`).

use web_sys::{File, FileReaderSync};

/// A dropped file read by offset (a zip's table of contents is at its end): each read is a
/// `FileReaderSync` read of a slice.
pub(super) struct FileAccess<'a> {
    pub(super) file: &'a File,
    pub(super) reader: &'a FileReaderSync,
}

impl crate::formats::inspect::RandomAccess for FileAccess<'_> {
    fn size(&self) -> u64 {
        self.file.size() as u64
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = (offset + buf.len() as u64).min(self.size());
        if offset >= end {
            return Ok(0);
        }
        let failed = || std::io::Error::other(format!("cannot read {}", self.file.name()));
        let blob = self
            .file
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|_| failed())?;
        let buffer = self
            .reader
            .read_as_array_buffer(&blob)
            .map_err(|_| failed())?;
        let array = js_sys::Uint8Array::new(&buffer);
        let n = array.length() as usize;
        array.copy_to(&mut buf[..n]);
        Ok(n)
    }
}
