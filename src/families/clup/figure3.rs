//! The paper's Figure 3 statement on quadratics (003:L276, L284): "for a given target total
//! error, an optimal lambda exists that has the minimum communication rounds" among LocalTrain,
//! GlobalTrain and FedCLUP at varying lambda, and "no fixed personalization degree consistently
//! outperforms others across all error levels".
//!
//! The methods, each an exact affine round of the state `(w^(g), w^(1), ..., w^(m))`:
//! - FedCLUP at each lambda of the scenario's sweep: Algorithm 1 at Corollary 2's parameters
//!   (`eta = 1/(lambda + L)`, `gamma = 1/(2 L_g)`, `K` of (134); 003:L185, L1164);
//! - LocalTrain (3): "implemented using a local (S)GD" (003:L1347), each client alone: Algorithm 1
//!   at `lambda = 0` (its server step vanishes), i.e. local gradient descent with Corollary 2's
//!   `eta = 1/L` and `K` of (134) at `lambda = 0`;
//! - GlobalTrain (4): Problem (2)'s `lambda -> inf` limit (003:L232), one model shared by every
//!   client: Algorithm 1 at Corollary 2's parameters at `lambda = 1e6 L` ([`GLOBAL_LAMBDA`]),
//!   whose solution is GlobalTrain's up to `O(mu/lambda)` and whose rate tends to `1 - 1/(4
//!   kappa)`. The paper implements it as FedAvg (L1347), whose step sizes it tunes by grid search;
//!   at Corollary 2's `eta = 1/L` with (134)'s `K`, FedAvg reaches the lowest target in one round on
//!   the card's `low-r`, so no target separates it from LocalTrain there.
//!
//! The total error of a round is Figure 1's `||w_{t,K}^(i) - w*^(i)||^2` (003:L270), worst
//! client, expected over the label noise given draw 0's design (exact: every iterate is affine
//! in the clients' linear terms `b_i`, whose covariance is `s^2 A_i/n`), from the scenario's
//! start (GlobalTrain's local models equal its global one up to `O(1/lambda)`). The rounds to a target `eps` are the first `t`
//! with total error `<= eps` (`inf` past [`HORIZON`]). The statement is about every target
//! ("for a given target total error"), and it is checked at every one between the best error any
//! method reaches at the horizon and the initial error: a method's rounds to `eps` change only
//! where `eps` crosses a value of its running minimum, so those values ([`targets`]) decide
//! every `eps` of the range, not a grid of samples of it (none, and no verdict, where no method
//! ends below the initial error).
//!
//! Verdicts ([`crate::kinds::ordering`], every pair a ratio at most 1; rounds are integers, so
//! `a < b` is read `(a + 1)/b <= 1`):
//! - primary: (i) at some target a FedCLUP lambda needs strictly fewer rounds than LocalTrain and
//!   GlobalTrain, and (ii) for every method (LocalTrain, each lambda, GlobalTrain) some target
//!   where another needs strictly fewer rounds;
//! - `~every-eps`: at every target the fastest FedCLUP lambda needs at most the rounds of the
//!   faster of LocalTrain and GlobalTrain (L276's "for any given total error").

use nalgebra::{DMatrix, DVector};

use crate::claim::ConditionCheck;
use crate::engine::{Observable, RandomAffineRound};
use crate::kinds::ordering::{evaluate_ordering, pair_ratio};
use crate::verdict::Evaluation;

use super::algorithm::{Alg1Round, Params};
use super::bounds;
use super::model::Instance;

/// GlobalTrain's `lambda` in units of `L`: FedCLUP's `lambda -> inf` limit (L232: Problem (2)
/// reduces to GlobalTrain), far enough that `L_w = lambda/(lambda + mu)` is 1 to six digits.
pub const GLOBAL_LAMBDA: f64 = 1e6;
/// Rounds each method runs.
pub const HORIZON: usize = 1000;

/// The claims' metric.
pub const METRIC: &str = "rounds to total error max_i E||w_{t,K}^(i) - w*^(i)||^2 <= eps (exact over the label noise, draw 0's design) of LocalTrain (local GD, lambda = 0), FedCLUP at each lambda of the sweep (Corollary 2's steps) and GlobalTrain (lambda = 1e6 L), at every target eps from the best error at round 1000 up to the initial error (each method's rounds change only at the values of its running minimum: those values are the targets)";
/// Why the primary reading.
pub const PRIMARY: &str = "Figure 3's caption and L276: (i) some target at which a FedCLUP lambda needs strictly fewer rounds than both LocalTrain and GlobalTrain, (ii) every method (LocalTrain, each lambda, GlobalTrain) beaten strictly at some target; LocalTrain as local GD (L1347) at Corollary 2's steps at lambda = 0, GlobalTrain as Problem (2)'s lambda -> inf limit (L232) at lambda = 1e6 L";
/// Why the `~every-eps` reading.
pub const EVERY_EPS: &str = "L276's 'for any given total error, there exists a specific degree of personalization in FedCLUP that incurs the least communication cost among all considered methods': at every target eps from the best error at round 1000 up to the initial error the fastest lambda is at least as fast as LocalTrain and GlobalTrain (ties allowed)";

/// A method of the figure.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Method {
    /// Local gradient descent, no communication (Algorithm 1 at `lambda = 0`).
    LocalTrain,
    /// Algorithm 1 at `lambda`.
    FedClup(f64),
    /// FedCLUP's `lambda -> inf` limit ([`GLOBAL_LAMBDA`]).
    GlobalTrain,
}

impl Method {
    /// Its name in the points.
    pub fn name(&self) -> String {
        match self {
            Self::LocalTrain => "LocalTrain".into(),
            Self::FedClup(l) => format!("FedCLUP lambda {l:.4e}"),
            Self::GlobalTrain => "GlobalTrain".into(),
        }
    }
}

/// The steps of `method` on a draw with per-sample `L` and `mu`.
pub fn params(method: Method, mu: f64, l: f64) -> Params {
    match method {
        Method::LocalTrain => Params { lambda: 0.0, gamma: 0.0, eta: 1.0 / l, k: bounds::k_134(mu, l, 0.0) },
        Method::FedClup(lambda) => {
            let (eta, gamma) = bounds::corollary2_steps(l, lambda);
            Params { lambda, gamma, eta, k: bounds::k_134(mu, l, lambda) }
        }
        Method::GlobalTrain => params(Method::FedClup(GLOBAL_LAMBDA * l), mu, l),
    }
}

/// One round of Algorithm 1 at `p` on `inst`, every client active.
fn round(inst: &Instance, p: &Params, z: &DVector<f64>) -> DVector<f64> {
    let all: Vec<usize> = (0..inst.m()).collect();
    Alg1Round { inst, params: *p }.apply(z, &all, &[])
}

/// `inst` with the clients' linear terms replaced by the stacked `b` (`m d` numbers).
fn with_b(inst: &Instance, b: &DVector<f64>) -> Instance {
    let mut h = inst.clone();
    for (i, c) in h.clients.iter_mut().enumerate() {
        c.b.copy_from(&b.rows(i * inst.d, inst.d));
    }
    h
}

/// The total error of Algorithm 1 at `p` at rounds `0..=HORIZON` from `z0`: `max_i E||w_{t,K}^(i) -
/// w*^(i)||^2`, as bias plus the label
/// noise's part. With the round `z' = M z + C b + c` (probed), the mean iterate follows `E b` and
/// the sensitivity `S_t = dz_t/db` follows `S_{t+1} = M S_t + C`, so the noise part of client
/// `i` is `sum_k tr(S_t[i, k] (s^2 A_k/n) S_t[i, k]^T)`.
pub fn total_error(inst: &Instance, p: &Params, z0: &DVector<f64>) -> Vec<f64> {
    let (d, m) = (inst.d, inst.m());
    let dim = (m + 1) * d;
    let b_mean = DVector::from_iterator(m * d, inst.clients.iter().flat_map(|c| c.b_mean.iter().copied()));
    let zero_b = with_b(inst, &DVector::zeros(m * d));
    let step = Observable::probe(dim, dim, &|z| round(&zero_b, p, z));
    let response = Observable::probe(m * d, dim, &|b| round(&with_b(inst, b), p, &DVector::zeros(dim)));
    let (a, c_b) = (step.map(), response.map());
    let c_mean = c_b * &b_mean + response.offset();
    let covs: Vec<DMatrix<f64>> = inst.clients.iter().map(|c| &c.a * (inst.noise2 / inst.n as f64)).collect();
    let row = |i: usize| (i + 1) * d;
    let error = |z: &DVector<f64>, s: &DMatrix<f64>| {
        (0..m)
            .map(|i| {
                let bias = (z.rows(row(i), d) - &inst.clients[i].w_star).norm_squared();
                let noise: f64 = (0..m).map(|k| (s.view((row(i), k * d), (d, d)) * &covs[k]).component_mul(&s.view((row(i), k * d), (d, d))).sum()).sum();
                bias + noise
            })
            .fold(0.0, crate::engine::nan_max)
    };
    let (mut z, mut s) = (z0.clone(), DMatrix::zeros(dim, m * d));
    let mut out = Vec::with_capacity(HORIZON + 1);
    out.push(error(&z, &s));
    for _ in 0..HORIZON {
        z = a * &z + &c_mean;
        s = a * &s + c_b;
        out.push(error(&z, &s));
    }
    out
}

/// Every method's curve and its rounds at every target.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Study {
    /// The methods: LocalTrain, FedCLUP at each lambda, GlobalTrain.
    pub methods: Vec<Method>,
    /// Each method's total error at rounds `0..=HORIZON`.
    pub curves: Vec<Vec<f64>>,
    /// The targets ([`targets`]), decreasing; not written out (they follow from the curves).
    #[serde(skip)]
    pub targets: Vec<f64>,
    /// `rounds[j][e]`: rounds of method `j` to target `e`; not written out.
    #[serde(skip)]
    pub rounds: Vec<Vec<f64>>,
}

/// `min(c_0, ..., c_t)` for every `t`: non-increasing.
pub(super) fn running_minimum(curve: &[f64]) -> Vec<f64> {
    curve
        .iter()
        .scan(f64::INFINITY, |least, &e| {
            *least = least.min(e);
            Some(*least)
        })
        .collect()
}

/// The first round with total error `<= eps` (`inf` past the horizon), from the curve's
/// [`running_minimum`].
pub(super) fn rounds_to(least: &[f64], eps: f64) -> f64 {
    let t = least.partition_point(|e| *e > eps);
    if t < least.len() {
        t as f64
    } else {
        f64::INFINITY
    }
}

/// Every target that decides the statement, decreasing: the floor `f` (the best error any method
/// reaches at the horizon) and each value of a method's running minimum strictly between `f` and
/// the initial error. Every method's rounds to `eps` are constant while `eps` stays between two
/// consecutive values of the running minima (`t` is the first round with `min(c_0..c_t) <= eps`),
/// so the rounds at these targets are the rounds at every `eps` in `[f, initial)`.
pub fn targets(least: &[Vec<f64>], floor: f64, initial: f64) -> Vec<f64> {
    let mut out: Vec<f64> = least.iter().flatten().copied().filter(|e| *e > floor && *e < initial).collect();
    out.push(floor);
    out.sort_by(|a, b| b.total_cmp(a));
    out.dedup();
    out
}

/// The study on `inst` over `lambdas`, each method from `start(lambda)` (0 for LocalTrain and
/// GlobalTrain).
pub fn study(inst: &Instance, lambdas: &[f64], start: &dyn Fn(f64) -> DVector<f64>) -> Study {
    let (mu, l) = (inst.constants.mu, inst.constants.l_sample);
    let methods: Vec<Method> = std::iter::once(Method::LocalTrain).chain(lambdas.iter().map(|&x| Method::FedClup(x))).chain([Method::GlobalTrain]).collect();
    let curves: Vec<Vec<f64>> = methods
        .iter()
        .map(|&method| {
            let lambda = if let Method::FedClup(x) = method { x } else { 0.0 };
            total_error(inst, &params(method, mu, l), &start(lambda))
        })
        .collect();
    let (floor, initial) = floor_and_initial(&curves);
    let least: Vec<Vec<f64>> = curves.iter().map(|c| running_minimum(c)).collect();
    let targets = targets(&least, floor, initial);
    let rounds = least.iter().map(|c| targets.iter().map(|&eps| rounds_to(c, eps)).collect()).collect();
    Study { methods, curves, targets, rounds }
}

/// The best error any curve reaches at the horizon and the largest initial error; both NaN when a
/// curve has a NaN anywhere (its rounds to a target would be read past a value that means
/// nothing): undecided.
fn floor_and_initial(curves: &[Vec<f64>]) -> (f64, f64) {
    if curves.iter().flatten().any(|e| e.is_nan()) {
        return (f64::NAN, f64::NAN);
    }
    let floor = curves.iter().map(|c| c.last().copied().unwrap_or(f64::NAN)).fold(f64::INFINITY, crate::engine::nan_min);
    let initial = curves.iter().map(|c| c[0]).fold(0.0, crate::engine::nan_max);
    (floor, initial)
}

/// `a < b` for round counts as a ratio at most 1: `(a + 1)/b`; `inf` when `a` never reaches
/// (it beats nothing).
fn strictly_fewer(a: f64, b: f64) -> f64 {
    if a.is_infinite() {
        f64::INFINITY
    } else {
        pair_ratio(a + 1.0, b)
    }
}

/// `a <= b` as a ratio at most 1, a tie of two methods that never reach being 1.
fn at_most(a: f64, b: f64) -> f64 {
    if a == b {
        1.0
    } else {
        pair_ratio(a, b)
    }
}

impl Study {
    fn floor_and_initial(&self) -> (f64, f64) {
        floor_and_initial(&self.curves)
    }

    fn fedclup(&self) -> Vec<usize> {
        (0..self.methods.len()).filter(|&j| matches!(self.methods[j], Method::FedClup(_))).collect()
    }

    /// The fewest rounds to target `e` among the methods `js`.
    fn best(&self, js: &[usize], e: usize) -> f64 {
        js.iter().map(|&j| self.rounds[j][e]).fold(f64::INFINITY, f64::min)
    }

    /// The ratios of a reading with what each is: every ratio at most 1 when it holds.
    pub fn ratios(&self, every_eps: bool) -> Vec<(f64, String)> {
        // A floor of 0 (a curve reaching the optimum exactly) or NaN (a curve with a NaN) gives
        // no positive finite target to compare at. Such a study decides nothing.
        if let Some(eps) = self.targets.iter().find(|e| !(e.is_finite() && **e > 0.0)) {
            return vec![(f64::NAN, format!("a target between the floor and the initial error is {eps}, not a positive finite error: not decided"))];
        }
        // Where no method ends below the initial error (label noise makes every trained model
        // worse than the start), the targets lie above the start: every method meets each at
        // round 0, and ties would read as "no method is ever strictly faster". There is no target
        // between the floor and the initial error to compare at.
        let (floor, initial) = self.floor_and_initial();
        if floor.partial_cmp(&initial) != Some(std::cmp::Ordering::Less) {
            return vec![(
                f64::NAN,
                format!("no method ends below the initial error (best error at round {HORIZON} {floor:.4e} >= initial {initial:.4e}): no target lies between them, not decided"),
            )];
        }
        let (clup, n) = (self.fedclup(), self.methods.len());
        let ends = [0, n - 1];
        let per_target = |e: usize| at_most(self.best(&clup, e), self.best(&ends, e));
        if every_eps {
            // The verdict reads the worst ratio (a NaN first), so that target alone is reported.
            let worse = |(r, e): (f64, usize), (s, f): (f64, usize)| if r.is_nan() || (!s.is_nan() && r >= s) { (r, e) } else { (s, f) };
            let (r, e) = (0..self.targets.len()).map(|e| (per_target(e), e)).reduce(worse).expect("the floor is a target");
            return vec![(
                r,
                format!(
                    "eps {:.4e}, the worst of {} targets: fastest lambda {} rounds vs LocalTrain/GlobalTrain {}",
                    self.targets[e],
                    self.targets.len(),
                    self.best(&clup, e),
                    self.best(&ends, e)
                ),
            )];
        }
        let best_of = |ratios: Vec<f64>| ratios.into_iter().enumerate().fold((f64::INFINITY, 0), |b, (e, r)| if r < b.0 { (r, e) } else { b });
        let (r, e) = best_of((0..self.targets.len()).map(|e| strictly_fewer(self.best(&clup, e), self.best(&ends, e))).collect());
        let mut out = vec![(
            r,
            format!("(i) eps {:.4e}: fastest lambda {} rounds vs LocalTrain/GlobalTrain {}", self.targets[e], self.best(&clup, e), self.best(&ends, e)),
        )];
        for j in 0..n {
            let others: Vec<usize> = (0..n).filter(|&k| k != j).collect();
            let (r, e) = best_of((0..self.targets.len()).map(|e| strictly_fewer(self.best(&others, e), self.rounds[j][e])).collect());
            out.push((
                r,
                format!(
                    "(ii) {}: eps {:.4e}: {} rounds vs the fastest other {}",
                    self.methods[j].name(),
                    self.targets[e],
                    self.rounds[j][e],
                    self.best(&others, e)
                ),
            ));
        }
        out
    }

    /// The reading's verdict ([`evaluate_ordering`]) and what each ratio is.
    pub fn evaluate(&self, every_eps: bool, checks: Vec<ConditionCheck>, bound_scale: f64) -> (Evaluation, Vec<String>) {
        let ratios = self.ratios(every_eps);
        let values: Vec<f64> = ratios.iter().map(|r| r.0).collect();
        let evaluation = evaluate_ordering(&values, HORIZON, checks, bound_scale, "no lambda sweep: no FedCLUP curve to compare");
        (evaluation, ratios.into_iter().map(|(r, what)| format!("{what} (ratio {r:.4})")).collect())
    }
}
