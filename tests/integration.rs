//! The integration tests, one binary: each file beside this one is a module (linking one binary
//! instead of one per file is most of what a fresh `cargo test` spends building). Run one file's
//! tests with `cargo test --test integration <file>::`, e.g. `cargo test --test integration engine::`.
//! `tests/family_gd` (the smallest family, with its card) stays its own binary.

/// The same allocator as the command line's (`src/main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bad_inputs;
mod card_formulas;
mod ccyw_horizon;
mod ccyw_instance;
mod ccyw_lemma_search;
mod ccyw_wrong_terms;
mod claim_kinds;
mod cli_bad_input;
mod clup;
mod clup_ball_slope;
mod clup_card;
mod clup_card_metrics;
mod clup_card_metrics_common;
mod clup_designs;
mod clup_explicit;
mod clup_figure3;
mod clup_figures;
mod clup_global_floor;
mod clup_k134;
mod clup_lemmas;
mod clup_rounding;
mod clup_search;
mod clup_step_conditions;
mod clup_wrong_terms;
mod default_scenarios;
mod dpgp;
mod dpgp_given;
mod dpgp_halves;
mod dpgp_instance;
mod dpgp_lemmas;
mod dpgp_noise;
mod dpgp_orderings;
mod dpgp_reference;
mod dpgp_search;
mod dpgp_settling;
mod dpgp_topology;
mod dpgp_weights;
mod dpgp_wrong_terms;
mod engine;
mod exact;
mod exact_accuracy;
mod experiments;
mod family_isolation;
mod fedplt;
mod fedplt_a6;
mod fedplt_client_steps;
mod fedplt_horizon;
mod fedplt_instance;
mod fedplt_psi;
mod fedplt_run_json;
mod fedplt_step_conditions;
mod fedplt_steps;
mod fedplt_tradeoff;
mod fedplt_wrong_terms;
mod figures;
mod formula_twins;
mod fuzz_inputs;
mod io_safety;
mod main_job;
mod never_wrong;
mod properties;
mod replicate_kernel;
mod scale_invariance;
mod search;
mod search_coverage;
mod search_generic;
mod sweep;
mod sweep_generic;
mod tight_scenarios;
