//! Reading the numbers of an explicit instance in a scenario file (matrices as lists of rows,
//! vectors), every entry checked, errors naming the field and the allowed range; and telling a
//! seeded recipe from an explicit instance ([`recipe_or_explicit`]).

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use serde::de::{DeserializeOwned, Error as _};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::prec::{INPUT_MAGNITUDE_MAX, INPUT_MAGNITUDE_MIN};

/// An exported scenario file (`run --export-instance`): a comment naming the scenario, the file
/// it came from and what was written out by its numbers (`The instance`, `The design draws`),
/// the family's line, then `scenario` as TOML.
///
/// # Errors
/// [`Error::Serialization`] naming `serialized` when the scenario cannot be written as TOML.
pub fn exported_file<T: serde::Serialize>(scenario: &T, name: &str, what: &str, written: &str, family: &str, serialized: &str) -> Result<String> {
    let file = toml::to_string(scenario).map_err(|e| Error::serialization(serialized, e))?;
    Ok(format!("# {written} of scenario `{name}` ({what}), written out; `fedbounds run` on this file gives the same results.\nfamily = \"{family}\"\n{file}"))
}

/// `rows` as an `r x c` matrix of finite numbers, naming `field` (or its entry) otherwise.
///
/// # Errors
/// [`Error::InvalidField`]: a wrong shape (`shape` names it) or an entry out of range.
pub fn matrix(field: &str, rows: &[Vec<f64>], (r, c): (usize, usize), shape: &str) -> Result<DMatrix<f64>> {
    if rows.len() != r || rows.iter().any(|x| x.len() != c) {
        let lengths: Vec<usize> = rows.iter().map(Vec::len).collect();
        return Err(Error::field(field, format!("{} rows of lengths {lengths:?}", rows.len()), format!("{r} rows of length {c} ({shape})")));
    }
    for (k, row) in rows.iter().enumerate() {
        finite(&format!("{field}[{k}]"), row)?;
    }
    Ok(DMatrix::from_fn(r, c, |i, j| rows[i][j]))
}

/// The rows of `m`, as [`matrix`] reads them back (bit for bit).
pub fn rows(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    m.row_iter().map(|r| r.iter().copied().collect()).collect()
}

/// Reads a table written either as a seeded recipe `R` or by its explicit numbers `E`: the
/// table is read whole, `is_explicit` picks the form from it (a key only the explicit form has,
/// or one whose type differs between the forms), and that form alone is parsed, so that an error
/// speaks of the form meant rather than of both. The explicit form's errors are prefixed with
/// `prefix` (`"{prefix}: {message}"`); the recipe's pass unchanged. `recipe` and `explicit` make
/// the value of each form.
///
/// # Errors
/// The chosen form's parse error, as a `D::Error` with the message above.
pub fn recipe_or_explicit<'de, D, R, E, T>(
    deserializer: D,
    is_explicit: impl FnOnce(&toml::Value) -> bool,
    prefix: &str,
    recipe: impl FnOnce(R) -> T,
    explicit: impl FnOnce(E) -> T,
) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    R: DeserializeOwned,
    E: DeserializeOwned,
{
    let value = toml::Value::deserialize(deserializer)?;
    if is_explicit(&value) {
        crate::strict::value_at_path::<E>(value).map(explicit).map_err(|e| D::Error::custom(format!("{prefix}: {e}")))
    } else {
        crate::strict::value_at_path::<R>(value).map(recipe).map_err(D::Error::custom)
    }
}

/// Checks that every entry of `x` is 0 or finite with a magnitude in `[INPUT_MAGNITUDE_MIN,
/// INPUT_MAGNITUDE_MAX]` (so that the products and sums of the instance stay finite and normal,
/// and constants and steps derived from them stay in that range too), naming `field[k]`
/// otherwise.
///
/// # Errors
/// [`Error::InvalidField`] naming the first entry out of range.
pub fn finite(field: &str, x: &[f64]) -> Result<()> {
    let in_range = |x: f64| x == 0.0 || (x.is_finite() && (INPUT_MAGNITUDE_MIN..=INPUT_MAGNITUDE_MAX).contains(&x.abs()));
    match x.iter().enumerate().find(|(_, x)| !in_range(**x)) {
        Some((k, x)) => Err(Error::field(
            format!("{field}[{k}]"),
            format!("got {x}"),
            format!("0 or a finite number of magnitude at least {INPUT_MAGNITUDE_MIN:e} and at most {INPUT_MAGNITUDE_MAX:e}"),
        )),
        None => Ok(()),
    }
}

/// `x` as a vector of `n` (the size `name`) finite numbers.
///
/// # Errors
/// [`Error::InvalidField`]: a wrong length or an entry out of range.
pub fn vector(field: &str, x: &[f64], n: usize, name: &str) -> Result<DVector<f64>> {
    if x.len() != n {
        return Err(Error::field(field, format!("length {}", x.len()), format!("length {name} = {n}")));
    }
    finite(field, x)?;
    Ok(DVector::from_column_slice(x))
}

/// A symmetric matrix: `max |M - M^T| <= tolerance max |M|` is rounding, and `(M + M^T)/2`
/// is used (bit for bit `M` when `M` is symmetric).
///
/// # Errors
/// [`Error::InvalidField`] naming `field` when `M` is further from symmetric.
pub fn symmetric(field: &str, tolerance: f64, m: DMatrix<f64>) -> Result<DMatrix<f64>> {
    let asymmetry = (&m - m.transpose()).amax();
    if asymmetry > tolerance * m.amax() {
        return Err(Error::field(field, format!("not symmetric: max |M - M^T| = {asymmetry:e}"), "a symmetric matrix (rows equal to columns)"));
    }
    Ok((&m + m.transpose()) * 0.5)
}

/// Checks that a symmetric matrix is positive semidefinite: its smallest eigenvalue at least
/// `-floor` times its largest magnitude (rounding of a singular one).
///
/// # Errors
/// Bad input naming `field`, the smallest eigenvalue and `what` must be.
pub fn require_psd(field: &str, m: &DMatrix<f64>, floor: f64, what: &str) -> Result<()> {
    let eig = nalgebra::SymmetricEigen::new(m.clone()).eigenvalues;
    let least = eig.min();
    if least.is_nan() || least < -floor * eig.amax() {
        return Err(Error::field(field, format!("smallest eigenvalue {least:e}"), format!("{what}: positive semidefinite")));
    }
    Ok(())
}

/// A noise covariance given as rows: `n x n` (`shape` names the size), symmetric within
/// `symmetry`, positive semidefinite within `floor` ([`require_psd`]).
///
/// # Errors
/// Bad input naming `field`.
pub fn covariance(field: &str, rows: &[Vec<f64>], (n, shape): (usize, &str), symmetry: f64, floor: f64) -> Result<Covariance> {
    let m = symmetric(field, symmetry, matrix(field, rows, (n, n), shape)?)?;
    require_psd(field, &m, floor, "a noise covariance")?;
    Ok(Covariance::new(m))
}

/// A gradient noise covariance `S` (symmetric positive semidefinite) and its symmetric square
/// root, so that `S^{1/2} xi` with standard normal `xi` has covariance `S` and `E||.||^2 = tr(S)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Covariance {
    /// `S`.
    pub matrix: DMatrix<f64>,
    /// `S^{1/2} = Q diag(sqrt(lambda)) Q^T`.
    pub root: DMatrix<f64>,
}

impl Covariance {
    /// From a finite symmetric positive semidefinite `matrix` (the caller checks it): eigenvalues
    /// below zero by rounding give a zero root.
    pub fn new(matrix: DMatrix<f64>) -> Self {
        let eig = SymmetricEigen::new(matrix.clone());
        let roots = eig.eigenvalues.map(|l| if l > 0.0 { l.sqrt() } else { 0.0 });
        let root = &eig.eigenvectors * DMatrix::from_diagonal(&roots) * eig.eigenvectors.transpose();
        Self { matrix, root: (&root + root.transpose()) * 0.5 }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::recipe_or_explicit;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Recipe {
        clients: usize,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Explicit {
        clients: Vec<f64>,
    }

    #[derive(Debug, PartialEq)]
    enum Input {
        Recipe(Recipe),
        Explicit(Explicit),
    }

    /// The test's table as either form, told apart by `clients`: a count or a list.
    fn read(text: &str) -> Result<Input, String> {
        let value = toml::from_str::<toml::Value>(text).unwrap();
        let explicit = |v: &toml::Value| matches!(v.get("clients"), Some(toml::Value::Array(_)));
        recipe_or_explicit(value, explicit, "explicit input", Input::Recipe, Input::Explicit).map_err(|e| e.message().to_owned())
    }

    #[test]
    fn each_form_is_read_by_its_key() {
        assert_eq!(read("clients = 3"), Ok(Input::Recipe(Recipe { clients: 3 })));
        assert_eq!(read("clients = [0.5, 2.0]"), Ok(Input::Explicit(Explicit { clients: vec![0.5, 2.0] })));
    }

    #[test]
    fn an_unknown_key_is_refused_with_the_message_of_the_form_meant() {
        assert_eq!(read("clients = 3\nextra = 1").unwrap_err(), "at `extra`: unknown field `extra`, expected `clients`");
        assert_eq!(read("clients = [1.0]\nextra = 1").unwrap_err(), "explicit input: at `extra`: unknown field `extra`, expected `clients`");
        // A wrong type in the explicit form is the explicit form's error, never the recipe's, at
        // the entry's path.
        assert_eq!(read("clients = [true]").unwrap_err(), "explicit input: at `clients[0]`: invalid type: boolean `true`, expected f64");
    }
}
