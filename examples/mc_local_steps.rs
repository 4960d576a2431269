//! A fixed Monte Carlo workload for instruction counts: FedAvg-P or Scaffold-P on the paper's
//! default setting (n = 10, m = 9, K = 25, du = dv = 5, gamma = 1/(32 L K), eta_u = sqrt(m),
//! eta_v = sqrt(n/m)), one replicate of `ROUNDS` rounds, seed 1.
//!
//! ```sh
//! cargo build --release --example mc_local_steps
//! valgrind --tool=callgrind target/release/examples/mc_local_steps fedavg 200
//! valgrind --tool=callgrind target/release/examples/mc_local_steps fedavg 400
//! ```
//! The difference of the two totals over the difference in local steps (200 x 9 x 25) is the cost
//! of a client local step with the per-round work, without the setup.

use fedbounds::families::ccyw::algorithm::{Algorithm, FedAvgP, RoundConfig, ScaffoldP};
use fedbounds::families::ccyw::monte_carlo::run_replicate;
use fedbounds::families::ccyw::problem::{Coupling, InstanceSpec};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("fedavg");
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let (n, m, k) = (10, 9, 25);
    let inst =
        InstanceSpec { n, du: 5, dv: 5, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b: 1.0, coupling: Coupling::Decoupled, init_distance: 3.0, seed: 11 }
            .build()
            .expect("valid instance");
    let gamma = 1.0 / (32.0 * k as f64);
    let (eta_u, eta_v) = ((m as f64).sqrt(), (n as f64 / m as f64).sqrt());
    let params = RoundConfig { k, m, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v }.check(n).expect("valid parameters");
    let alg: Box<dyn Algorithm> = match which {
        "scaffold" => Box::new(ScaffoldP { params }),
        _ => Box::new(FedAvgP { params }),
    };
    let t = run_replicate(&inst, alg.as_ref(), rounds, 1, 0);
    println!("{which}: {rounds} rounds, {} local steps, final |z|^2 = {:e}", rounds * m * k, t.final_state.norm_squared());
}
