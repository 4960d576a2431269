//! The psi step of Part 2 of the proof (001:L404-408, I-PLT4):
//! `-eta c_k <x, psi .* m_k .* g> <= -eta psi_ c_k <x, m_k .* g>` with `x = W_k^t - W*` and
//! `g = grad F_k(W_k^t)`, checked at every point of the sample paths where a gradient is taken.
//! Dividing by `-eta c_k < 0`, it is `A >= B` with `A = <x, psi .* m_k .* g>` and
//! `B = psi_ <x, m_k .* g>`, i.e. `sum_{i in mask_k} (psi_i - psi_) x_i g_i >= 0`.
//!
//! A failure at a sampled point is a counterexample. Sampled points alone never show the step
//! holds on noisy paths, so a "holds" there is decided on the step's quadratic form
//! ([`ClientForm`]): with `g = H_k (x + delta_k)`, `delta_k = W* - a_k`, the left side is
//! `Q_k(x) = x^T S x + b^T x` (`S = sym(D H_k)`, `b = D H_k delta_k`, `D = diag((psi_i - psi_)
//! m_k,i)`), which is `>= 0` at every `x` iff `S` is PSD and `b = 0`: then the step holds at every
//! state, wherever a path goes. A deterministic path (full gradients or no noise) is decided on
//! its own points.

use nalgebra::{DMatrix, DVector};

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

/// One point where a gradient is taken: round, client, replicate, `A = <x, psi .* m_k .* g>`,
/// `<x, m_k .* g>` (so `B = psi_ <x, m_k .* g>` for either reading) and the rounding allowance
/// `WITHIN_ROUNDING d sum_{i in mask} psi_i |x_i g_i|` below which `A < B` is rounding.
#[derive(Debug, Clone, Copy)]
pub struct PsiPoint {
    pub round: usize,
    pub client: usize,
    pub replicate: u64,
    pub a: f64,
    pub plain: f64,
    pub allowance: f64,
}

/// The points of the sample paths where the step is checked, and the floors `psi_` of both
/// readings ([`psi_floors`]).
#[derive(Debug, Clone)]
pub struct PsiStepTally {
    /// `psi_` per reading.
    pub floors: [f64; READINGS],
    /// Every point, in the order of the paths and of their rounds.
    pub points: Vec<PsiPoint>,
    /// Points where `x_i g_i < 0` on some masked coordinate (sufficient-condition failures;
    /// information only, the step needs the weighted sum alone).
    pub sign_failures: usize,
    /// The paths the points come from ([`PsiStepTally::from_paths`]); `None`: one deterministic
    /// path, decided on its own points.
    pub paths: Option<SampledPaths>,
}

/// Sampled (noisy) paths: how many, and every client's quadratic form, which decides a "holds"
/// that the points alone cannot.
#[derive(Debug, Clone)]
pub struct SampledPaths {
    /// Sample paths run.
    pub count: usize,
    /// [`ClientForm`] per client.
    pub forms: Vec<ClientForm>,
}

/// Client `k`'s step as a quadratic form of `x = W - W*`, split by `psi_` (see the module doc):
/// at the floor `f`, `S = psi_part - f plain_part` and `b = psi_linear - f plain_linear`.
/// `delta_k = W* - a_k` is taken coordinate by coordinate, 0 where it is within rounding of `W*`
/// and `a_k` (`|delta_i| <= WITHIN_ROUNDING (|W*_i| + |a_k,i|)`, as the points near `W*` are
/// skipped): an exactly shared optimum gives `b = 0` exactly, any other offset counts.
#[derive(Debug, Clone)]
pub struct ClientForm {
    /// `sym(diag(psi .* m_k) H_k)`.
    pub psi_part: DMatrix<f64>,
    /// `sym(diag(m_k) H_k)`.
    pub plain_part: DMatrix<f64>,
    /// `diag(psi .* m_k) H_k delta_k`.
    pub psi_linear: DVector<f64>,
    /// `diag(m_k) H_k delta_k`.
    pub plain_linear: DVector<f64>,
    /// `diag(psi .* m_k) |H_k| |delta_k|` and `diag(m_k) |H_k| |delta_k|`: the sizes of the terms
    /// `b_i` is computed from, its rounding's scale.
    linear_terms: (DVector<f64>, DVector<f64>),
    /// `max |H_k| max |psi .* m_k|` and `max |H_k|`: the scale of `S`'s rounding.
    part_scales: (f64, f64),
}

impl ClientForm {
    /// Client `k`'s form on `inst` with compensation `psi` and the optimum `w_star`.
    pub fn new(inst: &Instance, psi: &[f64], k: usize, w_star: &DVector<f64>) -> Self {
        let (h, m, a) = (&inst.hessians[k], &inst.masks[k], &inst.optima[k]);
        let weighted = DVector::from_fn(m.len(), |i, _| psi[i] * m[i]);
        let sym = |w: &DVector<f64>| {
            let p = DMatrix::from_diagonal(w) * h;
            (&p + p.transpose()) * 0.5
        };
        let delta = DVector::from_fn(m.len(), |i, _| {
            let d = w_star[i] - a[i];
            if d.abs() <= super::prec::WITHIN_ROUNDING * (w_star[i].abs() + a[i].abs()) {
                0.0
            } else {
                d
            }
        });
        let (h_delta, h_delta_size) = (h * &delta, h.abs() * delta.abs());
        Self {
            psi_part: sym(&weighted),
            plain_part: sym(m),
            psi_linear: weighted.component_mul(&h_delta),
            plain_linear: m.component_mul(&h_delta),
            linear_terms: (weighted.abs().component_mul(&h_delta_size), m.abs().component_mul(&h_delta_size)),
            part_scales: (h.amax() * weighted.amax(), h.amax()),
        }
    }

    /// Whether `Q(x) >= 0` at every `x` with `psi_ = floor`, to rounding `r = d`
    /// [`super::prec::PSI_FORM_ROUNDING`]: `lambda_min(S) >= -r d (max |H_k| (max |psi .* m_k| +
    /// |floor|))` and every `|b_i| <= r (psi_i m_i + |floor| m_i) (|H_k| |delta_k|)_i`; otherwise
    /// `(lambda_min(S), max |b_i|)`, why it is not.
    pub fn nonnegative(&self, floor: f64) -> std::result::Result<(), (f64, f64)> {
        let d = self.psi_part.nrows() as f64;
        let rounding = super::prec::PSI_FORM_ROUNDING * d;
        let s = &self.psi_part - &self.plain_part * floor;
        let b = &self.psi_linear - &self.plain_linear * floor;
        let lambda = s.symmetric_eigenvalues().min();
        let s_scale = self.part_scales.0 + floor.abs() * self.part_scales.1;
        let b_tolerance = (&self.linear_terms.0 + &self.linear_terms.1 * floor.abs()) * rounding;
        let b_within = b.iter().zip(b_tolerance.iter()).all(|(v, tol)| v.abs() <= *tol);
        if lambda >= -rounding * d * s_scale && b_within {
            Ok(())
        } else {
            Err((lambda, b.amax()))
        }
    }
}

/// The step's record over the points for one reading at one scale of `psi_`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsiOutcome {
    /// Points where `A < B` beyond rounding.
    pub failures: usize,
    /// The first failure (earliest round, then replicate, then client).
    pub first_failure: Option<StepFailure>,
    /// `min A / B` over points with `B > 0`, and `B / A` over points where the step fails with
    /// `B <= 0` (there `-eta c_k B >= 0` is exceeded by `-eta c_k A`: `B / A` in `[0, 1)`);
    /// infinite when there is neither. Below 1 exactly when some point fails (up to rounding).
    pub min_ratio: f64,
    /// Points where a side was not finite.
    pub non_finite: usize,
}

impl PsiStepTally {
    /// An empty tally of one deterministic path with the floors `psi_` of both readings.
    pub fn new(floors: [f64; READINGS]) -> Self {
        Self { floors, points: Vec::new(), sign_failures: 0, paths: None }
    }

    /// The same points from `count` sampled (noisy) paths on `inst`: a "holds" is then decided on
    /// the clients' forms ([`ClientForm`]).
    pub fn from_paths(self, count: usize, inst: &Instance, psi: &[f64], w_star: &DVector<f64>) -> Self {
        let forms = (0..inst.clients()).map(|k| ClientForm::new(inst, psi, k, w_star)).collect();
        Self { paths: Some(SampledPaths { count, forms }), ..self }
    }

    /// The first client whose form is negative somewhere at `psi_ = floor`, with its smallest
    /// eigenvalue and largest linear coefficient; `None` when every form is `>= 0` everywhere or
    /// the path is deterministic.
    fn negative_form(&self, floor: f64) -> Option<(usize, (f64, f64))> {
        let paths = self.paths.as_ref()?;
        paths.forms.iter().enumerate().find_map(|(k, f)| f.nonnegative(floor).err().map(|e| (k, e)))
    }

    /// Records the point `w` of client `k` at round `t`, replicate `r`.
    pub fn record(&mut self, inst: &Instance, psi: &[f64], k: usize, w: &DVector<f64>, w_star: &DVector<f64>, at: (usize, u64)) {
        let g = inst.gradient(k, w);
        let x = w - w_star;
        let m = &inst.masks[k];
        let idx: Vec<usize> = (0..x.len()).filter(|&i| m[i] != 0.0).collect();
        let terms: Vec<f64> = idx.iter().map(|&i| m[i] * x[i] * g[i]).collect();
        let a: f64 = idx.iter().zip(&terms).map(|(&i, v)| psi[i] * v).sum();
        let plain: f64 = terms.iter().sum();
        let scale: f64 = idx.iter().zip(&terms).map(|(&i, v)| psi[i] * v.abs()).sum();
        if terms.iter().any(|v| *v < 0.0) {
            self.sign_failures += 1;
        }
        let allowance = super::prec::WITHIN_ROUNDING * x.len() as f64 * scale;
        self.points.push(PsiPoint { round: at.0, client: k, replicate: at.1, a, plain, allowance });
    }

    /// Adds another path's points after this one's.
    pub fn merge(&mut self, other: &PsiStepTally) {
        self.points.extend_from_slice(&other.points);
        self.sign_failures += other.sign_failures;
    }

    /// The step of reading `j` with `psi_` divided by `bound_scale` (1 as printed; below 1 the
    /// right-hand side is tightened, as negative controls need): `A >= B / bound_scale`.
    pub fn outcome(&self, j: usize, bound_scale: f64) -> PsiOutcome {
        let mut out = PsiOutcome { failures: 0, first_failure: None, min_ratio: f64::INFINITY, non_finite: 0 };
        for p in &self.points {
            let b = self.floors[j] * p.plain / bound_scale;
            if !p.a.is_finite() || !b.is_finite() {
                out.non_finite += 1;
                continue;
            }
            if b > 0.0 {
                out.min_ratio = out.min_ratio.min(p.a / b);
            }
            if p.a < b - p.allowance {
                out.failures += 1;
                if b <= 0.0 {
                    out.min_ratio = out.min_ratio.min(if b == 0.0 { 0.0 } else { b / p.a });
                }
                let key = |f: &StepFailure| (f.0, f.2, f.1);
                let this = (p.round, p.client, p.replicate, p.a, b);
                if out.first_failure.is_none_or(|f| key(&this) < key(&f)) {
                    out.first_failure = Some(this);
                }
            }
        }
        out
    }
}

/// The verdict of reading `j` ([`psi_floors`]) with `psi_` divided by `bound_scale`
/// ([`PsiStepTally::outcome`]): violated where `A < B` beyond rounding at some point (the first
/// failure in the notes). Otherwise a deterministic path holds on its own points; sampled paths
/// hold only where every client's form is `>= 0` at every state ([`ClientForm::nonnegative`]),
/// and are inconclusive where a form is negative somewhere the samples did not reach. Slack
/// [`PsiOutcome::min_ratio`], so the search's `observed / bound = 1 / slack` exceeds 1 exactly on
/// a violation. The notes log how often the coordinate-sign condition `x_i g_i >= 0` on every
/// masked coordinate failed: sufficient for the step, not necessary, so information only.
pub fn evaluation(tally: &PsiStepTally, j: usize, bound_scale: f64) -> Evaluation {
    let o = tally.outcome(j, bound_scale);
    let replicates = tally.paths.as_ref().map_or(1, |p| p.count);
    let mut notes = vec![format!(
        "{} points over {replicates} sample path(s); A < B at {} of them; x_i g_i < 0 on some masked coordinate at {} \
         (the sign condition, sufficient but not necessary: information only)",
        tally.points.len(),
        o.failures,
        tally.sign_failures
    )];
    if let Some((t, k, r, a, b)) = o.first_failure {
        notes.push(format!("first failure: round {t}, client {k}, replicate {r}: A = {}, B = {}", fmt_num(a), fmt_num(b)));
    }
    let verdict = if o.non_finite > 0 {
        notes.push(format!("{} points with a side not finite", o.non_finite));
        VerdictKind::Inconclusive
    } else if tally.points.is_empty() {
        // Every point was within rounding of W* (or none was run): nothing decides the step.
        notes.push(crate::verdict::NOTHING_COMPARED.to_string());
        VerdictKind::Inconclusive
    } else if o.failures > 0 {
        VerdictKind::Violated
    } else {
        unviolated(tally, tally.floors[j] / bound_scale, &mut notes)
    };
    let estimator = if tally.paths.is_none() { Estimator::Deterministic } else { Estimator::MonteCarlo };
    let slack = Some(o.min_ratio).filter(|v| v.is_finite());
    Evaluation { verdict, slack, decisive: None, checks: Vec::new(), failed: Vec::new(), notes, estimator, series: Vec::new(), beyond_steps: None }
}

/// The verdict where no point failed: holds on a deterministic path (its points are all there
/// is) or where every client's form is `>= 0` at every state; inconclusive where sampled paths
/// missed a state at which a form is negative.
fn unviolated(tally: &PsiStepTally, floor: f64, notes: &mut Vec<String>) -> VerdictKind {
    if tally.paths.is_none() {
        return VerdictKind::Holds;
    }
    match tally.negative_form(floor) {
        None => {
            notes.push("holds at every state, not only the sampled points: every client's S = sym(D H_k) is PSD and b = D H_k (W* - a_k) = 0".into());
            VerdictKind::Holds
        }
        Some((k, (lambda, b))) => {
            notes.push(format!(
                "not decided: no sampled point fails, but client {k}'s form x^T S x + b^T x is negative somewhere in R^d (lambda_min(S) = {}, max |b_i| = {}), which the paths may or may not reach; samples cannot show the step holds",
                fmt_num(lambda),
                fmt_num(b)
            ));
            VerdictKind::Inconclusive
        }
    }
}
