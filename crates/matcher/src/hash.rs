//! A deterministic hasher for the index's maps.
//!
//! `std`'s default `RandomState` seeds itself from the system, which on
//! `wasm32-wasip2` imports `wasi:random` — an import the host does not
//! grant (unknown imports trap). The keys here are catalog tokens and small
//! integers, not attacker-chosen at scale (a query is at most 200
//! characters), so a fixed-seed multiplicative hash (the one rustc uses,
//! "FxHash") is enough and faster.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`].
pub type Map<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// An empty [`Map`].
pub fn map<K, V>() -> Map<K, V> {
    Map::default()
}

/// rustc's FxHash: rotate, xor, multiply, one word at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}
