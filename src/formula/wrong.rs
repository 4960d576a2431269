//! Deliberately wrong terms: a claim's formulas with one term scaled, so that a test can show a
//! scenario catches a factor-2 error in that term (the scenario's verdict flips). Only the side
//! that bounds is changed: the bound, the right side of an inequality and each definition
//! (`let`), one top-level term of one of them at a time.

use super::claim::FormulaCard;
use super::{parse, FormulaError};

/// One wrong version of a claim's formulas.
#[derive(Debug, Clone)]
pub struct WrongTerm {
    /// The field changed: `bound`, `rhs` or `let.NAME`.
    pub field: String,
    /// The term as written, with its sign (`+4*L/(K*gamma)`, `-12*L*gamma`).
    pub term: String,
    /// The formulas with that term multiplied by the factor.
    pub card: FormulaCard,
}

/// Every top-level term of the bound, of the right side and of each definition, in that order,
/// multiplied by `factor` in turn: `a - b + c` with factor 0.5 gives `(0.5*(a)) - b + c`,
/// `a - (0.5*(b)) + c` and `a - b + (0.5*(c))`.
///
/// # Errors
/// [`FormulaError`] where a field does not parse (a card that compiles never gives one).
pub fn wrong_terms(card: &FormulaCard, factor: f64) -> Result<Vec<WrongTerm>, FormulaError> {
    let mut out = Vec::new();
    for (field, text) in [("bound", &card.bound), ("rhs", &card.rhs)] {
        let Some(text) = text else { continue };
        for (term, changed) in scaled(text, &parse::parse_expr(text)?, factor) {
            let mut wrong = card.clone();
            *(if field == "bound" { &mut wrong.bound } else { &mut wrong.rhs }) = Some(changed);
            out.push(WrongTerm { field: field.to_string(), term, card: wrong });
        }
    }
    for (i, text) in card.lets.iter().enumerate() {
        let (name, _, expr) = parse::parse_definition(text)?;
        for (term, changed) in scaled(text, &expr, factor) {
            let mut wrong = card.clone();
            wrong.lets[i] = changed;
            out.push(WrongTerm { field: format!("let.{name}"), term, card: wrong });
        }
    }
    Ok(out)
}

/// The text with each top-level term of `expr` (spans into `text`) multiplied by `factor` in turn.
fn scaled(text: &str, expr: &parse::Expr, factor: f64) -> Vec<(String, String)> {
    parse::terms(expr)
        .into_iter()
        .map(|(sign, e)| {
            let term = text[e.start..e.end].trim();
            let changed = format!("{}({factor:?}*({term})){}", &text[..e.start], &text[e.end..]);
            (format!("{}{term}", if sign < 0.0 { "-" } else { "+" }), changed)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_term_of_each_bounding_field_is_scaled_once() {
        let card = FormulaCard {
            lets: vec!["B = 2*s2 + L*g".into()],
            bound: Some("4/(K*g) - 3*B".into()),
            lhs: Some("untouched + 1".into()),
            ..FormulaCard::default()
        };
        let w = wrong_terms(&card, 0.5).unwrap();
        let got: Vec<(&str, &str, Option<&str>, &str)> =
            w.iter().map(|x| (x.field.as_str(), x.term.as_str(), x.card.bound.as_deref(), x.card.lets[0].as_str())).collect();
        assert_eq!(
            got,
            [
                ("bound", "+4/(K*g)", Some("(0.5*(4/(K*g))) - 3*B"), "B = 2*s2 + L*g"),
                ("bound", "-3*B", Some("4/(K*g) - (0.5*(3*B))"), "B = 2*s2 + L*g"),
                ("let.B", "+2*s2", Some("4/(K*g) - 3*B"), "B = (0.5*(2*s2)) + L*g"),
                ("let.B", "+L*g", Some("4/(K*g) - 3*B"), "B = 2*s2 + (0.5*(L*g))"),
            ]
        );
        assert!(w.iter().all(|x| x.card.lhs.as_deref() == Some("untouched + 1")), "the observed side is never changed");
        // Negative control: a formula that does not parse is an error, not an empty list.
        assert!(wrong_terms(&FormulaCard { bound: Some("1 +".into()), ..FormulaCard::default() }, 2.0).is_err());
    }
}
