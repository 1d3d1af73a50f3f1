//! The API's answers that both sides read: the error shape, the validation
//! result and the list. The backend writes them (through
//! [`gco_spec::json::to_value`], so the core's writer prints them as every
//! other answer). The console reads them by key path (a serde read of each
//! costs it kilobytes); its tests read what these types write.

use gco_spec::json::Value;
use serde::{Deserialize, Serialize};

/// Most diagnostics one list of an answer carries. Every item of a long
/// list can be wrong the same way (`extra_args` of 100,000 numbers): the
/// first ones show what to fix, and an answer 40 times the size of its
/// request would make the server an amplifier.
pub const MAX_LISTED_DIAGNOSTICS: usize = 100;

/// One thing wrong (or worth a warning) with a request, at the field it
/// names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Diagnostic {
    #[cfg_attr(feature = "openapi", schema(examples("mooncake.topology.prefill")))]
    pub path: String,
    pub message: String,
}

impl From<&gco_spec::Diagnostic> for Diagnostic {
    fn from(d: &gco_spec::Diagnostic) -> Diagnostic {
        Diagnostic {
            path: d.path.clone(),
            message: d.message.clone(),
        }
    }
}

/// At most [`MAX_LISTED_DIAGNOSTICS`] of `diagnostics`, and how many were
/// left out (`None` when none was).
pub fn listed<'a>(
    diagnostics: impl ExactSizeIterator<Item = &'a gco_spec::Diagnostic>,
) -> (Vec<Diagnostic>, Option<usize>) {
    let omitted = diagnostics.len().saturating_sub(MAX_LISTED_DIAGNOSTICS);
    let listed = diagnostics
        .take(MAX_LISTED_DIAGNOSTICS)
        .map(Diagnostic::from)
        .collect();
    (listed, (omitted > 0).then_some(omitted))
}

/// The one error shape of the API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Error))]
pub struct ErrorBody {
    /// What went wrong, in one line.
    pub error: String,
    // Required in what the API sends; read leniently.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub errors: Vec<Diagnostic>,
    /// How many errors were left out of `errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = u64, minimum = 1, required = false))]
    pub errors_omitted: Option<usize>,
}

/// `POST /api/validate`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Validation {
    pub ok: bool,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    /// The spec a deploy would store, when there is no error.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>, required = true))]
    pub spec: Option<Value>,
    /// How many errors were left out of `errors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = u64, minimum = 1, required = false))]
    pub errors_omitted: Option<usize>,
    /// How many warnings were left out of `warnings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = u64, minimum = 1, required = false))]
    pub warnings_omitted: Option<usize>,
}

/// `POST /api/manifests`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Manifests {
    pub region: String,
    /// One Kubernetes `v1` `List`, as `kubectl` prints YAML.
    pub yaml: String,
    /// The defaults used and the facts left out.
    pub notes: Vec<String>,
}

/// `GET /healthz`'s answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Health {
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub status: HealthStatus,
}

/// What `/healthz` says: the service answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    Ok,
}

/// A stored item that is no record this service reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Unreadable {
    pub endpoint_name: String,
    /// The attribute at fault, or empty when the item is no record at all.
    pub path: String,
    pub message: String,
}

/// How old the list answered is, while reads of the table fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Stale {
    /// Seconds since the table was last read whole.
    pub age_seconds: u64,
}

/// The header of an answer given from the console's last copy of the
/// endpoints table while the table cannot be read (`GET` of a record or
/// of the list, 304s included): since when its reads fail, and when the
/// copy answered was read. Absent while the table answers.
pub const STORE_UNREADABLE_HEADER: &str = "gco-store-unreadable";

/// [`STORE_UNREADABLE_HEADER`]'s value: an RFC 8941 dictionary of
/// strings, GCO timestamps (`since="2026-12-07T02:03:44.000000+00:00",
/// read="2026-12-07T02:03:41.000000+00:00"`); `read` only on an answer
/// from the copy (a failed read has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUnreadable {
    /// When the first read that failed was made.
    pub since: String,
    /// When the copy answered was read from the table.
    pub read: Option<String>,
}

impl StoreUnreadable {
    pub fn to_header(&self) -> String {
        match &self.read {
            Some(read) => format!("since=\"{}\", read=\"{read}\"", self.since),
            None => format!("since=\"{}\"", self.since),
        }
    }

    /// The header's value as [`Self::to_header`] writes it; `None` for any
    /// other text.
    pub fn parse(text: &str) -> Option<StoreUnreadable> {
        let member = |name: &str| -> Option<String> {
            text.split(',').find_map(|m| {
                let (key, value) = m.trim().split_once('=')?;
                let value = value.strip_prefix('"')?.strip_suffix('"')?;
                (key == name && !value.contains(['"', '\\'])).then(|| value.to_owned())
            })
        };
        Some(StoreUnreadable {
            since: member("since")?,
            read: member("read"),
        })
    }
}

/// `GET /api/endpoints`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Listing {
    /// Each record as a read of it answers.
    #[cfg_attr(feature = "openapi", schema(schema_with = records))]
    pub endpoints: Vec<Value>,
    /// Stored items that are no record this service reads (written by
    /// another program, say), on the first page whatever the filters:
    /// listed by name so that none is passed over, and a read of one is
    /// refused.
    pub unreadable: Vec<Unreadable>,
    /// Present when `limit` is given: the `after` of the next page, or null
    /// after the last one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, required = false))]
    pub next: Option<Option<String>>,
    /// Null while the list is current; while reads of the table fail, the
    /// last list read whole is answered, and this says how old it is.
    pub stale: Option<Stale>,
}

#[cfg(feature = "openapi")]
fn records() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(utoipa::openapi::Ref::from_schema_name("Record"))
}

/// A member that is present, null or not (serde reads a null as absent).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use gco_spec::json::{parse, to_value};

    use super::*;

    fn read<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
        T::deserialize(value).map_err(|e| e.to_string())
    }

    #[test]
    fn an_error_writes_as_the_api_answers_and_reads_back() {
        let body = ErrorBody {
            error: "the request has 1 error".into(),
            errors: vec![Diagnostic {
                path: "port".into(),
                message: "port must be an integer".into(),
            }],
            errors_omitted: None,
        };
        let text = to_value(&body).unwrap().to_json();
        assert_eq!(
            text,
            r#"{"error": "the request has 1 error", "errors": [{"path": "port", "message": "port must be an integer"}]}"#
        );
        assert_eq!(read::<ErrorBody>(&parse(&text).unwrap()), Ok(body));
    }

    #[test]
    fn a_listing_keeps_next_apart_from_its_absence() {
        let text = r#"{"endpoints": [{"endpoint_name": "a", "n": 12345678901234567890}], "unreadable": [], "next": null, "stale": null}"#;
        let listing: Listing = read(&parse(text).unwrap()).unwrap();
        assert_eq!(listing.next, Some(None));
        assert_eq!(to_value(&listing).unwrap().to_json(), text);
        let unpaged = r#"{"endpoints": [], "unreadable": [], "stale": {"age_seconds": 3}}"#;
        let listing: Listing = read(&parse(unpaged).unwrap()).unwrap();
        assert_eq!(listing.next, None);
        assert_eq!(listing.stale, Some(Stale { age_seconds: 3 }));
        assert_eq!(to_value(&listing).unwrap().to_json(), unpaged);
    }

    #[test]
    fn the_store_unreadable_header_reads_back() {
        let header = StoreUnreadable {
            since: "2026-12-07T02:03:44.000000+00:00".into(),
            read: Some("2026-12-07T02:03:41.000000+00:00".into()),
        };
        let text = header.to_header();
        assert_eq!(
            text,
            r#"since="2026-12-07T02:03:44.000000+00:00", read="2026-12-07T02:03:41.000000+00:00""#
        );
        assert_eq!(StoreUnreadable::parse(&text), Some(header));
        assert_eq!(StoreUnreadable::parse("since=1"), None);
        let failed = StoreUnreadable {
            since: "2026-12-07T02:03:44.000000+00:00".into(),
            read: None,
        };
        assert_eq!(
            failed.to_header(),
            r#"since="2026-12-07T02:03:44.000000+00:00""#
        );
        assert_eq!(StoreUnreadable::parse(&failed.to_header()), Some(failed));
    }

    #[test]
    fn a_list_is_cut_at_its_most() {
        let many = vec![gco_spec::Diagnostic::error("x", "bad"); MAX_LISTED_DIAGNOSTICS + 3];
        let (first, omitted) = listed(many.iter());
        assert_eq!((first.len(), omitted), (MAX_LISTED_DIAGNOSTICS, Some(3)));
        assert_eq!(listed(many[..2].iter()).1, None);
    }
}
