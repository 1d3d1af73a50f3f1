//! The audit view (`GET /api/history`): every endpoint's changes, newest
//! first, filtered by who, operation, endpoint, a search over endpoint
//! names and a time range, a page at a time, and its export.
//!
//! The stores read their history by time, never by scanning it: the
//! embedded store keeps an index by entry id (ids begin with the change's
//! time), DynamoDB a global secondary index keyed by `operation` and
//! `change_id` (README, "The audit view", says why that key). A read is
//! one or more *parts*, each newest first ([`PartRead`]); [`merge`] puts
//! them in one order and cuts the page where every part has been read.
//! A part stops after [`READ_BUDGET`] index items, so a filter that admits
//! few changes answers a short page with a `next` rather than read the
//! whole history in one request.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gco_api::{AuditEntry, HistoryEntry, operation};

/// What the audit view admits. Times are entry-id bounds: an id begins
/// with the change's time, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub who: Option<String>,
    pub operation: Option<String>,
    pub endpoint: Option<String>,
    /// Lower-case text an endpoint's name contains.
    pub search: Option<String>,
    /// Ids from this one on.
    pub from_id: Option<String>,
    /// Ids below this one.
    pub to_id: Option<String>,
}

impl AuditFilter {
    /// Whether `entry` is one of the changes asked for.
    pub fn admits(&self, entry: &AuditEntry) -> bool {
        let is = |want: &Option<String>, have: Option<&str>| {
            want.as_deref().is_none_or(|w| Some(w) == have)
        };
        is(&self.who, entry.who.as_deref())
            && is(&self.operation, Some(&entry.operation))
            && is(&self.endpoint, Some(&entry.endpoint))
            && self
                .search
                .as_deref()
                .is_none_or(|s| entry.endpoint.to_lowercase().contains(s))
            && self
                .from_id
                .as_deref()
                .is_none_or(|f| entry.id.as_str() >= f)
            && self.to_id.as_deref().is_none_or(|t| entry.id.as_str() < t)
    }

    /// The operations whose changes can be admitted: the index's
    /// partitions a read needs on DynamoDB.
    pub fn operations(&self) -> Vec<&str> {
        match &self.operation {
            Some(op) => vec![op.as_str()],
            None => operation::RECORDED.to_vec(),
        }
    }
}

/// A place in the audit view's order: newest first by entry id, then by
/// endpoint name (two endpoints' entries could share an id).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub id: String,
    pub endpoint: String,
}

impl Position {
    pub fn of(entry: &AuditEntry) -> Position {
        Position {
            id: entry.id.clone(),
            endpoint: entry.endpoint.clone(),
        }
    }

    /// The page cursor: opaque to clients, base64url (safe in a URL).
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{}\n{}", self.id, self.endpoint))
    }

    /// A cursor read back; `None` when it is no [`Position::encode`].
    pub fn decode(text: &str) -> Option<Position> {
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (id, endpoint) = text.split_once('\n')?;
        (gco_api::is_entry_id(id) && !endpoint.is_empty()).then(|| Position {
            id: id.to_owned(),
            endpoint: endpoint.to_owned(),
        })
    }
}

/// The most index items one part of a read looks at: about 300 KB of
/// DynamoDB index items, a few reads of it.
pub const READ_BUDGET: usize = 1000;

/// What one part of a read found: the admitted changes, newest first, and
/// how far it read (`None`: to its end). Every item of the part at or
/// above `frontier` was looked at.
#[derive(Debug, Clone, Default)]
pub struct PartRead {
    pub matches: Vec<AuditEntry>,
    pub frontier: Option<Position>,
}

/// A page of the audit view, and where the next begins (strictly below).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditRead {
    pub items: Vec<AuditEntry>,
    pub next: Option<Position>,
}

/// The parts in one order, newest first, at most `limit`: only changes no
/// part can still have a newer one than (at or above every frontier), so a
/// page never skips one; `next` continues below the last one given, or
/// below the highest frontier when the parts stopped before the page was
/// full.
pub fn merge(parts: Vec<PartRead>, limit: usize) -> AuditRead {
    let floor = parts.iter().filter_map(|p| p.frontier.clone()).max();
    let mut items: Vec<AuditEntry> = parts
        .into_iter()
        .flat_map(|p| p.matches)
        .filter(|e| floor.as_ref().is_none_or(|f| Position::of(e) >= *f))
        .collect();
    items.sort_by_key(|e| std::cmp::Reverse(Position::of(e)));
    if items.len() > limit {
        items.truncate(limit);
        let next = items.last().map(Position::of);
        return AuditRead { items, next };
    }
    AuditRead { items, next: floor }
}

/// A stored entry of endpoint `endpoint` as the audit view lists it.
pub fn of_entry(endpoint: &str, entry: &HistoryEntry) -> AuditEntry {
    AuditEntry {
        endpoint: endpoint.to_owned(),
        id: entry.id.clone(),
        at: entry.at.clone(),
        who: entry.who.clone(),
        operation: entry.operation.clone(),
        request_id: entry.request_id.clone(),
        client_request_id: entry.client_request_id.clone(),
    }
}

/// The id bound of a time the client gave: a UTC date (`2026-12-01`, its
/// start; with `end`, the next day's start) or an RFC 3339 time with `Z` or
/// an offset (with `end`, the microsecond after it, so it is included).
/// `None` when the text is neither.
pub fn id_bound(text: &str, end: bool) -> Option<String> {
    let micros = if text.len() == 10 {
        let start = gco_spec::time::parse_timestamp(&format!("{text}T00:00:00Z"))?;
        if end { start + 86_400_000_000 } else { start }
    } else {
        let (time, offset_minutes) = match text.strip_suffix('Z') {
            Some(t) => (t, 0),
            None => {
                let at = text.len().checked_sub(6)?;
                let (time, offset) = (text.get(..at)?, text.get(at..)?);
                let sign = match offset.as_bytes()[0] {
                    b'+' => 1,
                    b'-' => -1,
                    _ => return None,
                };
                let (h, m) = offset[1..].split_once(':')?;
                let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
                if h > 23 || m > 59 || offset[1..].len() != 5 {
                    return None;
                }
                (time, sign * (h * 60 + m))
            }
        };
        if !time.contains('T') {
            return None;
        }
        let at =
            gco_spec::time::parse_timestamp(&format!("{time}Z"))? - offset_minutes * 60_000_000;
        if end { at + 1 } else { at }
    };
    let time = gco_spec::time::format_timestamp(micros);
    Some(format!("{}Z", time.strip_suffix("+00:00").unwrap_or(&time)))
}

/// The export's CSV columns, in order.
pub const CSV_COLUMNS: [&str; 7] = [
    "at",
    "endpoint",
    "operation",
    "who",
    "id",
    "request_id",
    "client_request_id",
];

/// One CSV row (RFC 4180, CRLF-terminated) of `entry`, in [`CSV_COLUMNS`]'
/// order.
pub fn csv_row(entry: &AuditEntry) -> String {
    let cells = [
        Some(entry.at.as_str()),
        Some(entry.endpoint.as_str()),
        Some(entry.operation.as_str()),
        entry.who.as_deref(),
        Some(entry.id.as_str()),
        entry.request_id.as_deref(),
        entry.client_request_id.as_deref(),
    ];
    let mut row = cells.map(|c| csv_cell(c.unwrap_or(""))).join(",");
    row.push_str("\r\n");
    row
}

/// The header row.
pub fn csv_header() -> String {
    format!("{}\r\n", CSV_COLUMNS.join(","))
}

/// A cell quoted when it must be; one a spreadsheet would read as a
/// formula (`=`, `+`, `-`, `@`, tab, CR at its start) is prefixed with `'`
/// (OWASP's advice on CSV injection): an identity is whatever a provider
/// says, and an export is opened in spreadsheets.
fn csv_cell(text: &str) -> String {
    let guarded = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if guarded.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

/// One JSON Lines row: the entry as the page lists it.
pub fn json_line(entry: &AuditEntry) -> String {
    let mut line = serde_json::to_string(entry).expect("an entry is JSON");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(endpoint: &str, id: &str, op: &str) -> AuditEntry {
        AuditEntry {
            endpoint: endpoint.into(),
            id: id.into(),
            at: String::new(),
            who: Some("ada".into()),
            operation: op.into(),
            request_id: None,
            client_request_id: None,
        }
    }

    #[test]
    fn a_merge_never_skips_what_a_part_has_not_read() {
        // Part a read down to id 5; part b to its end.
        let a = PartRead {
            matches: vec![entry("x", "9", "scale"), entry("x", "6", "scale")],
            frontier: Some(Position {
                id: "5".into(),
                endpoint: "x".into(),
            }),
        };
        let b = PartRead {
            matches: vec![entry("y", "8", "stop"), entry("y", "3", "stop")],
            frontier: None,
        };
        let read = merge(vec![a.clone(), b.clone()], 10);
        let ids: Vec<&str> = read.items.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["9", "8", "6"], "3 waits: a may have 4 unread");
        assert_eq!(read.next.as_ref().map(|p| p.id.as_str()), Some("5"));
        let read = merge(vec![a, b], 2);
        assert_eq!(read.items.len(), 2);
        assert_eq!(read.next.map(|p| p.id), Some("8".into()));
        let done = merge(vec![PartRead::default()], 5);
        assert_eq!(done, AuditRead::default());
    }

    #[test]
    fn cursors_read_back_and_nothing_else_does() {
        let p = Position {
            id: "2026-12-06T19:30:00.123456Z.8f2a61c0".into(),
            endpoint: "chat".into(),
        };
        assert_eq!(Position::decode(&p.encode()), Some(p));
        for bad in ["", "not base64!", "YQ", &URL_SAFE_NO_PAD.encode("id\n")] {
            assert_eq!(Position::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_are_id_bounds() {
        assert_eq!(
            id_bound("2026-12-01", false).as_deref(),
            Some("2026-12-01T00:00:00.000000Z")
        );
        assert_eq!(
            id_bound("2026-12-01", true).as_deref(),
            Some("2026-12-02T00:00:00.000000Z")
        );
        assert_eq!(
            id_bound("2026-12-01T08:00:00+01:00", false).as_deref(),
            Some("2026-12-01T07:00:00.000000Z")
        );
        assert_eq!(
            id_bound("2026-12-01T08:00:00.5Z", true).as_deref(),
            Some("2026-12-01T08:00:00.500001Z")
        );
        for bad in [
            "yesterday",
            "2026-13-01",
            "2026-12-01T25:00:00Z",
            "2026-12-01T08:00:00+1:00",
            "2026-12-01 08:00",
        ] {
            assert_eq!(id_bound(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn a_filter_admits_by_every_field() {
        let e = entry("chat-prod", "2026-12-01T10:00:00.000000Z.00000000", "scale");
        let all = AuditFilter::default();
        assert!(all.admits(&e));
        assert_eq!(all.operations().len(), operation::RECORDED.len());
        let f = |f: AuditFilter| f.admits(&e);
        assert!(f(AuditFilter {
            search: Some("prod".into()),
            ..all.clone()
        }));
        assert!(!f(AuditFilter {
            search: Some("dev".into()),
            ..all.clone()
        }));
        assert!(!f(AuditFilter {
            who: Some("bob".into()),
            ..all.clone()
        }));
        assert!(!f(AuditFilter {
            operation: Some("stop".into()),
            ..all.clone()
        }));
        assert!(f(AuditFilter {
            from_id: id_bound("2026-12-01", false),
            to_id: id_bound("2026-12-01", true),
            ..all.clone()
        }));
        assert!(!f(AuditFilter {
            to_id: id_bound("2026-11-30", true),
            ..all.clone()
        }));
    }

    #[test]
    fn csv_cells_are_quoted_and_never_formulas() {
        let mut e = entry("chat", "1", "scale");
        e.who = Some("=HYPERLINK(\"x\")".into());
        e.client_request_id = Some("a,b".into());
        assert_eq!(
            csv_row(&e),
            ",chat,scale,\"'=HYPERLINK(\"\"x\"\")\",1,,\"a,b\"\r\n"
        );
        assert_eq!(
            csv_header(),
            "at,endpoint,operation,who,id,request_id,client_request_id\r\n"
        );
    }
}
