//! The operations GCO's newest CLI has, through the whole HTTP application,
//! on the embedded store and on a real DynamoDB-compatible server
//! (dynalite): canary routes, the owner-conditioned delete, and the
//! deletion fields as each store keeps them.

use crate::common;

use std::sync::Arc;

use crate::common::{Dynalite, TempDir};
use aws_sdk_dynamodb::types::AttributeValue;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use gco_console::auth::Access;
use gco_console::store::Store;
use gco_spec::json::{Value, parse};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// The application over one store, with the store for looking underneath.
struct Api {
    app: Router,
    store: Arc<dyn Store>,
    _dist: TempDir,
}

struct Reply {
    status: StatusCode,
    body: Value,
    text: String,
}

impl Reply {
    fn get(&self, path: &str) -> Value {
        common::at(self.body.clone(), path)
    }

    fn str(&self, path: &str) -> String {
        self.get(path).as_str().unwrap_or_default().to_owned()
    }

    /// The status with the first error's path and message.
    fn refusal(&self) -> (StatusCode, String, String) {
        (
            self.status,
            self.str("errors.0.path"),
            self.str("errors.0.message"),
        )
    }
}

impl Api {
    fn over(store: Arc<dyn Store>) -> Api {
        let dist = TempDir::new("dist");
        let service = common::service(Arc::clone(&store));
        let app = gco_console::app::app(service, Access::loopback(None), dist.path());
        Api {
            app,
            store,
            _dist: dist,
        }
    }

    async fn send(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "127.0.0.1");
        if body.is_some() {
            req = req.header(header::CONTENT_TYPE, "application/json");
        }
        let req = req
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
            .unwrap();
        let response = self.app.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Reply {
            status,
            body: parse(&text).unwrap_or(Value::Null),
            text,
        }
    }

    async fn post(&self, path: &str, body: &str) -> Reply {
        self.send("POST", path, Some(body)).await
    }

    async fn ok(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        let r = self.send(method, path, body).await;
        assert_eq!(r.status, StatusCode::OK, "{method} {path}: {}", r.text);
        r
    }

    async fn deploy(&self, request: &str) -> Reply {
        let r = self.post("/api/endpoints", request).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        r
    }

    /// The record's JSON as the store keeps it now.
    async fn stored(&self, name: &str) -> String {
        self.store
            .get_stored(name)
            .await
            .unwrap()
            .expect("stored")
            .json
            .clone()
    }
}

fn embedded() -> (Api, TempDir) {
    let dir = TempDir::new("operations");
    (Api::over(common::embedded(&dir)), dir)
}

async fn on_dynalite(dynalite: &Dynalite) -> Api {
    Api::over(Arc::new(dynalite.store().await))
}

const PLAIN: &str = r#"{"endpoint_name": "web", "image": "img:1", "target_regions": ["us-east-1", "eu-west-1"], "labels": {"team": "ml"}}"#;

const SPLIT: &str = r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "prefill_replicas": 1, "decode_replicas": 1, "target_regions": ["us-east-1"]}"#;

/// A delete conditioned on the owner: 412 and nothing written on any
/// mismatch, the deletion when both match.
async fn conditional_delete(api: &Api) {
    let deployed = api.deploy(PLAIN).await;
    let id = deployed.str("lifecycle_id");
    let before = api.stored("web").await;
    let other = "cd".repeat(32);
    let refused = [
        (
            format!("owner_label=team%3Dweb&lifecycle_id={id}"),
            "owner_label",
            "Endpoint 'web' was not deleted: owner_label requires labels.team = 'web', but the endpoint has labels.team = 'ml'".to_owned(),
        ),
        (
            format!("owner_label=owner=ml&lifecycle_id={id}"),
            "owner_label",
            "Endpoint 'web' was not deleted: owner_label requires labels.owner = 'ml', but the endpoint has no label 'owner'".to_owned(),
        ),
        (
            format!("owner_label=team=ml&lifecycle_id={other}"),
            "lifecycle_id",
            format!(
                "Endpoint 'web' was not deleted: lifecycle_id requires '{other}', but the endpoint has lifecycle_id '{id}'"
            ),
        ),
    ];
    for (query, path, message) in refused {
        let r = api
            .send("DELETE", &format!("/api/endpoints/web?{query}"), None)
            .await;
        assert_eq!(
            r.refusal(),
            (StatusCode::PRECONDITION_FAILED, path.to_owned(), message),
            "{query}"
        );
        assert_eq!(api.stored("web").await, before, "{query}: nothing written");
    }
    let deleted = api
        .ok(
            "DELETE",
            &format!("/api/endpoints/web?owner_label=team%3Dml&lifecycle_id={id}"),
            None,
        )
        .await;
    assert_eq!(deleted.str("desired_state"), "deleted");
    assert_eq!(deleted.str("deletion_generation").len(), 64);
    assert_eq!(
        deleted.get("deletion_regions").to_json(),
        r#"["us-east-1", "eu-west-1"]"#
    );
}

#[tokio::test]
async fn conditional_delete_on_the_embedded_store() {
    let (api, _dir) = embedded();
    conditional_delete(&api).await;
}

#[tokio::test]
async fn conditional_delete_on_dynalite() {
    let dynalite = Dynalite::start();
    conditional_delete(&on_dynalite(&dynalite).await).await;
}

#[tokio::test]
async fn conditional_delete_parameters_are_checked() {
    let (api, _dir) = embedded();
    api.deploy(PLAIN).await;
    let before = api.stored("web").await;
    let cases = [
        (
            "owner_label=team&lifecycle_id=x",
            "owner_label",
            r#"owner_label must be KEY=VALUE, got "team""#,
        ),
        (
            "owner_label=team=ml",
            "lifecycle_id",
            "owner_label and lifecycle_id must be supplied together",
        ),
        (
            "lifecycle_id=x",
            "owner_label",
            "owner_label and lifecycle_id must be supplied together",
        ),
        (
            "lifecycle_id=x&lifecycle_id=y&owner_label=a=b",
            "lifecycle_id",
            "lifecycle_id is given more than once",
        ),
    ];
    for (query, path, message) in cases {
        let r = api
            .send("DELETE", &format!("/api/endpoints/web?{query}"), None)
            .await;
        assert_eq!(
            r.refusal(),
            (StatusCode::BAD_REQUEST, path.to_owned(), message.to_owned()),
            "{query}"
        );
    }
    // Both given, but empty: the store's own words.
    let r = api
        .send(
            "DELETE",
            "/api/endpoints/web?owner_label==ml&lifecycle_id=x",
            None,
        )
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "owner_label".to_owned(),
            "Expected endpoint label name and value must be non-empty".to_owned()
        )
    );
    assert_eq!(api.stored("web").await, before);
    // Other parameters are ignored, as on a list.
    let r = api.ok("DELETE", "/api/endpoints/web?force=1", None).await;
    assert_eq!(r.str("desired_state"), "deleted");
}

/// Delete writes the deletion fields once; a second delete writes nothing.
async fn deletion_fields(api: &Api) {
    api.deploy(PLAIN).await;
    api.ok("DELETE", "/api/endpoints/web/regions/eu-west-1", None)
        .await;
    let first = api.ok("DELETE", "/api/endpoints/web", None).await;
    let generation = first.str("deletion_generation");
    assert_eq!(generation.len(), 64);
    assert!(generation.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        first.get("deletion_regions").to_json(),
        r#"["us-east-1", "eu-west-1"]"#,
        "the cleanup history, the removed region too"
    );
    let stored = api.stored("web").await;
    assert_eq!(first.text, stored, "the answer is the stored record");
    let second = api.ok("DELETE", "/api/endpoints/web", None).await;
    assert_eq!(second.text, stored, "a second delete changes nothing");
    assert_eq!(api.stored("web").await, stored);
    // Deleted, every other operation is refused in GCO's words.
    let r = api
        .send(
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 2}"#),
        )
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::CONFLICT,
            "desired_state".to_owned(),
            "Endpoint 'web' is deleted and cannot be scaled; redeploy it after deletion completes."
                .to_owned()
        )
    );
    let r = api.post("/api/endpoints/web/start", "").await;
    assert_eq!(
        r.refusal().2,
        "Endpoint 'web' is deleted; wait for purge and redeploy it with 'gco inference deploy'."
    );
}

#[tokio::test]
async fn deletion_fields_on_the_embedded_store() {
    let (api, _dir) = embedded();
    deletion_fields(&api).await;
    let stored = api.stored("web").await;
    assert!(
        stored.contains(r#""deletion_regions": ["us-east-1", "eu-west-1"]"#),
        "{stored}"
    );
}

#[tokio::test]
async fn deletion_fields_on_dynalite() {
    let dynalite = Dynalite::start();
    let api = on_dynalite(&dynalite).await;
    deletion_fields(&api).await;
    // As GCO's readers get them: a string and a list of strings.
    let item = dynalite
        .client()
        .await
        .get_item()
        .table_name("gco-inference-endpoints")
        .key("endpoint_name", AttributeValue::S("web".into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(matches!(&item["deletion_generation"], AttributeValue::S(s) if s.len() == 64));
    assert_eq!(
        item["deletion_regions"],
        AttributeValue::L(vec![
            AttributeValue::S("us-east-1".into()),
            AttributeValue::S("eu-west-1".into())
        ])
    );
    assert_eq!(item["desired_state"], AttributeValue::S("deleted".into()));
}

/// Region changes mint a fresh token each time; the last region may go.
async fn region_tokens(api: &Api) {
    let deployed = api.deploy(PLAIN).await;
    let token = |r: &Reply, region: &str| r.str(&format!("region_generations.{region}"));
    let removed = api
        .ok("DELETE", "/api/endpoints/web/regions/eu-west-1", None)
        .await;
    assert_ne!(token(&removed, "eu-west-1"), token(&deployed, "eu-west-1"));
    assert_eq!(token(&removed, "us-east-1"), token(&deployed, "us-east-1"));
    let added = api
        .ok(
            "POST",
            "/api/endpoints/web/regions",
            Some(r#"{"region": "eu-west-1"}"#),
        )
        .await;
    assert_ne!(token(&added, "eu-west-1"), token(&removed, "eu-west-1"));
    assert_eq!(
        added.get("cleanup_regions").to_json(),
        r#"["us-east-1", "eu-west-1"]"#
    );
    // Adding a target again writes nothing.
    let again = api
        .ok(
            "POST",
            "/api/endpoints/web/regions",
            Some(r#"{"region": "eu-west-1"}"#),
        )
        .await;
    assert_eq!(again.text, added.text);
    api.ok("DELETE", "/api/endpoints/web/regions/eu-west-1", None)
        .await;
    let last = api
        .ok("DELETE", "/api/endpoints/web/regions/us-east-1", None)
        .await;
    assert_eq!(last.get("target_regions").to_json(), "[]");
    assert_eq!(last.str("desired_state"), "deploying");
}

#[tokio::test]
async fn region_tokens_on_the_embedded_store() {
    let (api, _dir) = embedded();
    region_tokens(&api).await;
}

#[tokio::test]
async fn region_tokens_on_dynalite() {
    let dynalite = Dynalite::start();
    region_tokens(&on_dynalite(&dynalite).await).await;
}

/// Canary deploy, promote and rollback through their routes.
async fn canary_routes(api: &Api) {
    api.deploy(PLAIN).await;
    let started = api
        .ok(
            "POST",
            "/api/endpoints/web/canary",
            Some(r#"{"image": "img:2"}"#),
        )
        .await;
    // DynamoDB keeps no key order.
    assert_eq!(
        common::canonical(&started.get("spec.canary")),
        r#"{"image": "img:2", "replicas": 1, "weight": 10}"#
    );
    let rolled_back = api
        .ok("POST", "/api/endpoints/web/canary/rollback", Some(""))
        .await;
    assert_eq!(rolled_back.get("spec.canary"), Value::Null);
    assert_eq!(rolled_back.str("spec.image"), "img:1");
    api.ok(
        "POST",
        "/api/endpoints/web/canary",
        Some(r#"{"image": "img:3", "weight": 40, "replicas": 2}"#),
    )
    .await;
    // A stopped endpoint takes no canary; promoting redeploys it.
    api.ok("POST", "/api/endpoints/web/stop", Some("")).await;
    let r = api
        .post("/api/endpoints/web/canary", r#"{"image": "img:4"}"#)
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::CONFLICT,
            "desired_state".to_owned(),
            "Cannot canary an endpoint in 'stopped' state. Endpoint must be running or deploying."
                .to_owned()
        )
    );
    let promoted = api
        .ok("POST", "/api/endpoints/web/canary/promote", Some(""))
        .await;
    assert_eq!(promoted.str("spec.image"), "img:3");
    assert_eq!(promoted.get("spec.canary"), Value::Null);
    assert_eq!(promoted.str("desired_state"), "deploying");
    let r = api.post("/api/endpoints/web/canary/promote", "").await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::CONFLICT,
            "canary".to_owned(),
            "Endpoint 'web' has no active canary deployment".to_owned()
        )
    );
}

#[tokio::test]
async fn canary_routes_on_the_embedded_store() {
    let (api, _dir) = embedded();
    canary_routes(&api).await;
}

#[tokio::test]
async fn canary_routes_on_dynalite() {
    let dynalite = Dynalite::start();
    canary_routes(&on_dynalite(&dynalite).await).await;
}

#[tokio::test]
async fn canary_refusals() {
    let (api, _dir) = embedded();
    api.deploy(PLAIN).await;
    api.deploy(SPLIT).await;
    let cases = [
        (
            "web",
            r#"{"weight": 10}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "image",
            "Canary image must be a non-empty string",
        ),
        (
            "web",
            r#"{"image": "i", "weight": 100}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "weight",
            "Canary weight must be an integer between 1 and 99",
        ),
        (
            "web",
            r#"{"image": "i", "weight": null}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "weight",
            "Canary weight must be an integer between 1 and 99",
        ),
        (
            "web",
            r#"{"image": "i", "replicas": 0}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "replicas",
            "Canary replicas must be a positive integer",
        ),
        (
            "pd",
            r#"{"image": "i"}"#,
            StatusCode::CONFLICT,
            "mooncake",
            "Canary deployments are not supported for Mooncake endpoints",
        ),
        (
            "nobody",
            r#"{"image": "i"}"#,
            StatusCode::NOT_FOUND,
            "endpoint_name",
            "Endpoint 'nobody' not found",
        ),
    ];
    for (name, body, status, path, message) in cases {
        let r = api
            .post(&format!("/api/endpoints/{name}/canary"), body)
            .await;
        assert_eq!(
            r.refusal(),
            (status, path.to_owned(), message.to_owned()),
            "{name} {body}"
        );
    }
    let r = api.post("/api/endpoints/pd/canary/promote", "").await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::CONFLICT,
            "mooncake".to_owned(),
            "Canary promotion is not supported for Mooncake endpoints".to_owned()
        )
    );
    let r = api.post("/api/endpoints/pd/canary/rollback", "").await;
    assert_eq!(
        r.refusal().2,
        "Endpoint 'pd' has no active canary deployment",
        "rollback is allowed on Mooncake endpoints, and finds no canary"
    );
}

#[tokio::test]
async fn start_writes_running_and_a_spec_change_redeploys_a_stopped_endpoint() {
    let (api, _dir) = embedded();
    api.deploy(PLAIN).await;
    api.ok("POST", "/api/endpoints/web/stop", Some("")).await;
    let started = api.ok("POST", "/api/endpoints/web/start", Some("")).await;
    assert_eq!(started.str("desired_state"), "running");
    let r = api.post("/api/endpoints/web/start", "").await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::CONFLICT,
            "desired_state".to_owned(),
            "Endpoint 'web' is in 'running' state; only stopped endpoints can be started."
                .to_owned()
        )
    );
    api.ok("POST", "/api/endpoints/web/stop", Some("")).await;
    let scaled = api
        .ok(
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 3}"#),
        )
        .await;
    assert_eq!(
        scaled.str("desired_state"),
        "stopped",
        "scale keeps the state"
    );
    let updated = api
        .ok(
            "PUT",
            "/api/endpoints/web/image",
            Some(r#"{"image": "img:2"}"#),
        )
        .await;
    assert_eq!(updated.str("desired_state"), "deploying");
}

#[tokio::test]
async fn scale_refuses_an_autoscaled_endpoint_in_gco_words() {
    let (api, _dir) = embedded();
    api.deploy(r#"{"endpoint_name": "auto", "image": "img:1", "autoscaling": {"enabled": true, "min_replicas": 1, "max_replicas": 4}}"#)
        .await;
    let r = api
        .send(
            "PUT",
            "/api/endpoints/auto/replicas",
            Some(r#"{"replicas": 3}"#),
        )
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::CONFLICT,
            "replicas".to_owned(),
            "Endpoint 'auto' is autoscaled; update its min/max autoscaling bounds or disable autoscaling before using 'gco inference scale'."
                .to_owned()
        )
    );
}

#[tokio::test]
async fn every_new_route_is_in_the_openapi_document() {
    let (api, _dir) = embedded();
    let doc = api.send("GET", "/api/openapi.json", None).await;
    for path in [
        "/api/endpoints/{name}/canary",
        "/api/endpoints/{name}/canary/promote",
        "/api/endpoints/{name}/canary/rollback",
    ] {
        let route = doc.body.as_object().unwrap().get("paths").unwrap();
        assert!(
            route.as_object().unwrap().get(path).is_some(),
            "{path} is not documented"
        );
    }
    // The delete's conditions are documented as its query parameters.
    let delete = doc.get("paths./api/endpoints/{name}.delete.parameters");
    let Value::List(parameters) = delete else {
        panic!("no parameters on the delete: {}", delete.to_json());
    };
    let query: Vec<String> = parameters
        .iter()
        .filter_map(|p| {
            let p = p.as_object()?;
            (p.get("in")?.as_str()? == "query")
                .then(|| p.get("name")?.as_str().map(str::to_owned))?
        })
        .collect();
    assert_eq!(query, ["owner_label", "lifecycle_id"]);
}
