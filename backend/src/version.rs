//! A record's version, as the `ETag` clients hold and send back.
//!
//! A record has two kinds of writers. Changes (this console, GCO's CLI) move
//! what it asks for: its spec, state and regions. GCO's monitors write
//! `region_status` and move `updated_at` on every pass, about every 15 s per
//! region (GCO_FACTS section 3). A tag that moved with every write would go
//! stale on an open page within seconds, and every change sent from it would
//! be refused; so a tag has two halves,
//! `"<lifecycle>-<content digest>.<record digest>"`:
//!
//! - the content digest covers [`CONTENT_ATTRIBUTES`], what a change depends
//!   on: `If-Match` compares only the part up to the `.`, so a change holds
//!   while nothing it depends on changed, whoever wrote the status since;
//! - the record digest covers the whole record as it is sent, so any write
//!   (a monitor's included) gives a new tag: `If-None-Match` compares the
//!   whole tag, and a page polling with it gets a 304 only when nothing
//!   changed at all.
//!
//! Digests are XXH3 (64 bits) of JSON text. XXH3's output is fixed by its
//! specification, so a tag is the same from every console on one table and
//! across restarts and releases; std's hashers promise neither. They are no
//! defence against a writer crafting collisions, which a writer of the table
//! has no need for: it can change the record outright.

use gco_spec::Record;
use gco_spec::json::Value;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use xxhash_rust::xxh3::xxh3_64;

/// The attributes a change depends on, in the order they are digested: the
/// lifecycle, the state, the regions and their tokens, and the spec with
/// what goes with it, and a delete's generation and regions. Not
/// `updated_at` nor `region_status`: the monitors move both on every pass.
pub const CONTENT_ATTRIBUTES: [&str; 10] = [
    "lifecycle_id",
    "desired_state",
    "target_regions",
    "cleanup_regions",
    "region_generations",
    "namespace",
    "labels",
    "spec",
    "deletion_generation",
    "deletion_regions",
];

/// How much of the lifecycle id a tag carries: GCO's ids are 64 random hex
/// characters, of which 12 tell two lifecycles of one name apart.
const ETAG_LIFECYCLE_CHARS: usize = 12;

/// The tag of `record` sent as `json`, the text a read of it answers.
///
/// The lifecycle comes from the table, which other writers share, so it may
/// hold any text: it is escaped into the characters an ETag may carry.
pub fn etag(record: &Record, json: &str) -> String {
    let lifecycle = record.lifecycle_id.as_deref().unwrap_or("legacy");
    let cut = lifecycle
        .char_indices()
        .nth(ETAG_LIFECYCLE_CHARS)
        .map_or(lifecycle.len(), |(at, _)| at);
    let mut tag = String::with_capacity(cut + 36);
    tag.push('"');
    etag_text_into(&lifecycle[..cut], &mut tag);
    tag.push('-');
    hex_into(content_digest(record), &mut tag);
    tag.push('.');
    hex_into(xxh3_64(json.as_bytes()), &mut tag);
    tag.push('"');
    tag
}

/// The tag of a list answered as `body`: a digest of the body itself.
pub fn body_etag(body: &str) -> String {
    let mut tag = String::with_capacity(18);
    tag.push('"');
    hex_into(xxh3_64(body.as_bytes()), &mut tag);
    tag.push('"');
    tag
}

/// The digest of [`CONTENT_ATTRIBUTES`] as the record holds them.
fn content_digest(record: &Record) -> u64 {
    xxh3_64(content_text(record).as_bytes())
}

/// [`CONTENT_ATTRIBUTES`] as text, in their order: each one's JSON, or `!`
/// when the record has none, joined by NUL bytes (which JSON text never
/// holds, so the parts stay apart).
fn content_text(record: &Record) -> String {
    let item = record.to_value();
    let item = item.as_object().expect("a record is an object");
    CONTENT_ATTRIBUTES
        .iter()
        .map(|name| {
            item.get(name)
                .map_or_else(|| "!".to_owned(), Value::to_json)
        })
        .collect::<Vec<_>>()
        .join("\0")
}

fn hex_into(digest: u64, tag: &mut String) {
    use std::fmt::Write;
    let _ = write!(tag, "{digest:016x}");
}

/// Every byte but an ASCII letter, digit, `.`, `_`, `:` or `+`: escaping
/// them as `%XX` is one-to-one (so `-` and `%` are escaped too), and always
/// leaves a valid header value without quotes, commas or spaces.
const NOT_ETAG_TEXT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'.')
    .remove(b'_')
    .remove(b':')
    .remove(b'+');

fn etag_text_into(text: &str, tag: &mut String) {
    tag.extend(utf8_percent_encode(text, NOT_ETAG_TEXT));
}

/// A tag up to its last `.`: the lifecycle and content digest. `None` for
/// anything that is no tag of ours (a weak tag, an older release's tag, a
/// record digest that is not hex). The lifecycle may hold a `.`, the record
/// digest never does: so the last one is the separator.
fn content_half(tag: &str) -> Option<&str> {
    let (head, tail) = tag.rsplit_once('.')?;
    let digest = tail.strip_suffix('"')?;
    let ours = head.starts_with('"')
        && !digest.is_empty()
        && digest.bytes().all(|b| b.is_ascii_hexdigit());
    ours.then_some(head)
}

/// The tags of a header's list (every line joined with `,`, RFC 9110,
/// section 5.3), trimmed.
fn tags(header: &str) -> impl Iterator<Item = &str> {
    header.split(',').map(str::trim)
}

/// `If-Match: *` matches any current record; otherwise a listed tag whose
/// content half is `current`'s, compared strongly (RFC 9110, section
/// 13.1.1: a weak tag `W/"..."` never matches). The record half is left out
/// on purpose: it belongs to the monitors' status writes, which change
/// nothing a change depends on.
pub fn if_match_holds(header: &str, current: &str) -> bool {
    let Some(current) = content_half(current) else {
        return false;
    };
    tags(header).any(|t| t == "*" || content_half(t) == Some(current))
}

/// `If-None-Match` on a read (RFC 9110, section 13.1.2): true when a listed
/// tag is `current`, compared weakly (`W/"x"` is `"x"`), or the list is `*`
/// (the resource exists): the client's copy is current, a 304.
pub fn if_none_match_holds(header: &str, current: &str) -> bool {
    tags(header).any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MUTABLE_ATTRIBUTES;
    use gco_spec::json::parse;

    fn record() -> Record {
        Record::from_value(
            &parse(
                r#"{"endpoint_name": "pd", "desired_state": "running",
                    "target_regions": ["us-east-1"], "namespace": "gco-inference",
                    "spec": {"image": "x", "replicas": 2}, "ingress_path": "/inference/pd",
                    "created_at": "2026-12-01T00:00:00+00:00",
                    "updated_at": "2026-12-01T00:00:00+00:00", "region_status": {},
                    "lifecycle_id": "0123456789abcdef0123",
                    "cleanup_regions": ["us-east-1"],
                    "region_generations": {"us-east-1": "aa"}}"#,
            )
            .unwrap(),
        )
        .unwrap()
    }

    fn tag(r: &Record) -> String {
        etag(r, &r.to_value().to_json())
    }

    /// A change writes only mutable attributes (and `updated_at`): every one
    /// of them is part of what a change depends on, so no change by anyone
    /// goes unnoticed by `If-Match`.
    #[test]
    fn every_attribute_a_change_writes_is_content() {
        for name in MUTABLE_ATTRIBUTES {
            assert!(
                name == "updated_at" || CONTENT_ATTRIBUTES.contains(&name),
                "{name} is written by changes but not in the content digest"
            );
        }
    }

    #[test]
    fn a_status_write_keeps_the_content_half_and_moves_the_tag() {
        let before = record();
        let mut after = before.clone();
        after.updated_at = "2026-12-01T00:00:15+00:00".into();
        after.region_status.insert(
            "us-east-1",
            parse(r#"{"state": "running", "replicas_ready": 2}"#).unwrap(),
        );
        let (old, new) = (tag(&before), tag(&after));
        assert_ne!(old, new);
        assert_eq!(content_half(&old), content_half(&new));
        assert!(if_match_holds(&old, &new));
        assert!(!if_none_match_holds(&old, &new));
        assert!(if_none_match_holds(&new, &new));
        assert!(if_none_match_holds(&format!("W/{new}"), &new));
        assert!(if_none_match_holds(&format!("\"x\", {new}"), &new));
        assert!(if_none_match_holds("*", &new));
    }

    #[test]
    fn every_content_attribute_moves_the_content_half() {
        let base = record();
        let edits: [fn(&mut Record); 10] = [
            |r| r.lifecycle_id = Some("ff".repeat(32)),
            |r| r.desired_state = gco_spec::DesiredState::Stopped,
            |r| r.target_regions.push("eu-west-1".into()),
            |r| r.cleanup_regions = None,
            |r| {
                r.region_generations
                    .as_mut()
                    .unwrap()
                    .insert("us-east-1", "bb")
            },
            |r| r.namespace = "other".into(),
            |r| r.labels.insert("team", "a"),
            |r| r.spec.insert("replicas", Value::int(3)),
            |r| r.deletion_generation = Some("cc".repeat(32)),
            |r| r.deletion_regions = Some(vec!["us-east-1".into()]),
        ];
        for (edit, name) in edits.iter().zip(CONTENT_ATTRIBUTES) {
            let mut changed = base.clone();
            edit(&mut changed);
            assert!(!if_match_holds(&tag(&base), &tag(&changed)), "{name}");
            assert_ne!(content_text(&base), content_text(&changed), "{name}");
        }
    }

    #[test]
    fn if_match_is_strong_and_knows_only_our_tags() {
        let current = tag(&record());
        assert!(if_match_holds(&current, &current));
        assert!(if_match_holds(&format!("\"x\", {current}"), &current));
        assert!(if_match_holds("*", &current));
        for other in [
            format!("W/{current}"),
            // An older release's tag: lifecycle and updated_at.
            "\"0123456789ab-1764547200000000\"".to_owned(),
            current.replace('.', ".z"),
            content_half(&current).unwrap().to_owned() + "\"",
            String::new(),
        ] {
            assert!(!if_match_holds(&other, &current), "{other}");
        }
    }

    /// A lifecycle from another writer may hold `.`, `-`, quotes and commas:
    /// the tag stays one header token, and its halves are still found.
    #[test]
    fn odd_lifecycles_keep_the_tag_readable() {
        let mut r = record();
        r.lifecycle_id = Some("a.b-c,\"d\" é".into());
        let t = tag(&r);
        assert!(t.starts_with('"') && t.ends_with('"'));
        assert!(!t[1..t.len() - 1].contains(['"', ',', ' ']), "{t}");
        assert!(if_match_holds(&t, &t));
        assert_eq!(t.matches('.').count(), 2, "{t}");
    }

    /// The digest is XXH3 of fixed text: a tag computed today is the tag of
    /// the same record in any later release (a changed value here would
    /// refuse every change sent from a page open across an upgrade).
    #[test]
    fn tags_are_stable() {
        let r = record();
        assert_eq!(xxh3_64(b""), 0x2d06_8005_38d3_94c2);
        assert_eq!(
            tag(&r),
            "\"0123456789ab-c7ab7ebebef32f95.5c849754ea476ea8\""
        );
        assert_eq!(body_etag(""), "\"2d06800538d394c2\"");
    }
}
