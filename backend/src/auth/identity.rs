//! Who made a request: the identity the auth layer verified ([`crate::auth`])
//! and the roles it holds. The auth layer puts one in every `/api`
//! request's extensions; handlers take it as an extractor.

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use gco_api::Role;

use crate::api::ApiError;

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

    /// `Ok` when the identity holds `needed`, else the 403 that names it.
    pub fn require(&self, needed: Role, action: &str) -> Result<(), ApiError> {
        if self.may(needed) {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "{action} needs the {needed} role; {} has {}",
                self.name,
                held(&self.roles)
            ),
        ))
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
    if verified && let Some(email) = text("email") {
        return Some(email.to_owned());
    }
    let issuer = text("iss").or(issuer).filter(|s| !s.is_empty())?;
    Some(format!("{issuer}#{}", text("sub")?))
}

/// The roles as a phrase: "the viewer role", "no role".
fn held(roles: &[Role]) -> String {
    match roles.iter().max() {
        None => "no role".into(),
        Some(top) => format!("the {top} role"),
    }
}

/// The identity the auth layer verified. Without one (a route the layer
/// did not wrap) the request fails closed.
impl<S: Send + Sync> FromRequestParts<S> for Identity {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts.extensions.get::<Identity>().cloned().ok_or_else(|| {
            tracing::error!("a request reached a handler without a verified identity");
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "no verified identity")
        })
    }
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
