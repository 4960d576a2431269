//! Library errors. Each message names the field at fault and the range it must lie in.

use thiserror::Error;

/// Result alias of the library.
pub type Result<T> = std::result::Result<T, Error>;

/// Every error the library returns.
#[derive(Debug, Error)]
pub enum Error {
    /// A parameter or scenario field is outside its allowed range.
    #[error("invalid `{field}`: {} (allowed: {})", compact_numbers(message), compact_numbers(allowed))]
    InvalidField {
        /// Dotted path of the field, e.g. `scenarios[2].algorithm.m`.
        field: String,
        /// What is wrong with the given value.
        message: String,
        /// The allowed range, in words.
        allowed: String,
    },
    /// The instance has no finite infimum or no unique minimizer.
    #[error("instance is not admissible: {}", compact_numbers(.0))]
    Instance(String),
    /// A scenario or claim card could not be parsed.
    #[error("cannot parse {what}: {place}{}{message}", at_path(.path))]
    Parse {
        /// Which document.
        what: String,
        /// Where in its text, `line L, column C (`source line`): `, or empty.
        place: String,
        /// The dotted path of the value at fault (`instance.clients[1].hessian`), or empty.
        path: String,
        /// The parser's message (names the unknown or mistyped key).
        message: String,
    },
    /// An input file (scenario, card, sweep, graph) that cannot be opened: missing, a folder,
    /// not readable. The input's fault, unlike [`Error::Io`] while reading or writing.
    #[error("cannot open input file {path}: {source} (allowed: a readable TOML file)")]
    InputFile {
        /// The path given.
        path: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A claim id or scenario name that does not exist.
    #[error("unknown {kind} `{name}`; known: {known}")]
    Unknown {
        /// "claim" or "scenario".
        kind: &'static str,
        /// The name given.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// A numerical routine failed on an admissible input: a factorization of a matrix that should
    /// be positive definite, a recursion with no steady state, an overflow.
    #[error("numerical failure: {}", compact_numbers(.0))]
    Numerical(String),
    /// A report, a scenario or a set of constants could not be serialized (JSON or TOML).
    #[error("cannot serialize {what}: {message}")]
    Serialization {
        /// What was being serialized, e.g. `report` or `scenario`.
        what: String,
        /// The serializer's message.
        message: String,
    },
    /// A figure could not be drawn or encoded as PNG.
    #[error("cannot draw figure: {0} (--no-plots skips the figures)")]
    Figure(String),
    /// A pool of worker threads could not be started.
    #[error("cannot start worker threads: {0} (ask for fewer with --threads)")]
    ThreadPool(String),
    /// An invariant of the crate does not hold: a bug, never the input's fault.
    #[error("internal error: {} (a bug: please report it with the command that gave it)", compact_numbers(.0))]
    Internal(String),
    /// An error in one scenario of a card, with the scenario's name.
    #[error("scenario `{scenario}`: {source}")]
    InScenario {
        /// The scenario's name.
        scenario: String,
        /// What is wrong with it.
        #[source]
        source: Box<Error>,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// [`Error::Parse`] of `what` with the parser's `message` alone (no place in the text, no
    /// path).
    pub fn parse(what: impl Into<String>, message: impl ToString) -> Self {
        Error::Parse { what: what.into(), place: String::new(), path: String::new(), message: message.to_string() }
    }

    /// Shorthand for [`Error::InvalidField`].
    pub fn field(field: impl Into<String>, message: impl Into<String>, allowed: impl Into<String>) -> Self {
        Error::InvalidField { field: field.into(), message: message.into(), allowed: allowed.into() }
    }
}

impl Error {
    /// The same error, said of scenario `name`.
    pub fn in_scenario(self, name: &str) -> Self {
        Error::InScenario { scenario: name.to_string(), source: Box::new(self) }
    }

    /// Whether the error is the user's input (exit code 2), not a failure of the run (exit code 3:
    /// I/O, numerical, serialization, figure, worker threads, internal).
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::InvalidField { .. } | Error::Parse { .. } | Error::Unknown { .. } | Error::Instance(_) | Error::InputFile { .. } => true,
            Error::InScenario { source, .. } => source.is_bad_input(),
            Error::Numerical(_) | Error::Serialization { .. } | Error::Figure(_) | Error::ThreadPool(_) | Error::Internal(_) | Error::Io { .. } => false,
        }
    }

    /// Shorthand for [`Error::Serialization`].
    pub fn serialization(what: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Serialization { what: what.into(), message: message.to_string() }
    }
}

/// Checks that `value` is finite, naming `field` otherwise.
pub fn require_finite(field: &str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(Error::field(field, format!("got {value}"), "a finite number"))
    }
}

/// Longest run of digits (with its point) a message shows as written. A decimal longer than this is
/// a float Rust's `Display` wrote out in full (`1e-300` as 302 characters); an integer type holds at
/// most 20 digits (`u64::MAX`), so no integer is longer.
const LONGEST_PLAIN_NUMBER: usize = 20;

/// `` at `path`: `` before a parser's message, or nothing for an empty path.
fn at_path(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("at `{path}`: ")
    }
}

/// `text` with every decimal number longer than 20 characters (`LONGEST_PLAIN_NUMBER`) written in
/// exponent form, with the same value: `Display` writes the shortest digits that read back as the
/// same `f64`, so reading the number and writing it with `{:e}` loses nothing
/// (`0.000...01` -> `1e-300`, `1000...0` -> `1e300`). Shorter numbers and the rest of the text are
/// unchanged. Messages of [`enum@Error`] are shown through it, so no value echoed from an input runs to
/// hundreds of characters.
pub fn compact_numbers(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let is_number_byte = |b: u8| b.is_ascii_digit() || b == b'.';
    let mut out: Option<String> = None;
    let (mut i, mut copied) = (0, 0);
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_number_byte(bytes[i]) {
            i += 1;
        }
        // A trailing point ends a sentence, not the number.
        let end = if bytes[i - 1] == b'.' { i - 1 } else { i };
        let token = &text[start..end];
        if token.len() > LONGEST_PLAIN_NUMBER {
            if let Ok(x) = token.parse::<f64>() {
                let o = out.get_or_insert_with(String::new);
                o.push_str(&text[copied..start]);
                o.push_str(&format!("{x:e}"));
                copied = end;
            }
        }
    }
    match out {
        None => std::borrow::Cow::Borrowed(text),
        Some(mut o) => {
            o.push_str(&text[copied..]);
            std::borrow::Cow::Owned(o)
        }
    }
}

/// Checks a step size or step constant: finite and in `[INPUT_MAGNITUDE_MIN, INPUT_MAGNITUDE_MAX]`
/// (`[1e-100, 1e100]`), the range of an instance's scalar inputs, so that products and squares of
/// steps and constants stay finite and normal. A step of `1e-320` is subnormal: `gamma_u eta_u`
/// no longer equals `gamma` and the verdict would speak of rounding, not of the claim.
///
/// # Errors
/// [`Error::InvalidField`] naming `field`, the value and the range.
pub fn require_step(field: &str, value: f64) -> Result<f64> {
    use crate::prec::{INPUT_MAGNITUDE_MAX, INPUT_MAGNITUDE_MIN};
    if value.is_finite() && (INPUT_MAGNITUDE_MIN..=INPUT_MAGNITUDE_MAX).contains(&value) {
        Ok(value)
    } else {
        Err(Error::field(field, format!("got {value}"), format!("a finite number > 0 in [{INPUT_MAGNITUDE_MIN:e}, {INPUT_MAGNITUDE_MAX:e}]")))
    }
}

/// The first entry of `values` equal to an earlier one, with its index: what a list of distinct
/// ids (claims asked for, claims of a sweep) refuses.
pub fn first_repeat<T: PartialEq>(values: &[T]) -> Option<(usize, &T)> {
    values.iter().enumerate().find(|(i, v)| values[..*i].contains(v))
}

/// Checks a scale of an instance that may be 0 (a noise level, a spread): 0 or in
/// `[INPUT_MAGNITUDE_MIN, INPUT_MAGNITUDE_MAX]`, the range of the instance's other scalar inputs
/// ([`require_step`]).
///
/// # Errors
/// [`Error::InvalidField`] naming `field`, the value and the range.
pub fn require_scale(field: &str, value: f64) -> Result<f64> {
    use crate::prec::{INPUT_MAGNITUDE_MAX, INPUT_MAGNITUDE_MIN};
    if value == 0.0 || (value.is_finite() && (INPUT_MAGNITUDE_MIN..=INPUT_MAGNITUDE_MAX).contains(&value)) {
        Ok(value)
    } else {
        Err(Error::field(field, format!("got {value}"), format!("a number >= 0: 0 or in [{INPUT_MAGNITUDE_MIN:e}, {INPUT_MAGNITUDE_MAX:e}]")))
    }
}

/// Checks that every one of `values` is finite; the first that is not is named `field_at(k)`
/// (formatted only then, so a check of many entries costs no text).
pub fn require_all_finite<'a>(values: impl IntoIterator<Item = &'a f64>, field_at: impl Fn(usize) -> String) -> Result<()> {
    match values.into_iter().enumerate().find(|(_, x)| !x.is_finite()) {
        Some((k, x)) => require_finite(&field_at(k), *x).map(|_| ()),
        None => Ok(()),
    }
}

/// Checks that `value` is finite and strictly positive.
pub fn require_positive(field: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::field(field, format!("got {value}"), "a finite number > 0"))
    }
}

/// The largest factor `--bound-scale` accepts. A negative control scales a bound down, or up by
/// about its slack (a few orders of magnitude at most); past a million a bound of a scenario's
/// magnitudes may overflow to `inf`, and the verdict would say that, not the claim.
pub const MAX_BOUND_SCALE: f64 = 1e6;

/// Checks a bound's scale factor (`--bound-scale`): finite, at least
/// [`crate::prec::INPUT_MAGNITUDE_MIN`] (a subnormal factor turns bounds into rounding) and at
/// most [`MAX_BOUND_SCALE`].
///
/// # Errors
/// [`Error::InvalidField`] naming `field` and the range.
pub fn require_bound_scale(field: &str, value: f64) -> Result<f64> {
    use crate::prec::INPUT_MAGNITUDE_MIN;
    if value.is_finite() && (INPUT_MAGNITUDE_MIN..=MAX_BOUND_SCALE).contains(&value) {
        Ok(value)
    } else {
        Err(Error::field(field, format!("got {value}"), format!("a finite number > 0, at least {INPUT_MAGNITUDE_MIN:e} and at most {MAX_BOUND_SCALE:e}")))
    }
}

/// Checks that `value` is finite and non-negative.
pub fn require_non_negative(field: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::field(field, format!("got {value}"), "a finite number >= 0"))
    }
}

/// Checks that a count lies in `lo..=hi` (no upper end when `hi` is `usize::MAX`).
///
/// # Errors
/// [`Error::InvalidField`] naming `field`, the value and the range.
pub fn require_count(field: &str, value: usize, lo: usize, hi: usize) -> Result<usize> {
    match (lo..=hi).contains(&value) {
        true => Ok(value),
        false if hi == usize::MAX => Err(Error::field(field, format!("got {value}"), format!("an integer >= {lo}"))),
        false => Err(Error::field(field, format!("got {value}"), format!("an integer in [{lo}, {hi}]"))),
    }
}

/// Checks that a list given as `field` has `lo <= len <= hi` entries (`hi = usize::MAX`: no upper
/// bound); gives `len`.
///
/// # Errors
/// [`Error::InvalidField`] naming `field`, its length and the allowed one.
pub fn require_len(field: &str, len: usize, lo: usize, hi: usize) -> Result<usize> {
    let entries = |n: usize| if n == 1 { "1 entry".to_string() } else { format!("{n} entries") };
    match (lo..=hi).contains(&len) {
        true => Ok(len),
        false if hi == usize::MAX => Err(Error::field(field, format!("a list of {}", entries(len)), format!("a list of at least {}", entries(lo)))),
        false => Err(Error::field(field, format!("a list of {}", entries(len)), format!("a list of {lo} to {}", entries(hi)))),
    }
}

/// The memory one run may plan to hold on any machine: 8 GiB, a third of the 24 GiB machines the
/// project runs on, so that two runs side by side and the operating system still fit. A request
/// for more is bad input, refused before anything is allocated, never an abort.
pub const MEMORY_LIMIT_BYTES: f64 = 8.0 * 1024.0 * 1024.0 * 1024.0;

/// The memory one run may plan to hold here and now, and the limit that sets it when it is below
/// [`MEMORY_LIMIT_BYTES`]: the machine's headroom ([`crate::machine_memory::headroom`]) shared by
/// the worker threads that run side by side.
///
/// # Formula
/// `min(MEMORY_LIMIT_BYTES, headroom / threads)`; with the limit, the machine's limit that set it
/// and the thread count, when that is below the cap.
pub fn memory_limit() -> (f64, Option<(&'static str, usize)>) {
    let threads = rayon::current_num_threads().max(1);
    match crate::machine_memory::headroom() {
        Some(h) if h.bytes / (threads as f64) < MEMORY_LIMIT_BYTES => (h.bytes / threads as f64, Some((h.source, threads))),
        _ => (MEMORY_LIMIT_BYTES, None),
    }
}

/// Checks that `bytes` (computed in floating point, so it cannot overflow) fit in
/// [`memory_limit`], naming `field` and what the memory is for otherwise.
///
/// # Errors
/// [`Error::InvalidField`] with the size needed and the limit, and the machine's limit that set
/// it when that is below the fixed cap.
pub fn require_memory(field: &str, bytes: f64, what: &str) -> Result<()> {
    let (limit, source) = memory_limit();
    if bytes.is_finite() && bytes <= limit {
        return Ok(());
    }
    let gib = 1024.0 * 1024.0 * 1024.0;
    let allowed = match source {
        None => format!("sizes that need at most {} GiB", limit / gib),
        Some((source, threads)) => format!(
            "sizes that need at most {:.3} GiB, what {source} leaves each of the {threads} worker threads now (the cap on any machine is {} GiB)",
            limit / gib,
            MEMORY_LIMIT_BYTES / gib
        ),
    };
    Err(Error::field(field, format!("needs {:.3e} GiB for {what}", bytes / gib), allowed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of each kind that is a failure of the run, not of the input.
    fn failures() -> Vec<Error> {
        vec![
            Error::Numerical("joint Hessian factorization failed".into()),
            Error::serialization("report", "key must be a string"),
            Error::Figure("font not found".into()),
            Error::ThreadPool("a pool of 4: resource unavailable".into()),
            Error::Internal("claim X has no summary".into()),
            Error::Io { path: "out/summary.csv".into(), source: std::io::Error::other("disk full") },
        ]
    }

    #[test]
    fn failures_of_the_run_are_not_bad_input_and_say_what_to_do() {
        for e in failures() {
            assert!(!e.is_bad_input(), "{e}");
            let name = e.to_string();
            assert!(!e.in_scenario("s").is_bad_input(), "{name}");
        }
        assert_eq!(Error::serialization("report", "key must be a string").to_string(), "cannot serialize report: key must be a string");
        assert!(Error::Figure("x".into()).to_string().contains("--no-plots"));
        assert!(Error::ThreadPool("x".into()).to_string().contains("--threads"));
        assert!(Error::Internal("x".into()).to_string().contains("a bug"));
        // Negative control: the input's errors are bad input, in a scenario too.
        let bad = Error::field("instance.n", "got 0", ">= 1");
        assert!(bad.is_bad_input());
        assert!(bad.in_scenario("s").is_bad_input());
        assert!(Error::Instance("F is not strongly convex".into()).is_bad_input());
    }

    #[test]
    fn numbers_written_out_in_full_are_shown_in_exponent_form_with_the_same_value() {
        let tiny = Error::field("instance.mu", format!("got {}", 1e-300), "a number in [1e-100, 1e100]").to_string();
        assert_eq!(tiny, "invalid `instance.mu`: got 1e-300 (allowed: a number in [1e-100, 1e100])");
        let huge = Error::Numerical(format!("the metric reached {} at round 3.", -1.5e300)).to_string();
        assert_eq!(huge, "numerical failure: the metric reached -1.5e300 at round 3.");
        // Every float survives the round trip exactly.
        for x in [1e-300, 1.2345678901234567e-25, 5e-324, f64::MAX, 123456789012345678901234.0] {
            let shown = compact_numbers(&format!("{x}")).into_owned();
            assert_eq!(shown.parse::<f64>().unwrap(), x, "{shown}");
            assert!(shown.len() <= 24, "{shown}");
        }
        // Controls: integers up to u64::MAX, short decimals and the text around them are unchanged.
        for text in [format!("seed {} of {}", u64::MAX, i64::MIN), "got 0.0001 and 3.5.".into(), "no numbers".into(), "1e-300".into()] {
            assert_eq!(compact_numbers(&text), text.as_str());
        }
    }

    #[test]
    fn steps_outside_the_input_range_are_refused() {
        assert_eq!(require_step("steps.gamma", 0.5).unwrap(), 0.5);
        assert_eq!(require_step("steps.gamma", 1e-100).unwrap(), 1e-100);
        for bad in [1e-320, 1e-101, 1e101, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = require_step("steps.gamma", bad).unwrap_err().to_string();
            assert!(e.contains("steps.gamma") && e.contains("[1e-100, 1e100]"), "{e}");
        }
    }

    #[test]
    fn counts_outside_their_range_are_refused_naming_the_range() {
        assert_eq!(require_count("tau", 3, 1, 10).unwrap(), 3);
        assert_eq!(require_count("replicates", 1 << 40, 1, usize::MAX).unwrap(), 1 << 40);
        // Negative controls: below, above, and an open range's message.
        assert!(require_count("tau", 0, 1, 10).unwrap_err().to_string().contains("an integer in [1, 10]"));
        assert!(require_count("tau", 11, 1, 10).unwrap_err().to_string().contains("got 11"));
        assert!(require_count("replicates", 0, 1, usize::MAX).unwrap_err().to_string().contains("an integer >= 1"));
    }
}
