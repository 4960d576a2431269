//! A family's symbol table: each name a formula may use, with its meaning, its range, the
//! assumption that makes it finite, whether it is a per-round quantity of a proof, and how its
//! value is read from the family's inputs, in one entry.
//!
//! Slot `i` of a compiled formula is entry `i` of the table and [`SymbolTable::values`] reads the
//! values entry by entry, so the order of the names and the order of the values cannot drift
//! apart. Per-round quantities (a lemma's `E^t`, a recursion's `D^t`) have no value at the
//! claim's inputs (NaN there); [`SymbolTable::round_values`] reads them at a round of a run,
//! given as [`RoundInputs`].

use std::ops::Deref;

use super::compile::Symbol;
use super::interval::Interval;

/// A family's inputs at one round of a run: the claim's inputs and the run's quantities there.
#[derive(Debug, Clone, Copy)]
pub struct RoundInputs<I, Q> {
    /// Constants and parameters, as for a claim.
    pub x: I,
    /// The run's quantities at the round (the family's own shape).
    pub round: Q,
}

/// How an entry's value is read at a round of a run.
pub type RoundRead<I, Q> = fn(&RoundInputs<I, Q>) -> f64;

/// One entry of a [`SymbolTable`] over inputs `I` (and round quantities `Q`).
pub struct SymbolDef<I: 'static, Q: 'static> {
    /// Name, meaning, range, assumption and whether it is a per-round quantity.
    pub symbol: Symbol,
    /// The value at the family's inputs: NaN where a constant has no finite value, and for a
    /// per-round quantity.
    pub read: fn(&I) -> f64,
    /// The value at a round of a run, where it is not `read` of the round's inputs: a per-round
    /// quantity the family fills, or a constant that a round sets (the round `t` compared).
    /// `None` for a per-round quantity: NaN at every round too.
    pub at_round: Option<RoundRead<I, Q>>,
}

impl<I, Q> Clone for SymbolDef<I, Q> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<I, Q> Copy for SymbolDef<I, Q> {}

fn no_value<I>(_: &I) -> f64 {
    f64::NAN
}

impl<I, Q> SymbolDef<I, Q> {
    /// A constant or parameter read from the inputs by `read`.
    pub const fn new(name: &'static str, meaning: &'static str, range: Interval, read: fn(&I) -> f64) -> Self {
        Self { symbol: Symbol { name, meaning, range, assumption: None, per_round: false }, read, at_round: None }
    }

    /// A per-round quantity of a proof: NaN at the claim's inputs; a card-defined bound may not
    /// read it.
    pub const fn per_round(name: &'static str, meaning: &'static str, range: Interval) -> Self {
        Self { symbol: Symbol { name, meaning, range, assumption: None, per_round: true }, read: no_value::<I>, at_round: None }
    }

    /// The same entry with the assumption that makes it finite (`read` gives NaN where it fails).
    pub const fn assuming(mut self, assumption: &'static str) -> Self {
        self.symbol.assumption = Some(assumption);
        self
    }

    /// The same entry read by `f` at a round of a run.
    pub const fn at_round(mut self, f: RoundRead<I, Q>) -> Self {
        self.at_round = Some(f);
        self
    }
}

/// A family's symbols, slot `i` being entry `i`; it dereferences to the [`Symbol`]s the formula
/// compiler reads.
pub struct SymbolTable<I: 'static, Q: 'static, const N: usize> {
    entries: [SymbolDef<I, Q>; N],
    symbols: [Symbol; N],
}

const UNSET: Symbol = Symbol { name: "", meaning: "", range: Interval::everything(), assumption: None, per_round: false };

impl<I, Q, const N: usize> SymbolTable<I, Q, N> {
    /// The table of `entries`, in slot order.
    ///
    /// # Panics
    /// At compile time, where a constant follows a per-round quantity: per-round quantities come
    /// last, so the constants are a prefix of the slots.
    pub const fn new(entries: [SymbolDef<I, Q>; N]) -> Self {
        let mut symbols = [UNSET; N];
        let mut i = 0;
        while i < N {
            symbols[i] = entries[i].symbol;
            assert!(i == 0 || symbols[i].per_round || !symbols[i - 1].per_round, "per-round quantities come after every constant");
            i += 1;
        }
        Self { entries, symbols }
    }

    /// The symbols, in slot order.
    pub const fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// Number of leading slots that are not per-round quantities.
    pub const fn first_run_quantity(&self) -> usize {
        let mut i = 0;
        while i < N && !self.symbols[i].per_round {
            i += 1;
        }
        i
    }

    /// Every symbol's value at inputs `x` (per-round quantities NaN).
    pub fn values(&self, x: &I) -> Vec<f64> {
        self.entries.iter().map(|e| (e.read)(x)).collect()
    }

    /// Every symbol's value at a round of a run (a per-round quantity the family does not fill
    /// stays NaN).
    pub fn round_values(&self, r: &RoundInputs<I, Q>) -> Vec<f64> {
        self.entries.iter().map(|e| e.at_round.map_or_else(|| (e.read)(&r.x), |f| f(r))).collect()
    }
}

impl<I, Q, const N: usize> Deref for SymbolTable<I, Q, N> {
    type Target = [Symbol];
    fn deref(&self) -> &[Symbol] {
        &self.symbols
    }
}

/// Checks a value given by name on the command line (`conditions --set NAME=VALUE`) against a
/// family's `symbols`: the name must be one of them (matched ignoring case, `-` for `_`), the
/// value finite and in the symbol's range. A name nobody reads or a value outside the range
/// would otherwise be ignored or give a meaningless answer (`eta = nan` "applicable").
///
/// # Errors
/// [`crate::Error::InvalidField`] naming `--set NAME` and the names or the range allowed.
pub fn check_given(symbols: &[Symbol], name: &str, value: f64) -> crate::Result<()> {
    let field = format!("--set {name}");
    let Some(symbol) = find_symbol(symbols, name) else {
        let known: Vec<&str> = symbols.iter().filter(|s| !s.per_round).map(|s| s.name).collect();
        return Err(crate::Error::field(field, "unknown name", format!("one of the family's names: {}", known.join(", "))));
    };
    if !value.is_finite() || !symbol.range.contains(value) {
        return Err(crate::Error::field(field, format!("got {value}"), format!("a finite number in {} ({})", symbol.range, symbol.meaning)));
    }
    Ok(())
}

/// A name folded for matching: lower case, `-` as `_`.
fn folded(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

/// The symbol a name given on the command line means: the one of that exact name, else the one
/// whose name matches ignoring case and `-`/`_` (`--l` means `L`).
fn find_symbol<'a>(symbols: &'a [Symbol], key: &str) -> Option<&'a Symbol> {
    symbols.iter().find(|s| s.name == key).or_else(|| symbols.iter().find(|s| folded(s.name) == folded(key)))
}

/// Whether a name given on the command line reads one of `symbols` (exactly, or ignoring case and
/// `-`/`_`).
pub fn reads_symbol(symbols: &[Symbol], key: &str) -> bool {
    find_symbol(symbols, key).is_some()
}

/// The symbol a given value named `key` reads (the exact name, else one matching ignoring case
/// and `-`/`_`), else `key` itself folded (a name no symbol reads).
pub fn symbol_read(symbols: &[Symbol], key: &str) -> String {
    find_symbol(symbols, key).map_or_else(|| folded(key), |s| s.name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formula::interval::{COUNT, POSITIVE};

    struct X {
        k: usize,
        l: f64,
    }

    type Def = SymbolDef<X, f64>;

    static TABLE: SymbolTable<X, f64, 3> = SymbolTable::new([
        Def::new("K", "local steps", COUNT, |x| x.k as f64),
        Def::new("L", "smoothness", POSITIVE, |x| x.l).assuming("smooth"),
        Def::per_round("D_t", "distance at t", POSITIVE).at_round(|r| r.round),
    ]);

    #[test]
    fn values_follow_the_entries_and_per_round_quantities_only_at_a_round() {
        assert_eq!(TABLE.first_run_quantity(), 2);
        assert_eq!(TABLE.symbols()[1].assumption, Some("smooth"));
        let v = TABLE.values(&X { k: 3, l: 0.5 });
        assert_eq!(&v[..2], &[3.0, 0.5]);
        assert!(v[2].is_nan(), "a per-round quantity has no value at the claim's inputs");
        let r = TABLE.round_values(&RoundInputs { x: X { k: 3, l: 0.5 }, round: 7.0 });
        assert_eq!(r, vec![3.0, 0.5, 7.0]);
        assert_ne!(r, v, "negative control: the two readings differ in the per-round slot");
    }

    #[test]
    #[should_panic(expected = "per-round quantities come after every constant")]
    fn a_constant_after_a_per_round_quantity_is_refused() {
        let _ = SymbolTable::new([Def::per_round("D_t", "distance at t", POSITIVE), Def::new("K", "local steps", COUNT, |x| x.k as f64)]);
    }
}
