//! FedPLT claims of Dabaja and El-Azouzi (001; CLAIMS.md section 2): the one-round recursion, the
//! constant- and decaying-step bounds, the proof's induction step and the limit of the iterates.
//!
//! Every bound is a free function of [`Inputs`] citing its line; the [`FedPltClaim`] values wire
//! each one to its checks. Constants that the paper assumes on all of `R^d` but that cannot be
//! finite there (`G^2` of Assumption 5) are `None` in the claim as stated and measured on the
//! run in the labelled empirical evaluation, like the alignment ratio of Assumption 6, which is a
//! property of the trajectory.

use serde::Serialize;

use crate::claim::{fmt_num, BoundClaim, Comparison, ConditionCheck, ConditionKind, Declaration, Horizon, Reading, Relation};

use super::runs::Schedule;

/// Everything the bounds and checks read (each named as a symbol of [`super::formulas::SYMBOLS`]:
/// `t` is `T`, `l` is `L`, `d0` is `D0`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Inputs {
    pub t: usize,
    pub l: f64,
    pub mu: f64,
    pub sigma2: f64,
    pub tau: usize,
    /// `psi_` over covered coordinates.
    pub psi_min: f64,
    /// `psibar`.
    pub psi_max: f64,
    /// `Lambda = sum_k c_k (F* - F_k*)`.
    pub lambda: f64,
    pub d0: f64,
    /// `Gamma = sum_k c_k alpha_{r_k}^2` as printed.
    pub gamma_mask: f64,
    /// `Gamma` with `alpha = sqrt(r_k)` (I-PLT2 variant).
    pub gamma_mask_sqrt_r: f64,
    /// `max_k alpha_{r_k}` as printed.
    pub alpha_max: f64,
    /// `min_k alpha_{r_k}` as printed.
    pub alpha_min: f64,
    pub sqrt_r_max: f64,
    pub sqrt_r_min: f64,
    /// `G^2` of Assumption 5: `None` as stated (it cannot be finite on `R^d`), or the run's
    /// supremum of `E||grad F_k||^2` at the local iterates (empirical).
    pub g2: Option<f64>,
    /// `rho_ = min rho_k` along the run's sample paths (NaN when a ratio was undefined).
    pub rho_min: f64,
    /// Where Assumption 6 failed along the run, if it did.
    pub alignment_failure: Option<(usize, usize, u64, f64)>,
    /// Points of the run where rho_k was not decided (the mask's coordinates within rounding of W*).
    pub alignment_within_rounding: usize,
    /// Where the run first overflowed (round, client, sample path), if it did: A6 is measured on
    /// the points before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alignment_overflow: Option<(usize, usize, u64)>,
    pub schedule: Schedule,
    /// Whether a decaying schedule's `z` is the paper's `z` of this run.
    pub schedule_z_consistent: bool,
    /// `||W_lim - W*||^2` of the small-step limit of the masked dynamics.
    pub limit_gap: f64,
    /// Assumption 6 at the small-step limit, where it is not `W*` ([`super::a6::at_limit`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_alignment: Option<super::a6::LimitAlignment>,
    /// `(min_k eta_k, max_k eta_k)` at round 0 when the clients' steps differ (per-client step
    /// factors, eq. 4, 001:L57); `None` when every client takes the round's step `eta^t`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_steps: Option<(f64, f64)>,
}

impl Horizon for Inputs {
    fn horizon(&self) -> usize {
        self.t
    }
    fn at_horizon(&self, t: usize) -> Self {
        Self { t, ..*self }
    }
}

/// Which masking factor a reading uses (I-PLT2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Alpha {
    /// `alpha_{r_k} = min(1, sqrt(d r_k))` as printed (001:L357).
    Printed,
    /// `alpha_{r_k} = sqrt(r_k)`: the likely intent, not a worst-case bound.
    SqrtR,
}

impl Inputs {
    /// `z = mu psi_ rho_` (001:L626).
    pub fn z(&self) -> f64 {
        self.mu * self.psi_min * self.rho_min
    }

    fn alphas(&self, a: Alpha) -> (f64, f64, f64) {
        match a {
            Alpha::Printed => (self.gamma_mask, self.alpha_max, self.alpha_min),
            Alpha::SqrtR => (self.gamma_mask_sqrt_r, self.sqrt_r_max, self.sqrt_r_min),
        }
    }

    /// The smallest and largest step of the schedule over rounds `0..T`.
    pub fn step_range(&self) -> (f64, f64) {
        let first = self.schedule.eta(0);
        let last = self.schedule.eta(self.t.saturating_sub(1));
        (first.min(last), first.max(last))
    }

    /// `nu = max_{t,k} [2 psibar^2 alpha_{r_k}^2 (1 - eta^t L) + psi_ rho_]` (001:L516, maxed over
    /// `k` too: I-PLT10), largest at the smallest step and the largest `alpha`.
    pub fn nu(&self, a: Alpha) -> f64 {
        let (_, alpha_max, _) = self.alphas(a);
        let (eta_min, _) = self.step_range();
        2.0 * self.psi_max.powi(2) * alpha_max.powi(2) * (1.0 - eta_min * self.l) + self.psi_min * self.rho_min
    }

    /// `B = 2 tau^2 (G^2 + sigma^2) Gamma + 2 L nu Lambda + sigma^2 psibar^2 Gamma` (001:L626), or
    /// NaN when `G^2` is not finite.
    pub fn b(&self, a: Alpha) -> f64 {
        let (gamma, _, _) = self.alphas(a);
        let g2 = self.g2.unwrap_or(f64::NAN);
        let tau = self.tau as f64;
        2.0 * tau * tau * (g2 + self.sigma2) * gamma + 2.0 * self.l * self.nu(a) * self.lambda + self.sigma2 * self.psi_max.powi(2) * gamma
    }
}

/// The right-hand side of the one-round recursion at step `eta`:
/// `(1 - z eta) D^t + eta^2 B` (001:L616-626).
pub fn recursion_rhs(x: &Inputs, a: Alpha, eta: f64, d_t: f64) -> f64 {
    (1.0 - x.z() * eta) * d_t + eta * eta * x.b(a)
}

/// The constant-step bound `D^t <= (1 - z eta)^t D^0 + eta B / z` (001:L637-649).
pub fn constant_step_bound(x: &Inputs, eta: f64, t: usize) -> f64 {
    let z = x.z();
    (1.0 - z * eta).powi(t as i32) * x.d0 + eta * x.b(Alpha::Printed) / z
}

/// The decaying-step constant: `C = D^0 + B / z^2` from the base case as written (001:L679), or
/// `C = B / z^2`, the smallest of "any C >= B/z^2" (001:L695, L700).
pub fn decaying_constant(x: &Inputs, base_case: bool) -> f64 {
    let c = x.b(Alpha::Printed) / x.z().powi(2);
    if base_case {
        x.d0 + c
    } else {
        c
    }
}

/// The corrected decaying-step constant: with `eta^t = beta' / (t + g)`, `beta' = beta / z` and
/// `beta' z = beta > 1`, the recursion gives `D^t <= v / (t + g)` for
/// `v = max(beta'^2 B / (beta' z - 1), g D^0)` (induction: `(1 - beta'z/(t+g)) v/(t+g) +
/// beta'^2 B/(t+g)^2 <= (t+g-1) v/(t+g)^2 <= v/(t+g+1)`).
pub fn corrected_constant(x: &Inputs) -> f64 {
    match x.schedule {
        Schedule::Decaying { z, beta, offset } => {
            let b_prime = beta / z;
            (b_prime * b_prime * x.b(Alpha::Printed) / (beta - 1.0)).max(offset * x.d0)
        }
        Schedule::Constant(_) => f64::NAN,
    }
}

/// The induction step's two sides at `t`: `((C t + B/z^2) / (t+1)^2, C / (t+2))`; the proof
/// claims the first is at most the second whenever `C >= B/z^2` (001:L686-695).
pub fn induction_sides(c: f64, b_over_z2: f64, t: usize) -> (f64, f64) {
    let t = t as f64;
    ((c * t + b_over_z2) / ((t + 1.0) * (t + 1.0)), c / (t + 2.0))
}

/// [`induction_sides`] at `t` with the proof's `C = B/z^2` (001:L695).
pub fn induction_at(x: &Inputs, t: usize) -> (f64, f64) {
    let c = decaying_constant(x, false);
    induction_sides(c, c, t)
}

/// The recursion taken with equality under `eta^t = 1/(z (t+1))`: `D^1 = B/z^2` and
/// `D^t = (B/z^2) H_t / t` with `H_t = sum_{s<=t} 1/s` (I-PLT7), for `t = 1..=horizon`.
pub fn equality_solution(b_over_z2: f64, horizon: usize) -> Vec<f64> {
    let mut h = 0.0;
    (1..=horizon)
        .map(|t| {
            h += 1.0 / t as f64;
            b_over_z2 * h / t as f64
        })
        .collect()
}

/// The right-hand side of the variance bound of the masked update at step `eta` (001:L276):
/// `(eta^t)^2 sigma^2 psibar^2 sum_k c_k^2 alpha_{r_k}^2`, with `c2_alpha2 = sum_k c_k^2
/// alpha_{r_k}^2` (alpha as printed, 001:L357); with per-client steps `eta_k = s_k eta^t`,
/// `c2_alpha2 = sum_k c_k^2 s_k^2 alpha_{r_k}^2`, the bound of Step 3 client by client.
pub fn variance_bound(x: &Inputs, eta: f64, c2_alpha2: f64) -> f64 {
    eta * eta * x.sigma2 * x.psi_max * x.psi_max * c2_alpha2
}

/// The right-hand side of the local divergence bound at step `eta` (001:L592):
/// `(eta^t)^2 tau^2 (G^2 + sigma^2) Gamma`, `Gamma = sum_k c_k alpha_{r_k}^2` (001:L588), or with
/// per-client steps `eta_k = s_k eta^t` the same bound client by client, `gamma =
/// sum_k c_k s_k^2 alpha_{r_k}^2` in place of `Gamma`; NaN when `G^2` is not finite.
pub fn divergence_bound(x: &Inputs, eta: f64, gamma: f64) -> f64 {
    let tau = x.tau as f64;
    eta * eta * tau * tau * (x.g2.unwrap_or(f64::NAN) + x.sigma2) * gamma
}

/// The claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FedPltClaim {
    /// FEDPLT-REC: `D^{t+1} <= (1 - z eta^t) D^t + (eta^t)^2 B` in expectation, every round.
    Recursion {
        /// Any `tau` (the flagged variant); the primary reading is the proof's `tau = 1` (I-PLT8).
        tau_steps: bool,
        /// `alpha = sqrt(r_k)` (the flagged variant of I-PLT2).
        sqrt_r: bool,
    },
    /// FEDPLT-CONST: the constant-step bound.
    ConstantStep,
    /// FEDPLT-DECAY: `D^t <= C/(t+1)` under `eta^t = 1/(z(t+1))`.
    DecayingStep {
        /// `C = B/z^2` (the flagged variant) instead of the base case's `D^0 + B/z^2`.
        any_c: bool,
    },
    /// FEDPLT-DECAY~corrected: `eta^t = beta/(z (t + g))` with `beta > 1` gives
    /// `D^t <= v/(t + g)`, the standard repair of Case 2 (CLAIMS.md, I-PLT7).
    DecayingCorrected,
    /// FEDPLT-DECAY-INDUCTION: the induction step `f(t) <= 0` for `C = B/z^2`.
    DecayInduction,
    /// FEDPLT-DECAY-RECURSION: the recursion with equality against `C/(t+1)`.
    DecayRecursion,
    /// FEDPLT-LIMIT: with vanishing steps the iterates converge to `W*` (001:L708-713), where
    /// Case 2's Assumption 6 holds along the run; `unconditional`: with no assumption, as the
    /// introduction states it for any static mask scheme (001:L24).
    Limit {
        /// No assumption (the variant).
        unconditional: bool,
    },
    /// FEDPLT-A6: Assumption 6 as stated, `rho_k(W) > 0` for every client and every `W`
    /// (001:L151-155), decided exactly per mask and Hessian ([`super::a6::decide`]).
    AssumptionSix,
    /// FEDPLT-PSI-STEP: the psi step of Part 2, `-eta c_k <x, psi .* m_k .* g> <= -eta psi_ c_k
    /// <x, m_k .* g>` (001:L404-408), with `psi_` over all coordinates (001:L388) or, in the
    /// variant, over the coordinates some client updates (I-PLT4).
    PsiStep {
        /// `psi_` over updated coordinates only.
        updated_only: bool,
    },
    /// FEDPLT-VAR-L276: the variance of the masked update, `E||Delta^t - bar Delta^t||^2 <=
    /// (eta^t)^2 sigma^2 psibar^2 sum_k c_k^2 alpha_{r_k}^2` (001:L276), in the proof's
    /// one-gradient model (tau = 1, I-PLT8).
    UpdateVariance,
    /// FEDPLT-DIV-L592: the local divergence, `E sum_k c_k ||W_k^t - W^t||^2 <= (eta^t)^2 tau^2
    /// (G^2 + sigma^2) Gamma` with `W_k^t = W_k^{t,tau}` (001:L558, L592); `G^2` bounds the local
    /// gradients at the local iterates, as the proof uses it (001:L576), or, in the variant, the
    /// global gradient as Assumption 5 prints it (001:L143-149, I-PLT1).
    LocalDivergence {
        /// `G^2` of the global gradient `grad F` (as printed) instead of the local ones.
        global_gradient: bool,
    },
}

/// Every claim, in report order.
pub const ALL: [FedPltClaim; 17] = [
    FedPltClaim::Recursion { tau_steps: false, sqrt_r: false },
    FedPltClaim::Recursion { tau_steps: true, sqrt_r: false },
    FedPltClaim::Recursion { tau_steps: false, sqrt_r: true },
    FedPltClaim::ConstantStep,
    FedPltClaim::DecayingStep { any_c: false },
    FedPltClaim::DecayingStep { any_c: true },
    FedPltClaim::DecayingCorrected,
    FedPltClaim::DecayInduction,
    FedPltClaim::DecayRecursion,
    FedPltClaim::Limit { unconditional: false },
    FedPltClaim::Limit { unconditional: true },
    FedPltClaim::AssumptionSix,
    FedPltClaim::PsiStep { updated_only: false },
    FedPltClaim::PsiStep { updated_only: true },
    FedPltClaim::UpdateVariance,
    FedPltClaim::LocalDivergence { global_gradient: false },
    FedPltClaim::LocalDivergence { global_gradient: true },
];

/// Rounds the decaying-step recursion is solved for, beyond any run's horizon (its failure grows
/// like `log t`, so it needs long horizons to show).
pub const RECURSION_HORIZON: usize = 1_000_000;

const REC_METRIC: &str = "E||W^{t+1} - W*||^2 vs (1 - z eta^t) E||W^t - W*||^2 + (eta^t)^2 B, each round";
const D_METRIC: &str = "D^t = E||W^t - W*||^2, each round";
const PSI_TITLE: &str = "Psi step of Part 2: -eta c_k <x, psi .* m_k .* g> <= -eta psi_ c_k <x, m_k .* g>";
const PSI_METRIC: &str = "<x, psi .* m_k .* g> vs psi_ <x, m_k .* g>, x = W_k^t - W*, g = grad F_k(W_k^t), at every point of the sample paths";
const VAR_METRIC: &str = "E||Delta^t - bar Delta^t||^2 = (eta^t)^2 (sigma^2/d) sum_i psi_i^2 sum_k c_k^2 (m_k)_i, each round, exact (closed form)";
const DIV_METRIC: &str = "E sum_k c_k ||W_k^{t,tau} - W^t||^2 vs (eta^t)^2 tau^2 (G^2 + sigma^2) Gamma, each round, exact";
const DIV_TITLE: &str = "Local divergence of Step 4.6: E sum_k c_k ||W_k^t - W^t||^2 <= (eta^t)^2 tau^2 (G^2 + sigma^2) Gamma";
const AS_PRINTED: Reading = Reading::primary("as printed");

/// A condition the derivation uses (001:L504-510) but no result states: reported, never a
/// reason for "not applicable" (I-PLT6).
fn implicit(name: &str, given: f64, required: f64) -> ConditionCheck {
    ConditionCheck::compare(name, ConditionKind::Implicit, given, Relation::AtMost, required)
}

fn scope(name: &str, holds: bool) -> ConditionCheck {
    ConditionCheck::compare(name, ConditionKind::Scope, f64::from(u8::from(holds)), Relation::Equal, 1.0)
}

/// One step `eta^t` for every client: the analysis writes every client's update with the round's
/// step, `U_k^t = -eta^t grad l(W_k^t; xi_k)` (001:L108-110, L194), though eq. 4 gives each client
/// its own `eta_k` (001:L57); the recursion of Step 5 and every result built on it (Cases 1 and 2,
/// the limit) are proven for that common step. `None` when the run's clients share it.
fn common_step(x: &Inputs) -> Option<ConditionCheck> {
    let (lo, hi) = x.client_steps?;
    let name = format!(
        "one step eta^t for every client (the analysis takes U_k^t = -eta^t grad l(W_k^t; xi_k), 001:L108-110, L194; eq. 4 has eta_k, 001:L57); \
         client steps differ: min eta_k = {}, max eta_k = {} at t = 0 (given: their ratio)",
        fmt_num(lo),
        fmt_num(hi)
    );
    Some(ConditionCheck { holds: false, ..ConditionCheck::compare(name, ConditionKind::Scope, hi / lo, Relation::Equal, 1.0) })
}

/// `tau = 1`: the recursion of Step 5 replaces the `tau` local steps by one gradient at `W_k^t`
/// (001:L29, L558; I-PLT8), so it and every bound derived from it (Cases 1 and 2) are proven
/// for one local step only.
fn one_local_step(x: &Inputs) -> ConditionCheck {
    ConditionCheck::compare("tau = 1 (the proof's per-step model, I-PLT8)", ConditionKind::Scope, x.tau as f64, Relation::Equal, 1.0)
}

impl FedPltClaim {
    /// The claim's id, title, source lines, reading and metric.
    #[rustfmt::skip]
    pub fn declaration(&self) -> Declaration {
        use FedPltClaim::*;
        let (id, title, source, reading, metric) = match self {
            Recursion { tau_steps: false, sqrt_r: false } => ("FEDPLT-REC", "One-round recursion of E||W^t - W*||^2 (Step 5)", "001:L616-632",
                Reading::primary("B as printed with alpha = min(1, sqrt(d r_k)) (I-PLT2, I-PLT9, I-PLT11); the proof's per-step model, tau = 1 (I-PLT8); \
                                  psi_ over covered coordinates (I-PLT4)"), REC_METRIC),
            Recursion { tau_steps: true, .. } => ("FEDPLT-REC~tau-steps", "One-round recursion with a genuine tau-step round", "001:L616-632",
                Reading::variant("tau-steps", "the recursion for a genuine tau-step round; the proof replaces tau steps by one gradient at W_k^t (I-PLT8): \
                                               unproven, tested"), REC_METRIC),
            Recursion { sqrt_r: true, .. } => ("FEDPLT-REC~alpha-sqrt-r", "One-round recursion with alpha = sqrt(r_k)", "001:L616-632",
                Reading::variant("alpha-sqrt-r", "alpha_{r_k} = sqrt(r_k), the likely intent of L357; not a worst-case masking bound (I-PLT2)"), REC_METRIC),
            ConstantStep => ("FEDPLT-CONST", "Constant step: geometric decay to a ball of radius eta B / z (Case 1)", "001:L637-653",
                Reading::primary("as printed, in the recursion's scope tau = 1 (I-PLT8)"), D_METRIC),
            DecayingStep { any_c: false } => ("FEDPLT-DECAY", "Decaying step 1/(z(t+1)): D^t <= C/(t+1), C = D^0 + B/z^2 (Case 2)", "001:L655-706",
                Reading::primary("C = D^0 + B/z^2, the base case as written at L679 (I-PLT7)"), D_METRIC),
            DecayingStep { any_c: true } => ("FEDPLT-DECAY~any-c", "Decaying step with C = B/z^2 (any C >= B/z^2)", "001:L655-706",
                Reading::variant("any-c", "C = B/z^2, the smallest C of L695 and L700; the base case at L679 needs D^0 + B/z^2 (I-PLT7)"), D_METRIC),
            DecayingCorrected => ("FEDPLT-DECAY~corrected", "Corrected decaying step beta/(z (t + g)), beta > 1: D^t <= v/(t + g)", "001:L655-706",
                Reading::variant("corrected", "the standard repair of Case 2 (I-PLT7): a step beta/(z (t+g)) with beta > 1 makes the recursion give O(1/t), \
                                               v = max((beta/z)^2 B/(beta - 1), g D^0)"), D_METRIC),
            DecayInduction => ("FEDPLT-DECAY-INDUCTION", "Induction step of Case 2: f(t) <= 0 whenever C >= B/z^2", "001:L681-695", AS_PRINTED,
                "(C t + B/z^2)/(t+1)^2 vs C/(t+2), C = B/z^2"),
            DecayRecursion => ("FEDPLT-DECAY-RECURSION", "Case 2's recursion, solved with equality, stays below C/(t+1)", "001:L659-704", AS_PRINTED,
                "(B/z^2) H_t / t (the recursion with equality) vs C/(t+1)"),
            Limit { unconditional: false } => ("FEDPLT-LIMIT", "With vanishing steps the global model converges to W* (Case 2, under A6)", "001:L708-713",
                Reading::primary("Case 2's conclusion where Case 2's alignment A6 holds, checked along the run as for FEDPLT-DECAY (A6 as printed, for all W, fails on every partial mask; A5 bounds the ball, not the limit)"),
                "||W_lim - W*||^2, W_lim the small-step limit of the masked dynamics"),
            Limit { unconditional: true } => ("FEDPLT-LIMIT~unconditional", "Any static mask scheme converges to W*", "001:L24, L710",
                Reading::variant("unconditional", "as the introduction (L24) and the summary (L710) state it, with no assumption: where A6 fails the limit can differ from W*"),
                "||W_lim - W*||^2, W_lim the small-step limit of the masked dynamics"),
            AssumptionSix => ("FEDPLT-A6", "Assumption 6 for all W: rho_k(W) > 0 for every client k and every W != W*", "001:L151-155",
                Reading::primary("as stated, for all W (not only along a run); decided in closed form per mask and Hessian"),
                "lambda_min(sym(m_k .* H_k)) per client with a_k = W*; W = a_k otherwise (rho_k undefined there)"),
            PsiStep { updated_only: false } => ("FEDPLT-PSI-STEP", PSI_TITLE, "001:L388, L404-408",
                Reading::primary("as printed: psi_ = min_i psi_i over all coordinates (L388; psi_i = 1 where no client updates); a proof step (I-PLT4)"), PSI_METRIC),
            PsiStep { updated_only: true } => ("FEDPLT-PSI-STEP~updated-coordinates", PSI_TITLE, "001:L388, L404-408",
                Reading::variant("updated-coordinates", "psi_ = min psi_i over the coordinates some client updates, the reading the proof supports (I-PLT4)"),
                PSI_METRIC),
            UpdateVariance => ("FEDPLT-VAR-L276", "Variance of the masked update: E||Delta^t - bar Delta^t||^2 <= (eta^t)^2 sigma^2 psibar^2 sum_k c_k^2 alpha^2",
                "001:L264-276", Reading::primary("as printed, c_k^2 (I-PLT11) and alpha = min(1, sqrt(d r_k)) (I-PLT2), in the proof's one-gradient model tau = 1 (I-PLT8)"),
                VAR_METRIC),
            LocalDivergence { global_gradient: false } => ("FEDPLT-DIV-L592", DIV_TITLE, "001:L554-592",
                Reading::primary("G^2 bounds E||grad F_k||^2 at the local iterates, as the proof uses it at L576 (I-PLT1); W_k^t = W_k^{t,tau} (L558)"), DIV_METRIC),
            LocalDivergence { global_gradient: true } => ("FEDPLT-DIV-L592~global-gradient", DIV_TITLE, "001:L143-149, L592",
                Reading::variant("global-gradient", "G^2 of Assumption 5 as printed: a bound on the global gradient ||grad F||^2, measured at the points the run \
                                                     visits; the proof's step at L576 needs the local gradients (I-PLT1)"), DIV_METRIC),
        };
        Declaration { id, title, source, reading, metric }
    }

    /// Whether the claim bounds the run's `D^t` (as opposed to the proof's algebra, a limit point
    /// or a step of the proof compared with its own quantity).
    pub fn uses_run(&self) -> bool {
        matches!(self, FedPltClaim::Recursion { .. } | FedPltClaim::ConstantStep | FedPltClaim::DecayingStep { .. } | FedPltClaim::DecayingCorrected)
    }

    /// Whether the claim's card entry carries a formula twinning its bound or sides: every claim
    /// but FEDPLT-A6, a strict inequality over all `W` decided in closed form
    /// ([`super::a6::decide`]), which no formula over the run's symbols expresses, and the steps
    /// of the proof compared with quantities of their own (the psi step at the sample paths'
    /// points, the update's variance and the local divergence of a round), which are not
    /// symbols of the family's formulas.
    pub fn has_formula(&self) -> bool {
        !matches!(self, FedPltClaim::AssumptionSix | FedPltClaim::PsiStep { .. } | FedPltClaim::UpdateVariance | FedPltClaim::LocalDivergence { .. })
    }

    /// Whether an empirical evaluation (`G^2` measured on the run) is reported beside the claim
    /// as stated.
    pub fn needs_g2(&self) -> bool {
        !matches!(self, FedPltClaim::Limit { .. } | FedPltClaim::AssumptionSix | FedPltClaim::PsiStep { .. } | FedPltClaim::UpdateVariance)
    }

    /// The step conditions (a)-(d) at every step of the schedule (001:L504-510, I-PLT6), with the
    /// masking factors of reading `a`: implicit, since the results do not state them.
    fn step_checks(x: &Inputs, a: Alpha) -> Vec<ConditionCheck> {
        let (_, alpha_max, alpha_min) = x.alphas(a);
        let (eta_min, eta_max) = x.step_range();
        let (psi_rho, psi2) = (x.psi_min * x.rho_min, x.psi_max * x.psi_max);
        let mut out = vec![implicit("(a) eta^t < 1/L (001:L507)", eta_max, 1.0 / x.l)];
        if alpha_max > 0.0 {
            let gamma_k = psi_rho / (2.0 * psi2 * alpha_max * alpha_max * x.l);
            out.push(implicit("(b) gamma_k > 0: eta^t < psi_ rho_ / (2 psibar^2 alpha^2 L) (001:L454, L509)", eta_max, gamma_k));
        }
        let c = psi_rho - 2.0 * eta_min * psi2 * alpha_min * alpha_min * x.l;
        out.push(implicit("(c) gamma_k / (2 eta^t) < 1: psi_ rho_ - 2 eta^t psibar^2 alpha^2 L < 1 (001:L510)", c, 1.0));
        out.push(implicit("(d) z eta^t < 1", x.z() * eta_max, 1.0));
        out
    }

    /// Assumption 5 as this run meets it: not at all as stated, or with `G^2` measured on the run.
    fn a5_check(x: &Inputs) -> ConditionCheck {
        match x.g2 {
            None => ConditionCheck::assumption(
                "A5 bounded global gradient (001:L143-149)",
                false,
                "||grad F(W)|| >= mu ||W - W*|| is unbounded on R^d for a mu-strongly convex F, so no finite G exists (I-PLT1)",
            ),
            Some(g2) => ConditionCheck::assumption(
                "A5 bounded gradient, on the run",
                g2.is_finite(),
                format!(
                    "G^2 = {} = sup of E||grad F_k||^2 at the local iterates the run visits (empirical; the proof's step at 001:L576 needs local gradients)",
                    fmt_num(g2)
                ),
            ),
        }
    }

    /// Assumptions 5 and 6 as this run meets them.
    fn assumption_checks(x: &Inputs) -> Vec<ConditionCheck> {
        vec![Self::a5_check(x), Self::a6_check(x)]
    }

    /// Assumption 6 along the run: `rho_k > 0` at every point the sample paths visit, up to the
    /// first that overflowed (where nothing is measured, and which the detail names).
    fn a6_check(x: &Inputs) -> ConditionCheck {
        let mut check = Self::a6_measured(x);
        if let Some((t, k, r)) = x.alignment_overflow {
            check.detail = format!("{}; the run overflowed at round {t}, client {k}, sample path {r}: rho_k is measured on the points before it", check.detail);
        }
        check
    }

    /// Assumption 6 at the small-step limit `W_lim != W*` ([`super::a6::at_limit`]).
    fn a6_at_limit(a: super::a6::LimitAlignment) -> ConditionCheck {
        let detail = match a.rho {
            rho if rho.is_nan() => format!(
                "client {}'s <grad F_k(W_lim), W_lim - W*> is 0 to the rounding of the solves: rho_k(W_lim), where the ratios tend, is not decided",
                a.client
            ),
            rho if rho > 0.0 => format!("min_k rho_k(W_lim) = {} (client {})", fmt_num(rho), a.client),
            rho => format!(
                "rho_k(W_lim) = {} <= 0 at client {}: the ratios rho_k^t of a run settling at W_lim tend to it, so min over t in N is not > 0",
                fmt_num(rho),
                a.client
            ),
        };
        ConditionCheck::assumption("A6 at the limit W_lim the run tends to (001:L396, t in N)", a.holds(), detail)
    }

    /// Assumption 6 on the points of the run that were measured.
    fn a6_measured(x: &Inputs) -> ConditionCheck {
        let rho = fmt_num(x.rho_min);
        let (holds, detail) = match (x.alignment_failure, x.alignment_within_rounding) {
            // Nothing measured (every point overflowed or was within rounding of W*): not shown.
            (None, _) if x.rho_min == f64::INFINITY => (false, "rho_k not measured at any point of the run".to_string()),
            (None, 0) => (true, format!("rho_ = {rho} (measured)")),
            (None, n) => {
                (true, format!("rho_ = {rho} (measured; at {n} points the mask's coordinates were within rounding of W*, where rho_k is not decided)"))
            }
            (Some((t, k, r, v)), _) if v.is_nan() => {
                (false, format!("rho_k undefined (its denominator <grad F_k(W), W - W*> is 0) at round {t}, client {k}, sample path {r}"))
            }
            (Some((t, k, r, v)), _) => (false, format!("rho_k = {} <= 0 at round {t}, client {k}, sample path {r}", fmt_num(v))),
        };
        ConditionCheck::assumption("A6 positive masked alignment, along the run", holds, detail)
    }
}

impl BoundClaim for FedPltClaim {
    type Inputs = Inputs;

    fn id(&self) -> &'static str {
        self.declaration().id
    }
    fn title(&self) -> &'static str {
        self.declaration().title
    }
    fn source(&self) -> &'static str {
        self.declaration().source
    }
    fn reading(&self) -> Reading {
        self.declaration().reading
    }
    fn comparison(&self) -> Comparison {
        Comparison::PerRound
    }
    fn every_prefix(&self) -> bool {
        true
    }

    fn checks(&self, x: &Inputs) -> Vec<ConditionCheck> {
        let decaying = matches!(x.schedule, Schedule::Decaying { beta, offset, .. } if beta == 1.0 && offset == 1.0);
        let z_consistent = || ConditionCheck::assumption("the schedule's z is this run's z = mu psi_ rho_", x.schedule_z_consistent, "");
        let mut out = Vec::new();
        // A6 and the psi step do not involve the step (the psi step is an inequality per client,
        // divided by its eta_k > 0); the update's variance and the local divergence are taken
        // client by client ([`variance_bound`], [`divergence_bound`]).
        if !matches!(self, FedPltClaim::AssumptionSix | FedPltClaim::PsiStep { .. } | FedPltClaim::UpdateVariance | FedPltClaim::LocalDivergence { .. }) {
            out.extend(common_step(x));
        }
        match self {
            FedPltClaim::Recursion { tau_steps, sqrt_r } => {
                if !tau_steps {
                    out.push(one_local_step(x));
                }
                out.extend(Self::assumption_checks(x));
                out.extend(Self::step_checks(x, if *sqrt_r { Alpha::SqrtR } else { Alpha::Printed }));
            }
            FedPltClaim::ConstantStep => {
                out.push(scope("a constant step", matches!(x.schedule, Schedule::Constant(_))));
                out.push(one_local_step(x));
                out.extend(Self::assumption_checks(x));
                out.push(ConditionCheck::compare("eta in (0, 1/z) (001:L639)", ConditionKind::StepSize, x.schedule.eta(0) * x.z(), Relation::AtMost, 1.0));
                out.extend(Self::step_checks(x, Alpha::Printed));
            }
            FedPltClaim::DecayingStep { .. } | FedPltClaim::DecayingCorrected => {
                out.push(match self {
                    FedPltClaim::DecayingCorrected => {
                        scope("a decaying step beta/(z (t + g)) with beta > 1", matches!(x.schedule, Schedule::Decaying { beta, .. } if beta > 1.0))
                    }
                    _ => scope("the decaying step eta^t = 1/(z (t+1))", decaying),
                });
                out.push(one_local_step(x));
                out.push(z_consistent());
                out.extend(Self::assumption_checks(x));
                out.extend(Self::step_checks(x, Alpha::Printed));
            }
            FedPltClaim::DecayInduction | FedPltClaim::DecayRecursion => {
                out.push(scope("the decaying step eta^t = 1/(z (t+1))", decaying));
                out.extend(Self::assumption_checks(x));
            }
            FedPltClaim::UpdateVariance => out.push(one_local_step(x)),
            FedPltClaim::LocalDivergence { global_gradient: false } => out.push(Self::a5_check(x)),
            FedPltClaim::LocalDivergence { global_gradient: true } => out.push(match x.g2 {
                Some(g2) => ConditionCheck::assumption(
                    "A5 bounded global gradient, on the run",
                    g2.is_finite(),
                    format!("G^2 = {} = sup of E||grad F||^2 at the points the run visits (empirical; A5 as printed, 001:L143-149)", fmt_num(g2)),
                ),
                None => Self::a5_check(x),
            }),
            // Case 2's conclusion where its alignment holds: A6 along the run as FEDPLT-DECAY checks
            // it, and where the run tends to a point other than W*, at that point (the ratios of
            // every t in N tend there, 001:L396); A5 bounds the noise ball, not the limit, and fails
            // on every strongly convex F.
            FedPltClaim::Limit { unconditional: false } => {
                out.push(Self::a6_check(x));
                out.extend(x.limit_alignment.map(Self::a6_at_limit));
            }
            FedPltClaim::Limit { unconditional: true } | FedPltClaim::AssumptionSix | FedPltClaim::PsiStep { .. } => {}
        }
        out
    }

    /// The bound at horizon `T'`, compared with the metric of round `T' - 1`.
    fn bound(&self, x: &Inputs) -> f64 {
        let t = x.t.saturating_sub(1);
        match (self, x.schedule) {
            (FedPltClaim::ConstantStep, _) => constant_step_bound(x, x.schedule.eta(0), t),
            (FedPltClaim::DecayingStep { any_c }, _) => decaying_constant(x, !any_c) / (t as f64 + 1.0),
            (FedPltClaim::DecayingCorrected, Schedule::Decaying { offset, .. }) => corrected_constant(x) / (t as f64 + offset),
            (FedPltClaim::Limit { .. }, _) => 0.0,
            // Per-round inequalities are evaluated from their two sides, not from a bound here;
            // the corrected bound needs a decaying schedule; A6 is decided in closed form.
            _ => f64::NAN,
        }
    }
}
