//! What the FedCLUP card-metric tests share: a built-in claim's card entry as a card-defined
//! claim with a given formula on a given metric.

use fedbounds::card::ClaimCard;
use fedbounds::families::clup::claims::ClupClaim;
use fedbounds::families::clup::formulas::card_claim;
use fedbounds::formula::FormulaCard;

/// A card-defined claim `id` with `formula` on `metric` (`formula.metric`), the rest of `entry`
/// (a built-in claim's card entry: its `bound.builtin` and `tightness` dropped).
pub fn card(entry: &ClaimCard, id: String, formula: &FormulaCard, metric: &str) -> ClupClaim {
    let mut e = entry.clone();
    e.id = id;
    e.bound = Default::default();
    e.tightness = None;
    let mut f = formula.clone();
    f.metric = Some(metric.to_string());
    e.formula = Some(f);
    card_claim(&e).unwrap_or_else(|err| panic!("{} compiles: {err}", e.id))
}

/// Every built-in claim with a formula twin beside the metric it compares, except CLUP-L1 (its
/// seven spectral inequalities compare Lemma 1's constants the family computes; the twin's bound
/// is the ratio's `1`) and CLUP-T2~expgamma (at gamma = 1/L_g its `V_1` is infinite, `c1` dividing
/// by `1 - gamma L_g = 0`, so no round is compared: no card metric).
pub const CLAIM_METRICS: [(&str, &str); 29] = [
    ("CLUP-T1", "statistical-error"),
    ("CLUP-T1~n2", "statistical-error"),
    ("CLUP-T1~printed-4", "statistical-error"),
    ("CLUP-T1~g64", "statistical-error"),
    ("CLUP-T1~empirical-l", "statistical-error-empirical-l"),
    ("CLUP-C1", "corollary1-error"),
    ("CLUP-C1~a2-printed", "corollary1-error-a2-printed"),
    ("CLUP-T2", "global-error"),
    ("CLUP-T2~mean-of-locals", "global-error-mean-of-locals"),
    ("CLUP-T2-LOCAL", "local-error"),
    ("CLUP-T2-LYAPUNOV", "lyapunov-ratio"),
    ("CLUP-C2", "corollary2-global-error"),
    ("CLUP-C3", "corollary3-local-error"),
    ("CLUP-C3~no-split", "corollary3-local-error"),
    ("CLUP-C3~c4", "corollary3-local-error"),
    ("CLUP-T3", "alg2-error"),
    ("CLUP-T3~ball-corrected", "alg2-error"),
    ("CLUP-T3~stated-rate", "alg2-error"),
    ("CLUP-T3~one-batch", "alg2-error-one-batch"),
    ("CLUP-T3~empirical-l", "alg2-error-empirical-l"),
    ("CLUP-T3~v1-initial", "alg2-error-v1-initial"),
    ("CLUP-L4", "lemma4-rms"),
    ("CLUP-G35", "global-statistical-error"),
    ("CLUP-G35~local-average", "local-average-statistical-error"),
    ("CLUP-G52", "global-statistical-error-52"),
    ("CLUP-G52~young", "global-statistical-error-52"),
    ("CLUP-G79", "global-statistical-error-79"),
    ("CLUP-T3-REMARK", "alg2-noise-floor"),
    ("CLUP-T3-REMARK~ball-at-steps", "alg2-noise-floor"),
];

/// The metric built-in claim `id` compares ([`CLAIM_METRICS`]).
#[allow(dead_code)]
pub fn metric_of(id: &str) -> &'static str {
    CLAIM_METRICS.iter().find(|(c, _)| *c == id).unwrap_or_else(|| panic!("{id} has a card metric")).1
}
