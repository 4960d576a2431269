//! Directed time-varying communication graphs, their column-stochastic push-sum weights, and the
//! connectivity quantities of DFedPGP's analysis (Liu et al., 004): the window `B` of
//! Assumption 1 (004:L106), the de-biasing floor `delta` (004:L140, L509) and the constants `C`,
//! `q` of Lemma 3 (004:L525-532), the last two *estimated* from the realised mixing products.
//!
//! Every graph includes each node's self-loop, as Algorithm 1 needs it (`i` keeps a share of its
//! own `u_i` and `mu_i`, 004:L100; App. B, L362). The push weight of node `i` to each of its
//! out-neighbours (itself included) is `p_ji = 1/|N_out(i)|` (004:L100), so every column of the
//! mixing matrix `P^t` sums to one (column-stochastic), while rows need not.
//!
//! Other column-stochastic weights are within the analysis: the text lets each client choose its
//! outgoing weights (004:L94), App. B asks only that the mixing matrices be column stochastic
//! (004:L360), and Lemma 3's constants rest on column-stochasticity, the window `B` and a floor of
//! the positive weights (the `D` of 004:L525-528, from \[2\]). Two kinds give them:
//! [`Topology::Weighted`] (every round's weights edge by edge) and [`Topology::Lazy`] (a graph
//! whose nodes keep a fixed share). Lemma 3's `C` and `q` may also be given
//! ([`PushSumConstants`]); the graphs' own deviations are then measured against the given
//! envelope ([`Envelope`]).

use nalgebra::{DMatrix, DVector};
use rand::seq::index::sample;
use serde::{Deserialize, Serialize};

use super::prec::DEVIATION_FLOOR;
use crate::error::{Error, Result};
use crate::rng::StreamKey;

/// Stream step reserved for drawing random graphs (never used by gradient noise).
const GRAPH_STEP: u64 = 0x0067_7261_7068;

/// One push weight of a [`Topology::Weighted`] round, `[i, j, w]`: node `i` pushes the share
/// `w = p_ji` of its `u_i` and `mu_i` to node `j` (`j = i`: the share it keeps).
pub type PushWeight = (usize, usize, f64);

/// A family of directed graphs indexed by the round `t`: `{ kind = "ring" }`, `{ kind =
/// "random-out", k = 3 }`, ...; a key the kind does not take is refused ([`crate::strict`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Topology {
    /// `i -> i+1 (mod m)`: strongly connected every round (B = 1); doubly stochastic with the
    /// uniform push weights, so the push-sum weights stay at 1.
    Ring,
    /// `i -> i + 2^(t mod ceil(log2 m)) (mod m)`, one peer per round, cycling through the
    /// exponents (the time-varying exponential graph of stochastic gradient push).
    Exponential,
    /// `k` distinct out-neighbours other than `i`, drawn uniformly and independently per node
    /// and round from keyed streams `(seed, round, node)`.
    RandomOut {
        /// Out-neighbours per node and round, `1 <= k <= m - 1`.
        k: usize,
    },
    /// Every node pushes to every node: one push-sum round is exact averaging.
    Complete,
    /// The ring plus node 0 broadcasting to every node: column-stochastic, not row-stochastic.
    RingHub,
    /// Two disjoint rings over the two halves of the nodes: never strongly connected (a
    /// negative control of Assumption 1).
    Split,
    /// A sequence given edge by edge: `rounds[t mod len]` is the list of directed edges `[i, j]`
    /// (`i` pushes to `j`) of round `t`, repeated cyclically over the rounds. Self-loops are
    /// added as for every other kind, so a round's list may be empty (every node keeps its own
    /// share) and the weights `p_ji = 1/|N_out(i)|` stay defined (004:L100).
    Explicit {
        /// Per-round directed edge lists, node indices in `[0, m - 1]`, at least one round.
        rounds: Vec<Vec<[usize; 2]>>,
        /// What the reports call the sequence (optional): the generator's name when the edges
        /// were recorded from a generated topology ([`Topology::recorded`]), so a recorded
        /// scenario reports what its source reports.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// Push weights given edge by edge: `rounds[t mod len]` lists the weights `[i, j, w]`
    /// (`w = p_ji`, [`PushWeight`]) of round `t`, repeated cyclically. A node that lists any
    /// weight in a round lists its whole column: its own share `[i, i, w]` with `w > 0` and every
    /// weight `w >= 0`, summing to 1 within [`super::prec::COLUMN_SUM`] (column-stochastic, as
    /// push-sum needs, 004:L100, L360); a node that lists none keeps everything (`p_ii = 1`).
    Weighted {
        /// Per-round weight lists, node indices in `[0, m - 1]`, at least one round.
        rounds: Vec<Vec<PushWeight>>,
        /// What the reports call the sequence (optional), as for [`Topology::Explicit`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// Lazy push-sum on the graphs of `graph`: node `i` keeps `p_ii = self_weight` and pushes
    /// `p_ji = (1 - self_weight)/(|N_out(i)| - 1)` to each other out-neighbour `j` (all of it
    /// kept when it has none). `self_weight = 1/|N_out(i)|` is Algorithm 1's uniform weight.
    Lazy {
        /// The share each node keeps, in `(0, 1]`.
        self_weight: f64,
        /// The graphs (any unweighted kind).
        graph: Box<Topology>,
    },
    /// An [`Topology::Explicit`] sequence read from a TOML file holding `rounds = [[[i, j], ...],
    /// ...]`, its path relative to the working directory. Cards read it when they are parsed
    /// ([`Topology::resolve`]); an unread file has no edges beyond the self-loops.
    File {
        /// Path of the file.
        path: String,
    },
}

impl<'de> Deserialize<'de> for Topology {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        crate::strict::internally_tagged(deserializer, "kind", Topology::deserialize)
    }
}

impl Serialize for Topology {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        Topology::serialize(self, serializer)
    }
}

/// The contents of a [`Topology::File`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EdgeFile {
    rounds: Vec<Vec<[usize; 2]>>,
}

impl Topology {
    /// Short name for reports.
    pub fn name(&self) -> String {
        match self {
            Topology::Ring => "directed ring".into(),
            Topology::Exponential => "directed exponential graph".into(),
            Topology::RandomOut { k } => format!("{k} random out-neighbours"),
            Topology::Complete => "complete graph".into(),
            Topology::RingHub => "ring plus broadcasting hub".into(),
            Topology::Split => "two disjoint rings".into(),
            Topology::Explicit { name: Some(name), .. } => name.clone(),
            Topology::Explicit { rounds, name: None } => format!("explicit sequence of {} rounds", rounds.len()),
            Topology::Weighted { name: Some(name), .. } => name.clone(),
            Topology::Weighted { rounds, name: None } => format!("weighted sequence of {} rounds", rounds.len()),
            Topology::Lazy { self_weight, graph } => format!("{}, self-weight {self_weight}", graph.name()),
            Topology::File { path } => format!("sequence read from {path}"),
        }
    }

    /// Whether the push weights are other than Algorithm 1's `1/|N_out(i)|` by construction
    /// ([`Topology::Weighted`], [`Topology::Lazy`]).
    pub fn weighted(&self) -> bool {
        matches!(self, Topology::Weighted { .. } | Topology::Lazy { .. })
    }

    /// Checks the topology's parameters for `m` nodes.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `field`.
    pub fn validate(&self, field: &str, m: usize) -> Result<()> {
        match self {
            Topology::RandomOut { k } if *k == 0 || *k >= m => {
                Err(Error::field(format!("{field}.k"), format!("got {k} with m = {m}"), format!("an integer in [1, m - 1] = [1, {}]", m.saturating_sub(1))))
            }
            Topology::Split if m < 2 => Err(Error::field(format!("{field}.kind"), "split needs two halves", "m >= 2")),
            Topology::Explicit { rounds, .. } if rounds.is_empty() => {
                Err(Error::field(format!("{field}.rounds"), "no rounds", "a non-empty list of per-round edge lists [[i, j], ...]"))
            }
            Topology::Explicit { rounds, .. } => {
                for (t, edges) in rounds.iter().enumerate() {
                    if let Some((e, [i, j])) = edges.iter().enumerate().find(|(_, [i, j])| *i >= m || *j >= m) {
                        return Err(Error::field(
                            format!("{field}.rounds[{t}][{e}]"),
                            format!("edge [{i}, {j}] with m = {m}"),
                            format!("node indices in [0, m - 1] = [0, {}]", m.saturating_sub(1)),
                        ));
                    }
                }
                Ok(())
            }
            Topology::Weighted { rounds, .. } => validate_weights(field, rounds, m),
            Topology::Lazy { self_weight, graph } => {
                if !(self_weight.is_finite() && *self_weight > 0.0 && *self_weight <= 1.0) {
                    return Err(Error::field(format!("{field}.self_weight"), format!("got {self_weight}"), "a number in (0, 1]"));
                }
                if graph.weighted() {
                    return Err(Error::field(
                        format!("{field}.graph.kind"),
                        "a weighted kind inside lazy",
                        "an unweighted kind (ring, exponential, random-out, ...)",
                    ));
                }
                graph.validate(&format!("{field}.graph"), m)
            }
            Topology::File { path } => {
                Err(Error::field(format!("{field}.path"), format!("`{path}` not read yet"), "a file read by Topology::resolve before use"))
            }
            _ => Ok(()),
        }
    }

    /// A [`Topology::File`] read into the [`Topology::Explicit`] sequence it holds; any other
    /// kind unchanged.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read; [`Error::InvalidField`] naming `field.path`
    /// when it is not a TOML table `rounds = [[[i, j], ...], ...]`.
    pub fn resolve(self, field: &str) -> Result<Self> {
        if let Topology::Lazy { self_weight, graph } = self {
            return Ok(Topology::Lazy { self_weight, graph: Box::new(graph.resolve(&format!("{field}.graph"))?) });
        }
        let Topology::File { path } = self else { return Ok(self) };
        if path.is_empty() {
            return Err(Error::field(format!("{field}.path"), "empty path", "a path to a TOML file, relative to the working directory"));
        }
        let text = crate::text_file::read_text(std::path::Path::new(&path))?;
        let file: EdgeFile = toml::from_str(&text)
            .map_err(|e| Error::field(format!("{field}.path"), format!("`{path}`: {}", e.message()), "a TOML file holding rounds = [[[i, j], ...], ...]"))?;
        Ok(Topology::Explicit { rounds: file.rounds, name: None })
    }

    /// Out-neighbour lists of round `t` (each includes the node itself, ascending).
    pub fn out_neighbours(&self, m: usize, t: usize, seed: u64) -> Vec<Vec<usize>> {
        let mut out: Vec<Vec<usize>> = (0..m).map(|i| vec![i]).collect();
        match self {
            Topology::Ring => {
                for (i, o) in out.iter_mut().enumerate() {
                    o.push((i + 1) % m);
                }
            }
            Topology::Exponential => {
                let levels = (usize::BITS - (m.max(2) - 1).leading_zeros()) as usize;
                let hop = 1usize << (t % levels.max(1));
                for (i, o) in out.iter_mut().enumerate() {
                    o.push((i + hop) % m);
                }
            }
            Topology::RandomOut { k } => {
                for (i, o) in out.iter_mut().enumerate() {
                    let key = StreamKey { seed, replicate: 0, round: t as u64, client: i as u64 };
                    let mut rng = key.rng(GRAPH_STEP);
                    for j in sample(&mut rng, m - 1, (*k).min(m - 1)).into_iter() {
                        o.push(if j >= i { j + 1 } else { j });
                    }
                }
            }
            Topology::Complete => {
                for o in out.iter_mut() {
                    *o = (0..m).collect();
                }
            }
            Topology::RingHub => {
                for (i, o) in out.iter_mut().enumerate() {
                    if i == 0 {
                        *o = (0..m).collect();
                    } else {
                        o.push((i + 1) % m);
                    }
                }
            }
            Topology::Split => {
                let h = m / 2;
                for (i, o) in out.iter_mut().enumerate() {
                    let (start, len) = if i < h { (0, h) } else { (h, m - h) };
                    o.push(start + (i - start + 1) % len);
                }
            }
            Topology::Explicit { rounds, .. } => {
                // Edges outside `[0, m)` are rejected by `validate`; skipped here, never a panic.
                if let Some(edges) = rounds.get(t % rounds.len().max(1)) {
                    for &[i, j] in edges.iter().filter(|[i, j]| *i < m && *j < m) {
                        out[i].push(j);
                    }
                }
            }
            Topology::Weighted { rounds, .. } => {
                if let Some(weights) = rounds.get(t % rounds.len().max(1)) {
                    for &(i, j, _) in weights.iter().filter(|(i, j, w)| *i < m && *j < m && *w > 0.0) {
                        out[i].push(j);
                    }
                }
            }
            Topology::Lazy { graph, .. } => return graph.out_neighbours(m, t, seed),
            // Read by `resolve` before use; unread, only the self-loops.
            Topology::File { .. } => {}
        }
        for o in out.iter_mut() {
            o.sort_unstable();
            o.dedup();
        }
        out
    }

    /// The push-sum mixing matrix of round `t`: `P[j][i] = 1/|N_out(i)|` for `j in N_out(i)`
    /// (self included), else 0 (004:L100); the given weights of [`Topology::Weighted`] and the
    /// lazy ones of [`Topology::Lazy`]. Column `i` sums to one.
    pub fn mixing(&self, m: usize, t: usize, seed: u64) -> DMatrix<f64> {
        let mut p = DMatrix::zeros(m, m);
        if let Topology::Weighted { rounds, .. } = self {
            let weights = rounds.get(t % rounds.len().max(1)).map_or(&[][..], Vec::as_slice);
            for i in 0..m {
                p[(i, i)] = if weights.iter().any(|(from, _, _)| *from == i) { 0.0 } else { 1.0 };
            }
            // Entries outside `[0, m)` are rejected by `validate`; skipped here, never a panic.
            for &(i, j, w) in weights.iter().filter(|(i, j, _)| *i < m && *j < m) {
                p[(j, i)] = w;
            }
            return p;
        }
        let out = self.out_neighbours(m, t, seed);
        for (i, o) in out.iter().enumerate() {
            let (own, other) = match self {
                Topology::Lazy { self_weight, .. } if o.len() > 1 => (*self_weight, (1.0 - self_weight) / (o.len() - 1) as f64),
                Topology::Lazy { .. } => (1.0, 0.0),
                _ => (1.0 / o.len() as f64, 1.0 / o.len() as f64),
            };
            for &j in o {
                p[(j, i)] = if j == i { own } else { other };
            }
        }
        p
    }
}

/// Who sets the weights of a round's graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MixingRule {
    /// Push-sum, as Algorithm 1 states: `p_ji = 1/|N_out(i)|`, columns sum to one (004:L100).
    #[default]
    Column,
    /// The experiments' pull weights (App. B, 004:L362-367): `p_ij = 1/|N_in(i)|`, rows sum to
    /// one, so `mu` stays 1 and de-biasing does nothing (I-DPGP9); outside the theory.
    Row,
}

impl Topology {
    /// The mixing matrix of round `t` under `rule`.
    pub fn mixing_with(&self, rule: MixingRule, m: usize, t: usize, seed: u64) -> DMatrix<f64> {
        match rule {
            MixingRule::Column => self.mixing(m, t, seed),
            MixingRule::Row => {
                let out = self.out_neighbours(m, t, seed);
                let mut p = DMatrix::zeros(m, m);
                for (j, o) in out.iter().enumerate() {
                    for &i in o {
                        p[(i, j)] = 1.0;
                    }
                }
                for mut row in p.row_iter_mut() {
                    let n = row.sum();
                    row /= n;
                }
                p
            }
        }
    }
}

impl Topology {
    /// The first `rounds` graphs on `m` nodes as an [`Topology::Explicit`] sequence named as
    /// this topology: each round's edges `[i, j]`, `j in N_out(i)`, `j != i` (the self-loops are
    /// added back when it is read), cut to the smallest period `p` with graph `t` equal to graph
    /// `t mod p` for every `t < rounds`. Every round `t < rounds` then has the same out-neighbours,
    /// so the same mixing matrices and push-sum weights, as this topology.
    ///
    /// A [`Topology::Weighted`] or [`Topology::Lazy`] sequence is recorded as a
    /// [`Topology::Weighted`] one: every nonzero entry `p_ji` of each round's mixing matrix as
    /// `[i, j, p_ji]`, the same numbers, so the same matrices bit for bit.
    pub fn recorded(&self, m: usize, rounds: usize, seed: u64) -> Topology {
        let n = rounds.max(1);
        if self.weighted() {
            let weights = |t: usize| -> Vec<PushWeight> {
                let p = self.mixing(m, t, seed);
                (0..m).flat_map(|i| (0..m).map(move |j| (i, j))).filter(|&(i, j)| p[(j, i)] != 0.0).map(|(i, j)| (i, j, p[(j, i)])).collect()
            };
            let graphs: Vec<Vec<PushWeight>> = (0..n).map(weights).collect();
            return Topology::Weighted { rounds: graphs[..period(&graphs)].to_vec(), name: Some(self.name()) };
        }
        let edges = |t: usize| -> Vec<[usize; 2]> {
            self.out_neighbours(m, t, seed).into_iter().enumerate().flat_map(|(i, o)| o.into_iter().filter(move |j| *j != i).map(move |j| [i, j])).collect()
        };
        let graphs: Vec<Vec<[usize; 2]>> = (0..n).map(edges).collect();
        Topology::Explicit { rounds: graphs[..period(&graphs)].to_vec(), name: Some(self.name()) }
    }
}

/// The smallest period `p` of `graphs`: `graphs[t] == graphs[t mod p]` for every `t`.
fn period<T: PartialEq>(graphs: &[T]) -> usize {
    let n = graphs.len();
    (1..=n).find(|&p| (p..n).all(|t| graphs[t] == graphs[t % p])).unwrap_or(n)
}

/// Checks a [`Topology::Weighted`] sequence for `m` nodes: every round's entries `[i, j, w]` with
/// nodes in `[0, m - 1]`, `w` finite and `>= 0`, no pair twice; every node that lists a weight
/// keeps a share `w_ii > 0` (so `mu_i^t > 0`) and its column sums to 1 within
/// [`super::prec::COLUMN_SUM`] (004:L100, L360).
///
/// # Errors
/// [`Error::InvalidField`] naming `field.rounds[t][e]` or `field.rounds[t]` and the allowed range.
fn validate_weights(field: &str, rounds: &[Vec<PushWeight>], m: usize) -> Result<()> {
    if rounds.is_empty() {
        return Err(Error::field(format!("{field}.rounds"), "no rounds", "a non-empty list of per-round weight lists [[i, j, w], ...]"));
    }
    for (t, weights) in rounds.iter().enumerate() {
        for (e, &(i, j, w)) in weights.iter().enumerate() {
            let at = format!("{field}.rounds[{t}][{e}]");
            if i >= m || j >= m {
                return Err(Error::field(at, format!("[{i}, {j}, {w}] with m = {m}"), format!("node indices in [0, m - 1] = [0, {}]", m.saturating_sub(1))));
            }
            if !(w.is_finite() && w >= 0.0) {
                return Err(Error::field(at, format!("weight {w} of [{i}, {j}]"), "a finite weight >= 0 (column-stochastic push weights)"));
            }
            if weights[..e].iter().any(|(a, b, _)| (*a, *b) == (i, j)) {
                return Err(Error::field(at, format!("[{i}, {j}] listed twice in round {t}"), "each pair [i, j] at most once per round"));
            }
        }
        for i in 0..m {
            let column: Vec<&PushWeight> = weights.iter().filter(|(from, _, _)| *from == i).collect();
            if column.is_empty() {
                continue;
            }
            let own = column.iter().find(|(_, to, _)| *to == i).map_or(0.0, |x| x.2);
            if own <= 0.0 {
                return Err(Error::field(
                    format!("{field}.rounds[{t}]"),
                    format!("node {i} lists weights but keeps {own} of its own (no [{i}, {i}, w > 0])"),
                    "a share w_ii > 0 for every node that lists weights (Algorithm 1's N_in includes i, App. B L362)",
                ));
            }
            let sum: f64 = column.iter().map(|x| x.2).sum();
            if (sum - 1.0).abs() > super::prec::COLUMN_SUM {
                return Err(Error::field(
                    format!("{field}.rounds[{t}]"),
                    format!("node {i}'s weights sum to {sum}"),
                    format!("weights of each node summing to 1 within {:e} (column-stochastic, 004:L100, L360)", super::prec::COLUMN_SUM),
                ));
            }
        }
    }
    Ok(())
}

/// Whether the directed graph with adjacency `adj[i][j]` (edge `i -> j`) is strongly connected.
pub fn strongly_connected(adj: &[Vec<bool>]) -> bool {
    let m = adj.len();
    if m <= 1 {
        return true;
    }
    let reach = |forward: bool| {
        let mut seen = vec![false; m];
        let mut stack = vec![0usize];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..m {
                let edge = if forward { adj[i][j] } else { adj[j][i] };
                if edge && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen.into_iter().all(|s| s)
    };
    reach(true) && reach(false)
}

/// The realised graph sequence of a run: mixing matrices `P^0..P^{T-1}` and the push-sum weights
/// `mu^0 = 1, mu^{t+1} = P^t mu^t` (004:L100), deterministic given the topology and seed.
#[derive(Debug, Clone)]
pub struct GraphSequence {
    /// `P^t`, `t < T`.
    pub mixing: Vec<DMatrix<f64>>,
    /// `mu^t`, `t <= T`.
    pub weights: Vec<DVector<f64>>,
}

impl GraphSequence {
    /// The first `rounds` graphs of `topology` on `m` nodes, with push-sum weights.
    pub fn new(topology: &Topology, m: usize, rounds: usize, seed: u64) -> Self {
        Self::with_rule(topology, MixingRule::Column, m, rounds, seed)
    }

    /// The same under a mixing rule.
    pub fn with_rule(topology: &Topology, rule: MixingRule, m: usize, rounds: usize, seed: u64) -> Self {
        let mixing: Vec<DMatrix<f64>> = (0..rounds).map(|t| topology.mixing_with(rule, m, t, seed)).collect();
        let mut weights = Vec::with_capacity(rounds + 1);
        weights.push(DVector::from_element(m, 1.0));
        for p in &mixing {
            let next = p * weights.last().expect("mu^0 is pushed first");
            weights.push(next);
        }
        Self { mixing, weights }
    }

    /// The smallest `p <= max` with `P^t = P^{t-p}` bit for bit for every `t >= p`, if any (a
    /// static graph has `p = 1`).
    pub fn period(&self, max: usize) -> Option<usize> {
        let same = |a: &DMatrix<f64>, b: &DMatrix<f64>| a.iter().zip(b.iter()).all(|(x, y)| x.to_bits() == y.to_bits());
        (1..=max.min(self.mixing.len().max(1))).find(|&p| (p..self.mixing.len()).all(|t| same(&self.mixing[t], &self.mixing[t - p])))
    }

    /// Nodes.
    pub fn nodes(&self) -> usize {
        self.weights[0].len()
    }

    /// Rounds.
    pub fn rounds(&self) -> usize {
        self.mixing.len()
    }
}

/// Connectivity of a realised sequence, as Assumption 1, `delta` and Lemma 3 use it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Connectivity {
    /// The smallest window `B` such that every union `G(l) u ... u G(l+B-1)`, `l + B <= T`, is
    /// strongly connected (Assumption 1, 004:L106); `None` when no window within the horizon is.
    pub window: Option<usize>,
    /// `delta = min_{t <= T} min_i (P^{t-1} ... P^0 1)_i`: the minimum row sum of the products of
    /// mixing matrices (004:L140), which is also `min_{i,t} mu_i^t` (004:L509) since
    /// `mu^t = P^{t-1} ... P^0 mu^0` and `mu^0 = 1`. The two definitions agree here.
    pub delta: f64,
    /// Lemma 3's `C` (004:L525-532), *estimated* (see [`estimate_c_q`]).
    pub c: f64,
    /// Lemma 3's `q`, *estimated*.
    pub q: f64,
    /// Rounds over which `C` and `q` were estimated.
    pub estimation_rounds: usize,
    /// Whether every realised mixing matrix has columns summing to one (up to [`super::prec::COLUMN_SUM`]), as
    /// push-sum needs (`sum_i u_i` preserved, 004:L100, L129).
    pub column_stochastic: bool,
    /// When the scenario gives `C` and `q` ([`PushSumConstants`]): `c`, `q` above are the given
    /// ones, and this says how the graphs' own deviations compare with them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub given: Option<Envelope>,
}

/// Lemma 3's `C` and `q` as a scenario gives them (`push_sum = { c = ..., q = ... }`), in place
/// of the estimate from the realised products (I-DPGP10: the paper defines them only up to
/// undefined `n`, `D`, 004:L525-528).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushSumConstants {
    /// `C > 0`.
    pub c: f64,
    /// `q` in `[0, 1)`.
    pub q: f64,
}

impl PushSumConstants {
    /// Checks `C > 0` finite and `q` in `[0, 1)`, naming `field.c`, `field.q`.
    ///
    /// # Errors
    /// [`Error::InvalidField`] with the allowed range.
    pub fn validate(&self, field: &str) -> Result<()> {
        crate::error::require_positive(&format!("{field}.c"), self.c)?;
        if !(self.q.is_finite() && (0.0..1.0).contains(&self.q)) {
            return Err(Error::field(format!("{field}.q"), format!("got {}", self.q), "a number in [0, 1)"));
        }
        Ok(())
    }
}

/// Given `C`, `q` against the realised graphs: the largest ratio of a deviation coefficient to
/// the given envelope, `max_l E(l) / (C q^l)` over the lags `l` of [`deviation_by_lag`] (lag 0 and
/// those above [`super::prec::DEVIATION_FLOOR`], as for the estimate), and the estimate itself.
/// A ratio above 1 means the graphs' own products do not obey Lemma 3's bound with the given
/// constants: the given `C`, `q` are smaller than the graphs attain (`too_small`). The ratio is
/// computed as `(E(l) / q^l) / C`, the same operations as [`estimate_c_q`]'s `C`, so the
/// estimated constants given back attain exactly 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Envelope {
    /// `max_l E(l) / (C q^l)` with the given `C`, `q` (infinite when `q = 0` and some lag `l >= 1`
    /// is above rounding).
    pub ratio: f64,
    /// The lag where it is attained.
    pub lag: usize,
    /// `ratio > 1`.
    pub too_small: bool,
    /// The estimate from the realised products ([`estimate_c_q`]).
    pub estimated_c: f64,
    /// Likewise.
    pub estimated_q: f64,
}

impl Envelope {
    /// The given `(c, q)` measured against the deviations `by_lag`.
    pub fn measure(by_lag: &[f64], c: f64, q: f64) -> Self {
        let (estimated_c, estimated_q) = estimate_c_q(by_lag);
        let (lag, ratio) = by_lag
            .iter()
            .enumerate()
            .filter(|(l, e)| *l == 0 || **e > DEVIATION_FLOOR)
            .map(|(l, e)| (l, e / q.powi(l as i32) / c))
            .fold((0, f64::NEG_INFINITY), |best, x| if x.1 > best.1 || x.1.is_nan() { x } else { best });
        Self { ratio, lag, too_small: ratio > 1.0 || ratio.is_nan(), estimated_c, estimated_q }
    }
}

impl Connectivity {
    /// `given` or `estimated`: where `C` and `q` come from.
    pub fn source(&self) -> &'static str {
        if self.given.is_some() {
            "given"
        } else {
            "estimated"
        }
    }

    /// What the rows using given `C`, `q` say of them (`None` when estimated).
    pub fn given_label(&self) -> Option<String> {
        use crate::claim::fmt_num;
        self.given.map(|g| {
            let flag = if g.too_small { "; smaller than the graphs attain" } else { "" };
            format!(
                "given C = {}, q = {} (graphs reach {} of C q^l at lag {}{flag}; estimated C = {}, q = {})",
                fmt_num(self.c),
                fmt_num(self.q),
                fmt_num(g.ratio),
                g.lag,
                fmt_num(g.estimated_c),
                fmt_num(g.estimated_q)
            )
        })
    }
}

/// Assumption 1's smallest window within the horizon (see [`Connectivity::window`]).
pub fn smallest_window(topology: &Topology, m: usize, rounds: usize, seed: u64) -> Option<usize> {
    if rounds == 0 {
        return None;
    }
    let graphs: Vec<Vec<Vec<usize>>> = (0..rounds).map(|t| topology.out_neighbours(m, t, seed)).collect();
    // first[l]: the smallest b with G(l) u ... u G(l+b-1) strongly connected, if any within T.
    let first: Vec<Option<usize>> = (0..rounds)
        .map(|l| {
            let mut adj = vec![vec![false; m]; m];
            for (b, g) in graphs[l..].iter().enumerate() {
                for (i, o) in g.iter().enumerate() {
                    for &j in o {
                        adj[i][j] = true;
                    }
                }
                if strongly_connected(&adj) {
                    return Some(b + 1);
                }
            }
            None
        })
        .collect();
    (1..=rounds).find(|&b| first[..=rounds - b].iter().all(|f| f.is_some_and(|x| x <= b)))
}

/// `e(t, s) = max_{i,j} |Phi_ij / (Phi mu^s)_i - 1/m|` with `Phi = P^{t-1} ... P^s`: the
/// coefficient of `u_j^s` in `z_i^t - ubar^t` when the other inputs vanish; its decay in the lag
/// `t - s` is what Lemma 3's `C q^(t-s)` bounds (004:L532). Returns `E(l) = max_s e(s+l, s)` for
/// lags `l = 0..=max_lag`.
///
/// A sequence that repeats with period `p` ([`GraphSequence::period`]: a static graph has
/// `p = 1`) has `Phi(s, l) = Phi(s mod p, l)` bit for bit (the same matrices multiplied in the same
/// order), so the products are formed once per residue and only the weights `mu^t` change with
/// `s`: `m^2` work per `(s, l)` instead of `m^3`.
pub fn deviation_by_lag(seq: &GraphSequence, max_lag: usize) -> Vec<f64> {
    deviation_by_lag_with_period(seq, max_lag, seq.period(MAX_PERIOD).unwrap_or(seq.rounds() + 1))
}

/// [`deviation_by_lag`] taking the products of starts `s` and `s + period` to be equal.
fn deviation_by_lag_with_period(seq: &GraphSequence, max_lag: usize, period: usize) -> Vec<f64> {
    let m = seq.nodes();
    let rounds = seq.rounds();
    let inv_m = 1.0 / m as f64;
    let lags = max_lag.min(rounds) + 1;
    let mut by_lag = vec![0.0f64; lags];
    // `Phi(residue, l)` in slot `l`, the slots reused from residue to residue.
    let mut phis = vec![DMatrix::<f64>::identity(m, m); lags];
    for residue in 0..period.min(rounds + 1) {
        // Every lag the residue reaches: `P^{t-1} Phi` into the next slot (nalgebra's product
        // without allocating: the same bits).
        for lag in 1..lags.min(rounds - residue + 1) {
            let (done, rest) = phis.split_at_mut(lag);
            seq.mixing[residue + lag - 1].mul_to(&done[lag - 1], &mut rest[0]);
        }
        for s in (residue..=rounds).step_by(period) {
            for (lag, (slot, phi)) in by_lag.iter_mut().zip(&phis).enumerate().take(rounds - s + 1) {
                *slot = slot.max(largest_deviation(phi, seq.weights[s + lag].as_slice(), inv_m));
            }
        }
    }
    by_lag
}

/// `max_{i,j} |Phi[i, j] / mu_i - 1/m|`, read down the columns (the storage order) into four
/// maxima side by side. A maximum does not depend on the order it is taken in (and `f64::max`
/// passes over a NaN in any order), so this is the value of the definition's loop.
fn largest_deviation(phi: &DMatrix<f64>, mu: &[f64], inv_m: f64) -> f64 {
    let mut worst = [0.0f64; 4];
    for column in phi.as_slice().chunks_exact(mu.len().max(1)) {
        let (columns, weights) = (column.chunks_exact(4), mu.chunks_exact(4));
        let tail = columns.remainder().iter().zip(weights.remainder());
        for (x, w) in columns.zip(weights) {
            for q in 0..4 {
                worst[q] = worst[q].max((x[q] / w[q] - inv_m).abs());
            }
        }
        for (x, w) in tail {
            worst[0] = worst[0].max((x / w - inv_m).abs());
        }
    }
    worst.into_iter().fold(0.0, f64::max)
}

/// The longest period [`deviation_by_lag`] looks for.
const MAX_PERIOD: usize = 16;

/// *Estimated* Lemma 3 constants from the realised products: `q` is `exp` of the least-squares
/// slope of `ln E(l)` over the second half of the lags with `E(l)` above rounding (the asymptotic
/// rate), and `C = max_l E(l) / q^l`, so that `E(l) <= C q^l` at every lag observed
/// (004:L525-532 gives only an existence statement with undefined `n`, `D`; I-DPGP10). A graph
/// that averages exactly in one round (complete) gives `q = 0`, `C = E(0)`.
pub fn estimate_c_q(by_lag: &[f64]) -> (f64, f64) {
    let e0 = by_lag.first().copied().unwrap_or(0.0);
    let live: Vec<(f64, f64)> = by_lag.iter().enumerate().skip(1).filter(|(_, e)| **e > DEVIATION_FLOOR).map(|(l, e)| (l as f64, e.ln())).collect();
    if live.is_empty() {
        return (e0, 0.0);
    }
    let tail = &live[live.len() / 2..];
    let q = if tail.len() >= 2 {
        let n = tail.len() as f64;
        let (mx, my) = (tail.iter().map(|p| p.0).sum::<f64>() / n, tail.iter().map(|p| p.1).sum::<f64>() / n);
        let sxy: f64 = tail.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = tail.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        (sxy / sxx).exp().min(1.0)
    } else {
        // One lag above rounding: its own geometric rate from lag 0.
        ((tail[0].1 - e0.max(DEVIATION_FLOOR).ln()) / tail[0].0).exp().min(1.0)
    };
    let c = if q > 0.0 { by_lag.iter().enumerate().filter(|(_, e)| **e > DEVIATION_FLOOR).map(|(l, e)| e / q.powi(l as i32)).fold(e0, f64::max) } else { e0 };
    (c, q)
}

/// Lags over which `C` and `q` are estimated at most.
pub const MAX_ESTIMATION_LAG: usize = 120;

/// Everything Assumption 1, `delta` and Lemma 3 need, from the first `rounds` graphs.
pub fn connectivity(topology: &Topology, m: usize, rounds: usize, seed: u64) -> Connectivity {
    connectivity_with(topology, MixingRule::Column, m, rounds, seed)
}

/// [`connectivity`] under a mixing rule.
pub fn connectivity_with(topology: &Topology, rule: MixingRule, m: usize, rounds: usize, seed: u64) -> Connectivity {
    connectivity_given(topology, rule, m, rounds, seed, None)
}

/// [`connectivity_with`], with Lemma 3's `C` and `q` the `given` ones when there are (and the
/// realised deviations measured against them, [`Envelope`]), else estimated.
pub fn connectivity_given(topology: &Topology, rule: MixingRule, m: usize, rounds: usize, seed: u64, given: Option<PushSumConstants>) -> Connectivity {
    connectivity_of(&GraphSequence::with_rule(topology, rule, m, rounds, seed), topology, seed, given)
}

/// [`connectivity_given`] of the graphs `seq` already realised (those of `topology` and `seed`,
/// under any mixing rule).
pub fn connectivity_of(seq: &GraphSequence, topology: &Topology, seed: u64, given: Option<PushSumConstants>) -> Connectivity {
    let (m, rounds) = (seq.nodes(), seq.rounds());
    let column_stochastic = seq.mixing.iter().all(|p| p.column_iter().all(|c| (c.sum() - 1.0).abs() <= super::prec::COLUMN_SUM));
    let delta = seq.weights.iter().map(|w| w.min()).fold(f64::INFINITY, f64::min);
    let by_lag = deviation_by_lag(seq, MAX_ESTIMATION_LAG);
    let ((c, q), given) = match given {
        Some(g) => ((g.c, g.q), Some(Envelope::measure(&by_lag, g.c, g.q))),
        None => (estimate_c_q(&by_lag), None),
    };
    Connectivity { window: smallest_window(topology, m, rounds, seed), delta, c, q, estimation_rounds: rounds, column_stochastic, given }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_deviations_give_their_c_and_q() {
        let by_lag: Vec<f64> = (0..40).map(|l| 2.0 * 0.5f64.powi(l)).collect();
        let (c, q) = estimate_c_q(&by_lag);
        assert!((q - 0.5).abs() < 1e-12 && (c - 2.0).abs() < 1e-9, "{c} {q}");
        // Every observed lag is under the estimated envelope, by construction.
        let bumpy: Vec<f64> = (0..40).map(|l| (1.0 + 0.5 * (l % 3) as f64) * 0.8f64.powi(l)).collect();
        let (c, q) = estimate_c_q(&bumpy);
        assert!(bumpy.iter().enumerate().all(|(l, e)| *e <= c * q.powi(l as i32) * (1.0 + 1e-12)));
        // Negative control: a slower decay than the one estimated is caught by the envelope.
        assert!((0..40).any(|l| 0.9f64.powi(l) > c * q.powi(l)));
        // Exact averaging in one round.
        assert_eq!(estimate_c_q(&[0.8, 0.0, 0.0]), (0.8, 0.0));
    }

    /// `E(l)` with every product formed for every start, as the definition reads.
    fn deviation_by_lag_directly(seq: &GraphSequence, max_lag: usize) -> Vec<f64> {
        let (m, rounds) = (seq.nodes(), seq.rounds());
        let mut by_lag = vec![0.0f64; max_lag.min(rounds) + 1];
        for s in 0..=rounds {
            let mut phi = DMatrix::<f64>::identity(m, m);
            for (lag, slot) in by_lag.iter_mut().enumerate().take(rounds - s + 1) {
                if lag > 0 {
                    phi = &seq.mixing[s + lag - 1] * &phi;
                }
                let mu = &seq.weights[s + lag];
                let worst = (0..m).flat_map(|i| (0..m).map(move |j| (i, j))).map(|(i, j)| (phi[(i, j)] / mu[i] - 1.0 / m as f64).abs()).fold(0.0, f64::max);
                *slot = slot.max(worst);
            }
        }
        by_lag
    }

    #[test]
    fn deviations_by_lag_of_periodic_sequences_are_the_direct_ones_bit_for_bit() {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        for (topology, period) in
            [(Topology::Ring, Some(1)), (Topology::Exponential, Some(3)), (Topology::Complete, Some(1)), (Topology::RandomOut { k: 2 }, None)]
        {
            let seq = GraphSequence::new(&topology, 8, 50, 3);
            assert_eq!(seq.period(MAX_PERIOD), period, "{}", topology.name());
            assert_eq!(bits(&deviation_by_lag(&seq, 20)), bits(&deviation_by_lag_directly(&seq, 20)), "{}", topology.name());
            // Node counts that leave a remainder after the four maxima side by side.
            for m in [3, 7] {
                let seq = GraphSequence::new(&topology, m, 30, 5);
                assert_eq!(bits(&deviation_by_lag(&seq, 12)), bits(&deviation_by_lag_directly(&seq, 12)), "{}, m = {m}", topology.name());
            }
        }
        // Negative control: one changed graph breaks the period; it is found, and the products
        // taken as periodic anyway give other deviations than the direct ones.
        let mut seq = GraphSequence::new(&Topology::Complete, 8, 50, 3);
        seq.mixing[10] = DMatrix::identity(8, 8);
        assert_eq!(seq.period(MAX_PERIOD), None);
        let direct = deviation_by_lag_directly(&seq, 20);
        assert_eq!(bits(&deviation_by_lag(&seq, 20)), bits(&direct));
        assert_ne!(bits(&deviation_by_lag_with_period(&seq, 20, 1)), bits(&direct));
    }

    #[test]
    fn exponential_graph_cycles_its_hops() {
        let hops: Vec<usize> = (0..4).map(|t| Topology::Exponential.out_neighbours(8, t, 0)[0][1]).collect();
        assert_eq!(hops, vec![1, 2, 4, 1]);
        let k = Topology::RandomOut { k: 3 }.out_neighbours(7, 5, 9);
        assert!(k.iter().enumerate().all(|(i, o)| o.len() == 4 && o.contains(&i)));
        assert_ne!(Topology::RandomOut { k: 3 }.out_neighbours(7, 5, 9), Topology::RandomOut { k: 3 }.out_neighbours(7, 6, 9), "fresh graphs per round");
        assert!(Topology::RandomOut { k: 7 }.validate("topology", 7).is_err());
    }

    #[test]
    fn recorded_sequences_repeat_the_graphs_with_their_period() {
        let same = |t: &Topology, r: &Topology, m: usize, n: usize| (0..n).all(|k| t.mixing(m, k, 5) == r.mixing(m, k, 5));
        for (t, period) in [(Topology::Ring, 1), (Topology::Exponential, 3), (Topology::Complete, 1), (Topology::RandomOut { k: 2 }, 40)] {
            let r = t.recorded(6, 40, 5);
            let Topology::Explicit { rounds, name } = &r else { unreachable!("recorded is explicit") };
            assert_eq!((rounds.len(), name.as_deref()), (period, Some(t.name().as_str())));
            assert!(same(&t, &r, 6, 40), "{}", t.name());
        }
        // Negative control: past the recorded horizon a random sequence is not repeated.
        let random = Topology::RandomOut { k: 2 };
        assert!(!same(&random, &random.recorded(6, 40, 5), 6, 41));
    }
}
