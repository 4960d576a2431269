//! What the scenarios of a card's `[[comparisons]]` entry may differ in, and which claims each
//! kind of comparison checks ([`super::compare`] evaluates them).
//!
//! | axis | scenarios differ in | claims |
//! |---|---|---|
//! | [`Axis::Topology`] | the graphs (kind, seed, mixing rule) | Remark 2 (004:L159): `DPGP-R2`, `~stationarity`, `~factor` |
//! | [`Axis::Neighbours`] | the out-degree `k` of random out-neighbour graphs | Remark 2's three, and Figure 3a (004:L232, L240): `DPGP-F3A`, `~consensus` |
//! | [`Axis::LocalSteps`] | `K_u` (at Corollary 1's steps `eta_u = c_u/(L_u K_u sqrt(T))`) | Remark 1 (004:L157): `DPGP-R1` |
//! | [`Axis::Noise`] | `sigma_u`, `sigma_v`, the heterogeneity (so `sigma_g^2`) | Remark 1's variances: `DPGP-R1~variance` |
//! | [`Axis::Smoothness`] | `L_u` | Remark 3 (004:L177): `DPGP-R3` |

use std::collections::BTreeSet;

/// What the scenarios of a comparison differ in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Axis {
    /// The graphs only.
    #[default]
    Topology,
    /// Only the out-degree `k` of random out-neighbour graphs (distinct in every member).
    Neighbours,
    /// `K_u` only.
    LocalSteps,
    /// Only `sigma_u`, `sigma_v` and the heterogeneity of the shared linear terms.
    Noise,
    /// `L_u` only.
    Smoothness,
}

/// Every claim a comparison checks: the family's orderings of runs.
pub const COMPARISON_CLAIMS: [&str; 8] =
    ["DPGP-R2", "DPGP-R2~stationarity", "DPGP-R2~factor", "DPGP-F3A", "DPGP-F3A~consensus", "DPGP-R1", "DPGP-R1~variance", "DPGP-R3"];

impl Axis {
    /// The claims a comparison along this axis checks.
    pub fn claims(self) -> &'static [&'static str] {
        match self {
            Axis::Topology => &COMPARISON_CLAIMS[..3],
            Axis::Neighbours => &COMPARISON_CLAIMS[..5],
            Axis::LocalSteps => &COMPARISON_CLAIMS[5..6],
            Axis::Noise => &COMPARISON_CLAIMS[6..7],
            Axis::Smoothness => &COMPARISON_CLAIMS[7..],
        }
    }
}

fn within(d: &BTreeSet<&str>, allowed: &[&str]) -> bool {
    !d.is_empty() && d.iter().all(|k| allowed.contains(k))
}

/// The axis of a comparison from the keys in which its other members differ from its first
/// (`differences[j]` for member `j + 1`, names as [`super::card::Scenario::differences`] gives
/// them) and whether every member is a random out-neighbour graph with its own out-degree.
///
/// # Errors
/// What is wrong, naming the first member `first` and the keys: a member equal to the first, or
/// keys of more than one axis.
pub fn classify(first: &str, differences: &[BTreeSet<&'static str>], distinct_out_degrees: bool) -> Result<Axis, String> {
    let all: BTreeSet<&str> = differences.iter().flatten().copied().collect();
    let found = if all.iter().all(|k| *k == "topology") && distinct_out_degrees {
        Some(Axis::Neighbours)
    } else if within(&all, &["topology", "graph_seed", "mixing"]) {
        Some(Axis::Topology)
    } else if within(&all, &["k_u"]) {
        Some(Axis::LocalSteps)
    } else if within(&all, &["sigma_u", "sigma_v", "heterogeneity"]) {
        Some(Axis::Noise)
    } else if within(&all, &["l_u"]) {
        Some(Axis::Smoothness)
    } else {
        None
    };
    found.filter(|_| differences.iter().all(|d| !d.is_empty())).ok_or_else(|| {
        format!(
            "`{first}` and the others differ in {{{}}}, which is not one axis (the graphs; the out-degree k of random out-neighbour graphs; \
             k_u; sigma_u, sigma_v and heterogeneity; l_u), or some scenario equals `{first}`",
            all.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&'static str]) -> BTreeSet<&'static str> {
        k.iter().copied().collect()
    }

    #[test]
    fn one_axis_is_found_and_two_are_refused() {
        assert_eq!(classify("a", &[keys(&["k_u"]), keys(&["k_u"])], false), Ok(Axis::LocalSteps));
        assert_eq!(classify("a", &[keys(&["topology"])], true), Ok(Axis::Neighbours));
        assert_eq!(classify("a", &[keys(&["topology", "graph_seed"])], true), Ok(Axis::Topology));
        assert_eq!(classify("a", &[keys(&["sigma_u"]), keys(&["heterogeneity"])], false), Ok(Axis::Noise));
        assert_eq!(classify("a", &[keys(&["l_u"])], false), Ok(Axis::Smoothness));
        // Negative controls: two axes at once, and a member equal to the first.
        let two = classify("a", &[keys(&["k_u"]), keys(&["l_u"])], false).expect_err("two axes");
        assert!(two.contains("{k_u, l_u}"), "{two}");
        assert!(classify("a", &[keys(&["k_u"]), keys(&[])], false).is_err());
    }
}
