//! Lemma 1, Lemma 2 and the push-sum bound (15) checked per round along the per-round run
//! ([`super::local`] gives their sides): every round `t < T` compares the item (client and
//! local step, local step, or node) whose sides are the largest ratio `lhs / rhs`.

use crate::claim::ConditionCheck;
use crate::engine::Estimator;
use crate::kinds::ordering::pair_ratio;
use crate::verdict::{evaluate_inequality, ConstantsSource, VerdictKind};

use super::claims::{assumption_checks, eq15_bound, lemma1_bound, lemma1_step, lemma2_factor, lemma2_step, Lemma2Reading};
use super::phase::Params;
use super::problem::Constants;
use super::round::Trajectory;
use super::topology::Connectivity;
use crate::checker::ClaimResult;

/// What the lemmas read from a scenario's run.
pub struct LemmaRun<'a> {
    /// Exact constants (Assumption 4 as stated).
    pub constants: &'a Constants,
    /// Connectivity (delta, estimated `C`, `q`).
    pub connectivity: &'a Connectivity,
    /// Steps at the per-round horizon.
    pub params: &'a Params,
    /// The exact run (with [`Trajectory::local`] and [`Trajectory::path`]) or the replicates.
    pub sources: &'a [&'a Trajectory],
    /// How `sources` estimate expectations.
    pub estimator: Estimator,
    /// The per-round horizon `T`.
    pub rounds: usize,
    /// `||u_i^0||` per node.
    pub u0: Vec<f64>,
    /// Confidence of the Monte Carlo intervals.
    pub confidence: f64,
}

/// Every source's sides of the item whose mean sides have the largest ratio; `side(source,
/// item)` gives one source's `(lhs, rhs)`.
fn worst(sources: usize, items: usize, side: &dyn Fn(usize, usize) -> (f64, f64)) -> Option<Vec<(f64, f64)>> {
    let key = |item: usize| {
        let (l, r) = (0..sources).map(|s| side(s, item)).fold((0.0, 0.0), |(a, b), (l, r)| (a + l, b + r));
        // `+inf` for a positive left side over a zero bound, 0 when both are 0, NaN when either
        // is: a NaN item is chosen, and its verdict says so. Every NaN is made the positive one,
        // which `total_cmp` orders above everything (`inf/inf` gives a NaN with its sign bit set
        // on x86, which it would order below everything).
        let ratio = pair_ratio(l, r);
        if ratio.is_nan() {
            f64::NAN
        } else {
            ratio
        }
    };
    let item = (0..items).max_by(|a, b| key(*a).total_cmp(&key(*b)))?;
    Some((0..sources).map(|s| side(s, item)).collect())
}

impl LemmaRun<'_> {
    /// A claim's row: at every round, the worst of `items` by `side(t, source, item)`.
    fn result(
        &self,
        (claim, reading): (&'static str, &'static str),
        constants: ConstantsSource,
        checks: Vec<ConditionCheck>,
        side: &dyn Fn(usize, usize, usize) -> (f64, f64),
        items: usize,
        bound_scale: f64,
    ) -> ClaimResult {
        let n = self.sources.len();
        let sides = |t: usize| worst(n, items, &|s, item| side(t, s, item));
        let evaluation = evaluate_inequality(checks, self.rounds, &sides, self.estimator, self.confidence, bound_scale);
        ClaimResult { claim, reading, constants, evaluation, label: None, expected: None }
    }

    /// Lemma 1 (004:L478-495), per client and local step `k = 1..=K_v`: `E||v_i^{t,k} -
    /// v_i^t||^2 <= 16 eta_v^2 K_v^2 E||grad_v F_i(z_i^t, v_i^t)||^2 + 8 eta_v^2 K_v^2
    /// sigma_v^2` under `eta_v <= 1/(2 K_v L_v)`.
    pub fn lemma1(&self, bound_scale: f64) -> ClaimResult {
        let (p, kv) = (self.params, self.params.k_v);
        let side = |t: usize, s: usize, item: usize| {
            let local = &self.sources[s].local[t];
            (local.v_drift[item], lemma1_bound(p, self.constants.sigma_v, local.v_grad[item / kv]))
        };
        let checks = vec![lemma1_step(self.constants.l_v, p)];
        self.result(("DPGP-L1", "primary"), ConstantsSource::Exact, checks, &side, self.u0.len() * kv, bound_scale)
    }

    /// Lemma 2 (004:L498-518), per local step `k = 1..=K_u` (the proof's range; the printed
    /// reading: `k = 0..K_u-1`, the statement's): `(1/m) sum_i E||u_i^{t,k} -
    /// u_i^t||^2 <= f (sigma_u^2 + sigma_g^2 + (1/m) sum_i E||grad_u F(z_i^t, V^{t+1})||^2)`,
    /// `f` of [`lemma2_factor`], under Assumption 4, `delta > 0` and `eta_u < delta/(8 L_u K_u)`.
    pub fn lemma2(&self, reading: Lemma2Reading, bound_scale: f64) -> ClaimResult {
        let (k, p) = (self.constants, self.params);
        let sigma = k.sigma_u.powi(2) + k.sigma_g2.value.unwrap_or(0.0);
        let f = lemma2_factor(p, reading);
        // The proof bounds u^(t,k+1) for k <= K_u - 1; the statement (10) names k <= K_u - 1.
        let proof = reading == Lemma2Reading::Proof;
        let side = |t: usize, s: usize, item: usize| {
            let local = &self.sources[s].local[t];
            let lhs = match (proof, item) {
                (true, k) => local.u_drift[k],
                (false, 0) => 0.0,
                (false, k) => local.u_drift[k - 1],
            };
            (lhs, f * (sigma + local.u_grad))
        };
        let stated = assumption_checks(k, self.connectivity, self.rounds, 0.0);
        let checks = vec![stated[1].clone(), stated[2].clone(), lemma2_step(k.l_u, self.connectivity.delta, p)];
        let (id, name) = match reading {
            Lemma2Reading::Proof => ("DPGP-L2", "primary"),
            Lemma2Reading::Printed => ("DPGP-L2~printed", "printed"),
        };
        self.result((id, name), ConstantsSource::Exact, checks, &side, p.k_u, bound_scale)
    }

    /// (15) (004:L532) per node, as printed with node `i`'s own gradients only:
    /// `||ubar^t - z_i^t|| <= C q^{t+1} ||u_i^0|| + eta_u C sum_{r <= t} q^{t-r} G_i^r`
    /// ([`eq15_bound`]), under Assumption 1, `delta > 0` and push-sum mixing.
    pub fn eq15(&self, bound_scale: f64) -> ClaimResult {
        let conn = self.connectivity;
        let m = self.u0.len();
        // sum_{r <= t} q^{t-r} G_i^r per source, round and node.
        let history: Vec<Vec<Vec<f64>>> = self
            .sources
            .iter()
            .map(|tr| {
                let mut acc = vec![0.0; m];
                tr.path[..self.rounds]
                    .iter()
                    .map(|r| {
                        acc = acc.iter().zip(&r.gradient_sum).map(|(a, g)| conn.q * a + g).collect();
                        acc.clone()
                    })
                    .collect()
            })
            .collect();
        let side = |t: usize, s: usize, i: usize| {
            let rhs = eq15_bound(conn, self.params.eta_u, t, self.u0[i], history[s][t][i]);
            (self.sources[s].path[t].deviation[i], rhs)
        };
        let stated = assumption_checks(self.constants, conn, self.rounds, 0.0);
        let checks = vec![stated[0].clone(), stated[2].clone(), stated[3].clone()];
        let noisy = self.constants.sigma_u > 0.0 || self.constants.sigma_v > 0.0;
        pathwise(self.result(("DPGP-EQ15", "primary"), ConstantsSource::Estimated, checks, &side, m, bound_scale), noisy)
    }
}

/// What a pathwise inequality checked on some paths says about every path. (15) bounds each
/// realisation of the stochastic gradients (004:L532; the proof squares it and takes expectations
/// only after, L550-552), so on a run with noise it must hold on every realisation. A violation
/// on the noiseless path (or a seeded one) is a counterexample: the margin is strict and the
/// sides continuous in the noise, so it persists on a neighbourhood of that realisation, which
/// Gaussian noise reaches with positive probability. A "holds" there says nothing of the other
/// realisations (a node whose noise cancels its own gradients breaks (15) 46-fold on ring-low
/// at `t = 1`): inconclusive, with a note. Without noise the one path is the run: decided.
fn pathwise(mut result: ClaimResult, noisy: bool) -> ClaimResult {
    if noisy && result.evaluation.verdict == VerdictKind::Holds {
        result.evaluation.verdict = VerdictKind::Inconclusive;
        result.evaluation.notes.push(format!(
            "holds on the paths checked (slack {}), but (15) bounds every realisation of the noise and a path cannot show that: not decided with noise (decided on noiseless runs, and violated wherever one path breaks it)",
            result.evaluation.slack.map_or("-".to_string(), crate::claim::fmt_num)
        ));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::worst;

    /// An item whose sides are both infinite (a diverged run) has an undefined ratio: it is the
    /// one chosen, whichever sign its NaN carries, so its verdict is not decided by a finite item.
    #[test]
    fn an_undefined_ratio_is_the_worst_item() {
        let inf = f64::INFINITY;
        let sides = [(1.0, 2.0), (inf, inf), (3.0, 4.0)];
        let chosen = worst(1, sides.len(), &|_, item| sides[item]).expect("an item");
        assert!(chosen[0].0.is_infinite(), "{chosen:?}");
        // Negative control: finite items give the largest ratio.
        let finite = [(1.0, 2.0), (3.0, 4.0)];
        assert_eq!(worst(1, 2, &|_, item| finite[item]), Some(vec![(3.0, 4.0)]));
    }
}
