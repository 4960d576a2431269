use nalgebra::{DMatrix, DVector, SymmetricEigen};
use serde::Serialize;

use super::instance::{Layout, QuadraticInstance};
use crate::engine::column_order::{dot, norm_squared, row_times, squared_distance};
use crate::error::{Error, Result};
use crate::prec;

/// The bounded-gradient-dissimilarity constant `b^2` of Assumption 2.3 (000:L83-88):
///
/// # Formula
/// `b^2 = sup_{u, v} (1/n) sum_i ||grad_u f_i(u, v_i)||^2 - ||grad_u f(u, v)||^2
///      = sup_{u, v} (1/n) sum_i ||grad_u f_i(u, v_i) - grad_u f(u, v)||^2`.
///
/// For quadratics the deviation `grad_u f_i - grad_u f` is affine in `(u, v)`:
/// `(A_i - Abar) u + B_i v_i - (1/n) sum_j B_j v_j - (g_{u,i} - gbar_u)`. Its squared norm has a
/// supremum only when the linear part vanishes, i.e. every `A_i` equals `Abar` and every `B_i = 0`
/// (n >= 2); then `b^2 = (1/n) sum_i ||g_{u,i} - gbar_u||^2` exactly.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BgdConstant {
    /// The supremum is finite and attained everywhere.
    Finite {
        /// `b^2`.
        b2: f64,
    },
    /// The supremum is infinite.
    Infinite {
        /// Why: which blocks make the deviation grow without bound.
        reason: String,
    },
}

impl BgdConstant {
    /// `b^2`, or `None` when the supremum is infinite.
    pub fn finite(&self) -> Option<f64> {
        match self {
            BgdConstant::Finite { b2 } => Some(*b2),
            BgdConstant::Infinite { .. } => None,
        }
    }
}

/// Every constant the claims use, computed exactly from the instance.
#[derive(Debug, Clone, Serialize)]
pub struct ProblemConstants {
    /// `L_u = max_i ||A_i||_2` (Assumption 2.1, 000:L68-73).
    pub l_u: f64,
    /// `L_v = max_i ||C_i||_2`.
    pub l_v: f64,
    /// `L_uv = L_vu = max_i ||B_i||_2`.
    pub l_uv: f64,
    /// `L = max{L_u, L_v, L_uv, L_vu}` (000:L73).
    pub l: f64,
    /// `min_i lambda_min(H_i)` (strong convexity of the clients; reported, not used by CCYW).
    pub mu: f64,
    /// `sigma_u^2 = tr S_u` (Assumption 2.2 with equality, 000:L75-81).
    pub sigma_u2: f64,
    /// `sigma_v^2 = tr S_v`.
    pub sigma_v2: f64,
    /// `b^2` of Assumption 2.3, finite or infinite.
    pub bgd: BgdConstant,
    /// `inf f` over `(u, v)`.
    pub f_star: f64,
    /// `F_0 = f(u^0, v^0) - inf f` (Table 1, 002:L77), as the quadratic form of `z^0 - z*`
    /// (`(1/n) sum_i d_i^T H_i d_i / 2`, `d = z^0 - z*`): accurate relative to itself when `z^0` is
    /// near `z*`.
    pub f0: f64,
    /// `B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2` (B^t of 000:L239 at t = 0; reading of I-CCYW5).
    pub b0: f64,
    /// `n ||grad_u f(u^0, v^0)||^2`: the literal reading of `B^0` printed at 000:L433 (I-CCYW5).
    pub b0_literal: f64,
    /// The minimizer `z* = [u*; v_1*; ...; v_n*]`.
    #[serde(skip)]
    pub minimizer: DVector<f64>,
}

/// Per-point gradient quantities of Table 1 (deterministic, at a given state).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GradientSummary {
    /// `||grad_u f(u, v)||^2`.
    pub g_u: f64,
    /// `(1/n) sum_i ||grad_{v_i} f_i(u, v_i)||^2`.
    pub g_v: f64,
    /// `(1/n) sum_i ||grad_u f_i(u, v_i)||^2 - ||grad_u f(u, v)||^2`: the BGD quantity at this point.
    pub dissimilarity: f64,
    /// `sum_i ||grad_u f_i(u, v_i)||^2` (B^t at a deterministic point, 000:L239).
    pub b_sum: f64,
    /// `f(u, v)`.
    pub objective: f64,
}

fn spectral_norm(m: &DMatrix<f64>) -> f64 {
    if m.nrows() == 0 || m.ncols() == 0 {
        return 0.0;
    }
    m.clone().svd(false, false).singular_values.max()
}

impl GradientSummary {
    /// Evaluates the gradient quantities at `state`.
    ///
    /// Each client's `H_i x - g_i` and `f_i(x) = x^T H_i x / 2 - g_i^T x` share one product
    /// `H_i x`, summed in nalgebra's order ([`row_times`], [`dot`]), and every sum over clients
    /// runs in client order: the bits of [`QuadraticInstance::local_gradient`] and
    /// [`QuadraticInstance::objective`], without a vector per client.
    pub fn at(inst: &QuadraticInstance, state: &DVector<f64>) -> Self {
        let Layout { n, du, dv } = inst.layout();
        let p = du + dv;
        let mut grads = vec![0.0; n * p];
        let (mut x, mut hx) = (vec![0.0; p], vec![0.0; p]);
        let mut objectives = Vec::with_capacity(n);
        for (i, client) in inst.clients().iter().enumerate() {
            let grad = &mut grads[i * p..(i + 1) * p];
            x[..du].copy_from_slice(&state.as_slice()[..du]);
            x[du..].copy_from_slice(&state.as_slice()[inst.layout().v_offset(i)..inst.layout().v_offset(i) + dv]);
            for r in 0..p {
                hx[r] = row_times(&client.hessian, r, |c| x[c]);
                grad[r] = hx[r] - client.linear[r];
            }
            objectives.push(0.5 * dot(&x, &hx) - dot(client.linear.as_slice(), &x));
        }
        let clients = || (0..n).map(|i| &grads[i * p..(i + 1) * p]);
        let mut mean_u = vec![0.0; du];
        for g in clients() {
            for (m, v) in mean_u.iter_mut().zip(g) {
                *m += v;
            }
        }
        mean_u.iter_mut().for_each(|m| *m /= n as f64);
        let sum_sq_u: f64 = clients().map(|g| norm_squared(&g[..du])).sum();
        let sum_sq_v: f64 = clients().map(|g| norm_squared(&g[du..])).sum();
        // The spread about the mean directly: no cancellation of mean-of-squares minus square-of-mean.
        let mut diff = vec![0.0; du];
        let spread: f64 = clients().map(|g| squared_distance(&g[..du], &mean_u, &mut diff)).sum();
        let objective = objectives.into_iter().sum::<f64>() / n as f64;
        Self { g_u: norm_squared(&mean_u), g_v: sum_sq_v / n as f64, dissimilarity: spread / n as f64, b_sum: sum_sq_u, objective }
    }
}

impl ProblemConstants {
    /// Computes every constant of the instance.
    ///
    /// # Errors
    /// [`Error::Instance`] when `f` has no unique minimizer (its Hessian over `(u, v)` is not
    /// positive definite), so that `inf f` and `F_0` are not finite or not attained.
    pub fn compute(inst: &QuadraticInstance) -> Result<Self> {
        let layout = inst.layout();
        let Layout { n, du, dv } = layout;
        let mut l_u: f64 = 0.0;
        let mut l_v: f64 = 0.0;
        let mut l_uv: f64 = 0.0;
        let mut mu = f64::INFINITY;
        for c in inst.clients() {
            let h = &c.hessian;
            l_u = l_u.max(spectral_norm(&h.view((0, 0), (du, du)).into_owned()));
            l_v = l_v.max(spectral_norm(&h.view((du, du), (dv, dv)).into_owned()));
            l_uv = l_uv.max(spectral_norm(&h.view((0, du), (du, dv)).into_owned()));
            mu = mu.min(SymmetricEigen::new(h.clone()).eigenvalues.min());
        }
        let l = l_u.max(l_v).max(l_uv);

        let minimizer = joint_minimizer(inst)?;
        let f_star = inst.objective(&minimizer);
        let z0 = inst.initial_state();
        let f0 = excess_objective(inst, &(z0 - &minimizer));
        let at0 = GradientSummary::at(inst, z0);

        for (name, v) in [("F0 = f(z^0) - inf f", f0), ("B^0", at0.b_sum), ("L", l)] {
            if !v.is_finite() {
                return Err(Error::Instance(format!(
                    "{name} is {v} (the instance's numbers overflow double precision); scale the matrices or the initial point down"
                )));
            }
        }
        Ok(Self {
            l_u,
            l_v,
            l_uv,
            l,
            mu,
            sigma_u2: inst.noise_u_cov().trace(),
            sigma_v2: inst.noise_v_cov().trace(),
            bgd: bgd_constant(inst),
            f_star,
            f0: f0.max(0.0),
            b0: at0.b_sum,
            b0_literal: n as f64 * at0.g_u,
            minimizer,
        })
    }
}

/// `f(z* + d) - f(z*)` for the minimizer `z*` and a displacement `d`.
///
/// # Formula
/// `grad f(z*) = 0` and `f` is quadratic, so `f(z* + d) - f(z*) = (1/n) sum_i d_i^T H_i d_i / 2`
/// with `d_i = [d_u; d_{v_i}]` exactly. Formed from `d` itself, the difference is accurate
/// relative to its own size; `f(z^0) - f(z*)` as the difference of two objective values would
/// lose every digit above `eps |f(z*)| / F_0` (about 1e-5 relative at `F_0 = 1e-11`).
/// It is `d^T H d / (2 n)` for the positive definite joint Hessian `H`, so not negative; a
/// client's `H_i` alone may be indefinite, so the caller reads a negative rounding as 0 (after
/// the finiteness check, which sees a NaN first).
fn excess_objective(inst: &QuadraticInstance, d: &DVector<f64>) -> f64 {
    let n = inst.layout().n;
    let sum: f64 = inst
        .clients()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let di = inst.local_point(d, i);
            0.5 * di.dot(&(&c.hessian * &di))
        })
        .sum();
    sum / n as f64
}

/// `z* = argmin f` over `z = [u; v_1; ...; v_n]`, by eliminating each `v_i` (the joint Hessian
/// of `n f` is an arrow, `[[sum_i A_i, B_1 .. B_n], [B_i^T, diag(C_i)]]`, with linear term
/// `[sum_i g_{u,i}; g_{v,1}; ..; g_{v,n}]`, so its Cholesky factor in the order `v_1, ..., v_n, u`
/// has no fill-in).
///
/// # Formula
/// With `C_i = L_i L_i^T`, `Y_i = L_i^{-1} B_i^T` and `y_i = L_i^{-1} g_{v,i}`:
/// `S = sum_i A_i - sum_i Y_i^T Y_i` (the Hessian of `n f` over `u` with every `v_i` minimized
/// out), `S u* = sum_i g_{u,i} - sum_i Y_i^T y_i`, and `v_i* = L_i^{-T} (y_i - Y_i u*)`.
/// `n (du + dv)^3 + du^3` flops and no `(du + n dv)^2` matrix. The joint Hessian is positive
/// definite exactly when every `C_i` and `S` are, so a failed factorization names the block
/// whose smallest eigenvalue is not positive. `A_i`, `B_i^T` and `C_i` are read from the
/// lower triangle of `H_i`, as a factorization of the assembled joint Hessian would.
///
/// # Errors
/// [`Error::Instance`] when the joint Hessian is not positive definite.
fn joint_minimizer(inst: &QuadraticInstance) -> Result<DVector<f64>> {
    let Layout { du, dv, .. } = inst.layout();
    let not_unique = |block: String, m: DMatrix<f64>| {
        let min = SymmetricEigen::new(m.lower_triangle() + m.lower_triangle().transpose() - DMatrix::from_diagonal(&m.diagonal())).eigenvalues.min();
        Error::Instance(format!(
            "the Hessian of f over (u, v) is not positive definite: {block} has smallest eigenvalue {min:.6e} <= 0, so inf f is \
             not attained at a unique point (F0 would be infinite or undefined); every claim needs a finite F0"
        ))
    };
    let mut schur = DMatrix::zeros(du, du);
    let mut rhs = DVector::zeros(du);
    let mut eliminated = Vec::with_capacity(inst.clients().len());
    for (i, c) in inst.clients().iter().enumerate() {
        let h = &c.hessian;
        schur += h.view((0, 0), (du, du)).lower_triangle();
        rhs += c.linear.rows(0, du);
        let c_i = h.view((du, du), (dv, dv)).into_owned();
        let chol = if dv == 0 { None } else { Some(c_i.clone().cholesky().ok_or_else(|| not_unique(format!("client {i}'s block C_i over v_i"), c_i))?) };
        let (mut y_b, mut y_g) = (h.view((du, 0), (dv, du)).into_owned(), c.linear.rows(du, dv).into_owned());
        if let Some(ch) = &chol {
            ch.l_dirty().solve_lower_triangular_mut(&mut y_b);
            ch.l_dirty().solve_lower_triangular_mut(&mut y_g);
        }
        schur -= (y_b.transpose() * &y_b).lower_triangle();
        rhs -= y_b.transpose() * &y_g;
        eliminated.push((chol, y_b, y_g));
    }
    let u = if du == 0 {
        DVector::zeros(0)
    } else {
        let full = &schur + schur.transpose() - DMatrix::from_diagonal(&schur.diagonal());
        let ch = full
            .clone()
            .cholesky()
            .ok_or_else(|| not_unique("the Hessian over u with every v_i minimized out, sum_i A_i - sum_i B_i C_i^{-1} B_i^T,".into(), full))?;
        ch.solve(&rhs)
    };
    let mut z = DVector::zeros(inst.layout().state_dim());
    z.rows_mut(0, du).copy_from(&u);
    for (i, (chol, y_b, y_g)) in eliminated.into_iter().enumerate() {
        if let Some(ch) = chol {
            let mut v = y_g - y_b * &u;
            ch.l_dirty().tr_solve_lower_triangular_mut(&mut v);
            z.rows_mut(inst.layout().v_offset(i), dv).copy_from(&v);
        }
    }
    Ok(z)
}

fn bgd_constant(inst: &QuadraticInstance) -> BgdConstant {
    let Layout { n, du, dv } = inst.layout();
    if du == 0 {
        return BgdConstant::Finite { b2: 0.0 };
    }
    let clients = inst.clients();
    let a_mean = clients.iter().fold(DMatrix::zeros(du, du), |acc, c| acc + c.hessian.view((0, 0), (du, du))) / n as f64;
    let g_mean = clients.iter().fold(DVector::zeros(du), |acc, c| acc + c.linear.rows(0, du)) / n as f64;
    // Each test is relative to the blocks it compares: a floor of 1 had made it absolute, and
    // u-blocks of 1e-12 that differ by half were read as identical (a finite b^2 for an infinite
    // one); so would u-blocks of 1e-13 beside v-blocks of 1 against the whole Hessian's scale.
    let u_scale = clients.iter().map(|c| c.hessian.view((0, 0), (du, du)).amax()).fold(0.0, f64::max);
    let scale = clients.iter().map(|c| c.hessian.amax()).fold(0.0, f64::max);
    let a_dev = clients.iter().map(|c| spectral_norm(&(c.hessian.view((0, 0), (du, du)) - &a_mean))).fold(0.0, f64::max);
    // For n = 1 the v-part of the deviation is B_1 v_1 - B_1 v_1 = 0.
    let b_norm = if n >= 2 { clients.iter().map(|c| spectral_norm(&c.hessian.view((0, du), (du, dv)).into_owned())).fold(0.0, f64::max) } else { 0.0 };
    let (a_tol, tol) = (prec::ABSOLUTE_ZERO * u_scale, prec::ABSOLUTE_ZERO * scale);
    if a_dev <= a_tol && b_norm <= tol {
        let b2 = clients.iter().map(|c| (c.linear.rows(0, du) - &g_mean).norm_squared()).sum::<f64>() / n as f64;
        return BgdConstant::Finite { b2 };
    }
    let mut parts = Vec::new();
    if a_dev > a_tol {
        parts.push(format!("the u-blocks A_i differ (max_i ||A_i - mean A|| = {a_dev:.4e}), so the dissimilarity grows like ||u||^2"));
    }
    if b_norm > tol {
        parts.push(format!("u and v are coupled (max_i ||B_i|| = {b_norm:.4e}), so the dissimilarity grows like ||v_i||^2"));
    }
    BgdConstant::Infinite { reason: parts.join("; ") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::ccyw::problem::{Coupling, InstanceSpec};

    /// The summary by nalgebra's vector expressions, one vector per client.
    fn by_nalgebra(inst: &QuadraticInstance, state: &DVector<f64>) -> GradientSummary {
        let Layout { n, du, .. } = inst.layout();
        let grads: Vec<DVector<f64>> = (0..n).map(|i| inst.local_gradient(i, &inst.local_point(state, i))).collect();
        let mean_u = grads.iter().fold(DVector::zeros(du), |acc, g| acc + g.rows(0, du)) / n as f64;
        let sum_sq_u: f64 = grads.iter().map(|g| g.rows(0, du).norm_squared()).sum();
        let sum_sq_v: f64 = grads.iter().map(|g| g.rows(du, g.len() - du).norm_squared()).sum();
        let spread: f64 = grads.iter().map(|g| (g.rows(0, du) - &mean_u).norm_squared()).sum();
        GradientSummary {
            g_u: mean_u.norm_squared(),
            g_v: sum_sq_v / n as f64,
            dissimilarity: spread / n as f64,
            b_sum: sum_sq_u,
            objective: inst.objective(state),
        }
    }

    /// The joint system `H z = g` of `n f`, assembled densely (see [`joint_minimizer`]).
    fn assembled(inst: &QuadraticInstance) -> (DMatrix<f64>, DVector<f64>) {
        let dim = inst.layout().state_dim();
        let (mut h, mut g) = (DMatrix::zeros(dim, dim), DVector::zeros(dim));
        for (i, c) in inst.clients().iter().enumerate() {
            let idx: Vec<usize> = inst.layout().local_coordinates(i).collect();
            for (r, &pr) in idx.iter().enumerate() {
                for (k, &pk) in idx.iter().enumerate() {
                    h[(pr, pk)] += c.hessian[(r, k)];
                }
                g[pr] += c.linear[r];
            }
        }
        (h, g)
    }

    #[test]
    fn the_eliminated_minimizer_solves_the_assembled_system() {
        for (n, du, dv, coupling) in [
            (10, 5, 5, Coupling::Coupled),
            (7, 3, 2, Coupling::Decoupled),
            (4, 0, 2, Coupling::Coupled),
            (6, 3, 0, Coupling::Coupled),
            (1, 2, 3, Coupling::Coupled),
        ] {
            let b = if du == 0 || n == 1 { 0.0 } else { 1.0 };
            let inst = InstanceSpec { n, du, dv, l: 1.0, mu: 0.05, sigma_u: 0.5, sigma_v: 0.5, b, coupling, init_distance: 3.0, seed: 9 }.build().unwrap();
            let (h, g) = assembled(&inst);
            let z = joint_minimizer(&inst).unwrap();
            let dense = h.clone().lu().solve(&g).unwrap();
            let eig = SymmetricEigen::new(h.clone()).eigenvalues;
            let cond = eig.max() / eig.min();
            let err = (&z - &dense).norm();
            assert!(err <= 1e-13 * cond * dense.norm().max(1.0), "n {n}, du {du}, dv {dv}: {err:e}");
            assert!((&h * &z - &g).norm() <= 1e-12 * cond * g.norm().max(1.0), "n {n}, du {du}, dv {dv}: residual");
            // Negative control: one client's v-block left out of the elimination misses the solution.
            let mut wrong = z.clone();
            wrong.rows_mut(inst.layout().v_offset(n - 1), dv).fill(0.0);
            assert!(dv == 0 || (&wrong - &dense).norm() > 1e-6 * dense.norm(), "n {n}, du {du}, dv {dv}: the control");
        }
    }

    /// `f = (z1^2 + z2^2) - 2 (z1 + z2)` (one client, `du = dv = 1`, `H = 2 I`, `g = [2; 2]`):
    /// `z* = [1; 1]`, `f(z*) = -2`, and from `z^0 = z* + [delta; 0]`, `F_0 = delta^2` exactly.
    #[test]
    fn f0_near_zero_is_accurate_relative_to_itself() {
        let one_plus = 1.0 + 1e-7;
        let delta: f64 = one_plus - 1.0; // exact (Sterbenz)
        let explicit = crate::families::ccyw::problem::ExplicitInstance {
            du: 1,
            dv: 1,
            noise_u_cov: vec![vec![0.0]],
            noise_v_cov: vec![vec![0.0]],
            u0: vec![one_plus],
            clients: vec![crate::families::ccyw::problem::ExplicitClient {
                hessian: vec![vec![2.0, 0.0], vec![0.0, 2.0]],
                linear: vec![2.0, 2.0],
                v0: vec![1.0],
            }],
        };
        let inst = explicit.build().unwrap();
        let c = ProblemConstants::compute(&inst).unwrap();
        let want = delta * delta;
        // z* is rounded (a few eps against d = 1e-7: about 1e-9 of F_0).
        assert!((c.f0 - want).abs() <= 1e-8 * want, "F0 = {:e}, delta^2 = {want:e}", c.f0);
        // Negative control: the difference of the two objective values has lost digits.
        let difference = inst.objective(inst.initial_state()) - c.f_star;
        assert!((difference - want).abs() > 1e-4 * want, "the control: {difference:e}");
    }

    #[test]
    fn a_hessian_that_is_not_positive_definite_names_its_block() {
        let inst =
            InstanceSpec { n: 3, du: 2, dv: 2, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b: 1.0, coupling: Coupling::Coupled, init_distance: 3.0, seed: 4 }
                .build()
                .unwrap();
        let explicit = crate::families::ccyw::problem::ExplicitInstance::from_instance(&inst);
        assert!(ProblemConstants::compute(&explicit.build().unwrap()).is_ok(), "the control: the instance as built is positive definite");
        // Client 1's v-block made indefinite.
        let mut bad_v = explicit.clone();
        bad_v.clients[1].hessian[3][3] = -1.0;
        let message = ProblemConstants::compute(&bad_v.build().unwrap()).unwrap_err().to_string();
        assert!(message.contains("client 1's block C_i over v_i") && message.contains("not attained"), "{message}");
        // Every v-block positive definite, the u-part after eliminating them not: A_i -> -A_i.
        let mut bad_u = explicit;
        for c in &mut bad_u.clients {
            for r in 0..2 {
                for k in 0..2 {
                    c.hessian[r][k] = -c.hessian[r][k];
                }
            }
        }
        let message = ProblemConstants::compute(&bad_u.build().unwrap()).unwrap_err().to_string();
        assert!(message.contains("every v_i minimized out") && message.contains("<= 0"), "{message}");
    }

    fn bits(s: &GradientSummary) -> [u64; 5] {
        [s.g_u, s.g_v, s.dissimilarity, s.b_sum, s.objective].map(f64::to_bits)
    }

    #[test]
    fn the_summary_has_the_bits_of_the_vector_expressions() {
        for (n, du, dv, coupling) in [
            (10, 5, 5, Coupling::Decoupled),
            (7, 3, 2, Coupling::Coupled),
            (4, 0, 2, Coupling::Decoupled),
            (6, 3, 0, Coupling::Decoupled),
            (3, 9, 4, Coupling::Coupled),
        ] {
            let b = if du == 0 { 0.0 } else { 1.0 };
            let inst = InstanceSpec { n, du, dv, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b, coupling, init_distance: 3.0, seed: 5 }.build().unwrap();
            let dim = inst.layout().state_dim();
            let state = DVector::from_fn(dim, |r, _| ((r * 5) as f64 * 0.61).sin() * 10f64.powi(r as i32 % 4 - 2));
            let want = by_nalgebra(&inst, &state);
            assert_eq!(bits(&GradientSummary::at(&inst, &state)), bits(&want), "n {n}, du {du}, dv {dv}");
            // Negative control: the dissimilarity as mean of squares minus square of the mean
            // (the cancelling form) differs in bits.
            let cancelling = want.b_sum / n as f64 - want.g_u;
            assert!(du == 0 || cancelling.to_bits() != want.dissimilarity.to_bits(), "n {n}, du {du}, dv {dv}: the control");
        }
    }
}
