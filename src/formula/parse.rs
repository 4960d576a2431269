//! Text to syntax tree: a recursive-descent parser that keeps every node's position in the text,
//! so an error can point at the character at fault.
//!
//! Grammar (lowest precedence first):
//!
//! ```text
//! condition  := expr REL expr [ "if" expr REL expr ]      REL: <= >= < > = ==
//! definition := NAME "=" expr
//! expr       := term (("+" | "-") term)*
//! term       := unary (("*" | "/") unary)*
//! unary      := "-" unary | power
//! power      := atom [ "^" unary ]                         (right-associative: 2^3^2 = 2^9)
//! atom       := NUMBER | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"
//! ```
//!
//! `-x^2` is `-(x^2)`, as in mathematics. Numbers are decimal with an optional exponent (`1e-3`).

use super::FormulaError;

/// The longest formula accepted, in bytes (the longest of the cards is under 200): a bound on the
/// size of every syntax tree, so compiling, evaluating and dropping one never runs out of stack.
pub const MAX_FORMULA_LEN: usize = 4096;

/// The deepest syntax tree accepted: nested parentheses, unary minuses, powers and the terms of
/// one sum or product (a sum of `n` terms is `n` levels deep) all count. The cards' formulas are
/// under 20 levels deep.
pub const MAX_DEPTH: usize = 200;

/// The most entries a formula list of a claim may have (`let`, `scope`, `conditions`,
/// `implicit`): each is evaluated at every checkpoint of every run, so a card of unbounded
/// length would make every check as slow as it is long.
pub const MAX_LIST_LEN: usize = 100;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `^`
    Pow,
}

/// A node of the syntax tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A number.
    Num(f64),
    /// A name (a symbol of the family or an intermediate quantity).
    Name(String),
    /// `-e`.
    Neg(Box<Expr>),
    /// `a op b`.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `f(a, ...)`.
    Call(String, Vec<Expr>),
}

/// An expression with its byte span `[start, end)` in the source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub node: Node,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A comparison operator as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rel {
    /// `<=`
    Le,
    /// `<`
    Lt,
    /// `>=`
    Ge,
    /// `>`
    Gt,
    /// `=` or `==`
    Eq,
}

impl Rel {
    /// Whether `a rel b` holds exactly (used for guards).
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Rel::Le => a <= b,
            Rel::Lt => a < b,
            Rel::Ge => a >= b,
            Rel::Gt => a > b,
            Rel::Eq => a == b,
        }
    }
}

/// `lhs rel rhs`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Left side.
    pub lhs: Expr,
    /// Operator.
    pub rel: Rel,
    /// Right side.
    pub rhs: Expr,
}

/// A condition: a comparison, with an optional guard (`... if du > 0`) under which it applies.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCondition {
    /// The comparison checked.
    pub check: Comparison,
    /// When present, the condition is only checked where the guard holds.
    pub guard: Option<Comparison>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(&'static str),
}

struct Lexer {
    toks: Vec<(Tok, usize, usize)>,
}

fn lex(text: &str) -> Result<Lexer, FormulaError> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                let mut j = i + 1;
                if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j].is_ascii_digit() {
                    i = j;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let s = &text[start..i];
            let v: f64 = s.parse().map_err(|_| FormulaError::at(start, format!("`{s}` is not a number")))?;
            toks.push((Tok::Num(v), start, i));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            toks.push((Tok::Name(text[start..i].to_string()), start, i));
            continue;
        }
        let two = text.get(i..i + 2).unwrap_or("");
        let op: &'static str = match two {
            "<=" => "<=",
            ">=" => ">=",
            "==" => "==",
            "**" => return Err(FormulaError::at(i, "`**` is not an operator here; write powers as `x^2`")),
            _ => match c {
                b'+' => "+",
                b'-' => "-",
                b'*' => "*",
                b'/' => "/",
                b'^' => "^",
                b'(' => "(",
                b')' => ")",
                b',' => ",",
                b'<' => "<",
                b'>' => ">",
                b'=' => "=",
                _ => {
                    let ch = text[i..].chars().next().unwrap_or('?');
                    return Err(FormulaError::at(i, format!("unexpected character `{ch}`")));
                }
            },
        };
        i += op.len();
        toks.push((Tok::Op(op), start, i));
    }
    Ok(Lexer { toks })
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(Tok, usize, usize)>,
    pos: usize,
    /// How many `unary` calls are open (the parser's recursion depth, in steps of one level).
    nesting: usize,
}

/// The depth of `e`'s tree, found without recursion.
fn tree_depth(e: &Expr) -> usize {
    let (mut stack, mut deepest) = (vec![(e, 1)], 0);
    while let Some((e, d)) = stack.pop() {
        deepest = deepest.max(d);
        match &e.node {
            Node::Neg(a) => stack.push((a, d + 1)),
            Node::Bin(_, a, b) => stack.extend([(a.as_ref(), d + 1), (b.as_ref(), d + 1)]),
            Node::Call(_, args) => stack.extend(args.iter().map(|a| (a, d + 1))),
            Node::Num(_) | Node::Name(_) => {}
        }
    }
    deepest
}

/// Refuses a tree deeper than [`MAX_DEPTH`].
fn require_depth(e: Expr) -> Result<Expr, FormulaError> {
    if tree_depth(&e) > MAX_DEPTH {
        return Err(FormulaError::at(e.start, format!("the formula nests more than {MAX_DEPTH} levels (parentheses, signs, powers, terms of a sum)")));
    }
    Ok(e)
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn here(&self) -> usize {
        self.toks.get(self.pos).map_or(self.text.len(), |t| t.1)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn expect(&mut self, op: &str, what: &str) -> Result<usize, FormulaError> {
        if self.is_op(op) {
            let end = self.toks[self.pos].2;
            self.pos += 1;
            Ok(end)
        } else {
            Err(self.unexpected(what))
        }
    }

    fn unexpected(&self, wanted: &str) -> FormulaError {
        match self.toks.get(self.pos) {
            None => FormulaError::at(self.text.len(), format!("the formula ends where {wanted} is expected")),
            Some((_, s, e)) => FormulaError::at(*s, format!("`{}` where {wanted} is expected", &self.text[*s..*e])),
        }
    }

    fn expr(&mut self) -> Result<Expr, FormulaError> {
        let mut lhs = self.term()?;
        while let Some(op) = self.peek().and_then(|t| match t {
            Tok::Op("+") => Some(BinOp::Add),
            Tok::Op("-") => Some(BinOp::Sub),
            _ => None,
        }) {
            self.pos += 1;
            let rhs = self.term()?;
            lhs = Expr { start: lhs.start, end: rhs.end, node: Node::Bin(op, Box::new(lhs), Box::new(rhs)) };
        }
        Ok(lhs)
    }

    fn term(&mut self) -> Result<Expr, FormulaError> {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek().and_then(|t| match t {
            Tok::Op("*") => Some(BinOp::Mul),
            Tok::Op("/") => Some(BinOp::Div),
            _ => None,
        }) {
            self.pos += 1;
            let rhs = self.unary()?;
            lhs = Expr { start: lhs.start, end: rhs.end, node: Node::Bin(op, Box::new(lhs), Box::new(rhs)) };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, FormulaError> {
        if self.nesting >= MAX_DEPTH {
            return Err(FormulaError::at(self.here(), format!("the formula nests more than {MAX_DEPTH} levels (parentheses, signs, powers)")));
        }
        self.nesting += 1;
        let e = self.unary_inner();
        self.nesting -= 1;
        e
    }

    fn unary_inner(&mut self) -> Result<Expr, FormulaError> {
        if self.is_op("-") {
            let start = self.here();
            self.pos += 1;
            let e = self.unary()?;
            return Ok(Expr { start, end: e.end, node: Node::Neg(Box::new(e)) });
        }
        if self.is_op("+") {
            self.pos += 1;
            return self.unary();
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, FormulaError> {
        let base = self.atom()?;
        if self.is_op("^") {
            self.pos += 1;
            let exp = self.unary()?;
            return Ok(Expr { start: base.start, end: exp.end, node: Node::Bin(BinOp::Pow, Box::new(base), Box::new(exp)) });
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, FormulaError> {
        let Some((tok, start, end)) = self.toks.get(self.pos).cloned() else {
            return Err(self.unexpected("a number, a name or `(`"));
        };
        match tok {
            Tok::Num(v) => {
                self.pos += 1;
                Ok(Expr { node: Node::Num(v), start, end })
            }
            Tok::Name(name) => {
                self.pos += 1;
                if self.is_op("(") {
                    self.pos += 1;
                    let mut args = vec![self.expr()?];
                    while self.is_op(",") {
                        self.pos += 1;
                        args.push(self.expr()?);
                    }
                    let end = self.expect(")", "`,` or `)`")?;
                    Ok(Expr { node: Node::Call(name, args), start, end })
                } else {
                    Ok(Expr { node: Node::Name(name), start, end })
                }
            }
            Tok::Op("(") => {
                self.pos += 1;
                let inner = self.expr()?;
                let end = self.expect(")", "`)`")?;
                Ok(Expr { node: inner.node, start, end })
            }
            Tok::Op(_) => Err(self.unexpected("a number, a name or `(`")),
        }
    }

    fn rel(&mut self) -> Option<Rel> {
        let r = match self.peek() {
            Some(Tok::Op("<=")) => Rel::Le,
            Some(Tok::Op("<")) => Rel::Lt,
            Some(Tok::Op(">=")) => Rel::Ge,
            Some(Tok::Op(">")) => Rel::Gt,
            Some(Tok::Op("=")) | Some(Tok::Op("==")) => Rel::Eq,
            _ => return None,
        };
        self.pos += 1;
        Some(r)
    }

    fn comparison(&mut self) -> Result<Comparison, FormulaError> {
        let lhs = self.expr()?;
        let Some(rel) = self.rel() else {
            return Err(if self.pos >= self.toks.len() {
                FormulaError::at(lhs.start, "not a comparison: a condition needs `<=`, `>=`, `<`, `>` or `=` between two expressions")
            } else {
                self.unexpected("a comparison (`<=`, `>=`, `<`, `>`, `=`) or an operator")
            });
        };
        let rhs = self.expr()?;
        if self.rel().is_some() {
            return Err(FormulaError::at(self.toks[self.pos - 1].1, "a chained comparison; write one comparison per condition"));
        }
        Ok(Comparison { lhs, rel, rhs })
    }

    fn finish(&self, what: &str) -> Result<(), FormulaError> {
        if self.pos < self.toks.len() {
            Err(self.unexpected(what))
        } else {
            Ok(())
        }
    }
}

fn parser(text: &str) -> Result<Parser<'_>, FormulaError> {
    if text.len() > MAX_FORMULA_LEN {
        return Err(FormulaError::at(0, format!("the formula has {} bytes, more than {MAX_FORMULA_LEN}", text.len())));
    }
    let lexer = lex(text)?;
    Ok(Parser { text, toks: lexer.toks, pos: 0, nesting: 0 })
}

/// Parses an expression (a bound, a side of an inequality).
///
/// # Errors
/// [`FormulaError`] at the first character that does not fit; a comparison where a value is
/// expected is an error too.
pub fn parse_expr(text: &str) -> Result<Expr, FormulaError> {
    let mut p = parser(text)?;
    let e = p.expr()?;
    if p.rel().is_some() {
        return Err(FormulaError::at(p.toks[p.pos - 1].1, "a comparison where a value is expected (conditions go under `conditions` or `scope`)"));
    }
    p.finish("an operator or the end of the formula")?;
    require_depth(e)
}

/// Parses a condition `a REL b [if c REL d]`.
///
/// # Errors
/// [`FormulaError`]; in particular a formula that is not a comparison.
pub fn parse_condition(text: &str) -> Result<ParsedCondition, FormulaError> {
    let mut p = parser(text)?;
    let check = p.comparison()?;
    let guard = if matches!(p.peek(), Some(Tok::Name(n)) if n == "if") {
        p.pos += 1;
        Some(p.comparison()?)
    } else {
        None
    };
    p.finish("`if` or the end of the condition")?;
    let check = Comparison { lhs: require_depth(check.lhs)?, rhs: require_depth(check.rhs)?, ..check };
    let guard = match guard {
        Some(g) => Some(Comparison { lhs: require_depth(g.lhs)?, rhs: require_depth(g.rhs)?, ..g }),
        None => None,
    };
    Ok(ParsedCondition { check, guard })
}

/// Parses a definition `NAME = expr`; returns the name, its span and the expression.
///
/// # Errors
/// [`FormulaError`] when the text does not start with a name and `=`.
pub fn parse_definition(text: &str) -> Result<(String, usize, Expr), FormulaError> {
    let mut p = parser(text)?;
    let (name, start) = match p.toks.first() {
        Some((Tok::Name(n), s, _)) => (n.clone(), *s),
        _ => return Err(p.unexpected("a name (a definition reads `NAME = expression`)")),
    };
    p.pos = 1;
    p.expect("=", "`=` (a definition reads `NAME = expression`)")?;
    let e = p.expr()?;
    p.finish("an operator or the end of the definition")?;
    Ok((name, start, require_depth(e)?))
}

/// The top-level terms of a sum, with their signs: `a - b + c` gives `[(+1, a), (-1, b), (+1, c)]`.
pub fn terms(e: &Expr) -> Vec<(f64, &Expr)> {
    match &e.node {
        Node::Bin(BinOp::Add, a, b) => {
            let mut v = terms(a);
            v.extend(terms(b));
            v
        }
        Node::Bin(BinOp::Sub, a, b) => {
            let mut v = terms(a);
            v.extend(terms(b).into_iter().map(|(s, t)| (-s, t)));
            v
        }
        _ => vec![(1.0, e)],
    }
}
