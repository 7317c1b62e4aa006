//! Buffers filled again. A batch's bytes copied into an `ArrayBuffer` that already went round
//! cost no page faults, where a fresh buffer per batch (or per member) did: `pool::whole` keeps
//! the buffers its batches of members come back in, `pool::inflate` the ones its inflated
//! members arrive in (sent back to their pool worker with its next batch).

use js_sys::{ArrayBuffer, Uint8Array};

/// Buffers kept at most.
const KEPT: usize = 8;

/// The buffers kept for reuse.
#[derive(Default)]
pub struct Spare(Vec<ArrayBuffer>);

impl Spare {
    /// Keeps `buffer` for reuse (one moved away since, now empty, is not).
    pub fn keep(&mut self, buffer: ArrayBuffer) {
        if self.0.len() < KEPT && buffer.byte_length() > 0 {
            self.0.push(buffer);
        }
    }

    /// The buffers kept, taken out (to be moved to another worker).
    pub fn take(&mut self) -> Vec<ArrayBuffer> {
        std::mem::take(&mut self.0)
    }

    /// `parts` one after the other in a kept buffer that holds them (a fresh one of at least
    /// `fresh` bytes otherwise, so that it can hold the next batches too): a view of their
    /// length.
    pub fn pack(&mut self, parts: &[&[u8]], fresh: usize) -> Uint8Array {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let buffer = match self
            .0
            .iter()
            .position(|b| b.byte_length() as usize >= total)
        {
            Some(fits) => self.0.swap_remove(fits),
            None => ArrayBuffer::new(total.max(fresh) as u32),
        };
        let array = Uint8Array::new_with_byte_offset_and_length(&buffer, 0, total as u32);
        let mut at = 0u32;
        for part in parts {
            let end = at + part.len() as u32;
            array.subarray(at, end).copy_from(part);
            at = end;
        }
        array
    }
}
