//! The paper families. Each is one folder; this file is the one registry.

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
