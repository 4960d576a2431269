//! Claims defined in a user's card: what every family shares when it reads them.
//!
//! A card given with `--card` may define claims that are not built in, each by a
//! `[claims.formula]` table over the family's symbols. [`UserClaim::compile`] checks the entry
//! against the family's [`UserClaimRules`] (its symbols, the metrics and algorithms it runs, the
//! comparisons it makes) and names the field at fault; [`FormulaClaim`] makes the compiled claim
//! a [`BoundClaim`] over the family's inputs, so `verdict::evaluate` decides it like a built-in
//! claim; [`compile_card_claims`] compiles a card's claims into a value that the command which
//! read the card passes on (`check`, `list`, `conditions` and `search` each take the card).

use crate::card::ClaimCard;
use crate::claim::{fmt_num, BoundClaim, Comparison, ConditionCheck, Horizon, Reading};
use crate::error::{Error, Result};
use crate::family::{ClaimKind, ClaimSummary, Given};

use super::claim::AtSpec;
use super::{ClaimFormulas, CompareSpec, Symbol};

/// What a family accepts in a card-defined claim.
#[derive(Debug, Clone, Copy)]
pub struct UserClaimRules {
    /// The family's symbols (a bound may not read their per-round quantities).
    pub symbols: &'static [Symbol],
    /// The metrics a claim may bound, by name.
    pub metrics: &'static [&'static str],
    /// The algorithms a claim may be about (the first is the default); empty when the family runs one.
    pub algorithms: &'static [&'static str],
    /// The comparisons the family makes.
    pub comparisons: &'static [CompareSpec],
}

/// A claim read from a card and compiled: metadata, the metric and algorithm chosen by name, the
/// comparison, and its formulas.
#[derive(Debug, Clone)]
pub struct UserClaim {
    /// Claim id.
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// Source, as the card gives it.
    pub source: &'static str,
    /// The reading, as the card gives it.
    pub description: &'static str,
    /// The statement as the card prints it.
    pub statement: String,
    /// The metric bounded (one of [`UserClaimRules::metrics`]).
    pub metric: &'static str,
    /// The algorithm (one of [`UserClaimRules::algorithms`], empty when the family runs one).
    pub algorithm: &'static str,
    /// How the bound is compared.
    pub comparison: CompareSpec,
    /// Compared at every prefix `T' <= T` (else at the horizon only).
    pub every_prefix: bool,
    /// The compiled formulas.
    pub formulas: ClaimFormulas,
}

/// A string that lives for the rest of the process (claim metadata is `&'static str` everywhere).
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn pick(field: String, what: &str, given: Option<&str>, allowed: &'static [&'static str]) -> Result<&'static str> {
    match given {
        Some(name) => allowed.iter().copied().find(|a| *a == name).ok_or_else(|| Error::field(field, format!("unknown {what} `{name}`"), allowed.join(", "))),
        None => Err(Error::field(field, "missing", allowed.join(", "))),
    }
}

impl UserClaim {
    /// Compiles a card entry under a family's rules.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `claims[ID].formula.FIELD`: no formula, a formula that does
    /// not compile (with its column), no bound, a per-round quantity read, an unknown metric or
    /// algorithm, a comparison the family does not make.
    pub fn compile(card: &ClaimCard, rules: &UserClaimRules) -> Result<Self> {
        let id = &card.id;
        let field = |f: &str| format!("claims[{id}].formula{f}");
        let f = card.formula.as_ref().ok_or_else(|| {
            Error::field(
                field(""),
                "the claim is not built in and has no formula",
                "a [claims.formula] table with a `bound` over this family's symbols (`fedbounds list --symbols`)",
            )
        })?;
        let formulas = ClaimFormulas::compile(id, f, rules.symbols)?;
        if formulas.bound.is_none() {
            return Err(Error::field(field(".bound"), "missing (per-round inequalities of a proof are built in only)", "a bound on the metric"));
        }
        if let Some(i) = formulas.symbols_read().into_iter().find(|i| rules.symbols[*i].per_round) {
            return Err(Error::field(
                field(""),
                format!("reads `{}`, a per-round quantity of a proof", rules.symbols[i].name),
                "constants and parameters only",
            ));
        }
        let metric = pick(field(".metric"), "metric", f.metric.as_deref(), rules.metrics)?;
        let algorithm = match (rules.algorithms.first(), f.algorithm.as_deref()) {
            (None, None) => "",
            (None, Some(a)) => return Err(Error::field(field(".algorithm"), format!("got `{a}`"), "no key: this family runs one algorithm")),
            (Some(default), a) => pick(field(".algorithm"), "algorithm", Some(a.unwrap_or(default)), rules.algorithms)?,
        };
        if !rules.comparisons.contains(&f.compare) {
            let names: Vec<&str> = rules.comparisons.iter().map(|c| compare_name(*c)).collect();
            return Err(Error::field(field(".compare"), format!("`{}` is not a comparison this family makes", compare_name(f.compare)), names.join(", ")));
        }
        Ok(Self {
            id: leak(id),
            title: leak(&card.title),
            source: leak(&card.source),
            description: leak(&card.reading),
            statement: card.statement.clone(),
            metric,
            algorithm,
            comparison: f.compare,
            every_prefix: f.at == AtSpec::EveryPrefix,
            formulas,
        })
    }

    /// The reading: a card-defined claim has one, its own.
    pub fn reading(&self) -> Reading {
        Reading { name: "primary", is_variant: false, description: self.description }
    }

    /// The comparison as the verdict core takes it (`slope` is decided by the family).
    pub fn core_comparison(&self) -> Comparison {
        match self.comparison {
            CompareSpec::PerRound => Comparison::PerRound,
            CompareSpec::RunningAverage | CompareSpec::Slope => Comparison::RunningAverage,
        }
    }

    /// The assumption checks of the constants read, then the scope, step and implicit checks.
    pub fn checks(&self, values: &[f64]) -> Vec<ConditionCheck> {
        let mut out = self.formulas.assumption_checks(values);
        out.extend(self.formulas.checks(values));
        out
    }

    /// Whether a formula of the claim reads the symbol `name`.
    pub fn reads(&self, name: &str) -> bool {
        self.formulas.symbols_read().into_iter().any(|i| self.formulas.symbols[i].name == name)
    }
}

fn compare_name(c: CompareSpec) -> &'static str {
    match c {
        CompareSpec::RunningAverage => "running-average",
        CompareSpec::PerRound => "per-round",
        CompareSpec::Slope => "slope",
    }
}

/// A card-defined claim as a [`BoundClaim`] over a family's inputs `I`, the symbol values read
/// from them by `values`.
pub struct FormulaClaim<I> {
    /// The compiled claim.
    pub claim: UserClaim,
    /// The family's symbol values at its inputs.
    pub values: fn(&I) -> Vec<f64>,
}

impl<I: Horizon + Sync + Send> BoundClaim for FormulaClaim<I> {
    type Inputs = I;
    fn id(&self) -> &'static str {
        self.claim.id
    }
    fn title(&self) -> &'static str {
        self.claim.title
    }
    fn source(&self) -> &'static str {
        self.claim.source
    }
    fn reading(&self) -> Reading {
        self.claim.reading()
    }
    fn comparison(&self) -> Comparison {
        self.claim.core_comparison()
    }
    fn every_prefix(&self) -> bool {
        self.claim.every_prefix
    }
    fn checks(&self, x: &I) -> Vec<ConditionCheck> {
        self.claim.checks(&(self.values)(x))
    }
    fn bound(&self, x: &I) -> f64 {
        self.claim.formulas.bound(&(self.values)(x))
    }
}

/// A family's claim: built in (`B`), or defined by a card (compiled formulas over the family's
/// inputs `I`). A family that reads card-defined claims uses it as its `Plugin::Claim`.
#[derive(Clone)]
pub enum AnyClaim<B, I> {
    /// A built-in claim.
    Builtin(B),
    /// A claim a card defines by formulas.
    Card(std::sync::Arc<FormulaClaim<I>>),
}

impl<B: BoundClaim<Inputs = I>, I: Horizon + Sync + Send + 'static> AnyClaim<B, I> {
    /// The claim as a bound over the family's inputs.
    pub fn bound(&self) -> &dyn BoundClaim<Inputs = I> {
        match self {
            AnyClaim::Builtin(c) => c,
            AnyClaim::Card(c) => c.as_ref(),
        }
    }

    /// Its id.
    pub fn id(&self) -> &'static str {
        self.bound().id()
    }

    /// Whether it reads the symbol `name`: a card-defined claim's formulas say, `builtin` says for
    /// a built-in claim.
    pub fn reads(&self, name: &str, builtin: impl Fn(&B) -> bool) -> bool {
        match self {
            AnyClaim::Builtin(c) => builtin(c),
            AnyClaim::Card(c) => c.claim.reads(name),
        }
    }

    /// The claim as `list` and the reports show it: a built-in claim with its card's `statement`
    /// and the `metric` it compares, a card-defined claim with its own statement and `card_metric`.
    pub fn summary(&self, kind: ClaimKind, statement: String, metric: &'static str, card_metric: &'static str) -> ClaimSummary {
        let (statement, metric) = match self {
            AnyClaim::Builtin(_) => (statement, metric),
            AnyClaim::Card(c) => (c.claim.statement.clone(), card_metric),
        };
        let b = self.bound();
        ClaimSummary { id: b.id(), kind, title: b.title(), statement, source: b.source(), reading: b.reading(), metric }
    }
}

/// A card as read: as written (`card`, in the family's schema `C`), with the claims it defines
/// (not built in) compiled, in card order. It derefs to the card.
pub struct ReadCard<C, D> {
    /// The card.
    pub card: C,
    /// The claims it defines.
    pub defined: Vec<std::sync::Arc<D>>,
}

impl<S, C: crate::paper_card::CardView<S>, D> crate::paper_card::CardView<S> for ReadCard<C, D> {
    fn scenarios(&self) -> Vec<&S> {
        self.card.scenarios()
    }
    fn entries(&self) -> crate::paper_card::CardEntries<'_> {
        self.card.entries()
    }
}

impl<C, D> std::ops::Deref for ReadCard<C, D> {
    type Target = C;
    fn deref(&self) -> &C {
        &self.card
    }
}

/// [`conditions_text`] for the card-defined claims of `defined` named in `ids` (each one when
/// `ids` is empty); `None` when none is chosen (the family answers for its built-in claims), an
/// error when some are chosen beside an id the card does not define ([`require_only_defined`]).
pub fn defined_conditions<I>(
    defined: &[std::sync::Arc<FormulaClaim<I>>],
    ids: &[String],
    symbols: &[Symbol],
    given: &Given,
    json: bool,
) -> Option<Result<String>> {
    let chosen: Vec<&UserClaim> = defined.iter().filter(|c| ids.is_empty() || ids.iter().any(|id| *id == c.claim.id)).map(|c| &c.claim).collect();
    let defined_ids: Vec<&str> = defined.iter().map(|c| c.claim.id).collect();
    (!chosen.is_empty()).then(|| require_only_defined(ids, &defined_ids).and_then(|()| conditions_text(&chosen, symbols, given, json)))
}

/// Refuses, beside claims a card defines, an id it does not define: the conditions printed are
/// those of the card's claims, so another id would be dropped without a word.
///
/// # Errors
/// [`Error::InvalidField`] `--claim`, naming the id and the card's claims.
pub fn require_only_defined(ids: &[String], defined: &[&str]) -> Result<()> {
    match ids.iter().find(|id| !defined.contains(&id.as_str())) {
        Some(id) => Err(Error::field(
            "--claim",
            format!("`{id}` beside claims the card defines: their conditions are printed alone (ask for `{id}` in a command of its own)"),
            defined.join(", "),
        )),
        None => Ok(()),
    }
}

/// Compiles (with `compile`) the entries of a card whose id is not in `builtin`, in card order.
/// Pure: nothing is kept, so the same card read twice gives the same claims and two cards do not
/// interfere; the card that defines them travels with the command that read it. `embedded` are
/// the family's embedded cards (TOML text), whose entries of built-in claims a card's entry with
/// a built-in id must match (see [`check_entries`]).
///
/// # Errors
/// The first entry that does not compile, naming its field.
pub fn compile_card_claims<C>(
    entries: &[ClaimCard],
    builtin: &[&str],
    embedded: &[&str],
    symbols: &'static [Symbol],
    compile: impl Fn(&ClaimCard) -> Result<C>,
) -> Result<Vec<std::sync::Arc<C>>> {
    check_entries(entries, builtin, embedded, symbols)?;
    entries.iter().filter(|e| !builtin.contains(&e.id.as_str())).map(|e| compile(e).map(std::sync::Arc::new)).collect()
}

/// What a card's claim entries must be, whatever the family does with them: each id a safe file
/// name ([`require_claim_id`]: it names the claim's report files), each id once (a repeated id
/// would be counted twice), an entry with a built-in claim's id that claim's own (its formula as
/// in the family's `embedded` cards: a claim the card means to define under a built-in id would
/// otherwise be taken for the built-in one and never checked), each `bound.builtin` a built-in
/// claim's id, and the formula of a built-in claim's entry (its twin) compiling over the family's
/// `symbols`, so a card never carries a formula nobody read (an unknown name, `1/0`).
///
/// # Errors
/// [`Error::InvalidField`] naming the entry and its field.
pub fn check_entries(entries: &[ClaimCard], builtin: &[&str], embedded: &[&str], symbols: &'static [Symbol]) -> Result<()> {
    for (i, e) in entries.iter().enumerate() {
        require_claim_id(&format!("claims[{i}].id"), &e.id)?;
    }
    let own = builtin_entries(embedded);
    for (i, e) in entries.iter().enumerate() {
        if entries[..i].iter().any(|o| o.id == e.id) {
            return Err(Error::field(format!("claims[{i}].id"), format!("`{}` appears twice", e.id), "unique claim ids within a card"));
        }
        if let Some(b) = e.bound.builtin.as_deref().filter(|b| !builtin.contains(b)) {
            return Err(Error::field(format!("claims[{}].bound.builtin", e.id), format!("unknown built-in bound `{b}`"), builtin.join(", ")));
        }
        // A built-in claim is checked with its own bound: another one named here would be ignored.
        let own_bound = own.iter().find(|o| o.id == e.id).map(|o| o.bound.builtin.as_deref());
        if let (Some(b), Some(own_b)) = (e.bound.builtin.as_deref(), own_bound.filter(|o| *o != e.bound.builtin.as_deref())) {
            return Err(Error::field(
                format!("claims[{}].bound.builtin", e.id),
                format!("`{b}` on the built-in claim `{}`, which is checked with its own bound", e.id),
                format!("`{}` as in theorems/, or no `bound`; a claim with another bound under an id of its own", own_b.unwrap_or(e.id.as_str())),
            ));
        }
        if let Some(f) = e.formula.as_ref().filter(|_| builtin.contains(&e.id.as_str())) {
            crate::formula::ClaimFormulas::compile(&e.id, f, symbols)?;
        }
        let formula = |c: &ClaimCard| serde_json::to_value(&c.formula).ok();
        if own.iter().any(|o| o.id == e.id && formula(o) != formula(e)) {
            return Err(Error::field(
                format!("claims[{i}].id"),
                format!("`{}` is a built-in claim's id, and this entry's formula is not that claim's (a claim defined under it would never be checked)", e.id),
                "an id of its own for a claim the card defines; an entry with a built-in claim's id keeps that claim's formula as in theorems/",
            ));
        }
    }
    Ok(())
}

/// The characters a claim id may have, as said in errors.
pub const CLAIM_ID_FORM: &str = "a non-empty id of ASCII letters, digits, `-`, `_`, `.` and `~`, not starting with `.` (e.g. LOCAL-SGD~no-drift)";

/// The longest claim id: its report files' names (with `@SOURCE` and an extension) stay well
/// under the 255 bytes of a file name.
pub const CLAIM_ID_MAX_LEN: usize = 120;

/// Refuses a claim id that is not a safe file name: ids name report files (`claims/<ID>.json`,
/// `search/<ID>.toml`), so one with `/`, `..` or a leading `.` would write outside its folder or
/// a hidden file.
///
/// # Errors
/// [`Error::InvalidField`] naming `field` and [`CLAIM_ID_FORM`], or an id longer than
/// [`CLAIM_ID_MAX_LEN`].
pub fn require_claim_id(field: &str, id: &str) -> Result<()> {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_.~".contains(c);
    if id.is_empty() || id.starts_with('.') || !id.chars().all(safe) {
        let got = if id.is_empty() { "an empty id".to_string() } else { format!("`{}`", id.escape_debug()) };
        return Err(Error::field(field, format!("{got} cannot name the claim's report files"), CLAIM_ID_FORM));
    }
    // The longest file named after it, `ID@SOURCE.json` in `search/`, stays under the 255 bytes a
    // file name may take.
    if id.len() > CLAIM_ID_MAX_LEN {
        return Err(Error::field(
            field,
            format!("an id of {} characters cannot name the claim's report files", id.len()),
            format!("at most {CLAIM_ID_MAX_LEN} characters"),
        ));
    }
    Ok(())
}

/// The claim entries of a family's embedded cards (TOML text; the rest of each card is ignored).
/// The cards are the crate's own, read by a test of each family, so one that cannot be read here
/// gives no entries.
fn builtin_entries(embedded: &[&str]) -> Vec<ClaimCard> {
    #[derive(serde::Deserialize)]
    struct Entries {
        #[serde(default)]
        claims: Vec<ClaimCard>,
    }
    embedded.iter().filter_map(|text| toml::from_str::<Entries>(text).ok()).flat_map(|e| e.claims).collect()
}

/// The `conditions` command for card-defined claims: each symbol takes the given value of the
/// same name (`--set NAME=VALUE`, or a flag such as `--eta-u` for `eta_u`, matched ignoring case
/// when no symbol has that exact name: [`crate::formula::symbols::symbol_read`]), NaN when none
/// is; then every check of each claim and, when all binding ones hold, the bound.
///
/// A claim is `NOT applicable` when a binding check fails, `undecided` when none fails but a
/// condition (or the bound) reads a value not given: a condition that cannot be checked is never
/// taken to hold. In JSON, `applicable` is `null` when undecided and `undecided` lists the
/// conditions left unchecked.
pub fn conditions_text(claims: &[&UserClaim], symbols: &[Symbol], given: &Given, json: bool) -> Result<String> {
    // Each given value reads the one symbol `symbol_read` resolves it to (an exact name first):
    // FedPLT's `t` is not also taken for `T`.
    let values: Vec<f64> =
        symbols.iter().map(|s| given.iter().find(|(k, _)| crate::formula::symbols::symbol_read(symbols, k) == s.name).map_or(f64::NAN, |(_, v)| *v)).collect();
    let mut text = String::new();
    let mut rows = Vec::new();
    for c in claims {
        let checks = c.checks(&values);
        // Here a condition cannot be evaluated only for a value not given.
        let unchecked: Vec<&str> = checks.iter().filter(|k| k.is_unevaluated()).map(|k| k.name.as_str()).collect();
        let bound_reads_missing = c.formulas.bound_unavailable(&values);
        let applicable = match () {
            _ if checks.iter().any(|k| !k.holds && k.is_binding() && !k.is_unevaluated()) => Some(false),
            _ if !unchecked.is_empty() || bound_reads_missing => None,
            _ => Some(true),
        };
        let bound = (applicable == Some(true)).then(|| c.formulas.bound(&values));
        let status = match applicable {
            Some(true) => "applicable",
            Some(false) => "NOT applicable",
            None => "undecided (values not given)",
        };
        text.push_str(&format!("{}: {status}\n", c.id));
        for k in &checks {
            match (k.holds, k.is_unevaluated()) {
                (_, true) => text.push_str(&format!("    [??] {}: not checked\n", k.name)),
                (holds, false) => text.push_str(&format!("    [{}] {k}\n", if holds { "ok" } else { "FAIL" })),
            }
        }
        let missing: Vec<&str> = c.formulas.symbols_read().into_iter().filter(|i| values[*i].is_nan()).map(|i| symbols[i].name).collect();
        if !missing.is_empty() {
            text.push_str(&format!("  not given (--set NAME=VALUE): {}\n", missing.join(", ")));
        }
        if let Some(b) = bound {
            text.push_str(&format!("  bound = {}\n", fmt_num(b)));
        }
        rows.push(serde_json::json!({
            "claim": c.id,
            "applicable": applicable,
            "bound": bound,
            "missing": missing,
            "undecided": unchecked,
            "checks": checks.iter().filter(|k| !k.is_unevaluated()).map(|k| serde_json::json!({"check": k.to_string(), "holds": k.holds, "kind": k.kind})).collect::<Vec<_>>(),
        }));
    }
    if json {
        serde_json::to_string_pretty(&rows).map(|s| s + "\n").map_err(|e| Error::serialization("card claims", e))
    } else {
        Ok(text)
    }
}
