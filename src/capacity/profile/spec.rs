//! Naming a switch profile: a built-in name or a TOML file, read and
//! checked before any work.

use super::Profile;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// Where a switch profile comes from, parsed without reading anything: a
/// built-in name (checked against the built-in profiles), `file:PATH` (the
/// file's only profile) or `file:PATH#NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileSpec {
    /// A built-in profile, by name.
    Builtin(String),
    /// A TOML file of profiles.
    File {
        /// The file.
        path: std::path::PathBuf,
        /// The profile in it (`None`: its only one).
        name: Option<String>,
    },
}

/// The error for `name`, which `known` does not hold.
fn unknown_profile(origin: &str, name: &str, known: &BTreeMap<String, Profile>) -> Error {
    Error::Profile {
        origin: origin.to_string(),
        profile: name.to_string(),
        field: "name".into(),
        reason: format!(
            "no such profile (known: {})",
            known.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    }
}

impl std::str::FromStr for ProfileSpec {
    type Err = Error;

    fn from_str(spec: &str) -> Result<Self> {
        let spec = spec.trim();
        if let Some(rest) = spec.strip_prefix("file:") {
            let (path, name) = match rest.rsplit_once('#') {
                Some((p, n)) => (p, Some(n.to_string())),
                None => (rest, None),
            };
            if path.is_empty() {
                return Err(Error::Profile {
                    origin: "spec".into(),
                    profile: spec.to_string(),
                    field: "path".into(),
                    reason: "is empty: give file:PATH or file:PATH#NAME".into(),
                });
            }
            return Ok(ProfileSpec::File {
                path: path.into(),
                name,
            });
        }
        let all = Profile::builtin();
        if all.contains_key(spec) {
            Ok(ProfileSpec::Builtin(spec.to_string()))
        } else {
            Err(unknown_profile("built-in", spec, &all))
        }
    }
}

impl ProfileSpec {
    /// The file it reads, if any.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            ProfileSpec::File { path, .. } => Some(path),
            ProfileSpec::Builtin(_) => None,
        }
    }

    /// The profile: built in, or read from its file and validated.
    ///
    /// # Errors
    /// [`Error::Profile`] for a name the file lacks or a bad file,
    /// [`Error::Io`] when the file cannot be read.
    pub fn resolve(&self) -> Result<Profile> {
        match self {
            ProfileSpec::Builtin(name) => {
                let all = Profile::builtin();
                all.get(name)
                    .cloned()
                    .ok_or_else(|| unknown_profile("built-in", name, &all))
            }
            ProfileSpec::File { path, name } => {
                let text =
                    tagger_generators::file::read_input(path).map_err(|e| Error::io(path, e))?;
                let shown = path.display().to_string();
                let all = Profile::parse_all(&text, &shown)?;
                match name {
                    Some(n) => all
                        .get(n)
                        .cloned()
                        .ok_or_else(|| unknown_profile(&shown, n, &all)),
                    None if all.len() == 1 => Ok(all.into_values().next().expect("one profile")),
                    None => Err(Error::Profile {
                        origin: shown.clone(),
                        profile: String::new(),
                        field: "name".into(),
                        reason: format!(
                            "the file has {} profiles: pick one with file:{shown}#NAME ({})",
                            all.len(),
                            all.keys().cloned().collect::<Vec<_>>().join(", ")
                        ),
                    }),
                }
            }
        }
    }
}
