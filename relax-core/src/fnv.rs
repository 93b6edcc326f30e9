//! FNV-1a, 64-bit: the stable hash (the same across runs, processes and
//! platforms) behind the structural hash, the DSL's content hash, the AOT
//! artifact hash and the tuning database's CPU key.

use std::hash::Hasher;

/// The FNV-1a state, as a [`Hasher`]; `Fnv1a::default()` is the offset
/// basis.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a(u64);

impl Fnv1a {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
}

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(Self::OFFSET)
    }
}

impl Hasher for Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The FNV-1a hash of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::default();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        // Writing in pieces is writing the whole.
        let mut h = Fnv1a::default();
        h.write(b"ab");
        h.write(b"c");
        assert_eq!(h.finish(), fnv1a(b"abc"));
    }
}
