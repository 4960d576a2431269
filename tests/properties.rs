//! Property-based tests of the exact constants (`problem`) against brute force, and of the
//! FedAvg-P bound functions (`claims::ccyw`) against the relations the paper states between them
//! (Chen, Cao, Yuan, Wen; 000:L296-492, CLAIMS.md section 1).
//!
//! Instances are drawn from `InstanceSpec { .. }.build()` with random sizes, seeds and both
//! couplings; random points come from a ChaCha stream seeded by proptest, so every failure
//! shrinks to a replayable input. Case counts are kept at 64 so the file runs in seconds.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use fedbounds::families::ccyw::claims::fedavg_p::{
    corollary_3_8_bound, corollary_3_8_gamma, theorem_3_11_bound, theorem_3_11_eta_u_min, theorem_3_11_rate_bound, theorem_3_11_rate_gamma, theorem_3_7_bound,
    CcywClaim,
};
use fedbounds::families::ccyw::claims::scaffold_p::{
    corollary_4_6_bound, corollary_4_6_gamma, participation_factor, rate_4_6_factor, rate_4_7_factor, theorem_4_5_bound, theorem_4_5_gamma_max, ScaffoldClaim,
};
use fedbounds::families::ccyw::claims::{BoundClaim, ClaimInputs};
use fedbounds::families::ccyw::problem::{BgdConstant, Coupling, ExplicitInstance, GradientSummary, InstanceSpec, ProblemConstants, QuadraticInstance};

/// 64 cases per property, unless `PROPTEST_CASES` asks for more (e.g. a soak run).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn rel_close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

fn normal_vec(rng: &mut ChaCha8Rng, len: usize, scale: f64) -> DVector<f64> {
    DVector::from_fn(len, |_, _| scale * rng.sample::<f64, _>(StandardNormal))
}

/// `(A_i, B_i, C_i)` of `H_i = [[A_i, B_i], [B_i^T, C_i]]`.
fn blocks(h: &DMatrix<f64>, du: usize, dv: usize) -> (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>) {
    (h.view((0, 0), (du, du)).into_owned(), h.view((0, du), (du, dv)).into_owned(), h.view((du, du), (dv, dv)).into_owned())
}

/// Largest singular value by nalgebra's SVD.
fn norm_svd(m: &DMatrix<f64>) -> f64 {
    if m.nrows() == 0 || m.ncols() == 0 {
        return 0.0;
    }
    m.clone().svd(false, false).singular_values.iter().fold(0.0, |a: f64, s| a.max(*s))
}

/// Largest singular value as `sqrt(lambda_max(M^T M))` by a symmetric eigendecomposition.
fn norm_eig(m: &DMatrix<f64>) -> f64 {
    if m.nrows() == 0 || m.ncols() == 0 {
        return 0.0;
    }
    let g = m.transpose() * m;
    SymmetricEigen::new(g).eigenvalues.iter().fold(0.0, |a: f64, l| a.max(*l)).max(0.0).sqrt()
}

/// Largest singular value by power iteration on `M^T M` (a Rayleigh quotient: never above it).
fn norm_power(m: &DMatrix<f64>, rng: &mut ChaCha8Rng) -> f64 {
    if m.nrows() == 0 || m.ncols() == 0 {
        return 0.0;
    }
    let g = m.transpose() * m;
    // Powers G^(2^j) by repeated squaring (normalized), so that even a nearly repeated top
    // singular value converges; then a few plain power steps and the Rayleigh quotient.
    let mut p = g.clone();
    for _ in 0..60 {
        let q = &p * &p;
        let nq = q.norm();
        if nq == 0.0 {
            return 0.0;
        }
        p = q / nq;
    }
    let mut x = &p * (normal_vec(rng, m.ncols(), 1.0) + DVector::from_element(m.ncols(), 0.1));
    for _ in 0..100 {
        let y = &g * &x;
        let ny = y.norm();
        if ny == 0.0 {
            return 0.0;
        }
        x = y / ny;
    }
    (&g * &x).dot(&x).max(0.0).sqrt()
}

/// Ratio `||f(x) - f(y)|| / ||x - y||` for one pair.
fn ratio(a: &DVector<f64>, b: &DVector<f64>, dx: &DVector<f64>) -> f64 {
    (a - b).norm() / dx.norm()
}

/// Random instance recipes: n in 1..6, du in 0..4, dv in 0..3 with du + dv >= 1, both couplings,
/// b = 0 when n < 2 or du = 0. `mu < 0.95 L`, so a coupled spectrum is never a multiple of I.
fn spec_strategy() -> impl Strategy<Value = InstanceSpec> {
    (
        1usize..6,
        (0usize..4, 0usize..3).prop_filter("du + dv >= 1", |(du, dv)| du + dv >= 1),
        any::<bool>(),
        -1.0f64..1.0,
        0.05f64..0.95,
        (0.0f64..3.0, 0.0f64..3.0, 0.0f64..3.0),
        0.0f64..5.0,
        any::<u64>(),
    )
        .prop_map(|(n, (du, dv), coupled, log_l, mu_frac, (sigma_u, sigma_v, b), init_distance, seed)| {
            let l = 10f64.powf(log_l);
            InstanceSpec {
                n,
                du,
                dv,
                l,
                mu: mu_frac * l,
                sigma_u,
                sigma_v,
                b: if n < 2 || du == 0 { 0.0 } else { b },
                coupling: if coupled { Coupling::Coupled } else { Coupling::Decoupled },
                init_distance,
                seed,
            }
        })
}

fn build(spec: &InstanceSpec) -> (QuadraticInstance, ProblemConstants) {
    let inst = spec.build().unwrap_or_else(|e| panic!("spec {spec:?} builds: {e}"));
    let c = ProblemConstants::compute(&inst).unwrap_or_else(|e| panic!("constants of {spec:?}: {e}"));
    (inst, c)
}

/// Dissimilarity `(1/n) sum_i ||grad_u f_i||^2 - ||grad_u f||^2` at `z`, computed here from the
/// client gradients in the deviation form (no cancellation), as an independent brute force.
fn brute_dissimilarity(inst: &QuadraticInstance, z: &DVector<f64>) -> f64 {
    let lay = inst.layout();
    let grads: Vec<DVector<f64>> = (0..lay.n).map(|i| inst.local_gradient(i, &inst.local_point(z, i)).rows(0, lay.du).into_owned()).collect();
    let mean = grads.iter().fold(DVector::zeros(lay.du), |a, g| a + g) / lay.n as f64;
    grads.iter().map(|g| (g - &mean).norm_squared()).sum::<f64>() / lay.n as f64
}

/// Whether Assumption 2.3 can hold: every `A_i` equal and (for n >= 2) every `B_i = 0`.
fn bgd_should_be_finite(inst: &QuadraticInstance) -> bool {
    let lay = inst.layout();
    if lay.du == 0 || lay.n < 2 {
        return true;
    }
    let (a0, _, _) = blocks(&inst.clients()[0].hessian, lay.du, lay.dv);
    inst.clients().iter().all(|c| {
        let (a, b, _) = blocks(&c.hessian, lay.du, lay.dv);
        a == a0 && b.iter().all(|x| *x == 0.0)
    })
}

/// Hessian and linear term of `n f` over `z = [u; v_1; ...; v_n]`, assembled block by block.
fn joint_system(inst: &QuadraticInstance) -> (DMatrix<f64>, DVector<f64>) {
    let lay = inst.layout();
    let (du, dv) = (lay.du, lay.dv);
    let dim = lay.state_dim();
    let mut h = DMatrix::zeros(dim, dim);
    let mut g = DVector::zeros(dim);
    for (i, cl) in inst.clients().iter().enumerate() {
        // Index of local coordinate k of client i in the state vector.
        let at = |k: usize| if k < du { k } else { lay.v_offset(i) + (k - du) };
        for r in 0..du + dv {
            g[at(r)] += cl.linear[r];
            for col in 0..du + dv {
                h[(at(r), at(col))] += cl.hessian[(r, col)];
            }
        }
    }
    (h, g)
}

/// L = max{L_u, L_v, L_uv}, each the max over clients of a block's spectral norm (Assumption
/// 2.1, 000:L68-73), against SVD, an eigendecomposition of M^T M and power iteration; and L bounds
/// every brute-force Lipschitz ratio of Assumption 2.1, block by block, with the sup attained.
fn check_smoothness(inst: &QuadraticInstance, c: &ProblemConstants, mut rng: ChaCha8Rng) -> Result<(), TestCaseError> {
    let lay = inst.layout();
    let (du, dv) = (lay.du, lay.dv);

    let (mut lu, mut lv, mut luv) = (0.0f64, 0.0f64, 0.0f64);
    for cl in inst.clients() {
        let (a, b, cc) = blocks(&cl.hessian, du, dv);
        for m in [&a, &b, &cc] {
            let s = norm_svd(m);
            prop_assert!(rel_close(s, norm_eig(m), 1e-9), "svd {} vs eig {}", s, norm_eig(m));
            let p = norm_power(m, &mut rng);
            prop_assert!(p <= s * (1.0 + 1e-12) + 1e-12, "power iteration {} above svd {}", p, s);
            prop_assert!(p >= s * (1.0 - 1e-9), "power iteration {} far below svd {}", p, s);
        }
        lu = lu.max(norm_svd(&a));
        lv = lv.max(norm_svd(&cc));
        luv = luv.max(norm_svd(&b));
    }
    prop_assert!(rel_close(c.l_u, lu, 1e-12), "L_u {} vs {}", c.l_u, lu);
    prop_assert!(rel_close(c.l_v, lv, 1e-12), "L_v {} vs {}", c.l_v, lv);
    prop_assert!(rel_close(c.l_uv, luv, 1e-12), "L_uv {} vs {}", c.l_uv, luv);
    let l = lu.max(lv).max(luv);
    prop_assert!(rel_close(c.l, l, 1e-12), "L {} vs max block norm {}", c.l, l);

    // Brute-force Lipschitz ratios (a lower bound on each constant), block by block as in
    // Assumption 2.1; varying both blocks at once the ratio is only bounded by
    // ||[A_i B_i]|| <= sqrt(2) L (see `joint_lipschitz_ratio_can_exceed_l`).
    // Slack for the rounding of grad(x) - grad(y) when the step is short next to the gradients.
    let tol = |x: f64, gx: &DVector<f64>, gy: &DVector<f64>, d: &DVector<f64>| x * (1.0 + 1e-9) + 1e-14 * (gx.norm() + gy.norm() + 1.0) / d.norm();
    let mut best_u: f64 = 0.0;
    for i in 0..lay.n {
        let (a, b, _) = blocks(&inst.clients()[i].hessian, du, dv);
        let mut ab = DMatrix::zeros(du, du + dv);
        ab.view_mut((0, 0), (du, du)).copy_from(&a);
        ab.view_mut((0, du), (du, dv)).copy_from(&b);
        for _ in 0..16 {
            let scale = 10f64.powf(rng.gen_range(-2.0..2.0));
            let x = normal_vec(&mut rng, du + dv, scale);
            let gx = inst.local_gradient(i, &x);
            let delta_u = {
                let mut d = DVector::zeros(du + dv);
                d.rows_mut(0, du).copy_from(&normal_vec(&mut rng, du, scale));
                d
            };
            let delta_v = {
                let mut d = DVector::zeros(du + dv);
                d.rows_mut(du, dv).copy_from(&normal_vec(&mut rng, dv, scale));
                d
            };
            if du > 0 {
                let gy = inst.local_gradient(i, &(&x + &delta_u));
                let r = ratio(&gx.rows(0, du).into_owned(), &gy.rows(0, du).into_owned(), &delta_u);
                best_u = best_u.max(r);
                prop_assert!(r <= tol(c.l_u, &gx, &gy, &delta_u) && r <= tol(c.l, &gx, &gy, &delta_u), "grad_u in u: ratio {} > L_u {}", r, c.l_u);
                if dv > 0 {
                    let r = ratio(&gx.rows(du, dv).into_owned(), &gy.rows(du, dv).into_owned(), &delta_u);
                    prop_assert!(r <= tol(c.l_uv, &gx, &gy, &delta_u) && r <= tol(c.l, &gx, &gy, &delta_u), "grad_v in u: ratio {} > L_vu {}", r, c.l_uv);
                }
            }
            if dv > 0 {
                let gy = inst.local_gradient(i, &(&x + &delta_v));
                let r = ratio(&gx.rows(du, dv).into_owned(), &gy.rows(du, dv).into_owned(), &delta_v);
                prop_assert!(r <= tol(c.l_v, &gx, &gy, &delta_v) && r <= tol(c.l, &gx, &gy, &delta_v), "grad_v in v: ratio {} > L_v {}", r, c.l_v);
                if du > 0 {
                    let r = ratio(&gx.rows(0, du).into_owned(), &gy.rows(0, du).into_owned(), &delta_v);
                    prop_assert!(r <= tol(c.l_uv, &gx, &gy, &delta_v) && r <= tol(c.l, &gx, &gy, &delta_v), "grad_u in v: ratio {} > L_uv {}", r, c.l_uv);
                }
            }
            if du > 0 {
                let d = normal_vec(&mut rng, du + dv, scale);
                let gy = inst.local_gradient(i, &(&x + &d));
                let r = ratio(&gx.rows(0, du).into_owned(), &gy.rows(0, du).into_owned(), &d);
                prop_assert!(r <= tol(norm_svd(&ab), &gx, &gy, &d), "grad_u jointly: ratio {} > ||[A B]|| {}", r, norm_svd(&ab));
                prop_assert!(r <= tol(2f64.sqrt() * c.l, &gx, &gy, &d), "grad_u jointly: ratio {} > sqrt(2) L", r);
            }
        }
        // The supremum is attained: along A_i's top right singular vector the ratio is ||A_i||.
        if du > 0 {
            let svd = a.clone().svd(false, true);
            let vt = svd.v_t.unwrap();
            let k = svd.singular_values.imax();
            let mut d = DVector::zeros(du + dv);
            d.rows_mut(0, du).copy_from(&vt.row(k).transpose());
            let x = normal_vec(&mut rng, du + dv, 1.0);
            let gx = inst.local_gradient(i, &x);
            let gy = inst.local_gradient(i, &(&x + &d));
            best_u = best_u.max(ratio(&gx.rows(0, du).into_owned(), &gy.rows(0, du).into_owned(), &d));
        }
    }
    if du > 0 {
        prop_assert!(rel_close(best_u, c.l_u, 1e-9), "brute-force sup {} vs L_u {}", best_u, c.l_u);
    }
    Ok(())
}

/// F0 = f(z0) - f(z*) >= 0 with z* a stationary point and a global minimizer; F0 equals the
/// quadratic form (1/n) sum_i 1/2 d_i^T H_i d_i of z0 - z*.
fn check_minimizer(inst: &QuadraticInstance, c: &ProblemConstants, mut rng: ChaCha8Rng) -> Result<(), TestCaseError> {
    let lay = inst.layout();
    let z_star = &c.minimizer;
    let z0 = inst.initial_state();
    let f_star = inst.objective(z_star);
    let f_z0 = inst.objective(z0);
    let fscale = f_star.abs().max(f_z0.abs()).max(1.0);

    prop_assert!(c.f0 >= 0.0);
    prop_assert!(rel_close(c.f_star, f_star, 1e-12));
    prop_assert!((c.f0 - (f_z0 - f_star)).abs() <= 1e-12 * fscale, "F0 {} vs f(z0) - f(z*) {}", c.f0, f_z0 - f_star);
    let d = z0 - z_star;
    let quad = (0..lay.n)
        .map(|i| {
            let di = inst.local_point(&d, i);
            0.5 * di.dot(&(&inst.clients()[i].hessian * &di))
        })
        .sum::<f64>()
        / lay.n as f64;
    prop_assert!((c.f0 - quad).abs() <= 1e-10 * fscale.max(quad), "F0 {} vs quadratic form {}", c.f0, quad);

    // B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2 and its literal reading n ||grad_u f(u^0, v^0)||^2.
    let gu0: Vec<DVector<f64>> = (0..lay.n).map(|i| inst.local_gradient(i, &inst.local_point(z0, i)).rows(0, lay.du).into_owned()).collect();
    let b0 = gu0.iter().map(|g| g.norm_squared()).sum::<f64>();
    let mean = gu0.iter().fold(DVector::zeros(lay.du), |a, g| a + g) / lay.n as f64;
    prop_assert!(rel_close(c.b0, b0, 1e-12), "B^0 = {} vs brute force {}", c.b0, b0);
    prop_assert!(rel_close(c.b0_literal, lay.n as f64 * mean.norm_squared(), 1e-12));

    // z* solves the joint normal equations, assembled here independently and solved by LU.
    let (h, g) = joint_system(inst);
    let eig = SymmetricEigen::new(h.clone()).eigenvalues;
    let (lo, hi) = (eig.min(), eig.max());
    prop_assert!(lo > 0.0, "joint Hessian not PD: {}", lo);
    let z_lu = h.clone().lu().solve(&g).expect("joint Hessian is invertible");
    let cond = hi / lo;
    prop_assert!((&z_lu - z_star).norm() <= 1e-10 * cond * z_lu.norm().max(1.0), "z* differs from the LU solution by {}", (&z_lu - z_star).norm());

    // Stationarity: all client gradients of f vanish at z* (grad_u f and every grad_{v_i} f_i).
    let s = GradientSummary::at(inst, z_star);
    let gscale = c.l * z_star.norm().max(1.0) + inst.clients().iter().map(|cl| cl.linear.norm()).fold(0.0, f64::max);
    let cond = cond * lay.n as f64;
    prop_assert!(s.g_u.sqrt() <= 1e-12 * cond * gscale, "||grad_u f(z*)|| = {}", s.g_u.sqrt());
    prop_assert!(s.g_v.sqrt() <= 1e-12 * cond * gscale, "grad_v at z*: {}", s.g_v.sqrt());

    // Global minimality: f(z*) <= f(z) for random z, near and far.
    for _ in 0..16 {
        let sc = 10f64.powf(rng.gen_range(-3.0..1.0));
        let z = z_star + normal_vec(&mut rng, lay.state_dim(), sc);
        let fz = inst.objective(&z);
        prop_assert!(fz >= f_star - 1e-12 * fscale.max(fz.abs()), "f(z) = {} < f(z*) = {}", fz, f_star);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 1. Constants against brute force
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// L = max{L_u, L_v, L_uv} with each the max over clients of a block's spectral norm
    /// (Assumption 2.1, 000:L68-73), checked against SVD, an eigendecomposition of M^T M and power
    /// iteration; and L bounds every brute-force Lipschitz ratio of Assumption 2.1, block by block.
    #[test]
    fn smoothness_constant_matches_block_norms_and_brute_force(spec in spec_strategy(), seed in any::<u64>()) {
        let (inst, c) = build(&spec);
        check_smoothness(&inst, &c, ChaCha8Rng::seed_from_u64(seed))?;
        // The recipe hits its target L exactly, for both couplings.
        prop_assert!(rel_close(c.l, spec.l, 1e-9), "L = {} but spec l = {}", c.l, spec.l);
    }

    /// b^2 of Assumption 2.3 (000:L83-88): finite and equal to the (constant) pointwise
    /// dissimilarity for decoupled instances; infinite, with a dissimilarity growing like s^2 along
    /// s w, for coupled ones whose A_i differ or B_i != 0.
    #[test]
    fn bgd_constant_matches_pointwise_dissimilarity(spec in spec_strategy(), seed in any::<u64>()) {
        let (inst, c) = build(&spec);
        let lay = inst.layout();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let dim = lay.state_dim();
        let finite_expected = bgd_should_be_finite(&inst);
        match spec.coupling {
            Coupling::Decoupled => prop_assert!(finite_expected),
            Coupling::Coupled => {
                // A coupled recipe leaves Assumption 2.3 possible only when it cannot make the
                // u-blocks differ: n = 1, du = 0, or (du, dv) = (1, 0) (1x1 blocks all equal L).
                let degenerate = lay.n < 2 || lay.du == 0 || (lay.du == 1 && lay.dv == 0);
                prop_assert_eq!(finite_expected, degenerate, "coupled recipe, layout {:?}", lay);
            }
        }
        match (&c.bgd, finite_expected) {
            (BgdConstant::Finite { b2 }, true) => {
                let b2 = *b2;
                prop_assert!(b2.is_finite() && b2 >= 0.0);
                if spec.coupling == Coupling::Decoupled {
                    prop_assert!(rel_close(b2, spec.b * spec.b, 1e-9), "b^2 = {} but spec b^2 = {}", b2, spec.b * spec.b);
                }
                let mut max_d: f64 = 0.0;
                for _ in 0..16 {
                    let sc = 10f64.powf(rng.gen_range(-2.0..1.0));
                    let z = normal_vec(&mut rng, dim, sc);
                    let d = GradientSummary::at(&inst, &z).dissimilarity;
                    let brute = brute_dissimilarity(&inst, &z);
                    prop_assert!(rel_close(d, b2, 1e-9), "dissimilarity {} at a random z, b^2 = {}", d, b2);
                    prop_assert!(rel_close(brute, b2, 1e-9), "brute dissimilarity {} at a random z, b^2 = {}", brute, b2);
                    max_d = max_d.max(d);
                }
                prop_assert!(rel_close(max_d, b2, 1e-9), "max dissimilarity {} vs b^2 {}", max_d, b2);
            }
            (BgdConstant::Infinite { .. }, false) => {
                prop_assert!(c.bgd.finite().is_none());
                let w = normal_vec(&mut rng, dim, 1.0).normalize();
                let at = |s: f64| GradientSummary::at(&inst, &(&w * s)).dissimilarity;
                let (d1, d_big) = (at(1.0), at(1e8));
                // Unbounded: far out the dissimilarity dwarfs its value at s = 1 ...
                prop_assert!(d_big > 1e4 * d1.max(1e-300), "D(1e8) = {} vs D(1) = {}", d_big, d1);
                // ... because it is a quadratic a s^2 + b s + c in s with a > 0. Fit it at
                // s = -1, 0, 1 in the deviation form (brute force, no cancellation), check the fit
                // far out, and check GradientSummary against it there. (The fit's own coefficients
                // come from three rounded values, hence the 1e-3 tolerance far out.)
                let brute = |s: f64| brute_dissimilarity(&inst, &(&w * s));
                let (dm, d0, dp) = (brute(-1.0), brute(0.0), brute(1.0));
                let (a, b, c0) = ((dp + dm - 2.0 * d0) / 2.0, (dp - dm) / 2.0, d0);
                prop_assert!(a > 1e-12 * (dp + dm + d0), "leading coefficient {} (D(-1), D(0), D(1)) = {:?}", a, (dm, d0, dp));
                for s in [1e2, 1e4, 1e6] {
                    let fit = a * s * s + b * s + c0;
                    prop_assert!(rel_close(brute(s), fit, 1e-3), "D({}) = {} but the quadratic fit gives {}", s, brute(s), fit);
                }
                let mean_sq = GradientSummary::at(&inst, &(&w * 1e8)).b_sum / lay.n as f64;
                prop_assert!((d_big - brute(1e8)).abs() <= 1e-12 * mean_sq, "D(1e8) = {} vs {}", d_big, brute(1e8));
            }
            (bgd, expected) => {
                prop_assert!(false, "bgd = {:?} but finite expected = {} for {:?}", bgd, expected, lay);
            }
        }
    }

    /// F0 = f(z0) - f(z*) >= 0 with z* a stationary point and a global minimizer; F0 equals the
    /// quadratic form (1/n) sum_i 1/2 d_i^T H_i d_i of z0 - z*; ||z0 - z*|| hits the recipe.
    #[test]
    fn minimizer_is_stationary_and_f0_is_its_gap(spec in spec_strategy(), seed in any::<u64>()) {
        let (inst, c) = build(&spec);
        check_minimizer(&inst, &c, ChaCha8Rng::seed_from_u64(seed))?;
        let d = inst.initial_state() - &c.minimizer;
        prop_assert!(
            (d.norm() - spec.init_distance).abs() <= 1e-9 * spec.init_distance.max(1.0),
            "||z0 - z*|| = {} but spec {}", d.norm(), spec.init_distance
        );
    }

    /// sigma_u^2 = tr S_u and sigma_v^2 = tr S_v (Assumption 2.2 with equality) hit the recipe.
    #[test]
    fn noise_constants_are_traces_and_hit_the_recipe(spec in spec_strategy()) {
        let (inst, c) = build(&spec);
        let lay = inst.layout();
        let tr = |m: &DMatrix<f64>| (0..m.nrows()).map(|k| m[(k, k)]).sum::<f64>();
        prop_assert!(rel_close(c.sigma_u2, tr(inst.noise_u_cov()), 1e-12));
        prop_assert!(rel_close(c.sigma_v2, tr(inst.noise_v_cov()), 1e-12));
        let want_u = if lay.du == 0 { 0.0 } else { spec.sigma_u * spec.sigma_u };
        let want_v = if lay.dv == 0 { 0.0 } else { spec.sigma_v * spec.sigma_v };
        prop_assert!(rel_close(c.sigma_u2, want_u, 1e-9), "sigma_u^2 = {} but spec {}", c.sigma_u2, want_u);
        prop_assert!(rel_close(c.sigma_v2, want_v, 1e-9), "sigma_v^2 = {} but spec {}", c.sigma_v2, want_v);
        prop_assert!(rel_close(c.l, spec.l, 1e-9), "L = {} but spec l = {}", c.l, spec.l);
    }

    /// b^2 is infinite exactly when it should be: from a decoupled instance, a symmetric change of
    /// one A_i entry, or a nonzero B_i, makes it infinite; identical A_i with B_i = 0 keep it finite
    /// (and equal to the brute-force spread of the linear terms).
    #[test]
    fn bgd_is_infinite_exactly_when_blocks_differ(
        n in 2usize..6,
        du in 1usize..4,
        dv in 0usize..3,
        l in 2.0f64..10.0,
        mu_frac in 0.0f64..1.0,
        b in 0.0f64..3.0,
        seed in any::<u64>(),
        log_eps in -6.0f64..0.0,
        log_scale in -40.0f64..40.0,
        pick in any::<(usize, usize, usize, usize)>(),
    ) {
        let spec = InstanceSpec {
            n, du, dv, l, mu: 1.5 + mu_frac * (l - 1.5), sigma_u: 0.5, sigma_v: 0.5, b,
            coupling: Coupling::Decoupled, init_distance: 1.0, seed,
        };
        let (inst, c) = build(&spec);
        let b2 = c.bgd.finite();
        prop_assert!(b2.is_some());
        let eps = 10f64.powf(log_eps);
        let explicit = ExplicitInstance::from_instance(&inst);
        let (client, r, col, vc) = (pick.0 % n, pick.1 % du, pick.2 % du, pick.3 % dv.max(1));
        let bgd_of = |e: &ExplicitInstance| ProblemConstants::compute(&e.build().expect("explicit builds")).expect("constants").bgd;

        // Round trip: identical A_i, B_i = 0 -> finite, same b^2.
        let same = bgd_of(&explicit);
        prop_assert_eq!(same.finite(), b2);

        // One A_i entry perturbed symmetrically.
        let mut pa = explicit.clone();
        pa.clients[client].hessian[r][col] += eps;
        if r != col {
            pa.clients[client].hessian[col][r] += eps;
        }
        match bgd_of(&pa) {
            BgdConstant::Infinite { reason } => prop_assert!(reason.contains("A_i differ"), "reason: {}", reason),
            other => prop_assert!(false, "A perturbed by {} but b^2 = {:?}", eps, other),
        }
        // The same, every Hessian scaled by 10^log_scale: the test is relative to the blocks' own
        // size (a floor of 1 had read blocks of 1e-17 that differ by a third as identical).
        let mut scaled = pa.clone();
        let factor = 10f64.powf(log_scale);
        for cl in &mut scaled.clients {
            cl.hessian.iter_mut().flatten().for_each(|x| *x *= factor);
        }
        match bgd_of(&scaled) {
            BgdConstant::Infinite { reason } => prop_assert!(reason.contains("A_i differ"), "reason: {}", reason),
            other => prop_assert!(false, "A perturbed by {} and scaled by {:e} but b^2 = {:?}", eps, factor, other),
        }

        // B_i nonzero.
        if dv > 0 {
            let mut pb = explicit.clone();
            pb.clients[client].hessian[r][du + vc] = eps;
            pb.clients[client].hessian[du + vc][r] = eps;
            match bgd_of(&pb) {
                BgdConstant::Infinite { reason } => prop_assert!(reason.contains("coupled"), "reason: {}", reason),
                other => prop_assert!(false, "B set to {} but b^2 = {:?}", eps, other),
            }
        }

        // Identical A_i, B_i = 0, new linear terms: finite, and equal to the spread of g_{u,i}.
        let mut pg = explicit.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xABCD);
        for cl in &mut pg.clients {
            for k in 0..du {
                cl.linear[k] = rng.sample::<f64, _>(StandardNormal) * 3.0;
            }
        }
        let gmean: Vec<f64> = (0..du).map(|k| pg.clients.iter().map(|cl| cl.linear[k]).sum::<f64>() / n as f64).collect();
        let spread = pg.clients.iter().map(|cl| (0..du).map(|k| (cl.linear[k] - gmean[k]).powi(2)).sum::<f64>()).sum::<f64>() / n as f64;
        match bgd_of(&pg) {
            BgdConstant::Finite { b2 } => prop_assert!(rel_close(b2, spread, 1e-12), "b^2 {} vs spread {}", b2, spread),
            other => prop_assert!(false, "identical A_i, B_i = 0 but b^2 = {:?}", other),
        }
    }
}

/// Random explicit instances whose clients need not be convex (large B_i), shifted so that f has
/// a unique minimizer; returns the explicit form.
fn nonconvex_explicit(n: usize, du: usize, dv: usize, b_scale: f64, seed: u64) -> ExplicitInstance {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let d = du + dv;
    let mut hs: Vec<DMatrix<f64>> = (0..n)
        .map(|_| {
            let m = DMatrix::from_fn(d, d, |_, _| rng.sample::<f64, _>(StandardNormal));
            let mut h = (&m + m.transpose()) * 0.5;
            for r in 0..du {
                for col in du..d {
                    h[(r, col)] *= b_scale;
                    h[(col, r)] *= b_scale;
                }
            }
            h
        })
        .collect();
    let rows = |m: &DMatrix<f64>| (0..m.nrows()).map(|r| m.row(r).iter().copied().collect()).collect::<Vec<Vec<f64>>>();
    let make = |hs: &[DMatrix<f64>], rng: &mut ChaCha8Rng| ExplicitInstance {
        du,
        dv,
        noise_u_cov: rows(&DMatrix::zeros(du, du)),
        noise_v_cov: rows(&DMatrix::identity(dv, dv)),
        u0: (0..du).map(|_| rng.sample(StandardNormal)).collect(),
        clients: hs
            .iter()
            .map(|h| fedbounds::families::ccyw::problem::ExplicitClient {
                hessian: rows(h),
                linear: (0..d).map(|_| rng.sample(StandardNormal)).collect(),
                v0: (0..dv).map(|_| rng.sample(StandardNormal)).collect(),
            })
            .collect(),
    };
    // Adding s I to every H_i adds at least s to the smallest eigenvalue of the joint Hessian.
    let probe = make(&hs, &mut rng.clone()).build().expect("explicit builds");
    let lo = SymmetricEigen::new(joint_system(&probe).0).eigenvalues.min();
    let shift = (0.2 - lo).max(0.0);
    for h in &mut hs {
        for k in 0..d {
            h[(k, k)] += shift;
        }
    }
    make(&hs, &mut rng)
}

proptest! {
    #![proptest_config(config())]

    /// The constants on instances beyond the generator: clients need not be convex, B_i can be
    /// the largest block. L, F0 and z* against brute force; b^2 infinite (B_i != 0, n >= 2).
    #[test]
    fn constants_on_nonconvex_explicit_instances(
        n in 2usize..5, du in 1usize..4, dv in 1usize..3, b_scale in 1.0f64..4.0, seed in any::<u64>(),
    ) {
        let e = nonconvex_explicit(n, du, dv, b_scale, seed);
        let inst = e.build().expect("explicit builds");
        let c = ProblemConstants::compute(&inst).expect("joint Hessian is PD by construction");
        check_smoothness(&inst, &c, ChaCha8Rng::seed_from_u64(seed ^ 1))?;
        check_minimizer(&inst, &c, ChaCha8Rng::seed_from_u64(seed ^ 2))?;
        prop_assert!(c.bgd.finite().is_none(), "b^2 = {:?} with B_i != 0", c.bgd);
        prop_assert!(rel_close(c.sigma_v2, dv as f64, 1e-12));
    }
}

/// The coupling block can be the largest: two clients, du = dv = 1, client 1 indefinite with
/// B_1 = 1.2 > A_i = C_i = 1 (f still strongly convex). L = L_uv = 1.2.
#[test]
fn coupling_block_can_set_l() {
    let client = |h: [[f64; 2]; 2]| fedbounds::families::ccyw::problem::ExplicitClient {
        hessian: h.iter().map(|r| r.to_vec()).collect(),
        linear: vec![0.3, -0.2],
        v0: vec![1.0],
    };
    let e = ExplicitInstance {
        du: 1,
        dv: 1,
        noise_u_cov: vec![vec![0.0]],
        noise_v_cov: vec![vec![0.0]],
        u0: vec![1.0],
        clients: vec![client([[1.0, 1.2], [1.2, 1.0]]), client([[1.0, 0.0], [0.0, 1.0]])],
    };
    let inst = e.build().unwrap();
    let c = ProblemConstants::compute(&inst).unwrap();
    assert!(c.mu < 0.0, "client 1 is indefinite");
    assert!(rel_close(c.l_uv, 1.2, 1e-12) && rel_close(c.l_u, 1.0, 1e-12) && rel_close(c.l_v, 1.0, 1e-12));
    assert!(rel_close(c.l, 1.2, 1e-12), "L = {} but L_uv = 1.2 is the largest block norm", c.l);
    check_smoothness(&inst, &c, ChaCha8Rng::seed_from_u64(5)).unwrap();
    check_minimizer(&inst, &c, ChaCha8Rng::seed_from_u64(6)).unwrap();
}

/// A single client has zero dissimilarity whatever its blocks: b^2 = 0 even when coupled.
#[test]
fn single_client_bgd_is_zero_even_when_coupled() {
    for (du, dv) in [(1, 1), (2, 2), (3, 1)] {
        let spec = InstanceSpec { n: 1, du, dv, l: 2.0, mu: 0.3, sigma_u: 0.0, sigma_v: 0.0, b: 0.0, coupling: Coupling::Coupled, init_distance: 1.0, seed: 7 };
        let (inst, c) = build(&spec);
        assert_eq!(c.bgd, BgdConstant::Finite { b2: 0.0 });
        let z = DVector::from_element(inst.layout().state_dim(), 1e3);
        assert!(GradientSummary::at(&inst, &z).dissimilarity <= 1e-6);
    }
}

/// Degenerate coupled recipes: `Coupling::Coupled` is documented as "A_i differ and B_i != 0, so
/// b^2 is infinite", but with (du, dv) = (1, 0) every 1x1 Hessian equals L, and with mu = L every
/// Hessian is L I. The constants are right to call b^2 finite there (checked by brute force).
#[test]
fn degenerate_coupled_recipes_have_finite_bgd() {
    for (du, dv, mu) in [(1, 0, 0.5), (2, 1, 2.0), (1, 1, 2.0)] {
        let spec = InstanceSpec { n: 3, du, dv, l: 2.0, mu, sigma_u: 0.0, sigma_v: 0.0, b: 0.7, coupling: Coupling::Coupled, init_distance: 1.0, seed: 11 };
        let (inst, c) = build(&spec);
        let b2 = c.bgd.finite().unwrap_or_else(|| panic!("({du}, {dv}, mu = {mu}): {:?}", c.bgd));
        assert!(rel_close(b2, 0.49, 1e-9), "({du}, {dv}, mu = {mu}): b^2 = {b2}");
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..8 {
            let z = normal_vec(&mut rng, inst.layout().state_dim(), 5.0);
            assert!(rel_close(brute_dissimilarity(&inst, &z), b2, 1e-9));
        }
    }
}

/// Why the Lipschitz check is block by block (as Assumption 2.1 states it): jointly in
/// x = [u; v_i], grad_u f_i is ||[A_i B_i]||-Lipschitz, which can exceed L = max block norm.
#[test]
fn joint_lipschitz_ratio_can_exceed_l() {
    let e = ExplicitInstance {
        du: 1,
        dv: 1,
        noise_u_cov: vec![vec![0.0]],
        noise_v_cov: vec![vec![0.0]],
        u0: vec![0.0],
        clients: vec![fedbounds::families::ccyw::problem::ExplicitClient {
            hessian: vec![vec![1.0, 1.0], vec![1.0, 1.25]],
            linear: vec![0.0, 0.0],
            v0: vec![1.0],
        }],
    };
    let inst = e.build().unwrap();
    let c = ProblemConstants::compute(&inst).unwrap();
    assert!(rel_close(c.l, 1.25, 1e-12));
    let x = DVector::from_vec(vec![0.0, 0.0]);
    let d = DVector::from_vec(vec![1.0, 1.0]);
    let r = ratio(&inst.local_gradient(0, &x).rows(0, 1).into_owned(), &inst.local_gradient(0, &d).rows(0, 1).into_owned(), &d);
    assert!(rel_close(r, 2f64.sqrt(), 1e-12) && r > c.l);
}

// ---------------------------------------------------------------------------------------------
// 2. Bound functions of claims::ccyw
// ---------------------------------------------------------------------------------------------

fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo.log10()..hi.log10()).prop_map(|e| 10f64.powf(e))
}

/// A nonnegative magnitude in [0, 100], exactly 0 in a quarter of the cases (the boundary where
/// slack in a bound's derivation vanishes, e.g. X = 0 in Corollary 3.8).
fn edgy() -> impl Strategy<Value = f64> {
    prop_oneof![1 => Just(0.0), 3 => 0.0f64..100.0]
}

/// Random valid inputs: m <= n, b^2 = 0 without u or with a single client, sigma_u^2 = 0 without
/// u, sigma_v^2 = 0 without v; step sizes are placeholders (set by each property).
fn inputs_strategy() -> impl Strategy<Value = ClaimInputs> {
    (
        (1usize..=20, prop_oneof![Just(1.0), 0.0f64..1.0], prop_oneof![Just(1usize), 1usize..=30], 1usize..=5000),
        (0usize..4, 0usize..3).prop_filter("du + dv >= 1", |(du, dv)| du + dv >= 1),
        (log_uniform(1e-2, 1e2), log_uniform(1e-3, 1e3)),
        (edgy(), edgy(), edgy(), edgy()),
    )
        .prop_map(|((n, m_frac, k, t), (du, dv), (l, f0), (b2, su2, sv2, b0))| {
            // m_frac = 1 gives m = n (full participation) a fair share of the cases.
            let m = (1 + (m_frac * n as f64) as usize).min(n);
            ClaimInputs {
                n,
                m,
                k,
                t,
                du,
                dv,
                l,
                f0,
                b2: Some(if du == 0 || n < 2 { 0.0 } else { b2 }),
                sigma_u2: if du == 0 { 0.0 } else { su2 },
                sigma_v2: if dv == 0 { 0.0 } else { sv2 },
                b0,
                b0_literal: b0,
                gamma_u: 1e-3,
                gamma_v: 1e-3,
                eta_u: 1.0,
                eta_v: 1.0,
            }
        })
}

/// A parameter Remark 3.9 says the Corollary 3.8 rate increases in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Param {
    SigmaU2,
    SigmaV2,
    B2,
    L,
}

impl Param {
    fn applicable(x: &ClaimInputs) -> Vec<Param> {
        let mut out = vec![Param::L];
        if x.du > 0 {
            out.push(Param::SigmaU2);
            if x.n >= 2 {
                out.push(Param::B2);
            }
        }
        if x.dv > 0 {
            out.push(Param::SigmaV2);
        }
        out
    }
    fn set(self, x: &ClaimInputs, value: f64) -> ClaimInputs {
        let mut y = *x;
        match self {
            Param::SigmaU2 => y.sigma_u2 = value,
            Param::SigmaV2 => y.sigma_v2 = value,
            Param::B2 => y.b2 = Some(value),
            Param::L => y.l = value,
        }
        y
    }
}

/// One case of the monotonicity check: inputs, a parameter pick, and two values of it.
type MonotoneCase = (ClaimInputs, usize, f64, f64);

/// The monotonicity property of Remark 3.9 (000:L375) for any bound `f(x, b^2)`: over random
/// valid inputs, a random applicable parameter and two values `lo < hi` of it, `f(hi) >= f(lo)`
/// (to 1e-12 relative). Returns the runner's verdict so a negative control can observe failure.
fn check_nondecreasing<F>(runner: &mut TestRunner, bound: F) -> Result<(), Box<TestError<MonotoneCase>>>
where
    F: Fn(&ClaimInputs, f64) -> f64,
{
    let strategy = (inputs_strategy(), any::<usize>(), log_uniform(1e-4, 1e2), log_uniform(1e-4, 1e2));
    runner
        .run(&strategy, |(x, pick, a, b)| {
            let params = Param::applicable(&x);
            let p = params[pick % params.len()];
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let (xl, xh) = (p.set(&x, lo), p.set(&x, hi));
            let (fl, fh) = (bound(&xl, xl.b2.unwrap()), bound(&xh, xh.b2.unwrap()));
            if fh >= fl - 1e-12 * fl.abs() {
                Ok(())
            } else {
                Err(TestCaseError::fail(format!("{p:?}: f({lo}) = {fl} > f({hi}) = {fh}")))
            }
        })
        .map_err(Box::new)
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() })
}

/// Remark 3.9: the Corollary 3.8 bound is nondecreasing in sigma_u^2, sigma_v^2, b^2 and L.
#[test]
fn corollary_3_8_bound_is_nondecreasing_in_noise_dissimilarity_and_l() {
    let result = check_nondecreasing(&mut runner(), corollary_3_8_bound);
    assert!(result.is_ok(), "{result:?}");
    // The same holds for Theorem 3.11's rate (its noise and L; it has no b^2).
    let result = check_nondecreasing(&mut runner(), |x, _| theorem_3_11_rate_bound(x));
    assert!(result.is_ok(), "{result:?}");
}

/// Negative control: the same check reports failure for decreasing functions.
#[test]
fn nondecreasing_check_rejects_a_decreasing_function() {
    let mut r =
        TestRunner::new_with_rng(Config { cases: cases(), failure_persistence: None, ..Config::default() }, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = check_nondecreasing(&mut r, |x, b2| 1.0 / corollary_3_8_bound(x, b2));
    assert!(matches!(result.as_ref().map_err(|e| &**e), Err(TestError::Fail(..))), "{result:?}");
    let result = check_nondecreasing(&mut runner(), |x, b2| -corollary_3_8_bound(x, b2));
    assert!(matches!(result.as_ref().map_err(|e| &**e), Err(TestError::Fail(..))), "{result:?}");
}

/// Inputs at Corollary 3.8's parameters: its gamma, eta_u = max(sqrt(m), sqrt(b^2 T/(L F0))),
/// eta_v = sqrt(n/m), gamma_u = gamma/eta_u, gamma_v = gamma/eta_v.
fn at_corollary_steps(x: &ClaimInputs) -> ClaimInputs {
    let b2 = x.b2.unwrap();
    let gamma = corollary_3_8_gamma(x, b2);
    let eta_u = (x.m as f64).sqrt().max((b2 * x.t as f64 / (x.l * x.f0)).sqrt());
    let eta_v = (x.n as f64 / x.m as f64).sqrt();
    ClaimInputs { eta_u, eta_v, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, ..*x }
}

proptest! {
    #![proptest_config(config())]

    /// Corollary 3.8 follows from Theorem 3.7 at the corollary's step (000:L369-373): Theorem 3.7's
    /// conditions hold there and its bound is at most the corollary's.
    #[test]
    fn corollary_3_8_follows_from_theorem_3_7(x in inputs_strategy()) {
        let y = at_corollary_steps(&x);
        let b2 = y.b2.unwrap();
        let gamma = corollary_3_8_gamma(&y, b2);
        prop_assert!(rel_close(y.gamma(), gamma, 1e-12));
        prop_assert!(gamma <= 1.0 / (32.0 * y.l * y.k as f64), "gamma {} > 1/(32 L K)", gamma);
        for check in CcywClaim::Theorem37.checks(&y) {
            prop_assert!(check.holds, "Theorem 3.7 check fails at the corollary's step: {}", check);
        }
        for check in CcywClaim::Corollary38.checks(&y) {
            prop_assert!(check.holds, "Corollary 3.8 check fails at its own step: {}", check);
        }
        let t37 = theorem_3_7_bound(&y, b2);
        let c38 = corollary_3_8_bound(&y, b2);
        prop_assert!(t37 <= c38 * (1.0 + 1e-12), "Theorem 3.7 bound {} > Corollary 3.8 bound {}", t37, c38);
        prop_assert_eq!(CcywClaim::Theorem37.bound(&y), t37);
        prop_assert_eq!(CcywClaim::Corollary38.bound(&y), c38);
    }

    /// Theorem 3.11 part 2 follows from part 1 at its gamma (000:L421-431), with
    /// eta_u = max(T, sqrt(B^0 T/(n L F0)), sqrt(n)), eta_v = 1, m = n.
    #[test]
    fn theorem_3_11_rate_follows_from_part_one(x in inputs_strategy(), t in 2usize..5000) {
        let x = ClaimInputs { m: x.n, t, ..x };
        let (n, tt) = (x.n as f64, x.t as f64);
        let eta_u = tt.max((x.b0 * tt / (n * x.l * x.f0)).sqrt()).max(n.sqrt());
        prop_assert!(rel_close(theorem_3_11_eta_u_min(&x, x.b0), eta_u, 1e-15));
        let gamma = theorem_3_11_rate_gamma(&x);
        let y = ClaimInputs { eta_u, eta_v: 1.0, gamma_u: gamma / eta_u, gamma_v: gamma, ..x };
        prop_assert!(rel_close(y.gamma(), gamma, 1e-12));
        for check in (CcywClaim::Theorem311 { literal_b0: false }).checks(&y) {
            prop_assert!(check.holds, "Theorem 3.11 check fails at its rate step: {}", check);
        }
        for check in CcywClaim::Theorem311Rate.checks(&y) {
            prop_assert!(check.holds, "Theorem 3.11 rate check fails at its own step: {}", check);
        }
        let part1 = theorem_3_11_bound(&y);
        let part2 = theorem_3_11_rate_bound(&y);
        prop_assert!(part1 <= part2 * (1.0 + 1e-12), "part 1 {} > part 2 {}", part1, part2);
    }

    /// Section 3.2.3 (000:L386-392): with dv = 0 (sigma_v^2 = 0) the corollary is the FedAvg rate.
    #[test]
    fn corollary_without_v_is_the_fedavg_rate(x in inputs_strategy(), du in 1usize..4) {
        let x = ClaimInputs { du, dv: 0, sigma_v2: 0.0, b2: Some(if x.n < 2 { 0.0 } else { x.b2.unwrap() }), ..x };
        let (n, m, k, t) = (x.n as f64, x.m as f64, x.k as f64, x.t as f64);
        let b2 = x.b2.unwrap();
        let want = 8.0 * (3.0 * (4.0 * (n - m) * k * b2 / (m * n) + x.sigma_u2 / m) * x.l * x.f0 / (k * t)).sqrt()
            + 129.0 * x.l * x.f0 / t;
        let got = corollary_3_8_bound(&x, b2);
        prop_assert!(rel_close(got, want, 1e-12), "corollary {} vs FedAvg formula {}", got, want);
        prop_assert!(rel_close(CcywClaim::SpecialFedAvgPartial.bound(&x), want, 1e-12));
        // Full participation, no BGD (000:L486-492): 8 sqrt(11 sigma_u^2 L F0/(n K T)) + 337 L F0/T.
        let full = ClaimInputs { m: x.n, ..x };
        let want_full = 8.0 * (11.0 * x.sigma_u2 * x.l * x.f0 / (n * k * t)).sqrt() + 337.0 * x.l * x.f0 / t;
        prop_assert!(rel_close(theorem_3_11_rate_bound(&full), want_full, 1e-12));
        prop_assert!(rel_close(CcywClaim::SpecialFedAvgFull.bound(&full), want_full, 1e-12));
    }

    /// Section 3.2.3 (000:L409-415): with du = 0, K = 1, m = n, sigma_u^2 = 0 the corollary is the
    /// parallel-SGD rate 8 sqrt(3 sigma_v^2 L F0/T) + 129 L F0/T.
    #[test]
    fn corollary_without_u_is_the_parallel_sgd_rate(x in inputs_strategy(), dv in 1usize..3, sv2 in 0.0f64..100.0) {
        let x = ClaimInputs { du: 0, dv, k: 1, m: x.n, sigma_u2: 0.0, sigma_v2: sv2, b2: Some(0.0), ..x };
        let t = x.t as f64;
        let want = 8.0 * (3.0 * sv2 * x.l * x.f0 / t).sqrt() + 129.0 * x.l * x.f0 / t;
        let got = corollary_3_8_bound(&x, 0.0);
        prop_assert!(rel_close(got, want, 1e-12), "corollary {} vs parallel-SGD formula {}", got, want);
        prop_assert!(rel_close(CcywClaim::SpecialParallelSgd.bound(&x), want, 1e-12));
        // b^2 cannot enter when m = n.
        prop_assert!(rel_close(corollary_3_8_bound(&x, 57.0), want, 1e-12));
    }
}

/// Inputs at Corollary 4.6's parameters: its gamma, eta_u = sqrt(m), eta_v = sqrt(n/m).
fn at_scaffold_corollary_steps(x: &ClaimInputs) -> ClaimInputs {
    let gamma = corollary_4_6_gamma(x);
    let (eta_u, eta_v) = ((x.m as f64).sqrt(), (x.n as f64 / x.m as f64).sqrt());
    ClaimInputs { eta_u, eta_v, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, ..*x }
}

proptest! {
    #![proptest_config(config())]

    /// Corollary 4.6 follows from Theorem 4.5 at the corollary's step (000:L587-591, L643-647):
    /// the theorem's conditions hold there and its bound is at most the corollary's.
    #[test]
    fn corollary_4_6_follows_from_theorem_4_5(x in inputs_strategy()) {
        let y = at_scaffold_corollary_steps(&x);
        let gamma = corollary_4_6_gamma(&y);
        prop_assert!(rel_close(y.gamma(), gamma, 1e-12));
        prop_assert!(gamma <= theorem_4_5_gamma_max(&y) * (1.0 + 1e-12), "gamma {} above Theorem 4.5's {}", gamma, theorem_4_5_gamma_max(&y));
        for check in ScaffoldClaim::Theorem45.checks(&y) {
            prop_assert!(check.holds, "Theorem 4.5 check fails at the corollary's step: {}", check);
        }
        for check in ScaffoldClaim::Corollary46.checks(&y) {
            prop_assert!(check.holds, "Corollary 4.6 check fails at its own step: {}", check);
        }
        let t45 = theorem_4_5_bound(&y);
        let c46 = corollary_4_6_bound(&y);
        prop_assert!(t45 <= c46 * (1.0 + 1e-12), "Theorem 4.5 bound {} > Corollary 4.6 bound {}", t45, c46);
    }

    /// Section 4.3.1 (000:L651-655): with dv = 0 (sigma_v^2 = 0) the corollary is the Scaffold rate
    /// (4.6), `8 sqrt(37 sigma_u^2 L F0/(m K T)) + 288 L F0 max(1, n^(2/3)/m)/T`, with no b^2.
    #[test]
    fn corollary_4_6_without_v_is_the_scaffold_rate(x in inputs_strategy(), du in 1usize..4, b2 in 0.0f64..1e3) {
        let x = ClaimInputs { du, dv: 0, sigma_v2: 0.0, b2: Some(b2), ..x };
        let (n, m, k, t) = (x.n as f64, x.m as f64, x.k as f64, x.t as f64);
        let want = 8.0 * (37.0 * x.sigma_u2 * x.l * x.f0 / (m * k * t)).sqrt() + 288.0 * x.l * x.f0 / t * (n.powf(2.0 / 3.0) / m).max(1.0);
        prop_assert!(rel_close(corollary_4_6_bound(&x), want, 1e-12), "corollary {} vs (4.6) {}", corollary_4_6_bound(&x), want);
        prop_assert!(rel_close(ScaffoldClaim::SpecialScaffold.bound(&x), want, 1e-12));
        prop_assert!(rel_close(ScaffoldClaim::Corollary46.bound(&ClaimInputs { b2: None, ..x }), want, 1e-12), "b^2 must not enter");
    }

    /// The improvement claim of section 4.3.1 (000:L653-661): (4.6)'s `max(1, n^(2/3)/m)` is at
    /// most (4.7)'s `(n/m)^(2/3)` for every 1 <= m <= n, with equality at m = 1 and m = n; the
    /// factor is exactly 1 from m >= n^(2/3) on.
    #[test]
    fn rate_4_6_improves_on_4_7(n in 1usize..5000, frac in 0.0f64..1.0) {
        let m = 1 + ((n - 1) as f64 * frac) as usize;
        let (a, b) = (rate_4_6_factor(n, m), rate_4_7_factor(n, m));
        prop_assert!(a <= b * (1.0 + 1e-12), "(4.6) factor {} > (4.7) factor {} at n = {}, m = {}", a, b, n, m);
        prop_assert_eq!(a, participation_factor(n, m));
        if (m as f64) >= (n as f64).powf(2.0 / 3.0) {
            prop_assert_eq!(a, 1.0);
        } else {
            prop_assert!(rel_close(a, (n as f64).powf(2.0 / 3.0) / m as f64, 1e-15));
        }
        // The gain (4.7)/(4.6) is m^(1/3) below m = n^(2/3) and (n/m)^(2/3) above: at most n^(2/9).
        let gain = b / a;
        prop_assert!(gain <= (n as f64).powf(2.0 / 9.0) * (1.0 + 1e-9), "gain {} above n^(2/9)", gain);
    }
}

/// Negative control for `rate_4_6_improves_on_4_7`: swapping the factors must fail somewhere.
#[test]
fn rate_comparison_can_fail() {
    let swapped = (1..=100usize).flat_map(|n| (1..=n).map(move |m| (n, m))).any(|(n, m)| rate_4_7_factor(n, m) > rate_4_6_factor(n, m) * (1.0 + 1e-12));
    assert!(swapped, "(4.7) <= (4.6) everywhere would make the improvement test vacuous");
}
