//! DFedPGP (Liu, Shi, Li, Wu, Wang, Shen; paper 004): decentralized partial personalization with
//! push-sum over directed time-varying graphs.
//!
//! `topology` (graphs, push-sum weights, Assumption 1's window, `delta`, estimated `C`, `q`),
//! `problem` (the quadratics and their exact constants), `explicit` (instances given by their
//! matrices in a scenario file, and the explicit form `run --export-instance` writes), `phase`
//! (steps, the state's layout, a client's local phase, vectors affine in a round's state and
//! noise), `local` (what Lemmas 1 and 2 and (15) read in a round), `lemmas` (their per-round
//! verdicts), `round`
//! (Algorithm 1 as a random affine round, exact and sampled trajectories, and Assumption 4's constant on the points where the
//! proofs use it), `claims` (the claims' constants and conditions:
//! Lemma 3, inequality (32) and its halves (26) and (31), Theorem 1's bracket, Corollary 1's rate
//! and its split), `card` (scenario schema), `check` (scenario runs; the rate and O(.) verdicts
//! through the claim kinds of [`crate::kinds`]), `axis` (what a comparison's scenarios differ in and
//! the claims it checks), `compare` (the orderings of runs: Remarks 1-3, Figure 3a), `plot`,
//! `family`.
//!
//! Readings where the paper is inconsistent (CLAIMS.md I-DPGP items) are encoded as the proof
//! supports them, the printed forms as `~name` variants: Lemma 2's constant `32 K_u^2 eta_u^2`
//! from its proof's geometric sum (`~printed` for (10)'s `32 K_u eta_u^2`, I-DPGP5); Lemma 3's AA with the `(K_u+1)` factors
//! of (19) (`~printed` for (13)); (32)'s `sigma_v` term without the spurious `L_v^2`
//! (`~printed-sv`) and its bracket with `L_u^2 AA` (`~bracket-aa`); Theorem 1's step conditions
//! as the proof needs them (`~printed-step` for `eta_u < delta/(4 sqrt(2 L_u K_u))`); push-sum
//! (column-stochastic) mixing, with the experiments' row-stochastic pull weights as a scenario
//! option outside the claims' scope. Assumption 4 as printed (a supremum over all `u`, `V`) is
//! infinite with client-specific `A_i` or any coupling `B_i`; the stated claims are then not
//! applicable and say so, and the `~visited-sg` variants read it on the local iterates where
//! Lemmas 2 and 3 use it (004:L503, L532), labelled `empirical`.

pub mod axis;
pub mod card;
pub mod card_claims;
pub mod check;
pub mod claim;
pub mod claims;
pub mod compare;
pub mod explicit;
pub mod family;
pub mod formulas;
pub mod lemmas;
pub mod local;
pub mod phase;
pub mod phase_map;
pub mod plot;
pub mod prec;
pub mod problem;
pub mod round;
pub mod search;
pub mod topology;

pub use family::FAMILY;
