//! The request each [`Change`] makes ([`change_request`], for the console
//! and for the backend's tests that each request reaches the handler making
//! that change), and the change a request's body makes ([`change_of`]):
//! both by the kind's row of the table of changes
//! ([`crate::route::ChangeRoute`]).

use gco_spec::json::Value;
use gco_spec::{Change, ChangeKind};

use crate::body::{CanaryBody, ImageBody, RegionBody, ReplicasBody, TopologyBody};
use crate::route::{
    ChangeRoute, LIFECYCLE_ID_PARAMETER, Method, NAME_PARAMETER, OWNER_LABEL_PARAMETER,
    REGION_PARAMETER, encode_segment, fill,
};

/// One API request: send `body` (when there is one) as
/// `Content-Type: application/json`, and the record's ETag as `If-Match`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRequest {
    pub method: Method,
    /// The path, its segments percent-encoded.
    pub path: String,
    pub body: Option<Value>,
}

/// The request that makes `change` to endpoint `endpoint_name`.
pub fn change_request(endpoint_name: &str, change: &Change) -> ChangeRequest {
    let row = ChangeRoute::of(change.kind());
    let mut region = None;
    let mut query = Vec::new();
    let body = match change {
        Change::SetTopology { prefill, decode } => Some(
            TopologyBody {
                prefill: prefill.clone(),
                decode: decode.clone(),
            }
            .to_value(),
        ),
        Change::ConfigureStore { store } => Some(store.clone()),
        Change::UpdateImage { image, with_proxy } => Some(
            ImageBody {
                image: image.clone(),
                with_proxy: with_proxy.clone(),
            }
            .to_value(),
        ),
        Change::Scale { replicas } => Some(
            ReplicasBody {
                replicas: replicas.clone(),
            }
            .to_value(),
        ),
        // The server draws the generation of a region it has not seen.
        Change::AddRegion { region } => Some(
            RegionBody {
                region: region.clone(),
            }
            .to_value(),
        ),
        Change::RemoveRegion { region: r } => {
            region = Some(segment_text(r));
            None
        }
        Change::Delete {
            expected_owner_label,
            expected_lifecycle_id,
        } => {
            if let Some((key, value)) = expected_owner_label {
                let label = format!("{key}={value}");
                query.push(format!(
                    "{OWNER_LABEL_PARAMETER}={}",
                    encode_segment(&label)
                ));
            }
            if let Some(id) = expected_lifecycle_id {
                query.push(format!("{LIFECYCLE_ID_PARAMETER}={}", encode_segment(id)));
            }
            None
        }
        Change::CanaryDeploy {
            image,
            weight,
            replicas,
        } => Some(
            CanaryBody {
                image: image.clone(),
                weight: weight.clone(),
                replicas: replicas.clone(),
            }
            .to_value(),
        ),
        Change::Stop | Change::Start | Change::PromoteCanary | Change::RollbackCanary => None,
    };
    let mut params = vec![(NAME_PARAMETER, endpoint_name)];
    if let Some(region) = &region {
        params.push((REGION_PARAMETER, region));
    }
    let mut path = fill(row.path, &params);
    if !query.is_empty() {
        path = format!("{path}?{}", query.join("&"));
    }
    ChangeRequest {
        method: row.method,
        path,
        body,
    }
}

/// The change of kind `kind` a request's `body` makes (the body read as
/// its kind's: fields it lacks are null, and the core's rules name what is
/// wrong with them), for every kind whose arguments all come in the body,
/// or none; `None` for a kind with arguments in its path or query
/// (`remove-region`, `delete`).
pub fn change_of(kind: ChangeKind, body: Value) -> Option<Change> {
    Some(match kind {
        ChangeKind::Scale => {
            let ReplicasBody { replicas } = ReplicasBody::from_value(&body);
            Change::Scale { replicas }
        }
        ChangeKind::SetTopology => {
            let TopologyBody { prefill, decode } = TopologyBody::from_value(&body);
            Change::SetTopology { prefill, decode }
        }
        ChangeKind::ConfigureStore => Change::ConfigureStore { store: body },
        ChangeKind::UpdateImage => {
            let ImageBody { image, with_proxy } = ImageBody::from_value(&body);
            Change::UpdateImage { image, with_proxy }
        }
        ChangeKind::AddRegion => {
            let RegionBody { region } = RegionBody::from_value(&body);
            Change::AddRegion { region }
        }
        ChangeKind::CanaryDeploy => {
            let CanaryBody {
                image,
                weight,
                replicas,
            } = CanaryBody::from_value(&body);
            Change::CanaryDeploy {
                image,
                weight,
                replicas,
            }
        }
        ChangeKind::Stop => Change::Stop,
        ChangeKind::Start => Change::Start,
        ChangeKind::PromoteCanary => Change::PromoteCanary,
        ChangeKind::RollbackCanary => Change::RollbackCanary,
        ChangeKind::RemoveRegion | ChangeKind::Delete => return None,
    })
}

/// A value as a path segment's text: a string as it is, anything else as
/// its JSON (the server then names what is wrong with it).
fn segment_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Str(s) => s.to_string_lossy(),
        other => other.to_json(),
    }
}

#[cfg(test)]
mod tests {
    use gco_spec::json::parse;

    use super::*;

    fn request(change: Change) -> (String, String, Option<String>) {
        let r = change_request("pd/1", &change);
        (
            r.method.to_string(),
            r.path,
            r.body.as_ref().map(Value::to_json),
        )
    }

    #[test]
    fn each_change_has_its_route() {
        let v = |text: &str| parse(text).unwrap();
        let cases = [
            (
                Change::SetTopology {
                    prefill: v("2"),
                    decode: v("\"3\""),
                },
                (
                    "PUT",
                    "/api/endpoints/pd%2F1/topology",
                    Some(r#"{"prefill": 2, "decode": "3"}"#),
                ),
            ),
            (
                Change::ConfigureStore {
                    store: v(r#"{"enabled": true}"#),
                },
                (
                    "PUT",
                    "/api/endpoints/pd%2F1/store",
                    Some(r#"{"enabled": true}"#),
                ),
            ),
            (
                Change::UpdateImage {
                    image: v("\"img:2\""),
                    with_proxy: Value::Null,
                },
                (
                    "PUT",
                    "/api/endpoints/pd%2F1/image",
                    Some(r#"{"image": "img:2"}"#),
                ),
            ),
            (
                Change::Scale { replicas: v("4") },
                (
                    "PUT",
                    "/api/endpoints/pd%2F1/replicas",
                    Some(r#"{"replicas": 4}"#),
                ),
            ),
            (
                Change::AddRegion {
                    region: v("\"eu-west-1\""),
                },
                (
                    "POST",
                    "/api/endpoints/pd%2F1/regions",
                    Some(r#"{"region": "eu-west-1"}"#),
                ),
            ),
            (
                Change::RemoveRegion {
                    region: v("\"eu west\""),
                },
                ("DELETE", "/api/endpoints/pd%2F1/regions/eu%20west", None),
            ),
            (
                Change::RemoveRegion { region: v("[1]") },
                ("DELETE", "/api/endpoints/pd%2F1/regions/%5B1%5D", None),
            ),
            (Change::Stop, ("POST", "/api/endpoints/pd%2F1/stop", None)),
            (Change::Start, ("POST", "/api/endpoints/pd%2F1/start", None)),
            (Change::DELETE, ("DELETE", "/api/endpoints/pd%2F1", None)),
            (
                Change::Delete {
                    expected_owner_label: Some(("team".into(), "a b".into())),
                    expected_lifecycle_id: Some("ab12".into()),
                },
                (
                    "DELETE",
                    "/api/endpoints/pd%2F1?owner_label=team%3Da%20b&lifecycle_id=ab12",
                    None,
                ),
            ),
            (
                Change::CanaryDeploy {
                    image: v("\"img:2\""),
                    weight: Some(v("20")),
                    replicas: None,
                },
                (
                    "POST",
                    "/api/endpoints/pd%2F1/canary",
                    Some(r#"{"image": "img:2", "weight": 20}"#),
                ),
            ),
            (
                Change::PromoteCanary,
                ("POST", "/api/endpoints/pd%2F1/canary/promote", None),
            ),
            (
                Change::RollbackCanary,
                ("POST", "/api/endpoints/pd%2F1/canary/rollback", None),
            ),
        ];
        for (change, (method, path, body)) in cases {
            let label = format!("{change:?}");
            // What the backend makes of the body is the change sent.
            let sent = change_request("pd/1", &change).body.unwrap_or(Value::Null);
            if let Some(made) = change_of(change.kind(), sent) {
                assert_eq!(made, change, "{label}");
            }
            assert_eq!(
                request(change),
                (method.into(), path.into(), body.map(str::to_owned)),
                "{label}"
            );
        }
    }
}
