//! GCO's regional scope check (GCO_FACTS_NEWEST 4.9): KV transfer runs
//! inside one region, so the monitor of region R refuses an endpoint whose
//! spec wires to an address it places outside R, failing the region with
//! `cross-region boundary violation: ...`. The same classification here lets
//! a deploy or a record check report it before any monitor does, per target
//! region, at the field that holds the address.

use crate::diagnostics::{Diagnostic, Report};
use crate::json::{Object, Value};
use crate::pyrepr::{py_lower, repr_str};

/// Where the monitor places an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressRegion {
    /// A region token in the host names this region.
    Named(String),
    /// No region token and a cluster-local host (no dot, `.svc` or
    /// `.svc.cluster.local`): the monitor's own region.
    Local,
    /// Anything else: outside every region as far as the monitor can tell.
    Unknown,
}

impl AddressRegion {
    /// The region the address resolves to for the monitor of `own`, or
    /// `None` for `unknown`.
    pub fn resolve<'a>(&'a self, own: &'a str) -> Option<&'a str> {
        match self {
            AddressRegion::Named(r) => Some(r),
            AddressRegion::Local => Some(own),
            AddressRegion::Unknown => None,
        }
    }
}

/// Classifies an address as the monitor does: lower-cased, `//` prepended
/// when it has no scheme, then its host (as `urlsplit(...).hostname` reads
/// it) searched for `\b[a-z]{2}-(?:gov-)?[a-z]+-\d+\b`.
pub fn address_region(address: &str) -> AddressRegion {
    let lower = py_lower(address);
    let url = if lower.contains("://") {
        lower
    } else {
        format!("//{lower}")
    };
    let host = hostname(&url);
    if let Some(region) = region_token(host) {
        return AddressRegion::Named(region.to_owned());
    }
    if !host.contains('.') || host.ends_with(".svc") || host.ends_with(".svc.cluster.local") {
        AddressRegion::Local
    } else {
        AddressRegion::Unknown
    }
}

/// The host of a URL as Python's `urlsplit(url).hostname` gives it: the
/// netloc after `//` up to `/`, `?` or `#`, without user info, port or IPv6
/// brackets ("" when there is none).
fn hostname(url: &str) -> &str {
    let Some((_, rest)) = url.split_once("//") else {
        return "";
    };
    let netloc = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = netloc.rsplit_once('@').map_or(netloc, |(_, h)| h);
    match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    }
}

/// A character of Python's `\w` (Unicode letters, digits and `_`).
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The leftmost match of `\b[a-z]{2}-(?:gov-)?[a-z]+-\d+\b` in `host`.
pub fn region_token(host: &str) -> Option<&str> {
    let bytes = host.as_bytes();
    let letters = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_lowercase())
            .count()
    };
    for (start, c) in host.char_indices() {
        let at_boundary = host[..start]
            .chars()
            .next_back()
            .is_none_or(|p| !is_word(p));
        if !at_boundary || !c.is_ascii_lowercase() || letters(start) < 2 {
            continue;
        }
        let mut i = start + 2;
        if bytes.get(i) != Some(&b'-') {
            continue;
        }
        i += 1;
        // `(?:gov-)?` first, as the regex tries it; else without.
        let options = if host[i..].starts_with("gov-") {
            vec![i + 4, i]
        } else {
            vec![i]
        };
        for at in options {
            let word = letters(at);
            let dash = at + word;
            if word == 0 || bytes.get(dash) != Some(&b'-') {
                continue;
            }
            let digits = bytes[dash + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let end = dash + 1 + digits;
            let ends_at_boundary = host[end..].chars().next().is_none_or(|n| !is_word(n));
            if digits > 0 && ends_at_boundary {
                return Some(&host[start..end]);
            }
        }
    }
    None
}

/// The monitor's message for one address outside `own`.
pub fn violation_message(address: &Value, resolved: Option<&str>, own: &str) -> String {
    let shown = match address {
        Value::Str(s) => repr_str(s),
        other => other.repr(),
    };
    format!(
        "cross-region boundary violation: {shown} resolves to region {}; expected region {own}",
        resolved.unwrap_or("unknown")
    )
}

/// The spec addresses the monitor scope-checks, with their paths inside the
/// block (`store.master_server_address`, `store.metadata_server`, then each
/// truthy `transfer.peer_addresses` entry). Non-string values are left to
/// the monitor (as read: it classifies strings).
fn spec_addresses(block: &Object) -> Vec<(String, &Value, &str)> {
    let mut out = Vec::new();
    let section = |key: &str| block.get(key).and_then(Value::as_object);
    if let Some(store) = section("store") {
        for key in ["master_server_address", "metadata_server"] {
            if let Some(v @ Value::Str(_)) = store.get(key).filter(|v| v.is_truthy()) {
                out.push((format!("store.{key}"), v, v.as_str().unwrap_or_default()));
            }
        }
    }
    if let Some(Value::List(peers)) = section("transfer").and_then(|t| t.get("peer_addresses")) {
        for (i, peer) in peers.iter().enumerate() {
            if let v @ Value::Str(_) = peer
                && v.is_truthy()
            {
                out.push((
                    format!("transfer.peer_addresses[{i}]"),
                    v,
                    v.as_str().unwrap_or_default(),
                ));
            }
        }
    }
    out
}

/// Reports, for each target region, every spec address of the `mooncake`
/// block outside it: an error at `<prefix>mooncake.<field>`. An address in
/// several regions' way gets one error per region that refuses it.
pub fn check_scope(block: &Value, target_regions: &[String], prefix: &str, report: &mut Report) {
    let Some(block) = block.as_object() else {
        return;
    };
    for (path, value, text) in spec_addresses(block) {
        let region = address_region(text);
        for own in target_regions {
            let resolved = region.resolve(own);
            if resolved != Some(own.as_str()) {
                report.push(Diagnostic::error(
                    format!("{prefix}mooncake.{path}"),
                    violation_message(value, resolved, own),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowering_agrees_with_full_lowercasing_wherever_it_matters() {
        for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
            let full: String = c.to_lowercase().collect();
            let ours = py_lower(c.encode_utf8(&mut [0; 4]));
            if full == ours {
                continue;
            }
            assert_eq!(ours, c.to_string(), "{c:?} is kept");
            assert!(!full.is_ascii() && !c.is_ascii(), "{c:?} lowers into ASCII");
            assert!(
                full.chars().all(|l| is_word(l) == is_word(c)),
                "{c:?} changes word-ness when lowered to {full:?}"
            );
        }
    }

    #[test]
    fn characters_that_lower_into_ascii_are_lowered() {
        assert_eq!(
            address_region("\u{212A}R-CENTRAL-1.example.com"),
            AddressRegion::Named("kr-central-1".into())
        );
        // `İ` lowers to `i` and a combining dot, which is not a word
        // character: the token after it starts at a boundary.
        assert_eq!(
            address_region("x\u{130}us-east-1.example.com"),
            AddressRegion::Named("us-east-1".into())
        );
    }
}
