//! Who made a request: the identity the auth layer verified ([`crate::auth`])
//! and the roles it holds, and why it may not do something ([`Refusal`]).
//! The auth layer puts one in every `/api` request's extensions; handlers
//! take it as an extractor.

use axum::http::StatusCode;
use gco_api::Role;
use tracing::Level;

use crate::error::ApiError;

/// A verified identity and its roles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The user's or token's name; `local` under `--auth none`.
    pub name: String,
    pub roles: Vec<Role>,
}

impl Identity {
    /// `--auth none`: the loopback user, with every role.
    pub fn local() -> Identity {
        Identity {
            name: "local".into(),
            roles: Role::ALL.to_vec(),
        }
    }

    pub fn may(&self, needed: Role) -> bool {
        needed.granted_by(&self.roles)
    }

    /// `Ok` when the identity holds `needed` to do `doing` (a gerund:
    /// "scaling an endpoint"), else why not.
    pub fn require(&self, needed: Role, doing: &'static str) -> Result<(), Refusal> {
        if self.may(needed) {
            return Ok(());
        }
        Err(Refusal {
            doing,
            needed,
            who: self.name.clone(),
            held: self.roles.iter().copied().max(),
        })
    }
}

/// The answer to a request that reached a role check or a handler without
/// a verified identity (a route the auth layer did not wrap): it fails
/// closed.
pub fn no_identity() -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "no verified identity").logged(
        Level::ERROR,
        "a request reached a handler without a verified identity",
        "",
    )
}

/// Why an identity may not do what it asked: what it was doing, the role
/// that needs, who it is and the most it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub doing: &'static str,
    pub needed: Role,
    pub who: String,
    pub held: Option<Role>,
}

/// "scaling an endpoint needs the operator role; val has the viewer role".
impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Refusal {
            doing,
            needed,
            who,
            held,
        } = self;
        write!(f, "{doing} needs the {needed} role; {who} has ")?;
        match held {
            None => f.write_str("no role"),
            Some(top) => write!(f, "the {top} role"),
        }
    }
}

/// The API's answer to a refusal: 403, in its words.
impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> ApiError {
        let who = refusal.who.clone();
        ApiError::new(StatusCode::FORBIDDEN, refusal.to_string()).logged(
            Level::INFO,
            "refused: role",
            who,
        )
    }
}

/// The name a signed-in user is known by (in history, logs and answers),
/// from the claims the identity provider signed: the `email` when the
/// provider says it is verified (`email_verified` true, or `"true"` as
/// Cognito's user info sends it), else the subject qualified by its issuer,
/// `<iss>#<sub>` (an issuer URL has no fragment, so the `#` is
/// unambiguous). So nobody takes an address they have not proven, and no
/// user's name is a token's (`token`, `token:<name>`) or another
/// provider's user's. `None` without `sub` or `iss`.
pub fn user_name(
    claims: &serde_json::Map<String, serde_json::Value>,
    issuer: Option<&str>,
) -> Option<String> {
    let text = |key: &str| {
        claims
            .get(key)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let verified = matches!(
        claims.get("email_verified"),
        Some(serde_json::Value::Bool(true))
    ) || text("email_verified") == Some("true");
    let issuer = text("iss").or(issuer).unwrap_or_default();
    name_of(
        text("email").filter(|_| verified),
        issuer,
        text("sub").unwrap_or_default(),
    )
}

/// [`user_name`] from claims already read: `email` only when verified.
/// `None` when `issuer` or `subject` is empty.
pub fn name_of(email: Option<&str>, issuer: &str, subject: &str) -> Option<String> {
    if let Some(email) = email.filter(|e| !e.is_empty()) {
        return Some(email.to_owned());
    }
    if issuer.is_empty() || subject.is_empty() {
        return None;
    }
    Some(format!("{issuer}#{subject}"))
}

#[cfg(test)]
mod tests {
    use super::user_name;

    fn name(claims: serde_json::Value) -> Option<String> {
        user_name(
            claims.as_object().unwrap(),
            Some("https://alb-header.example"),
        )
    }

    #[test]
    fn a_user_is_named_by_a_verified_email_or_their_issuer_and_subject() {
        let iss = "https://idp.example.com";
        assert_eq!(
            name(
                serde_json::json!({"iss": iss, "sub": "0f3c", "email": "ada@example.com", "email_verified": true})
            ),
            Some("ada@example.com".into())
        );
        assert_eq!(
            name(
                serde_json::json!({"iss": iss, "sub": "0f3c", "email": "ada@example.com", "email_verified": "true"})
            ),
            Some("ada@example.com".into())
        );
        // The probe's: an unverified address, and a username that is a
        // token's name.
        for claims in [
            serde_json::json!({"iss": iss, "sub": "0f3c", "email": "ada@example.com"}),
            serde_json::json!({"iss": iss, "sub": "0f3c", "email": "ada@example.com", "email_verified": false}),
            serde_json::json!({"iss": iss, "sub": "0f3c", "email": "ada@example.com", "email_verified": "yes"}),
            serde_json::json!({"iss": iss, "sub": "0f3c", "preferred_username": "ci-admin"}),
            serde_json::json!({"iss": iss, "sub": "0f3c", "email_verified": true}),
        ] {
            assert_eq!(name(claims), Some(format!("{iss}#0f3c")));
        }
        assert_eq!(
            name(serde_json::json!({"sub": "0f3c"})),
            Some("https://alb-header.example#0f3c".into())
        );
        assert_eq!(
            name(serde_json::json!({"iss": iss, "email": "a@b.c"})),
            None
        );
        assert_eq!(user_name(&serde_json::Map::new(), None), None);
    }
}
