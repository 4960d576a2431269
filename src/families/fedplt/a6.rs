//! Assumption 6 "for all W" (001:L151-155), decided exactly on the quadratic instances.
//!
//! With `x = W - W*`, `b_k = W* - a_k` and `M = diag(m_k)`, client `k`'s ratio is
//! `rho_k(W) = N(x) / D(x)`, `N(x) = x^T M H_k (x + b_k)`, `D(x) = x^T H_k (x + b_k)`.
//!
//! Where `N = D = 0` the ratio is `0/0`: at `W = W*` for every client, and at `W = a_k` (the
//! gradient vanishes) and wherever `<grad F_k(W), W - W*> = 0` with a full mask. The assumption
//! is read there as the proof uses it, `N >= rho_ D` (001:L396-404), which `0/0` points meet: they
//! are excluded, as the paper itself must exclude `W*` (an implicit reading, said in the verdict).
//!
//! - A full mask: `N = D`, so `rho_k = 1` wherever it is defined: A6 holds for the client,
//!   whatever its optimum.
//! - A proper mask (`m_j = 0` for some `j`): at `x = t e_j` the numerator is `t e_j^T M (...) = 0`
//!   while `D = t (t H_jj + (H_k b_k)_j) > 0` for `t > |(H_k b_k)_j| / H_jj`, so `rho_k = 0`, not
//!   `> 0`: A6 fails. With a shared optimum (`b_k = 0`) the witness is sharper: `N(x) = x^T S x`
//!   with `S = (M H_k + H_k M) / 2` (a quadratic form sees only the symmetric part), `S_jj = 0` so
//!   `lambda_min(S) <= 0`, and its unit eigenvector `v` gives `rho_k(W* + v) = lambda_min(S) /
//!   v^T H_k v <= 0`: strictly negative when `H_k` couples a trained with an untrained coordinate.
//!
//! No search is needed: every case is decided in closed form.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use serde::Serialize;

use super::problem::Instance;

/// The exact decision of A6 over all `W` (`0/0` points excluded, see the module).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum A6ForAllW {
    /// `rho_k(W) > 0` for every client wherever it is defined; the smallest `lambda_min(S_k)`
    /// (`S_k = H_k` for a full mask).
    Holds { lambda_min: f64 },
    /// A6 fails at `W = W* + x` for client `k`, where `rho_k = rho <= 0`; `lambda_min(S_k)` when the
    /// client's optimum is `W*` (the witness is its eigenvector), `None` when it is not (the
    /// witness is a coordinate the mask leaves out, where `rho_k = 0`).
    Fails { client: usize, x: Vec<f64>, rho: f64, lambda_min: Option<f64> },
}

/// `lambda_min` of the symmetric part of `diag(m) H` and its unit eigenvector.
pub fn masked_symmetric_min(mask: &DVector<f64>, h: &DMatrix<f64>) -> (f64, DVector<f64>) {
    let mh = DMatrix::from_diagonal(mask) * h;
    let s = (&mh + mh.transpose()) * 0.5;
    let eig = SymmetricEigen::new(s);
    let i = eig.eigenvalues.imin();
    (eig.eigenvalues[i], eig.eigenvectors.column(i).into_owned())
}

/// Decides A6 for all `W` on `inst` with global minimizer `w_star` (module docs): the first
/// client (in order) where it fails, with its witness, else the smallest `lambda_min(S_k)`.
pub fn decide(inst: &Instance, w_star: &DVector<f64>) -> A6ForAllW {
    let mut smallest = f64::INFINITY;
    for k in 0..inst.clients() {
        let (mask, h) = (&inst.masks[k], &inst.hessians[k]);
        let b = w_star - &inst.optima[k];
        // Relative to the optima themselves: at a small scale (optima of 1e-13 that differ by
        // 1e-13) the clients do not share an optimum.
        let shared = b.norm() <= super::prec::SHARED_OPTIMUM * w_star.norm().max(inst.optima[k].norm());
        let left_out = mask.iter().position(|m| *m == 0.0);
        if let (Some(j), false) = (left_out, shared) {
            let t = 2.0 * (h * &b)[j].abs() / h[(j, j)] + 1.0;
            let x = DVector::from_fn(w_star.len(), |i, _| if i == j { t } else { 0.0 });
            return A6ForAllW::Fails { client: k, x: x.iter().copied().collect(), rho: 0.0, lambda_min: None };
        }
        let (lambda, v) = masked_symmetric_min(mask, h);
        if lambda <= super::prec::A6_EIGEN_ZERO * h.norm() {
            let rho = lambda / v.dot(&(h * &v));
            return A6ForAllW::Fails { client: k, x: v.iter().copied().collect(), rho, lambda_min: Some(lambda) };
        }
        smallest = smallest.min(lambda);
    }
    A6ForAllW::Holds { lambda_min: smallest }
}

impl A6ForAllW {
    /// Whether A6 holds for all `W`.
    pub fn holds(&self) -> bool {
        matches!(self, A6ForAllW::Holds { .. })
    }

    /// One line: the decision and why.
    pub fn describe(&self) -> String {
        use crate::claim::fmt_num;
        match self {
            A6ForAllW::Holds { lambda_min } => format!(
                "holds: lambda_min(sym(m_k .* H_k)) >= {} > 0 for every client (a full mask: rho_k = 1 wherever defined); 0/0 points (W = W*, W = a_k) excluded, N >= rho_ D as the proof uses it",
                fmt_num(*lambda_min)
            ),
            A6ForAllW::Fails { client, lambda_min: None, .. } => {
                format!("fails: client {client}'s optimum is not W* and its mask leaves out a coordinate j: at W = W* + t e_j, <m_k .* grad F_k, W - W*> = 0 < <grad F_k, W - W*>, rho_k = 0")
            }
            A6ForAllW::Fails { client, rho, lambda_min, .. } => format!(
                "fails: client {client} has lambda_min(sym(m_k .* H_k)) = {} <= 0; rho_k = {} at W* + its eigenvector",
                lambda_min.map_or("-".into(), fmt_num),
                fmt_num(*rho)
            ),
        }
    }
}

/// Assumption 6 where Case 2's run settles: with vanishing steps the iterates `W_k^t` tend to the
/// small-step limit `W_lim`, so where `W_lim != W*` the ratios `rho_k^t` (001:L392) tend to
/// `rho_k(W_lim) = <m_k .* g_k, x> / <g_k, x>`, `g_k = H_k (W_lim - a_k)`, `x = W_lim - W*`, and
/// `rho_ = min_{k, t in N} rho_k^t > 0` (001:L396) needs `rho_k(W_lim) > 0` for every client: a
/// finite run sees only how far the ratios have fallen so far.
///
/// `W_lim` comes from a linear solve accurate to the row's allowance (see
/// [`LIMIT_SOLVE_ROUNDING`](super::prec::LIMIT_SOLVE_ROUNDING)), so a numerator or denominator
/// within what that rounding moves it by is 0 ([`at_limit`]): such a ratio is not `> 0`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LimitAlignment {
    /// The client of the smallest ratio (the first whose ratio is not `> 0`, if any).
    pub client: usize,
    /// `rho_k(W_lim)`: 0 when its numerator is 0 to rounding, NaN when its denominator is (then
    /// the ratios' limit is not decided); 1 when every mask is full.
    pub rho: f64,
}

impl LimitAlignment {
    /// Whether every `rho_k(W_lim) > 0`.
    pub fn holds(&self) -> bool {
        self.rho > 0.0
    }
}

/// [`LimitAlignment`] of `inst` at `w_lim`, with `w_lim` accurate to `rounding` (absolute). A
/// full mask has `rho_k = 1` wherever it is defined (its numerator is its denominator), so only
/// proper masks are computed. Each side `<v, x>` (`v` the gradient or its masked part) is 0 when
/// within what the rounding of `w_lim` moves it by: `||x|| ||H_k|| rounding` through `v` and
/// `||v|| rounding` through `x` (a client alone at its masked limit has `m_k .* g_k = 0` in real
/// arithmetic and 1e-17 in floating point).
pub fn at_limit(inst: &Instance, w_lim: &DVector<f64>, w_star: &DVector<f64>, rounding: f64) -> LimitAlignment {
    let x = w_lim - w_star;
    let mut smallest = LimitAlignment { client: 0, rho: 1.0 };
    for k in (0..inst.clients()).filter(|k| inst.masks[*k].iter().any(|m| *m == 0.0)) {
        let h = &inst.hessians[k];
        let g = h * (w_lim - &inst.optima[k]);
        let masked = g.component_mul(&inst.masks[k]);
        let through_v = x.norm() * h.norm() * rounding;
        let side = |v: &DVector<f64>| {
            let value = v.dot(&x);
            if value.abs() <= through_v + v.norm() * rounding {
                0.0
            } else {
                value
            }
        };
        let (numerator, denominator) = (side(&masked), side(&g));
        let here = LimitAlignment { client: k, rho: if denominator == 0.0 { f64::NAN } else { numerator / denominator } };
        if !here.holds() {
            return here;
        }
        if here.rho < smallest.rho {
            smallest = here;
        }
    }
    smallest
}
