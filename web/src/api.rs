//! Calls to the backend's JSON API, through gloo-net's fetch. Bodies are
//! read and written with the core's JSON (exact integers, the backend's own
//! messages), so they cross as text.

use gco_spec::Diagnostic;
use gco_spec::json::Value;
pub use gloo_net::http::Method;
use gloo_net::http::RequestBuilder;

use crate::auth;

/// An answer from the API.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub etag: Option<String>,
    pub body: Value,
    /// The answer came from the server's last copy of the endpoints table,
    /// which it cannot read now (`gco_api::STORE_UNREADABLE_HEADER`).
    pub unreadable: Option<gco_api::StoreUnreadable>,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// A conditional GET found nothing new (304).
    pub fn unchanged(&self) -> bool {
        self.status == 304
    }

    /// The `{error, errors}` of a failed call, as diagnostics.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let Some(Value::List(items)) = crate::paths::get(&self.body, &["errors"]) else {
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

/// The version a request is conditioned on.
#[derive(Clone, Copy, Debug, Default)]
pub enum Condition<'a> {
    #[default]
    None,
    /// Change only the version that was read (`If-Match`).
    IfMatch(&'a str),
    /// Answer 304 when the resource is still at this version (`If-None-Match`).
    IfNoneMatch(&'a str),
}

/// `GET path`.
pub async fn get(path: &str) -> Result<Reply, String> {
    call(Method::GET, path, None, Condition::None).await
}

/// A request to `path`, carrying the tab's token when it holds one.
fn request(method: Method, path: &str) -> RequestBuilder {
    let request = RequestBuilder::new(path).method(method);
    match auth::token() {
        Some(token) => request.header("Authorization", &format!("Bearer {token}")),
        None => request,
    }
}

/// `GET path` of a file the API makes (an export): its status and text.
pub async fn get_text(path: &str) -> Result<(u16, String), String> {
    let sent = auth::token_generation();
    let response = request(Method::GET, path)
        .send()
        .await
        .map_err(|_| "the console could not reach its server".to_owned())?;
    let status = response.status();
    let text = response.text().await.map_err(|e| e.to_string())?;
    if status == 401 {
        auth::unauthorized(&text, sent);
    }
    Ok((status, text))
}

/// One call. `Err` only when the network fails; HTTP errors are replies.
pub async fn call(
    method: Method,
    path: &str,
    body: Option<&Value>,
    condition: Condition<'_>,
) -> Result<Reply, String> {
    let sent = auth::token_generation();
    let mut request = request(method, path);
    match condition {
        Condition::None => {}
        Condition::IfMatch(tag) => request = request.header("If-Match", tag),
        Condition::IfNoneMatch(tag) => request = request.header("If-None-Match", tag),
    }
    let request = match body {
        Some(body) => request
            .header("Content-Type", "application/json")
            .body(body.to_json()),
        None => request.build(),
    }
    .map_err(|e| e.to_string())?;
    let response = request
        .send()
        .await
        .map_err(|_| "the console could not reach its server".to_owned())?;
    let text = response.text().await.map_err(|e| e.to_string())?;
    let reply = Reply {
        status: response.status(),
        etag: response.headers().get("ETag"),
        body: gco_spec::json::parse(&text).unwrap_or(Value::Null),
        unreadable: response
            .headers()
            .get(gco_api::STORE_UNREADABLE_HEADER)
            .and_then(|h| gco_api::StoreUnreadable::parse(&h)),
    };
    if reply.status == 401 {
        auth::unauthorized(&reply.summary(), sent);
    }
    Ok(reply)
}

/// Sends a change's request, conditioned on the version it was computed
/// from when there is one.
pub async fn send(
    request: &gco_api::ChangeRequest,
    if_match: Option<&str>,
) -> Result<Reply, String> {
    let method = match request.method {
        gco_api::Method::Get => Method::GET,
        gco_api::Method::Post => Method::POST,
        gco_api::Method::Put => Method::PUT,
        gco_api::Method::Delete => Method::DELETE,
    };
    let condition = if_match.map_or(Condition::None, Condition::IfMatch);
    call(method, &request.path, request.body.as_ref(), condition).await
}

#[cfg(test)]
mod tests {
    use gco_spec::json::to_value;

    use super::*;

    /// Errors are read by key path (a typed read costs the console 2.9 KB):
    /// what the backend writes, `gco_api::ErrorBody`, must read back whole.
    #[test]
    fn an_error_reads_as_the_api_writes_it() {
        let body = gco_api::ErrorBody {
            error: "the request has 1 error".into(),
            errors: vec![gco_api::Diagnostic {
                path: "port".into(),
                message: "port must be an integer".into(),
            }],
            errors_omitted: None,
        };
        let reply = Reply {
            status: 422,
            etag: None,
            body: to_value(&body).unwrap(),
            unreadable: None,
        };
        assert_eq!(reply.summary(), "the request has 1 error");
        assert_eq!(
            reply.diagnostics(),
            [Diagnostic::error("port", "port must be an integer")]
        );
    }
}
