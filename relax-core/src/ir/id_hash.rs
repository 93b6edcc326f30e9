//! Hash maps keyed by identity: [`VarMap`] and [`VarSet`].
//!
//! A [`Var`] hashes as its unique id, a plain integer, so the keyed-SipHash
//! that `HashMap` uses by default (built to resist chosen keys) buys nothing
//! and costs a large share of a pass over a big function. [`IdHasher`] mixes
//! the id with one multiplication (the Fx hash of rustc). The keys are ids
//! the IR hands out, never user data, so there is nothing to attack.

use super::expr::Var;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for small integer keys: one rotate, xor and multiply per word.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(SEED);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// Builds [`IdHasher`]s.
pub type BuildIdHasher = BuildHasherDefault<IdHasher>;

/// A map from variables (by identity).
pub type VarMap<V> = HashMap<Var, V, BuildIdHasher>;

/// A set of variables (by identity).
pub type VarSet = HashSet<Var, BuildIdHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_vars_are_distinct_keys() {
        let vs: Vec<Var> = (0..1000).map(|i| Var::new(format!("v{i}"), None)).collect();
        let mut m: VarMap<usize> = VarMap::default();
        for (i, v) in vs.iter().enumerate() {
            m.insert(v.clone(), i);
        }
        assert_eq!(m.len(), 1000);
        assert!(vs.iter().enumerate().all(|(i, v)| m[v] == i));
        let same_name = Var::new("v0", None);
        assert!(!m.contains_key(&same_name), "identity, not name");
    }
}
