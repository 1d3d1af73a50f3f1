//! The queries of the API's pages: what the console writes into a URL and
//! the backend documents (and reads, refusing bad values at their name).

use gco_spec::DesiredState;

use crate::route::{self, encode_segment};

/// The most records one list page may ask for: a record is about 2 KB of
/// JSON, so a page stays near 2 MB.
pub const MAX_LIST_PAGE: usize = 1000;

/// The most history entries one page may ask for.
pub const MAX_HISTORY_PAGE: usize = 500;

/// `GET /api/endpoints`: filters, and a page of the list. The default asks
/// for every record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct ListQuery {
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, schema_with = desired_states))]
    pub desired_state: Option<DesiredState>,
    pub region: Option<String>,
    /// At most this many records; the answer's `next` leads to the rest.
    /// Without it, every record.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 1000))]
    pub limit: Option<usize>,
    /// The `next` of an earlier page: this page starts after that place in
    /// the order (it holds even when that record is gone).
    pub after: Option<String>,
}

impl ListQuery {
    /// The list's path with this query.
    pub fn path(&self) -> String {
        with_query(
            route::ENDPOINTS,
            &[
                (
                    "desired_state",
                    self.desired_state.map(DesiredState::as_str),
                ),
                ("region", self.region.as_deref()),
                ("limit", self.limit.map(|n| n.to_string()).as_deref()),
                (route::AFTER_PARAMETER, self.after.as_deref()),
            ],
        )
    }
}

/// `GET /api/endpoints/{name}/history`: a page of an endpoint's changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct HistoryQuery {
    /// At most this many changes the console wrote (default 50), with the
    /// changes made outside the console found among them; the answer's
    /// `next` leads to older ones.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    pub limit: Option<usize>,
    /// The `next` of an earlier page: the changes before it.
    pub after: Option<String>,
}

impl HistoryQuery {
    /// The history's path of endpoint `name` with this query.
    pub fn path(&self, name: &str) -> String {
        with_query(
            &route::fill(route::HISTORY, &[(route::NAME_PARAMETER, name)]),
            &[
                ("limit", self.limit.map(|n| n.to_string()).as_deref()),
                (route::AFTER_PARAMETER, self.after.as_deref()),
            ],
        )
    }
}

/// `GET /api/history` (and its export): the filters of the audit view, and
/// a page of every endpoint's changes, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct AuditQuery {
    /// Only changes by this identity (as the entries name it, exactly).
    pub who: Option<String>,
    /// Only changes of this operation (`deploy`, `revert`, `scale`, ...;
    /// [`crate::operation::RECORDED`]).
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, schema_with = operations))]
    pub operation: Option<String>,
    /// Only this endpoint's changes (its exact name).
    pub endpoint: Option<String>,
    /// Only endpoints whose name contains this text (case ignored).
    pub q: Option<String>,
    /// From this time on: a UTC date (`2026-12-01`, from its start) or an
    /// RFC 3339 time (`2026-12-01T08:00:00+01:00`).
    pub from: Option<String>,
    /// Up to this time: a UTC date (`2026-12-07`, to its end) or an RFC 3339
    /// time (included).
    pub to: Option<String>,
    /// At most this many changes (default 50); the answer's `next` leads to
    /// older ones.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    pub limit: Option<usize>,
    /// The `next` of an earlier page: the changes before it.
    pub after: Option<String>,
}

/// The formats of the audit view's export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// JSON Lines: one change per line, as the page's items.
    JsonLines,
    /// CSV with a header row.
    Csv,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 2] = [ExportFormat::JsonLines, ExportFormat::Csv];

    /// Its name in the `format` parameter.
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::JsonLines => "jsonl",
            ExportFormat::Csv => "csv",
        }
    }

    pub fn parse(text: &str) -> Option<ExportFormat> {
        ExportFormat::ALL.into_iter().find(|f| f.as_str() == text)
    }
}

impl AuditQuery {
    /// The query's filters (not its page), as `(parameter, value)` pairs.
    pub fn filters(&self) -> [(&'static str, Option<&str>); 6] {
        [
            ("who", self.who.as_deref()),
            ("operation", self.operation.as_deref()),
            ("endpoint", self.endpoint.as_deref()),
            ("q", self.q.as_deref()),
            ("from", self.from.as_deref()),
            ("to", self.to.as_deref()),
        ]
    }

    /// The audit page's path with this query.
    pub fn path(&self) -> String {
        let limit = self.limit.map(|n| n.to_string());
        let mut pairs = self.filters().to_vec();
        pairs.push(("limit", limit.as_deref()));
        pairs.push((route::AFTER_PARAMETER, self.after.as_deref()));
        with_query(route::AUDIT, &pairs)
    }

    /// The export's path: every change the filters admit, in `format`.
    pub fn export_path(&self, format: ExportFormat) -> String {
        let mut pairs = self.filters().to_vec();
        pairs.push((route::FORMAT_PARAMETER, Some(format.as_str())));
        with_query(route::AUDIT_EXPORT, &pairs)
    }
}

/// `path?key=value&...` of the pairs with a value, each value encoded.
fn with_query(path: &str, pairs: &[(&str, Option<&str>)]) -> String {
    let mut url = path.to_owned();
    let mut separator = '?';
    for (key, value) in pairs {
        if let Some(value) = value {
            url.push(separator);
            url.push_str(key);
            url.push('=');
            url.push_str(&encode_segment(value));
            separator = '&';
        }
    }
    url
}

#[cfg(feature = "openapi")]
fn desired_states() -> utoipa::openapi::schema::ObjectBuilder {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(DesiredState::ALL.map(DesiredState::as_str)))
}

#[cfg(feature = "openapi")]
fn operations() -> utoipa::openapi::schema::ObjectBuilder {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(crate::operation::RECORDED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_names_what_it_has_encoded() {
        assert_eq!(ListQuery::default().path(), "/api/endpoints");
        let query = ListQuery {
            desired_state: Some(DesiredState::Stopped),
            region: Some("eu west".into()),
            limit: Some(100),
            after: Some("a+b/c".into()),
        };
        assert_eq!(
            query.path(),
            "/api/endpoints?desired_state=stopped&region=eu%20west&limit=100&after=a%2Bb%2Fc"
        );
        let history = HistoryQuery {
            limit: None,
            after: Some("x".into()),
        };
        assert_eq!(history.path("a/b"), "/api/endpoints/a%2Fb/history?after=x");
    }

    #[test]
    fn an_audit_query_names_its_filters() {
        let query = AuditQuery {
            who: Some("ada@example.com".into()),
            operation: Some("scale".into()),
            from: Some("2026-12-01".into()),
            limit: Some(20),
            after: Some("c".into()),
            ..AuditQuery::default()
        };
        assert_eq!(
            query.path(),
            "/api/history?who=ada%40example.com&operation=scale&from=2026-12-01&limit=20&after=c"
        );
        assert_eq!(
            query.export_path(ExportFormat::Csv),
            "/api/history/export?who=ada%40example.com&operation=scale&from=2026-12-01&format=csv"
        );
        assert_eq!(ExportFormat::parse("jsonl"), Some(ExportFormat::JsonLines));
        assert_eq!(ExportFormat::parse("xml"), None);
    }

    #[test]
    fn the_documented_bounds_are_the_constants() {
        // `param(maximum = ...)` takes a literal.
        assert_eq!(MAX_LIST_PAGE, 1000);
        assert_eq!(MAX_HISTORY_PAGE, 500);
    }
}
