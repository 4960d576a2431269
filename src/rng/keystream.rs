//! The ChaCha8 keystream of a `(key, stream id)` in refills of 16 blocks (1 KiB), word for word
//! the stream of `rand_chacha::ChaCha8Rng` with that key and [`ChaCha8Rng::set_stream`].
//!
//! # Formula
//! Block `j` of stream `s` under key `k` is `ChaCha8(x) + x` (word by word, mod 2^32), with the
//! input words `x = [c0, c1, c2, c3, k0, ..., k7, j_lo, j_hi, s_lo, s_hi]`, `c` the constants of
//! "expand 32-byte k", and `ChaCha8` four double rounds (a column round, then a diagonal round)
//! of the quarter round
//!
//! ```text
//! a += b; d ^= a; d <<<= 16;  c += d; b ^= c; b <<<= 12;
//! a += b; d ^= a; d <<<= 8;   c += d; b ^= c; b <<<= 7;
//! ```
//!
//! (Bernstein 2008; RFC 8439 section 2.3 with a 64-bit block counter and a 64-bit nonce, the
//! layout of `rand_chacha`). The stream is the blocks in order, each written little-endian; its
//! `u64` words are those of `ChaCha8Rng::next_u64`.
//!
//! With AVX-512 a refill computes its 16 blocks four to a vector register (one 128-bit lane a
//! block, the layout of `rand_chacha`'s own AVX2 code at twice the width) with one-instruction
//! rotations, straight into the caller's buffer. Elsewhere it reads `ChaCha8Rng` itself. A test
//! compares the two.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `u64` words of one refill: 16 blocks of 64 bytes.
pub const REFILL_WORDS: usize = 128;

/// Blocks of one refill.
const REFILL_BLOCKS: u64 = 16;

/// "expand 32-byte k" as four little-endian words.
const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// A position in the ChaCha8 keystream of one key and stream id.
#[derive(Debug, Clone)]
pub struct Keystream {
    source: Source,
}

// A stream is made once per client and round and kept in place; boxing the generic variant
// would allocate each time for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Source {
    /// The input words of the next block (its counter in words 12 and 13).
    Vector([u32; 16]),
    /// `rand_chacha` itself, where the processor lacks AVX-512.
    Generic(ChaCha8Rng),
}

impl Keystream {
    /// The keystream of `key` and stream id `stream` from its first block.
    pub fn new(key: [u8; 32], stream: u64) -> Self {
        Self::with_source(key, stream, vector_available())
    }

    /// The keystream computed with AVX-512 (`vector`, which the processor must have) or by
    /// `ChaCha8Rng`.
    fn with_source(key: [u8; 32], stream: u64, vector: bool) -> Self {
        if vector {
            let mut x = [0u32; 16];
            x[..4].copy_from_slice(&CONSTANTS);
            for (w, chunk) in x[4..12].iter_mut().zip(key.chunks_exact(4)) {
                *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            }
            x[14] = stream as u32;
            x[15] = (stream >> 32) as u32;
            Self { source: Source::Vector(x) }
        } else {
            let mut rng = ChaCha8Rng::from_seed(key);
            rng.set_stream(stream);
            Self { source: Source::Generic(rng) }
        }
    }

    /// Writes the next [`REFILL_WORDS`] words of the stream into `out`.
    #[inline]
    pub fn refill(&mut self, out: &mut [u64; REFILL_WORDS]) {
        match &mut self.source {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Vector` source is only made when `vector_available()` saw the features.
            Source::Vector(x) => unsafe { avx512::refill(x, out) },
            #[cfg(not(target_arch = "x86_64"))]
            Source::Vector(_) => unreachable!("no vector source off x86_64"),
            Source::Generic(rng) => rng.fill(&mut out[..]),
        }
    }
}

/// Whether this processor runs the AVX-512 refill.
fn vector_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{REFILL_BLOCKS, REFILL_WORDS};
    use std::arch::x86_64::{
        __m128i, __m512i, _mm512_add_epi32, _mm512_broadcast_i32x4, _mm512_extracti32x4_epi32, _mm512_rol_epi32, _mm512_setr_epi32, _mm512_shuffle_epi32,
        _mm512_xor_si512, _mm_loadu_si128, _mm_storeu_si128,
    };

    /// Four blocks side by side, one per 128-bit lane: row `a` holds words 0-3 of each block,
    /// `b` words 4-7, `c` words 8-11, `d` words 12-15.
    #[derive(Clone, Copy)]
    struct Rows {
        a: __m512i,
        b: __m512i,
        c: __m512i,
        d: __m512i,
    }

    /// The quarter round on the four columns of every lane at once.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn quarter(r: &mut Rows) {
        {
            r.a = _mm512_add_epi32(r.a, r.b);
            r.d = _mm512_rol_epi32::<16>(_mm512_xor_si512(r.d, r.a));
            r.c = _mm512_add_epi32(r.c, r.d);
            r.b = _mm512_rol_epi32::<12>(_mm512_xor_si512(r.b, r.c));
            r.a = _mm512_add_epi32(r.a, r.b);
            r.d = _mm512_rol_epi32::<8>(_mm512_xor_si512(r.d, r.a));
            r.c = _mm512_add_epi32(r.c, r.d);
            r.b = _mm512_rol_epi32::<7>(_mm512_xor_si512(r.b, r.c));
        }
    }

    /// Rotates rows `b`, `c`, `d` left by 1, 2, 3 words within each lane, so that the column
    /// round acts on the diagonals `(0, 5, 10, 15)`, `(1, 6, 11, 12)`, ...; `undo` rotates back.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn diagonals(r: &mut Rows, undo: bool) {
        {
            if undo {
                r.b = _mm512_shuffle_epi32::<0b10_01_00_11>(r.b);
                r.d = _mm512_shuffle_epi32::<0b00_11_10_01>(r.d);
            } else {
                r.b = _mm512_shuffle_epi32::<0b00_11_10_01>(r.b);
                r.d = _mm512_shuffle_epi32::<0b10_01_00_11>(r.d);
            }
            r.c = _mm512_shuffle_epi32::<0b01_00_11_10>(r.c);
        }
    }

    /// Writes lane `L` of the four rows (one block, 64 bytes) at `block`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store_lane<const L: i32>(r: &Rows, block: &mut [u64]) {
        let out = block.as_mut_ptr().cast::<__m128i>();
        // SAFETY: `block` is 8 writable `u64`s (64 bytes), written as four unaligned 16-byte
        // stores; x86_64 is little-endian, so the words land in the stream's byte order.
        unsafe {
            _mm_storeu_si128(out, _mm512_extracti32x4_epi32::<L>(r.a));
            _mm_storeu_si128(out.add(1), _mm512_extracti32x4_epi32::<L>(r.b));
            _mm_storeu_si128(out.add(2), _mm512_extracti32x4_epi32::<L>(r.c));
            _mm_storeu_si128(out.add(3), _mm512_extracti32x4_epi32::<L>(r.d));
        }
    }

    /// Row `d` of blocks `j .. j + 4`: each lane's counter `j + lane` (64 bits, low word first),
    /// then the stream id `(s_lo, s_hi)`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn counters_row(j: u64, (s_lo, s_hi): (u32, u32)) -> __m512i {
        let [p, q, r, s] = [0, 1, 2, 3].map(|l| j.wrapping_add(l));
        let (lo, hi) = (|j: u64| j as u32 as i32, |j: u64| (j >> 32) as u32 as i32);
        let (s_lo, s_hi) = (s_lo as i32, s_hi as i32);
        _mm512_setr_epi32(lo(p), hi(p), s_lo, s_hi, lo(q), hi(q), s_lo, s_hi, lo(r), hi(r), s_lo, s_hi, lo(s), hi(s), s_lo, s_hi)
    }

    /// 16 blocks from the input words `x` into `out`; `x`'s counter advances by 16.
    #[target_feature(enable = "avx512f")]
    pub(super) fn refill(x: &mut [u32; 16], out: &mut [u64; REFILL_WORDS]) {
        // SAFETY: `w` is 4 readable `u32`s, read unaligned.
        let load = |w: &[u32]| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(w.as_ptr().cast()) });
        let (a, b, c) = (load(&x[0..4]), load(&x[4..8]), load(&x[8..12]));
        let counter = u64::from(x[12]) | (u64::from(x[13]) << 32);
        let row_d = |first: u64| counters_row(counter.wrapping_add(first), (x[14], x[15]));
        let input = [0, 4, 8, 12].map(|first| Rows { a, b, c, d: row_d(first) });
        let mut rows = input;
        for _ in 0..4 {
            for r in rows.iter_mut() {
                quarter(r);
                diagonals(r, false);
                quarter(r);
                diagonals(r, true);
            }
        }
        for (g, (r, i)) in rows.iter_mut().zip(&input).enumerate() {
            r.a = _mm512_add_epi32(r.a, i.a);
            r.b = _mm512_add_epi32(r.b, i.b);
            r.c = _mm512_add_epi32(r.c, i.c);
            r.d = _mm512_add_epi32(r.d, i.d);
            let group = &mut out[g * 32..(g + 1) * 32];
            store_lane::<0>(r, &mut group[0..8]);
            store_lane::<1>(r, &mut group[8..16]);
            store_lane::<2>(r, &mut group[16..24]);
            store_lane::<3>(r, &mut group[24..32]);
        }
        let next = counter.wrapping_add(REFILL_BLOCKS);
        x[12] = next as u32;
        x[13] = (next >> 32) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    fn words(mut ks: Keystream, refills: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut buf = [0u64; REFILL_WORDS];
        for _ in 0..refills {
            ks.refill(&mut buf);
            out.extend_from_slice(&buf);
        }
        out
    }

    #[test]
    fn the_keystream_is_chacha8rng_s_stream_word_for_word() {
        for (seed, stream) in [(0u8, 0u64), (7, 1), (255, u64::MAX), (42, 0x1234_5678_9abc_def0)] {
            let key: [u8; 32] = std::array::from_fn(|i| seed.wrapping_mul(31).wrapping_add((i as u8).wrapping_mul(17)));
            let mut reference = ChaCha8Rng::from_seed(key);
            reference.set_stream(stream);
            let expected: Vec<u64> = (0..3 * REFILL_WORDS).map(|_| reference.next_u64()).collect();
            assert_eq!(words(Keystream::new(key, stream), 3), expected, "key {seed}, stream {stream}");
            assert_eq!(words(Keystream::with_source(key, stream, false), 3), expected, "without AVX-512");
            // Negative control: another stream id gives other words.
            assert_ne!(words(Keystream::new(key, stream ^ 1), 1)[..4], expected[..4]);
        }
    }

    #[test]
    fn the_block_counter_carries_into_its_high_word() {
        // Start 8 blocks before the low counter word wraps: the refill crosses it.
        let key = [3u8; 32];
        let mut reference = ChaCha8Rng::from_seed(key);
        reference.set_stream(5);
        reference.set_word_pos((u128::from(u32::MAX) - 7) * 16);
        let expected: Vec<u64> = (0..REFILL_WORDS).map(|_| reference.next_u64()).collect();
        let mut ks = Keystream::new(key, 5);
        if let Source::Vector(x) = &mut ks.source {
            x[12] = u32::MAX - 7;
            assert_eq!(words(ks, 1), expected);
        }
    }
}
