//! Metadata: names, labels and the ownership annotations (4.2).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::Notes;
use crate::json::Value;
use crate::record::Record;

pub(crate) const LIFECYCLE_ID: &str = "gco.io/lifecycle-id";
pub(crate) const REGION_GENERATION: &str = "gco.io/region-generation";
pub(crate) const LEADER_EPOCH: &str = "gco.io/leader-epoch";

/// The lifecycle id (and tokens) a deploy preview carries: deploy mints the
/// real ones when it creates the record.
const PREVIEW_TOKEN: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The ownership annotations of endpoint-owned objects.
#[derive(Debug, Clone, Default)]
pub(crate) struct Owner {
    lifecycle_id: Option<String>,
    region_generation: Option<String>,
}

impl Owner {
    pub(crate) fn of(record: &Record, region: &str, notes: &mut Notes) -> Owner {
        let lifecycle_id = record.lifecycle_id.clone().filter(|s| !s.is_empty());
        let region_generation = record
            .region_generations
            .as_ref()
            .and_then(|g| g.get(region))
            .and_then(Value::as_str)
            .map(str::to_owned);
        notes.push(format!(
            "{LEADER_EPOCH} is left out: only the running monitor knows its leader epoch, and it annotates every endpoint-owned object with it"
        ));
        if lifecycle_id.as_deref() == Some(PREVIEW_TOKEN) {
            notes.push(format!(
                "{LIFECYCLE_ID} and {REGION_GENERATION} show the preview's zeros: deploy mints both when it creates the record"
            ));
        }
        if lifecycle_id.is_none() {
            notes.push(format!(
                "the record has no lifecycle_id (a legacy record): the monitor migrates it first, so {LIFECYCLE_ID} is left out"
            ));
        }
        if region_generation.is_none() {
            notes.push(format!(
                "the record has no region generation for {region}: {REGION_GENERATION} is left out"
            ));
        }
        Owner {
            lifecycle_id,
            region_generation,
        }
    }

    /// All ownership annotations the record supplies.
    pub(crate) fn annotations(&self) -> BTreeMap<String, String> {
        let mut a = BTreeMap::new();
        if let Some(id) = &self.lifecycle_id {
            a.insert(LIFECYCLE_ID.to_owned(), id.clone());
        }
        if let Some(token) = &self.region_generation {
            a.insert(REGION_GENERATION.to_owned(), token.clone());
        }
        a
    }

    /// Only the lifecycle id (the generated admin Secret's provenance).
    pub(crate) fn lifecycle_annotation(&self) -> BTreeMap<String, String> {
        let mut a = BTreeMap::new();
        if let Some(id) = &self.lifecycle_id {
            a.insert(LIFECYCLE_ID.to_owned(), id.clone());
        }
        a
    }
}

pub(crate) fn map<const N: usize>(pairs: [(&str, &str); N]) -> BTreeMap<String, String> {
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Resource quantities by name (`cpu`, `memory`, ...).
pub(crate) fn quantities<const N: usize>(pairs: [(&str, &str); N]) -> BTreeMap<String, Quantity> {
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Quantity(v.to_owned())))
        .collect()
}

/// `app`, `project: gco`, `gco.io/type: inference` and, for a serving pod,
/// `gco.io/role`.
pub(crate) fn inference_labels(app: &str, role: Option<&str>) -> BTreeMap<String, String> {
    let mut labels = map([
        ("app", app),
        ("project", "gco"),
        ("gco.io/type", "inference"),
    ]);
    if let Some(role) = role {
        labels.insert("gco.io/role".to_owned(), role.to_owned());
    }
    labels
}

pub(crate) fn object_meta(
    name: &str,
    namespace: &str,
    labels: Option<BTreeMap<String, String>>,
    annotations: BTreeMap<String, String>,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(namespace.to_owned()),
        labels,
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..ObjectMeta::default()
    }
}

pub(crate) fn selector(labels: BTreeMap<String, String>) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels),
        ..LabelSelector::default()
    }
}
