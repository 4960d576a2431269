//! FedCLUP's claims (003; CLAIMS.md section 3) wired to their bounds ([`super::bounds`]) and
//! checks. Each claim is one [`ClupClaim`]; readings that disagree with the print are flagged
//! variants (`~name`) named after the inconsistency they encode.

use serde::Serialize;

use crate::claim::{BoundClaim, Comparison, ConditionCheck, ConditionKind, Horizon, Reading, Relation};
use crate::family::ClaimKind;
use crate::formula::user::FormulaClaim;

use super::ball_scaling::BallAxis;
use super::bounds::{self, FirstBranchGuard, Opt, Stat, T1Reading, T1_PROOF};

/// Everything a claim's bound and checks read at one point (a round, or a lambda of a sweep).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Inputs {
    /// Round `t >= 1` of a per-round bound (1 for a statistical point).
    pub t: usize,
    /// Statistical constants (Theorem 1, Corollary 1).
    pub stat: Stat,
    /// `lambda` of the point.
    pub lambda: f64,
    /// Optimization constants and steps (Theorems 2-3, Corollaries 2-3).
    pub opt: Opt,
    /// `V_1 = ||w_1^(g) - w~^(g)||^2 + c1 e_1` (Theorem 2) or `+ c1 g_1` (Theorem 3), `e_1` and
    /// `g_1` from the local models after round 1's `K` local steps (e_t of (100), 003:L957).
    pub v1: f64,
    /// `||w_{0,K}^(i) - w~^(i)||^2` of the client a Corollary 3 point is about.
    pub init_local: f64,
    /// `sigma^2` of Assumption 4 at the visited iterates.
    pub sigma2: f64,
    /// Batch size `B`.
    pub batch: f64,
    /// Whether a model assumption holds on the draw: `mu > 0`.
    pub strongly_convex: bool,
}

impl Horizon for Inputs {
    fn horizon(&self) -> usize {
        self.t
    }
    fn at_horizon(&self, t: usize) -> Self {
        Self { t, ..*self }
    }
}

/// What a claim states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statement {
    /// Lemma 1's constants against the instance's curvatures (ratio <= 1).
    Lemma1,
    /// Theorem 1 with a reading; `empirical_l` takes `L` as the empirical Hessians' largest eigenvalue.
    Theorem1 {
        /// The reading of (8)/(70).
        reading: T1Reading,
        /// `L = max_i lambda_max(A_i)` instead of the per-sample `L`.
        empirical_l: bool,
    },
    /// Corollary 1 at the lambda its condition admits; `a2_printed` uses (92) with the printed a2.
    Corollary1 {
        /// (92) with the printed `a2` (I-CLUP8).
        a2_printed: bool,
    },
    /// Theorem 2: `||w_t^(g) - w~^(g)||^2 <= r^(t-1) V_1`; the step `gamma` per [`GammaRule`].
    Theorem2Global(GammaRule),
    /// Theorem 2, local models via (130).
    Theorem2Local,
    /// The proof's (114): `V_{t+1} <= r V_t`.
    Theorem2Lyapunov,
    /// Corollary 2's rate at its parameters.
    Corollary2,
    /// Corollary 2's communication rounds over a lambda sweep.
    Corollary2Rounds,
    /// Corollary 2 (ii): gradient evaluations `K x rounds` at every lambda of the sweep below one
    /// bound free of lambda.
    Corollary2Computation,
    /// The rounds measured over the sweep do not decrease as lambda increases (003:L192).
    Corollary2Monotone,
    /// `q1` and `q2` increase in lambda (003:L114, L207), on the grid; `q1` compared where the
    /// guard holds at both lambdas of a pair (every pair when [`FirstBranchGuard::Unguarded`]).
    QMonotone { guard: FirstBranchGuard },
    /// Theorem 3's noise floor shrinks at least like `1/B` (003:L194, L1320), over a `B` sweep.
    Theorem3BallScaling,
    /// Theorem 3's noise floor against `m` or `B` as a log-log slope at most `-1` (003:L194,
    /// L1251, L1320; [`super::ball_scaling`]).
    Theorem3BallSlope(BallAxis),
    /// Figure 2's statement (003:L264, L1399): the rounds to an eps-solution do not increase with
    /// the local steps `K` ([`super::figures`]); `every_eps` reads it at every error level from
    /// the start down to the scenario's `eps`.
    Figure2LocalSteps {
        /// "accelerate convergence" as the whole error curve: at every error level.
        every_eps: bool,
    },
    /// Figure 3's statement (003:L276, L284): for a target total error some lambda of FedCLUP
    /// needs the fewest rounds, and no personalization degree is fastest at every error level
    /// ([`super::figure3`]); `every_eps` reads the first half for every target.
    Figure3Lambda {
        /// L276's "for any given total error": a FedCLUP lambda is at least as fast as
        /// LocalTrain and GlobalTrain at every target (every error level of the range).
        every_eps: bool,
    },
    /// (134) implies (132), (131) and (14) at Corollary 2's steps (003:L1141-1164;
    /// [`super::k134`]).
    Corollary2K134,
    /// Lemma 2 (003:L161): `grad F_i(w_g) = lambda (w_g - w_*^(i)(w_g))`, as two inequalities.
    Lemma2,
    /// Lemma 3 (003:L394-398): `||w~^(g) - w~^(i)|| <= 2 ||grad L_i(w~^(g))||/(mu + lambda)`.
    Lemma3,
    /// Lemma 4 (003:L422-426): `E||w~_GT - w*_g|| <= (rho/sqrt(N) + L R)/(mu/2)`, checked on the
    /// root mean square, which bounds the mean.
    Lemma4,
    /// Lemma 5 (003:L955-958): the inner-loop contraction of `e_t^(i)` at its tightest `eps`.
    Lemma5,
    /// Lemma 6 (003:L964-967): the outer-loop contraction at its tightest `eps_g`.
    Lemma6,
    /// (35) (003:L527); `local_average` bounds the clients' average error (34) solves for (L742).
    Global35 {
        /// `(1/m) sum_i E||w~^(i) - w*^(i)||^2` instead of `E||w~^(g) - w*_g||^2`.
        local_average: bool,
    },
    /// (52) (003:L621); `young` restores the factor 2 (50) omits (I-CLUP7).
    Global52 {
        /// The proof-supported reading with Young's factor 2.
        young: bool,
    },
    /// (79) (003:L773) at the lambdas (77) or (72) admits.
    Global79,
    /// The ball of the remark after Theorem 3 (003:L1318) at its steps; `at_steps` takes Theorem
    /// 3's printed ball at those steps instead of the remark's closed form.
    Theorem3Remark {
        /// Theorem 3's ball (L1251) at the remark's steps.
        at_steps: bool,
    },
    /// Corollary 3's optimization term; `c4` takes Corollary 4's rate without the factor 2.
    Corollary3 {
        /// Corollary 4's reading (I-CLUP1).
        c4: bool,
        /// The first term bounds `2 ||w_{T,K} - w~||^2`, as the paper's decomposition `||w_t -
        /// w*||^2 <= 2 ||w_t - w~||^2 + 2 ||w~ - w*||^2` (003:L69) puts it; without, it bounds
        /// `||w_{T,K} - w~||^2` itself (I-CLUP23).
        split: bool,
    },
    /// Theorem 3's noise ball.
    Theorem3 {
        /// The ball from the product of geometric sums (I-CLUP16).
        corrected_ball: bool,
        /// The statement's rate instead of the proof's (I-CLUP16).
        stated_rate: bool,
        /// `L` as the empirical Hessians' largest eigenvalue.
        empirical_l: bool,
        /// One batch per round, as Algorithm 2 is printed (I-CLUP19).
        one_batch: bool,
        /// `V_1` from the initial local models `w_{0,K}^(i)` (the recursion's start `g_0` at
        /// 003:L1316) instead of those after the first `K` local steps (`e_t` of (100), L957).
        v1_initial: bool,
    },
    /// A claim a card defines by a `bound` formula over [`super::formulas::SYMBOLS`], compared
    /// with the metric its `formula.metric` names ([`super::formulas::METRICS`]), every round.
    Card(CardFormula),
}

/// A metric a card-defined claim may bound: its name in `formula.metric`, what it measures (the
/// formula, with the paper line), and the built-in statement whose observed series and inputs it
/// reads ([`ClupClaim::observed`]): the card's bound takes the place of that statement's.
#[derive(Debug, Clone, Copy)]
pub struct CardMetric {
    /// The name a card gives in `formula.metric`.
    pub name: &'static str,
    /// What is measured, as a formula, with the paper line.
    pub measures: &'static str,
    /// The built-in statement whose observed series (and inputs: steps, `V_1`, `sigma^2`, the
    /// lambdas compared) the card's bound is compared with.
    pub reads: Statement,
}

/// A card-defined claim compiled ([`crate::formula::user`]) with the metric it bounds: it lives as
/// long as the process, as every claim's metadata does, so a [`ClupClaim`] stays `Copy`. Two are
/// equal when they are the same compiled claim.
#[derive(Clone, Copy)]
pub struct CardFormula(pub &'static FormulaClaim<Inputs>, pub &'static CardMetric);

impl PartialEq for CardFormula {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for CardFormula {}

impl std::fmt::Debug for CardFormula {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CardFormula({})", self.0.claim.id)
    }
}

/// Which `gamma` a Theorem 2 run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GammaRule {
    /// The scenario's.
    Scenario,
    /// `gamma = 1/L_g`, the experiments' choice (003:L244, L1347; I-CLUP11).
    Experiments,
    /// `gamma = 1/lambda`: the server takes the plain mean of the local models, as the authors'
    /// public code does (its global step never runs).
    MeanOfLocals,
}

/// One claim or variant.
#[derive(Debug, Clone, Copy)]
pub struct ClupClaim {
    /// Id.
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// Source lines.
    pub source: &'static str,
    /// The metric.
    pub metric: &'static str,
    /// Bound or per-round inequality.
    pub kind: ClaimKind,
    /// Variant name (`primary` for the reading the proof supports).
    pub reading: &'static str,
    /// Why this reading.
    pub why: &'static str,
    /// What it states.
    pub statement: Statement,
}

const STAT_T1: &str = "max_i E||w~^(i) - w*^(i)||^2 over the label noise, every design draw, lambda in {0} U [1e-3, 1e5]";
/// The metric of Theorem 2 (a card-defined claim bounds it as `global-error`, `formulas::METRICS`).
pub const T2_METRIC: &str = "||w_t^(g) - w~^(g)||^2 per round (exact)";

/// Every claim, in report order.
pub const ALL: [ClupClaim; 49] = [
    ClupClaim { id: "CLUP-L1", title: "Lemma 1: mu_g, L_g, mu_l, L_l, L_w against the instance's curvatures", source: "003:L159; proof L918-951", metric: "extreme eigenvalues of the Moreau envelopes' Hessians lambda A_i (A_i + lambda I)^-1, of A_i + lambda I, and the norm of the prox Jacobian, over clients and the average F", kind: ClaimKind::Lemma, reading: "primary", why: "L of Assumption 1 as printed (per-sample); the constants are attained with the empirical-Hessian L", statement: Statement::Lemma1 },
    ClupClaim { id: "CLUP-T1", title: "Theorem 1: statistical error of the solution of (2), for every lambda >= 0", source: "003:L108-114; (70) L721; proof L452-725", metric: STAT_T1, kind: ClaimKind::Bound, reading: "primary", why: "rho^2/n in (70) (I-CLUP4), 16 rho^2 lambda/(mu^3 n) in the second branch (I-CLUP5), first branch +inf unless g(lambda) <= 1/(8 L^2) (I-CLUP6)", statement: Statement::Theorem1 { reading: T1_PROOF, empirical_l: false } },
    ClupClaim { id: "CLUP-T1~n2", title: "Theorem 1 with (70) as printed: rho^2/n^2", source: "003:L721", metric: STAT_T1, kind: ClaimKind::Bound, reading: "n2", why: "I-CLUP4: (70) prints 2 rho^2/n^2 where (52) has 2 rho^2/n", statement: Statement::Theorem1 { reading: T1Reading { n_squared: true, printed_four: false, guard: FirstBranchGuard::EightL2 }, empirical_l: false } },
    ClupClaim { id: "CLUP-T1~printed-4", title: "Theorem 1 with the printed 4 rho^2 lambda/(mu^3 n)", source: "003:L112, (66) L706", metric: STAT_T1, kind: ClaimKind::Bound, reading: "printed-4", why: "I-CLUP5: (35) in (64) gives 16", statement: Statement::Theorem1 { reading: T1Reading { n_squared: false, printed_four: true, guard: FirstBranchGuard::EightL2 }, empirical_l: false } },
    ClupClaim { id: "CLUP-T1~g64", title: "Theorem 1, first branch guarded by g <= 1/(8L)^2", source: "003:L618", metric: STAT_T1, kind: ClaimKind::Bound, reading: "g64", why: "I-CLUP6: L618 assumes g <= 1/(8L)^2, L754 g <= 1/(8L^2)", statement: Statement::Theorem1 { reading: T1Reading { n_squared: false, printed_four: false, guard: FirstBranchGuard::SixtyFourL2 }, empirical_l: false } },
    ClupClaim { id: "CLUP-T1~unguarded", title: "Theorem 1 as printed, first branch without a condition on lambda", source: "003:L108-114", metric: STAT_T1, kind: ClaimKind::Bound, reading: "unguarded", why: "I-CLUP6: the theorem states no condition; where 1 - 4 L^2 g(lambda) <= 0 the first branch is negative or undefined", statement: Statement::Theorem1 { reading: T1Reading { n_squared: false, printed_four: false, guard: FirstBranchGuard::Unguarded }, empirical_l: false } },
    ClupClaim { id: "CLUP-T1~empirical-l", title: "Theorem 1 with L = max_i lambda_max(A_i)", source: "003:L92, L542, L592", metric: STAT_T1, kind: ClaimKind::Bound, reading: "empirical-l", why: "the proof uses L only as the smoothness of the empirical losses (38), (47): a smaller L than Assumption 1's per-sample one", statement: Statement::Theorem1 { reading: T1_PROOF, empirical_l: true } },
    ClupClaim { id: "CLUP-C1", title: "Corollary 1: C3/N + C4 (R^2 ^ 1/n) at the lambda (93) or (72) admits", source: "003:L122-126; (91) L843-846; (93) L866", metric: "max_i E||w~^(i) - w*^(i)||^2 at lambda in {l93, 10 l93, 1000 l93} (R <= 1/sqrt n) or {0, l72/10, l72} (R > 1/sqrt n)", kind: ClaimKind::Bound, reading: "primary", why: "the corollary's closed-form condition (93), which dominates the corrected a2' (I-CLUP8)", statement: Statement::Corollary1 { a2_printed: false } },
    ClupClaim { id: "CLUP-C1~a2-printed", title: "Corollary 1 at lambda = max(a1, a2) of (92) with the printed a2", source: "003:L854-862", metric: "max_i E||w~^(i) - w*^(i)||^2 at lambda = max(a1, a2)", kind: ClaimKind::Bound, reading: "a2-printed", why: "I-CLUP8: (86)/(88) drop kappa^2; (92) with the printed a2 admits smaller lambda than (85) supports", statement: Statement::Corollary1 { a2_printed: true } },
    ClupClaim { id: "CLUP-T2", title: "Theorem 2: w_t^(g) converges linearly at r = 1 - a/2 - a^2/2, a = gamma mu_g", source: "003:L176-181; (114) L1054, (117) L1071", metric: T2_METRIC, kind: ClaimKind::Bound, reading: "primary", why: "the constant of 'linear at rate r' is the proof's V_1 (114); conditions gamma < 1/L_g, eta <= 1/L_l, (14); (120) reported as a proof artifact (I-CLUP12)", statement: Statement::Theorem2Global(GammaRule::Scenario) },
    ClupClaim { id: "CLUP-T2~expgamma", title: "Theorem 2 at the experiments' gamma = 1/L_g", source: "003:L244, L1347", metric: T2_METRIC, kind: ClaimKind::Bound, reading: "expgamma", why: "I-CLUP11: at gamma = 1/L_g the right side of (14) is 0", statement: Statement::Theorem2Global(GammaRule::Experiments) },
    ClupClaim { id: "CLUP-T2~mean-of-locals", title: "Theorem 2 when the server takes the mean of the local models (gamma = 1/lambda)", source: "003:L258; the authors' public code", metric: T2_METRIC, kind: ClaimKind::Bound, reading: "mean-of-locals", why: "the public simulation code never executes its global step, so w^(g) is the plain mean of the local models, Algorithm 1 with gamma = 1/lambda", statement: Statement::Theorem2Global(GammaRule::MeanOfLocals) },
    ClupClaim { id: "CLUP-T2-LOCAL", title: "Theorem 2: local models via (130), ||w_{t,K}^(i) - w~^(i)||^2 <= (2m/c1 + 2L_w^2) r^(t-1) V_1", source: "003:L181, (130) L1134", metric: "max_i ||w_{t,K}^(i) - w~^(i)||^2 per round", kind: ClaimKind::Bound, reading: "primary", why: "(130) with its typos read as 2 e_t^(i) + 2 L_w^2 ||w_t^(g) - w~^(g)||^2 and e_t^(i) <= m e_t (I-CLUP3, I-CLUP13)", statement: Statement::Theorem2Local },
    ClupClaim { id: "CLUP-T2-LYAPUNOV", title: "The proof's (114): V_{t+1} <= r V_t", source: "003:L1049-1071", metric: "V_t = ||w_t^(g) - w~^(g)||^2 + c1 (1/m) sum_i ||w_{t,K}^(i) - w*^(i)(w_t^(g))||^2", kind: ClaimKind::Lemma, reading: "primary", why: "c1 of L1049 (factor 2), eps = 1, eps_g = (mu_g/2)(1 - gamma mu_g)", statement: Statement::Theorem2Lyapunov },
    ClupClaim { id: "CLUP-C2", title: "Corollary 2: rate 1 - (lambda+L)/(4 kappa (lambda+mu)) at eta = 1/(lambda+L), gamma = 1/(2 L_g), K of (134)", source: "003:L185-190; (134) L1164", metric: T2_METRIC, kind: ClaimKind::Bound, reading: "primary", why: "the printed rate, an upper bound on r (I-CLUP2); constant V_1", statement: Statement::Corollary2 },
    ClupClaim { id: "CLUP-C2-ROUNDS", title: "Corollary 2: rounds to an eps-solution against those its rate implies, over a lambda sweep", source: "003:L187-192", metric: "first t with ||w_t^(g) - w~^(g)||^2 <= eps and max_i ||w_{t,0}^(i) - w~^(i)||^2 <= eps", kind: ClaimKind::Lemma, reading: "primary", why: "O(kappa (lambda+mu)/(lambda+L) log 1/eps) made explicit by the printed rate and T2's constants", statement: Statement::Corollary2Rounds },
    ClupClaim { id: "CLUP-C3", title: "Corollary 3's optimization term: ||w_{T,K}^(i) - w~^(i)||^2 <= (1 - (lambda+L)/(4 kappa (lambda+mu)))^T ||w_{0,0}^(i) - w~^(i)||^2", source: "003:L69, L200-207", metric: "||w_{T,K}^(i) - w~^(i)||^2, worst client, per round", kind: ClaimKind::Bound, reading: "primary", why: "the O[.] statistical term is Theorem 1's; the optimization term 2 r^T ||w_{0,0} - w~||^2 of (15) bounds 2 ||w_{T,K} - w~||^2, the optimization error of the decomposition at L69 (I-CLUP23; I-CLUP3: the proof gives a constant times V_1 instead)", statement: Statement::Corollary3 { c4: false, split: true } },
    ClupClaim { id: "CLUP-C3~no-split", title: "Corollary 3's optimization term bounding the optimization error itself: ||w_{T,K}^(i) - w~^(i)||^2 <= 2 (1 - (lambda+L)/(4 kappa (lambda+mu)))^T ||w_{0,0}^(i) - w~^(i)||^2", source: "003:L200-207", metric: "||w_{T,K}^(i) - w~^(i)||^2, worst client, per round", kind: ClaimKind::Bound, reading: "no-split", why: "I-CLUP23: the first term of (15) read as a bound on ||w_{T,K} - w~||^2 itself, factor 2 included; with the decomposition at L69 the total would then be 4 r^T ||w_{0,0} - w~||^2, not (15)'s", statement: Statement::Corollary3 { c4: false, split: false } },
    ClupClaim { id: "CLUP-C3~c4", title: "Corollary 4's optimization term: ||w_{T,K}^(i) - w~^(i)||^2 <= (1 - 1/kappa - (L-mu)/(kappa (lambda+mu)))^T ||w_{0,0}^(i) - w~^(i)||^2 / 2", source: "003:L69, L1324-1331", metric: "||w_{T,K}^(i) - w~^(i)||^2, worst client, per round", kind: ClaimKind::Bound, reading: "c4", why: "I-CLUP1: the appendix restatement has a 4x stronger contraction and no factor 2; its first term bounds 2 ||w_{T,K} - w~||^2 as in CLUP-C3 (I-CLUP23)", statement: Statement::Corollary3 { c4: true, split: true } },
    ClupClaim { id: "CLUP-T3", title: "Theorem 3: Algorithm 2 converges at 1 - gamma mu_g/2 into the ball 8/min(gamma mu_g/2, mu_l eta) lambda^2 eta^2 sigma^2/(mu_g^2 B m)", source: "003:L1245-1251; (148) L1277; L1316", metric: "E||w_t^(g) - w~^(g)||^2 over fresh batches per local step (exact moments)", kind: ClaimKind::Bound, reading: "primary", why: "the proof's rate (148) and the printed ball; sigma^2 of Assumption 4 (variance reading, I-CLUP17) at the visited iterates; fresh batches (I-CLUP19); g_1 of V_1 after round 1's K local steps, as e_t of (100) (I-CLUP21)", statement: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: false, one_batch: false, v1_initial: false } },
    ClupClaim { id: "CLUP-T3~ball-corrected", title: "Theorem 3 with the ball 16 lambda^2 eta sigma^2/(gamma mu_g^3 mu_l B m)", source: "003:L1313-1316", metric: "E||w_t^(g) - w~^(g)||^2", kind: ClaimKind::Bound, reading: "ball-corrected", why: "I-CLUP16: the product of the two geometric sums", statement: Statement::Theorem3 { corrected_ball: true, stated_rate: false, empirical_l: false, one_batch: false, v1_initial: false } },
    ClupClaim { id: "CLUP-T3~stated-rate", title: "Theorem 3 at the statement's rate 1 - a/2 - a^2/2", source: "003:L1249", metric: "E||w_t^(g) - w~^(g)||^2", kind: ClaimKind::Bound, reading: "stated-rate", why: "I-CLUP16: the statement's rate is faster than the proof's (148)", statement: Statement::Theorem3 { corrected_ball: false, stated_rate: true, empirical_l: false, one_batch: false, v1_initial: false } },
    ClupClaim { id: "CLUP-T3~one-batch", title: "Theorem 3 with one batch per round, as Algorithm 2 is printed", source: "003:L1176", metric: "E||w_t^(g) - w~^(g)||^2 with the K local steps on one batch", kind: ClaimKind::Bound, reading: "one-batch", why: "I-CLUP19: the listing draws the batch before the k-loop", statement: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: false, one_batch: true, v1_initial: false } },
    ClupClaim { id: "CLUP-T3~empirical-l", title: "Theorem 3's conditions with L = max_i lambda_max(A_i)", source: "003:L92, L1245", metric: "E||w_t^(g) - w~^(g)||^2", kind: ClaimKind::Bound, reading: "empirical-l", why: "the empirical-Hessian reading of L (smaller than the per-sample L of Assumption 1)", statement: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: true, one_batch: false, v1_initial: false } },
    ClupClaim { id: "CLUP-T3~v1-initial", title: "Theorem 3 with V_1 from the initial local models w_{0,K}^(i)", source: "003:L1316", metric: "E||w_t^(g) - w~^(g)||^2", kind: ClaimKind::Bound, reading: "v1-initial", why: "I-CLUP21: L1316 starts the recursion at g_0 with the initial local models; e_t of (100)/(108) (L957, L1010), which Theorem 3's proof follows 'in analogy' (L1255), pairs w_t^(g) with the local models after the round's K steps", statement: Statement::Theorem3 { corrected_ball: false, stated_rate: false, empirical_l: false, one_batch: false, v1_initial: true } },
    ClupClaim { id: "CLUP-C2-COMPUTE", title: "Corollary 2 (ii): gradient evaluations K x rounds below a bound free of lambda, over a lambda sweep", source: "003:L190-192; (134) L1164", metric: "K of (134) times the rounds measured to an eps-solution, per lambda of the sweep", kind: ClaimKind::Lemma, reading: "primary", why: "O~(kappa log 1/eps) made explicit: K <= 3 + rho ln(1056 kappa^2) and the rounds the printed rate implies <= 2 + (4 kappa/rho) ln(C/eps), rho = (lambda+L)/(lambda+mu) in [1, kappa], so K x rounds <= 6 + 12 kappa ln(C/eps) + 2 kappa ln(1056 kappa^2) + 4 kappa ln(1056 kappa^2) ln(C/eps) at every lambda, C the sweep's largest constant of the implied rounds", statement: Statement::Corollary2Computation },
    ClupClaim { id: "CLUP-C2-MONOTONE", title: "Corollary 2: the rounds to an eps-solution increase with lambda", source: "003:L192", metric: "rounds measured at consecutive lambdas of the sweep: rounds(lambda_j) <= rounds(lambda_{j+1})", kind: ClaimKind::Lemma, reading: "primary", why: "as lambda increases from 0 to inf the communication complexity increases from O(log 1/eps) to O(kappa log 1/eps) (L192): measured, not the O(.)'s shape", statement: Statement::Corollary2Monotone },
    ClupClaim { id: "CLUP-Q-MONOTONE", title: "q1 and q2 of Theorem 1 increase in lambda", source: "003:L114, L207; (67) L710, (70) L721", metric: "q1 = 1/(1/q1) of (70) where g(lambda) <= 1/(8 L^2) and q2 of (67), at consecutive positive lambdas of the grid, every draw", kind: ClaimKind::Lemma, reading: "primary", why: "Corollary 3 (L207) states both monotonically increasing; q1 only where its guard holds (I-CLUP6), below the guard 1/q1 has the pole of Gq", statement: Statement::QMonotone { guard: FirstBranchGuard::EightL2 } },
    ClupClaim { id: "CLUP-Q-MONOTONE~unguarded", title: "q1 of (70) increases in lambda over every lambda > 0, as printed", source: "003:L114, L207; (70) L721", metric: "q1 = 1/(1/q1) of (70) and q2 of (67) at consecutive positive lambdas of the grid, every draw", kind: ClaimKind::Lemma, reading: "unguarded", why: "I-CLUP6: L114 and L207 state q1 increasing with no condition on lambda; below the pole of Gq (4 L^2 g(lambda) > 1) 1/q1 of (70) changes sign, where q1 jumps from +inf to -inf", statement: Statement::QMonotone { guard: FirstBranchGuard::Unguarded } },
    ClupClaim { id: "CLUP-T3-BALL-B", title: "Theorem 3: the noise ball scales like 1/(B m): Algorithm 2's floor at B is at most its floor at B = 1 over B", source: "003:L194, L1251, L1320", metric: "E||w_T^(g) - w~^(g)||^2 of Algorithm 2 started at the solution (the noise floor alone), B in {1, 2, 4, 8} below n: floor(B) <= floor(1)/B", kind: ClaimKind::Lemma, reading: "primary", why: "the ball 8/min(gamma mu_g/2, mu_l eta) lambda^2 eta^2 sigma^2/(mu_g^2 B m) and the text (L194, L1320) put the batch size in the denominator: the floor at B is compared with the floor at B = 1 divided by B (sampling without replacement shrinks it by (n - B)/(B (n - 1)) <= 1/B)", statement: Statement::Theorem3BallScaling },
    ClupClaim { id: "CLUP-L2", title: "Lemma 2: grad F_i(w_g) = lambda (w_g - w_*^(i)(w_g))", source: "003:L161", metric: "the Moreau envelope's gradient a = lambda A_i (A_i + lambda I)^-1 (w_g - A_i^-1 b_i) against b = lambda (w_g - prox(w_g)), as ||a||^2 <= <a, b> and ||b||^2 <= <a, b> (both together: a = b), every draw, client, positive lambda of the grid, w_g in {0, w*_g}", kind: ClaimKind::Lemma, reading: "primary", why: "F_i of a quadratic L_i is the quadratic with Hessian lambda A_i (A_i + lambda I)^-1 (Lemma 1's object) minimized where L_i is: its gradient from these, independent of the prox", statement: Statement::Lemma2 },
    ClupClaim { id: "CLUP-L3", title: "Lemma 3: ||w~^(g) - w~^(i)|| <= 2 ||grad L_i(w~^(g), S_i)||/(mu + lambda)", source: "003:L394-398; (21) L416", metric: "||w~^(g) - w~^(i)|| on each draw's labels, every client, positive lambda of the grid", kind: ClaimKind::Lemma, reading: "primary", why: "as printed (Assumption 2 only; deterministic given the data)", statement: Statement::Lemma3 },
    ClupClaim { id: "CLUP-L4", title: "Lemma 4: E||w~_GT - w*_g|| <= (rho sqrt(sum_i p_i^2/n_i) + L R)/(mu/2)", source: "003:L422-426; proof L428-448", metric: "(E||w~_GT - w*_g||^2)^(1/2) over the label noise (exact), every draw", kind: ClaimKind::Bound, reading: "primary", why: "the root mean square bounds the mean E||.|| (Jensen), so the check is sufficient for the printed first moment; the proof's (22) holds draw by draw, so it bounds the root mean square as well (Minkowski)", statement: Statement::Lemma4 },
    ClupClaim { id: "CLUP-L5", title: "Lemma 5: e_{t+1}^(i) <= (1+eps)(1 - eta mu_l)^K e_t^(i) + (1 + 1/eps)(1 - eta mu_l)^K ||w_{t+1,*}^(i) - w_{t,*}^(i)||^2", source: "003:L955-958; (111) L1027", metric: "e_{t+1}^(i) = ||w_{t+1,K}^(i) - w_*^(i)(w_{t+1}^(g))||^2 per round and client of Algorithm 1 (exact)", kind: ClaimKind::Lemma, reading: "primary", why: "for all eps > 0: checked at the eps that minimizes the right side, (1 - eta mu_l)^K (sqrt(e_t^(i)) + sqrt(D_t^(i)))^2; the index of w_* as (111) uses it (I-CLUP13)", statement: Statement::Lemma5 },
    ClupClaim { id: "CLUP-L6", title: "Lemma 6: ||w_{t+1}^(g) - w~^(g)||^2 <= (1 - gamma mu_g + gamma eps_g) X_t - gamma^2 ||grad F||^2 + gamma^3 L_g ||hat grad F||^2 + (gamma/eps_g + gamma^2) ||grad F - hat grad F||^2", source: "003:L964-967; proof L969-1002", metric: "||w_{t+1}^(g) - w~^(g)||^2 per round of Algorithm 1 (exact)", kind: ClaimKind::Lemma, reading: "primary", why: "for all eps_g > 0: checked at the eps_g that minimizes the right side (gamma eps_g X_t + gamma D/eps_g >= 2 gamma sqrt(X_t D)); 'gamma <= L_g' read gamma <= 1/L_g (I-CLUP13)", statement: Statement::Lemma6 },
    ClupClaim { id: "CLUP-G35", title: "(35): E||w~^(g) - w*_g||^2 <= (4 rho^2/n + 2 mu lambda R^2)/mu^2", source: "003:L527; proof L452-527", metric: "E||w~^(g) - w*_g||^2 over the label noise (exact), every draw, lambda of the grid", kind: ClaimKind::Bound, reading: "primary", why: "as printed, for the global model; its case R > 1/sqrt(n) is reported only: (25)-(34) do not use it", statement: Statement::Global35 { local_average: false } },
    ClupClaim { id: "CLUP-G35~local-average", title: "(35) for the clients' average error (1/m) sum_i E||w~^(i) - w*^(i)||^2", source: "003:L522-527, L742", metric: "(1/m) sum_i E||w~^(i) - w*^(i)||^2 over the label noise (exact), every draw, lambda of the grid", kind: ClaimKind::Bound, reading: "local-average", why: "(34) is an inequality in sum_i p_i E||Delta^(i)||^2 and L742 solves it for that quantity; (35) labels it the global error, which it bounds by Jensen", statement: Statement::Global35 { local_average: true } },
    ClupClaim { id: "CLUP-G52", title: "(52): E||w~^(g) - w*_g||^2 <= Gq(lambda)(4L^2R^2 + 2 rho^2/n) + 16 rho^2/(mu^2 N) + 16 L^2R^2/mu^2 where g(lambda) <= 1/(8L)^2", source: "003:L618-621", metric: "E||w~^(g) - w*_g||^2 over the label noise (exact), every draw, lambda of the grid where g(lambda) < 1/(8L)^2 and just inside that condition", kind: ClaimKind::Bound, reading: "primary", why: "as printed, under its condition g(lambda) <= 1/(8L)^2 (L618); its case R <= 1/sqrt(n) reported only: (36)-(51) do not use it", statement: Statement::Global52 { young: false } },
    ClupClaim { id: "CLUP-G52~young", title: "(52) with Young's factor 2: (2 g (4L^2R^2 + 2 rho^2/n) + 16 rho^2/(mu^2 N) + 16 L^2R^2/mu^2)/(1 - 8 L^2 g)", source: "003:L606-621", metric: "E||w~^(g) - w*_g||^2 over the label noise (exact), every draw, lambda of the grid where g(lambda) < 1/(8L)^2 and just inside that condition", kind: ClaimKind::Bound, reading: "young", why: "I-CLUP7: (50) adds (49) and Lemma 4's squared term without the factor 2 of ||a + b||^2 <= 2||a||^2 + 2||b||^2; with it, solving for the global error gives this bound", statement: Statement::Global52 { young: true } },
    ClupClaim { id: "CLUP-G79", title: "(79): E||w~^(g) - w*_g||^2 <= C1/N + C2 (1/n ^ R^2) at the lambda (77) or (72) admits", source: "003:L773-780; (75) L754, (77) L763, (72) L740", metric: "E||w~^(g) - w*_g||^2 at lambda in {l77, 10 l77, 1000 l77} (R <= 1/sqrt n) or {0, l72/10, l72} (R > 1/sqrt n), every draw", kind: ClaimKind::Bound, reading: "primary", why: "as printed, C1 = 32 rho^2/mu^2, C2 = ((1+sqrt 3) rho/mu)^2 v 32 L^2/mu^2 (80), with the case of (78) that (73) supports for R > 1/sqrt(n) (I-CLUP9)", statement: Statement::Global79 },
    ClupClaim { id: "CLUP-T3-REMARK", title: "Remark after Theorem 3: at eta = min{mu(lambda+L)/(4L(lambda+mu)^2), 1/(lambda+L)}, gamma = 1/(2 L_g), the ball is min{1/(4 mu L), (lambda+mu)/(mu^2 (lambda+L))} sigma^2/(B m)", source: "003:L1318", metric: "E||w_t^(g) - w~^(g)||^2 of Algorithm 2 at the remark's steps started at the solution (the noise floor alone), every round", kind: ClaimKind::Bound, reading: "primary", why: "the O(eps) part vanishes from the solution; K the smallest meeting (143) = (14) at these steps; sigma^2 of Assumption 4 at the visited iterates (I-CLUP17), fresh batches (I-CLUP19)", statement: Statement::Theorem3Remark { at_steps: false } },
    ClupClaim { id: "CLUP-T3-REMARK~ball-at-steps", title: "Remark after Theorem 3 with Theorem 3's printed ball at the remark's steps", source: "003:L1251, L1316-1318", metric: "E||w_t^(g) - w~^(g)||^2 of Algorithm 2 at the remark's steps started at the solution, every round", kind: ClaimKind::Bound, reading: "ball-at-steps", why: "I-CLUP22: the ball 8/min(gamma mu_g/2, mu_l eta) lambda^2 eta^2 sigma^2/(mu_g^2 B m) at these steps is 2 (lambda+L)/(mu L (lambda+mu)) sigma^2/(B m) when the first eta is the smaller, at least 8 times the remark's closed form", statement: Statement::Theorem3Remark { at_steps: true } },
    ClupClaim { id: "CLUP-T3-BALL-M-SLOPE", title: "Theorem 3: the noise ball scales like 1/m: the log-log slope of Algorithm 2's floor against the number of clients is at most -1", source: "003:L194, L1251, L1320", metric: "E||w_T^(g) - w~^(g)||^2 of Algorithm 2 started at the solution (the noise floor alone) with every client repeated j = 1..8 times (m = j m_0), scenarios with m_0 = 2: least-squares slope of ln floor against ln m with its 99% Student-t interval", kind: ClaimKind::Lemma, reading: "primary", why: "the ball 8/min(gamma mu_g/2, mu_l eta) lambda^2 eta^2 sigma^2/(mu_g^2 B m) depends on m only through 1/m (mu_g, mu_l, sigma^2 and the steps are per client), and L194 reads it as the noise error scaling inversely with the number of clients: repeating each client keeps every other factor of the ball fixed, each copy drawing its own batches", statement: Statement::Theorem3BallSlope(BallAxis::Clients) },
    ClupClaim { id: "CLUP-T3-BALL-B-SLOPE", title: "Theorem 3: the noise ball scales like 1/B: the log-log slope of Algorithm 2's floor against the batch size is at most -1", source: "003:L194, L1251, L1320", metric: "E||w_T^(g) - w~^(g)||^2 of Algorithm 2 started at the solution (the noise floor alone), B = 1..8 below n: least-squares slope of ln floor against ln B with its 99% Student-t interval", kind: ClaimKind::Lemma, reading: "primary", why: "the ball and the text (L194, L1320) put the batch size in the denominator, O(1/(B m)); sampling without replacement shrinks the per-step variance by (n - B)/(B (n - 1)), a slope below -1", statement: Statement::Theorem3BallSlope(BallAxis::Batch) },
    ClupClaim { id: "CLUP-FIG2-K", title: "Figure 2: more local updates accelerate convergence: the rounds to an eps-solution do not increase with K", source: "003:L264, L272, L1399", metric: "rounds of Algorithm 1 to an eps-solution at Corollary 2's gamma and eta, K in {1, 2, 4, 8, 16, 32}, every lambda of the scenario's sweep: rounds(K_{j+1}) <= rounds(K_j)", kind: ClaimKind::Lemma, reading: "primary", why: "'more local updates significantly accelerate convergence, reducing the reliance on frequent communication' (low personalization) and 'a limited effect' (high personalization): neither says more local steps cost rounds, so every pair is an ordering whose ties hold; the figure is empirical, so no step condition of Theorem 2 is required", statement: Statement::Figure2LocalSteps { every_eps: false } },
    ClupClaim { id: "CLUP-FIG2-K~every-eps", title: "Figure 2 at every error level: more local updates do not cost rounds to any error between the start and the scenario's eps", source: "003:L264, L272, L1399", metric: super::figures::EVERY_EPS_METRIC, kind: ClaimKind::Lemma, reading: "every-eps", why: super::figures::EVERY_EPS, statement: Statement::Figure2LocalSteps { every_eps: true } },
    ClupClaim { id: "CLUP-FIG3-LAMBDA", title: "Figure 3: for a target total error a lambda of FedCLUP needs the fewest rounds, and no personalization degree is fastest at every error level", source: "003:L276, L284", metric: super::figure3::METRIC, kind: ClaimKind::Lemma, reading: "primary", why: super::figure3::PRIMARY, statement: Statement::Figure3Lambda { every_eps: false } },
    ClupClaim { id: "CLUP-FIG3-LAMBDA~every-eps", title: "Figure 3 at every target: a lambda of FedCLUP is at least as fast as LocalTrain and GlobalTrain at every total error", source: "003:L276", metric: super::figure3::METRIC, kind: ClaimKind::Lemma, reading: "every-eps", why: super::figure3::EVERY_EPS, statement: Statement::Figure3Lambda { every_eps: true } },
    ClupClaim { id: "CLUP-C2-K134", title: "Corollary 2's (134): K >= 2 + (lambda+L)/(lambda+mu) ln(1056 kappa^2) implies (132), (131) and (14) at gamma = 1/(2 L_g), eta = 1/(lambda+L)", source: "003:L1141-1164; L185", metric: "K_14 (the smallest K meeting (14)) against K, and (132), (133), (14) at K, at the scenario's lambda (K of Corollary 2) and every lambda of its sweep (K of (134)), draw 0's mu and per-sample L", kind: ClaimKind::Lemma, reading: "primary", why: "the proof's chain as printed: (131) is (14) at Corollary 2's steps, (133) bounds it by (132), and ln(1/x) >= 1 - x gives (134); (134) is the implication's condition, every link must hold where it is met; slack K/K_14", statement: Statement::Corollary2K134 },
];

/// The conditions of Theorems 2 and 3 at `o`: `gamma < 1/L_g`, `eta <= 1/L_l`, (14)/(143) with
/// both sides, and the proof's (120) as an implicit condition (never binding, I-CLUP12).
pub fn optimization_checks(o: &Opt) -> Vec<ConditionCheck> {
    let c = o.lemma1();
    let (lhs, rhs) = bounds::condition_14(o, 4);
    // The left side over mu's error interval (it falls as mu grows).
    let lhs_range = (bounds::condition_14_at(o, o.mu + o.mu_error, 4).0, bounds::condition_14_at(o, (o.mu - o.mu_error).max(0.0), 4).0);
    let mut v = vec![
        ConditionCheck::compare("gamma < 1/L_g", ConditionKind::StepSize, o.gamma, Relation::Below, 1.0 / c.l_g),
        ConditionCheck::compare("eta <= 1/L_l", ConditionKind::StepSize, o.eta, Relation::AtMost, 1.0 / c.l_l),
        ConditionCheck::compare_bracketed(
            "(14): (2 + 64 L_w^2 lambda^2/mu_g^2)(1 - eta mu_l)^K <= (1 - gamma L_g)^4",
            ConditionKind::StepSize,
            (lhs, lhs_range),
            Relation::AtMost,
            (rhs, (rhs, rhs)),
        ),
    ];
    v.push(ConditionCheck::compare(
        "(120): gamma mu_g (2 + 1/zeta)/2 <= 1 (proof artifact)",
        ConditionKind::Implicit,
        bounds::condition_120(o),
        Relation::AtMost,
        1.0,
    ));
    v
}

/// The case of the global model's analysis a bound is stated in (003:L500, L529), `R` against
/// `sqrt(sum_i p_i/n_i) = 1/sqrt(n)`: reported only, its derivation does not use it.
fn case_check(name: &str, x: &Inputs, relation: Relation) -> ConditionCheck {
    ConditionCheck::compare(name, ConditionKind::Implicit, x.stat.r, relation, 1.0 / x.stat.n.sqrt())
}

fn model_checks(x: &Inputs) -> Vec<ConditionCheck> {
    vec![
        ConditionCheck::assumption(
            "A2 mu-strong convexity of every L_i",
            x.strongly_convex,
            if x.strongly_convex { String::new() } else { "an empirical Hessian is singular".to_string() },
        ),
        ConditionCheck::compare("p_i = 1/m, n_i = n (003:L106)", ConditionKind::Scope, 1.0, Relation::Equal, 1.0),
    ]
}

impl ClupClaim {
    /// The id.
    pub fn id(&self) -> &'static str {
        self.id
    }
    /// The metric.
    pub fn metric(&self) -> &'static str {
        self.metric
    }
    /// The statement whose observed series the claim is compared with: its own, or for a
    /// card-defined claim the built-in statement its metric reads ([`CardMetric::reads`]).
    pub fn observed(&self) -> Statement {
        match self.statement {
            Statement::Card(f) => f.1.reads,
            s => s,
        }
    }
    /// Which statistical constants the claim reads (`L` per-sample or empirical).
    pub fn uses_empirical_l(&self) -> bool {
        matches!(self.statement, Statement::Theorem1 { empirical_l: true, .. } | Statement::Theorem3 { empirical_l: true, .. })
    }
}

impl BoundClaim for ClupClaim {
    type Inputs = Inputs;
    fn id(&self) -> &'static str {
        self.id
    }
    fn title(&self) -> &'static str {
        self.title
    }
    fn source(&self) -> &'static str {
        self.source
    }
    fn reading(&self) -> Reading {
        Reading { name: self.reading, is_variant: self.reading != "primary", description: self.why }
    }
    fn comparison(&self) -> Comparison {
        Comparison::PerRound
    }
    fn every_prefix(&self) -> bool {
        true
    }
    fn checks(&self, x: &Inputs) -> Vec<ConditionCheck> {
        let mut v = model_checks(x);
        match self.statement {
            Statement::Lemma1
            | Statement::Theorem1 { .. }
            | Statement::Corollary1 { .. }
            | Statement::QMonotone { .. }
            | Statement::Figure2LocalSteps { .. }
            | Statement::Figure3Lambda { .. }
            | Statement::Lemma2
            | Statement::Lemma3
            | Statement::Lemma4
            | Statement::Global79 => {}
            Statement::Corollary2K134 => v.push(super::k134::condition_134(&super::k134::chain(x.opt.mu, x.opt.l, x.opt.lambda, x.opt.k as usize))),
            Statement::Global35 { .. } => v.push(case_check("(35)'s case R > 1/sqrt(n) (reported only: (25)-(34) do not use it)", x, Relation::AtLeast)),
            Statement::Global52 { .. } => v.push(case_check("(52)'s case R <= 1/sqrt(n) (reported only: (36)-(51) do not use it)", x, Relation::AtMost)),
            Statement::Lemma5 => {
                let c = x.opt.lemma1();
                v.push(ConditionCheck::compare("eta <= 1/L_l", ConditionKind::StepSize, x.opt.eta, Relation::AtMost, 1.0 / c.l_l));
            }
            Statement::Lemma6 => {
                let c = x.opt.lemma1();
                v.push(ConditionCheck::compare(
                    "gamma <= 1/L_g (printed 'gamma <= L_g', I-CLUP13)",
                    ConditionKind::StepSize,
                    x.opt.gamma,
                    Relation::AtMost,
                    1.0 / c.l_g,
                ));
            }
            Statement::Theorem2Global(_)
            | Statement::Theorem2Local
            | Statement::Theorem2Lyapunov
            | Statement::Corollary2
            | Statement::Corollary2Rounds
            | Statement::Corollary2Computation
            | Statement::Corollary2Monotone
            | Statement::Corollary3 { .. } => {
                v.extend(optimization_checks(&x.opt));
            }
            Statement::Theorem3 { .. } | Statement::Theorem3BallScaling | Statement::Theorem3BallSlope(_) | Statement::Theorem3Remark { .. } => {
                // Scope checks first, then the step conditions (the order of a card's formula).
                v.push(ConditionCheck::compare("B <= n", ConditionKind::Scope, x.batch, Relation::AtMost, x.stat.n));
                v.extend(optimization_checks(&x.opt));
            }
            Statement::Card(f) => v.extend(f.0.checks(x)),
        }
        v
    }
    fn bound(&self, x: &Inputs) -> f64 {
        let o = &x.opt;
        let t = x.t.max(1) as f64;
        match self.statement {
            Statement::Lemma1 => 1.0,
            Statement::Theorem1 { reading, .. } => bounds::t1_bound(&x.stat, x.lambda, reading),
            Statement::Corollary1 { .. } => bounds::c1_bound(&x.stat),
            Statement::Theorem2Global(_) => bounds::t2_rate(o).powf(t - 1.0) * x.v1,
            Statement::Theorem2Local => bounds::local_factor(o) * bounds::t2_rate(o).powf(t - 1.0) * x.v1,
            Statement::Theorem2Lyapunov => bounds::t2_rate(o),
            Statement::Corollary2 => bounds::c2_rate(o.mu, o.l, o.lambda).powf(t - 1.0) * x.v1,
            Statement::Corollary2Rounds
            | Statement::Corollary2Computation
            | Statement::Corollary2Monotone
            | Statement::QMonotone { .. }
            | Statement::Theorem3BallScaling
            | Statement::Theorem3BallSlope(_)
            | Statement::Figure2LocalSteps { .. }
            | Statement::Figure3Lambda { .. }
            | Statement::Corollary2K134
            | Statement::Lemma2
            | Statement::Lemma3
            | Statement::Lemma5
            | Statement::Lemma6 => f64::NAN,
            Statement::Lemma4 => bounds::lemma4(&x.stat),
            Statement::Global35 { .. } => bounds::global_35(&x.stat, x.lambda),
            Statement::Global52 { young: false } => bounds::global_52(&x.stat, x.lambda),
            Statement::Global52 { young: true } => bounds::global_52_young(&x.stat, x.lambda),
            Statement::Global79 => bounds::global_79(&x.stat),
            Statement::Theorem3Remark { at_steps: false } => bounds::t3_remark_ball(o, x.sigma2, x.batch),
            Statement::Theorem3Remark { at_steps: true } => bounds::t3_ball(o, x.sigma2, x.batch),
            Statement::Corollary3 { c4, split } => {
                // The printed first term: 2 r^T (Corollary 3) or r4^T (Corollary 4) times the start.
                let printed = if c4 { bounds::c4_rate(o.mu, o.l, o.lambda).powf(t) } else { 2.0 * bounds::c2_rate(o.mu, o.l, o.lambda).powf(t) } * x.init_local;
                if split {
                    printed / 2.0
                } else {
                    printed
                }
            }
            Statement::Theorem3 { corrected_ball, stated_rate, .. } => {
                let ball = if corrected_ball { bounds::t3_ball_corrected(o, x.sigma2, x.batch) } else { bounds::t3_ball(o, x.sigma2, x.batch) };
                bounds::t3_rate(o, stated_rate).powf(t - 1.0) * x.v1 + ball
            }
            Statement::Card(f) => f.0.bound(x),
        }
    }
}
