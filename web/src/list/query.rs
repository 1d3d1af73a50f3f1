//! The list's query, as it stands in the URL
//! (`?q=chat&state=running&region=us-east-1&sort=name`), and the API query
//! it makes.

use gco_api::route::encode_segment;
use gco_spec::DesiredState;

use crate::route::query_value;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Query {
    pub search: String,
    pub state: String,
    pub region: String,
    pub sort: Sort,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Sort {
    /// Newest first: the server's order, which pages.
    #[default]
    Created,
    Name,
    State,
}

impl Sort {
    /// Each sort, its key in the URL and its label.
    pub const ALL: [(Sort, &'static str, &'static str); 3] = [
        (Sort::Created, "created", "newest first"),
        (Sort::Name, "name", "name"),
        (Sort::State, "state", "state"),
    ];

    pub fn key(self) -> &'static str {
        Sort::ALL
            .iter()
            .find(|(s, ..)| *s == self)
            .map_or("created", |(_, k, _)| k)
    }

    /// The sort of a key (newest first for one it does not know).
    pub fn of_key(key: &str) -> Sort {
        Sort::ALL
            .iter()
            .find(|(_, k, _)| *k == key)
            .map_or(Sort::Created, |(s, ..)| *s)
    }
}

impl Query {
    /// The query in a URL's query string (`?...`).
    pub fn from_search(search: &str) -> Query {
        let get = |k: &str| query_value(search, k).unwrap_or_default();
        Query {
            search: get("q"),
            state: get("state"),
            region: get("region"),
            sort: Sort::of_key(&get("sort")),
        }
    }

    /// The list's URL for it (empty parts left out).
    pub fn to_url(&self) -> String {
        let sort = if self.sort == Sort::Created {
            ""
        } else {
            self.sort.key()
        };
        let parts: Vec<String> = [
            ("q", self.search.as_str()),
            ("state", self.state.as_str()),
            ("region", self.region.trim()),
            ("sort", sort),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", encode_segment(v)))
        .collect();
        if parts.is_empty() {
            "/".to_owned()
        } else {
            format!("/?{}", parts.join("&"))
        }
    }

    /// Whether the list needs every record (it searches or sorts itself).
    pub fn needs_all(&self) -> bool {
        !self.search.trim().is_empty() || self.sort != Sort::Created
    }

    /// The API query for the server's filters, asking for `limit` records
    /// (every one when `None`). A state the API does not know filters
    /// nothing, as the state filter shows it.
    pub fn api_query(&self, limit: Option<usize>) -> gco_api::ListQuery {
        let region = self.region.trim();
        gco_api::ListQuery {
            desired_state: DesiredState::parse(&self.state),
            region: (!region.is_empty()).then(|| region.to_owned()),
            limit,
            after: None,
        }
    }

    pub fn filtered(&self) -> bool {
        !self.search.trim().is_empty() || !self.state.is_empty() || !self.region.trim().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(search: &str, state: &str, region: &str, sort: Sort) -> Query {
        Query {
            search: search.into(),
            state: state.into(),
            region: region.into(),
            sort,
        }
    }

    #[test]
    fn a_query_survives_its_url() {
        for q in [
            Query::default(),
            query("chat", "", "", Sort::Created),
            query("a b&c=d/é", "running", "us-east-1", Sort::Name),
            query("", "stopped", "", Sort::State),
        ] {
            let url = q.to_url();
            let search = url.strip_prefix('/').unwrap();
            assert_eq!(Query::from_search(search), q, "{url}");
        }
    }

    #[test]
    fn the_url_leaves_out_the_defaults() {
        assert_eq!(Query::default().to_url(), "/");
        assert_eq!(query("", "", "  ", Sort::Created).to_url(), "/");
        assert_eq!(
            query("pd 1", "running", " eu-west-1 ", Sort::Name).to_url(),
            "/?q=pd%201&state=running&region=eu-west-1&sort=name"
        );
    }

    #[test]
    fn a_url_query_reads_as_the_browser_wrote_it() {
        assert_eq!(
            Query::from_search("?q=pd+1&sort=state&other=x"),
            query("pd 1", "", "", Sort::State)
        );
        // A sort the console does not know is the default.
        assert_eq!(Query::from_search("?sort=size").sort, Sort::Created);
        assert_eq!(Query::from_search(""), Query::default());
    }

    #[test]
    fn the_server_filters_and_pages_the_default_view_only() {
        let q = query("", "running", " us-east-1 ", Sort::Created);
        assert!(!q.needs_all());
        assert!(q.filtered());
        assert_eq!(
            q.api_query(Some(100)).path(),
            "/api/endpoints?desired_state=running&region=us-east-1&limit=100"
        );
        assert_eq!(Query::default().api_query(None).path(), "/api/endpoints");
        assert_eq!(
            query("", "paused", "", Sort::Created).api_query(None),
            gco_api::ListQuery::default()
        );
        // A search or another sort is the console's: it needs every record.
        assert!(query("chat", "", "", Sort::Created).needs_all());
        assert!(query("", "", "", Sort::Name).needs_all());
        assert!(!query("", "", "", Sort::Name).filtered());
    }
}
