//! Federated algorithms, one file each.
//!
//! A round is a pure function of `(state, sampled clients, noise draws)`: all randomness is drawn
//! beforehand by [`RoundDraws::draw`] from streams keyed by `(seed, replicate, round, client, step)`,
//! so the same step code serves Monte Carlo simulation and exact moment propagation.

mod fedavg_p;
pub mod kernel;
mod lanes;
mod normals;
mod params;
mod scaffold_p;

pub use fedavg_p::FedAvgP;
pub use params::{RoundConfig, RoundParams};
pub use scaffold_p::ScaffoldP;

/// The algorithms a scenario can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AlgorithmKind {
    /// Algorithm 1 of Chen, Cao, Yuan, Wen.
    #[default]
    FedavgP,
    /// Algorithm 2 of Chen, Cao, Yuan, Wen.
    ScaffoldP,
}

impl AlgorithmKind {
    /// The algorithm with these parameters.
    pub fn build(self, params: RoundParams) -> Box<dyn Algorithm> {
        match self {
            AlgorithmKind::FedavgP => Box::new(FedAvgP { params }),
            AlgorithmKind::ScaffoldP => Box::new(ScaffoldP { params }),
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmKind::FedavgP => "FedAvg-P",
            AlgorithmKind::ScaffoldP => "Scaffold-P",
        }
    }
}

use nalgebra::DVector;

use crate::engine::column_order::row_times;
use crate::families::ccyw::problem::QuadraticInstance;
use crate::rng::{StreamKey, SAMPLING_SLOT};

/// The random inputs of one round.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundDraws {
    /// Sampled clients `S^t`, sorted ascending, `|S^t| = m`.
    pub sampled: Vec<usize>,
    /// Local dimension `du + dv`.
    pub local_dim: usize,
    /// Local steps `K`.
    pub steps: usize,
    /// Standard normal draws, `m * K * (du + dv)` values: client `sampled[j]`, step `k` at
    /// offset `(j * K + k) * (du + dv)`. The round scales them by the instance's noise factor.
    pub noise: Vec<f64>,
}

impl RoundDraws {
    /// All `K (du + dv)` standard normal values of the `j`-th sampled client.
    pub fn client_noise(&self, j: usize) -> &[f64] {
        let len = self.steps * self.local_dim;
        &self.noise[j * len..(j + 1) * len]
    }

    /// The standard normal vector of the `j`-th sampled client at local step `k`.
    pub fn step_noise(&self, j: usize, k: usize) -> &[f64] {
        let off = (j * self.steps + k) * self.local_dim;
        &self.noise[off..off + self.local_dim]
    }

    /// Draws the round's clients (uniformly, `m` of `n` without replacement) and noise.
    ///
    /// The sample comes from the stream `(seed, replicate, round, SAMPLING_SLOT)`; client `i`'s
    /// noise from its client-round stream `(seed, replicate, round, i)`
    /// ([`StreamKey::client_round_rng`]), read in order: step `k` takes the normals
    /// `k (du + dv) .. (k + 1)(du + dv)` of that stream. A noiseless instance draws no noise (all
    /// zeros).
    pub fn draw(inst: &QuadraticInstance, m: usize, steps: usize, seed: u64, replicate: u64, round: u64) -> Self {
        let n = inst.layout().n;
        let local_dim = inst.layout().local_dim();
        let sampled = if m == n {
            (0..n).collect()
        } else {
            let mut rng = StreamKey { seed, replicate, round, client: SAMPLING_SLOT }.rng(0);
            let mut s = rand::seq::index::sample(&mut rng, n, m).into_vec();
            s.sort_unstable();
            s
        };
        let mut noise = vec![0.0; sampled.len() * steps * local_dim];
        if !inst.is_noiseless() {
            let len = steps * local_dim;
            for (j, &i) in sampled.iter().enumerate() {
                // `rng.sample(StandardNormal)` in turn, read in bulk (the same words, the same normals).
                normals::NormalStream::client_round(StreamKey { seed, replicate, round, client: i as u64 }).fill(&mut noise[j * len..(j + 1) * len]);
            }
        }
        Self { sampled, local_dim, steps, noise }
    }
}

/// An algorithm whose round is a pure map of the state and the round's draws.
///
/// # Contract
/// For every subset `S` of clients (any size, not only `m`), the round is a sum of per-client terms:
/// `round(z, S, xi) = round(z, {}, .) + sum_{i in S} [round(z, {i}, xi_i) - round(z, {}, .)]`, and
/// each term is affine in `(z, xi_i)`. Every algorithm here has this form on quadratics; the exact
/// engine ([`crate::engine`], through [`super::exact::AlgorithmRound`]) recovers the affine maps by probing `round` and would be
/// wrong for an algorithm that breaks it (a test checks the identity).
pub trait Algorithm: Sync {
    /// Short name for reports.
    fn name(&self) -> &'static str;
    /// Clients sampled per round, `m`.
    fn sampled_per_round(&self) -> usize;
    /// Local steps per round, `K`.
    fn local_steps(&self) -> usize;
    /// `z^{t+1}` from `z^t` and the round's draws.
    fn round(&self, inst: &QuadraticInstance, state: &DVector<f64>, draws: &RoundDraws) -> DVector<f64> {
        self.round_visiting(inst, state, draws, &mut |_, _| {})
    }

    /// [`Algorithm::round`], showing `visit(j, x)` the local iterates `x_{i,0..K-1}` of the `j`-th
    /// sampled client as it runs them: what [`Algorithm::visit_virtual_iterates`] shows for that
    /// client with its draws, without running them twice.
    fn round_visiting(&self, inst: &QuadraticInstance, state: &DVector<f64>, draws: &RoundDraws, visit: &mut dyn FnMut(usize, &DVector<f64>)) -> DVector<f64>;

    /// Length of the algorithm's state. It starts with `[u; v_1; ...; v_n]` (the instance's
    /// layout), so metrics read the same prefix; algorithms with auxiliary variables (control
    /// variates) append them.
    fn state_dim(&self, inst: &QuadraticInstance) -> usize {
        inst.layout().state_dim()
    }

    /// The state coordinates client `i`'s term of a round reads: `u` and `v_i` (line 6 of either
    /// listing starts from `(u^t, v_i^t)`), and what the algorithm adds to them. The exact engine
    /// takes this as the client's declared columns ([`crate::engine::RandomAffineRound::reads`]),
    /// checked there by one probe, instead of finding them by bisection.
    fn client_reads(&self, inst: &QuadraticInstance, i: usize) -> Vec<usize> {
        inst.layout().local_coordinates(i).collect()
    }

    /// Client `i`'s virtual local sequence `x_{i,0..K-1}` from `state` with its `K (du + dv)`
    /// noise values: the iterates the client would visit if sampled (000:L100-106).
    fn virtual_iterates(&self, inst: &QuadraticInstance, state: &DVector<f64>, i: usize, noise: &[f64]) -> Vec<DVector<f64>> {
        let mut out = Vec::with_capacity(self.local_steps());
        self.visit_virtual_iterates(inst, state, i, noise, &mut |x| out.push(x.clone()));
        out
    }

    /// [`Algorithm::virtual_iterates`] shown one at a time to `visit`, in order, without keeping
    /// them.
    fn visit_virtual_iterates(&self, inst: &QuadraticInstance, state: &DVector<f64>, i: usize, noise: &[f64], visit: &mut dyn FnMut(&DVector<f64>));

    /// Whether the initial state is random (drawn from `init_draws`); if so it must be affine in
    /// the draws, like a round.
    fn random_initialization(&self) -> bool {
        false
    }

    /// The initial state from the instance's `z^0` and the initialization draws (all `n` clients
    /// sampled, `K` steps; see [`RoundDraws::initialization`]).
    fn initial_state(&self, inst: &QuadraticInstance, _init_draws: &RoundDraws) -> DVector<f64> {
        inst.initial_state().clone()
    }

    /// The allocation-free form of [`Algorithm::round`] for Monte Carlo replicates, when the
    /// algorithm has one ([`kernel::RoundKernel`], bit-for-bit the same rounds).
    fn kernel(&self, _inst: &QuadraticInstance) -> Option<kernel::RoundKernel> {
        None
    }
}

/// The stochastic gradient `grad F(x; xi) = H_i x - g_i + R z` of client `i` at its local point
/// `x = [u; v_i]`, with `z` a standard normal vector (Assumption 2.2).
pub fn noisy_gradient(inst: &QuadraticInstance, i: usize, x: &DVector<f64>, z: &[f64]) -> DVector<f64> {
    let mut grad = DVector::zeros(x.len());
    noisy_gradient_into(inst, i, x, z, &mut grad);
    grad
}

/// [`noisy_gradient`] written into `grad` (of the same length as `x`), summed as nalgebra sums
/// `H x - g` and then adds `R z` column by column (`gemv` with `beta = 1`): the same bits
/// without allocating. A column whose normal is exactly 0 is skipped: it adds `+-0`, which changes
/// no value (a zero's sign at most, which no later operation here turns into a value), and the
/// noiseless runs (the lemmas' virtual paths, the exact engine's probes) skip every column.
pub fn noisy_gradient_into(inst: &QuadraticInstance, i: usize, x: &DVector<f64>, z: &[f64], grad: &mut DVector<f64>) {
    let client = &inst.clients()[i];
    // Four rows side by side: their sums are independent, each in `row_times`' order (the same
    // bits), and the four entries of a column are contiguous.
    let (d, h, xs) = (x.len(), client.hessian.as_slice(), x.as_slice());
    let mut r = 0;
    while r + 4 <= d {
        let mut acc = [h[r] * xs[0], h[r + 1] * xs[0], h[r + 2] * xs[0], h[r + 3] * xs[0]];
        for (c, &xc) in xs.iter().enumerate().skip(1) {
            for (a, &hc) in acc.iter_mut().zip(&h[c * d + r..c * d + r + 4]) {
                *a += hc * xc;
            }
        }
        for (q, a) in acc.into_iter().enumerate() {
            grad[r + q] = a - client.linear[r + q];
        }
        r += 4;
    }
    for r in r..d {
        grad[r] = row_times(&client.hessian, r, |c| x[c]) - client.linear[r];
    }
    if !inst.is_noiseless() {
        let (d, root) = (x.len(), inst.noise_factor().as_slice());
        for (c, &zc) in z[..d].iter().enumerate().filter(|(_, zc)| **zc != 0.0) {
            for (g, &rc) in grad.iter_mut().zip(&root[c * d..(c + 1) * d]) {
                *g += rc * zc;
            }
        }
    }
}

/// `K` local SGD steps of client `i` from `x = [u^t; v_i^t]` (lines 5-8 of Algorithms 1 and 2):
///
/// ```text
/// u_{k+1} = u_k - gamma_u (grad_u F(u_k, v_k; xi_k) + correction)
/// v_{k+1} = v_k - gamma_v grad_v F(u_k, v_k; xi_k)
/// ```
///
/// with `correction = c^t - c_i^t` for Scaffold-P and none for FedAvg-P. `noise` holds the `K`
/// standard normal vectors; `visit` sees `x_k` before step `k`, `k = 0..K-1`. Returns `x_K`.
pub fn local_sgd(
    inst: &QuadraticInstance,
    params: &RoundParams,
    i: usize,
    mut x: DVector<f64>,
    correction: Option<&DVector<f64>>,
    noise: &[f64],
    mut visit: impl FnMut(&DVector<f64>),
) -> DVector<f64> {
    let du = inst.layout().du;
    let d = x.len();
    let mut grad = DVector::zeros(d);
    for k in 0..params.k {
        visit(&x);
        noisy_gradient_into(inst, i, &x, &noise[k * d..(k + 1) * d], &mut grad);
        let (gu, gv) = grad.as_slice().split_at(du);
        let (xu, xv) = x.as_mut_slice().split_at_mut(du);
        match correction {
            Some(c) => {
                for ((a, g), corr) in xu.iter_mut().zip(gu).zip(c.iter()) {
                    *a -= params.gamma_u * (g + corr);
                }
            }
            None => {
                for (a, g) in xu.iter_mut().zip(gu) {
                    *a -= params.gamma_u * g;
                }
            }
        }
        for (a, g) in xv.iter_mut().zip(gv) {
            *a -= params.gamma_v * g;
        }
    }
    x
}

/// Round index of the initialization draws (keyed apart from every real round).
pub const INITIALIZATION_ROUND: u64 = u64::MAX - 1;

impl RoundDraws {
    /// The initialization draws: every client, `steps` standard normal vectors each, from the
    /// streams of round [`INITIALIZATION_ROUND`].
    pub fn initialization(inst: &QuadraticInstance, steps: usize, seed: u64, replicate: u64) -> Self {
        let n = inst.layout().n;
        let mut d = Self::draw(inst, n, steps, seed, replicate, INITIALIZATION_ROUND);
        d.sampled = (0..n).collect();
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::ccyw::problem::{Coupling, InstanceSpec};
    use rand::Rng;
    use rand_distr::StandardNormal;

    #[test]
    fn the_gradient_in_place_has_the_bits_of_the_nalgebra_expression() {
        for (du, dv, coupling) in [(5, 5, Coupling::Coupled), (3, 2, Coupling::Decoupled), (7, 4, Coupling::Coupled)] {
            let spec = InstanceSpec { n: 3, du, dv, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.3, b: 1.0, coupling, init_distance: 3.0, seed: 4 };
            let inst = spec.build().unwrap();
            let d = du + dv;
            let x = DVector::from_fn(d, |r, _| ((r * 7) as f64 * 0.43).sin() * 10f64.powi(r as i32 % 3 - 1));
            let z: Vec<f64> = (0..d).map(|r| (r as f64 * 1.9).cos()).collect();
            for i in 0..3 {
                let client = &inst.clients()[i];
                let mut want = &client.hessian * &x - &client.linear;
                want.gemv(1.0, inst.noise_factor(), &nalgebra::DVectorView::from_slice(&z, d), 1.0);
                let got = noisy_gradient(&inst, i, &x, &z);
                assert!(got.iter().zip(want.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "du {du}, dv {dv}, client {i}");
                // Negative control: the noise added before the linear term gives other bits somewhere.
                let other = &client.hessian * &x + inst.noise_factor() * DVector::from_column_slice(&z) - &client.linear;
                assert!(other.iter().zip(want.iter()).any(|(a, b)| a.to_bits() != b.to_bits()), "du {du}, dv {dv}, client {i}: the control");
            }
        }
    }

    #[test]
    fn a_round_shows_the_sampled_clients_their_virtual_iterates() {
        let inst =
            InstanceSpec { n: 5, du: 3, dv: 2, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.4, b: 1.0, coupling: Coupling::Coupled, init_distance: 3.0, seed: 6 }
                .build()
                .unwrap();
        let params = RoundParams { n: 5, k: 4, m: 3, gamma_u: 0.05, gamma_v: 0.08, eta_u: 1.5, eta_v: 0.9 };
        let algorithms: [&dyn Algorithm; 2] = [&super::fedavg_p::FedAvgP { params }, &super::scaffold_p::ScaffoldP { params }];
        let same = |a: &DVector<f64>, b: &DVector<f64>| a.iter().zip(b.iter()).all(|(x, y)| x.to_bits() == y.to_bits());
        for alg in algorithms {
            let state = alg.initial_state(&inst, &RoundDraws::initialization(&inst, params.k, 3, 0));
            let draws = RoundDraws::draw(&inst, params.m, params.k, 3, 0, 7);
            let mut seen: Vec<Vec<DVector<f64>>> = vec![Vec::new(); params.m];
            let next = alg.round_visiting(&inst, &state, &draws, &mut |j, x| seen[j].push(x.clone()));
            assert!(same(&next, &alg.round(&inst, &state, &draws)), "{}: the round", alg.name());
            for (j, &i) in draws.sampled.iter().enumerate() {
                let want = alg.virtual_iterates(&inst, &state, i, draws.client_noise(j));
                assert!(seen[j].len() == params.k && seen[j].iter().zip(&want).all(|(a, b)| same(a, b)), "{}: client {i}", alg.name());
                // Negative control: another client's noise gives other iterates.
                let other = alg.virtual_iterates(&inst, &state, i, draws.client_noise((j + 1) % params.m));
                assert!(!seen[j].iter().zip(&other).skip(1).all(|(a, b)| same(a, b)));
            }
        }
    }

    #[test]
    fn a_clients_steps_read_its_round_stream_in_order() {
        let inst = InstanceSpec {
            n: 5,
            du: 3,
            dv: 2,
            l: 1.0,
            mu: 0.1,
            sigma_u: 0.5,
            sigma_v: 0.5,
            b: 1.0,
            coupling: Coupling::Decoupled,
            init_distance: 3.0,
            seed: 3,
        }
        .build()
        .unwrap();
        let (steps, d) = (7, 5);
        let draws = RoundDraws::draw(&inst, 3, steps, 9, 2, 4);
        for (j, &i) in draws.sampled.iter().enumerate() {
            let mut rng = StreamKey { seed: 9, replicate: 2, round: 4, client: i as u64 }.client_round_rng();
            let expected: Vec<f64> = (0..steps * d).map(|_| rng.sample(StandardNormal)).collect();
            assert_eq!(draws.client_noise(j), &expected[..], "client {i}");
            assert_eq!(draws.step_noise(j, 6), &expected[6 * d..7 * d], "client {i}, last step");
        }
        // The next client's stream is another stream.
        let other: f64 = StreamKey { seed: 9, replicate: 2, round: 4, client: 99 }.client_round_rng().sample(StandardNormal);
        assert_ne!(draws.client_noise(0)[0], other);
    }
}
