//! The API's routes: path templates (axum's and OpenAPI's `{param}` syntax),
//! one constant each, used by the backend's router and by
//! [`crate::change_request`]; [`ROUTES`], what each one does and needs; and
//! the filling of a template.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::Role;

/// This service's OpenAPI document.
pub const OPENAPI: &str = "/api/openapi.json";
/// The deploy defaults ([`crate::Config`]).
pub const CONFIG: &str = "/api/config";
/// Checks a deploy request.
pub const VALIDATE: &str = "/api/validate";
/// The Kubernetes objects of a deploy request or record in one region.
pub const MANIFESTS: &str = "/api/manifests";
/// What each region's monitor is configured with (the console's
/// `--monitor-settings`).
pub const MONITOR_SETTINGS: &str = "/api/monitor-settings";
/// The list of endpoints (GET) and deploys (POST).
pub const ENDPOINTS: &str = "/api/endpoints";
/// One endpoint: read (GET), delete (DELETE).
pub const ENDPOINT: &str = "/api/endpoints/{name}";
pub const TOPOLOGY: &str = "/api/endpoints/{name}/topology";
pub const STORE: &str = "/api/endpoints/{name}/store";
pub const IMAGE: &str = "/api/endpoints/{name}/image";
pub const REPLICAS: &str = "/api/endpoints/{name}/replicas";
pub const STOP: &str = "/api/endpoints/{name}/stop";
pub const START: &str = "/api/endpoints/{name}/start";
pub const REGIONS: &str = "/api/endpoints/{name}/regions";
pub const REGION: &str = "/api/endpoints/{name}/regions/{region}";
/// A canary deploy of a plain endpoint.
pub const CANARY: &str = "/api/endpoints/{name}/canary";
pub const CANARY_PROMOTE: &str = "/api/endpoints/{name}/canary/promote";
pub const CANARY_ROLLBACK: &str = "/api/endpoints/{name}/canary/rollback";
/// Who is asking ([`crate::Me`]).
pub const ME: &str = "/api/me";
/// An endpoint's changes, newest first ([`crate::HistoryPage`]).
pub const HISTORY: &str = "/api/endpoints/{name}/history";
/// Every endpoint's changes, newest first, filtered ([`crate::AuditPage`],
/// [`crate::AuditQuery`]): the audit view.
pub const AUDIT: &str = "/api/history";
/// The audit view's filtered changes, all of them, as JSON Lines or CSV.
pub const AUDIT_EXPORT: &str = "/api/history/export";
/// The export's format (query parameter): `jsonl` or `csv`.
pub const FORMAT_PARAMETER: &str = "format";
/// Puts an endpoint back as a history entry left it ([`crate::RevertBody`]).
pub const REVERT: &str = "/api/endpoints/{name}/revert";
/// `--auth oidc`: starts a sign-in at the OpenID provider (GET, outside
/// `/api`); `?next=` names the console page to return to.
pub const SIGN_IN: &str = "/auth/sign-in";
/// `--auth oidc`: where the OpenID provider sends the user back.
pub const SIGN_IN_CALLBACK: &str = "/auth/callback";
/// `--auth oidc`: ends the session (POST).
pub const SIGN_OUT: &str = "/auth/sign-out";
/// The history page's cursor (query parameter).
pub const AFTER_PARAMETER: &str = "after";
/// The service's liveness (outside `/api`).
pub const HEALTHZ: &str = "/healthz";

/// The path parameter naming the endpoint.
pub const NAME_PARAMETER: &str = "name";
/// The path parameter naming a region.
pub const REGION_PARAMETER: &str = "region";
/// A delete's condition on the owner label, `KEY=VALUE` (query parameter).
pub const OWNER_LABEL_PARAMETER: &str = "owner_label";
/// A delete's condition on the lifecycle id (query parameter).
pub const LIFECYCLE_ID_PARAMETER: &str = "lifecycle_id";

/// The HTTP methods the API uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

impl Method {
    /// The method of an HTTP request, `HEAD` as the `GET` it mirrors; `None`
    /// for one the API has no route for.
    pub fn parse(text: &str) -> Option<Method> {
        Some(match text {
            "GET" | "HEAD" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One route of the API: what authorization and the OpenAPI document know
/// of it. [`ROUTES`] lists every route the backend serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub method: Method,
    /// The path template.
    pub path: &'static str,
    /// Whether it changes what is stored: a change needs an identity that
    /// may make it, and a browser's change must come from the console's page.
    /// A POST that only checks or renders (validate, manifests) does not.
    pub changes_state: bool,
    /// The role it needs, and `None` for what needs no role.
    pub needs: Option<Role>,
    /// Whether it needs an identity: every route with a role, and who is
    /// asking (`/api/me`), which a user without a role may ask too, so the
    /// console can name them and let them sign out. What anyone may read
    /// (the deploy defaults the console reads before sign-in, and
    /// liveness) needs none.
    pub identified: bool,
}

impl Route {
    const fn new(
        method: Method,
        path: &'static str,
        changes_state: bool,
        needs: Option<Role>,
    ) -> Route {
        Route {
            method,
            path,
            changes_state,
            needs,
            identified: needs.is_some(),
        }
    }

    /// A read that needs an identity and no role.
    const fn identity_only(method: Method, path: &'static str) -> Route {
        Route {
            method,
            path,
            changes_state: false,
            needs: None,
            identified: true,
        }
    }

    /// What the route does, as a refusal names it ("deleting an endpoint
    /// needs the admin role; ...").
    pub fn action(&self) -> &'static str {
        match self.needs {
            Some(Role::Admin) => "deleting an endpoint",
            _ if self.changes_state => "changing endpoints",
            _ => "reading endpoints",
        }
    }

    /// Whether `path` (a request's, percent-encoded) is this route's
    /// template with each `{param}` filled by one non-empty segment.
    pub fn matches(&self, path: &str) -> bool {
        if !self.path.contains('{') {
            return path == self.path;
        }
        let mut given = path.split('/');
        let mut template = self.path.split('/');
        loop {
            match (template.next(), given.next()) {
                (None, None) => return true,
                (Some(t), Some(g)) if t.starts_with('{') => {
                    if g.is_empty() {
                        return false;
                    }
                }
                (Some(t), Some(g)) if t == g => {}
                _ => return false,
            }
        }
    }
}

const READ: Option<Role> = Some(Role::Viewer);
const CHANGE: Option<Role> = Some(Role::Operator);

/// Every route the backend serves (its test checks the router and the
/// document against this list). Removing a region is a change, not a
/// delete: only deleting the endpoint needs an admin.
pub const ROUTES: [Route; 26] = {
    use Method::{Delete, Get, Post, Put};
    [
        Route::new(Get, HEALTHZ, false, None),
        Route::new(Get, OPENAPI, false, READ),
        Route::new(Get, CONFIG, false, None),
        Route::identity_only(Get, ME),
        Route::new(Post, VALIDATE, false, READ),
        Route::new(Post, MANIFESTS, false, READ),
        Route::new(Get, MONITOR_SETTINGS, false, READ),
        Route::new(Get, ENDPOINTS, false, READ),
        Route::new(Post, ENDPOINTS, true, CHANGE),
        Route::new(Get, ENDPOINT, false, READ),
        Route::new(Delete, ENDPOINT, true, Some(Role::Admin)),
        Route::new(Put, TOPOLOGY, true, CHANGE),
        Route::new(Put, STORE, true, CHANGE),
        Route::new(Put, IMAGE, true, CHANGE),
        Route::new(Put, REPLICAS, true, CHANGE),
        Route::new(Post, STOP, true, CHANGE),
        Route::new(Post, START, true, CHANGE),
        Route::new(Post, CANARY, true, CHANGE),
        Route::new(Post, CANARY_PROMOTE, true, CHANGE),
        Route::new(Post, CANARY_ROLLBACK, true, CHANGE),
        Route::new(Post, REGIONS, true, CHANGE),
        Route::new(Delete, REGION, true, CHANGE),
        Route::new(Get, HISTORY, false, READ),
        Route::new(Post, REVERT, true, CHANGE),
        Route::new(Get, AUDIT, false, READ),
        Route::new(Get, AUDIT_EXPORT, false, READ),
    ]
};

/// The route a request is for, if any.
pub fn find(method: Method, path: &str) -> Option<&'static Route> {
    ROUTES
        .iter()
        .find(|r| r.method == method && r.matches(path))
}

/// `template` with each `{key}` of `params` replaced by its value,
/// percent-encoded as one path segment.
///
/// # Panics
/// When `template` lacks one of the keys: templates and keys are this
/// crate's constants, so that is a bug here, not a client's input.
pub fn fill(template: &str, params: &[(&str, &str)]) -> String {
    let mut path = template.to_owned();
    for (key, value) in params {
        let placeholder = format!("{{{key}}}");
        assert!(
            path.contains(&placeholder),
            "{template} has no parameter {key}"
        );
        path = path.replace(&placeholder, &encode_segment(value));
    }
    path
}

/// Every byte but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`).
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `text` as one path segment or query value: every byte but RFC 3986's
/// unreserved characters percent-encoded, so that a `/`, `?`, `#`, `&`, `+`
/// or `%` in a name stays inside its segment. The one encoder of the backend,
/// the console and the requests they share.
pub fn encode_segment(text: &str) -> String {
    utf8_percent_encode(text, NOT_UNRESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_keeps_unreserved_characters_only() {
        assert_eq!(encode_segment("pd-1.a_b~c"), "pd-1.a_b~c");
        assert_eq!(encode_segment("a/b?c#d%e f"), "a%2Fb%3Fc%23d%25e%20f");
        assert_eq!(encode_segment("é!"), "%C3%A9%21");
        // What JS's encodeURIComponent leaves as it is.
        assert_eq!(encode_segment("!'()*"), "%21%27%28%29%2A");
        assert_eq!(encode_segment("a+b&c=d"), "a%2Bb%26c%3Dd");
        assert_eq!(encode_segment(""), "");
    }

    #[test]
    fn a_template_is_filled_per_segment() {
        assert_eq!(
            fill(
                REGION,
                &[(NAME_PARAMETER, "a/b"), (REGION_PARAMETER, "eu-west-1")]
            ),
            "/api/endpoints/a%2Fb/regions/eu-west-1"
        );
    }

    #[test]
    fn a_route_is_found_by_its_filled_template() {
        let found = |m, p| find(m, p).map(|r| (r.method, r.path));
        assert_eq!(
            found(Method::Delete, "/api/endpoints/a%2Fb"),
            Some((Method::Delete, ENDPOINT))
        );
        assert_eq!(
            found(Method::Delete, "/api/endpoints/a/regions/eu-west-1"),
            Some((Method::Delete, REGION))
        );
        assert_eq!(found(Method::Get, "/api/endpoints/"), None);
        assert_eq!(found(Method::Get, "/api/endpoints/a/b"), None);
        assert_eq!(found(Method::Put, "/api/endpoints/a"), None);
        assert_eq!(
            found(Method::Post, VALIDATE),
            Some((Method::Post, VALIDATE))
        );
    }

    #[test]
    fn routes_are_listed_once() {
        for (i, a) in ROUTES.iter().enumerate() {
            for b in &ROUTES[i + 1..] {
                assert!((a.method, a.path) != (b.method, b.path), "{a:?} twice");
            }
        }
    }

    #[test]
    #[should_panic(expected = "/api/endpoints has no parameter name")]
    fn a_missing_parameter_is_a_bug() {
        fill(ENDPOINTS, &[(NAME_PARAMETER, "x")]);
    }
}
