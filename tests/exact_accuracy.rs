//! Accuracy of the exact engine near the optimum, against closed forms computed in exact
//! rational arithmetic from the very `f64` constants the rounds use.
//!
//! (a) gradient descent on a diagonal quadratic (noiseless), (b) FedAvg with full participation,
//! two local steps and stochastic gradient noise on clients with commuting (diagonal) Hessians
//! and a shared optimum, (c) FedPLT with static masks, psi compensation, client weights, two local
//! steps and noise, through the family's own `exact_run`. The rounds are written as `H (x - x*)`, so the optimum is a fixed point
//! of their own arithmetic and the engine, measuring the state from it
//! ([`RoundMaps::probe_at`], [`Observable::probe_at`]), keeps every value `E||x_t - x*||^2` from 1
//! down to below 1e-30 within 1e-12 of its own size. Negative control: the raw-moment form
//! `tr(P) - 2 x*^T mu + ||x*||^2` of the same moments fails the same test. (d) CCYW's constant
//! `F_0` and (e) DFedPGP's suboptimality `E F - F*` from starts near the optimum, against their
//! values in exact rationals.

use nalgebra::{DMatrix, DVector};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use fedbounds::engine::{Design, Moments, Observable, RandomAffineRound, RoundMaps};
use fedbounds::families::fedplt::algorithm::{FedPltRound, LocalGradient};
use fedbounds::families::fedplt::problem::Instance;
use fedbounds::families::fedplt::runs::{exact_run, RunSetup, Schedule};

/// The exact rational value of an `f64`.
fn exact(x: f64) -> BigRational {
    BigRational::from_float(x).expect("finite")
}

/// A rational as the nearest `f64` (within a few ulps), whatever the size of its numerator and
/// denominator.
fn approx(x: &BigRational) -> f64 {
    let v = ratio(&x.numer().abs(), &x.denom().abs());
    if x.is_negative() {
        -v
    } else {
        v
    }
}

/// `n / d` for `n, d >= 0` as an `f64`: both are shifted to at most 1000 bits first.
fn ratio(n: &BigInt, d: &BigInt) -> f64 {
    let shift = n.bits().max(d.bits()).saturating_sub(1000);
    let (n, d) = (n >> shift, d >> shift);
    n.to_f64().unwrap_or(f64::INFINITY) / d.to_f64().unwrap_or(f64::INFINITY)
}

/// `|computed - truth| / truth`, as an `f64` (truth > 0). With `computed = p/q` and
/// `truth = n/d`, it is `|p d - n q| / (q n)`: formed without reducing the fraction (a gcd of
/// numbers of thousands of bits per call).
fn relative_error(computed: f64, truth: &BigRational) -> f64 {
    if !computed.is_finite() {
        return f64::INFINITY;
    }
    let c = exact(computed);
    let (p, q, n, d) = (c.numer(), c.denom(), truth.numer(), truth.denom());
    ratio(&(p * d - n * q).abs(), &(q * n).abs())
}

/// Gradient descent `x' = x - eta lambda .* (x - x*)` on `f = sum_j lambda_j (x_j - x*_j)^2 / 2`.
struct Gd {
    eta: f64,
    lambda: Vec<f64>,
    x_star: DVector<f64>,
}

impl RandomAffineRound for Gd {
    fn state_dim(&self) -> usize {
        self.lambda.len()
    }
    /// One component that adds nothing: the step is the base map.
    fn components(&self) -> usize {
        1
    }
    fn noise_per_component(&self) -> usize {
        0
    }
    fn apply(&self, x: &DVector<f64>, _: &[usize], _: &[f64]) -> DVector<f64> {
        DVector::from_fn(x.len(), |j, _| x[j] - self.eta * (self.lambda[j] * (x[j] - self.x_star[j])))
    }
}

/// FedAvg, full participation: `x' = x + (1/n) sum_i (y_i^K - x)`, each client running `K` steps
/// `y <- y - eta (lambda_i .* (y - x*) + sigma xi)` from `x`.
struct FedAvg {
    eta: f64,
    sigma: f64,
    steps: usize,
    lambda: Vec<Vec<f64>>,
    x_star: DVector<f64>,
}

impl RandomAffineRound for FedAvg {
    fn state_dim(&self) -> usize {
        self.x_star.len()
    }
    fn components(&self) -> usize {
        self.lambda.len()
    }
    fn noise_per_component(&self) -> usize {
        self.steps * self.state_dim()
    }
    fn apply(&self, x: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64> {
        let (d, n) = (self.state_dim(), self.components() as f64);
        let mut next = x.clone();
        for (slot, &i) in active.iter().enumerate() {
            let xi = &noise[slot * self.noise_per_component()..(slot + 1) * self.noise_per_component()];
            let mut y = x.clone();
            for k in 0..self.steps {
                for j in 0..d {
                    y[j] -= self.eta * (self.lambda[i][j] * (y[j] - self.x_star[j]) + self.sigma * xi[k * d + j]);
                }
            }
            next += (y - x) / n;
        }
        next
    }
}

/// Per coordinate `j`: the mean error contracts by `abar_j` per round and the variance follows
/// `v' = abar_j^2 v + s_j`; returns `E||x_t - x*||^2 = sum_j m_tj^2 + v_tj`, `t = 0..rounds`.
///
/// Each coordinate is carried as integers, `abar = a/d`, `s = sn/sd`, `e0 = en/ed`:
/// `m_t = en a^t / (ed d^t)` and `v_t = V_t / (sd d^(2t))` with `V_0 = 0`,
/// `V_(t+1) = a^2 V_t + sn d^(2(t+1))`; a round's sum is one fraction reduced once (a rational's
/// own arithmetic reduces at every operation: seconds per case at these denominators).
fn closed_form(abar: &[BigRational], s: &[BigRational], e0: &[BigRational], rounds: usize) -> Vec<BigRational> {
    struct Coordinate {
        a: BigInt,
        d: BigInt,
        sn: BigInt,
        sd: BigInt,
        m_num: BigInt,
        m_den: BigInt,
        v_num: BigInt,
        d_pow_2t: BigInt,
    }
    let mut coords: Vec<Coordinate> = (0..e0.len())
        .map(|j| Coordinate {
            a: abar[j].numer().clone(),
            d: abar[j].denom().clone(),
            sn: s[j].numer().clone(),
            sd: s[j].denom().clone(),
            m_num: e0[j].numer().clone(),
            m_den: e0[j].denom().clone(),
            v_num: BigInt::zero(),
            d_pow_2t: BigInt::one(),
        })
        .collect();
    let add = |(n, d): (BigInt, BigInt), (p, q): (BigInt, BigInt)| (n * &q + p * &d, d * q);
    let mut out = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (num, den) = coords.iter().fold((BigInt::zero(), BigInt::one()), |acc, c| {
            let acc = add(acc, (&c.m_num * &c.m_num, &c.m_den * &c.m_den));
            add(acc, (c.v_num.clone(), &c.sd * &c.d_pow_2t))
        });
        out.push(BigRational::new(num, den));
        for c in &mut coords {
            let d2 = &c.d * &c.d;
            c.m_num *= &c.a;
            c.m_den *= &c.d;
            c.d_pow_2t *= &d2;
            c.v_num = &c.a * &c.a * &c.v_num + &c.sn * &c.d_pow_2t;
        }
    }
    out
}

/// The engine's values three ways: measured from `x*` (the error), from the origin (the centred
/// form), and the raw-moment form of the same moments from the origin.
fn engine_values(round: &dyn RandomAffineRound, x0: &DVector<f64>, x_star: &DVector<f64>, rounds: usize) -> [Vec<f64>; 3] {
    let d = x0.len();
    let inc = Design::Full { n: round.components() }.inclusion_moments().expect("full");
    let from_star = RoundMaps::probe_at(round, x_star);
    let from_zero = RoundMaps::probe(round);
    let error = Observable::probe_at(d, d, x_star, &|x| x - x_star);
    let distance = Observable::new(DMatrix::identity(d, d), -x_star);
    let (mut e, mut z) = (Moments::point(x0 - x_star), Moments::point(x0.clone()));
    let mut out = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        out[0].push(error.expected_square(&e));
        out[1].push(distance.expected_square(&z));
        out[2].push(raw_moment_form(&z, x_star));
        e = from_star.propagate(&e, &inc);
        z = from_zero.propagate(&z, &inc);
    }
    out
}

/// The raw-moment evaluation the engine no longer uses: `tr(P) - 2 x*^T mu + ||x*||^2` with
/// `P = C + mu mu^T` (the negative control).
fn raw_moment_form(m: &Moments, x_star: &DVector<f64>) -> f64 {
    (m.second_moment().trace() - 2.0 * x_star.dot(&m.mean) + x_star.norm_squared()).max(0.0)
}

/// The worst relative error over the rounds whose true value lies in `[1e-40, 1]`, and the
/// smallest true value checked.
fn worst(values: &[f64], truth: &[BigRational]) -> (f64, f64) {
    let (lo, hi) = (exact(1e-40), BigRational::one());
    let mut out = (0.0f64, f64::INFINITY);
    for (v, t) in values.iter().zip(truth) {
        if *t >= lo && *t <= hi {
            out.0 = out.0.max(relative_error(*v, t));
            out.1 = out.1.min(approx(t));
        }
    }
    out
}

fn gd_case() -> (Gd, DVector<f64>, Vec<BigRational>) {
    let gd = Gd { eta: 0.9, lambda: vec![1.0, 0.3, 0.7], x_star: DVector::from_vec(vec![0.1, -0.7, 1.3]) };
    let x0 = DVector::from_vec(vec![0.6, -0.2, 0.9]);
    let rounds = 140;
    let abar: Vec<BigRational> = gd.lambda.iter().map(|l| BigRational::one() - exact(gd.eta) * exact(*l)).collect();
    let e0: Vec<BigRational> = (0..3).map(|j| exact(x0[j]) - exact(gd.x_star[j])).collect();
    let truth = closed_form(&abar, &vec![BigRational::zero(); 3], &e0, rounds);
    (gd, x0, truth)
}

fn fedavg_case() -> (FedAvg, DVector<f64>, Vec<BigRational>) {
    let lambda = vec![vec![1.0, 0.3, 0.7], vec![0.45, 1.1, 0.6], vec![0.8, 0.55, 1.3]];
    let fed = FedAvg { eta: 0.5, sigma: 1e-17, steps: 2, lambda, x_star: DVector::from_vec(vec![0.1, -0.7, 1.3]) };
    let x0 = DVector::from_vec(vec![0.6, -0.2, 0.9]);
    let rounds = 160;
    let n = BigRational::from_integer(BigInt::from(fed.lambda.len()));
    let (eta, sigma) = (exact(fed.eta), exact(fed.sigma));
    let mut abar = Vec::new();
    let mut s = Vec::new();
    for j in 0..3 {
        let a: Vec<BigRational> = fed.lambda.iter().map(|l| BigRational::one() - &eta * exact(l[j])).collect();
        abar.push(a.iter().fold(BigRational::zero(), |acc, ai| acc + ai * ai) / &n);
        // Each client's K = 2 steps add eta sigma (a xi_0 + xi_1) to its error; the average / n.
        let noise = a.iter().fold(BigRational::zero(), |acc, ai| acc + ai * ai + BigRational::one());
        s.push(&eta * &eta * &sigma * &sigma * noise / (&n * &n));
    }
    let e0: Vec<BigRational> = (0..3).map(|j| exact(x0[j]) - exact(fed.x_star[j])).collect();
    let truth = closed_form(&abar, &s, &e0, rounds);
    (fed, x0, truth)
}

/// FedPLT (001:L57, L88-96) on diagonal Hessians `H_k` with a shared optimum `a`, masks `m_k`,
/// weights `c_k`, compensation `psi`, `tau = 2` noisy local steps. Per coordinate `j`, with
/// `a_kj = 1 - eta m_kj h_kj`, the error contracts in mean by
/// `abar_j = 1 + psi_j sum_k c_k m_kj (a_kj^tau - 1)` and gains variance
/// `s_j = psi_j^2 sum_k c_k^2 m_kj eta^2 (sigma / sqrt(d))^2 sum_{s < tau} a_kj^(2 s)`.
struct FedPltCase {
    instance: Instance,
    psi: Vec<f64>,
    eta: f64,
    tau: usize,
}

fn fedplt_case() -> (FedPltCase, Vec<BigRational>) {
    let diag = |v: [f64; 3]| DMatrix::from_diagonal(&DVector::from_row_slice(&v));
    let a = DVector::from_vec(vec![0.1, -0.7, 1.3]);
    let instance = Instance {
        hessians: vec![diag([1.0, 0.3, 0.7]), diag([0.45, 1.1, 0.6]), diag([0.8, 0.55, 1.3])],
        optima: vec![a.clone(), a.clone(), a.clone()],
        weights: vec![0.5, 0.3, 0.2],
        masks: [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]].iter().map(|m| DVector::from_row_slice(m)).collect(),
        sigma: 1e-17,
        initial: DVector::from_vec(vec![0.6, -0.2, 0.9]),
        noise: None,
        step_scales: None,
    };
    let case = FedPltCase { instance, psi: vec![1.0 / 0.7, 1.0 / 0.8, 1.0 / 0.5], eta: 0.5, tau: 2 };
    let inst = &case.instance;
    let rounds = 140;
    let eta = exact(case.eta);
    let scale = exact(inst.sigma / 3f64.sqrt());
    let (mut abar, mut s) = (Vec::new(), Vec::new());
    for j in 0..3 {
        let psi = exact(case.psi[j]);
        let (mut shrink, mut var) = (BigRational::zero(), BigRational::zero());
        for k in 0..3 {
            if inst.masks[k][j] == 0.0 {
                continue;
            }
            let c = exact(inst.weights[k]);
            let ak = BigRational::one() - &eta * exact(inst.hessians[k][(j, j)]);
            shrink += &c * (&ak * &ak - BigRational::one());
            var += &c * &c * (BigRational::one() + &ak * &ak);
        }
        abar.push(BigRational::one() + &psi * shrink);
        s.push(&psi * &psi * var * &eta * &eta * &scale * &scale);
    }
    let e0: Vec<BigRational> = (0..3).map(|j| exact(inst.initial[j]) - exact(a[j])).collect();
    (case, closed_form(&abar, &s, &e0, rounds))
}

#[test]
fn gradient_descent_values_are_exact_to_1e_12_relative_down_to_1e_30() {
    let (gd, x0, truth) = gd_case();
    let [error, centred, raw] = engine_values(&gd, &x0, &gd.x_star, truth.len());
    let (err, smallest) = worst(&error, &truth);
    assert!(smallest < 1e-30, "the run reaches {smallest:e} only");
    assert!(err <= 1e-12, "error coordinates: worst relative error {err:e}");
    // The centred form from the origin is exact while the value is far above (eps ||x*||)^2.
    let mid: Vec<usize> = (0..truth.len()).filter(|t| truth[*t] >= exact(1e-8)).collect();
    let centred_mid = mid.iter().map(|&t| relative_error(centred[t], &truth[t])).fold(0.0, f64::max);
    assert!(centred_mid <= 1e-7, "centred form at values >= 1e-8: {centred_mid:e}");
    // Negative control: the raw-moment form fails the same test.
    let (raw_err, _) = worst(&raw, &truth);
    assert!(raw_err > 1e-6, "the raw-moment form should fail near the optimum, worst {raw_err:e}");
}

#[test]
fn fedavg_values_with_noise_are_exact_to_1e_12_relative_down_to_1e_30() {
    let (fed, x0, truth) = fedavg_case();
    let [error, _, raw] = engine_values(&fed, &x0, &fed.x_star, truth.len());
    let (err, smallest) = worst(&error, &truth);
    assert!(smallest < 1e-30, "the run reaches {smallest:e} only");
    assert!(err <= 1e-12, "error coordinates: worst relative error {err:e}");
    let (raw_err, _) = worst(&raw, &truth);
    assert!(raw_err > 1e-6, "the raw-moment form should fail near the optimum, worst {raw_err:e}");
}

#[test]
fn fedplt_with_masks_values_are_exact_to_1e_12_relative_down_to_1e_30() {
    let (case, truth) = fedplt_case();
    let inst = &case.instance;
    let w_star = inst.optima[0].clone();
    let run = exact_run(
        &RunSetup { inst, psi: &case.psi, tau: case.tau, gradient: LocalGradient::Sgd, w_star: &w_star },
        Schedule::Constant(case.eta),
        truth.len() - 1,
    )
    .expect("runs");
    let (err, smallest) = worst(&run.distance, &truth);
    assert!(smallest < 1e-30, "the run reaches {smallest:e} only");
    assert!(err <= 1e-12, "FedPLT's exact run: worst relative error {err:e}");
    // Negative control: the raw-moment form of the same round fails the same test.
    let round = FedPltRound { instance: inst, psi: &case.psi, eta: case.eta, tau: case.tau, gradient: LocalGradient::Sgd };
    let [_, _, raw] = engine_values(&round, &inst.initial, &w_star, truth.len());
    let (raw_err, _) = worst(&raw, &truth);
    assert!(raw_err > 1e-6, "the raw-moment form should fail near the optimum, worst {raw_err:e}");
}

/// The worst relative error of each form per decade of the true value (printed with
/// `--nocapture`; the numbers quoted for the engine's accuracy).
#[test]
fn accuracy_by_decade() {
    let (gd, x0, truth) = gd_case();
    let gd_values = engine_values(&gd, &x0, &gd.x_star, truth.len());
    let (fed, f0, ftruth) = fedavg_case();
    let fed_values = engine_values(&fed, &f0, &fed.x_star, ftruth.len());
    let (plt, ptruth) = fedplt_case();
    let round = FedPltRound { instance: &plt.instance, psi: &plt.psi, eta: plt.eta, tau: plt.tau, gradient: LocalGradient::Sgd };
    let plt_values = engine_values(&round, &plt.instance.initial, &plt.instance.optima[0], ptruth.len());
    for (name, values, truth) in [("gd", gd_values, truth), ("fedavg", fed_values, ftruth), ("fedplt", plt_values, ptruth)] {
        for decade in [0, -4, -8, -12, -16, -20, -24, -28, -30] {
            let (lo, hi) = (exact(10f64.powi(decade - 4)), exact(10f64.powi(decade)));
            let at: Vec<usize> = (0..truth.len()).filter(|t| truth[*t] > lo && truth[*t] <= hi).collect();
            let col = |v: &[f64]| at.iter().map(|&t| relative_error(v[t], &truth[t])).fold(0.0, f64::max);
            println!(
                "{name} values in (1e{}, 1e{decade}]: error {:.1e}  centred {:.1e}  raw {:.1e}",
                decade - 4,
                col(&values[0]),
                col(&values[1]),
                col(&values[2])
            );
        }
    }
}

/// The solution of `H x = g` in exact rationals (Gaussian elimination on the rows `[H g]`).
fn rational_solve(mut a: Vec<Vec<BigRational>>) -> Vec<BigRational> {
    let dim = a.len();
    for col in 0..dim {
        let pivot = (col..dim).find(|&r| !a[r][col].is_zero()).expect("the system is invertible");
        a.swap(col, pivot);
        let head = a[col].clone();
        for row in a.iter_mut().skip(col + 1) {
            if !row[col].is_zero() {
                let factor = &row[col] / &head[col];
                for (x, h) in row.iter_mut().zip(&head).skip(col) {
                    *x -= &factor * h;
                }
            }
        }
    }
    let mut x = vec![BigRational::zero(); dim];
    for row in (0..dim).rev() {
        let rest = (row + 1..dim).fold(a[row][dim].clone(), |acc, k| acc - &a[row][k] * &x[k]);
        x[row] = rest / &a[row][row];
    }
    x
}

/// `z*` of a CCYW instance in exact rationals: the joint system `H z = g` of `n f` assembled in
/// rationals from the clients' `f64` Hessians and linear terms.
fn ccyw_minimizer(inst: &fedbounds::families::ccyw::problem::QuadraticInstance) -> Vec<BigRational> {
    let layout = inst.layout();
    let dim = layout.state_dim();
    let mut a: Vec<Vec<BigRational>> = vec![vec![BigRational::zero(); dim + 1]; dim];
    for (i, c) in inst.clients().iter().enumerate() {
        let idx: Vec<usize> = layout.local_coordinates(i).collect();
        for (r, &pr) in idx.iter().enumerate() {
            for (k, &pk) in idx.iter().enumerate() {
                a[pr][pk] += exact(c.hessian[(r, k)]);
            }
            a[pr][dim] += exact(c.linear[r]);
        }
    }
    rational_solve(a)
}

/// CCYW's `F_0 = f(z^0) - inf f` from a start `1e-5` from the optimum (the card's
/// `coupled-full-b0-literal-noiseless` instance, `F_0 ~ 7.6e-12`), against `F_0` in exact
/// rationals: within 1e-8 of its own size (the rounding of `z*` against `||z^0 - z*||`).
/// Negative control: the difference of the two objective values, `f(z^0) - f(z*)` in double
/// precision, is off by more than 1e-5.
#[test]
fn ccyw_f0_near_the_optimum_is_exact_to_1e_8_relative() {
    use fedbounds::families::ccyw::problem::{Coupling, InstanceSpec, ProblemConstants};
    let spec =
        InstanceSpec { n: 10, du: 4, dv: 2, l: 1.0, mu: 0.1, sigma_u: 0.0, sigma_v: 0.0, b: 5.0, coupling: Coupling::Coupled, init_distance: 1e-5, seed: 16 };
    let inst = spec.build().expect("builds");
    let z_star = ccyw_minimizer(&inst);
    let layout = inst.layout();
    let z0: Vec<BigRational> = inst.initial_state().iter().map(|&x| exact(x)).collect();
    let half = BigRational::new(BigInt::one(), BigInt::from(2));
    let mut truth = BigRational::zero();
    for (i, c) in inst.clients().iter().enumerate() {
        let d: Vec<BigRational> = layout.local_coordinates(i).map(|k| &z0[k] - &z_star[k]).collect();
        for (r, dr) in d.iter().enumerate() {
            for (k, dk) in d.iter().enumerate() {
                truth += &half * exact(c.hessian[(r, k)]) * dr * dk;
            }
        }
    }
    truth /= BigRational::from_integer(BigInt::from(layout.n));
    let constants = ProblemConstants::compute(&inst).expect("positive definite");
    let err = relative_error(constants.f0, &truth);
    assert!(approx(&truth) < 1e-11, "the start is near the optimum: F0 = {:e}", approx(&truth));
    assert!(err <= 1e-8, "F0 = {:e} against {:e}: relative error {err:e}", constants.f0, approx(&truth));
    let difference = inst.objective(inst.initial_state()) - constants.f_star;
    let control = relative_error(difference, &truth);
    assert!(control > 1e-5, "the control: f(z0) - f(z*) in double precision is off by {control:e} only");
}

/// DFedPGP's `E F(ubar^t, V^t) - F*` from a start `1e-7` from the minimizer (every node's `u_i^0`
/// moved off `u*` along the first coordinate), against exact rationals from the very `f64` joint
/// system: within 1e-8 of its own size. Negative control: `F(ubar^0, V^0)` minus `F*`, both in
/// double precision, is off by more than 1e-4.
#[test]
fn dpgp_suboptimality_near_the_optimum_is_exact_to_1e_8_relative() {
    use fedbounds::families::dpgp::card::parse_scenario;
    use fedbounds::families::dpgp::round::{exact_trajectory, NoiseDraws, Params};
    use fedbounds::families::dpgp::topology::{GraphSequence, Topology};
    let text = "name = \"t\"\ntopology = { kind = \"ring\" }\nm = 5\ndu = 2\ndv = 1\nmu_u = 0.5\nmu_v = 0.5\nheterogeneity = 1.0\ncoupling = 0.4\nsigma_u = 0.0\nsigma_v = 0.0\nc_u = 0.5\nc_v = 0.5\nrounds = 3\nsweep = [1, 2, 3]\nseed = 5\ngraph_seed = 9\n";
    let mut inst = parse_scenario(text, "test").unwrap().build_instance("scenario").unwrap();
    // The joint system the objective is formed from, its f64 entries taken as exact.
    let (h, g) = inst.joint();
    let x_star = rational_solve((0..g.len()).map(|r| (0..g.len()).map(|c| exact(h[(r, c)])).chain([exact(g[r])]).collect()).collect());
    let (du, dv, m) = (inst.du, inst.dv, inst.u0.len());
    let approx_star: Vec<f64> = x_star.iter().map(approx).collect();
    for i in 0..m {
        inst.u0[i] = DVector::from_fn(du, |r, _| approx_star[r] + if r == 0 { 1e-7 } else { 0.0 });
        inst.v0[i] = DVector::from_fn(dv, |r, _| approx_star[du + i * dv + r]);
    }
    // x^0 = [ubar^0; v^0] in rationals, ubar^0 = (1/m) sum_i u_i^0.
    let m_r = BigRational::from_integer(BigInt::from(m));
    let x0: Vec<BigRational> = (0..du)
        .map(|r| inst.u0.iter().fold(BigRational::zero(), |acc, u| acc + exact(u[r])) / &m_r)
        .chain((0..m).flat_map(|i| (0..dv).map(move |r| (i, r))).map(|(i, r)| exact(inst.v0[i][r])))
        .collect();
    let d: Vec<BigRational> = x0.iter().zip(&x_star).map(|(a, b)| a - b).collect();
    let half = BigRational::new(BigInt::one(), BigInt::from(2));
    let mut truth = BigRational::zero();
    for (r, dr) in d.iter().enumerate() {
        for (c, dc) in d.iter().enumerate() {
            truth += &half * exact(h[(r, c)]) * dr * dc;
        }
    }
    let params = Params { eta_u: 0.1, eta_v: 0.1, k_u: 2, k_v: 2, noise_draws: NoiseDraws::PerStep };
    let seq = GraphSequence::new(&Topology::Ring, m, 3, 0);
    let tr = exact_trajectory(&inst, &params, &seq, 3).expect("exact moments");
    let err = relative_error(tr.suboptimality[0], &truth);
    assert!(approx(&truth) < 1e-13, "the start is near the minimizer: {:e}", approx(&truth));
    assert!(err <= 1e-8, "E F - F* = {:e} against {:e}: relative error {err:e}", tr.suboptimality[0], approx(&truth));
    let f_star = inst.constants().expect("strongly convex").f_star;
    let ubar0 = inst.u0.iter().fold(DVector::zeros(du), |acc, u| acc + u) / m as f64;
    let control = relative_error(inst.objective(&ubar0, &inst.v0) - f_star, &truth);
    assert!(control > 1e-4, "the control: E F - F* in double precision is off by {control:e} only");
}
