//! The work budget: every scenario is sized before any work starts.
//!
//! Each family estimates the total work of a scenario from its sizes alone (rounds, clients,
//! local steps, dimensions, replicates, ...), as a count of floating-point multiply-adds written
//! as a product of those sizes (e.g. FedPLT's exact run: `rounds x clients x tau x dim^2`). The
//! checker and the `run` command compare the estimate with [`WORK_BUDGET`] (or the larger or
//! smaller budget `--max-work` asks for) before a scenario is prepared: over budget is bad input
//! naming the fields that set the size and the budget, never a run of hours with no end in sight.
//! The estimate is computed in `f64`, so no size overflows it (`k = 2^63 - 1` gives `9.2e18 x
//! ...`, refused, never a capacity overflow).

use crate::error::{Error, Result};

/// The default budget of one scenario: `2e10` estimated multiply-adds, about a minute of one
/// core (the estimates run at about `2.5e8` to `8e8` a second, measured on each family's exact
/// and Monte Carlo runs; a vectorized loop counts its four-wide operations). The default
/// scenarios of the cards estimate below `1e9`; an exact run of personalized partial participation
/// with 1,000 clients (`m = 100`, `du = 5`, `dv = 2`, `K = 25`, `T = 1000`) estimates `1.6e10`.
pub const WORK_BUDGET: f64 = 2e10;

/// The largest budget `--max-work` may ask for (`1e18`: years of one core); beyond it the
/// estimate itself no longer means anything.
pub const MAX_WORK_BUDGET: f64 = 1e18;

/// A scenario's estimated work.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    /// The fields that set the size, as the scenario names them (e.g. `rounds, algorithm.k`).
    pub fields: String,
    /// The estimate as a formula of those fields, e.g. `rounds x clients x tau x dim^2`.
    pub formula: &'static str,
    /// Its value (multiply-adds); `+inf` when a size is beyond `f64`.
    pub total: f64,
    /// The largest memory the run holds at once (bytes), checked against
    /// [`crate::error::memory_limit`]; 0 when the family checks memory itself.
    pub bytes: f64,
}

impl Work {
    /// The estimate `total` of `formula` over `fields`.
    pub fn new(fields: impl Into<String>, formula: &'static str, total: f64) -> Self {
        Self { fields: fields.into(), formula, total, bytes: 0.0 }
    }

    /// The same work, holding `bytes` at once.
    pub fn holding(self, bytes: f64) -> Self {
        Self { bytes, ..self }
    }
}

/// The budget `--max-work` asks for, checked: a finite number `>= 1` and at most
/// [`MAX_WORK_BUDGET`]; [`WORK_BUDGET`] when not given.
///
/// # Errors
/// [`Error::InvalidField`] naming `--max-work`.
pub fn budget(max_work: Option<f64>) -> Result<f64> {
    match max_work {
        None => Ok(WORK_BUDGET),
        Some(b) if b.is_finite() && (1.0..=MAX_WORK_BUDGET).contains(&b) => Ok(b),
        Some(b) => Err(Error::field("--max-work", format!("got {b}"), format!("a number >= 1 and <= {MAX_WORK_BUDGET:e}"))),
    }
}

/// Refuses `work` over the budget `max_work` asks for (see [`budget`]).
///
/// # Errors
/// [`Error::InvalidField`] naming the work's fields, the estimate and the budget.
pub fn require(work: &Work, max_work: Option<f64>) -> Result<()> {
    let limit = budget(max_work)?;
    crate::error::require_memory(&work.fields, work.bytes, "the run's largest matrices")?;
    if work.total.is_finite() && work.total <= limit {
        return Ok(());
    }
    Err(Error::field(
        &work.fields,
        format!("the estimated work {} = {:.3e} multiply-adds is over the budget", work.formula, work.total),
        format!("sizes whose estimate is at most {limit:.0e} (smaller sizes, or --max-work to raise the budget)"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_over_the_budget_is_refused_naming_its_fields() {
        let w = Work::new("rounds, algorithm.k", "rounds x k", 1e13);
        let e = require(&w, None).unwrap_err();
        assert!(e.is_bad_input());
        let text = e.to_string();
        assert!(text.contains("rounds, algorithm.k") && text.contains("1.000e13") && text.contains("--max-work"), "{text}");
        // Raised, the same work passes; an infinite estimate never does.
        assert!(require(&w, Some(1e14)).is_ok());
        assert!(require(&Work::new("k", "k", f64::INFINITY), Some(MAX_WORK_BUDGET)).is_err());
        assert!(require(&Work::new("k", "k", f64::NAN), None).is_err());
        // Memory a machine cannot hold is refused too, however small the work.
        let e = require(&Work::new("instance.dim", "dim", 1.0).holding(1e15), None).unwrap_err();
        assert!(e.is_bad_input() && e.to_string().contains("instance.dim") && e.to_string().contains("GiB"), "{e}");
        // Negative control: work within the budget passes.
        assert!(require(&Work::new("k", "k", WORK_BUDGET), None).is_ok());
    }

    #[test]
    fn a_budget_must_be_a_finite_number_in_range() {
        for b in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e19] {
            assert!(budget(Some(b)).unwrap_err().to_string().contains("--max-work"), "{b}");
        }
        assert_eq!(budget(Some(5.0)).unwrap(), 5.0);
        assert_eq!(budget(None).unwrap(), WORK_BUDGET);
    }
}
