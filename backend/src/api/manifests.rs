//! `POST /api/manifests`: the Kubernetes objects GCO's monitor applies for
//! an endpoint in one region, as YAML. Rendered here so the console's wasm
//! need not carry k8s-openapi.
//!
//! Body: `{"document": <deploy request or endpoint record>, "region": "us-east-1"}`
//! plus the region's monitor settings when known (`cluster_name`,
//! `regional_bucket`, `metadata_server`, `master_address`, `master_image`,
//! `project_name`). Answer: `{"region", "yaml", "notes": [...]}`, or 422
//! with the diagnostics (paths inside `document`, or the body field).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use gco_spec::document::record_of_document;
use gco_spec::json::{Object, Value};
use gco_spec::manifests::manifests;
use gco_spec::{Diagnostic, RegionContext, Report};

use gco_api::{Manifests, route};

use super::AppState;
use super::body::JsonBody;
use super::doc::ManifestsErrors;
use super::error::{ApiError, invalid, json_response};
use super::schema::ManifestsRequest;

/// The body's optional region settings, each a [`RegionContext`] field:
/// the monitor settings' own keys.
use gco_spec::region::MONITOR_SETTINGS_KEYS as SETTINGS;

/// The Kubernetes objects GCO's monitor applies in one region, as YAML
#[utoipa::path(post, path = route::MANIFESTS,
    request_body(content = ManifestsRequest, content_type = "application/json"),
    responses((status = 200, description = "The objects as one v1 List in YAML, and what the rendering assumed.", body = Manifests),
        ManifestsErrors))]
pub async fn render(
    State(service): State<AppState>,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let Value::Object(body) = body else {
        return Err(ApiError::field(
            StatusCode::UNPROCESSABLE_ENTITY,
            "",
            "the body must be an object with a document and a region",
        ));
    };
    // The body's settings over the region's monitor's (`--monitor-settings`).
    let given = region_context(&body)?;
    let ctx = service
        .monitor_settings()
        .context(&given.region)
        .overridden_by(&given);
    let document = body.get("document").ok_or_else(|| {
        ApiError::field(
            StatusCode::UNPROCESSABLE_ENTITY,
            "document",
            "document is required: a deploy request or an endpoint record",
        )
    })?;

    // A request naming no regions targets the deployed ones, as deploy does.
    let record = record_of_document(document, &service.context()).map_err(invalid)?;
    let rendered = manifests(&record, &ctx).map_err(|e| {
        let mut report = Report::default();
        report.push(Diagnostic::error(e.path, e.message));
        invalid(report)
    })?;

    let answer = Manifests {
        yaml: rendered.to_yaml(),
        region: rendered.region,
        notes: rendered.notes,
    };
    Ok(json_response(
        StatusCode::OK,
        &gco_spec::json::to_value(&answer).expect("manifests are JSON"),
    ))
}

/// The region and its settings from the body; an unknown key or a value
/// that is not a string is refused at its field.
fn region_context(body: &Object) -> Result<RegionContext, ApiError> {
    let refuse = |path: &str, message: String| {
        ApiError::field(StatusCode::UNPROCESSABLE_ENTITY, path, message)
    };
    for (key, _) in body.iter() {
        let key = key.as_str().unwrap_or_default();
        if key != "document" && key != "region" && !SETTINGS.contains(&key) {
            return Err(refuse(
                key,
                format!(
                    "unknown field {key:?}; the body takes document, region, {}",
                    SETTINGS.join(", ")
                ),
            ));
        }
    }
    let text = |key: &str| -> Result<Option<String>, ApiError> {
        match body.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s.to_string_lossy())),
            Some(other) => Err(refuse(
                key,
                format!("{key} must be a string, got {}", other.repr()),
            )),
        }
    };
    let region = text("region")?
        .filter(|r| gco_spec::names::is_region(r))
        .ok_or_else(|| {
            refuse(
                "region",
                "region is required: an AWS region such as 'us-east-1'".to_owned(),
            )
        })?;
    let mut ctx = RegionContext::defaults(&region);
    for (key, slot) in SETTINGS.iter().zip(ctx.settings_mut()) {
        *slot = text(key)?;
    }
    Ok(ctx)
}

/// What each region's monitor is configured with
///
/// As the console was told (`--monitor-settings`): a `default` table and
/// one per region, with the `manifests` command's settings. The preview's
/// manifests use them, and a deploy check warns about a region whose
/// monitor would need a master image and has none.
#[utoipa::path(get, path = route::MONITOR_SETTINGS,
    responses((status = 200, description = "The default settings and each region's own.", body = gco_spec::MonitorSettings),
        super::doc::AnyErrors))]
pub async fn monitor_settings(State(service): State<AppState>) -> Response {
    json_response(StatusCode::OK, &service.monitor_settings().to_value())
}
