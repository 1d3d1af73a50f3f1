//! The history of changes (issue 32), through the whole API on both
//! stores: the embedded one, and DynamoDB with transactions (moto's
//! server): who made each change, when, which, with which request, and the
//! record's content before and after; changes made outside the console,
//! found on read; revert with `If-Match`; a purged endpoint's history and
//! an admin's redeploy from it; the roles each change needs.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::app::{Api, Reply};
use crate::common::monitor::{Monitor, TABLE};
use crate::common::{Moto, TempDir, canonical};
use aws_sdk_dynamodb::types::AttributeValue as A;
use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use gco_api::Role;
use gco_console::auth::identity::Identity;
use gco_console::store::{EmbeddedStore, Span, Store};
use gco_spec::json::{Object, Value, parse};
use redb::ReadableTable;

/// Where the records are: an embedded store's directory, or moto.
enum Backend {
    Embedded(TempDir),
    Moto(Moto),
}

/// The API in process over one of the stores, every request made as the
/// identity its `x-test-identity` header names (`name=role`), else as
/// `local` with every role (what `--auth none` gives).
pub(crate) struct Env {
    pub(crate) api: Api,
    pub(crate) store: Arc<dyn Store>,
    backend: Backend,
}

/// What the auth layer does, with the identity the test names.
async fn identify(mut request: Request<Body>, next: Next) -> Response {
    let identity = match request
        .headers()
        .get("x-test-identity")
        .and_then(|v| v.to_str().ok())
    {
        Some(text) => {
            let (name, role) = text.split_once('=').unwrap();
            Identity {
                name: name.into(),
                roles: vec![Role::parse(role).unwrap()],
            }
        }
        None => Identity::local(),
    };
    request.extensions_mut().insert(identity);
    match gco_console::auth::require_role(&request) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused.into_response(),
    }
}

fn app(store: Arc<dyn Store>) -> Router {
    let service = common::service(store);
    gco_console::app::routes(Arc::new(service), Path::new("/nonexistent"))
        .layer(axum::middleware::from_fn(identify))
}

impl Env {
    pub(crate) async fn embedded() -> Env {
        Env::over(Backend::Embedded(TempDir::new("history"))).await
    }

    pub(crate) async fn moto() -> Env {
        Env::over(Backend::Moto(Moto::start())).await
    }

    async fn over(backend: Backend) -> Env {
        let store: Arc<dyn Store> = match &backend {
            Backend::Embedded(dir) => Arc::new(EmbeddedStore::open(dir.path()).unwrap()),
            Backend::Moto(moto) => Arc::new(moto.store().await),
        };
        Env {
            api: Api::around(app(Arc::clone(&store)), Arc::clone(&store)),
            store,
            backend,
        }
    }

    /// Changes the stored record `name` past the console, as GCO's CLI or
    /// another tool would: `edit` gets the item as JSON. The embedded
    /// store is closed for it (redb locks its file) and opened again.
    async fn write_outside(self, name: &str, edit: impl FnOnce(&mut Object)) -> Env {
        match self.backend {
            Backend::Embedded(dir) => {
                drop(self.api);
                drop(self.store);
                {
                    let table = redb::TableDefinition::<&str, &str>::new("endpoints");
                    let db = redb::Database::create(dir.path().join("endpoints.redb")).unwrap();
                    let txn = db.begin_write().unwrap();
                    {
                        let mut t = txn.open_table(table).unwrap();
                        let text = t.get(name).unwrap().map(|v| v.value().to_owned());
                        match text {
                            Some(text) => {
                                let mut item = parse(&text).unwrap();
                                edit(item.as_object_mut().unwrap());
                                if item.as_object().unwrap().is_empty() {
                                    t.remove(name).unwrap();
                                } else {
                                    t.insert(name, item.to_json().as_str()).unwrap();
                                }
                            }
                            None => panic!("no {name} to change"),
                        }
                    }
                    txn.commit().unwrap();
                }
                Env::over(Backend::Embedded(dir)).await
            }
            Backend::Moto(ref moto) => {
                let client = moto.client();
                let item = client
                    .get_item()
                    .table_name(TABLE)
                    .key("endpoint_name", A::S(name.into()))
                    .send()
                    .await
                    .unwrap()
                    .item
                    .unwrap();
                let mut object = json_of_item(&item);
                edit(&mut object);
                if object.is_empty() {
                    // What GCO's monitors do once a deletion completes.
                    client
                        .delete_item()
                        .table_name(TABLE)
                        .key("endpoint_name", A::S(name.into()))
                        .send()
                        .await
                        .unwrap();
                } else {
                    client
                        .put_item()
                        .table_name(TABLE)
                        .set_item(Some(item_of_json(&object)))
                        .send()
                        .await
                        .unwrap();
                }
                self
            }
        }
    }

    /// A request made as `who` (`name=role`, or "" for `local`), with a
    /// request id of its own, which it answers with.
    pub(crate) async fn call(
        &self,
        who: &str,
        method: &str,
        path: &str,
        body: Option<&str>,
        if_match: Option<&str>,
    ) -> (Reply, String) {
        static N: AtomicU64 = AtomicU64::new(0);
        let id = format!("req-{}", N.fetch_add(1, Ordering::Relaxed));
        let mut headers = vec![("x-request-id", id.as_str())];
        if !who.is_empty() {
            headers.push(("x-test-identity", who));
        }
        if let Some(tag) = if_match {
            headers.push(("if-match", tag));
        }
        (self.api.send(method, path, body, &headers).await, id)
    }

    async fn history(&self, name: &str) -> Reply {
        let r = self
            .api
            .get(&format!("/api/endpoints/{name}/history"))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r
    }

    async fn record(&self, name: &str) -> Reply {
        let r = self.api.get(&format!("/api/endpoints/{name}")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r
    }

    /// Every stored entry of `name` (no GET writes any).
    async fn stored_entries(&self, name: &str) -> usize {
        self.store
            .history(name, Span::Older(None), 10_000)
            .await
            .unwrap()
            .len()
    }
}

fn json_of_item(item: &std::collections::HashMap<String, A>) -> Object {
    fn value(a: &A) -> Value {
        match a {
            A::S(s) => Value::str(s),
            A::N(n) => parse(n).unwrap(),
            A::Bool(b) => Value::Bool(*b),
            A::Null(_) => Value::Null,
            A::L(items) => Value::List(items.iter().map(value).collect()),
            A::M(m) => Value::Object(json_of_item(m)),
            other => panic!("{other:?}"),
        }
    }
    let mut keys: Vec<&String> = item.keys().collect();
    keys.sort();
    let mut o = Object::new();
    for k in keys {
        o.insert(k, value(&item[k]));
    }
    o
}

fn item_of_json(o: &Object) -> std::collections::HashMap<String, A> {
    fn attr(v: &Value) -> A {
        match v {
            Value::Str(s) => A::S(s.to_string_lossy()),
            Value::Int(i) => A::N(i.to_string()),
            Value::Bool(b) => A::Bool(*b),
            Value::Null => A::Null(true),
            Value::List(items) => A::L(items.iter().map(attr).collect()),
            Value::Object(m) => A::M(item_of_json(m)),
            other => panic!("{other:?}"),
        }
    }
    o.str_entries()
        .map(|(k, v)| (k.to_string_lossy(), attr(v)))
        .collect()
}

/// A record's content, as entries hold it (canonical JSON).
fn content(record: &Value) -> String {
    let mut v = record.clone();
    let o = v.as_object_mut().unwrap();
    o.remove("region_status");
    o.remove("updated_at");
    canonical(&v)
}

fn items(history: &Reply) -> Vec<Value> {
    match history.get("items") {
        Value::List(items) => items,
        other => panic!("no items: {other:?}"),
    }
}

fn field(v: &Value, path: &str) -> Value {
    common::at(v.clone(), path)
}

fn text(v: &Value, path: &str) -> String {
    field(v, path).as_str().unwrap_or_default().to_owned()
}

/// (operation, who) of each item, newest first.
fn summary(history: &Reply) -> Vec<(String, String)> {
    items(history)
        .iter()
        .map(|i| (text(i, "operation"), text(i, "who")))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

const PLAIN: &str =
    r#"{"endpoint_name": "web", "image": "img:1", "target_regions": ["us-east-1"]}"#;
const SPLIT: &str = r#"{"endpoint_name": "pd", "mooncake_mode": "disaggregated", "prefill_replicas": 2, "decode_replicas": 2, "target_regions": ["us-east-1"]}"#;

// ---------------------------------------------------------------------------

/// Each change writes one entry: who (the verified identity), when, the
/// operation, the request's id, the content before and after; deploy
/// fills `created_by`; pages follow `next`; each change needs its role.
async fn every_change_is_recorded(env: Env) {
    let config = env.api.get("/api/config").await;
    assert_eq!(config.get("history"), Value::Bool(true));

    let (deployed, deploy_id) = env
        .call("ada=operator", "POST", "/api/endpoints", Some(PLAIN), None)
        .await;
    assert_eq!(deployed.status, StatusCode::CREATED, "{}", deployed.text);
    assert_eq!(deployed.str("created_by"), "ada");

    let (scaled, scale_id) = env
        .call(
            "bob=operator",
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 3}"#),
            None,
        )
        .await;
    assert_eq!(scaled.status, StatusCode::OK, "{}", scaled.text);
    // A change that changes nothing writes nothing, and no entry.
    let (again, _) = env
        .call(
            "bob=operator",
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 3}"#),
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::OK);

    // Roles: a viewer reads, an operator changes, only an admin deletes.
    let (refused, _) = env
        .call(
            "val=viewer",
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 5}"#),
            None,
        )
        .await;
    assert_eq!(
        refused.refusal().0,
        StatusCode::FORBIDDEN,
        "{}",
        refused.text
    );
    assert_eq!(
        refused.str("error"),
        "scaling an endpoint needs the operator role; val has the viewer role"
    );
    let (refused, _) = env
        .call("bob=operator", "DELETE", "/api/endpoints/web", None, None)
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.str("error"),
        "deleting an endpoint needs the admin role; bob has the operator role"
    );
    let (refused, _) = env
        .call("val=viewer", "POST", "/api/endpoints", Some(SPLIT), None)
        .await;
    assert_eq!(
        refused.str("error"),
        "deploying an endpoint needs the operator role; val has the viewer role"
    );
    let (read, _) = env
        .call(
            "val=viewer",
            "GET",
            "/api/endpoints/web/history",
            None,
            None,
        )
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);

    let history = env.history("web").await;
    assert_eq!(
        summary(&history),
        pairs(&[("scale", "bob"), ("deploy", "ada")])
    );
    assert_eq!(history.get("next"), Value::Null);
    let entries = items(&history);
    let (scale, deploy) = (&entries[0], &entries[1]);
    assert_eq!(text(scale, "request_id"), scale_id);
    assert_eq!(text(deploy, "request_id"), deploy_id);
    assert_eq!(field(deploy, "before"), Value::Null);
    assert_eq!(canonical(&field(deploy, "after")), content(&deployed.body));
    assert_eq!(canonical(&field(scale, "before")), content(&deployed.body));
    assert_eq!(canonical(&field(scale, "after")), content(&scaled.body));
    assert_eq!(text(scale, "at"), scaled.str("updated_at"));
    assert!(text(scale, "id") > text(deploy, "id"));
    assert_eq!(field(scale, "after.spec.replicas"), Value::int(3));
    assert_eq!(field(scale, "after.region_status"), Value::Null);

    // One entry a page, the next page after the cursor.
    let first = env.api.get("/api/endpoints/web/history?limit=1").await;
    assert_eq!(summary(&first), pairs(&[("scale", "bob")]));
    let next = first.str("next");
    assert_eq!(next, text(scale, "id"));
    let second = env
        .api
        .get(&format!("/api/endpoints/web/history?limit=1&after={next}"))
        .await;
    assert_eq!(summary(&second), pairs(&[("deploy", "ada")]));
    assert_eq!(second.get("next"), Value::Null);
    for bad in ["limit=0", "limit=x", "after=a%20b", "limit=1&limit=2"] {
        let r = env
            .api
            .get(&format!("/api/endpoints/web/history?{bad}"))
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.text);
    }
    let none = env.api.get("/api/endpoints/nobody/history").await;
    assert_eq!(none.status, StatusCode::NOT_FOUND);

    // An admin deletes: recorded, as every change.
    let (deleted, _) = env
        .call("root=admin", "DELETE", "/api/endpoints/web", None, None)
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text);
    assert_eq!(
        summary(&env.history("web").await),
        pairs(&[("delete", "root"), ("scale", "bob"), ("deploy", "ada")])
    );
    assert_eq!(env.stored_entries("web").await, 3, "GETs write nothing");
}

#[tokio::test]
async fn every_change_is_recorded_embedded() {
    every_change_is_recorded(Env::embedded().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_change_is_recorded_dynamodb() {
    every_change_is_recorded(Env::moto().await).await;
}

/// GCO's monitors write status only: no entry, and no change found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_writes_make_no_entry() {
    let env = Env::moto().await;
    let (r, _) = env
        .call("", "POST", "/api/endpoints", Some(PLAIN), None)
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    let Backend::Moto(moto) = &env.backend else {
        unreachable!()
    };
    let monitor = Monitor::on(moto.client(), "web");
    for pass in 0..3 {
        assert!(monitor.pass(pass).await.is_some());
    }
    let record = env.record("web").await;
    assert!(!record.get("region_status").as_object().unwrap().is_empty());
    // And, every region running, the monitors promote it (GCO_FACTS_NEWEST
    // section 3): no change anyone made either.
    moto.client()
        .update_item()
        .table_name(TABLE)
        .key("endpoint_name", A::S("web".into()))
        .update_expression("SET desired_state = :running, updated_at = :u")
        .expression_attribute_values(":running", A::S("running".into()))
        .expression_attribute_values(":u", A::S("2099-01-01T00:00:00.000001+00:00".into()))
        .send()
        .await
        .unwrap();
    assert_eq!(env.record("web").await.str("desired_state"), "running");
    assert_eq!(
        summary(&env.history("web").await),
        pairs(&[("deploy", "local")])
    );
    let (r, _) = env
        .call(
            "",
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 2}"#),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        summary(&env.history("web").await),
        pairs(&[("scale", "local"), ("deploy", "local")])
    );
}

/// A change made outside the console shows where it happened, with its
/// diff: after the newest entry (the record differs from what it left),
/// and between two entries once the console changed the record again.
async fn outside_changes_are_found(env: Env) {
    let (deployed, _) = env
        .call("", "POST", "/api/endpoints", Some(PLAIN), None)
        .await;
    assert_eq!(deployed.status, StatusCode::CREATED);
    let (scaled, _) = env
        .call(
            "",
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 2}"#),
            None,
        )
        .await;
    assert_eq!(scaled.status, StatusCode::OK);
    let scale_at = scaled.str("updated_at");
    // GCO's CLI updates the image: `spec` and `updated_at`.
    let cli_at = "2099-01-01T00:00:00.000001+00:00";
    let env = env
        .write_outside("web", |item| {
            let mut spec = item.get("spec").unwrap().as_object().unwrap().clone();
            spec.insert("image", "img:cli");
            item.insert("spec", spec);
            item.insert("desired_state", "deploying");
            item.insert("updated_at", cli_at);
        })
        .await;
    let now = env.record("web").await;
    let history = env.history("web").await;
    assert_eq!(
        summary(&history),
        pairs(&[("external", ""), ("scale", "local"), ("deploy", "local")])
    );
    let external = &items(&history)[0];
    assert_eq!(field(external, "who"), Value::Null);
    assert_eq!(text(external, "since"), scale_at);
    assert_eq!(text(external, "at"), cli_at);
    assert_eq!(canonical(&field(external, "before")), content(&scaled.body));
    assert_eq!(canonical(&field(external, "after")), content(&now.body));
    assert_eq!(field(external, "after.spec.image"), Value::str("img:cli"));
    assert_eq!(env.stored_entries("web").await, 3, "kept as first found");
    assert_eq!(
        items(&env.history("web").await)[0],
        items(&history)[0],
        "read again, the same"
    );

    // The console changes it again: the outside change is found between.
    let (stopped, _) = env
        .call("", "POST", "/api/endpoints/web/stop", None, None)
        .await;
    assert_eq!(stopped.status, StatusCode::OK, "{}", stopped.text);
    let history = env.history("web").await;
    assert_eq!(
        summary(&history),
        pairs(&[
            ("stop", "local"),
            ("external", ""),
            ("scale", "local"),
            ("deploy", "local")
        ])
    );
    // Its window is the one first shown: it never widens to the stop.
    let external = &items(&history)[1];
    assert_eq!(text(external, "since"), scale_at);
    assert_eq!(text(external, "at"), cli_at);
    assert_eq!(field(external, "after.spec.image"), Value::str("img:cli"));
    let ids: Vec<String> = items(&history).iter().map(|i| text(i, "id")).collect();
    let mut sorted = ids.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "newest first, by id");

    // Kept, the outside change pages as any entry: once.
    let first = env.api.get("/api/endpoints/web/history?limit=1").await;
    assert_eq!(summary(&first), pairs(&[("stop", "local")]));
    let second = env
        .api
        .get(&format!(
            "/api/endpoints/web/history?limit=1&after={}",
            first.str("next")
        ))
        .await;
    assert_eq!(summary(&second), pairs(&[("external", "")]));
    let third = env
        .api
        .get(&format!(
            "/api/endpoints/web/history?limit=1&after={}",
            second.str("next")
        ))
        .await;
    assert_eq!(summary(&third), pairs(&[("scale", "local")]));

    // Revert to what the outside change left, as to any entry.
    let tag = env.record("web").await.headers["etag"]
        .to_str()
        .unwrap()
        .to_owned();
    let body = format!(r#"{{"to": "{}"}}"#, text(external, "id"));
    let (reverted, _) = env
        .call(
            "",
            "POST",
            "/api/endpoints/web/revert",
            Some(&body),
            Some(&tag),
        )
        .await;
    assert_eq!(reverted.status, StatusCode::OK, "{}", reverted.text);
    assert_eq!(reverted.str("desired_state"), "deploying");
    assert_eq!(reverted.get("spec.image"), Value::str("img:cli"));
}

#[tokio::test]
async fn outside_changes_are_found_embedded() {
    outside_changes_are_found(Env::embedded().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_changes_are_found_dynamodb() {
    outside_changes_are_found(Env::moto().await).await;
}

/// A revert puts the spec, state and regions back as an entry left them,
/// through the usual `If-Match`; a region that leaves gets a fresh token
/// and stays in the cleanup history.
async fn revert_with_if_match(env: Env) {
    let (deployed, _) = env
        .call("", "POST", "/api/endpoints", Some(SPLIT), None)
        .await;
    assert_eq!(deployed.status, StatusCode::CREATED, "{}", deployed.text);
    let stale = deployed.headers["etag"].to_str().unwrap().to_owned();
    let (r, _) = env
        .call(
            "",
            "PUT",
            "/api/endpoints/pd/topology",
            Some(r#"{"prefill": 3, "decode": 5}"#),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let (added, _) = env
        .call(
            "",
            "POST",
            "/api/endpoints/pd/regions",
            Some(r#"{"region": "eu-west-1"}"#),
            None,
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
    let current = added.headers["etag"].to_str().unwrap().to_owned();
    let history = env.history("pd").await;
    let deploy_id = text(items(&history).last().unwrap(), "id");
    let body = format!(r#"{{"to": "{deploy_id}"}}"#);

    // An operator's; with a version no longer current, nothing is written.
    let (r, _) = env
        .call(
            "val=viewer",
            "POST",
            "/api/endpoints/pd/revert",
            Some(&body),
            Some(&current),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        r.str("error"),
        "reverting an endpoint needs the operator role; val has the viewer role"
    );
    let (r, _) = env
        .call(
            "",
            "POST",
            "/api/endpoints/pd/revert",
            Some(&body),
            Some(&stale),
        )
        .await;
    assert_eq!(r.status, StatusCode::PRECONDITION_FAILED, "{}", r.text);
    for bad in [r#"{"to": "nope"}"#, r#"{"to": "0~external"}"#] {
        let (r, _) = env
            .call("", "POST", "/api/endpoints/pd/revert", Some(bad), None)
            .await;
        assert_eq!(r.refusal().0, StatusCode::NOT_FOUND, "{}", r.text);
        assert_eq!(r.first_error().0, "to");
    }
    let (r, _) = env
        .call("", "POST", "/api/endpoints/pd/revert", Some("{}"), None)
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    let (reverted, revert_id) = env
        .call(
            "cy=operator",
            "POST",
            "/api/endpoints/pd/revert",
            Some(&body),
            Some(&current),
        )
        .await;
    assert_eq!(reverted.status, StatusCode::OK, "{}", reverted.text);
    assert_eq!(
        canonical(&reverted.get("spec.mooncake.topology")),
        r#"{"decode": 2, "prefill": 2}"#
    );
    assert_eq!(reverted.get("target_regions").to_json(), r#"["us-east-1"]"#);
    assert_eq!(
        reverted.get("cleanup_regions").to_json(),
        r#"["us-east-1", "eu-west-1"]"#
    );
    assert_ne!(
        reverted.get("region_generations.eu-west-1"),
        added.get("region_generations.eu-west-1"),
        "the region that left has a fresh token"
    );
    assert_eq!(
        reverted.get("region_generations.us-east-1"),
        deployed.get("region_generations.us-east-1")
    );
    assert_eq!(reverted.get("lifecycle_id"), deployed.get("lifecycle_id"));
    let history = env.history("pd").await;
    assert_eq!(summary(&history)[0], ("revert".to_owned(), "cy".to_owned()));
    assert_eq!(text(&items(&history)[0], "request_id"), revert_id);
    assert_eq!(
        canonical(&field(&items(&history)[0], "after")),
        content(&reverted.body)
    );
}

#[tokio::test]
async fn revert_with_if_match_embedded() {
    revert_with_if_match(Env::embedded().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revert_with_if_match_dynamodb() {
    revert_with_if_match(Env::moto().await).await;
}

/// A deleted endpoint is refused a revert until GCO's monitors purge it;
/// then its history stays readable, and an admin (only) deploys it again
/// from an entry, as a new lifecycle.
async fn purged_endpoints_keep_their_history(env: Env) {
    let (deployed, _) = env
        .call("ada=operator", "POST", "/api/endpoints", Some(PLAIN), None)
        .await;
    assert_eq!(deployed.status, StatusCode::CREATED);
    let (scaled, _) = env
        .call(
            "",
            "PUT",
            "/api/endpoints/web/replicas",
            Some(r#"{"replicas": 4}"#),
            None,
        )
        .await;
    assert_eq!(scaled.status, StatusCode::OK);
    let (deleted, _) = env
        .call("", "DELETE", "/api/endpoints/web", None, None)
        .await;
    assert_eq!(deleted.status, StatusCode::OK);
    let scale_id = text(&items(&env.history("web").await)[1], "id");
    let body = format!(r#"{{"to": "{scale_id}"}}"#);
    let (r, _) = env
        .call("", "POST", "/api/endpoints/web/revert", Some(&body), None)
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::CONFLICT,
            "desired_state".into(),
            "Endpoint 'web' is deleted and cannot be reverted; redeploy it after deletion completes."
                .into()
        )
    );

    // The monitors purge it.
    let env = env.write_outside("web", |item| *item = Object::new()).await;
    let gone = env.api.get("/api/endpoints/web").await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let history = env.history("web").await;
    assert_eq!(
        summary(&history),
        pairs(&[("delete", "local"), ("scale", "local"), ("deploy", "ada")]),
        "a purge after a delete is no outside change"
    );

    let (r, _) = env
        .call(
            "bob=operator",
            "POST",
            "/api/endpoints/web/revert",
            Some(&body),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        r.str("error"),
        "deploying a deleted endpoint again from its history needs the admin role; bob has the operator role"
    );
    let (again, _) = env
        .call(
            "root=admin",
            "POST",
            "/api/endpoints/web/revert",
            Some(&body),
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.text);
    assert_eq!(again.str("created_by"), "root");
    assert_eq!(again.get("spec.replicas"), Value::int(4));
    assert_eq!(again.str("desired_state"), "deploying");
    assert_ne!(again.get("lifecycle_id"), deployed.get("lifecycle_id"));
    assert_eq!(again.get("deletion_generation"), Value::Null);
    let history = env.history("web").await;
    assert_eq!(
        summary(&history),
        pairs(&[
            ("revert", "root"),
            ("delete", "local"),
            ("scale", "local"),
            ("deploy", "ada")
        ])
    );
    assert_eq!(field(&items(&history)[0], "before"), Value::Null);
    assert_eq!(env.record("web").await.text, again.text);
}

#[tokio::test]
async fn purged_endpoints_keep_their_history_embedded() {
    purged_endpoints_keep_their_history(Env::embedded().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purged_endpoints_keep_their_history_dynamodb() {
    purged_endpoints_keep_their_history(Env::moto().await).await;
}

/// A record another program created shows as an outside change with no
/// `since`; its first console change finds it as it was.
#[tokio::test]
async fn a_record_created_outside_starts_its_history_outside() {
    let env = Env::embedded().await;
    let (r, _) = env
        .call("", "POST", "/api/endpoints", Some(PLAIN), None)
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    // Made before history was kept: a console with --history-table off.
    let dir = TempDir::new("history-off");
    let off: Arc<dyn Store> = Arc::new(EmbeddedStore::open_with(dir.path(), false).unwrap());
    let api = Api::around(app(Arc::clone(&off)), Arc::clone(&off));
    assert_eq!(
        api.get("/api/config").await.get("history"),
        Value::Bool(false)
    );
    let r = api.post("/api/endpoints", PLAIN).await;
    assert_eq!(r.status, StatusCode::CREATED);
    let r = api.get("/api/endpoints/web/history").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.str("error").contains("--history-table off"), "{}", r.text);
    drop(api);
    drop(off);
    let env = Env::over(Backend::Embedded(dir)).await;
    let history = env.history("web").await;
    assert_eq!(summary(&history), pairs(&[("external", "")]));
    let only = &items(&history)[0];
    assert_eq!(text(only, "id"), "0~external");
    assert_eq!(field(only, "since"), Value::Null);
    assert_eq!(field(only, "before"), Value::Null);
    let (r, _) = env
        .call("", "POST", "/api/endpoints/web/stop", None, None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        summary(&env.history("web").await),
        pairs(&[("stop", "local"), ("external", "")])
    );
}

// ---------------------------------------------------------------------------
// Concurrent changes: one entry each

const IDENTITIES: [&str; 4] = ["ada=operator", "bob=operator", "cy=admin", "dee=operator"];
const REGION_POOL: [&str; 4] = ["us-east-1", "eu-west-1", "ap-south-1", "us-west-2"];

/// A change of the storm, and the request that makes it.
#[derive(Debug, Clone, Copy)]
enum Op {
    Topology(u64, u64),
    Store(u64),
    Image(u64),
    AddRegion(&'static str),
    RemoveRegion(&'static str),
    Stop,
    Start,
    /// Refused on a mooncake endpoint: no entry.
    Scale(u64),
    /// Back to the deployed record.
    Revert,
}

impl Op {
    /// A deterministic mix from a seed (xorshift64), so a failure replays.
    fn generate(count: usize, seed: u64) -> Vec<Op> {
        let mut next = crate::common::xorshift(seed);
        (0..count)
            .map(|_| {
                let (kind, a, b) = (next() % 20, next(), next());
                let region = REGION_POOL[a as usize % REGION_POOL.len()];
                match kind {
                    0..3 => Op::Topology(1 + a % 8, 1 + b % 8),
                    3..5 => Op::Store(1 + a % 16),
                    5..8 => Op::Image(a % 1000),
                    8..11 => Op::AddRegion(region),
                    11..13 => Op::RemoveRegion(region),
                    13 => Op::Stop,
                    14..17 => Op::Start,
                    17 => Op::Scale(a % 5),
                    _ => Op::Revert,
                }
            })
            .collect()
    }

    fn operation(self) -> &'static str {
        match self {
            Op::Topology(..) => "set-topology",
            Op::Store(_) => "configure-store",
            Op::Image(_) => "update-image",
            Op::AddRegion(_) => "add-region",
            Op::RemoveRegion(_) => "remove-region",
            Op::Stop => "stop",
            Op::Start => "start",
            Op::Scale(_) => "scale",
            Op::Revert => "revert",
        }
    }

    fn request(self, name: &str, deploy_id: &str) -> (&'static str, String, String) {
        let at = |route: &str| format!("/api/endpoints/{name}/{route}");
        match self {
            Op::Topology(p, d) => (
                "PUT",
                at("topology"),
                format!(r#"{{"prefill": {p}, "decode": {d}}}"#),
            ),
            Op::Store(gib) => (
                "PUT",
                at("store"),
                format!(
                    r#"{{"enabled": true, "global_segment_size": "{}"}}"#,
                    gib << 30
                ),
            ),
            Op::Image(n) => ("PUT", at("image"), format!(r#"{{"image": "img:{n}"}}"#)),
            Op::AddRegion(r) => ("POST", at("regions"), format!(r#"{{"region": "{r}"}}"#)),
            Op::RemoveRegion(r) => ("DELETE", at(&format!("regions/{r}")), String::new()),
            Op::Stop => ("POST", at("stop"), String::new()),
            Op::Start => ("POST", at("start"), String::new()),
            Op::Scale(n) => ("PUT", at("replicas"), format!(r#"{{"replicas": {n}}}"#)),
            Op::Revert => ("POST", at("revert"), format!(r#"{{"to": "{deploy_id}"}}"#)),
        }
    }
}

/// What one request got.
struct Sent {
    op: Op,
    name: String,
    who: &'static str,
    id: String,
    status: StatusCode,
    record: Value,
}

/// `count` changes over `endpoints` endpoints, sent by `clients` at once
/// as the four identities in turn; then each endpoint's stored history,
/// oldest first, is the deploy and exactly one entry per change written:
/// - each entry names the request that wrote it (its id, identity and
///   operation), which was answered with the record the entry left;
/// - each entry's `before` is what the entry before it left (no write
///   without its entry), and the last one left the record as it is;
/// - every acknowledged answer is a version some entry left (a change of
///   nothing answers the record as it stood); refusals wrote nothing.
async fn every_concurrent_change_has_one_entry(
    env: Env,
    count: usize,
    endpoints: usize,
    clients: usize,
) {
    let started = std::time::Instant::now();
    let names: Vec<String> = (0..endpoints).map(|i| format!("mix-{i}")).collect();
    let mut deploy_ids = Vec::new();
    for name in &names {
        let body = SPLIT.replace(r#""pd""#, &format!(r#""{name}""#));
        let (r, _) = env
            .call("", "POST", "/api/endpoints", Some(&body), None)
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        deploy_ids.push(text(&items(&env.history(name).await)[0], "id"));
    }
    let ops = Op::generate(count, 0x9e37_79b9_7f4a_7c15);
    let env = Arc::new(env);
    let next = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let (env, next, sent, ops) = (
            Arc::clone(&env),
            Arc::clone(&next),
            Arc::clone(&sent),
            ops.clone(),
        );
        let (names, deploy_ids) = (names.clone(), deploy_ids.clone());
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(&op) = ops.get(i) else { break };
                let endpoint = i % names.len();
                let who = IDENTITIES[i % IDENTITIES.len()];
                let (method, path, body) = op.request(&names[endpoint], &deploy_ids[endpoint]);
                let body = (!body.is_empty()).then_some(body.as_str());
                let (reply, id) = env.call(who, method, &path, body, None).await;
                sent.lock().unwrap().push(Sent {
                    op,
                    name: names[endpoint].clone(),
                    who,
                    id,
                    status: reply.status,
                    record: reply.body,
                });
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    let sent = std::mem::take(&mut *sent.lock().unwrap());
    assert_eq!(sent.len(), count);
    let by_id: HashMap<&str, &Sent> = sent.iter().map(|s| (s.id.as_str(), s)).collect();

    let (mut written, mut refused, mut unchanged) = (0, 0, 0);
    let mut kinds = std::collections::BTreeSet::new();
    for name in &names {
        let mut entries = env
            .store
            .history(name, Span::Older(None), 100_000)
            .await
            .unwrap();
        entries.reverse();
        assert_eq!(entries[0].operation, "deploy");
        let mut seen = std::collections::HashSet::new();
        for (older, newer) in entries.iter().zip(&entries[1..]) {
            assert!(newer.id > older.id);
            assert_eq!(
                newer.before.as_ref().map(canonical),
                older.after.as_ref().map(canonical),
                "{name}: {} found another record than {} left",
                newer.id,
                older.id
            );
            let request = newer.request_id.as_deref().unwrap();
            assert!(seen.insert(request), "{request} wrote two entries");
            let s = by_id
                .get(request)
                .unwrap_or_else(|| panic!("{request}: no such request"));
            assert_eq!(s.status, StatusCode::OK, "{request} was refused, yet wrote");
            assert_eq!(&s.name, name);
            assert_eq!(newer.who.as_deref(), s.who.split('=').next());
            assert_eq!(newer.operation, s.op.operation());
            assert_eq!(canonical(newer.after.as_ref().unwrap()), content(&s.record));
            assert_eq!(newer.at, text(&s.record, "updated_at"));
            kinds.insert(newer.operation.clone());
        }
        let current = env.record(name).await;
        assert_eq!(
            canonical(entries.last().unwrap().after.as_ref().unwrap()),
            content(&current.body)
        );
        let versions: HashMap<&str, &gco_api::HistoryEntry> =
            entries.iter().map(|e| (e.at.as_str(), e)).collect();
        for s in sent.iter().filter(|s| &s.name == name) {
            match s.status {
                StatusCode::OK => {
                    let at = text(&s.record, "updated_at");
                    let entry = versions
                        .get(at.as_str())
                        .unwrap_or_else(|| panic!("{}: {at} is in no entry", s.id));
                    if entry.request_id.as_deref() == Some(s.id.as_str()) {
                        written += 1;
                    } else {
                        unchanged += 1;
                    }
                }
                StatusCode::CONFLICT | StatusCode::UNPROCESSABLE_ENTITY => {
                    assert!(!seen.contains(s.id.as_str()));
                    refused += 1;
                }
                other => panic!("{:?} {}: {other} {:?}", s.op, s.id, s.record),
            }
        }
        assert_eq!(seen.len(), entries.len() - 1);
    }
    for kind in [
        "set-topology",
        "configure-store",
        "update-image",
        "add-region",
        "remove-region",
        "stop",
        "start",
        "revert",
    ] {
        assert!(kinds.contains(kind), "no {kind} was written: {kinds:?}");
    }
    assert!(refused > 0, "the scales are refused");
    eprintln!(
        "{count} changes from {clients} clients: {written} written (one entry each), {unchanged} changed nothing, {refused} refused; {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_changes_have_one_entry_each_embedded() {
    every_concurrent_change_has_one_entry(Env::embedded().await, 1000, 2, 16).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_changes_have_one_entry_each_dynamodb() {
    every_concurrent_change_has_one_entry(Env::moto().await, 1000, 4, 8).await;
}
