//! Stable hashing: digests that depend only on the bytes hashed.
//!
//! No random keys, no pointer values, `usize` widened to 64 bits: the same value hashes the
//! same on every platform, in every process and in every run. The history hash
//! ([`crate::trace`]), payload digests and the input encoding's label ids
//! ([`crate::choice::lanes::label_id`]) are all built on it, so it sits at the bottom of the
//! crate and imports nothing from it.
//!
//! ```
//! use sim_core::hash::{stable_hash, stable_hash_bytes};
//!
//! assert_eq!(stable_hash_bytes(b"ping"), stable_hash_bytes(b"ping"));
//! assert_ne!(stable_hash_bytes(b"ping"), stable_hash_bytes(b"pong"));
//! assert_eq!(stable_hash(&(1u64, "a")), stable_hash(&(1u64, "a")));
//! ```

use std::hash::{Hash, Hasher};

/// The 64-bit finaliser the history hash and [`StableHasher`] fold with.
#[inline]
pub(crate) fn mix(mut x: u64) -> u64 {
    // The 64-bit finaliser of MurmurHash3: cheap, platform independent, well mixed.
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// A [`Hasher`] whose output depends only on the bytes written: no random keys, and `usize`
/// is widened to 64 bits so 32- and 64-bit platforms agree. Used for payload digests.
#[derive(Clone, Debug)]
pub struct StableHasher(u64);

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        mix(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = mix(self.0 ^ u64::from_le_bytes(word)).wrapping_add(chunk.len() as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i))
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i))
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i))
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = mix(self.0 ^ i).wrapping_add(1);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64)
    }
}

/// The stable digest of any `Hash` value.
pub fn stable_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = StableHasher::default();
    value.hash(&mut h);
    h.finish()
}

/// The stable digest of a byte string.
pub fn stable_hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = StableHasher::default();
    h.write(bytes);
    h.finish()
}
