//! The psi step of Part 2 of the proof (001:L404-408, I-PLT4):
//! `-eta c_k <x, psi .* m_k .* g> <= -eta psi_ c_k <x, m_k .* g>` with `x = W_k^t - W*` and
//! `g = grad F_k(W_k^t)`, checked at every point of the sample paths where a gradient is taken.
//! Dividing by `-eta c_k < 0`, it is `A >= B` with `A = <x, psi .* m_k .* g>` and
//! `B = psi_ <x, m_k .* g>`, i.e. `sum_{i in mask_k} (psi_i - psi_) x_i g_i >= 0`.

use nalgebra::DVector;

use crate::claim::fmt_num;
use crate::engine::Estimator;
use crate::verdict::{Evaluation, VerdictKind};

use super::problem::Instance;

/// The two readings of `psi_`: as printed, `min_i psi_i` over all coordinates (001:L388), and
/// over the coordinates some client updates (where `psi` is not arbitrary, I-PLT4).
pub const READINGS: usize = 2;

/// `[min_i psi_i over all coordinates (001:L388), min_i psi_i over covered coordinates]`;
/// infinite when no coordinate is covered.
pub fn psi_floors(inst: &Instance, psi: &[f64]) -> [f64; READINGS] {
    let covered = |i: usize| inst.masks.iter().any(|m| m[i] != 0.0);
    let all = psi.iter().copied().fold(f64::INFINITY, f64::min);
    let updated = (0..psi.len()).filter(|&i| covered(i)).map(|i| psi[i]).fold(f64::INFINITY, f64::min);
    [all, updated]
}

/// Where the step failed first: round, client, replicate, `A` and `B`.
pub type StepFailure = (usize, usize, u64, f64, f64);

/// The step's record over the points of the sample paths, per reading of `psi_`.
#[derive(Debug, Clone, Default)]
pub struct PsiStepTally {
    /// Points checked.
    pub points: usize,
    /// Points where `A < B` beyond rounding, per reading.
    pub failures: [usize; READINGS],
    /// The first failure (earliest round), per reading.
    pub first_failure: [Option<StepFailure>; READINGS],
    /// `min A / B` over points with `B > 0`, per reading (infinite when there is none).
    pub min_ratio: [f64; READINGS],
    /// Points where `x_i g_i < 0` on some masked coordinate (sufficient-condition failures;
    /// information only, the step needs the weighted sum alone).
    pub sign_failures: usize,
    /// Points where a side was not finite.
    pub non_finite: usize,
}

impl PsiStepTally {
    /// An empty tally.
    pub fn new() -> Self {
        Self { min_ratio: [f64::INFINITY; READINGS], ..Self::default() }
    }

    /// Records the point `w` of client `k` at round `t`, replicate `r`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(&mut self, inst: &Instance, psi: &[f64], floors: &[f64; READINGS], k: usize, w: &DVector<f64>, w_star: &DVector<f64>, at: (usize, u64)) {
        let g = inst.gradient(k, w);
        let x = w - w_star;
        let m = &inst.masks[k];
        let terms: Vec<f64> = (0..x.len()).filter(|&i| m[i] != 0.0).map(|i| m[i] * x[i] * g[i]).collect();
        let idx: Vec<usize> = (0..x.len()).filter(|&i| m[i] != 0.0).collect();
        let a: f64 = idx.iter().zip(&terms).map(|(&i, v)| psi[i] * v).sum();
        let plain: f64 = terms.iter().sum();
        let scale: f64 = idx.iter().zip(&terms).map(|(&i, v)| psi[i] * v.abs()).sum();
        self.points += 1;
        if terms.iter().any(|v| *v < 0.0) {
            self.sign_failures += 1;
        }
        for (j, floor) in floors.iter().enumerate() {
            let b = floor * plain;
            if !a.is_finite() || !b.is_finite() {
                self.non_finite += usize::from(j == 0);
                continue;
            }
            if b > 0.0 {
                self.min_ratio[j] = self.min_ratio[j].min(a / b);
            }
            if a < b - super::prec::WITHIN_ROUNDING * x.len() as f64 * scale {
                self.failures[j] += 1;
                self.first_failure[j] = self.first_failure[j].or(Some((at.0, k, at.1, a, b)));
            }
        }
    }

    /// Adds another path's tally (its first failures count only when this one has none, or
    /// when theirs is earlier).
    pub fn merge(&mut self, other: &PsiStepTally) {
        self.points += other.points;
        self.sign_failures += other.sign_failures;
        self.non_finite += other.non_finite;
        for j in 0..READINGS {
            self.failures[j] += other.failures[j];
            self.min_ratio[j] = self.min_ratio[j].min(other.min_ratio[j]);
            self.first_failure[j] = match (self.first_failure[j], other.first_failure[j]) {
                (Some(a), Some(b)) => Some(if (b.0, b.2, b.1) < (a.0, a.2, a.1) { b } else { a }),
                (a, b) => a.or(b),
            };
        }
    }
}

/// The verdict of reading `j` ([`psi_floors`]): holds iff `A >= B` (within rounding) at every
/// point, else violated with the first failure in the notes; slack `min A / B` over points with
/// `B > 0`. The notes log how often the coordinate-sign condition `x_i g_i >= 0` on every
/// masked coordinate failed: sufficient for the step, not necessary, so information only.
pub fn evaluation(tally: &PsiStepTally, j: usize, replicates: usize) -> Evaluation {
    let mut notes = vec![format!(
        "{} points over {replicates} sample path(s); A < B at {} of them; x_i g_i < 0 on some masked coordinate at {} \
         (the sign condition, sufficient but not necessary: information only)",
        tally.points, tally.failures[j], tally.sign_failures
    )];
    if let Some((t, k, r, a, b)) = tally.first_failure[j] {
        notes.push(format!("first failure: round {t}, client {k}, replicate {r}: A = {}, B = {}", fmt_num(a), fmt_num(b)));
    }
    let verdict = if tally.non_finite > 0 {
        notes.push(format!("{} points with a side not finite", tally.non_finite));
        VerdictKind::Inconclusive
    } else if tally.failures[j] > 0 {
        VerdictKind::Violated
    } else {
        VerdictKind::Holds
    };
    let estimator = if replicates == 1 { Estimator::Deterministic } else { Estimator::MonteCarlo };
    let slack = Some(tally.min_ratio[j]).filter(|v| v.is_finite());
    Evaluation { verdict, slack, decisive: None, checks: Vec::new(), failed: Vec::new(), notes, estimator, series: Vec::new(), beyond_steps: None }
}
