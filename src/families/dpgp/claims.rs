//! The claims of DFedPGP checked here, with the conditions each needs.
//!
//! | id | statement | source |
//! |---|---|---|
//! | `DPGP-L1` | `E||v_i^{t,k} - v_i^t||^2 <= 16 eta_v^2 K_v^2 E||grad_v F_i(z_i^t, v_i^t)||^2 + 8 eta_v^2 K_v^2 sigma_v^2`, every client and `k <= K_v` | 004:L478-495 |
//! | `DPGP-L2` | `(1/m) sum_i E||u_i^{t,k} - u_i^t||^2 <= 32 K_u^2 eta_u^2 (sigma_u^2 + sigma_g^2 + (1/m) sum_i E||grad_u F(z_i^t, V^{t+1})||^2)`, the proof's constant (I-DPGP5) | 004:L498-518 |
//! | `DPGP-L2~printed` | the same with (10)'s `32 K_u eta_u^2` | 004:L500 |
//! | `DPGP-EQ15` | `||ubar^t - z_i^t|| <= C q^{t+1} ||u_i^0|| + eta_u C sum_{r <= t} q^{t-r} ||sum_k g_i^{r,k}||` with node `i`'s own gradients, as printed (I-DPGP4) | 004:L532 |
//! | `DPGP-L3` | `(1/m) sum_i E||ubar^t - z_i^t||^2 <= AA (sigma_u^2 + sigma_g^2 + E Delta_ubar^t)`, AA of (19) | 004:L520-556 |
//! | `DPGP-L3~printed` | the same with (13)'s AA, without the `(K_u+1)` factors (I-DPGP3) | 004:L522 |
//! | `DPGP-REC32` | per-round descent inequality (32) with `Sv` as derived (I-DPGP6) and `L_u^2 AA` in the bracket (I-DPGP7) | 004:L637-641 |
//! | `DPGP-REC32~printed-sv` | (32) with the printed `4 eta_v^2 K_v^2 L_v^2 sigma_v^2 (1+L_v)` | 004:L639 |
//! | `DPGP-REC32~bracket-aa` | (32) with `+ AA` in the bracket as in T_{2,u}'s last line | 004:L597 |
//! | `DPGP-EQ26` | the u-step (26): `E F(ubar^{t+1}, V^{t+1}) - F* <= E F(ubar^t, V^{t+1}) - F* + Cu26 E Delta_ubar^t + Su26 (sigma_u^2 + sigma_g^2)`, `L_u^2 AA` in the bracket ([`Rec32`]) | 004:L597-603 |
//! | `DPGP-EQ26~bracket-aa` | (26) with `+ AA` in the bracket as in T_{2,u}'s last line (I-DPGP7) | 004:L597 |
//! | `DPGP-EQ31` | the v-step (31): `E F(ubar^t, V^{t+1}) - F* <= E F(ubar^t, V^t) - F* + Cv E Delta_v^t + Sv + (L_vu^2 AA/2)(sigma_u^2 + sigma_g^2 + E Delta_ubar^t)`, `Sv` as derived (I-DPGP6) | 004:L604-633 |
//! | `DPGP-EQ31~printed-sv` | (31) with the printed `4 eta_v^2 K_v^2 L_v^2 sigma_v^2 (1+L_v)` | 004:L632 |
//! | `DPGP-T1` | the metric is `O(.)` of the bracket of (33): metric/bracket bounded over a sweep of `T` ([`crate::kinds::big_o`]) | 004:L131-138, L645 |
//! | `DPGP-T1~printed-step` | the same under the printed step condition `eta_u < delta/(4 sqrt(2 L_u K_u))` | 004:L131 |
//! | `DPGP-C1` | with `eta_u, eta_v` proportional to `1/sqrt(T)`, Theorem 1's metric is `O(1/sqrt(T))`: log-log slope `<= -1/2` | 004:L142-155 |
//! | `DPGP-C1~debiased-z` | the same with `Delta_v^t` at the de-biased `z_i^t = u_i^t/mu_i^t` in place of the printed `u_i^t` | 004:L133 |
//! | `DPGP-C1~rate-inv-T` | negative control: a slope `<= -1` the paper does not claim | - |
//! | `DPGP-L3~visited-sg`, `DPGP-REC32~visited-sg`, `DPGP-T1~visited-sg`, `DPGP-C1~visited-sg`, `DPGP-C1~debiased-z-visited-sg` | the claim with Assumption 4's `sigma_g^2` the supremum of `E||grad_u F_i - grad_u F||^2` over the local iterates of the run, where Lemmas 2 and 3 use it (I-DPGP13) | 004:L503, L532 |
//! | `DPGP-R2` | Remark 2: better-connected graphs (smaller `q`) give a smaller consensus error at equal steps | 004:L159 |
//! | `DPGP-R2~factor` | the same with topologies ordered by `C/(1-q)`, their factor in `AA` | 004:L159, L590 |
//! | `DPGP-R2~stationarity` | the same for Theorem 1's metric | 004:L159 |
//! | `DPGP-R1`, `DPGP-R1~variance` | Remark 1: more `K_u` (at Corollary 1's steps), smaller `sigma_u`, `sigma_v`, `sigma_g^2` give a smaller Theorem 1 metric | 004:L157 |
//! | `DPGP-R3` | Remark 3: a larger `L_u` gives a smaller share of Corollary 1's `1/T`, `T^(-3/2)` terms ([`corollary1_split`]) | 004:L177 |
//! | `DPGP-F3A`, `DPGP-F3A~consensus` | Figure 3a: more out-neighbours give a smaller metric (consensus error) | 004:L232, L240 |
//!
//! The orderings (Remarks 1-3, Figure 3a) are the checker's comparisons ([`super::compare`]).
//!
//! `C` and `q` are *estimated* from the realised mixing products
//! ([`super::topology::estimate_c_q`]): every verdict that uses them says so (`constants =
//! "estimated"`).

use serde::Serialize;

use crate::claim::{ConditionCheck, ConditionKind, Reading, Relation};
use crate::family::{ClaimKind, ClaimSummary};

use super::problem::Constants;
use super::round::Params;
use super::topology::Connectivity;

/// Corollary 1's rate (004:L142-155): Theorem 1's metric decays as `T^(-1/2)`, i.e. its log-log
/// slope over a sweep of `T` is at most this exponent.
pub const C1_EXPONENT: f64 = -0.5;

/// The negative control's rate, `1/T`, which the paper does not claim.
pub const INV_T_EXPONENT: f64 = -1.0;

/// Lemma 3's `AA`. As the proof reads it ([`AaReading::Proof`]: (19), 004:L556, and (24), L590):
/// `AA = 8 K_u^2 eta_u^2 C^2 (K_u+1) / ((1-q)^2 K_u - 8 K_u^2 eta_u^2 L_u^2 C^2 (K_u+1))`; as
/// printed ([`AaReading::Printed`]: statement (13), 004:L522) both `(K_u+1)` factors are dropped.
/// `+inf` when the denominator is not positive (the bound says nothing).
pub fn aa(params: &Params, conn: &Connectivity, l_u: f64, reading: AaReading) -> f64 {
    let k = params.k_u as f64;
    let f = if reading == AaReading::Proof { k + 1.0 } else { 1.0 };
    let num = 8.0 * k * k * params.eta_u.powi(2) * conn.c.powi(2) * f;
    let den = (1.0 - conn.q).powi(2) * k - num * l_u * l_u;
    if den > 0.0 {
        num / den
    } else {
        f64::INFINITY
    }
}

/// Which reading of inequality (32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rec32Reading {
    /// `Sv = 4 eta_v^2 K_v^2 sigma_v^2 (1 + L_v)` (sum of (28) and (29)), bracket with `L_u^2 AA`.
    Primary,
    /// `Sv` as printed, `4 eta_v^2 K_v^2 L_v^2 sigma_v^2 (1 + L_v)` (004:L632, L639; I-DPGP6).
    PrintedSv,
    /// The bracket `1 + (32 K_u L_u^2 eta_u^2/delta^2)(L_u^2 AA + 1) + AA` (004:L597; I-DPGP7).
    BracketAa,
}

/// The coefficients of (32): `E[F^{t+1} - F^t] <= Cu E Delta_ubar^t + Cv E Delta_v^t + Sv + Su
/// (sigma_u^2 + sigma_g^2)` (004:L637-641), with
/// `Pb = 1 + (32 K_u L_u^2 eta_u^2/delta^2)(L_u^2 AA + 1) + L_u^2 AA`,
/// `Cu = -eta_u K_u/2 + K_u L_u^2 eta_u AA/2 + (5 K_u L_u eta_u^2/2) Pb + L_vu^2 AA/2`,
/// `Cv = -eta_v K_v + 8 eta_v^2 K_v^2 L_v + 8 eta_v^2 K_v^2`,
/// `Su = K_u L_u^2 eta_u AA/2 + (5 K_u L_u eta_u^2/2) Pb + L_vu^2 AA/2`.
///
/// (32) is the sum of its two halves, which are claims of their own: the u-step (26)
/// (004:L597-602), `E[F(ubar^{t+1}, V^{t+1}) - F(ubar^t, V^{t+1})] <= Cu26 E Delta_ubar^t + Su26
/// (sigma_u^2 + sigma_g^2)` with `Su26 = K_u L_u^2 eta_u AA/2 + (5 K_u L_u eta_u^2/2) Pb`, `Cu26 =
/// -eta_u K_u/2 + Su26`; and the v-step (31) (004:L632), `E[F(ubar^t, V^{t+1}) - F(ubar^t, V^t)] <=
/// Cv E Delta_v^t + Sv + Vu (sigma_u^2 + sigma_g^2 + E Delta_ubar^t)` with `Vu = L_vu^2 AA/2`. So
/// `Cu = Cu26 + Vu` and `Su = Su26 + Vu`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rec32 {
    /// `AA` of (19).
    pub aa: f64,
    /// `Cu`.
    pub cu: f64,
    /// `Cv`.
    pub cv: f64,
    /// `Sv`.
    pub sv: f64,
    /// `Su`.
    pub su: f64,
    /// `Cu26`, (26)'s factor of `E Delta_ubar^t`.
    pub cu26: f64,
    /// `Su26`, (26)'s factor of `sigma_u^2 + sigma_g^2`.
    pub su26: f64,
    /// `Vu = L_vu^2 AA/2`, (31)'s factor of `sigma_u^2 + sigma_g^2 + E Delta_ubar^t` ((30), 004:L628).
    pub vu: f64,
}

impl Rec32 {
    /// The coefficients for a reading.
    pub fn new(k: &Constants, conn: &Connectivity, p: &Params, reading: Rec32Reading) -> Self {
        let aa = aa(p, conn, k.l_u, AaReading::Proof);
        let (ku, kv) = (p.k_u as f64, p.k_v as f64);
        let (eu, ev) = (p.eta_u, p.eta_v);
        let tail = if reading == Rec32Reading::BracketAa { aa } else { k.l_u * k.l_u * aa };
        let pb = 1.0 + (32.0 * ku * k.l_u.powi(2) * eu * eu / conn.delta.powi(2)) * (k.l_u.powi(2) * aa + 1.0) + tail;
        let su26 = ku * k.l_u.powi(2) * eu * aa / 2.0 + 2.5 * ku * k.l_u * eu * eu * pb;
        let vu = k.l_vu.powi(2) * aa / 2.0;
        let common = su26 + vu;
        let sv_factor = if reading == Rec32Reading::PrintedSv { k.l_v * k.l_v } else { 1.0 };
        Self {
            aa,
            cu: -eu * ku / 2.0 + common,
            cv: -ev * kv + 8.0 * ev * ev * kv * kv * k.l_v + 8.0 * ev * ev * kv * kv,
            sv: 4.0 * ev * ev * kv * kv * sv_factor * k.sigma_v.powi(2) * (1.0 + k.l_v),
            su: common,
            cu26: -eu * ku / 2.0 + su26,
            su26,
            vu,
        }
    }

    /// (26)'s right side beyond `E F(ubar^t, V^{t+1})`: `Cu26 E Delta_ubar^t + Su26 sigma` with
    /// `sigma = sigma_u^2 + sigma_g^2`.
    pub fn u_step(&self, delta_ubar: f64, sigma: f64) -> f64 {
        self.cu26 * delta_ubar + self.su26 * sigma
    }

    /// (31)'s right side beyond `E F(ubar^t, V^t)`: `Cv E Delta_v^t + Sv + Vu (sigma + E
    /// Delta_ubar^t)`.
    pub fn v_step(&self, delta_v: f64, delta_ubar: f64, sigma: f64) -> f64 {
        self.cv * delta_v + self.sv + self.vu * (sigma + delta_ubar)
    }
}

/// Assumptions 1 and 4 and the inline ones ("Assumptions 1-5", I-DPGP1): B-bounded strong
/// connectivity within the horizon (004:L106), finite `sigma_g^2` (004:L121), `delta > 0`
/// (004:L509) and `u_i^0 = 0` (004:L554, where Lemma 3 drops its `C q^t ||u_i^0||` term;
/// `u0 = max_i ||u_i^0||`, zero unless an explicit instance gives another start). Assumptions 2
/// and 3 hold on every instance (finite constants computed exactly).
pub fn assumption_checks(k: &Constants, conn: &Connectivity, rounds: usize, u0: f64) -> Vec<ConditionCheck> {
    let a1 = match conn.window {
        Some(b) => ConditionCheck::assumption("Assumption 1 (B-bounded strong connectivity)", true, format!("smallest window B = {b} within {rounds} rounds")),
        None => ConditionCheck::assumption(
            "Assumption 1 (B-bounded strong connectivity)",
            false,
            format!("no window B <= {rounds} makes every union of consecutive graphs strongly connected"),
        ),
    };
    let a4 = match k.sigma_g2.value {
        Some(v) => ConditionCheck::assumption("Assumption 4 (sigma_g^2 finite)", true, format!("sigma_g^2 = {}", crate::claim::fmt_num(v))),
        None => {
            ConditionCheck::assumption("Assumption 4 (sigma_g^2 finite)", false, format!("not applicable: sigma_g^2 infinite because {}", k.sigma_g2.reason))
        }
    };
    let mut delta = ConditionCheck::compare("delta = min_{i,t} mu_i^t > 0", ConditionKind::Assumption, conn.delta, Relation::AtLeast, f64::MIN_POSITIVE);
    delta.holds = conn.delta > 0.0;
    let mut push = ConditionCheck::assumption(
        "column-stochastic push weights p_ji = 1/|N_out(i)| (Algorithm 1)",
        conn.column_stochastic,
        if conn.column_stochastic {
            "every column of every P^t sums to one"
        } else {
            "row-stochastic pull weights (the experiments' App. B): sum_i u_i is not preserved (I-DPGP9)"
        },
    );
    push.kind = ConditionKind::Scope;
    let start = if u0 == 0.0 {
        ConditionCheck::assumption("u_i^0 = 0", true, "every run starts at u_i^0 = 0")
    } else {
        ConditionCheck::assumption(
            "u_i^0 = 0",
            false,
            format!("max_i ||u_i^0|| = {}: the proof of Lemma 3 drops C q^t ||u_i^0|| (004:L554)", crate::claim::fmt_num(u0)),
        )
    };
    vec![a1, a4, delta, push, start]
}

/// [`assumption_checks`] with Assumption 4 read on the points where the proofs use it (Lemma 2's
/// (11), 004:L503; Lemma 3's (16), L532-540): `sigma_g^2 = max_{i,t,k} E||grad_u F_i(z_i^{t,k},
/// v_i^{t+1}) - grad_u F(z_i^{t,k}, V^{t+1})||^2 = visited` over the run
/// ([`super::round::round_supremum`]), finite when the run's moments are; the detail also gives the stated
/// supremum over all of `R^d` (infinite, with its reason, or its value).
pub fn visited_assumption_checks(k: &Constants, conn: &Connectivity, rounds: usize, u0: f64, visited: f64) -> Vec<ConditionCheck> {
    let mut checks = assumption_checks(k, conn, rounds, u0);
    let stated = match k.sigma_g2.value {
        Some(v) => format!("as stated over all u, V: {}", crate::claim::fmt_num(v)),
        None => format!("as stated over all u, V: infinite ({})", k.sigma_g2.reason),
    };
    checks[1] = ConditionCheck::assumption(
        "Assumption 4 restricted to the proof's points (004:L503, L532)",
        visited.is_finite(),
        format!(
            "sigma_g^2 = max_(i,t,k) E||grad_u F_i(z_i^(t,k), v_i^(t+1)) - grad_u F(z_i^(t,k), V^(t+1))||^2 = {}; {stated}",
            crate::claim::fmt_num(visited)
        ),
    );
    checks
}

/// The step-size conditions the proof uses (I-DPGP2): `eta_u < delta/(8 L_u K_u)` (Lemma 2,
/// 004:L509), `eta_u < delta/(4 sqrt(2) K_u L_u)` (Lemma 3, 004:L554), the positivity of AA's
/// denominator, `eta_u < (1-q)/(L_u C sqrt(8 K_u (K_u+1)))` (unstated, I-DPGP3), and
/// `eta_v <= 1/(2 K_v L_v)` (Lemma 1, 004:L478). With `printed`, Theorem 1's condition as printed,
/// `eta_u < delta/(4 sqrt(2 L_u K_u))` (004:L131), alone.
pub fn step_checks(k: &Constants, conn: &Connectivity, p: &Params, printed: bool) -> Vec<ConditionCheck> {
    step_checks_for(k.l_u, k.l_v, conn.delta, conn.c, conn.q, p, printed)
}

/// [`step_checks`] from the bare values (`L_u`, `L_v`, `delta`, `C`, `q`), for `conditions`.
pub fn step_checks_for(l_u: f64, l_v: f64, delta: f64, c: f64, q: f64, p: &Params, printed: bool) -> Vec<ConditionCheck> {
    if printed {
        return vec![ConditionCheck::compare(
            "eta_u < delta/(4 sqrt(2 L_u K_u)) (Theorem 1 as printed)",
            ConditionKind::StepSize,
            p.eta_u,
            Relation::Below,
            delta / (4.0 * (2.0 * l_u * p.k_u as f64).sqrt()),
        )];
    }
    let mut checks = lemma3_steps_for(l_u, delta, c, q, p, AaReading::Proof);
    checks.push(lemma1_step(l_v, p));
    checks
}

/// Which AA a claim reads: the proof's (19) with both `(K_u+1)` factors, or (13) as printed
/// without them (I-DPGP3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AaReading {
    /// (19), 004:L556, as (24) uses it (L590).
    Proof,
    /// (13), 004:L522.
    Printed,
}

/// The step conditions of Lemma 3 (and of the u-step (26), built on Lemmas 2 and 3 only):
/// Lemma 2's `eta_u < delta/(8 L_u K_u)` (used in (16), 004:L545), Lemma 3's own `eta_u <
/// delta/(4 sqrt(2) K_u L_u)` (004:L554) and the positivity of the denominator of the AA read
/// (unstated, I-DPGP3): `eta_u < (1-q)/(L_u C sqrt(8 K_u (K_u+1)))` for (19), `eta_u <
/// (1-q)/(L_u C sqrt(8 K_u))` for (13). No condition on `eta_v`: neither proof uses Lemma 1.
pub fn lemma3_steps(k: &Constants, conn: &Connectivity, p: &Params, reading: AaReading) -> Vec<ConditionCheck> {
    lemma3_steps_for(k.l_u, conn.delta, conn.c, conn.q, p, reading)
}

/// [`lemma3_steps`] from the bare values (`L_u`, `delta`, `C`, `q`).
pub fn lemma3_steps_for(l_u: f64, delta: f64, c: f64, q: f64, p: &Params, reading: AaReading) -> Vec<ConditionCheck> {
    let ku = p.k_u as f64;
    let positivity = match reading {
        AaReading::Proof => ConditionCheck::compare(
            "eta_u < (1-q)/(L_u C sqrt(8 K_u (K_u+1))) (AA > 0, estimated C, q)",
            ConditionKind::StepSize,
            p.eta_u,
            Relation::Below,
            (1.0 - q) / (l_u * c * (8.0 * ku * (ku + 1.0)).sqrt()),
        ),
        AaReading::Printed => ConditionCheck::compare(
            "eta_u < (1-q)/(L_u C sqrt(8 K_u)) (AA of (13) > 0, estimated C, q)",
            ConditionKind::StepSize,
            p.eta_u,
            Relation::Below,
            (1.0 - q) / (l_u * c * (8.0 * ku).sqrt()),
        ),
    };
    vec![
        lemma2_step(l_u, delta, p),
        ConditionCheck::compare(
            "eta_u < delta/(4 sqrt(2) K_u L_u) (Lemma 3)",
            ConditionKind::StepSize,
            p.eta_u,
            Relation::Below,
            delta / (4.0 * 2f64.sqrt() * ku * l_u),
        ),
        positivity,
    ]
}

/// Lemma 1's step condition `eta_v <= 1/(2 K_v L_v)` (004:L478).
pub fn lemma1_step(l_v: f64, p: &Params) -> ConditionCheck {
    ConditionCheck::compare("eta_v <= 1/(2 K_v L_v) (Lemma 1)", ConditionKind::StepSize, p.eta_v, Relation::AtMost, 1.0 / (2.0 * p.k_v as f64 * l_v))
}

/// Lemma 2's step condition `eta_u < delta/(8 L_u K_u)` (004:L509).
pub fn lemma2_step(l_u: f64, delta: f64, p: &Params) -> ConditionCheck {
    ConditionCheck::compare("eta_u < delta/(8 L_u K_u) (Lemma 2)", ConditionKind::StepSize, p.eta_u, Relation::Below, delta / (8.0 * l_u * p.k_u as f64))
}

/// Lemma 1's right side (004:L481): `16 eta_v^2 K_v^2 g + 8 eta_v^2 K_v^2 sigma_v^2` with
/// `g = E||grad_v F_i(z_i^t, v_i^t)||^2`, the gradient at the phase's start.
pub fn lemma1_bound(p: &Params, sigma_v: f64, g: f64) -> f64 {
    let c = p.eta_v * p.eta_v * (p.k_v * p.k_v) as f64;
    16.0 * c * g + 8.0 * c * sigma_v * sigma_v
}

/// The claims read from the local phases and the noiseless path ([`super::lemmas`]): a run
/// computes their sides only when one of them is checked.
/// (26) and (31) read `E F(ubar^t, V^{t+1})` from the same local phases.
pub const LOCAL_CLAIMS: [&str; 8] =
    ["DPGP-L1", "DPGP-L2", "DPGP-L2~printed", "DPGP-EQ15", "DPGP-EQ26", "DPGP-EQ26~bracket-aa", "DPGP-EQ31", "DPGP-EQ31~printed-sv"];

/// Which reading of Lemma 2's constant (I-DPGP5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lemma2Reading {
    /// The proof's geometric sum (004:L514-516): `(K_u-1)((1 + 1/(K_u-1))^{K_u} - 1) 8 K_u
    /// eta_u^2 <= 32 K_u^2 eta_u^2`.
    Proof,
    /// As printed in (10) (004:L500): `32 K_u eta_u^2`.
    Printed,
}

/// Lemma 2's factor of `sigma_u^2 + sigma_g^2 + (1/m) sum_i E||grad_u F(z_i^t, V^{t+1})||^2`:
/// `32 K_u^2 eta_u^2` (the proof's, [`Lemma2Reading::Proof`]) or `32 K_u eta_u^2` (printed).
pub fn lemma2_factor(p: &Params, reading: Lemma2Reading) -> f64 {
    let k = p.k_u as f64;
    let power = if reading == Lemma2Reading::Proof { k * k } else { k };
    32.0 * power * p.eta_u * p.eta_u
}

/// (15)'s right side at round `t` for node `i` (004:L532): `C q^{t+1} ||u_i^0|| + eta_u C
/// sum_{r <= t} q^{t-r} G_i^r`, with `history = sum_{r <= t} q^{t-r} G_i^r` of node `i`'s own
/// summed stochastic gradients `G_i^r = ||sum_k grad_u F_i(z_i^{r,k}, v_i^{r+1}; xi_i)||`. The
/// paper's rounds are counted from 1 (Theorem 1 starts at `ubar^1`), Algorithm 1's here from 0:
/// the printed `sum_{j=1}^t q^{t-j}` over rounds `1..t` and `C q^t` are `sum_{r=0}^{t} q^{t-r}` and
/// `C q^{t+1}` in round `t = 0, 1, ...`.
pub fn eq15_bound(conn: &Connectivity, eta_u: f64, t: usize, u0: f64, history: f64) -> f64 {
    conn.c * conn.q.powi(t as i32 + 1) * u0 + eta_u * conn.c * history
}

/// The bracket of Theorem 1 as the proof's (33) prints it (004:L645; the statement (3), L137,
/// lists `1/(K_u L_u sqrt(T))` twice, I-DPGP8), at horizon `T`, without its hidden constant:
/// `(F0 - F*)/sqrt(T) + (1+L_v) sigma_v^2/sqrt(T) + (sigma_u^2 + sigma_g^2) (C^2/((1-q)^2 L_u T)
/// + 1/(K_u L_u sqrt(T)) + 1/(K_u L_u delta^2 T^(3/2)) + C^2/(K_u L_u (1-q)^2 T^(3/2))
/// + L_vu^2 C^2/((1-q)^2 L_u^2 sqrt(T)))`, with `F0 = F(ubar^0, V^0)` (the paper's `ubar^1`).
pub fn theorem1_shape(k: &Constants, conn: &Connectivity, k_u: usize, f0: f64, t: usize) -> f64 {
    let t = t as f64;
    let (ku, s) = (k_u as f64, t.sqrt());
    let sigma = k.sigma_u.powi(2) + k.sigma_g2.value.unwrap_or(f64::INFINITY);
    let gap = (1.0 - conn.q).powi(2);
    let c2 = conn.c.powi(2);
    (f0 - k.f_star) / s
        + (1.0 + k.l_v) * k.sigma_v.powi(2) / s
        + sigma
            * (c2 / (gap * k.l_u * t)
                + 1.0 / (ku * k.l_u * s)
                + 1.0 / (ku * k.l_u * conn.delta.powi(2) * t * s)
                + c2 / (ku * k.l_u * gap * t * s)
                + k.l_vu.powi(2) * c2 / (gap * k.l_u.powi(2) * s))
}

/// Corollary 1's bound (004:L142-155) at horizon `T` without its hidden constant, split into its
/// `1/sqrt(T)` part and the rest: `[(F0 - F* + sigma_1^2)/sqrt(T), sigma_2^2/T +
/// sigma_3^2/T^(3/2)]` with (5) (004:L149-155) `sigma_1^2 = (1+L_v) sigma_v^2 + (1/(K_u L_u) +
/// L_v chi^2 C^2/((1-q)^2 L_u)) s`, `sigma_2^2 = C^2/((1-q)^2 L_u) s`, `sigma_3^2 = (1/(K_u L_u
/// delta^2) + C^2/((1-q)^2 K_u L_u)) s`, `s = sigma_u^2 + sigma_g^2` (infinite where Assumption 4
/// fails). Remark 3 (004:L177) says the second part can be neglected when `L_u` is large.
pub fn corollary1_split(k: &Constants, conn: &Connectivity, k_u: usize, f0: f64, t: usize) -> [f64; 2] {
    let (t, ku) = (t as f64, k_u as f64);
    let s = k.sigma_u.powi(2) + k.sigma_g2.value.unwrap_or(f64::INFINITY);
    let graph = conn.c.powi(2) / (1.0 - conn.q).powi(2);
    let sigma1 = (1.0 + k.l_v) * k.sigma_v.powi(2) + (1.0 / (ku * k.l_u) + k.l_v * k.chi.powi(2) * graph / k.l_u) * s;
    let sigma2 = graph / k.l_u * s;
    let sigma3 = (1.0 / (ku * k.l_u * conn.delta.powi(2)) + graph / (ku * k.l_u)) * s;
    [(f0 - k.f_star + sigma1) / t.sqrt(), sigma2 / t + sigma3 / t.powf(1.5)]
}

/// One claim of the family: id, kind, title, source, reading name (`primary`, or the variant's
/// name), what the reading is, metric.
type SummaryRow = (&'static str, ClaimKind, &'static str, &'static str, &'static str, &'static str, &'static str);

/// Every claim of the family, in report order.
const SUMMARIES: [SummaryRow; 31] = [
    ("DPGP-L1", ClaimKind::Lemma, "Lemma 1: v-drift of a client's local phase bounded by its starting gradient and sigma_v", "004:L478-495", "primary", "every client and local step k = 1..K_v (the proof's 'for all k <= K_v - 1' on v^(k+1), which includes the printed v^(K_v-1) and the v_i^(t+1) that (29) uses), the worst per round; F = F_i(z_i^t, .) with the v-phase's fixed z_i^t = u_i^t / mu_i^t; exact expectations", "E||v_i^(t,k) - v_i^t||^2 <= 16 eta_v^2 K_v^2 E||grad_v F_i(z_i^t, v_i^t)||^2 + 8 eta_v^2 K_v^2 sigma_v^2"),
    ("DPGP-L2", ClaimKind::Lemma, "Lemma 2: u-drift of the local phases bounded with the proof's constant 32 K_u^2 eta_u^2", "004:L498-518", "primary", "the constant the proof's geometric sum gives, (K_u-1)((1+1/(K_u-1))^K_u - 1) 8 K_u eta_u^2 <= 32 K_u^2 eta_u^2 (I-DPGP5); every local step k = 1..K_u (the proof bounds u^(t,k+1) for k <= K_u - 1), the worst per round; exact expectations", "(1/m) sum_i E||u_i^(t,k) - u_i^t||^2 <= 32 K_u^2 eta_u^2 (sigma_u^2 + sigma_g^2 + (1/m) sum_i E||grad_u F(z_i^t, V^(t+1))||^2)"),
    ("DPGP-L2~printed", ClaimKind::Lemma, "Lemma 2 as printed in (10), with 32 K_u eta_u^2", "004:L500", "printed", "the statement's constant 32 K_u eta_u^2, a factor K_u below what its proof shows (I-DPGP5), over the statement's local steps k = 0..K_u-1; otherwise as DPGP-L2", "(1/m) sum_i E||u_i^(t,k) - u_i^t||^2 <= 32 K_u eta_u^2 (sigma_u^2 + sigma_g^2 + (1/m) sum_i E||grad_u F(z_i^t, V^(t+1))||^2)"),
    ("DPGP-L3", ClaimKind::Lemma, "Lemma 3: push-sum consensus error bounded by AA (sigma_u^2 + sigma_g^2 + E Delta_ubar^t)", "004:L520-556", "primary", "AA of the proof's (19), with the (K_u+1) factors; C, q estimated from the realised mixing products", "(1/m) sum_i E||ubar^t - z_i^t||^2 <= AA (sigma_u^2 + sigma_g^2 + E Delta_ubar^t)"),
    ("DPGP-L3~printed", ClaimKind::Lemma, "Lemma 3 as printed in (13)", "004:L522", "printed", "AA without the (K_u+1) factors (I-DPGP3)", "(1/m) sum_i E||ubar^t - z_i^t||^2 <= AA13 (sigma_u^2 + sigma_g^2 + E Delta_ubar^t)"),
    ("DPGP-L3~visited-sg", ClaimKind::Lemma, "Lemma 3 with Assumption 4 restricted to the proof's points", "004:L520-556, L503, L532", "visited-sg", "sigma_g^2 = max_(i,t,k) E||grad_u F_i(z_i^(t,k), v_i^(t+1)) - grad_u F(z_i^(t,k), V^(t+1))||^2 over the run, where Lemmas 2 and 3 use Assumption 4 (004:L503, L532), in place of the printed supremum over all u, V, which is infinite with client-specific A_i or any coupling B_i; otherwise as DPGP-L3", "as DPGP-L3"),
    ("DPGP-EQ15", ClaimKind::Lemma, "(15): push-sum deviation of node i bounded by node i's own gradients", "004:L532", "primary", "as printed, with node i's own summed stochastic gradients only (I-DPGP4); the paper's rounds counted from 1 (Theorem 1 starts at ubar^1), so sum_{j=1}^t q^(t-j) is over Algorithm 1's rounds 0..t; pathwise: on the noiseless path (the exact run's mean) per node, the worst per round, or averaged over seeded paths with Monte Carlo (a hold decides only a noiseless run, whose one path is the run; with noise it is inconclusive); C, q estimated from the realised mixing products", "||ubar^t - z_i^t|| <= C q^(t+1) ||u_i^0|| + eta_u C sum_(r<=t) q^(t-r) ||sum_k grad_u F_i(z_i^(r,k), v_i^(r+1); xi_i)||"),
    ("DPGP-REC32", ClaimKind::Lemma, "per-round descent inequality (32)", "004:L637-641", "primary", "Sv = 4 eta_v^2 K_v^2 sigma_v^2 (1+L_v) as (28)+(29) give (I-DPGP6); L_u^2 AA in the bracket (I-DPGP7)", "E F(ubar^{t+1},V^{t+1}) - F* <= E F(ubar^t,V^t) - F* + Cu E Delta_ubar^t + Cv E Delta_v^t + Sv + Su (sigma_u^2 + sigma_g^2), i.e. (32)"),
    ("DPGP-REC32~printed-sv", ClaimKind::Lemma, "(32) with the printed sigma_v term", "004:L632, L639", "printed-sv", "Sv = 4 eta_v^2 K_v^2 L_v^2 sigma_v^2 (1+L_v) as printed (I-DPGP6)", "as DPGP-REC32"),
    ("DPGP-REC32~bracket-aa", ClaimKind::Lemma, "(32) with + AA in the bracket", "004:L597", "bracket-aa", "the bracket's last term AA as in the last line of T_{2,u} (I-DPGP7)", "as DPGP-REC32"),
    ("DPGP-REC32~visited-sg", ClaimKind::Lemma, "(32) with Assumption 4 restricted to the proof's points", "004:L637-641, L503, L532", "visited-sg", "sigma_g^2 = max_(i,t,k) E||grad_u F_i(z_i^(t,k), v_i^(t+1)) - grad_u F(z_i^(t,k), V^(t+1))||^2 over the run, where Lemmas 2 and 3 use Assumption 4 (004:L503, L532), in place of the printed supremum over all u, V, which is infinite with client-specific A_i or any coupling B_i (the largest over the per-round run); otherwise as DPGP-REC32", "as DPGP-REC32"),
    ("DPGP-EQ26", ClaimKind::Lemma, "(26): the u-step's change of F bounded through Lemmas 2 and 3", "004:L597-603", "primary", "(26) as printed at L602, L_u^2 AA in the bracket (I-DPGP7), with the sign of its first line's -eta_u K_u/2 E Delta_ubar^t (printed +, a typo); AA of (19); E F(ubar^t, V^(t+1)) exact from the local phases; the half of (32) without L_vu^2 AA/2", "E F(ubar^{t+1},V^{t+1}) - F* <= E F(ubar^t,V^{t+1}) - F* + Cu26 E Delta_ubar^t + Su26 (sigma_u^2 + sigma_g^2)"),
    ("DPGP-EQ26~bracket-aa", ClaimKind::Lemma, "(26) with + AA in the bracket, as T_{2,u}'s last line", "004:L597", "bracket-aa", "the bracket's last term AA as in the last line of T_{2,u} (I-DPGP7); otherwise as DPGP-EQ26", "as DPGP-EQ26"),
    ("DPGP-EQ31", ClaimKind::Lemma, "(31): the v-step's change of F bounded through Lemmas 1 and 3", "004:L604-633", "primary", "Sv = 4 eta_v^2 K_v^2 sigma_v^2 (1+L_v) as the sum of (28) and (29) gives it (I-DPGP6); Delta_v^t at the printed u_i^t as (28) has it (I-DPGP11); AA of (19); E F(ubar^t, V^(t+1)) exact from the local phases", "E F(ubar^t,V^{t+1}) - F* <= E F(ubar^t,V^t) - F* + Cv E Delta_v^t + Sv + (L_vu^2 AA/2) (sigma_u^2 + sigma_g^2 + E Delta_ubar^t)"),
    ("DPGP-EQ31~printed-sv", ClaimKind::Lemma, "(31) with the printed sigma_v term", "004:L632", "printed-sv", "Sv = 4 eta_v^2 K_v^2 L_v^2 sigma_v^2 (1+L_v) as printed (I-DPGP6); otherwise as DPGP-EQ31", "as DPGP-EQ31"),
    ("DPGP-T1", ClaimKind::Bound, "Theorem 1: the metric is O(the bracket of (33)), metric/bracket bounded over the sweep of T", "004:L131-138, L645", "primary", "steps proportional to 1/sqrt(T) over the sweep; no constant fitted: holds when metric/bracket stops growing at the largest horizons (local log-log slope at most a resolution, or slopes falling geometrically), violated when it keeps growing; the smallest constant covering every horizon is reported, never verified against a stated one; the proof's step conditions", "(1/T) sum_{t<T} (E Delta_ubar^t / L_u + E Delta_v^t / L_v)"),
    ("DPGP-T1~printed-step", ClaimKind::Bound, "Theorem 1 under its printed step condition eta_u < delta/(4 sqrt(2 L_u K_u))", "004:L131", "printed-step", "the step condition as printed (root over L_u K_u, I-DPGP2) in place of the proof's conditions", "as DPGP-T1"),
    ("DPGP-T1~visited-sg", ClaimKind::Bound, "Theorem 1 with Assumption 4 restricted to the proof's points", "004:L131-138, L503, L532", "visited-sg", "sigma_g^2 = max_(i,t,k) E||grad_u F_i(z_i^(t,k), v_i^(t+1)) - grad_u F(z_i^(t,k), V^(t+1))||^2 over the run, where Lemmas 2 and 3 use Assumption 4 (004:L503, L532), in place of the printed supremum over all u, V, which is infinite with client-specific A_i or any coupling B_i (the largest over every run of the sweep); otherwise as DPGP-T1", "as DPGP-T1"),
    ("DPGP-C1", ClaimKind::Bound, "Corollary 1: with steps proportional to 1/sqrt(T), Theorem 1's metric decays as 1/sqrt(T)", "004:L142-155", "primary", "log-log slope of the metric over a sweep of T, fitted with a 99% interval, compared as the decay factor per doubling 2^slope <= 2^(-1/2); conditions of the proof checked at every T", "(1/T) sum_{t<T} (E Delta_ubar^t / L_u + E Delta_v^t / L_v)"),
    ("DPGP-C1~debiased-z", ClaimKind::Bound, "Corollary 1 with Delta_v^t read at the de-biased z_i^t = u_i^t / mu_i^t", "004:L133, L142-155", "debiased-z", "Theorem 1 prints Delta_v^t = (1/m) sum_i ||grad_v F_i(u_i^t, v_i^t)||^2 at the biased numerator u_i^t; here at z_i^t = u_i^t / mu_i^t, where Algorithm 1 takes its v-gradients; same slope test", "(1/T) sum_{t<T} (E Delta_ubar^t / L_u + (1/m) sum_i E||grad_v F_i(z_i^t, v_i^t)||^2 / L_v)"),
    ("DPGP-C1~rate-inv-T", ClaimKind::Bound, "negative control: a 1/T rate, which the paper does not claim", "-", "rate-inv-T", "decay factor per doubling 2^slope <= 1/2; must come out violated where the noise term dominates", "as DPGP-C1"),
    ("DPGP-C1~visited-sg", ClaimKind::Bound, "Corollary 1 with Assumption 4 restricted to the proof's points", "004:L142-155, L503, L532", "visited-sg", "sigma_g^2 = max_(i,t,k) E||grad_u F_i(z_i^(t,k), v_i^(t+1)) - grad_u F(z_i^(t,k), V^(t+1))||^2 over the run, where Lemmas 2 and 3 use Assumption 4 (004:L503, L532), in place of the printed supremum over all u, V, which is infinite with client-specific A_i or any coupling B_i (the largest over every run of the sweep); otherwise as DPGP-C1", "as DPGP-C1"),
    ("DPGP-C1~debiased-z-visited-sg", ClaimKind::Bound, "Corollary 1 at the de-biased z_i^t with Assumption 4 restricted to the proof's points", "004:L133, L142-155, L503, L532", "debiased-z-visited-sg", "both readings: Delta_v^t at z_i^t = u_i^t / mu_i^t as DPGP-C1~debiased-z, and sigma_g^2 = max_(i,t,k) E||grad_u F_i(z_i^(t,k), v_i^(t+1)) - grad_u F(z_i^(t,k), V^(t+1))||^2 over the run, where Lemmas 2 and 3 use Assumption 4 (004:L503, L532), in place of the printed supremum over all u, V, which is infinite with client-specific A_i or any coupling B_i", "as DPGP-C1~debiased-z"),
    ("DPGP-R2", ClaimKind::Bound, "Remark 2: tighter connectivity (smaller q) gives a smaller consensus error at equal steps", "004:L159", "primary", "every pair of topologies ordered by estimated q: consensus error averaged over the rounds, ratio tighter/looser <= 1", "(1/T) sum_t (1/m) sum_i E||ubar^t - z_i^t||^2"),
    ("DPGP-R2~stationarity", ClaimKind::Bound, "Remark 2 for Theorem 1's metric", "004:L159", "stationarity", "the same ordering for (1/T) sum_t (E Delta_ubar^t / L_u + E Delta_v^t / L_v)", "(1/T) sum_{t<T} (E Delta_ubar^t / L_u + E Delta_v^t / L_v)"),
    ("DPGP-R2~factor", ClaimKind::Bound, "Remark 2 with topologies ordered by C/(1-q)", "004:L159, L590", "factor", "topologies ordered by the estimated factor C/(1-q) through which they enter AA; consensus error averaged over the rounds", "(1/T) sum_t (1/m) sum_i E||ubar^t - z_i^t||^2"),
    ("DPGP-R1", ClaimKind::Bound, "Remark 1: more local steps K_u accelerate the convergence", "004:L157", "primary", "scenarios differing only in K_u at Corollary 1's steps eta_u = c_u/(L_u K_u sqrt(T)) (c_u fixed): every pair with more K_u has Theorem 1's metric averaged over the rounds no larger; the bound's K_u enters only through its explicit 1/K_u terms, with C, q estimated from graphs that do not depend on K_u (I-DPGP10)", "(1/T) sum_{t<T} (E Delta_ubar^t / L_u + E Delta_v^t / L_v)"),
    ("DPGP-R1~variance", ClaimKind::Bound, "Remark 1: larger gradient variances sigma_u^2, sigma_v^2, sigma_g^2 slow the convergence", "004:L157", "variance", "scenarios differing only in sigma_u, sigma_v and the heterogeneity of the shared linear terms (so sigma_g^2): every pair whose noise levels (sigma_u, sigma_v, sigma_g^2) are no larger in each component and smaller in one has Theorem 1's metric averaged over the rounds no larger", "(1/T) sum_{t<T} (E Delta_ubar^t / L_u + E Delta_v^t / L_v)"),
    ("DPGP-R3", ClaimKind::Bound, "Remark 3: for large L_u the 1/T and T^(-3/2) terms of Corollary 1's bound are negligible next to its 1/sqrt(T) term", "004:L177", "primary", "scenarios differing only in L_u: every pair with larger L_u has a share of the 1/T and T^(-3/2) terms in Corollary 1's bound (hidden constant 1, exact constants, estimated C, q, delta, F0 of the run, at the per-round horizon T) no larger; the shares are printed", "(sigma_2^2/T + sigma_3^2/T^(3/2)) / ((F0 - F* + sigma_1^2)/sqrt(T) + sigma_2^2/T + sigma_3^2/T^(3/2))"),
    ("DPGP-F3A", ClaimKind::Bound, "Figure 3a: more neighbours per client give a quicker convergence", "004:L232, L240", "primary", "scenarios on random out-neighbour graphs differing only in the out-degree k: every pair with more out-neighbours has Theorem 1's metric averaged over the rounds no larger (the figure's accuracy read as the stationarity metric of the quadratics)", "(1/T) sum_{t<T} (E Delta_ubar^t / L_u + E Delta_v^t / L_v)"),
    ("DPGP-F3A~consensus", ClaimKind::Bound, "Figure 3a for the consensus error", "004:L232, L240", "consensus", "the same ordering for the consensus error averaged over the rounds, the quantity that the graph moves most directly", "(1/T) sum_t (1/m) sum_i E||ubar^t - z_i^t||^2"),
];

/// Every claim of the family, in report order.
pub fn summaries() -> Vec<ClaimSummary> {
    SUMMARIES
        .iter()
        .map(|&(id, kind, title, source, name, description, metric)| ClaimSummary {
            id,
            kind,
            title,
            statement: String::new(),
            source,
            reading: Reading { name, is_variant: name != "primary", description },
            metric,
        })
        .collect()
}
