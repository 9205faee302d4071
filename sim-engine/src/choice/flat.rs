//! The flat encoding: every draw reads the next bytes of one buffer.
//!
//! This was the encoding of every byte input before [lanes](super::lanes). It is kept so that
//! repro files written then (version 1) still replay the run they recorded; nothing writes it
//! any more. A draw with `bound <= 1` consumes nothing; otherwise it reads the fewest
//! big-endian bytes that hold `bound - 1` and returns the value modulo `bound`; bytes past the
//! end read as zero. A chance reads a draw below its denominator, whatever its odds.

use std::fmt;

use super::{bytes_for_bound, Source};

/// A byte buffer read front to back, every draw taking the next bytes: the encoding of byte
/// inputs before lanes (repro files of version 1).
#[derive(Clone)]
pub struct FlatBytes {
    data: Vec<u8>,
    pos: usize,
    exhausted: bool,
}

impl FlatBytes {
    /// Reads draws from `data`, front to back.
    pub fn new(data: impl Into<Vec<u8>>) -> Self {
        FlatBytes {
            data: data.into(),
            pos: 0,
            exhausted: false,
        }
    }

    /// Bytes consumed so far (at most the buffer's length).
    pub fn consumed(&self) -> usize {
        self.pos.min(self.data.len())
    }

    fn next_byte(&mut self) -> u8 {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => {
                self.exhausted = true;
                0
            }
        }
    }
}

impl fmt::Debug for FlatBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FlatBytes({} of {} consumed)",
            self.consumed(),
            self.data.len()
        )
    }
}

impl Source for FlatBytes {
    fn draw(&mut self, _label: &'static str, bound: u64) -> u64 {
        let width = bytes_for_bound(bound);
        if width == 0 {
            return 0;
        }
        let mut raw = 0u64;
        for _ in 0..width {
            raw = (raw << 8) | u64::from(self.next_byte());
        }
        raw % bound
    }

    fn fill(&mut self, _label: &'static str, buf: &mut [u8]) {
        for b in buf {
            *b = self.next_byte();
        }
    }

    fn is_exhausted(&self) -> bool {
        self.exhausted
    }
}
