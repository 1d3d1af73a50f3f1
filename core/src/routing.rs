//! What GCO's authenticated inference proxy answers for an endpoint in a
//! region (`gco/services/api_routes/inference_proxy.py`, `_resolve_upstream`
//! and `_target_service`, marker 2026-09-28): the Service it forwards to, or
//! its refusal, in its order and words.

use crate::json::Value;
use crate::limits::DEFAULT_NAMESPACE;
use crate::names::is_dns_label;
use crate::record::{DesiredState, Record};
use crate::status::RegionState;

/// The proxy's refusal: its HTTP status and its `detail`, GCO's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyRefusal {
    pub status: u16,
    pub detail: &'static str,
}

impl ProxyRefusal {
    const fn new(status: u16, detail: &'static str) -> ProxyRefusal {
        ProxyRefusal { status, detail }
    }

    /// Refused until the endpoint and the region are both running; the
    /// other refusals hold whatever the monitors do.
    pub fn is_not_ready(&self) -> bool {
        *self == NOT_READY
    }
}

/// The refusal of an endpoint or region not (yet) running.
pub const NOT_READY: ProxyRefusal =
    ProxyRefusal::new(503, "Inference endpoint is not ready in this region");

/// Where the proxy in `region` forwards a request for `record`: the
/// endpoint's Service (a Mooncake split mode's `{name}-proxy`; a running
/// canary takes its weight's share through `{name}-canary`), or why not.
/// The proxy serves `gco-inference` only (its `INFERENCE_NAMESPACE`
/// default).
pub fn proxy_route(record: &Record, region: &str) -> Result<String, ProxyRefusal> {
    let name = record.endpoint_name.as_str();
    if !is_dns_label(name) {
        return Err(ProxyRefusal::new(404, "Invalid inference name"));
    }
    if !is_dns_label(&record.namespace) {
        return Err(ProxyRefusal::new(404, "Invalid inference namespace"));
    }
    if record.namespace != DEFAULT_NAMESPACE {
        return Err(ProxyRefusal::new(
            503,
            "Inference endpoint namespace is not routable",
        ));
    }
    if !record.target_regions.iter().any(|r| r == region) {
        return Err(ProxyRefusal::new(
            404,
            "Inference endpoint is not deployed in this region",
        ));
    }
    let local_running = record
        .region_statuses()
        .into_iter()
        .find(|(r, _)| r == region)
        .and_then(|(_, status)| status?.state)
        == Some(RegionState::Running);
    if record.desired_state != DesiredState::Running || !local_running {
        return Err(NOT_READY);
    }
    let split = record
        .spec
        .get("mooncake")
        .and_then(Value::as_object)
        .and_then(|m| m.get("mode"))
        .and_then(Value::as_str)
        .is_some_and(|mode| matches!(mode, "disaggregated" | "both"));
    Ok(if split {
        format!("{name}-proxy")
    } else {
        name.to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn record() -> Record {
        let text = r#"{"endpoint_name": "chat", "desired_state": "running", "target_regions": ["us-east-1"], "namespace": "gco-inference", "spec": {"image": "x"}, "ingress_path": "/inference/chat", "created_at": "t", "updated_at": "t", "region_status": {"us-east-1": {"state": "running"}}}"#;
        Record::from_value(&parse(text).unwrap()).unwrap()
    }

    fn with_mode(mut r: Record, mode: &str) -> Record {
        r.spec.insert(
            "mooncake",
            parse(&format!(
                r#"{{"mode": "{mode}", "topology": {{"prefill": 1, "decode": 1}}}}"#
            ))
            .unwrap(),
        );
        r
    }

    #[test]
    fn routes_only_a_running_endpoint_in_a_running_region() {
        assert_eq!(proxy_route(&record(), "us-east-1"), Ok("chat".into()));
        // As read: GCO's monitor never moves a Mooncake endpoint's desired
        // state past deploying, so it is refused though its region runs.
        let mut mooncake = with_mode(record(), "both");
        mooncake.desired_state = DesiredState::Deploying;
        assert_eq!(proxy_route(&mooncake, "us-east-1"), Err(NOT_READY));
        let mut stopped = record();
        stopped
            .region_status
            .insert("us-east-1", parse(r#"{"state": "stopped"}"#).unwrap());
        assert_eq!(
            proxy_route(&stopped, "us-east-1").unwrap_err().detail,
            "Inference endpoint is not ready in this region"
        );
        let split = with_mode(record(), "disaggregated");
        assert_eq!(proxy_route(&split, "us-east-1"), Ok("chat-proxy".into()));
    }

    #[test]
    fn refuses_in_gcos_order_and_words() {
        assert_eq!(
            proxy_route(&record(), "eu-west-1"),
            Err(ProxyRefusal::new(
                404,
                "Inference endpoint is not deployed in this region"
            ))
        );
        let mut elsewhere = record();
        elsewhere.namespace = "team-a".into();
        assert_eq!(
            proxy_route(&elsewhere, "eu-west-1"),
            Err(ProxyRefusal::new(
                503,
                "Inference endpoint namespace is not routable"
            ))
        );
        let mut dotted = record();
        dotted.endpoint_name = "Chat.1".into();
        assert_eq!(
            proxy_route(&dotted, "us-east-1").unwrap_err().detail,
            "Invalid inference name"
        );
    }
}
