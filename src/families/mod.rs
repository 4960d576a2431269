//! The paper families. Each is one folder; this file is the one registry.
//!
//! # Examples
//!
//! Check a claim of an embedded card on one of its scenarios, read the verdict, and assert it is
//! the one the card expects (as a reproducibility check in another crate's `cargo test`):
//!
//! ```
//! use fedbounds::family::{CheckRequest, Silent};
//! use fedbounds::verdict::{ConstantsSource, VerdictKind};
//!
//! let request = CheckRequest {
//!     claims: vec!["FEDPLT-CONST".into()],
//!     scenarios: vec!["full-masks-shared-optimum".into()],
//!     ..Default::default()
//! };
//! let outcome = fedbounds::families::registry().check(&request, &Silent)?;
//! assert!(outcome.mismatches().is_empty(), "{:?}", outcome.mismatches());
//! // Assumption 5 (bounded gradient) cannot hold for a strongly convex objective: with the exact
//! // constants the claim is not applicable, with G^2 measured on the run it holds.
//! let verdict = |source| outcome.rows().find(|r| r.constants == source).map(|r| r.evaluation.verdict);
//! assert_eq!(verdict(ConstantsSource::Exact), Some(VerdictKind::NotApplicable));
//! assert_eq!(verdict(ConstantsSource::Empirical), Some(VerdictKind::Holds));
//! # Ok::<(), fedbounds::Error>(())
//! ```
//!
//! Which conditions of a claim hold for given constants and steps (the `conditions` command; the
//! names are its flags'):
//!
//! ```
//! use fedbounds::family::Given;
//!
//! let given: Given = [("n", 10.0), ("m", 5.0), ("k", 5.0), ("rounds", 100.0), ("l", 1.0), ("f0", 4.5),
//!     ("b2", 1.0), ("sigma-u2", 1.0), ("sigma-v2", 1.0), ("du", 4.0), ("dv", 4.0), ("gamma", 1e-4)]
//!     .into_iter().map(|(k, v)| (k.to_string(), v)).collect();
//! let ccyw = fedbounds::families::registry().by_id("ccyw")?;
//! let text = ccyw.conditions(&given, &["CCYW-T3.7".into()], false, None)?;
//! assert!(text.contains("applicable") && text.contains("[ok] gamma <= 1/(32 L K)"), "{text}");
//! // Ten times the admissible step fails that condition, by name.
//! let too_large = Given::from_iter(given.clone().into_iter().map(|(k, v)| (k.clone(), if k == "gamma" { 0.0625 } else { v })));
//! let text = ccyw.conditions(&too_large, &["CCYW-T3.7".into()], false, None)?;
//! assert!(text.contains("NOT applicable") && text.contains("[FAIL] gamma <= 1/(32 L K)"), "{text}");
//! # Ok::<(), fedbounds::Error>(())
//! ```

pub mod ccyw;
pub mod clup;
pub mod dpgp;
pub mod fedplt;

use crate::family::Family;
use crate::registry::Registry;

/// Every family, the first being the default for files that name none.
pub fn registry() -> Registry {
    let families: Vec<&'static dyn Family> = vec![&ccyw::FAMILY, &fedplt::FAMILY, &dpgp::FAMILY, &clup::FAMILY];
    Registry::new(families).expect("the built-in families have distinct ids and claim ids")
}
