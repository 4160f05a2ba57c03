//! One parser for the `key=value,...` parameters every spec string of the
//! engine carries: topology families (`fattree:k=8`), ELP families
//! (`random:1000,seed=2`), algorithms (`search:budget=1e8,time=60`) and
//! failures (`links:2,trials=20`). Each caller checks the keys and values it
//! knows and reports them in its own error type.

/// Why a parameter list does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamsError {
    /// An item without `=` (other than a leading bare value where one is
    /// allowed).
    #[error("'{0}' is not key=value")]
    NotKeyValue(String),
    /// The same key twice (`value` is the second one).
    #[error("parameter '{key}' is given twice")]
    Twice {
        /// The key.
        key: String,
        /// Its second value.
        value: String,
    },
}

/// Parameters in the order given, consumed one by one so that leftovers can
/// be reported as unknown.
///
/// ```
/// use tagger_generators::params::Params;
/// let mut p = Params::parse("1000, seed=2", Some("n")).unwrap();
/// assert_eq!(p.take("n").as_deref(), Some("1000"));
/// assert_eq!(p.take("seed").as_deref(), Some("2"));
/// assert!(p.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params {
    items: Vec<(String, String)>,
}

impl Params {
    /// Parses `k=v,k=v`: spaces around items, keys and values are ignored,
    /// empty items skipped. With `bare = Some(key)`, a first item without
    /// `=` stands for `key=item` (`random:1000` is `random:n=1000`).
    ///
    /// # Errors
    /// [`ParamsError`] naming the item or key at fault.
    pub fn parse(text: &str, bare: Option<&str>) -> Result<Self, ParamsError> {
        let mut items: Vec<(String, String)> = Vec::new();
        for (i, part) in text
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .enumerate()
        {
            let (k, v) = match (part.split_once('='), bare) {
                (Some((k, v)), _) => (k.trim(), v.trim()),
                (None, Some(key)) if i == 0 => (key, part),
                (None, _) => return Err(ParamsError::NotKeyValue(part.to_string())),
            };
            if items.iter().any(|(x, _)| x == k) {
                return Err(ParamsError::Twice {
                    key: k.to_string(),
                    value: v.to_string(),
                });
            }
            items.push((k.to_string(), v.to_string()));
        }
        Ok(Params { items })
    }

    /// Removes and returns `key`'s value.
    pub fn take(&mut self, key: &str) -> Option<String> {
        let i = self.items.iter().position(|(k, _)| k == key)?;
        Some(self.items.remove(i).1)
    }

    /// The first parameter not yet taken.
    pub fn first(&self) -> Option<(&str, &str)> {
        self.items.first().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether every parameter was taken.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// A non-negative integer, `_` allowed as a digit separator (`1_000`).
pub fn non_negative(v: &str) -> Option<u64> {
    v.replace('_', "").parse().ok()
}

/// Why `v` is not a count [`non_negative`] (or a count in `1e8` form)
/// accepts: a number too large for 64 bits is "out of range", anything
/// else "not a non-negative integer".
pub fn not_a_count(v: &str) -> &'static str {
    let t = v.replace('_', "");
    let big = (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        || t.parse::<f64>().is_ok_and(|x| x.is_finite() && x >= 1.8e19);
    if big {
        "out of range (at most 18446744073709551615)"
    } else {
        "not a non-negative integer"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_out_of_range_are_named() {
        assert_eq!(non_negative("18446744073709551615"), Some(u64::MAX));
        assert!(not_a_count("18446744073709551616").starts_with("out of range"));
        assert!(not_a_count("1e30").starts_with("out of range"));
        assert_eq!(not_a_count("x"), "not a non-negative integer");
        assert_eq!(not_a_count("-1"), "not a non-negative integer");
    }

    #[test]
    fn parses_takes_and_refuses() {
        let mut p = Params::parse(" k = 8 , seed=1,", None).unwrap();
        assert_eq!(p.first(), Some(("k", "8")));
        assert_eq!(p.take("seed").as_deref(), Some("1"));
        assert_eq!(p.take("seed"), None);
        assert_eq!(p.take("k").as_deref(), Some("8"));
        assert!(p.is_empty());
        assert_eq!(
            Params::parse("8", None),
            Err(ParamsError::NotKeyValue("8".into()))
        );
        assert_eq!(
            Params::parse("8,9", Some("n")),
            Err(ParamsError::NotKeyValue("9".into()))
        );
        assert_eq!(
            Params::parse("k=1,k=2", None),
            Err(ParamsError::Twice {
                key: "k".into(),
                value: "2".into()
            })
        );
        assert_eq!(
            Params::parse("3,n=4", Some("n")),
            Err(ParamsError::Twice {
                key: "n".into(),
                value: "4".into()
            })
        );
        assert_eq!(Params::parse("", None).unwrap(), Params::default());
        assert_eq!(non_negative("1_000"), Some(1000));
        assert_eq!(non_negative("-1"), None);
    }
}
