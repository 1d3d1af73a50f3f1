//! GCO's SGLang release: the frameworks a team's GCO accepts (`--frameworks`)
//! in `/api/config`, `/api/validate` and deploy; SGLang's model rule; a `tgi`
//! record read from DynamoDB under the default list; and a region change that
//! loses its conditional write to another change (409, GCO's words), on
//! dynalite.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::app::Api;
use crate::common::monitor::Monitor;
use crate::common::{Dynalite, TempDir};
use axum::http::StatusCode;
use gco_api::HistoryEntry;
use gco_console::auth::Access;
use gco_console::service::{Service, ServiceError};
use gco_console::store::{
    Author, BoxFuture, Expected, Scan, Span, Storable, Store, StoreError, Stored,
};
use gco_spec::json::Value;
use gco_spec::{Change, Frameworks, Record};

const SGLANG: &str = r#"{"endpoint_name": "chat", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "env": {"MODEL": "Qwen/Qwen3-8B"}}"#;
const TGI: &str = r#"{"endpoint_name": "old", "image": "ghcr.io/huggingface/text-generation-inference:3", "framework": "tgi"}"#;

fn api_with(frameworks: &str) -> Api {
    Api::with_frameworks(
        TempDir::new("frameworks"),
        Access::loopback(None),
        Frameworks::parse_list(frameworks).unwrap(),
    )
}

#[tokio::test]
async fn config_names_the_frameworks_the_editor_checks_with() {
    let config = Api::new().get("/api/config").await;
    assert_eq!(config.get("frameworks").to_json(), r#"["vllm", "sglang"]"#);
    let older = api_with("vllm,tgi").get("/api/config").await;
    assert_eq!(older.get("frameworks").to_json(), r#"["vllm", "tgi"]"#);
}

#[tokio::test]
async fn validate_and_deploy_follow_the_list() {
    let current = api_with("vllm,sglang");
    let older = api_with("vllm,tgi");

    let v = current.post("/api/validate", SGLANG).await;
    assert_eq!(v.get("ok"), Value::Bool(true), "{}", v.text);
    let v = older.post("/api/validate", SGLANG).await;
    assert_eq!(v.get("errors.0.path").as_str(), Some("framework"));
    assert_eq!(
        v.str("errors.0.message"),
        "framework must be 'vllm' or 'tgi'"
    );

    let refused = current.post("/api/endpoints", TGI).await;
    assert_eq!(
        refused.refusal(),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "framework".to_owned(),
            "framework must be 'vllm' or 'sglang'".to_owned()
        )
    );
    assert_eq!(
        current.get("/api/endpoints/old").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        older.post("/api/endpoints", TGI).await.status,
        StatusCode::CREATED
    );
    assert_eq!(
        current.post("/api/endpoints", SGLANG).await.status,
        StatusCode::CREATED
    );

    // Mooncake stays vLLM-only whatever the list says.
    let both = r#"{"endpoint_name": "pd", "mooncake_mode": "store", "framework": "sglang", "env": {"MODEL": "m"}}"#;
    assert_eq!(
        current.post("/api/endpoints", both).await.refusal(),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "framework".to_owned(),
            "Mooncake serving requires the vllm framework".to_owned()
        )
    );
}

#[tokio::test]
async fn an_sglang_deploy_without_a_model_writes_nothing() {
    let api = Api::new();
    let r = api
        .post(
            "/api/endpoints",
            r#"{"endpoint_name": "chat", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang"}"#,
        )
        .await;
    assert_eq!(
        r.refusal(),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "env.MODEL".to_owned(),
            "framework 'sglang' needs the model to serve: pass -e MODEL=<id-or-path> or --extra-args=--model-path --extra-args <id-or-path>".to_owned()
        )
    );
    assert_eq!(
        api.get("/api/endpoints/chat").await.status,
        StatusCode::NOT_FOUND
    );
    let listed = api.get("/api/endpoints").await;
    assert_eq!(listed.get("endpoints").to_json(), "[]");

    let with_args = api
        .post(
            "/api/endpoints",
            r#"{"endpoint_name": "chat", "image": "lmsysorg/sglang:v0.5.4", "framework": "sglang", "extra_args": ["--model-path", "/models/qwen"]}"#,
        )
        .await;
    assert_eq!(with_args.status, StatusCode::CREATED, "{}", with_args.text);
}

#[tokio::test]
async fn an_sglang_preview_renders_gcos_launcher() {
    let api = Api::new();
    let r = api
        .post(
            "/api/manifests",
            &format!(r#"{{"document": {SGLANG}, "region": "us-east-1"}}"#),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let yaml = r.str("yaml");
    for line in [
        "- python3",
        "- sglang.launch_server",
        "- --model-path",
        "- $(MODEL)",
        "startupProbe:",
    ] {
        assert!(yaml.contains(line), "{line} missing in\n{yaml}");
    }
}

/// A record as GCO's CLI before its SGLang release wrote it, put into
/// dynalite with the SDK, read back by a console on today's list.
#[tokio::test]
async fn a_tgi_record_from_dynamodb_reads_and_is_marked_unserved() {
    let dynalite = Dynalite::start();
    let store: Arc<dyn Store> = Arc::new(dynalite.store().await);
    let older = Service::new(
        Arc::clone(&store),
        vec!["us-east-1".into()],
        "vllm/vllm-openai:v0.27.1".into(),
    )
    .with_frameworks(Frameworks::parse_list("vllm,tgi").unwrap());
    let tgi = gco_spec::json::parse(TGI).unwrap();
    older
        .deploy(tgi, &common::actor())
        .await
        .expect("an older GCO deploys tgi");

    let today = Service::new(
        Arc::clone(&store),
        vec!["us-east-1".into()],
        "vllm/vllm-openai:v0.27.1".into(),
    );
    let app = gco_console::app::app(
        today,
        Access::loopback(None),
        std::path::Path::new("/nonexistent"),
    );
    let api = Api::around(app, store);
    let read = api.get("/api/endpoints/old").await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    assert_eq!(read.str("spec.framework"), "tgi");
    let listed = api.get("/api/endpoints").await;
    assert_eq!(listed.str("endpoints.0.endpoint_name"), "old");
    // GCO renders nothing for it, and the preview says why.
    let preview = api
        .post(
            "/api/manifests",
            &format!(r#"{{"document": {}, "region": "us-east-1"}}"#, read.text),
        )
        .await;
    assert_eq!(
        preview.refusal(),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "spec.framework".to_owned(),
            "framework must be 'vllm' or 'sglang'".to_owned()
        )
    );
    // It can still be stopped and deleted.
    let stop = api.send("POST", "/api/endpoints/old/stop", None, &[]).await;
    assert_eq!(stop.status, StatusCode::OK, "{}", stop.text);
    let delete = api.send("DELETE", "/api/endpoints/old", None, &[]).await;
    assert_eq!(delete.status, StatusCode::OK, "{}", delete.text);
}

/// A store that lets one other write in between the service's read and its
/// first conditional write, as a concurrent writer of the table would.
struct Interleaved {
    inner: Arc<dyn Store>,
    armed: AtomicBool,
    meanwhile: Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>,
}

impl Store for Interleaved {
    fn create<'a>(
        &'a self,
        record: &'a Storable,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        self.inner.create(record, by)
    }

    fn get<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        self.inner.get(name)
    }

    fn get_stored<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Arc<Stored>>, StoreError>> {
        self.inner.get_stored(name)
    }

    fn update<'a>(
        &'a self,
        record: &'a Storable,
        expected: Expected<'a>,
        by: &'a Author,
    ) -> BoxFuture<'a, Result<Arc<Stored>, StoreError>> {
        Box::pin(async move {
            if self.armed.swap(false, Ordering::SeqCst) {
                (self.meanwhile)().await;
            }
            self.inner.update(record, expected, by).await
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Scan, StoreError>> {
        self.inner.list()
    }

    fn records_history(&self) -> bool {
        self.inner.records_history()
    }

    fn keep_entry<'a>(
        &'a self,
        name: &'a str,
        entry: &'a HistoryEntry,
    ) -> BoxFuture<'a, Result<HistoryEntry, StoreError>> {
        self.inner.keep_entry(name, entry)
    }

    fn history<'a>(
        &'a self,
        name: &'a str,
        span: Span<'a>,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<HistoryEntry>, StoreError>> {
        self.inner.history(name, span, limit)
    }
}

async fn interleaved_service(
    dynalite: &Dynalite,
    meanwhile: impl Fn(Arc<dyn Store>) -> BoxFuture<'static, ()> + Send + Sync + 'static,
) -> (Service, Arc<Interleaved>) {
    let inner: Arc<dyn Store> = Arc::new(dynalite.store().await);
    let hook_store = Arc::clone(&inner);
    let store = Arc::new(Interleaved {
        inner,
        armed: AtomicBool::new(false),
        meanwhile: Box::new(move || meanwhile(Arc::clone(&hook_store))),
    });
    let service = Service::new(
        Arc::clone(&store) as Arc<dyn Store>,
        vec!["us-east-1".into(), "eu-west-1".into()],
        "vllm/vllm-openai:v0.27.1".into(),
    );
    let request = gco_spec::json::parse(
        r#"{"endpoint_name": "chat", "image": "vllm/vllm-openai:v1", "target_regions": ["us-east-1"]}"#,
    )
    .unwrap();
    service.deploy(request, &common::actor()).await.unwrap();
    (service, store)
}

/// Another writer's change of the record's content: a scale.
fn relabel(store: Arc<dyn Store>) -> BoxFuture<'static, ()> {
    Box::pin(async move {
        let stored = store.get_stored("chat").await.unwrap().unwrap();
        let mut next = stored.record.clone();
        let replicas = next
            .spec
            .get("replicas")
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64())
            .unwrap();
        next.spec.insert("replicas", Value::int(replicas + 1));
        next.updated_at = gco_spec::time::next_timestamp(0, &stored.record.updated_at);
        store
            .update(
                &Storable::of(next.clone()),
                Expected::of(&stored.record, false),
                &common::author(),
            )
            .await
            .expect("the other writer's change lands");
    })
}

#[tokio::test]
async fn a_region_change_that_loses_to_another_change_is_a_conflict() {
    let dynalite = Dynalite::start();
    let (service, store) = interleaved_service(&dynalite, relabel).await;
    for (change, words) in [
        (
            Change::AddRegion {
                region: "eu-west-1".into(),
            },
            "added to a Region",
        ),
        (
            Change::RemoveRegion {
                region: "us-east-1".into(),
            },
            "removed from a Region",
        ),
    ] {
        store.armed.store(true, Ordering::SeqCst);
        let before = service.get_stored("chat").await.unwrap();
        match service.change("chat", change, None, &common::actor()).await {
            Err(ServiceError::Busy {
                endpoint,
                operation,
            }) => {
                assert_eq!((endpoint.as_str(), operation), ("chat", words));
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
        // The other writer's change is all that happened.
        let after = service.get_stored("chat").await.unwrap();
        assert_eq!(after.record.target_regions, before.record.target_regions);
        assert_ne!(
            after.record.spec.get("replicas"),
            before.record.spec.get("replicas")
        );
    }

    // Through HTTP: 409 with GCO's words.
    let app = gco_console::app::app(
        service,
        Access::loopback(None),
        std::path::Path::new("/nonexistent"),
    );
    let api = Api::around(app, Arc::clone(&store) as Arc<dyn Store>);
    store.armed.store(true, Ordering::SeqCst);
    let r = api
        .post("/api/endpoints/chat/regions", r#"{"region": "eu-west-1"}"#)
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert_eq!(
        r.str("error"),
        "Endpoint 'chat' changed while being added to a Region; retry after reading status"
    );
}

#[tokio::test]
async fn a_region_change_after_a_status_write_still_lands() {
    let dynalite = Dynalite::start();
    let monitor = Monitor::new(&dynalite, "chat").await;
    let monitor = Arc::new(monitor);
    let (service, store) = interleaved_service(&dynalite, move |_| {
        let monitor = Arc::clone(&monitor);
        Box::pin(async move {
            let written = monitor.pass(0).await;
            assert!(written.is_some(), "the monitor wrote its status");
        })
    })
    .await;
    store.armed.store(true, Ordering::SeqCst);
    let added = service
        .change(
            "chat",
            Change::AddRegion {
                region: "eu-west-1".into(),
            },
            None,
            &common::actor(),
        )
        .await
        .expect("a status write is no conflict");
    assert_eq!(added.record.target_regions, ["us-east-1", "eu-west-1"]);
    assert!(!added.record.region_status.is_empty(), "the status stays");
}
