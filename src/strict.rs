//! Enum-valued input tables read strictly: every key that does not belong is an error naming it
//! and the keys allowed, where serde's derive would ignore it or say something vaguer.
//!
//! - An internally tagged enum (`{ kind = "ring" }`) refuses unknown keys beside a variant with
//!   fields when it has `deny_unknown_fields`, but a variant without fields ignores every other key
//!   (`{ kind = "ring", k = 3 }` reads as the ring): [`internally_tagged`] refuses them.
//! - An externally tagged enum (`{ constant_over_l = 0.5 }`) says "wanted exactly 1 element" of a
//!   table with several keys and "found 0 elements" of an empty one: [`one_of`] names the keys.
//!
//! Both read the table whole and hand it to the derived reader (`read`, the enum's own derive
//! under `#[serde(remote = "Self")]`, which makes it an inherent function so that the enum's
//! `Deserialize` can call these).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// `read` as it is given: the derived reader of an enum, on a TOML value.
pub type Read<T> = fn(toml::Value) -> Result<T, toml::de::Error>;

/// `` `a`, `b` or `c` ``.
pub fn alternatives(names: &[&str]) -> String {
    listed(names, "or")
}

/// `` `a`, `b` WORD `c` ``.
fn listed(names: &[&str], word: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} {word} {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

/// Reads an internally tagged enum (tag key `tag`) with `read`, then refuses any key beside the
/// tag of a variant without fields: one that serializes as its tag alone. (A variant with fields
/// refuses unknown keys itself, by `deny_unknown_fields`.)
///
/// # Errors
/// `read`'s error, or `` unknown field `KEY`: `kind = "ring"` takes no other key ``.
pub fn internally_tagged<'de, D: Deserializer<'de>, T: Serialize>(deserializer: D, tag: &str, read: Read<T>) -> Result<T, D::Error> {
    let value = toml::Value::deserialize(deserializer)?;
    let extra = value.as_table().and_then(|t| t.keys().find(|k| *k != tag).cloned());
    let parsed = read(value).map_err(|e| D::Error::custom(e.message()))?;
    if let (Some(extra), Ok(toml::Value::Table(written))) = (extra, toml::Value::try_from(&parsed)) {
        if written.len() == 1 {
            let kind = written.get(tag).and_then(toml::Value::as_str).unwrap_or_default();
            return Err(D::Error::custom(format!("unknown field `{extra}`: `{tag} = \"{kind}\"` takes no other key")));
        }
    }
    Ok(parsed)
}

/// Reads an externally tagged enum whose variants are `variants` with `read`: a table must hold
/// exactly one key, one of them (a bare string, the form of a variant without fields, goes to
/// `read` as it is).
///
/// # Errors
/// An unknown key, an empty table or several variants, naming the keys and `variants`; `read`'s
/// error otherwise.
pub fn one_of<'de, D: Deserializer<'de>, T>(deserializer: D, variants: &[&str], read: Read<T>) -> Result<T, D::Error> {
    let value = toml::Value::deserialize(deserializer)?;
    if let Some(table) = value.as_table() {
        let expected = format!("exactly one of {}", alternatives(variants));
        if let Some(k) = table.keys().find(|k| !variants.contains(&k.as_str())) {
            return Err(D::Error::custom(format!("unknown field `{k}`, expected {expected}")));
        }
        if table.len() != 1 {
            let given: Vec<&str> = table.keys().map(String::as_str).collect();
            let got = if given.is_empty() { "an empty table".to_string() } else { format!("{} given together", listed(&given, "and")) };
            return Err(D::Error::custom(format!("{got}, expected {expected}")));
        }
    }
    read(value).map_err(|e| D::Error::custom(e.message()))
}

/// Reads `value` (a table read whole) into `T`; an error message starts with the dotted path of
/// the value at fault inside it, as `` at `clients[0].weight`: `` ([`join_path`] joins it to
/// the path of the table).
///
/// # Errors
/// The message, with the path when it is not the table itself.
pub fn value_at_path<T: serde::de::DeserializeOwned>(value: toml::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().message().to_string();
        if path == "." {
            message
        } else {
            format!("at `{path}`: {message}")
        }
    })
}

/// The full dotted path of an error and its message: `outer` (where the parser was, `.` at the
/// top) joined with the path a table read whole put at the start of `message` ([`value_at_path`]),
/// after any prefix such as `explicit instance: `.
pub fn join_path<'m>(outer: &str, message: &'m str) -> (String, std::borrow::Cow<'m, str>) {
    let outer = if outer == "." { "" } else { outer };
    let found = message.find("at `").and_then(|i| {
        let rest = &message[i + 4..];
        let end = rest.find("`: ")?;
        Some((i, &rest[..end], &rest[end + 3..]))
    });
    match found {
        Some((i, inner, tail)) => {
            let path = if outer.is_empty() { inner.to_string() } else { format!("{outer}.{inner}") };
            (path, std::borrow::Cow::Owned(format!("{}{tail}", &message[..i])))
        }
        None => (outer.to_string(), std::borrow::Cow::Borrowed(message)),
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::{alternatives, internally_tagged, one_of};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self", tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
    enum Tagged {
        Bare,
        WithField { k: usize },
    }

    impl<'de> Deserialize<'de> for Tagged {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            internally_tagged(d, "kind", Tagged::deserialize)
        }
    }

    impl Serialize for Tagged {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            Tagged::serialize(self, s)
        }
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
    enum External {
        Plain,
        Value(f64),
        Pair { a: f64 },
    }

    impl<'de> Deserialize<'de> for External {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            one_of(d, &["plain", "value", "pair"], External::deserialize)
        }
    }

    #[derive(Debug, Deserialize)]
    struct Holder<T> {
        x: T,
    }

    fn read<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        toml::from_str::<Holder<T>>(text).map(|h| h.x).map_err(|e| e.message().to_owned())
    }

    #[test]
    fn a_variant_without_fields_refuses_other_keys() {
        assert_eq!(read::<Tagged>("x = { kind = \"bare\" }"), Ok(Tagged::Bare));
        assert_eq!(read::<Tagged>("x = { kind = \"with_field\", k = 2 }"), Ok(Tagged::WithField { k: 2 }));
        assert_eq!(read::<Tagged>("x = { kind = \"bare\", k = 2 }").unwrap_err(), "unknown field `k`: `kind = \"bare\"` takes no other key");
        assert_eq!(read::<Tagged>("x = { kind = \"with_field\", k = 2, z = 1 }").unwrap_err(), "unknown field `z`, expected `k`");
        assert!(read::<Tagged>("x = { kind = \"other\" }").unwrap_err().contains("unknown variant `other`"));
    }

    #[test]
    fn an_externally_tagged_table_holds_exactly_one_variant() {
        assert_eq!(read::<External>("x = \"plain\""), Ok(External::Plain));
        assert_eq!(read::<External>("x = { value = 0.5 }"), Ok(External::Value(0.5)));
        assert_eq!(read::<External>("x = { pair = { a = 1.0 } }"), Ok(External::Pair { a: 1.0 }));
        let expected = "expected exactly one of `plain`, `value` or `pair`";
        assert_eq!(read::<External>("x = { value = 0.5, zz = 1 }").unwrap_err(), format!("unknown field `zz`, {expected}"));
        assert_eq!(read::<External>("x = {}").unwrap_err(), format!("an empty table, {expected}"));
        assert_eq!(read::<External>("x = { value = 0.5, pair = { a = 1.0 } }").unwrap_err(), format!("`pair` and `value` given together, {expected}"));
        assert_eq!(read::<External>("x = { pair = { a = 1.0, b = 2.0 } }").unwrap_err(), "unknown field `b`, expected `a`");
    }

    #[test]
    fn a_path_inside_a_table_read_whole_joins_the_path_of_the_table() {
        use super::join_path;
        let (path, message) = join_path("instance", "explicit instance: at `clients[0].wieght`: unknown field `wieght`");
        assert_eq!((path.as_str(), message.as_ref()), ("instance.clients[0].wieght", "explicit instance: unknown field `wieght`"));
        assert_eq!(join_path(".", "at `rounds`: no").0, "rounds");
        // Controls: a message without a path keeps the outer one; the top level has none.
        assert_eq!(join_path("step", "invalid type"), ("step".to_string(), "invalid type".into()));
        assert_eq!(join_path(".", "invalid type").0, "");
    }

    #[test]
    fn alternatives_are_listed_with_or() {
        assert_eq!(alternatives(&["a"]), "`a`");
        assert_eq!(alternatives(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
