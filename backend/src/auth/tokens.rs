//! Bearer tokens: the shared token of `--auth-token-file` (identity
//! `token`, every role) and the named tokens of `--tokens-file`, for
//! automation (identity `token:<name>`). Only SHA-256 digests are kept: a token is never stored, and
//! never logged.

use std::path::Path;

use gco_api::Role;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::identity::Identity;

/// A token the console accepts: whose it is, and the digest it must have.
#[derive(Clone)]
struct Accepted {
    identity: Identity,
    sha256: [u8; 32],
}

/// Every token the console accepts.
#[derive(Clone, Default)]
pub struct Tokens {
    accepted: Vec<Accepted>,
}

/// Names and roles only: a digest is as good as a password to guess at.
impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.accepted.iter().map(|a| &a.identity))
            .finish()
    }
}

/// The tokens file: one `[[token]]` table per token.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    token: Vec<TokenEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    name: String,
    roles: Vec<String>,
    /// The hex SHA-256 of the token.
    sha256: String,
}

/// The shortest shared token `--auth-token-file` takes.
pub const MIN_TOKEN_CHARS: usize = 16;

impl Tokens {
    /// The shared token of `--auth-token-file`: identity `token`, every role.
    pub fn shared(token: &str) -> Tokens {
        Tokens {
            accepted: vec![Accepted {
                identity: Identity {
                    name: "token".into(),
                    roles: Role::ALL.to_vec(),
                },
                sha256: Sha256::digest(token.as_bytes()).into(),
            }],
        }
    }

    /// Both sets: a token of either is accepted.
    pub fn with(mut self, other: Tokens) -> Tokens {
        self.accepted.extend(other.accepted);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.accepted.is_empty()
    }

    pub fn len(&self) -> usize {
        self.accepted.len()
    }

    /// Reads `--tokens-file`; an error names the file, the entry and the
    /// field at fault.
    pub fn read(path: &Path) -> Result<Tokens, String> {
        let at = |e: String| format!("--tokens-file {}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| at(e.to_string()))?;
        Tokens::parse(&text).map_err(at)
    }

    pub fn parse(text: &str) -> Result<Tokens, String> {
        let file: TokensFile = toml::from_str(text).map_err(|e| e.message().to_owned())?;
        let mut accepted: Vec<Accepted> = Vec::new();
        for (index, entry) in file.token.into_iter().enumerate() {
            let at = |field: &str, e: String| format!("token[{index}].{field}: {e}");
            let name = entry.name.trim();
            if name.is_empty() {
                return Err(at("name", "must not be empty".into()));
            }
            if accepted
                .iter()
                .any(|a| a.identity.name.strip_prefix("token:") == Some(name))
            {
                return Err(at("name", format!("{name:?} names another token too")));
            }
            let roles = entry
                .roles
                .iter()
                .map(|r| Role::parse(r).ok_or_else(|| at("roles", not_a_role(r))))
                .collect::<Result<Vec<_>, _>>()?;
            let sha256 = hex_digest(&entry.sha256).ok_or_else(|| {
                at(
                    "sha256",
                    "must be 64 hex characters: the SHA-256 of the token (sha256sum)".into(),
                )
            })?;
            accepted.push(Accepted {
                identity: Identity {
                    // Known as `token:<name>`: no signed-in user's name
                    // (an e-mail, or `<issuer>#<subject>`) can be one.
                    name: format!("token:{name}"),
                    roles,
                },
                sha256,
            });
        }
        Ok(Tokens { accepted })
    }

    /// The identity `presented` is the token of, if any. Every digest is
    /// compared in full, in time independent of where they differ.
    pub fn identify(&self, presented: &str) -> Option<Identity> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for accepted in &self.accepted {
            if bool::from(accepted.sha256.ct_eq(&digest)) {
                found = Some(accepted.identity.clone());
            }
        }
        found
    }
}

pub fn not_a_role(text: &str) -> String {
    format!("{text:?} is not a role: viewer, operator or admin")
}

fn hex_digest(text: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut out).ok()?;
    Some(out)
}

/// The bearer token of a request's `Authorization`, if it has one.
pub fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        // The scheme is case-insensitive (RFC 9110, section 11.1).
        .split_once(' ')
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("Bearer"))
        .map(|(_, token)| token.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(text: &str) -> String {
        Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn a_named_token_is_its_name_with_its_roles() {
        let file = format!(
            "[[token]]\nname = \"ci\"\nroles = [\"operator\"]\nsha256 = \"{}\"\n\n[[token]]\nname = \"dash\"\nroles = [\"viewer\"]\nsha256 = \"{}\"\n",
            sha("ci-secret-0123456789"),
            sha("dash-secret-0123456789").to_uppercase()
        );
        let tokens = Tokens::parse(&file).unwrap();
        assert_eq!(
            tokens.identify("ci-secret-0123456789"),
            Some(Identity {
                name: "token:ci".into(),
                roles: vec![Role::Operator]
            })
        );
        assert_eq!(
            tokens.identify("dash-secret-0123456789").unwrap().name,
            "token:dash"
        );
        assert_eq!(tokens.identify("ci-secret-012345678"), None);
        assert_eq!(tokens.identify(""), None);
        let both = Tokens::shared("shared-secret-0123").with(tokens);
        assert_eq!(both.identify("shared-secret-0123").unwrap().name, "token");
        assert!(!format!("{both:?}").contains(&sha("ci-secret-0123456789")[..16]));
    }

    #[test]
    fn a_bad_entry_is_named() {
        let digest = sha("x");
        for (file, message) in [
            (
                format!("[[token]]\nname = \"\"\nroles = []\nsha256 = \"{digest}\""),
                "token[0].name: must not be empty",
            ),
            (
                format!("[[token]]\nname = \"a\"\nroles = [\"root\"]\nsha256 = \"{digest}\""),
                "token[0].roles: \"root\" is not a role: viewer, operator or admin",
            ),
            (
                "[[token]]\nname = \"a\"\nroles = []\nsha256 = \"abc\"".to_owned(),
                "token[0].sha256: must be 64 hex characters: the SHA-256 of the token (sha256sum)",
            ),
            (
                format!(
                    "[[token]]\nname = \"a\"\nroles = []\nsha256 = \"{digest}\"\n[[token]]\nname = \"a\"\nroles = []\nsha256 = \"{digest}\""
                ),
                "token[1].name: \"a\" names another token too",
            ),
        ] {
            assert_eq!(Tokens::parse(&file).err().as_deref(), Some(message));
        }
        let unknown =
            Tokens::parse("[[token]]\nname = \"a\"\nroles = []\ntoken = \"plain\"").unwrap_err();
        assert!(unknown.contains("unknown field `token`"), "{unknown}");
    }
}
