//! Random streams keyed by `(seed, replicate, round, client, step)`.
//!
//! Every random draw of a run comes from a ChaCha8 stream whose key is derived from where the draw
//! is used, never from the order in which draws are made. A result therefore does not depend on
//! evaluation order or thread count, and a single client's noise can be regenerated alone.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The client slot used for the server's client-sampling stream.
pub const SAMPLING_SLOT: u64 = u64::MAX;

/// SplitMix64 finalizer: a bijective 64-bit mixer (Steele, Lea, Flood 2014).
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where a draw is used. `client` is [`SAMPLING_SLOT`] for the sampling of the round's clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamKey {
    /// The scenario's seed.
    pub seed: u64,
    /// Monte Carlo replicate index.
    pub replicate: u64,
    /// Outer round index `t` (use `u64::MAX - 1` for an initialization round).
    pub round: u64,
    /// Client index `i`, or [`SAMPLING_SLOT`].
    pub client: u64,
}

impl StreamKey {
    /// The ChaCha8 key of this `(seed, replicate, round, client)`: every local step's stream
    /// shares it and differs by its stream id, so a caller drawing many steps of one client
    /// derives it once ([`StreamKey::rng_with_key`]).
    pub fn key_bytes(&self) -> [u8; 32] {
        let mut words = [0u64; 4];
        let mut acc = mix64(self.seed ^ 0x6665_6462_6F75_6E64);
        for (slot, part) in words.iter_mut().zip([self.replicate, self.round, self.client, 0x5EED]) {
            acc = mix64(acc ^ mix64(part));
            *slot = acc;
        }
        let mut bytes = [0u8; 32];
        for (chunk, w) in bytes.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        bytes
    }

    /// The ChaCha8 generator for this key and local step `step` (the ChaCha stream id).
    pub fn rng(&self, step: u64) -> ChaCha8Rng {
        Self::rng_with_key(self.key_bytes(), step)
    }

    /// The generator of a key from [`StreamKey::key_bytes`] at local step `step`: the same
    /// stream as [`StreamKey::rng`].
    pub fn rng_with_key(key: [u8; 32], step: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(step);
        rng
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    fn first(key: StreamKey, step: u64) -> u64 {
        key.rng(step).next_u64()
    }

    #[test]
    fn every_key_component_changes_the_stream() {
        let base = StreamKey { seed: 1, replicate: 2, round: 3, client: 4 };
        let b = first(base, 5);
        assert_eq!(b, first(base, 5), "same key, same stream");
        assert_ne!(b, first(StreamKey { seed: 9, ..base }, 5));
        assert_ne!(b, first(StreamKey { replicate: 9, ..base }, 5));
        assert_ne!(b, first(StreamKey { round: 9, ..base }, 5));
        assert_ne!(b, first(StreamKey { client: 9, ..base }, 5));
        assert_ne!(b, first(base, 6));
    }
}
