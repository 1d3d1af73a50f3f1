//! The whole HTTP application in process, on the embedded store: requests
//! through `tower::ServiceExt::oneshot`, answers parsed. The `api_*` tests
//! share it.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use gco_console::auth::Access;
use gco_console::store::Store;
use gco_spec::json::{Value, parse};
use http_body_util::BodyExt;
use tower::ServiceExt;

use super::TempDir;

/// The app and the store under it.
pub struct Api {
    pub app: Router,
    /// The store under the app, for records other writers of the table put there.
    pub store: Arc<dyn Store>,
    _dir: TempDir,
    _dist: TempDir,
}

/// An answer: status, headers, the body as text and parsed (null when it is no JSON).
pub struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Value,
    /// The body as sent (compressed, when the answer says so).
    pub bytes: axum::body::Bytes,
    pub text: String,
}

impl Reply {
    pub fn get(&self, path: &str) -> Value {
        super::at(self.body.clone(), path)
    }

    pub fn str(&self, path: &str) -> String {
        self.get(path).as_str().unwrap_or_default().to_owned()
    }

    pub fn first_error(&self) -> (String, String) {
        (self.str("errors.0.path"), self.str("errors.0.message"))
    }

    /// The status with the first error's path and message.
    pub fn refusal(&self) -> (StatusCode, String, String) {
        let (path, message) = self.first_error();
        (self.status, path, message)
    }
}

pub const TOKEN: &str = "0123456789abcdef-test-token";

impl Api {
    pub fn new() -> Api {
        Api::with_token(None)
    }

    pub fn with_token(token: Option<&str>) -> Api {
        Api::with_access(Access::loopback(token))
    }

    pub fn with_access(access: Access) -> Api {
        Api::over(TempDir::new("api"), access)
    }

    /// The app over the embedded store in `dir`, with what is stored there.
    pub fn over(dir: TempDir, access: Access) -> Api {
        Api::with_frameworks(dir, access, gco_spec::Frameworks::CURRENT)
    }

    /// [`Api::over`] for a team whose GCO accepts `frameworks`.
    pub fn with_frameworks(dir: TempDir, access: Access, frameworks: gco_spec::Frameworks) -> Api {
        let dist = TempDir::new("dist");
        std::fs::write(
            dist.path().join("index.html"),
            "<!doctype html><title>GCO console</title>",
        )
        .unwrap();
        let store = super::embedded(&dir);
        let service = super::service(Arc::clone(&store)).with_frameworks(frameworks);
        let app = gco_console::app::app(service, access, dist.path());
        Api {
            app,
            store,
            _dir: dir,
            _dist: dist,
        }
    }

    /// An app built elsewhere (over another store) with the store under it.
    pub fn around(app: Router, store: Arc<dyn Store>) -> Api {
        Api {
            app,
            store,
            _dir: TempDir::new("around"),
            _dist: TempDir::new("around-dist"),
        }
    }

    /// The console's files this app serves (`--dist`), to put assets in.
    pub fn dist(&self) -> &std::path::Path {
        self._dist.path()
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut req = Request::builder().method(method).uri(path);
        let named = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
        if !named("host") {
            req = req.header(header::HOST, "127.0.0.1");
        }
        if body.is_some() && !named("content-type") {
            req = req.header(header::CONTENT_TYPE, "application/json");
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
            .unwrap();
        let response = self.app.clone().oneshot(req).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = parse(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
            bytes,
            text,
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None, &[]).await
    }

    pub async fn post(&self, path: &str, body: &str) -> Reply {
        self.send("POST", path, Some(body), &[]).await
    }

    pub async fn put(&self, path: &str, body: &str) -> Reply {
        self.send("PUT", path, Some(body), &[]).await
    }

    pub async fn deploy_split(&self, name: &str) -> Reply {
        let r = self
            .post("/api/endpoints", &format!(r#"{{"endpoint_name": "{name}", "mooncake_mode": "disaggregated", "prefill_replicas": 2, "decode_replicas": 4}}"#))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        r
    }
}

/// The `endpoint_name`s of a list of records.
pub trait Names {
    fn as_list_names(&self) -> Vec<String>;
}

impl Names for Value {
    fn as_list_names(&self) -> Vec<String> {
        match self {
            Value::List(items) => items
                .iter()
                .map(|i| {
                    i.as_object()
                        .unwrap()
                        .get("endpoint_name")
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}
