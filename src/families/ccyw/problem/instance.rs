use nalgebra::{DMatrix, DVector, SymmetricEigen};
use serde::{Deserialize, Serialize};

use crate::error::{require_all_finite, Error, Result};
use crate::prec;

/// Sizes of the problem and the layout of the flat state vector `z = [u; v_1; ...; v_n]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Number of clients `n`.
    pub n: usize,
    /// Dimension of the shared variable `u` (0 removes it: problem (2.2)).
    pub du: usize,
    /// Dimension of each personal variable `v_i` (0 removes them: problem (2.1), FedAvg).
    pub dv: usize,
}

impl Layout {
    /// Local dimension `du + dv` of one client's variable `[u; v_i]`.
    pub fn local_dim(&self) -> usize {
        self.du + self.dv
    }
    /// Dimension `du + n dv` of the full state.
    pub fn state_dim(&self) -> usize {
        self.du + self.n * self.dv
    }
    /// Offset of `v_i` in the state vector.
    pub fn v_offset(&self, i: usize) -> usize {
        self.du + i * self.dv
    }
    /// The state coordinates of client `i`'s local variable `[u; v_i]`, in that order.
    pub fn local_coordinates(&self, i: usize) -> impl Iterator<Item = usize> {
        (0..self.du).chain(self.v_offset(i)..self.v_offset(i) + self.dv)
    }
}

/// One client's quadratic `1/2 x^T H x - g^T x` over `x = [u; v_i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientQuadratic {
    /// Symmetric Hessian `H_i`, `(du+dv) x (du+dv)`.
    pub hessian: DMatrix<f64>,
    /// Linear term `g_i`.
    pub linear: DVector<f64>,
}

/// A validated instance: client quadratics, noise covariances, and the initial point.
#[derive(Debug, Clone)]
pub struct QuadraticInstance {
    layout: Layout,
    clients: Vec<ClientQuadratic>,
    noise_u_cov: DMatrix<f64>,
    noise_v_cov: DMatrix<f64>,
    /// Block-diagonal factor `R = diag(R_u, R_v)` with `R R^T = diag(S_u, S_v)`.
    noise_factor: DMatrix<f64>,
    initial_state: DVector<f64>,
}

fn check_symmetric(field: &str, m: &DMatrix<f64>, dim: usize) -> Result<()> {
    if m.nrows() != dim || m.ncols() != dim {
        return Err(Error::field(field, format!("matrix is {}x{}", m.nrows(), m.ncols()), format!("a {dim}x{dim} matrix")));
    }
    require_all_finite(m.iter(), |k| format!("{field}[{}][{}]", k % dim, k / dim))?;
    // Relative to the matrix's own scale (no floor of 1: a matrix of entries near 1e-12 is
    // judged at its own scale, not called symmetric for any difference below 1e-9).
    let scale = m.amax();
    for r in 0..dim {
        for c in 0..r {
            if (m[(r, c)] - m[(c, r)]).abs() > prec::RELATIVE_IDENTITY * scale {
                return Err(Error::field(
                    field,
                    format!("not symmetric: entry [{r}][{c}] = {} but [{c}][{r}] = {}", m[(r, c)], m[(c, r)]),
                    "a symmetric matrix",
                ));
            }
        }
    }
    Ok(())
}

/// Symmetric square root factor of a PSD covariance, or an error naming `field`.
fn psd_factor(field: &str, cov: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let dim = cov.nrows();
    if dim == 0 {
        return Ok(DMatrix::zeros(0, 0));
    }
    let sym = (cov + cov.transpose()) * 0.5;
    let eig = SymmetricEigen::new(sym);
    // Rounding of the eigenvalues is relative to the largest; no absolute floor, which would call
    // a covariance of scale 1e-12 with an eigenvalue of -1e-10 positive semidefinite.
    let floor = -prec::RELATIVE_IDENTITY * eig.eigenvalues.amax();
    let min = eig.eigenvalues.min();
    if min < floor {
        return Err(Error::field(field, format!("covariance has eigenvalue {min:.6e} < 0"), "a positive semidefinite matrix"));
    }
    let sqrt = eig.eigenvalues.map(|l| l.max(0.0).sqrt());
    Ok(&eig.eigenvectors * DMatrix::from_diagonal(&sqrt) * eig.eigenvectors.transpose())
}

impl QuadraticInstance {
    /// Validates and assembles an instance.
    ///
    /// # Errors
    /// Names the field when a matrix has the wrong size, is not symmetric, has a non-finite entry,
    /// or a covariance is not PSD; when `n = 0`; or when `du + dv = 0`.
    pub fn new(
        layout: Layout,
        clients: Vec<ClientQuadratic>,
        noise_u_cov: DMatrix<f64>,
        noise_v_cov: DMatrix<f64>,
        initial_state: DVector<f64>,
    ) -> Result<Self> {
        if layout.n == 0 {
            return Err(Error::field("n", "got 0", "an integer >= 1"));
        }
        if layout.local_dim() == 0 {
            return Err(Error::field("du + dv", "got 0", "du + dv >= 1"));
        }
        if clients.len() != layout.n {
            return Err(Error::field("clients", format!("{} clients given", clients.len()), format!("exactly n = {} clients", layout.n)));
        }
        let d = layout.local_dim();
        for (i, c) in clients.iter().enumerate() {
            check_symmetric(&format!("clients[{i}].hessian"), &c.hessian, d)?;
            if c.linear.len() != d {
                return Err(Error::field(format!("clients[{i}].linear"), format!("length {}", c.linear.len()), format!("a vector of length du + dv = {d}")));
            }
            require_all_finite(c.linear.iter(), |k| format!("clients[{i}].linear[{k}]"))?;
        }
        check_symmetric("noise_u_cov", &noise_u_cov, layout.du)?;
        check_symmetric("noise_v_cov", &noise_v_cov, layout.dv)?;
        let ru = psd_factor("noise_u_cov", &noise_u_cov)?;
        let rv = psd_factor("noise_v_cov", &noise_v_cov)?;
        let mut noise_factor = DMatrix::zeros(d, d);
        noise_factor.view_mut((0, 0), (layout.du, layout.du)).copy_from(&ru);
        noise_factor.view_mut((layout.du, layout.du), (layout.dv, layout.dv)).copy_from(&rv);
        if initial_state.len() != layout.state_dim() {
            return Err(Error::field("initial point", format!("length {}", initial_state.len()), format!("du + n dv = {}", layout.state_dim())));
        }
        require_all_finite(initial_state.iter(), |k| format!("initial point[{k}]"))?;
        Ok(Self { layout, clients, noise_u_cov, noise_v_cov, noise_factor, initial_state })
    }

    /// Sizes and state layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// The client quadratics.
    pub fn clients(&self) -> &[ClientQuadratic] {
        &self.clients
    }
    /// `S_u`.
    pub fn noise_u_cov(&self) -> &DMatrix<f64> {
        &self.noise_u_cov
    }
    /// `S_v`.
    pub fn noise_v_cov(&self) -> &DMatrix<f64> {
        &self.noise_v_cov
    }
    /// `R = diag(R_u, R_v)`: a client's gradient noise is `R z` with `z ~ N(0, I_{du+dv})`.
    pub fn noise_factor(&self) -> &DMatrix<f64> {
        &self.noise_factor
    }
    /// `z^0 = [u^0; v_1^0; ...; v_n^0]`.
    pub fn initial_state(&self) -> &DVector<f64> {
        &self.initial_state
    }
    /// True when both noise covariances are zero (gradients are exact).
    pub fn is_noiseless(&self) -> bool {
        self.noise_factor.iter().all(|x| *x == 0.0)
    }

    /// Client `i`'s local variable `[u; v_i]` read from the state.
    pub fn local_point(&self, state: &DVector<f64>, i: usize) -> DVector<f64> {
        let Layout { du, dv, .. } = self.layout;
        let mut x = DVector::zeros(du + dv);
        x.rows_mut(0, du).copy_from(&state.rows(0, du));
        x.rows_mut(du, dv).copy_from(&state.rows(self.layout.v_offset(i), dv));
        x
    }

    /// `grad f_i(x) = H_i x - g_i` at client `i`'s local point `x = [u; v_i]`.
    pub fn local_gradient(&self, i: usize, x: &DVector<f64>) -> DVector<f64> {
        &self.clients[i].hessian * x - &self.clients[i].linear
    }

    /// `f(u, v) = (1/n) sum_i f_i(u, v_i)` (problem (1.1), 000:L15-18).
    pub fn objective(&self, state: &DVector<f64>) -> f64 {
        let n = self.layout.n;
        (0..n)
            .map(|i| {
                let x = self.local_point(state, i);
                let c = &self.clients[i];
                0.5 * x.dot(&(&c.hessian * &x)) - c.linear.dot(&x)
            })
            .sum::<f64>()
            / n as f64
    }
}

/// An instance written out with explicit matrices (the scenario-file form).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExplicitInstance {
    /// Dimension of `u`.
    pub du: usize,
    /// Dimension of each `v_i`.
    pub dv: usize,
    /// `S_u`, `du x du` (rows).
    pub noise_u_cov: Vec<Vec<f64>>,
    /// `S_v`, `dv x dv` (rows).
    pub noise_v_cov: Vec<Vec<f64>>,
    /// `u^0`.
    pub u0: Vec<f64>,
    /// One entry per client.
    pub clients: Vec<ExplicitClient>,
}

/// One client of an [`ExplicitInstance`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExplicitClient {
    /// `H_i` over `[u; v_i]`, rows.
    pub hessian: Vec<Vec<f64>>,
    /// `g_i`.
    pub linear: Vec<f64>,
    /// `v_i^0`.
    pub v0: Vec<f64>,
}

/// `rows` as a `dim x dim` matrix, each entry finite and at most `INPUT_MAGNITUDE_MAX` in
/// magnitude ([`crate::explicit::finite`]), naming `field` or the entry otherwise.
fn rows_to_matrix(field: &str, rows: &[Vec<f64>], dim: usize) -> Result<DMatrix<f64>> {
    if rows.len() != dim || rows.iter().any(|r| r.len() != dim) {
        let shape: Vec<usize> = rows.iter().map(Vec::len).collect();
        return Err(Error::field(field, format!("row lengths {shape:?}"), format!("{dim} rows of length {dim}")));
    }
    for (r, row) in rows.iter().enumerate() {
        crate::explicit::finite(&format!("{field}[{r}]"), row)?;
    }
    Ok(DMatrix::from_fn(dim, dim, |r, c| rows[r][c]))
}

impl ExplicitInstance {
    /// Validates the explicit form and builds the instance.
    ///
    /// # Errors
    /// As [`QuadraticInstance::new`], with field paths relative to the instance table.
    pub fn build(&self) -> Result<QuadraticInstance> {
        let n = self.clients.len();
        if n == 0 {
            return Err(Error::field("instance.clients", "no clients", "at least one [[instance.clients]] entry"));
        }
        // Lengths first: du and dv then match vectors the file holds, so nothing below allocates
        // more than the file describes.
        if self.u0.len() != self.du {
            return Err(Error::field("instance.u0", format!("length {}", self.u0.len()), format!("length du = {}", self.du)));
        }
        if let Some((i, c)) = self.clients.iter().enumerate().find(|(_, c)| c.v0.len() != self.dv) {
            return Err(Error::field(format!("instance.clients[{i}].v0"), format!("length {}", c.v0.len()), format!("length dv = {}", self.dv)));
        }
        // Every number of the file finite and at most INPUT_MAGNITUDE_MAX in magnitude, named as
        // the file names it: a noise covariance of 1e308 had run, its noise lost to overflow in
        // the moments, and a lemma had "held" on the noise-free values.
        // (The matrices' entries are checked as they are read, by `rows_to_matrix`.)
        crate::explicit::finite("instance.u0", &self.u0)?;
        for (i, c) in self.clients.iter().enumerate() {
            crate::explicit::finite(&format!("instance.clients[{i}].v0"), &c.v0)?;
            crate::explicit::finite(&format!("instance.clients[{i}].linear"), &c.linear)?;
        }
        let layout = Layout { n, du: self.du, dv: self.dv };
        let d = layout.local_dim();
        let mut clients = Vec::with_capacity(n);
        let mut state = DVector::zeros(layout.state_dim());
        state.rows_mut(0, self.du).copy_from(&DVector::from_column_slice(&self.u0));
        for (i, c) in self.clients.iter().enumerate() {
            let hessian = rows_to_matrix(&format!("instance.clients[{i}].hessian"), &c.hessian, d)?;
            if c.linear.len() != d {
                return Err(Error::field(format!("instance.clients[{i}].linear"), format!("length {}", c.linear.len()), format!("length du + dv = {d}")));
            }
            if c.v0.len() != self.dv {
                return Err(Error::field(format!("instance.clients[{i}].v0"), format!("length {}", c.v0.len()), format!("length dv = {}", self.dv)));
            }
            state.rows_mut(layout.v_offset(i), self.dv).copy_from(&DVector::from_column_slice(&c.v0));
            clients.push(ClientQuadratic { hessian, linear: DVector::from_column_slice(&c.linear) });
        }
        let su = rows_to_matrix("instance.noise_u_cov", &self.noise_u_cov, self.du)?;
        let sv = rows_to_matrix("instance.noise_v_cov", &self.noise_v_cov, self.dv)?;
        QuadraticInstance::new(layout, clients, su, sv, state).map_err(|e| match e {
            Error::InvalidField { field, message, allowed } => {
                let field = if field.starts_with("instance.") { field } else { format!("instance.{field}") };
                Error::InvalidField { field, message, allowed }
            }
            other => other,
        })
    }

    /// The explicit form of an instance (for saving a generated instance as a replayable file).
    pub fn from_instance(inst: &QuadraticInstance) -> Self {
        let layout = inst.layout();
        let rows = |m: &DMatrix<f64>| (0..m.nrows()).map(|r| m.row(r).iter().copied().collect()).collect();
        let state = inst.initial_state();
        Self {
            du: layout.du,
            dv: layout.dv,
            noise_u_cov: rows(inst.noise_u_cov()),
            noise_v_cov: rows(inst.noise_v_cov()),
            u0: state.rows(0, layout.du).iter().copied().collect(),
            clients: inst
                .clients()
                .iter()
                .enumerate()
                .map(|(i, c)| ExplicitClient {
                    hessian: rows(&c.hessian),
                    linear: c.linear.iter().copied().collect(),
                    v0: state.rows(layout.v_offset(i), layout.dv).iter().copied().collect(),
                })
                .collect(),
        }
    }
}
