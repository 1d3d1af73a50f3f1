//! The request each [`Change`] makes: the one mapping from the core's
//! changes to the API's routes, for the console and for the backend's
//! tests that each request reaches the handler making that change.

use gco_spec::Change;
use gco_spec::json::Value;

use crate::body::{CanaryBody, ImageBody, RegionBody, ReplicasBody, TopologyBody};
use crate::route::{
    self, LIFECYCLE_ID_PARAMETER, Method, NAME_PARAMETER, OWNER_LABEL_PARAMETER, REGION_PARAMETER,
    encode_segment, fill,
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
    let at = |template: &str| fill(template, &[(NAME_PARAMETER, endpoint_name)]);
    let (method, path, body) = match change {
        Change::SetTopology { prefill, decode } => (
            Method::Put,
            at(route::TOPOLOGY),
            Some(
                TopologyBody {
                    prefill: prefill.clone(),
                    decode: decode.clone(),
                }
                .to_value(),
            ),
        ),
        Change::ConfigureStore { store } => (Method::Put, at(route::STORE), Some(store.clone())),
        Change::UpdateImage { image, with_proxy } => (
            Method::Put,
            at(route::IMAGE),
            Some(
                ImageBody {
                    image: image.clone(),
                    with_proxy: with_proxy.clone(),
                }
                .to_value(),
            ),
        ),
        Change::Scale { replicas } => (
            Method::Put,
            at(route::REPLICAS),
            Some(
                ReplicasBody {
                    replicas: replicas.clone(),
                }
                .to_value(),
            ),
        ),
        // The server draws the generation of a region it has not seen.
        Change::AddRegion { region, .. } => (
            Method::Post,
            at(route::REGIONS),
            Some(
                RegionBody {
                    region: region.clone(),
                }
                .to_value(),
            ),
        ),
        Change::RemoveRegion { region } => (
            Method::Delete,
            fill(
                route::REGION,
                &[
                    (NAME_PARAMETER, endpoint_name),
                    (REGION_PARAMETER, &segment_text(region)),
                ],
            ),
            None,
        ),
        Change::Stop => (Method::Post, at(route::STOP), None),
        Change::Start => (Method::Post, at(route::START), None),
        Change::Delete {
            expected_owner_label,
            expected_lifecycle_id,
        } => {
            let mut path = at(route::ENDPOINT);
            let mut query = Vec::new();
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
            if !query.is_empty() {
                path = format!("{path}?{}", query.join("&"));
            }
            (Method::Delete, path, None)
        }
        Change::CanaryDeploy {
            image,
            weight,
            replicas,
        } => (
            Method::Post,
            at(route::CANARY),
            Some(
                CanaryBody {
                    image: image.clone(),
                    weight: weight.clone(),
                    replicas: replicas.clone(),
                }
                .to_value(),
            ),
        ),
        Change::PromoteCanary => (Method::Post, at(route::CANARY_PROMOTE), None),
        Change::RollbackCanary => (Method::Post, at(route::CANARY_ROLLBACK), None),
    };
    ChangeRequest { method, path, body }
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
            assert_eq!(
                request(change),
                (method.into(), path.into(), body.map(str::to_owned)),
                "{label}"
            );
        }
    }
}
