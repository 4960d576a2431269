//! Syntax tree to evaluable code: names resolved to slots once, divisions checked against the
//! ranges of the symbols, evaluation a walk over a small tree with no lookups.

use super::interval::Interval;
use super::parse::{BinOp, Expr, Node};
use super::FormulaError;

/// One named value a family's formulas may read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Symbol {
    /// Its name in formulas (e.g. `gamma`, `sigma_u2`).
    pub name: &'static str,
    /// What it is, with the paper's notation.
    pub meaning: &'static str,
    /// The values it can take where a claim is evaluated; divisions are checked against it.
    pub range: Interval,
    /// The assumption that makes it finite, when it may have no finite value on an instance
    /// (e.g. a bounded gradient dissimilarity for `b2`): a claim that reads it reports that
    /// assumption, failed where the value is missing.
    pub assumption: Option<&'static str>,
    /// Whether it is a per-round quantity of a proof (a lemma's `E^t`, a recursion's `D^t`):
    /// no value at a claim's inputs, so a card-defined bound may not read it.
    pub per_round: bool,
}

/// Names in scope while compiling: the family's symbols, then intermediate quantities, each with
/// the range of values it can take.
#[derive(Debug, Clone)]
pub struct Scope {
    names: Vec<String>,
    ranges: Vec<Interval>,
}

impl Scope {
    /// The family's symbols, slot `i` being `symbols[i]`.
    pub fn new(symbols: &[Symbol]) -> Self {
        Self { names: symbols.iter().map(|s| s.name.to_string()).collect(), ranges: symbols.iter().map(|s| s.range).collect() }
    }

    /// Slot of `name`.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Adds an intermediate quantity; returns its slot.
    pub fn push(&mut self, name: &str, range: Interval) -> usize {
        self.names.push(name.to_string());
        self.ranges.push(range);
        self.names.len() - 1
    }

    /// Narrows the range of slot `i` (a condition `gamma <= 1` known to hold where the claim is
    /// evaluated).
    pub fn narrow(&mut self, i: usize, to: Interval) {
        self.ranges[i] = self.ranges[i].intersect(&to);
    }

    /// The range of slot `i`.
    pub fn range(&self, i: usize) -> Interval {
        self.ranges[i]
    }

    /// Every name, in slot order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// Functions a formula may call, with their arities (`None`: one or more).
pub const FUNCTIONS: [(&str, Option<usize>, &str); 7] = [
    ("sqrt", Some(1), "square root"),
    ("ln", Some(1), "natural logarithm"),
    ("exp", Some(1), "exponential"),
    ("abs", Some(1), "absolute value"),
    ("min", None, "smallest argument"),
    ("max", None, "largest argument"),
    ("div_pos", Some(2), "div_pos(a, b) = a/b when b > 0, else +infinity (a bound that says nothing)"),
];

/// A function of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fun {
    /// `sqrt`
    Sqrt,
    /// `ln`
    Ln,
    /// `exp`
    Exp,
    /// `abs`
    Abs,
}

impl Fun {
    fn apply(self, x: f64) -> f64 {
        match self {
            Fun::Sqrt => x.sqrt(),
            Fun::Ln => x.ln(),
            Fun::Exp => x.exp(),
            Fun::Abs => x.abs(),
        }
    }
}

/// Compiled code of one expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Code {
    /// A constant.
    Const(f64),
    /// A slot's value.
    Slot(usize),
    /// `-a`.
    Neg(Box<Code>),
    /// `a op b`.
    Bin(BinOp, Box<Code>, Box<Code>),
    /// `sqrt`, `ln`, `exp`, `abs`.
    Unary(Fun, Box<Code>),
    /// `min(...)`.
    Min(Vec<Code>),
    /// `max(...)`.
    Max(Vec<Code>),
    /// `div_pos(a, b)`.
    DivPos(Box<Code>, Box<Code>),
}

impl Code {
    /// The value with slot values `v`.
    pub fn eval(&self, v: &[f64]) -> f64 {
        match self {
            Code::Const(c) => *c,
            Code::Slot(i) => v[*i],
            Code::Neg(a) => -a.eval(v),
            Code::Bin(op, a, b) => {
                let (a, b) = (a.eval(v), b.eval(v));
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => a / b,
                    BinOp::Pow => pow(a, b),
                }
            }
            Code::Unary(f, a) => f.apply(a.eval(v)),
            Code::Min(args) => args.iter().map(|a| a.eval(v)).fold(f64::INFINITY, crate::engine::nan_min),
            Code::Max(args) => args.iter().map(|a| a.eval(v)).fold(f64::NEG_INFINITY, crate::engine::nan_max),
            Code::DivPos(a, b) => {
                let d = b.eval(v);
                if d > 0.0 {
                    a.eval(v) / d
                } else {
                    f64::INFINITY
                }
            }
        }
    }

    /// Whether the code reads slot `i`.
    pub fn reads(&self, i: usize) -> bool {
        match self {
            Code::Const(_) => false,
            Code::Slot(j) => *j == i,
            Code::Neg(a) | Code::Unary(_, a) => a.reads(i),
            Code::Bin(_, a, b) | Code::DivPos(a, b) => a.reads(i) || b.reads(i),
            Code::Min(args) | Code::Max(args) => args.iter().any(|a| a.reads(i)),
        }
    }
}

/// `a^b` with small integer exponents as products (so `x^2` is `x*x`, as hand-written code has it).
fn pow(a: f64, b: f64) -> f64 {
    if b == 2.0 {
        a * a
    } else if b == 3.0 {
        a * a * a
    } else if b.fract() == 0.0 && b.abs() <= i32::MAX as f64 {
        a.powi(b as i32)
    } else {
        a.powf(b)
    }
}

/// Compiles `e` in `scope`, returning the code and the range of its values.
///
/// # Errors
/// An unknown name or function, a wrong number of arguments, or a division whose divisor can be
/// zero over the ranges of the names it reads; each at its position.
pub fn compile(e: &Expr, scope: &Scope) -> Result<(Code, Interval), FormulaError> {
    match &e.node {
        Node::Num(v) => Ok((Code::Const(*v), Interval::point(*v))),
        Node::Name(name) => match scope.slot(name) {
            Some(i) => Ok((Code::Slot(i), scope.range(i))),
            None => Err(FormulaError::at(e.start, format!("unknown symbol `{name}`; known: {}", scope.names().join(", ")))),
        },
        Node::Neg(a) => {
            let (c, r) = compile(a, scope)?;
            Ok((Code::Neg(Box::new(c)), r.neg()))
        }
        Node::Bin(op, a, b) => {
            let (ca, ra) = compile(a, scope)?;
            let (cb, rb) = compile(b, scope)?;
            let r = match op {
                BinOp::Add => ra.add(&rb),
                BinOp::Sub => ra.add(&rb.neg()),
                BinOp::Mul => ra.mul(&rb),
                BinOp::Div => {
                    if rb.contains_zero() {
                        return Err(FormulaError::at(
                            b.start,
                            format!("division by a quantity that can be zero (it ranges over {rb}); state a condition that excludes it, or use div_pos(a, b)"),
                        ));
                    }
                    ra.mul(&rb.recip())
                }
                BinOp::Pow => match cb {
                    Code::Const(p) => ra.pow(p),
                    _ => Interval::everything(),
                },
            };
            let code = Code::Bin(*op, Box::new(ca), Box::new(cb));
            // Constant parts fold to constants (so `n^(2/3)` has a constant exponent).
            match code {
                Code::Bin(_, ref a, ref b) if matches!(**a, Code::Const(_)) && matches!(**b, Code::Const(_)) => {
                    let v = code.eval(&[]);
                    Ok((Code::Const(v), Interval::point(v)))
                }
                _ => Ok((code, r)),
            }
        }
        Node::Call(name, args) => {
            let Some((_, arity, _)) = FUNCTIONS.iter().find(|f| f.0 == name) else {
                let known: Vec<&str> = FUNCTIONS.iter().map(|f| f.0).collect();
                return Err(FormulaError::at(e.start, format!("unknown function `{name}`; known: {}", known.join(", "))));
            };
            if arity.is_some_and(|n| n != args.len()) || args.is_empty() {
                return Err(FormulaError::at(e.start, format!("`{name}` takes {} argument(s), got {}", arity.unwrap_or(1), args.len())));
            }
            let mut codes = Vec::new();
            let mut ranges = Vec::new();
            for a in args {
                let (c, r) = compile(a, scope)?;
                codes.push(c);
                ranges.push(r);
            }
            let one = |f: Fun, codes: &mut Vec<Code>| Code::Unary(f, Box::new(codes.remove(0)));
            Ok(match name.as_str() {
                "sqrt" => (one(Fun::Sqrt, &mut codes), ranges[0].sqrt()),
                "ln" => (one(Fun::Ln, &mut codes), ranges[0].monotone(f64::ln)),
                "exp" => (one(Fun::Exp, &mut codes), ranges[0].monotone(f64::exp)),
                "abs" => (one(Fun::Abs, &mut codes), ranges[0].abs()),
                "min" => (Code::Min(codes), ranges.iter().skip(1).fold(ranges[0], |a, b| a.min(b))),
                "max" => (Code::Max(codes), ranges.iter().skip(1).fold(ranges[0], |a, b| a.max(b))),
                _ => {
                    let b = codes.remove(1);
                    let a = codes.remove(0);
                    let r = if ranges[0].lo >= 0.0 { Interval::at_least(0.0) } else { Interval::everything() };
                    (Code::DivPos(Box::new(a), Box::new(b)), r)
                }
            })
        }
    }
}
