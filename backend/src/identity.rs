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
