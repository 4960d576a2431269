//! This family's formula table: the names a card's formulas may use, where their values come
//! from, and which built-in function each formula of a built-in claim twins; and the claims a
//! card defines by formulas ([`RULES`], [`card_claim`]): a `bound` over [`SYMBOLS`] compared with
//! one of [`METRICS`] (each the observed series of a built-in claim with a formula twin, read as
//! that claim reads it; Theorem 2's global error `||w_t^(g) - w~^(g)||^2`, 003:L176-181, is
//! `global-error`), at every point that claim compares.
//!
//! One [`Inputs`] carries the statistical constants (`stat`, read by Lemma 1, Theorem 1 and
//! Corollary 1) and the optimization ones (`opt`, read by Theorems 2-3 and Corollaries 2-3); the
//! pipeline fills both from the same draw, so one symbol `mu`, `L`, `lambda` serves both (the
//! values are read from `stat` and `lambda`; the twin sampler draws `opt` equal to them).
//!
//! Some claims have no formula ([`WITHOUT_FORMULA`]). Every other claim's condition list is twinned
//! entry by entry, the strict `gamma < 1/L_g` included: built in and in a card it fails at the
//! experiments' `gamma = 1/L_g` (I-CLUP11; `tests/formula_twins.rs`).

use crate::claim::{BoundClaim, ConditionCheck};
use crate::formula::twin::{ConditionTwin, Twin, TwinTable};
use crate::formula::{SymbolDef, SymbolTable, COUNT, FLAG, NON_NEGATIVE, POSITIVE};

use crate::card::ClaimCard;
use crate::error::{Error, Result};
use crate::family::ClaimKind;
use crate::formula::user::{FormulaClaim, UserClaim, UserClaimRules};
use crate::formula::CompareSpec;

use super::bounds::{self, FirstBranchGuard, T1Reading, T1_PROOF};
use super::claims::{CardFormula, CardMetric, ClupClaim, GammaRule, Inputs, Statement, ALL};

type Def = SymbolDef<Inputs, ()>;

/// The names a formula of this family may use, in slot order, and where their values come from.
pub static SYMBOLS: SymbolTable<Inputs, (), 16> = SymbolTable::new([
    Def::new("t", "round t >= 1 of a per-round bound (1 at a statistical point)", COUNT, |x| x.t as f64),
    Def::new("mu", "mu of Assumption 2 (smallest eigenvalue of the draw's empirical Hessians)", POSITIVE, |x| x.stat.mu),
    Def::new("L", "L of Assumption 1 (per-sample; the empirical-Hessian L in the ~empirical-l readings)", POSITIVE, |x| x.stat.l),
    Def::new("rho2", "rho^2 of Assumption 3 (= s^2 L)", POSITIVE, |x| x.stat.rho2),
    Def::new("R", "R of P(R), the clients' distance from the mean ground truth", NON_NEGATIVE, |x| x.stat.r),
    Def::new("n", "samples per client n", COUNT, |x| x.stat.n),
    Def::new("m", "clients m", COUNT, |x| x.stat.m),
    Def::new(
        "lambda",
        "lambda of Problem (2) and Algorithms 1-2 (Theorem 1's grid also has lambda = 0, LocalTrain, where no formula divides by it)",
        POSITIVE,
        |x| x.lambda,
    ),
    Def::new("gamma", "global step gamma", POSITIVE, |x| x.opt.gamma),
    Def::new("eta", "local step eta", POSITIVE, |x| x.opt.eta),
    Def::new("K", "local steps K", COUNT, |x| x.opt.k),
    Def::new("V1", "V_1 = ||w_1^(g) - w~^(g)||^2 + c1 e_1 (Theorem 2) or + c1 g_1 (Theorem 3), of the run", NON_NEGATIVE, |x| x.v1),
    Def::new("init_local", "||w_{0,K}^(i) - w~^(i)||^2 of the client a Corollary 3 point is about", NON_NEGATIVE, |x| x.init_local),
    Def::new("sigma2", "sigma^2 of Assumption 4 at the iterates Algorithm 2 visits", NON_NEGATIVE, |x| x.sigma2),
    Def::new("B", "batch size B", COUNT, |x| x.batch),
    Def::new("uniform", "1 when p_i = 1/m and n_i = n (every FedCLUP model here), else 0", FLAG, |_| 1.0),
]);

/// The metrics a card-defined claim may bound (`formula.metric`), one per observed series of the
/// built-in claims with a formula twin: each names the built-in statement whose series, inputs
/// and compared points it reads ([`CardMetric::reads`], [`ClupClaim::observed`]); the card's
/// bound takes the place of that statement's. Conditions are the card's own (`scope`,
/// `conditions`, `implicit`) after the family's model checks. Not a metric: Theorem 2 at the
/// experiments' `gamma = 1/L_g` (`CLUP-T2~expgamma`), whose `V_1` is infinite there (`c1` divides
/// by `zeta = 1 - gamma L_g = 0`, 003:L1049), so no round of it is ever compared; and Lemma 1's
/// spectral inequalities (`CLUP-L1`), whose sides are the lemma's constants themselves, computed
/// by the family, not a series a bound is compared with.
pub const METRICS: [CardMetric; 20] = [
    CardMetric {
        name: "global-error",
        measures: "||w_t^(g) - w~^(g)||^2 of Algorithm 1 at the scenario's steps, per round 2..=T with V_1 = ||w_1^(g) - w~^(g)||^2 + c1 e_1 (Theorem 2, 003:L176-181)",
        reads: Statement::Theorem2Global(GammaRule::Scenario),
    },
    CardMetric {
        name: "global-error-mean-of-locals",
        measures: "||w_t^(g) - w~^(g)||^2 of Algorithm 1 at gamma = 1/lambda (the server takes the mean of the local models), per round, V_1 of that run (003:L258)",
        reads: Statement::Theorem2Global(GammaRule::MeanOfLocals),
    },
    CardMetric {
        name: "local-error",
        measures: "max_i ||w_{t,K}^(i) - w~^(i)||^2 of Algorithm 1 at the scenario's steps, per round, V_1 of Theorem 2 ((130), 003:L181, L1134)",
        reads: Statement::Theorem2Local,
    },
    CardMetric {
        name: "lyapunov-ratio",
        measures: "V_(t+1)/V_t, V_t = ||w_t^(g) - w~^(g)||^2 + c1 (1/m) sum_i ||w_{t,K}^(i) - w*^(i)(w_t^(g))||^2 with c1 of L1049, per round of Algorithm 1 at the scenario's steps ((114), 003:L1049-1071)",
        reads: Statement::Theorem2Lyapunov,
    },
    CardMetric {
        name: "corollary2-global-error",
        measures: "||w_t^(g) - w~^(g)||^2 of Algorithm 1 at Corollary 2's steps (eta = 1/(lambda + L), gamma = 1/(2 L_g), K of (134)), per round, V_1 of that run (003:L185-190)",
        reads: Statement::Corollary2,
    },
    CardMetric {
        name: "corollary3-local-error",
        measures: "||w_{t,K}^(i) - w~^(i)||^2 of Algorithm 1 at Corollary 2's steps, per round t = 1..T, the client whose ratio to the bound is largest, init_local = ||w_{0,K}^(i) - w~^(i)||^2 of that client (Corollary 3, 003:L200-207)",
        reads: Statement::Corollary3 { c4: false, split: true },
    },
    CardMetric {
        name: "alg2-error",
        measures: "E||w_t^(g) - w~^(g)||^2 of Algorithm 2 at the scenario's steps, fresh batches of B per local step (exact moments), per round, V_1 = E||w_1^(g) - w~^(g)||^2 + c1 g_1 with c1 of (146) and g_1 after round 1's K local steps (Theorem 3, 003:L1245-1251)",
        reads: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: false, one_batch: false, v1_initial: false },
    },
    CardMetric {
        name: "alg2-error-one-batch",
        measures: "as alg2-error with one batch per round for the K local steps, as Algorithm 2 is listed (003:L1176)",
        reads: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: false, one_batch: true, v1_initial: false },
    },
    CardMetric {
        name: "alg2-error-empirical-l",
        measures: "as alg2-error with L = max_i lambda_max(A_i) in the inputs (the constants, c1 of V_1) (003:L92, L1245)",
        reads: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: true, one_batch: false, v1_initial: false },
    },
    CardMetric {
        name: "alg2-error-v1-initial",
        measures: "as alg2-error with V_1 = E||w_1^(g) - w~^(g)||^2 + c1 ||(1/m) sum_i (w_{0,K}^(i) - w_*^(i)(w_1^(g)))||^2 from the initial local models (003:L1316)",
        reads: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: false, one_batch: false, v1_initial: true },
    },
    CardMetric {
        name: "alg2-noise-floor",
        measures: "E||w_t^(g) - w~^(g)||^2 of Algorithm 2 (fresh batches) at the remark's steps eta = min{mu (lambda + L)/(4 L (lambda + mu)^2), 1/(lambda + L)}, gamma = 1/(2 L_g), started at the solution, rounds 2..=T (the remark after Theorem 3, 003:L1318)",
        reads: Statement::Theorem3Remark { at_steps: false },
    },
    CardMetric {
        name: "statistical-error",
        measures: "max_i E||w~^(i) - w*^(i)||^2 over the label noise (exact), every design draw, every lambda of the scenario's grid and beside Theorem 1's pole and guard (Theorem 1, 003:L108-114)",
        reads: Statement::Theorem1 { reading: T1_PROOF, empirical_l: false },
    },
    CardMetric {
        name: "statistical-error-empirical-l",
        measures: "as statistical-error with L = max_i lambda_max(A_i) in the inputs and the probes (003:L92, L542, L592)",
        reads: Statement::Theorem1 { reading: T1_PROOF, empirical_l: true },
    },
    CardMetric {
        name: "corollary1-error",
        measures: "max_i E||w~^(i) - w*^(i)||^2 at lambda in {l93, 10 l93, 1000 l93} (R <= 1/sqrt n) or {0, l72/10, l72} (R > 1/sqrt n), every draw (Corollary 1, 003:L122-126, (93) L866)",
        reads: Statement::Corollary1 { a2_printed: false },
    },
    CardMetric {
        name: "corollary1-error-a2-printed",
        measures: "max_i E||w~^(i) - w*^(i)||^2 at lambda = max(a1, a2) of (92) with the printed a2, every draw, with the scope check R < 1/sqrt(n) (003:L854-862)",
        reads: Statement::Corollary1 { a2_printed: true },
    },
    CardMetric {
        name: "lemma4-rms",
        measures: "(E||w~_GT - w*_g||^2)^(1/2) over the label noise (exact), every draw (Lemma 4, 003:L422-426)",
        reads: Statement::Lemma4,
    },
    CardMetric {
        name: "global-statistical-error",
        measures: "E||w~^(g) - w*_g||^2 over the label noise (exact), every draw, every lambda of the grid ((35), 003:L527)",
        reads: Statement::Global35 { local_average: false },
    },
    CardMetric {
        name: "local-average-statistical-error",
        measures: "(1/m) sum_i E||w~^(i) - w*^(i)||^2 over the label noise (exact), every draw, every lambda of the grid ((34) solved at 003:L742)",
        reads: Statement::Global35 { local_average: true },
    },
    CardMetric {
        name: "global-statistical-error-52",
        measures: "E||w~^(g) - w*_g||^2 over the label noise (exact), every draw, every lambda of the grid where g(lambda) < 1/(8L)^2 and just inside that condition ((52), 003:L618-621)",
        reads: Statement::Global52 { young: false },
    },
    CardMetric {
        name: "global-statistical-error-79",
        measures: "E||w~^(g) - w*_g||^2 at lambda in {l77, 10 l77, 1000 l77} (R <= 1/sqrt n) or {0, l72/10, l72} (R > 1/sqrt n), every draw ((79), 003:L773-780)",
        reads: Statement::Global79,
    },
];
/// The names of [`METRICS`], in order: what `formula.metric` may say.
pub const METRIC_NAMES: [&str; METRICS.len()] = {
    let mut names = [""; METRICS.len()];
    let mut i = 0;
    while i < METRICS.len() {
        names[i] = METRICS[i].name;
        i += 1;
    }
    names
};

/// What this family accepts in a card-defined claim: a bound on one of [`METRICS`], compared
/// `per-round` at every point the metric's built-in statement compares (for Theorem 2's
/// `global-error`, every round `2..=T` above the rounding floor, as the built-in `CLUP-T2` is).
pub const RULES: UserClaimRules = UserClaimRules { symbols: SYMBOLS.symbols(), metrics: &METRIC_NAMES, algorithms: &[], comparisons: &[CompareSpec::PerRound] };

/// Compiles a card's claim entry that is not built in into a [`ClupClaim`] (`Statement::Card`)
/// on the metric its `formula.metric` names ([`METRICS`]).
///
/// # Errors
/// [`Error::InvalidField`] naming `claims[ID].formula.FIELD` as [`UserClaim::compile`] does (an
/// unknown `metric` with the names of [`METRICS`]), and `.at` when it is `horizon` (this family
/// compares its bounds at every round).
pub fn card_claim(entry: &ClaimCard) -> Result<ClupClaim> {
    let claim = UserClaim::compile(entry, &RULES)?;
    let field = |f: &str| format!("claims[{}].formula.{f}", entry.id);
    if !claim.every_prefix {
        return Err(Error::field(field("at"), "`horizon`: FedCLUP compares its bounds at every round", "every-prefix"));
    }
    let metric = METRICS.iter().find(|m| m.name == claim.metric).ok_or_else(|| Error::field(field("metric"), "unknown metric", METRIC_NAMES.join(", ")))?;
    let formula: &'static FormulaClaim<Inputs> = Box::leak(Box::new(FormulaClaim { claim, values: |x| SYMBOLS.values(x) }));
    let c = &formula.claim;
    Ok(ClupClaim {
        id: c.id,
        title: c.title,
        source: c.source,
        metric: metric.measures,
        kind: ClaimKind::Bound,
        reading: "primary",
        why: c.description,
        statement: Statement::Card(CardFormula(formula, metric)),
    })
}

/// Claims without a formula, with the reason.
pub const WITHOUT_FORMULA: [(&str, &str); 18] = [
    (
        "CLUP-T1~unguarded",
        "its first branch divides by 1 - 4 L^2 g(lambda), which changes sign at the pole; the formula language refuses a division that can be zero \
         (div_pos would read the branch as +inf past the pole, which is the guarded reading CLUP-T1 already has, not this variant's negative bound)",
    ),
    (
        "CLUP-C2-ROUNDS",
        "compares rounds measured on a lambda sweep with the ceiling of ln(eps/C)/ln(rate), C from each sweep point's own V_1: an ordering over runs, not a bound of the claim's inputs",
    ),
    (
        "CLUP-C2-COMPUTE",
        "compares K x rounds measured on a lambda sweep with a bound whose constant C is the largest over the sweep's own V_1: a quantity over runs, not a bound of one point's inputs",
    ),
    (
        "CLUP-C2-MONOTONE",
        "compares the rounds measured at consecutive lambdas of a sweep with each other: an ordering over runs, not a bound of the claim's inputs",
    ),
    (
        "CLUP-Q-MONOTONE",
        "compares q1 and q2 at consecutive lambdas of the grid with each other: an ordering of one function's values, not a bound of one point's inputs",
    ),
    (
        "CLUP-Q-MONOTONE~unguarded",
        "compares q1 and q2 at consecutive lambdas of the grid with each other, as CLUP-Q-MONOTONE: an ordering of one function's values, not a bound of one point's inputs",
    ),
    (
        "CLUP-L2",
        "compares two gradients computed on the draw (the envelope's and the prox's) with each other: an identity of measured vectors, not a bound of the claim's inputs",
    ),
    (
        "CLUP-L3",
        "its right side 2 ||grad L_i(w~^(g), S_i)||/(mu + lambda) reads the gradient at the solution on each draw's labels, per client: a measured quantity, not one of the claim's inputs",
    ),
    (
        "CLUP-L5",
        "its right side reads e_t^(i) and the drift of w_*^(i)(w_t^(g)) measured on the run, per client and round: measured quantities, not the claim's inputs",
    ),
    (
        "CLUP-L6",
        "its right side reads ||w_t^(g) - w~^(g)||^2, grad F and its estimate measured on the run, per round: measured quantities, not the claim's inputs",
    ),
    (
        "CLUP-T3-BALL-B",
        "compares Algorithm 2's noise floors at several batch sizes with each other: an ordering over runs, not a bound of one point's inputs",
    ),
    ("CLUP-T3-BALL-M-SLOPE", "a slope fitted to Algorithm 2's noise floors over runs with m = 2..16 clients: a rate exponent over runs, not a bound of one point's inputs"),
    ("CLUP-T3-BALL-B-SLOPE", "a slope fitted to Algorithm 2's noise floors over runs with B = 1..8: a rate exponent over runs, not a bound of one point's inputs"),
    ("CLUP-FIG2-K", "compares the rounds measured at consecutive K of a sweep with each other: an ordering over runs, not a bound of the claim's inputs"),
    ("CLUP-FIG2-K~every-eps", "compares the rounds measured at consecutive K of a sweep with each other at every error level: an ordering over runs, not a bound of the claim's inputs"),
    ("CLUP-FIG3-LAMBDA", "compares the rounds of LocalTrain, GlobalTrain and FedCLUP at each lambda of a sweep over targets: an ordering over runs, not a bound of the claim's inputs"),
    ("CLUP-FIG3-LAMBDA~every-eps", "compares the rounds of LocalTrain, GlobalTrain and FedCLUP at each lambda of a sweep over targets: an ordering over runs, not a bound of the claim's inputs"),
    ("CLUP-C2-K134", "compares the smallest integer K meeting (14), found by a search over K, with (134)'s ceiling: neither is a formula of the claim's inputs"),
];

fn bound_at<const I: usize>(x: &Inputs) -> f64 {
    ALL[I].bound(x)
}

fn checks_at<const I: usize>(x: &Inputs) -> Vec<ConditionCheck> {
    ALL[I].checks(x)
}

type BoundFn = fn(&Inputs) -> f64;
type ChecksFn = fn(&Inputs) -> Vec<ConditionCheck>;

/// One function per claim of [`ALL`], `$f::<i>` for the claim at index `i`; the arrays are typed
/// with `ALL.len()`, so a claim added without its index does not compile.
macro_rules! per_claim {
    ($f:ident; $($i:literal)*) => {
        [$($f::<$i>),*]
    };
}

/// Every claim's built-in bound, in the order of [`ALL`].
const BOUNDS: [BoundFn; ALL.len()] = per_claim!(bound_at; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48);

/// Every claim's built-in condition list, in the order of [`ALL`].
const CHECKS: [ChecksFn; ALL.len()] = per_claim!(checks_at; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48);

const N2: T1Reading = T1Reading { n_squared: true, ..T1_PROOF };
const G64: T1Reading = T1Reading { guard: FirstBranchGuard::SixtyFourL2, ..T1_PROOF };

fn t1_fields(claim: &'static str, first: BoundFn, second: BoundFn) -> Vec<Twin<Inputs>> {
    vec![
        Twin { claim, field: "let.g", builtin: |x| bounds::g(&x.stat, x.lambda) },
        Twin { claim, field: "let.first", builtin: first },
        Twin { claim, field: "let.second", builtin: second },
    ]
}

fn lemma1_fields(claim: &'static str) -> Vec<Twin<Inputs>> {
    vec![
        Twin { claim, field: "let.mu_g", builtin: |x| bounds::lemma1(x.stat.mu, x.stat.l, x.lambda).mu_g },
        Twin { claim, field: "let.L_g", builtin: |x| bounds::lemma1(x.stat.mu, x.stat.l, x.lambda).l_g },
        Twin { claim, field: "let.mu_l", builtin: |x| bounds::lemma1(x.stat.mu, x.stat.l, x.lambda).mu_l },
        Twin { claim, field: "let.L_l", builtin: |x| bounds::lemma1(x.stat.mu, x.stat.l, x.lambda).l_l },
        Twin { claim, field: "let.L_w", builtin: |x| bounds::lemma1(x.stat.mu, x.stat.l, x.lambda).l_w },
    ]
}

fn c1_fields(claim: &'static str, a2: BoundFn, a2_name: &'static str) -> Vec<Twin<Inputs>> {
    vec![
        Twin { claim, field: "let.C2", builtin: |x| bounds::c1_c2(&x.stat).1 },
        Twin { claim, field: "let.C3", builtin: |x| bounds::c3_c4(&x.stat).0 },
        Twin { claim, field: "let.C4", builtin: |x| bounds::c3_c4(&x.stat).1 },
        Twin { claim, field: "let.lambda93", builtin: |x| bounds::lambda_93(&x.stat) },
        Twin { claim, field: "let.lambda72", builtin: |x| bounds::lambda_72(&x.stat) },
        Twin { claim, field: "let.a1", builtin: |x| bounds::a1(&x.stat) },
        Twin { claim, field: a2_name, builtin: a2 },
    ]
}

/// Every built-in bound, intermediate quantity and condition list of the family beside the name
/// of its formula.
pub fn claim_twins() -> TwinTable<Inputs> {
    let mut fields: Vec<Twin<Inputs>> = ALL
        .iter()
        .zip(BOUNDS)
        .filter(|(c, _)| !WITHOUT_FORMULA.iter().any(|(id, _)| *id == c.id))
        .map(|(c, builtin)| Twin { claim: c.id, field: "bound", builtin })
        .collect();
    fields.extend(lemma1_fields("CLUP-L1"));
    let second = |x: &Inputs| bounds::t1_second(&x.stat, x.lambda, false);
    fields.extend(t1_fields("CLUP-T1", |x| bounds::t1_first(&x.stat, x.lambda, T1_PROOF), second));
    fields.extend(t1_fields("CLUP-T1~n2", |x| bounds::t1_first(&x.stat, x.lambda, N2), second));
    fields.extend(t1_fields("CLUP-T1~printed-4", |x| bounds::t1_first(&x.stat, x.lambda, T1_PROOF), |x| bounds::t1_second(&x.stat, x.lambda, true)));
    fields.extend(t1_fields("CLUP-T1~g64", |x| bounds::t1_first(&x.stat, x.lambda, G64), second));
    fields.extend(t1_fields("CLUP-T1~empirical-l", |x| bounds::t1_first(&x.stat, x.lambda, T1_PROOF), second));
    fields.extend(c1_fields("CLUP-C1", |x| bounds::a2_corrected(&x.stat), "let.a2c"));
    fields.extend(c1_fields("CLUP-C1~a2-printed", |x| bounds::a2_printed(&x.stat), "let.a2"));
    for claim in ["CLUP-T2", "CLUP-T2~expgamma", "CLUP-T2~mean-of-locals"] {
        fields.push(Twin { claim, field: "let.r", builtin: |x| bounds::t2_rate(&x.opt) });
    }
    fields.push(Twin { claim: "CLUP-T2-LOCAL", field: "let.q", builtin: |x| bounds::t2_q(&x.opt) });
    fields.push(Twin { claim: "CLUP-T2-LOCAL", field: "let.c1", builtin: |x| bounds::lyapunov_c1(&x.opt, false) });
    fields.push(Twin { claim: "CLUP-T2-LYAPUNOV", field: "let.c1", builtin: |x| bounds::lyapunov_c1(&x.opt, false) });
    for claim in ["CLUP-T3", "CLUP-T3~stated-rate", "CLUP-T3~one-batch", "CLUP-T3~empirical-l"] {
        fields.push(Twin { claim, field: "let.ball", builtin: |x| bounds::t3_ball(&x.opt, x.sigma2, x.batch) });
        fields.push(Twin { claim, field: "let.c1", builtin: |x| bounds::lyapunov_c1(&x.opt, true) });
    }
    fields.push(Twin { claim: "CLUP-T3~ball-corrected", field: "let.ball", builtin: |x| bounds::t3_ball_corrected(&x.opt, x.sigma2, x.batch) });
    fields.push(Twin { claim: "CLUP-T3", field: "let.rate", builtin: |x| bounds::t3_rate(&x.opt, false) });
    fields.push(Twin { claim: "CLUP-T3~stated-rate", field: "let.rate", builtin: |x| bounds::t3_rate(&x.opt, true) });
    fields.push(Twin { claim: "CLUP-G52", field: "let.g", builtin: |x| bounds::g(&x.stat, x.lambda) });
    fields.push(Twin { claim: "CLUP-G52~young", field: "let.g", builtin: |x| bounds::g(&x.stat, x.lambda) });
    fields.push(Twin { claim: "CLUP-G79", field: "let.C2", builtin: |x| bounds::c1_c2(&x.stat).1 });
    fields.push(Twin { claim: "CLUP-G79", field: "let.lambda77", builtin: |x| bounds::lambda_77(&x.stat) });
    fields.push(Twin { claim: "CLUP-T3-REMARK~ball-at-steps", field: "let.ball", builtin: |x| bounds::t3_ball(&x.opt, x.sigma2, x.batch) });
    let conditions = ALL
        .iter()
        .zip(CHECKS)
        .filter(|(c, _)| !WITHOUT_FORMULA.iter().any(|(id, _)| *id == c.id))
        .map(|(c, builtin)| ConditionTwin { claim: c.id, builtin })
        .collect();
    TwinTable { symbols: SYMBOLS.symbols(), values: |x| SYMBOLS.values(x), fields, conditions }
}
