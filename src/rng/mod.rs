//! Random streams keyed by `(seed, replicate, round, client)`.
//!
//! Every random draw of a run comes from a ChaCha8 stream whose key is derived from where the draw
//! is used, never from the order in which draws are made. A result therefore does not depend on
//! evaluation order or thread count, and a single client's noise can be regenerated alone.
//!
//! # Stream layout
//! A [`StreamKey`] `(seed, replicate, round, client)` gives the 256-bit ChaCha8 key
//! ([`StreamKey::key_bytes`]); the ChaCha stream id (64 bits) selects one of its 2^64 independent
//! streams ([`StreamKey::rng`]). Within a stream the draws are read in order.
//! - The noise of a client in a round of local steps is one contiguous stream, stream id
//!   [`CLIENT_ROUND_STREAM`] ([`StreamKey::client_round_rng`]): its `K` local steps take their
//!   `d` standard normals in turn, step `k` the normals `k d .. (k + 1) d`. Set up once per
//!   client and round, the stream is read in order from its start (the Monte Carlo kernel
//!   reads it through [`keystream::Keystream`], the same words 1 KiB at a time).
//! - The clients sampled in a round come from the stream of client slot [`SAMPLING_SLOT`].
//! - Other uses (instance generators, graph draws, sweeps) name their own rounds, clients and
//!   stream ids; two uses never share a `(key, stream id)`.

pub mod keystream;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The client slot used for the server's client-sampling stream.
pub const SAMPLING_SLOT: u64 = u64::MAX;

/// The ChaCha stream id of a client's noise stream in a round ([`StreamKey::client_round_rng`]).
pub const CLIENT_ROUND_STREAM: u64 = 0;

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
    /// The ChaCha8 key of this `(seed, replicate, round, client)`: the streams of one key differ
    /// by their stream id.
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

    /// The ChaCha8 generator for this key and ChaCha stream id `stream`.
    pub fn rng(&self, stream: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::from_seed(self.key_bytes());
        rng.set_stream(stream);
        rng
    }

    /// The contiguous stream of a client's noise in one round: stream id [`CLIENT_ROUND_STREAM`].
    /// The round's `K` local steps read their standard normals from it in order.
    pub fn client_round_rng(&self) -> ChaCha8Rng {
        self.rng(CLIENT_ROUND_STREAM)
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

    #[test]
    fn the_client_round_stream_is_its_stream_id_of_its_key() {
        let key = StreamKey { seed: 1, replicate: 2, round: 3, client: 4 };
        let head = key.client_round_rng().next_u64();
        assert_eq!(head, key.rng(CLIENT_ROUND_STREAM).next_u64());
        assert_ne!(head, key.rng(CLIENT_ROUND_STREAM + 1).next_u64());
        assert_ne!(head, StreamKey { client: 5, ..key }.client_round_rng().next_u64());
    }
}
