//! A claim's formulas as a card gives them (`[claims.formula]`), compiled against a family's
//! symbols: intermediate quantities, the bound (or the two sides of a per-round inequality), scope
//! restrictions, conditions and implicit conditions.

use serde::{Deserialize, Serialize};

use crate::claim::{ConditionCheck, ConditionKind, Relation};
use crate::error::{Error, Result};

use super::compile::{compile, Code, Scope, Symbol};
use super::interval::Interval;
use super::parse::{self, Expr, Node, Rel};

/// How a card-defined bound is compared with the run's metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CompareSpec {
    /// `(1/T') sum_{t<T'} metric_t <= bound(T')`.
    #[default]
    RunningAverage,
    /// `metric_{T'-1} <= bound(T')`.
    PerRound,
    /// The fitted log-log slope of the metric over a sweep of `T` against the bound (an exponent).
    Slope,
}

/// Where a card-defined bound is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AtSpec {
    /// At every prefix `T' <= T` whose conditions hold.
    #[default]
    EveryPrefix,
    /// At the horizon `T` only (e.g. when a step is a function of `T`).
    Horizon,
}

/// The `[claims.formula]` table of a card entry.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FormulaCard {
    /// The algorithm the claim is about, for families with several (`fedavg-p`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    /// The family's metric bounded (see `fedbounds list --symbols`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// How the bound is compared.
    #[serde(default)]
    pub compare: CompareSpec,
    /// Where it is compared.
    #[serde(default)]
    pub at: AtSpec,
    /// Intermediate quantities, in order: `NAME = expression`.
    #[serde(default, rename = "let", skip_serializing_if = "Vec::is_empty")]
    pub lets: Vec<String>,
    /// The bound on the metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// Left side of a per-round inequality of a proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lhs: Option<String>,
    /// Right side of a per-round inequality of a proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rhs: Option<String>,
    /// The setting the claim is about (`m = n`, `dv = 0`): not applicable when one fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scope: Vec<String>,
    /// Step-size and parameter conditions the claim states: not applicable when one fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<String>,
    /// Conditions the proof uses but the statement omits: reported, never binding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implicit: Vec<String>,
}

/// One compiled expression with its text.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The text as written.
    pub text: String,
    /// Its syntax tree (for term-by-term diagnostics).
    pub expr: Expr,
    /// Its code.
    pub code: Code,
}

/// A compiled condition.
#[derive(Debug, Clone)]
pub struct CompiledCondition {
    /// Scope, step size or implicit.
    pub kind: ConditionKind,
    /// The text as written (the check's name in reports).
    pub text: String,
    /// Given side.
    pub lhs: Code,
    /// Comparison.
    pub rel: Rel,
    /// Required side.
    pub rhs: Code,
    /// When it applies.
    pub guard: Option<(Code, Rel, Code)>,
}

/// A claim's formulas, compiled: evaluate with the family's symbol values.
#[derive(Debug, Clone)]
pub struct ClaimFormulas {
    /// The claim id.
    pub claim: String,
    /// The card's table.
    pub card: FormulaCard,
    /// The family's symbols (slots `0..symbols.len()`).
    pub symbols: &'static [Symbol],
    /// Every slot's name: symbols, then intermediate quantities.
    pub scope: Scope,
    /// Intermediate quantities: name, slot, compiled expression.
    pub lets: Vec<(String, usize, Compiled)>,
    /// The bound.
    pub bound: Option<Compiled>,
    /// Left side of a per-round inequality.
    pub lhs: Option<Compiled>,
    /// Right side.
    pub rhs: Option<Compiled>,
    /// Scope restrictions, conditions and implicit conditions, in that order.
    pub conditions: Vec<CompiledCondition>,
}

/// A bare symbol (or its negation is not considered) compared with a number: the range it
/// narrows to where the condition holds.
fn narrowing(c: &parse::Comparison, scope: &Scope) -> Option<(usize, Interval)> {
    let num = |e: &Expr| match &e.node {
        Node::Num(v) => Some(*v),
        Node::Neg(inner) => match inner.node {
            Node::Num(v) => Some(-v),
            _ => None,
        },
        _ => None,
    };
    let name = |e: &Expr| match &e.node {
        Node::Name(n) => scope.slot(n),
        _ => None,
    };
    let (slot, rel, v) = match (name(&c.lhs), num(&c.rhs), num(&c.lhs), name(&c.rhs)) {
        (Some(s), Some(v), _, _) => (s, c.rel, v),
        (_, _, Some(v), Some(s)) => {
            let flipped = match c.rel {
                Rel::Le => Rel::Ge,
                Rel::Lt => Rel::Gt,
                Rel::Ge => Rel::Le,
                Rel::Gt => Rel::Lt,
                Rel::Eq => Rel::Eq,
            };
            (s, flipped, v)
        }
        _ => return None,
    };
    let to = match rel {
        Rel::Le => Interval { lo: f64::NEG_INFINITY, hi: v, lo_open: true, hi_open: false },
        Rel::Lt => Interval { lo: f64::NEG_INFINITY, hi: v, lo_open: true, hi_open: true },
        Rel::Ge => Interval::at_least(v),
        Rel::Gt => Interval::above(v),
        Rel::Eq => Interval::point(v),
    };
    Some((slot, to))
}

impl ClaimFormulas {
    /// Compiles `card` for claim `claim` against `symbols`.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `claims[ID].formula.FIELD`, the column and the text: a
    /// syntax error, an unknown symbol or function, a division that can be zero, a condition that
    /// is not a comparison, a name defined twice, a formula with neither a bound nor two sides.
    pub fn compile(claim: &str, card: &FormulaCard, symbols: &'static [Symbol]) -> Result<Self> {
        for (field, list) in [("let", &card.lets), ("scope", &card.scope), ("conditions", &card.conditions), ("implicit", &card.implicit)] {
            if list.len() > parse::MAX_LIST_LEN {
                return Err(Error::field(
                    format!("claims[{claim}].formula.{field}"),
                    format!("a list of {} entries", list.len()),
                    format!("at most {} entries", parse::MAX_LIST_LEN),
                ));
            }
        }
        let mut scope = Scope::new(symbols);
        let groups = [
            ("scope", &card.scope, ConditionKind::Scope),
            ("conditions", &card.conditions, ConditionKind::StepSize),
            ("implicit", &card.implicit, ConditionKind::Implicit),
        ];
        // Parse every condition first: those of the form `symbol >= number` narrow the ranges the
        // divisions are checked against (the claim is only evaluated where they hold).
        let mut parsed = Vec::new();
        for (field, list, kind) in groups {
            for (i, text) in list.iter().enumerate() {
                let f = format!("{field}[{i}]");
                let c = parse::parse_condition(text).map_err(|e| e.in_field(claim, &f, text))?;
                if c.guard.is_none() {
                    if let Some((slot, to)) = narrowing(&c.check, &scope) {
                        scope.narrow(slot, to);
                    }
                }
                parsed.push((f, text.clone(), kind, c));
            }
        }
        let mut lets = Vec::new();
        for (i, text) in card.lets.iter().enumerate() {
            let field = format!("let[{i}]");
            let (name, at, expr) = parse::parse_definition(text).map_err(|e| e.in_field(claim, &field, text))?;
            if scope.slot(&name).is_some() {
                return Err(super::FormulaError::at(at, format!("`{name}` is already defined (a symbol of the family or an earlier definition)"))
                    .in_field(claim, &field, text));
            }
            let (code, range) = compile(&expr, &scope).map_err(|e| e.in_field(claim, &field, text))?;
            let slot = scope.push(&name, range);
            lets.push((name, slot, Compiled { text: text.clone(), expr, code }));
        }
        let one = |field: &str, text: &Option<String>| -> Result<Option<Compiled>> {
            match text {
                None => Ok(None),
                Some(t) => {
                    let expr = parse::parse_expr(t).map_err(|e| e.in_field(claim, field, t))?;
                    let (code, _) = compile(&expr, &scope).map_err(|e| e.in_field(claim, field, t))?;
                    Ok(Some(Compiled { text: t.clone(), expr, code }))
                }
            }
        };
        let bound = one("bound", &card.bound)?;
        let lhs = one("lhs", &card.lhs)?;
        let rhs = one("rhs", &card.rhs)?;
        require_one_form(claim, bound.is_some(), lhs.is_some(), rhs.is_some())?;
        let mut conditions = Vec::new();
        for (field, text, kind, c) in parsed {
            // A guard narrows the ranges within its own condition (`1/x^2 ... if x > 0`).
            let mut inner = scope.clone();
            if let Some((slot, to)) = c.guard.as_ref().and_then(|g| narrowing(g, &scope)) {
                inner.narrow(slot, to);
            }
            let side = |e: &Expr| compile(e, &inner).map(|r| r.0).map_err(|err| err.in_field(claim, &field, &text));
            let guard = match &c.guard {
                Some(g) => Some((side(&g.lhs)?, g.rel, side(&g.rhs)?)),
                None => None,
            };
            conditions.push(CompiledCondition { kind, text: text.clone(), lhs: side(&c.check.lhs)?, rel: c.check.rel, rhs: side(&c.check.rhs)?, guard });
        }
        Ok(Self { claim: claim.to_string(), card: card.clone(), symbols, scope, lets, bound, lhs, rhs, conditions })
    }

    /// Every slot's value: the symbols' `values` (NaN where a constant has no finite value), then
    /// the intermediate quantities.
    pub fn env(&self, values: &[f64]) -> Vec<f64> {
        let mut env = values.to_vec();
        env.resize(self.symbols.len(), f64::NAN);
        for (_, _, c) in &self.lets {
            let v = c.code.eval(&env);
            env.push(v);
        }
        env
    }

    /// Which slots have no value: symbols given as NaN, and intermediate quantities that read one.
    pub fn unavailable(&self, values: &[f64]) -> Vec<bool> {
        let mut out: Vec<bool> = (0..self.symbols.len()).map(|i| values.get(i).is_none_or(|v| v.is_nan())).collect();
        for (_, _, c) in &self.lets {
            let missing = (0..out.len()).any(|i| out[i] && c.code.reads(i));
            out.push(missing);
        }
        out
    }

    fn reads_any(code: &Code, missing: &[bool]) -> bool {
        missing.iter().enumerate().any(|(i, m)| *m && code.reads(i))
    }

    /// The symbols (family constants) this claim reads anywhere.
    pub fn symbols_read(&self) -> Vec<usize> {
        let mut codes: Vec<&Code> = self.lets.iter().map(|l| &l.2.code).collect();
        codes.extend(self.bound.iter().chain(&self.lhs).chain(&self.rhs).map(|c| &c.code));
        for c in &self.conditions {
            codes.push(&c.lhs);
            codes.push(&c.rhs);
            if let Some(g) = &c.guard {
                codes.push(&g.0);
                codes.push(&g.2);
            }
        }
        (0..self.symbols.len()).filter(|i| codes.iter().any(|c| c.reads(*i))).collect()
    }

    /// The assumption behind each constant the claim reads that has one (e.g. a bounded
    /// dissimilarity for `b2`): holds when the constant has a finite value here.
    pub fn assumption_checks(&self, values: &[f64]) -> Vec<ConditionCheck> {
        self.symbols_read()
            .into_iter()
            .filter_map(|i| {
                let s = &self.symbols[i];
                let name = s.assumption?;
                let v = values.get(i).copied().unwrap_or(f64::NAN);
                Some(if v.is_finite() {
                    ConditionCheck::assumption(name, true, format!("{} = {}", s.name, crate::claim::fmt_num(v)))
                } else {
                    ConditionCheck::assumption(name, false, format!("`{}` ({}) has no finite value on this instance", s.name, s.meaning))
                })
            })
            .collect()
    }

    /// The scope, condition and implicit checks at these values, in card order. A condition whose
    /// guard fails is left out, as is one that reads a constant without a finite value whose
    /// assumption [`Self::assumption_checks`] reports failed. One that cannot be evaluated
    /// otherwise (it or its guard reads a value this scenario does not define, or its guard is
    /// NaN) fails as [`ConditionCheck::unevaluated`]: a condition that cannot be checked is
    /// never taken to hold.
    pub fn checks(&self, values: &[f64]) -> Vec<ConditionCheck> {
        let env = self.env(values);
        let missing = self.unavailable(values);
        // The same with every constant that has an assumption counted as given: what is missing
        // then is missing without an assumption to report it.
        let excused: Vec<f64> =
            values.iter().enumerate().map(|(i, v)| if self.symbols.get(i).is_some_and(|s| s.assumption.is_some()) { 0.0 } else { *v }).collect();
        let unexplained = self.unavailable(&excused);
        let mut out = Vec::new();
        for c in &self.conditions {
            let codes: Vec<&Code> = [&c.lhs, &c.rhs].into_iter().chain(c.guard.iter().flat_map(|g| [&g.0, &g.2])).collect();
            let relation = match c.rel {
                Rel::Le => Relation::AtMost,
                Rel::Lt => Relation::Below,
                Rel::Ge => Relation::AtLeast,
                Rel::Gt => Relation::Above,
                Rel::Eq => Relation::Equal,
            };
            if codes.iter().any(|code| Self::reads_any(code, &unexplained)) {
                out.push(ConditionCheck::unevaluated(c.text.clone(), c.kind, relation, "it reads a value this scenario does not define"));
                continue;
            }
            if codes.iter().any(|code| Self::reads_any(code, &missing)) {
                continue;
            }
            if let Some((a, rel, b)) = &c.guard {
                let (a, b) = (a.eval(&env), b.eval(&env));
                if a.is_nan() || b.is_nan() {
                    out.push(ConditionCheck::unevaluated(c.text.clone(), c.kind, relation, "its guard is undefined (NaN) here"));
                    continue;
                }
                if !rel.holds(a, b) {
                    continue;
                }
            }
            out.push(ConditionCheck::compare(c.text.clone(), c.kind, c.lhs.eval(&env), relation, c.rhs.eval(&env)));
        }
        out
    }

    /// Whether the bound reads a symbol given as NaN (no value), so [`Self::bound`] is `+inf`.
    pub fn bound_unavailable(&self, values: &[f64]) -> bool {
        self.bound.as_ref().is_some_and(|b| Self::reads_any(&b.code, &self.unavailable(values)))
    }

    /// The bound at these values (`+inf` where it reads a constant without a finite value).
    pub fn bound(&self, values: &[f64]) -> f64 {
        self.value_of(self.bound.as_ref(), values)
    }

    /// An expression's value (`+inf` where it reads a constant without a finite value, NaN when absent).
    pub fn value_of(&self, c: Option<&Compiled>, values: &[f64]) -> f64 {
        let Some(c) = c else { return f64::NAN };
        let missing = self.unavailable(values);
        if Self::reads_any(&c.code, &missing) {
            return f64::INFINITY;
        }
        c.code.eval(&self.env(values))
    }

    /// The value of a field by name: `bound`, `lhs`, `rhs`, or `let.NAME`.
    pub fn field(&self, field: &str, values: &[f64]) -> Option<f64> {
        let env = self.env(values);
        match field {
            "bound" => self.bound.as_ref().map(|c| c.code.eval(&env)),
            "lhs" => self.lhs.as_ref().map(|c| c.code.eval(&env)),
            "rhs" => self.rhs.as_ref().map(|c| c.code.eval(&env)),
            _ => {
                let name = field.strip_prefix("let.")?;
                self.lets.iter().find(|l| l.0 == name).map(|l| env[l.1])
            }
        }
    }

    /// The compiled expression of a field (see [`Self::field`]).
    pub fn compiled(&self, field: &str) -> Option<&Compiled> {
        match field {
            "bound" => self.bound.as_ref(),
            "lhs" => self.lhs.as_ref(),
            "rhs" => self.rhs.as_ref(),
            _ => {
                let name = field.strip_prefix("let.")?;
                self.lets.iter().find(|l| l.0 == name).map(|l| &l.2)
            }
        }
    }

    /// The top-level terms of a field's expression, each as (text, value) at these values.
    pub fn terms(&self, field: &str, values: &[f64]) -> Vec<(String, f64)> {
        let Some(c) = self.compiled(field) else { return Vec::new() };
        let env = self.env(values);
        // A definition's text starts with `NAME =`: spans are relative to the expression's text.
        let text = &c.text;
        parse::terms(&c.expr)
            .into_iter()
            .filter_map(|(sign, e)| {
                let (code, _) = compile(e, &self.scope).ok()?;
                Some((format!("{}{}", if sign < 0.0 { "-" } else { "+" }, text[e.start..e.end].trim()), sign * code.eval(&env)))
            })
            .collect()
    }

    /// The limit a condition puts on a bare symbol from above (`at_most`) or below: the right
    /// side of the first applicable condition `symbol <= expr` or `symbol < expr` (`at_most`),
    /// `symbol >= expr` or `symbol > expr` (`!at_most`), or `symbol = expr` (either), at these
    /// values, with its kind ([`Limit`]).
    pub fn limit_of(&self, symbol: &str, at_most: bool, values: &[f64]) -> Option<Limit> {
        let slot = self.scope.slot(symbol)?;
        let env = self.env(values);
        let missing = self.unavailable(values);
        self.conditions.iter().filter(|c| c.kind == ConditionKind::StepSize && c.lhs == Code::Slot(slot) && !Self::reads_any(&c.rhs, &missing)).find_map(|c| {
            let applies = c.guard.as_ref().is_none_or(|(a, rel, b)| rel.holds(a.eval(&env), b.eval(&env)));
            let v = c.rhs.eval(&env);
            match (c.rel, at_most) {
                _ if !applies => None,
                (Rel::Eq, _) => Some(Limit::Exactly(v)),
                (Rel::Le, true) | (Rel::Ge, false) => Some(Limit::Inclusive(v)),
                (Rel::Lt, true) | (Rel::Gt, false) => Some(Limit::Strict(v)),
                _ => None,
            }
        })
    }
}

/// The limit a step condition puts on a bare symbol ([`ClaimFormulas::limit_of`]): the condition's
/// right side, and whether the symbol must equal it, may equal it, or must stay off it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// `symbol = value`: the value is prescribed.
    Exactly(f64),
    /// `symbol <= value` or `symbol >= value`.
    Inclusive(f64),
    /// `symbol < value` or `symbol > value`: the value itself is excluded.
    Strict(f64),
}

impl Limit {
    /// The condition's right side, as printed (`gamma < 0.1` gives 0.1).
    pub fn bound(self) -> f64 {
        match self {
            Limit::Exactly(v) | Limit::Inclusive(v) | Limit::Strict(v) => v,
        }
    }

    /// The extreme admissible value on the side of `at_most`: the bound itself, or for a strict
    /// limit a value just inside it ([`crate::prec::strictly_inside`]), so that a step set there
    /// passes the condition.
    pub fn admissible(self, at_most: bool) -> f64 {
        match self {
            Limit::Exactly(v) | Limit::Inclusive(v) => v,
            Limit::Strict(v) => crate::prec::strictly_inside(v, at_most),
        }
    }

    /// Whether the symbol is prescribed (`symbol = value`).
    pub fn is_exact(self) -> bool {
        matches!(self, Limit::Exactly(_))
    }
}

/// A card formula is a `bound`, or the sides `lhs` and `rhs` of a per-round inequality: one
/// form, whole. Both at once would leave one unread (the bound was compared, the sides ignored).
///
/// # Errors
/// [`Error::InvalidField`] `claims[ID].formula`, naming what was given.
fn require_one_form(claim: &str, bound: bool, lhs: bool, rhs: bool) -> Result<()> {
    let field = format!("claims[{claim}].formula");
    if bound && (lhs || rhs) {
        return Err(Error::field(field, "both a `bound` and the sides `lhs`/`rhs` of a per-round inequality", "a `bound`, or `lhs` and `rhs`, not both"));
    }
    if !(bound || lhs && rhs) {
        return Err(Error::field(field, "neither `bound` nor both `lhs` and `rhs`", "a `bound`, or `lhs` and `rhs` of a per-round inequality"));
    }
    Ok(())
}
