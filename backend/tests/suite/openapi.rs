//! The contract and the router are one list: every documented operation is
//! served and every served route is documented; each change's request
//! (`gco_api::change_request`, what the console sends) reaches the handler
//! that makes that same change.

use crate::common;

use std::collections::BTreeSet;

use crate::common::TempDir;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use gco_api::route::{self, NAME_PARAMETER, REGION_PARAMETER};
use gco_api::{Method, change_request};
use gco_spec::json::{Value, parse};
use gco_spec::{Change, Record, apply};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// Every method a route could be added with.
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

struct App {
    router: Router,
    _dir: TempDir,
    _dist: TempDir,
}

impl App {
    fn new() -> App {
        let dir = TempDir::new("openapi");
        let dist = TempDir::new("openapi-dist");
        std::fs::write(dist.path().join("index.html"), "<!doctype html>").unwrap();
        let service = common::service(common::embedded(&dir));
        // The routes without the layers, with the identity the auth layer
        // would put in.
        let router = gco_console::app::routes(std::sync::Arc::new(service), dist.path()).layer(
            axum::middleware::map_request(|mut request: Request<Body>| async move {
                request
                    .extensions_mut()
                    .insert(gco_console::auth::identity::Identity::local());
                request
            }),
        );
        App {
            router,
            _dir: dir,
            _dist: dist,
        }
    }

    async fn send(&self, method: &str, path: &str, body: Option<&str>) -> (StatusCode, String) {
        let mut request = Request::builder().method(method).uri(path);
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
            .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The (method, path template) pairs of a document.
fn operations(document: &Value) -> BTreeSet<(String, String)> {
    let paths = document.as_object().unwrap().get("paths").unwrap();
    paths
        .as_object()
        .unwrap()
        .str_entries()
        .flat_map(|(path, item)| {
            let path = path.to_string_lossy();
            item.as_object()
                .unwrap()
                .str_entries()
                .map(|(method, _)| method.to_string_lossy().to_uppercase())
                .filter(|method| METHODS.contains(&method.as_str()))
                .map(|method| (method, path.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A path of `template` with sample parameters.
fn sample(template: &str) -> String {
    template
        .replace(&format!("{{{NAME_PARAMETER}}}"), "web")
        .replace(&format!("{{{REGION_PARAMETER}}}"), "eu-west-1")
}

fn is_no_such_route(status: StatusCode, body: &str) -> bool {
    status == StatusCode::NOT_FOUND && body.contains("no such API route")
}

#[tokio::test]
async fn the_served_document_is_the_routers() {
    let app = App::new();
    let (status, served) = app.send("GET", route::OPENAPI, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served, gco_console::api::document());
    let document = parse(&served).unwrap();
    let info = document.as_object().unwrap().get("info").unwrap();
    assert_eq!(
        info.as_object()
            .unwrap()
            .get("title")
            .and_then(Value::as_str),
        Some("GCO console API")
    );
}

/// `gco_api::route::ROUTES`, which authorization reads, lists exactly the
/// documented operations, and the document carries each one's role and
/// whether it changes what is stored.
#[test]
fn the_route_table_is_the_documents() {
    let document = parse(gco_console::api::document()).unwrap();
    let listed: BTreeSet<(String, String)> = route::ROUTES
        .iter()
        .map(|r| (r.method.to_string(), r.path.to_owned()))
        .collect();
    assert_eq!(operations(&document), listed);
    let get = |v: &Value, key: &str| v.as_object().unwrap().get(key).unwrap().clone();
    let paths = get(&document, "paths");
    for r in &route::ROUTES {
        let operation = get(&get(&paths, r.path), &r.method.as_str().to_lowercase());
        let access = get(&operation, "x-access");
        let field = |key: &str| access.as_object().unwrap().get(key).cloned();
        assert_eq!(
            field("changes_state"),
            Some(Value::Bool(r.changes_state)),
            "{} {}",
            r.method,
            r.path
        );
        assert_eq!(
            field("role").as_ref().and_then(Value::as_str),
            r.needs.map(gco_api::Role::as_str),
            "{} {}",
            r.method,
            r.path
        );
    }
}

#[tokio::test]
async fn every_documented_operation_is_served_and_no_other_method() {
    let document = parse(gco_console::api::document()).unwrap();
    let documented = operations(&document);
    let templates: BTreeSet<&String> = documented.iter().map(|(_, path)| path).collect();
    assert!(documented.contains(&("GET".to_owned(), route::ENDPOINTS.to_owned())));
    let app = App::new();
    for template in templates {
        let path = sample(template);
        for method in METHODS {
            let body = matches!(method, "POST" | "PUT").then_some("{}");
            let (status, text) = app.send(method, &path, body).await;
            if documented.contains(&(method.to_owned(), template.clone())) {
                assert!(
                    status != StatusCode::METHOD_NOT_ALLOWED && !is_no_such_route(status, &text),
                    "{method} {template} is documented, not served: {status} {text}"
                );
            } else {
                assert_eq!(
                    status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {template} is served, not documented: {text}"
                );
            }
        }
    }
}

/// A route added to an axum router directly (not through `routes!`) would
/// be served without being documented: the only ones are the API's answer
/// to paths it does not have.
#[test]
fn routes_are_added_only_with_their_documentation() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut undocumented = Vec::new();
    let mut files = vec![src];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let adds_route = [".route(", ".route_service(", ".nest(", ".nest_service("]
                .iter()
                .any(|call| line.contains(call));
            // Prometheus' `/metrics` is no API route: it is served where
            // --metrics-addr says, in its own format.
            // The sign-in pages of `--auth oidc` and the sign-out of
            // `--auth alb` are browser pages (HTML and redirects), not API
            // routes.
            let sign_in_page =
                path.ends_with("auth/oidc.rs") || path.ends_with("auth/alb_sign_out.rs");
            if adds_route
                && !sign_in_page
                && !line.contains("api::not_found")
                && !line.contains("(METRICS,")
            {
                undocumented.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert_eq!(undocumented, Vec::<String>::new());
}

/// The record `change` makes, as `gco_spec::apply` makes it, without what
/// the server picks itself (the time, a new region's generation).
fn comparable(record: &Record) -> String {
    let mut value = record.to_value();
    let o = value.as_object_mut().unwrap();
    o.remove("updated_at");
    o.remove("region_generations");
    // Minted by the server, as region tokens are.
    o.remove("deletion_generation");
    value.to_json()
}

#[tokio::test]
async fn each_changes_request_makes_that_change() {
    let app = App::new();
    for deploy in [
        r#"{"endpoint_name": "plain", "image": "img:1", "labels": {"team": "a"}}"#,
        r#"{"endpoint_name": "pd", "mooncake_mode": "both", "prefill_replicas": 2}"#,
    ] {
        let (status, text) = app.send("POST", route::ENDPOINTS, Some(deploy)).await;
        assert_eq!(status, StatusCode::CREATED, "{text}");
    }
    let v = |text: &str| parse(text).unwrap();
    let changes = [
        ("plain", Change::Scale { replicas: v("3") }),
        (
            "pd",
            Change::SetTopology {
                prefill: v("3"),
                decode: v("5"),
            },
        ),
        (
            "pd",
            Change::ConfigureStore {
                store: v(r#"{"enabled": true, "global_segment_size": "1024"}"#),
            },
        ),
        (
            "pd",
            Change::UpdateImage {
                image: v("\"img:2\""),
                with_proxy: Value::Bool(true),
            },
        ),
        (
            "pd",
            Change::AddRegion {
                region: v("\"ap-south-1\""),
            },
        ),
        (
            "pd",
            Change::RemoveRegion {
                region: v("\"eu-west-1\""),
            },
        ),
        ("pd", Change::Stop),
        ("pd", Change::Start),
        ("pd", Change::DELETE),
        (
            "plain",
            Change::CanaryDeploy {
                image: v("\"img:2\""),
                weight: Some(v("20")),
                replicas: None,
            },
        ),
        ("plain", Change::PromoteCanary),
        (
            "plain",
            Change::CanaryDeploy {
                image: v("\"img:3\""),
                weight: None,
                replicas: Some(v("2")),
            },
        ),
        ("plain", Change::RollbackCanary),
        // Conditioned on its lifecycle: filled in from the record read.
        (
            "plain",
            Change::Delete {
                expected_owner_label: Some(("team".into(), "a".into())),
                expected_lifecycle_id: None,
            },
        ),
    ];
    let mut made = BTreeSet::new();
    for (name, change) in changes {
        let (_, text) = app
            .send(
                "GET",
                &route::fill(route::ENDPOINT, &[(NAME_PARAMETER, name)]),
                None,
            )
            .await;
        let before = Record::from_value(&v(&text)).unwrap();
        let change = match change {
            Change::Delete {
                expected_owner_label: Some(label),
                ..
            } => Change::Delete {
                expected_owner_label: Some(label),
                expected_lifecycle_id: before.lifecycle_id.clone(),
            },
            other => other,
        };
        let expected = apply(&before, &change, &before.updated_at, &mut || "0".repeat(64)).unwrap();
        let request = change_request(name, &change);
        let body = request.body.as_ref().map(Value::to_json);
        let (status, text) = app
            .send(request.method.as_str(), &request.path, body.as_deref())
            .await;
        assert_eq!(status, StatusCode::OK, "{change:?}: {text}");
        let after = Record::from_value(&v(&text)).unwrap();
        assert_eq!(comparable(&after), comparable(&expected), "{change:?}");
        assert_ne!(
            comparable(&after),
            comparable(&before),
            "{change:?} changed nothing"
        );
        let route = request.path.split('?').next().unwrap_or_default();
        made.insert((request.method, route.replace(name, "{name}")));
    }
    // Every change route of the document was taken.
    let document = parse(gco_console::api::document()).unwrap();
    let change_routes: BTreeSet<(String, String)> = made
        .iter()
        .map(|(method, path)| (method.to_string(), path.replace("eu-west-1", "{region}")))
        .collect();
    let documented = operations(&document);
    assert!(change_routes.is_subset(&documented), "{change_routes:?}");
    assert_eq!(change_routes.len(), 12);
    assert!(made.iter().all(|(m, _)| *m != Method::Get));
}

/// The document is a committed snapshot (`api/openapi.json`), as crates.io
/// keeps its own: a change to the contract shows in review as a change to
/// that file. `UPDATE_EXPECT=1` writes it anew.
#[tokio::test]
async fn the_served_document_is_the_committed_snapshot() {
    let (status, served) = App::new().send("GET", route::OPENAPI, None).await;
    assert_eq!(status, StatusCode::OK);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../api/openapi.json");
    expect_test::expect_file![path].assert_eq(&format!("{served}\n"));
}

/// The record's schema is the core's type: every attribute the record
/// reads, and the one the console's deploy adds, and no other.
#[test]
fn the_record_schema_names_every_attribute() {
    let document = parse(gco_console::api::document()).unwrap();
    let properties = document
        .as_object()
        .and_then(|d| {
            d.get("components")?
                .as_object()?
                .get("schemas")?
                .as_object()
        })
        .and_then(|s| s.get("Record")?.as_object()?.get("properties")?.as_object())
        .expect("the Record schema's properties");
    let documented: Vec<String> = properties
        .iter()
        .map(|(key, _)| key.as_str().unwrap_or_default().to_owned())
        .collect();
    let mut attributes: Vec<String> = Record::ATTRIBUTES.map(str::to_owned).into();
    attributes.push(gco_spec::record::CREATED_BY.to_owned());
    assert_eq!(documented, attributes);
}
