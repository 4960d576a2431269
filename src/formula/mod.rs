//! Bounds, conditions and scopes written as formulas in a claim card, over a family's named
//! constants and parameters.
//!
//! # The language
//!
//! - numbers (`12`, `0.5`, `1e-3`), names (`gamma`, `sigma_u2`, `F0`), `+ - * / ^` with the usual
//!   precedence (`^` binds tightest and is right-associative; `-x^2 = -(x^2)`), parentheses;
//! - functions `sqrt`, `ln`, `exp`, `abs`, `min(a, b, ...)`, `max(a, b, ...)`, and `div_pos(a, b)`
//!   (`a/b` when `b > 0`, else `+inf`: a bound that says nothing, stated on purpose);
//! - intermediate quantities, in order, each as `NAME = expression` (later ones may use earlier
//!   ones);
//! - a condition is one comparison, `a <= b`, `a >= b`, `a < b`, `a > b` or `a = b` (equality up
//!   to the project's identity tolerance), with an optional guard `... if du > 0` under which it
//!   applies.
//!
//! A formula is parsed and its names resolved once; evaluating it is a walk over a small tree with
//! slot indices, no lookups. Every division is checked when the card is read: its divisor's range,
//! computed from the ranges the family declares for its symbols (narrowed by the claim's own
//! conditions of the form `symbol >= number`), must exclude zero, or the card is refused with the
//! position of the divisor. A strict comparison is strict (`<` as [`crate::claim::Relation::Below`]:
//! a value at the boundary up to the identity tolerance fails), as the papers' strict conditions
//! are in the built-in claims.
//!
//! Nothing here knows a paper: a family gives its [`SymbolTable`] (names, meanings, ranges, the
//! assumption that makes a constant finite, which names are per-round quantities, and how each
//! value is read from the family's own inputs).

pub mod claim;
pub mod compile;
pub mod interval;
pub mod parse;
pub mod symbols;
pub mod twin;
pub mod user;
pub mod wrong;

pub use claim::{ClaimFormulas, CompareSpec, FormulaCard, Limit};
pub use compile::{Scope, Symbol};
pub use interval::{Interval, COUNT, FLAG, NON_NEGATIVE, POSITIVE};
pub use symbols::{RoundInputs, SymbolDef, SymbolTable};

use std::fmt;

/// A formula that cannot be read: what is wrong and where (a byte offset into its text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormulaError {
    /// Byte offset of the character at fault.
    pub pos: usize,
    /// What is wrong.
    pub message: String,
}

impl FormulaError {
    /// An error at byte `pos`.
    pub fn at(pos: usize, message: impl Into<String>) -> Self {
        Self { pos, message: message.into() }
    }

    /// The error as the library reports it: the field (`claims[ID].formula.bound`), the column
    /// (1-based, in characters) and the text with a caret under the character at fault.
    pub fn in_field(&self, claim: &str, field: &str, text: &str) -> crate::Error {
        let column = text.char_indices().take_while(|(i, _)| *i < self.pos).count() + 1;
        // A long formula is shown from up to 60 characters before the one at fault, 60 after.
        let from = column.saturating_sub(61);
        let shown: String = text.chars().skip(from).take(121).collect();
        let (lead, tail) = (if from > 0 { "..." } else { "" }, if text.chars().count() > from + 121 { "..." } else { "" });
        crate::Error::field(
            format!("claims[{claim}].formula.{field}"),
            format!("column {column}: {}\n    {lead}{shown}{tail}\n    {}^", self.message, " ".repeat(column - 1 - from + lead.len())),
            "a formula over the family's symbols (see `fedbounds list --symbols`)",
        )
    }
}

impl fmt::Display for FormulaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.pos, self.message)
    }
}

#[cfg(test)]
mod tests;
