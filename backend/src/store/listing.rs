//! The endpoint list's order, filters and pages, as pure functions of the
//! stored records: [`select`] picks one answer from records in any order
//! (what a scan gives), [`select_ordered`] from records already in the
//! list's order (what an index keyed by [`Cursor`] gives).

use std::cmp::{Ordering, Reverse};
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gco_spec::{DesiredState, Record};

use super::{Stored, Unreadable};

pub use gco_api::MAX_LIST_PAGE as MAX_PAGE;

/// Which records a listing holds.
#[derive(Debug, Default)]
pub struct Filter<'a> {
    pub state: Option<DesiredState>,
    pub region: Option<&'a str>,
}

impl Filter<'_> {
    fn admits(&self, r: &Record) -> bool {
        self.state.is_none_or(|s| r.desired_state == s)
            && self
                .region
                .is_none_or(|g| r.target_regions.iter().any(|t| t == g))
    }
}

/// Where a page starts and how long it may be; the default is the whole
/// list in one answer.
#[derive(Debug, Default)]
pub struct Page {
    pub after: Option<Cursor>,
    pub limit: Option<usize>,
}

/// A place in the list's order: the last record of a page. Clients get its
/// text as `next` and send it back as `after`; it names a place, not a
/// record, so a page still follows on when that record is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    created_at: String,
    endpoint_name: String,
}

impl Cursor {
    /// The place of `r`: the key of an index in the list's order.
    pub fn of(r: &Record) -> Cursor {
        Cursor {
            created_at: r.created_at.clone(),
            endpoint_name: r.endpoint_name.clone(),
        }
    }

    /// The place of a record created at `created_at` and named
    /// `endpoint_name`.
    pub fn at(created_at: &str, endpoint_name: &str) -> Cursor {
        Cursor {
            created_at: created_at.to_owned(),
            endpoint_name: endpoint_name.to_owned(),
        }
    }

    /// The text of [`Cursor::to_text`], or `None` for any other.
    pub fn parse(text: &str) -> Option<Cursor> {
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        let place = String::from_utf8(bytes).ok()?;
        let (length, rest) = place.split_once(':')?;
        let at = length.parse().ok().filter(|n| rest.is_char_boundary(*n))?;
        let (created_at, name) = rest.split_at(at);
        (!name.is_empty()).then(|| Cursor {
            created_at: created_at.to_owned(),
            endpoint_name: name.to_owned(),
        })
    }

    /// Opaque to clients: base64url (no padding, so nothing in it needs
    /// escaping in a URL) of `created_at` after its length, then the name,
    /// so that whatever another writer put in `created_at` reads back.
    pub fn to_text(&self) -> String {
        let place = format!(
            "{}:{}{}",
            self.created_at.len(),
            self.created_at,
            self.endpoint_name
        );
        URL_SAFE_NO_PAD.encode(place)
    }

    fn precedes(&self, r: &Record) -> bool {
        place(&self.created_at, &self.endpoint_name) < place(&r.created_at, &r.endpoint_name)
    }
}

/// Cursors sort in the list's order, so an ordered map keyed by them is the
/// list, and the records after a cursor are a range of it.
impl Ord for Cursor {
    fn cmp(&self, other: &Cursor) -> Ordering {
        place(&self.created_at, &self.endpoint_name)
            .cmp(&place(&other.created_at, &other.endpoint_name))
    }
}

impl PartialOrd for Cursor {
    fn partial_cmp(&self, other: &Cursor) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A place in the list's order: newest first, then by name, so equal
/// timestamps still give one order and a cursor one place.
fn place<'r>(created_at: &'r str, name: &'r str) -> (Reverse<&'r str>, &'r str) {
    (Reverse(created_at), name)
}

fn by_order(a: &Arc<Stored>, b: &Arc<Stored>) -> Ordering {
    let (a, b) = (&a.record, &b.record);
    place(&a.created_at, &a.endpoint_name).cmp(&place(&b.created_at, &b.endpoint_name))
}

/// One answer of a listing: its records in order (each with its JSON, sent
/// as it is), the cursor of the next page when the limit cut the list, and
/// (on the first page) the stored items that are no readable record.
#[derive(Debug)]
pub struct Listing {
    pub records: Vec<Arc<Stored>>,
    pub next: Option<Cursor>,
    pub unreadable: Vec<Unreadable>,
}

impl Listing {
    /// This listing with the stored items that are no record when it is a
    /// first page: they have no place in the order to page by, nor a state
    /// or region to filter by, so the first page reports them all, once.
    pub fn reporting(
        mut self,
        page: &Page,
        unreadable: impl FnOnce() -> Vec<Unreadable>,
    ) -> Listing {
        if page.after.is_none() {
            self.unreadable = unreadable();
        }
        self
    }
}

/// The page of `records` that `filter` and `page` select. With a limit, only
/// that many records are put in order (a selection, then a sort of the few).
pub fn select(mut records: Vec<Arc<Stored>>, filter: &Filter<'_>, page: &Page) -> Listing {
    records.retain(|s| {
        filter.admits(&s.record) && page.after.as_ref().is_none_or(|c| c.precedes(&s.record))
    });
    let cut = page.limit.is_some_and(|limit| records.len() > limit);
    if let Some(limit) = page.limit.filter(|_| cut) {
        records.select_nth_unstable_by(limit, by_order);
        records.truncate(limit);
    }
    records.sort_unstable_by(by_order);
    let next = cut
        .then(|| records.last().map(|s| Cursor::of(&s.record)))
        .flatten();
    Listing {
        records,
        next,
        unreadable: Vec::new(),
    }
}

/// [`select`] for `records` already in the list's order and after the
/// page's cursor (the caller starts there): only what the page holds, and
/// one more to know there is a next page, is read.
pub fn select_ordered<'s>(
    records: impl Iterator<Item = &'s Arc<Stored>>,
    filter: &Filter<'_>,
    limit: Option<usize>,
) -> Listing {
    let mut admitted = records.filter(|s| filter.admits(&s.record)).map(Arc::clone);
    let Some(limit) = limit else {
        return Listing {
            records: admitted.collect(),
            next: None,
            unreadable: Vec::new(),
        };
    };
    let records: Vec<_> = admitted.by_ref().take(limit).collect();
    let next = admitted
        .next()
        .and_then(|_| records.last().map(|s| Cursor::of(&s.record)));
    Listing {
        records,
        next,
        unreadable: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gco_spec::json::parse;

    fn record(name: &str, created_at: &str, state: &str, region: &str) -> Arc<Stored> {
        let text = format!(
            r#"{{"endpoint_name": "{name}", "desired_state": "{state}", "target_regions": ["{region}"],
                "namespace": "inference", "spec": {{"image": "x"}}, "created_at": "{created_at}",
                "updated_at": "{created_at}"}}"#
        );
        Arc::new(Stored::of(
            Record::from_value(&parse(&text).unwrap()).unwrap(),
        ))
    }

    fn names(listing: &Listing) -> Vec<&str> {
        listing
            .records
            .iter()
            .map(|s| s.record.endpoint_name.as_str())
            .collect()
    }

    fn records() -> Vec<Arc<Stored>> {
        vec![
            record(
                "b",
                "2026-01-01T00:00:00.000001+00:00",
                "running",
                "us-east-1",
            ),
            record(
                "old",
                "2025-06-01T00:00:00.000000+00:00",
                "stopped",
                "eu-west-1",
            ),
            record(
                "a",
                "2026-01-01T00:00:00.000001+00:00",
                "running",
                "eu-west-1",
            ),
            record(
                "new",
                "2026-03-01T00:00:00.000000+00:00",
                "deploying",
                "us-east-1",
            ),
        ]
    }

    #[test]
    fn newest_first_then_by_name() {
        let all = select(records(), &Filter::default(), &Page::default());
        assert_eq!(names(&all), ["new", "a", "b", "old"]);
        assert_eq!(all.next, None);
    }

    #[test]
    fn pages_follow_on_and_cover_the_list_once() {
        for limit in 1..=5 {
            let mut seen = Vec::new();
            let mut after = None;
            loop {
                let page = Page {
                    after,
                    limit: Some(limit),
                };
                let listing = select(records(), &Filter::default(), &page);
                assert!(listing.records.len() <= limit);
                seen.extend(names(&listing).into_iter().map(str::to_owned));
                // The cursor goes through its text, as a client sends it.
                match listing.next {
                    Some(next) => after = Some(Cursor::parse(&next.to_text()).unwrap()),
                    None => break,
                }
            }
            assert_eq!(seen, ["new", "a", "b", "old"], "limit {limit}");
        }
    }

    /// Records another writer left without a GCO timestamp still page on
    /// (each `next` sent back as its text, as the console does).
    #[test]
    fn pages_follow_on_past_records_without_a_timestamp() {
        let odd = || {
            let mut all = records();
            for (name, created_at) in [
                ("no-time", ""),
                ("no-zone", "2025-01-02T00:00:00.5"),
                ("tilde", "a~b%"),
            ] {
                all.push(record(name, created_at, "running", "us-east-1"));
            }
            all
        };
        let whole = names(&select(odd(), &Filter::default(), &Page::default()))
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>();
        let (mut seen, mut after) = (Vec::new(), None);
        loop {
            let page = select(
                odd(),
                &Filter::default(),
                &Page {
                    after,
                    limit: Some(1),
                },
            );
            seen.extend(names(&page).into_iter().map(str::to_owned));
            match page.next {
                Some(next) => after = Some(Cursor::parse(&next.to_text()).expect("its own next")),
                None => break,
            }
        }
        assert_eq!(seen, whole);
        assert_eq!(whole.len(), 7);
    }

    #[test]
    fn a_cursor_names_a_place_not_a_record() {
        let first = select(
            records(),
            &Filter::default(),
            &Page {
                after: None,
                limit: Some(2),
            },
        );
        let next = first.next.unwrap();
        assert_eq!(next.endpoint_name, "a");
        // `a` is gone by the time the next page is asked for.
        let rest: Vec<_> = records()
            .into_iter()
            .filter(|s| s.record.endpoint_name != "a")
            .collect();
        let page = select(
            rest,
            &Filter::default(),
            &Page {
                after: Some(next),
                limit: Some(2),
            },
        );
        assert_eq!(names(&page), ["b", "old"]);
        assert_eq!(page.next, None, "nothing is left after the last record");
    }

    #[test]
    fn filters_apply_before_the_page() {
        let filter = Filter {
            state: Some(DesiredState::Running),
            region: None,
        };
        let page = select(
            records(),
            &filter,
            &Page {
                after: None,
                limit: Some(1),
            },
        );
        assert_eq!(names(&page), ["a"]);
        let filter = Filter {
            state: None,
            region: Some("us-east-1"),
        };
        assert_eq!(
            names(&select(records(), &filter, &Page::default())),
            ["new", "b"]
        );
    }

    /// Every page of every filter, from an index keyed by cursors, is the
    /// page `select` picks from the records in any order.
    #[test]
    fn an_ordered_index_gives_the_pages_select_gives() {
        use std::collections::BTreeMap;
        use std::ops::Bound::{Excluded, Unbounded};
        let index: BTreeMap<Cursor, Arc<Stored>> = records()
            .into_iter()
            .map(|s| (Cursor::of(&s.record), s))
            .collect();
        let filters = [
            Filter::default(),
            Filter {
                state: Some(DesiredState::Running),
                region: None,
            },
            Filter {
                state: None,
                region: Some("us-east-1"),
            },
        ];
        let cursors = std::iter::once(None).chain(index.keys().cloned().map(Some));
        for (filter, after) in filters
            .iter()
            .flat_map(|f| cursors.clone().map(move |c| (f, c)))
        {
            for limit in [None, Some(1), Some(2), Some(3), Some(4), Some(5)] {
                let page = Page {
                    after: after.clone(),
                    limit,
                };
                let range = match &after {
                    Some(c) => index.range((Excluded(c.clone()), Unbounded)),
                    None => index.range(..),
                };
                let ordered = select_ordered(range.map(|(_, s)| s), filter, limit);
                let selected = select(records(), filter, &page);
                assert_eq!(names(&ordered), names(&selected), "{filter:?} {page:?}");
                assert_eq!(ordered.next, selected.next, "{filter:?} {page:?}");
            }
        }
    }

    #[test]
    fn a_cursor_is_opaque_and_refuses_other_text() {
        let c = Cursor {
            created_at: "2026-01-01T00:00:00.000001+00:00".to_owned(),
            endpoint_name: "a".to_owned(),
        };
        let text = c.to_text();
        assert!(
            text.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{text}"
        );
        assert_eq!(Cursor::parse(&text), Some(c));
        let encode = |s: &str| URL_SAFE_NO_PAD.encode(s);
        for bad in [
            String::new(),
            "2026-01-01T00:00:00.000001+00:00~a".to_owned(),
            "not base64!".to_owned(),
            encode("no length"),
            encode("5:short"),
            encode("9:toolong"),
            encode("x:a"),
            encode("1:\u{e9}a"),
        ] {
            assert_eq!(Cursor::parse(&bad), None, "{bad:?}");
        }
    }

    /// Whatever another writer left in `created_at`, the `next` a page
    /// gives is read back as the same place.
    #[test]
    fn every_place_has_a_text_that_reads_back() {
        for created_at in [
            "",
            "2025-01-02T00:00:00.5",
            "yesterday",
            "a~b",
            "50% done",
            "%7E",
            "2026-01-01T00:00:00.000001+00:00",
            "\u{e9}t\u{e9} ~ %20",
        ] {
            for name in ["a", "odd~name", "%7E"] {
                let c = Cursor {
                    created_at: created_at.to_owned(),
                    endpoint_name: name.to_owned(),
                };
                assert_eq!(
                    Cursor::parse(&c.to_text()).as_ref(),
                    Some(&c),
                    "{}",
                    c.to_text()
                );
            }
        }
    }
}
