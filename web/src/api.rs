//! Calls to the backend's JSON API. Bodies are read and written with the
//! core's JSON (exact integers, the backend's own messages).

use gco_spec::Diagnostic;
use gco_spec::json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, RequestInit, Response};

use crate::auth;

/// An answer from the API.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub etag: Option<String>,
    pub body: Value,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The `{error, errors}` of a failed call, as diagnostics.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let Some(errors) = crate::paths::get(&self.body, &["errors"]) else {
            return Vec::new();
        };
        let Value::List(items) = errors else {
            return Vec::new();
        };
        items
            .iter()
            .map(|e| {
                let field = |k: &str| crate::paths::display(crate::paths::get(e, &[k]));
                Diagnostic::error(field("path"), field("message"))
            })
            .collect()
    }

    pub fn summary(&self) -> String {
        let s = crate::paths::display(crate::paths::get(&self.body, &["error"]));
        if s.is_empty() {
            format!("the server answered {}", self.status)
        } else {
            s
        }
    }
}

/// One call. `Err` only when the network fails; HTTP errors are replies.
pub async fn call(
    method: &str,
    path: &str,
    body: Option<&Value>,
    if_match: Option<&str>,
) -> Result<Reply, String> {
    let init = RequestInit::new();
    init.set_method(method);
    let headers = web_sys::Headers::new().map_err(js_error)?;
    if let Some(body) = body {
        headers
            .set("Content-Type", "application/json")
            .map_err(js_error)?;
        init.set_body(&JsValue::from_str(&body.to_json()));
    }
    if let Some(tag) = if_match {
        headers.set("If-Match", tag).map_err(js_error)?;
    }
    if let Some(token) = auth::token() {
        headers
            .set("Authorization", &format!("Bearer {token}"))
            .map_err(js_error)?;
    }
    init.set_headers(&headers);
    let request = Request::new_with_str_and_init(path, &init).map_err(js_error)?;
    let window = web_sys::window().ok_or("no window")?;
    let response: Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|_| "the console could not reach its server".to_owned())?
        .unchecked_into();
    let text = JsFuture::from(response.text().map_err(js_error)?)
        .await
        .map_err(js_error)?;
    let text = text.as_string().unwrap_or_default();
    let reply = Reply {
        status: response.status(),
        etag: response.headers().get("ETag").ok().flatten(),
        body: gco_spec::json::parse(&text).unwrap_or(Value::Null),
    };
    if reply.status == 401 {
        auth::ask_again();
    }
    Ok(reply)
}

fn js_error(e: JsValue) -> String {
    e.as_string()
        .unwrap_or_else(|| "the browser refused the request".to_owned())
}

/// `encodeURIComponent` for a path segment.
pub fn segment(s: &str) -> String {
    js_sys::encode_uri_component(s)
        .as_string()
        .unwrap_or_default()
}
