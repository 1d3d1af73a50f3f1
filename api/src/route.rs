//! The API's routes: path templates (axum's and OpenAPI's `{param}` syntax),
//! one constant each, used by the backend's router and by
//! [`crate::change_request`]; the table of changes ([`CHANGES`]);
//! [`ROUTES`], what each route does and needs; and the filling of a
//! template.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use gco_spec::ChangeKind;

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

gco_spec::vocabulary! {
    serde;
    /// The HTTP methods the API uses.
    #[derive(PartialOrd, Ord)]
    pub enum Method {
        Get = "GET",
        Post = "POST",
        Put = "PUT",
        Delete = "DELETE",
    }
}

impl Method {
    /// The method of an HTTP request, `HEAD` as the `GET` it mirrors; `None`
    /// for one the API has no route for.
    pub fn of_request(text: &str) -> Option<Method> {
        match text {
            "HEAD" => Some(Method::Get),
            _ => Method::parse(text),
        }
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
    /// What the route does, as a refusal names it ("deleting an endpoint
    /// needs the admin role; ...").
    pub doing: &'static str,
}

impl Route {
    const fn new(
        method: Method,
        path: &'static str,
        changes_state: bool,
        needs: Option<Role>,
        doing: &'static str,
    ) -> Route {
        Route {
            method,
            path,
            changes_state,
            needs,
            doing,
            identified: needs.is_some(),
        }
    }

    /// A read that needs an identity and no role.
    const fn identity_only(method: Method, path: &'static str, doing: &'static str) -> Route {
        Route {
            method,
            path,
            changes_state: false,
            needs: None,
            doing,
            identified: true,
        }
    }
}

/// The table of changes: one row per kind of change ([`ChangeKind`], the
/// core's), declared once in [`for_each_change!`](crate::for_each_change),
/// from which come [`CHANGES`] (and so the change rows of [`ROUTES`]), the
/// requests ([`crate::change_request`]), the backend's handlers and the role
/// each needs, with the words of its refusal.
/// Calls `$callback!` with every row of the table of changes, in
/// [`ChangeKind::ALL`]'s order:
///
/// `Kind: handler, method PATH, Role, "doing", [arguments], "summary";`
///
/// - `Kind`: the core's [`ChangeKind`] (its history name, GCO's `<op>`
///   word and its operation in `gco_spec::ops`);
/// - `handler`: the backend's handler (the OpenAPI operation id);
/// - `method PATH`: the route ([`crate::route`]'s constant);
/// - `Role`: the role it needs, and `"doing"` the words of a refusal
///   ("scaling an endpoint needs the operator role; ...");
/// - `[arguments]`: what the request carries besides the endpoint's name
///   and `If-Match`: `[body Schema]` (a JSON body, documented by `Schema`),
///   `[query Type]` or `[path Type]` (an extractor making the change), or
///   `[]`;
/// - `"summary"`: the operation's summary in the OpenAPI document.
///
/// A new kind of change is a variant of [`ChangeKind`] with its operation
/// in the core, a row here, and (when it takes arguments) its body in
/// [`change_request`] and [`change_of`].
#[macro_export]
macro_rules! for_each_change {
    ($callback:ident) => {
        $callback! {
            SetTopology: set_topology, put TOPOLOGY, Operator, "setting an endpoint's topology",
                [body TopologyBody], "Set the XpYd topology of a split-mode endpoint";
            ConfigureStore: configure_store, put STORE, Operator,
                "configuring an endpoint's KV-cache store",
                [body MooncakeStoreConfig], "Replace the KV-store settings (spec.mooncake.store)";
            UpdateImage: update_image, put IMAGE, Operator, "updating an endpoint's image",
                [body ImageBody], "Update the image (drops per-region image URIs)";
            Scale: scale, put REPLICAS, Operator, "scaling an endpoint",
                [body ReplicasBody], "Scale a plain endpoint";
            Stop: stop, post STOP, Operator, "stopping an endpoint",
                [], "Stop (from any state but deleted)";
            Start: start, post START, Operator, "starting an endpoint",
                [], "Start a stopped endpoint";
            Delete: remove, delete ENDPOINT, Admin, "deleting an endpoint",
                [query DeleteQuery], "Delete an endpoint (idempotent; the monitors clean up)";
            CanaryDeploy: canary_deploy, post CANARY, Operator, "starting a canary",
                [body CanaryBody], "Start a canary of a plain endpoint (refused on Mooncake endpoints)";
            PromoteCanary: promote_canary, post CANARY_PROMOTE, Operator, "promoting a canary",
                [], "Promote the canary's image to the endpoint's (plain endpoints only)";
            RollbackCanary: rollback_canary, post CANARY_ROLLBACK, Operator,
                "rolling back a canary",
                [], "Remove the canary and restore full traffic to the primary";
            AddRegion: add_region, post REGIONS, Operator, "adding a region to an endpoint",
                [body RegionBody], "Add a target region";
            RemoveRegion: remove_region, delete REGION, Operator,
                "removing a region from an endpoint",
                [path RegionName], "Remove a target region";
        }
    };
}

/// A row of the table of changes as this crate reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeRoute {
    pub kind: ChangeKind,
    pub method: Method,
    /// The path template.
    pub path: &'static str,
    pub needs: Role,
    /// What the change does, as a refusal names it.
    pub doing: &'static str,
}

macro_rules! change_routes {
    ($($kind:ident: $handler:ident, $method:ident $path:ident, $role:ident, $doing:literal,
        [$($arguments:tt)*], $summary:literal;)+) => {
        /// Every change's row, in [`ChangeKind::ALL`]'s order.
        pub const CHANGES: [ChangeRoute; ChangeKind::ALL.len()] = [$(ChangeRoute {
            kind: ChangeKind::$kind,
            method: method!($method),
            path: $path,
            needs: Role::$role,
            doing: $doing,
        }),+];
    };
}

macro_rules! method {
    (get) => {
        Method::Get
    };
    (post) => {
        Method::Post
    };
    (put) => {
        Method::Put
    };
    (delete) => {
        Method::Delete
    };
}

for_each_change!(change_routes);

impl ChangeRoute {
    /// The row of `kind`.
    pub const fn of(kind: ChangeKind) -> &'static ChangeRoute {
        &CHANGES[kind as usize]
    }

    /// The route it is served at: it changes what is stored.
    pub const fn route(&self) -> Route {
        Route {
            method: self.method,
            path: self.path,
            changes_state: true,
            needs: Some(self.needs),
            doing: self.doing,
            identified: true,
        }
    }
}

const READ: Option<Role> = Some(Role::Viewer);
const READING: &str = "reading endpoints";

/// The routes that are no change of an endpoint ([`CHANGES`] are the rest).
const OTHER_ROUTES: [Route; 14] = {
    use Method::{Get, Post};
    [
        Route::new(Get, HEALTHZ, false, None, "checking liveness"),
        Route::new(Get, OPENAPI, false, READ, READING),
        Route::new(Get, CONFIG, false, None, "reading the deploy defaults"),
        Route::identity_only(Get, ME, "asking who is signed in"),
        Route::new(Post, VALIDATE, false, READ, READING),
        Route::new(Post, MANIFESTS, false, READ, READING),
        Route::new(Get, MONITOR_SETTINGS, false, READ, READING),
        Route::new(Get, ENDPOINTS, false, READ, READING),
        Route::new(
            Post,
            ENDPOINTS,
            true,
            Some(Role::Operator),
            "deploying an endpoint",
        ),
        Route::new(Get, ENDPOINT, false, READ, READING),
        Route::new(Get, HISTORY, false, READ, READING),
        Route::new(Get, AUDIT, false, READ, READING),
        Route::new(Get, AUDIT_EXPORT, false, READ, READING),
        // A purged endpoint deployed again needs the admin role, which
        // only its state tells: the service checks that.
        Route::new(
            Post,
            REVERT,
            true,
            Some(Role::Operator),
            "reverting an endpoint",
        ),
    ]
};

/// Every route the backend serves (its test checks the router and the
/// document against this list): [`OTHER_ROUTES`], then the table of
/// changes. Removing a region is a change, not a delete: only deleting the
/// endpoint needs an admin.
pub const ROUTES: [Route; OTHER_ROUTES.len() + CHANGES.len()] = {
    let mut all = [OTHER_ROUTES[0]; OTHER_ROUTES.len() + CHANGES.len()];
    let mut i = 0;
    while i < OTHER_ROUTES.len() {
        all[i] = OTHER_ROUTES[i];
        i += 1;
    }
    let mut j = 0;
    while j < CHANGES.len() {
        all[i + j] = CHANGES[j].route();
        j += 1;
    }
    all
};

/// The route served at path template `path` (as axum's `MatchedPath`
/// names it) for `method`, if any.
pub fn served(method: Method, path: &str) -> Option<&'static Route> {
    ROUTES.iter().find(|r| r.method == method && r.path == path)
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
    fn a_route_is_found_by_its_template() {
        let found = |m, p| served(m, p).map(|r| (r.method, r.path, r.needs));
        assert_eq!(
            found(Method::Delete, ENDPOINT),
            Some((Method::Delete, ENDPOINT, Some(Role::Admin)))
        );
        assert_eq!(
            found(Method::Delete, REGION),
            Some((Method::Delete, REGION, Some(Role::Operator)))
        );
        assert_eq!(found(Method::Get, "/api/endpoints/web"), None);
        assert_eq!(found(Method::Put, ENDPOINT), None);
        assert_eq!(
            found(Method::Get, CONFIG),
            Some((Method::Get, CONFIG, None))
        );
    }

    #[test]
    fn the_table_lists_each_kind_once_in_order() {
        for (row, kind) in CHANGES.iter().zip(ChangeKind::ALL) {
            assert_eq!(row.kind, kind);
            assert_eq!(ChangeRoute::of(kind), row);
        }
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
