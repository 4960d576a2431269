//! Reuse of work that depends only on inputs that repeat from round to round.
//!
//! A round's maps are probed from its code ([`RoundMaps::probe`](super::RoundMaps::probe)); when
//! the inputs they depend on (a mixing matrix, push-sum weights, step sizes) are those of a recent
//! round, probing again would give the same bits. [`RecentByBits`] keeps the values made for the
//! last few inputs, keyed by their bit patterns, so a static or periodic topology probes each of
//! its rounds once.

/// The values made for the last [`RecentByBits::capacity`] keys, each made again only when its
/// key is not among them.
///
/// The key is the inputs' bit patterns (`f64::to_bits`), not their values: `0.0` and `-0.0`, or
/// two NaNs with different payloads, are different keys, so a reused value is always the one the
/// same computation would have made again (no sign of zero is lost, no NaN is special).
#[derive(Debug, Clone)]
pub struct RecentByBits<V> {
    /// `(key, value)`, the most recently used last.
    entries: Vec<(Vec<u64>, V)>,
    capacity: usize,
}

impl<V> RecentByBits<V> {
    /// An empty store that keeps the values of the `capacity` (at least 1) most recently used
    /// keys.
    pub fn new(capacity: usize) -> Self {
        Self { entries: Vec::new(), capacity: capacity.max(1) }
    }

    /// How many values it keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The value for the inputs `parts` (concatenated, each part's length also part of the key):
    /// the stored one when `parts` are bit for bit those of a stored key, else `make()`, stored
    /// in place of the least recently used one when the store is full.
    pub fn get(&mut self, parts: &[&[f64]], make: impl FnOnce() -> V) -> &V {
        let key = key_of(parts);
        let hit = self.entries.iter().position(|(k, _)| *k == key);
        let entry = match hit {
            Some(at) => self.entries.remove(at),
            None => {
                if self.entries.len() == self.capacity {
                    self.entries.remove(0);
                }
                (key, make())
            }
        };
        self.entries.push(entry);
        &self.entries.last().expect("an entry was pushed above").1
    }
}

/// The key of `parts`: each part's length, then its values' bit patterns.
fn key_of(parts: &[&[f64]]) -> Vec<u64> {
    let mut key = Vec::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for part in parts {
        key.push(part.len() as u64);
        key.extend(part.iter().map(|x| x.to_bits()));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_made_again_only_when_a_bit_of_its_key_changes() {
        let mut store = RecentByBits::new(1);
        let mut made = 0;
        let mut get = |parts: &[&[f64]]| {
            *store.get(parts, || {
                made += 1;
                made
            })
        };
        assert_eq!(get(&[&[1.0, 2.0], &[3.0]]), 1);
        assert_eq!(get(&[&[1.0, 2.0], &[3.0]]), 1, "the same bits reuse the value");
        assert_eq!(get(&[&[1.0], &[2.0, 3.0]]), 2, "the same numbers split differently are another key");
        assert_eq!(get(&[&[1.0], &[2.0, -0.0]]), 3);
        assert_eq!(get(&[&[1.0], &[2.0, 0.0]]), 4, "-0.0 and 0.0 are different keys");
        assert_eq!(get(&[&[f64::NAN]]), 5);
        assert_eq!(get(&[&[f64::NAN]]), 5, "the same NaN bits are the same key");
        assert_eq!(get(&[&[f64::NAN], &[]]), 6, "an empty part is part of the key");
    }

    #[test]
    fn a_period_within_the_capacity_is_made_once_and_one_past_it_every_time() {
        let run = |capacity: usize| {
            let mut store = RecentByBits::new(capacity);
            let mut made = 0;
            for t in 0..30 {
                store.get(&[&[(t % 3) as f64]], || made += 1);
            }
            made
        };
        assert_eq!(run(3), 3);
        // Negative control: with room for two of three keys, the least recently used one is
        // always the one asked for next.
        assert_eq!(run(2), 30);
    }
}
