//! Endpoint names, region names and environment variable names.

use crate::limits::ENDPOINT_NAME_MAX_LEN;
use crate::mooncake::Mode;
use crate::table::MAX_NAME_BYTES;

/// Why an endpoint name is a problem. An empty name, one the table cannot
/// hold and one that cannot be a URL path segment are refused
/// ([`NameIssue::is_error`]); the others are warnings (GCO accepts the
/// record but cannot route it or name its objects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameIssue {
    Empty,
    /// Longer than [`MAX_NAME_BYTES`] bytes.
    TooLong(usize),
    /// `.` or `..`: clients read it as a directory, not a name.
    DotSegment,
    /// Holds a character that ends, escapes or breaks a URL path segment
    /// (`/`, `\`, `?`, `#`, `%`, white space, a control character). The
    /// API addresses an endpoint at `/api/endpoints/{name}` and GCO's
    /// ingress at `/inference/{name}`: `chat/v1` would sit inside `chat`'s.
    NotPathSegment(char),
    /// A Service GCO's monitor creates for the endpoint (the longest name
    /// among them: `{name}-prefill` for split modes, `{name}-canary` for a
    /// plain endpoint's canary, `{name}` for the store mode) would not be a
    /// DNS-1035 label, which Kubernetes requires of a Service name: the
    /// monitor cannot create the endpoint's objects.
    NotServiceName(String),
}

impl NameIssue {
    /// Whether the name is refused, rather than warned about.
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            NameIssue::Empty
                | NameIssue::TooLong(_)
                | NameIssue::DotSegment
                | NameIssue::NotPathSegment(_)
                | NameIssue::NotServiceName(_)
        )
    }

    pub fn message(&self, name: &str) -> String {
        let repr = crate::pyrepr::repr_text;
        match self {
            NameIssue::Empty => "endpoint_name must be a non-empty string".into(),
            NameIssue::TooLong(bytes) => {
                format!("endpoint_name has {bytes} bytes; at most {MAX_NAME_BYTES} can be stored")
            }
            NameIssue::DotSegment => format!(
                "endpoint_name {} cannot be one segment of a URL path: clients read it as a directory",
                repr(name)
            ),
            NameIssue::NotPathSegment(c) => format!(
                "endpoint_name {} cannot be one segment of a URL path, as the API and GCO's ingress path (/inference/<name>) need: it holds {}",
                repr(name),
                repr(&c.to_string())
            ),
            NameIssue::NotServiceName(service) => format!(
                "endpoint_name {} cannot name GCO's objects: its monitor creates the Service {}, \
                 and Kubernetes requires a Service name to be a DNS-1035 label (lowercase letters, \
                 digits and '-', starting with a letter and ending with a letter or digit, \
                 at most {ENDPOINT_NAME_MAX_LEN} characters)",
                repr(name),
                repr(service)
            ),
        }
    }
}

/// `^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`
pub fn is_dns_label(name: &str) -> bool {
    let b = name.as_bytes();
    let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= ENDPOINT_NAME_MAX_LEN
        && ok(&b[0])
        && ok(&b[b.len() - 1])
        && b.iter().all(|c| ok(c) || *c == b'-')
}

/// The suffix of the longest Service name GCO's monitor derives from an
/// endpoint's name (GCO_FACTS_NEWEST 4.2 and its cleanup list): split modes
/// `{name}-prefill`, the store mode `{name}`, a plain endpoint `{name}` and
/// its canary's `{name}-canary` (as read).
pub fn longest_service_suffix(mode: Option<Mode>) -> &'static str {
    match mode {
        Some(m) if m.is_split() => "-prefill",
        Some(_) => "",
        None => "-canary",
    }
}

/// A DNS-1035 label, `^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`: what Kubernetes
/// requires of a Service name.
pub fn is_dns1035_label(name: &str) -> bool {
    is_dns_label(name) && name.starts_with(|c: char| c.is_ascii_lowercase())
}

/// The problems of an endpoint name of an endpoint in `mode` (`None`: a
/// plain endpoint).
pub fn endpoint_name_issues(name: &str, mode: Option<Mode>) -> Vec<NameIssue> {
    if name.trim().is_empty() {
        return vec![NameIssue::Empty];
    }
    let mut issues = Vec::new();
    if name.len() > MAX_NAME_BYTES {
        issues.push(NameIssue::TooLong(name.len()));
        return issues;
    } else if name == "." || name == ".." {
        issues.push(NameIssue::DotSegment);
    } else if let Some(c) = name
        .chars()
        .find(|&c| matches!(c, '/' | '\\' | '?' | '#' | '%') || c.is_whitespace() || c.is_control())
    {
        issues.push(NameIssue::NotPathSegment(c));
    }
    // One refusal per name: a path-segment error says enough.
    let service = format!("{name}{}", longest_service_suffix(mode));
    if issues.is_empty() && !is_dns1035_label(&service) {
        issues.push(NameIssue::NotServiceName(service));
    }
    issues
}

/// Why `key` is not a Kubernetes label key (`[prefix/]name`: the name 1 to
/// 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter
/// or digit; the prefix a DNS subdomain of at most 253 characters).
pub fn is_label_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let prefix_ok =
        prefix.is_none_or(|p| p.len() <= 253 && !p.is_empty() && p.split('.').all(is_dns_label));
    prefix_ok && is_label_value(name) && !name.is_empty()
}

/// A Kubernetes label value: empty, or 1 to 63 letters, digits, `-`, `_`
/// and `.`, starting and ending with a letter or digit.
pub fn is_label_value(value: &str) -> bool {
    let b = value.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    b.is_empty()
        || (b.len() <= 63
            && alnum(&b[0])
            && alnum(&b[b.len() - 1])
            && b.iter()
                .all(|c| alnum(c) || matches!(c, b'-' | b'_' | b'.')))
}

/// `KEY=VALUE` lines as GCO's CLI reads its `-e` and `-l` entries: blank
/// lines skipped, a line without `=` dropped (GCO_FACTS_NEWEST 5: silently
/// there), each dropped line given back by number (from 1) and text.
pub fn parse_pairs(text: &str) -> (crate::json::Object, Vec<(usize, String)>) {
    let mut pairs = crate::json::Object::new();
    let mut dropped = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) => pairs.insert(k.trim(), v.to_owned()),
            None => dropped.push((i + 1, line.to_owned())),
        }
    }
    (pairs, dropped)
}

/// Whether `image` reads as a container image reference:
/// `[host[:port]/]path[:tag][@algorithm:hex]`, the path's components
/// lowercase letters and digits joined by `.`, `_`, `__` or `-`s, a tag of
/// at most 128 word characters, `.` and `-` (the distribution reference
/// grammar, as read). A runtime cannot pull anything else.
pub fn is_image_reference(image: &str) -> bool {
    let (rest, digest) = match image.split_once('@') {
        Some((r, d)) => (r, Some(d)),
        None => (image, None),
    };
    let digest_ok = digest.is_none_or(|d| {
        d.split_once(':').is_some_and(|(alg, hex)| {
            !alg.is_empty()
                && alg
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'_' | b'-'))
                && hex.len() >= 32
                && hex.bytes().all(|c| c.is_ascii_hexdigit())
        })
    });
    let (name, tag) = match rest.rfind(':') {
        Some(i) if !rest[i..].contains('/') => (&rest[..i], Some(&rest[i + 1..])),
        _ => (rest, None),
    };
    let tag_ok = tag.is_none_or(|t| {
        let b = t.as_bytes();
        (1..=128).contains(&b.len())
            && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
    });
    let mut parts: Vec<&str> = name.split('/').collect();
    let host = (parts.len() > 1 && (parts[0].contains(['.', ':']) || parts[0] == "localhost"))
        .then(|| parts.remove(0));
    let host_ok = host.is_none_or(|h| {
        let (domain, port) = match h.split_once(':') {
            Some((d, p)) => (d, Some(p)),
            None => (h, None),
        };
        !domain.is_empty()
            && domain.split('.').all(|l| {
                !l.is_empty()
                    && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
            && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
    });
    let component = |c: &str| {
        let b = c.as_bytes();
        let alnum = |x: &u8| x.is_ascii_lowercase() || x.is_ascii_digit();
        !b.is_empty()
            && alnum(&b[0])
            && alnum(&b[b.len() - 1])
            && b.iter()
                .all(|x| alnum(x) || matches!(x, b'.' | b'_' | b'-'))
            && !c.contains("..")
            && !c.contains("___")
    };
    digest_ok && tag_ok && host_ok && !parts.is_empty() && parts.iter().all(|c| component(c))
}

/// An AWS region name such as `us-east-1`, `us-gov-west-1` or `cn-north-1`:
/// a two-letter area, one or two lowercase words, and a number.
pub fn is_region(name: &str) -> bool {
    // Parts split at '-', checked as they come (no vector of parts).
    if name.len() > 32 {
        return false;
    }
    let mut parts = name.split('-');
    let first = parts.next().unwrap_or_default();
    if first.len() != 2 || !first.bytes().all(|c| c.is_ascii_lowercase()) {
        return false;
    }
    let mut count = 1;
    let mut last = "";
    for part in parts {
        // The part before is a middle one: letters.
        if count >= 2 && (last.is_empty() || !last.bytes().all(|c| c.is_ascii_lowercase())) {
            return false;
        }
        last = part;
        count += 1;
    }
    (3..=4).contains(&count)
        && !last.is_empty()
        && last.len() <= 2
        && last.bytes().all(|c| c.is_ascii_digit())
}

/// A POSIX environment variable name: `^[A-Za-z_][A-Za-z0-9_]*$`.
pub fn is_env_name(name: &str) -> bool {
    // Bytes rather than chars: a non-ASCII character fails either way.
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && bytes.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_dns_label("llama-3"));
        assert!(!is_dns_label("Llama"));
        assert!(!is_dns_label("-a"));
        assert!(!is_dns_label(&"a".repeat(64)));
        let split = Some(Mode::Both);
        let service = |s: &str| NameIssue::NotServiceName(s.to_owned());
        assert_eq!(
            endpoint_name_issues("3b", split),
            vec![service("3b-prefill")]
        );
        assert_eq!(endpoint_name_issues("3b", None), vec![service("3b-canary")]);
        assert_eq!(
            endpoint_name_issues("Chat_PD", split),
            vec![service("Chat_PD-prefill")]
        );
        // 55 + "-prefill" is 63; 56 + "-canary" is 63; the store mode's
        // Service is the name.
        assert_eq!(endpoint_name_issues(&"a".repeat(55), split), vec![]);
        let name = "a".repeat(56);
        assert_eq!(
            endpoint_name_issues(&name, split),
            vec![service(&format!("{name}-prefill"))]
        );
        assert_eq!(endpoint_name_issues(&name, None), vec![]);
        assert_eq!(
            endpoint_name_issues(&"a".repeat(63), Some(Mode::Store)),
            vec![]
        );
        assert_eq!(endpoint_name_issues(" ", None), vec![NameIssue::Empty]);
        assert_eq!(
            endpoint_name_issues("chat pd", None),
            vec![NameIssue::NotPathSegment(' ')]
        );
        assert_eq!(
            endpoint_name_issues("..", None),
            vec![NameIssue::DotSegment]
        );
        let long = "a".repeat(2049);
        assert_eq!(
            endpoint_name_issues(&long, None),
            vec![NameIssue::TooLong(2049)]
        );
        assert!(NameIssue::NotPathSegment('/').is_error());
        assert!(service("x").is_error());
        assert_eq!(
            service("Chat_PD-prefill").message("Chat_PD"),
            "endpoint_name 'Chat_PD' cannot name GCO's objects: its monitor creates the Service 'Chat_PD-prefill', and Kubernetes requires a Service name to be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, at most 63 characters)"
        );
    }

    #[test]
    fn image_references() {
        for ok in [
            "i",
            "img:1",
            "nginx:1.27",
            "vllm/vllm-openai:v0.27.1",
            "111122223333.dkr.ecr.us-east-1.amazonaws.com/vllm:0.27",
            "localhost:5000/a/b_c:Tag-1",
            "ghcr.io/org/img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(is_image_reference(ok), "{ok}");
        }
        for bad in [
            "not an image ref!!",
            "",
            "Img:1",
            "a:",
            "a/:1",
            "a@sha256:xyz",
            "img:1 ",
            "-a",
        ] {
            assert!(!is_image_reference(bad), "{bad}");
        }
    }

    #[test]
    fn labels_and_pairs() {
        for ok in ["team", "app.kubernetes.io/name", "a_b.c-1", "x/y"] {
            assert!(is_label_key(ok), "{ok}");
        }
        for bad in ["bad label", "", "-a", "a/", "/a", "Bad_/x", &"a".repeat(64)] {
            assert!(!is_label_key(bad), "{bad}");
        }
        assert!(is_label_value("") && is_label_value("v1.2") && !is_label_value("a b"));
        let (pairs, dropped) = parse_pairs("A=1\n\nFOO\n B = x=y");
        assert_eq!(
            crate::json::Value::Object(pairs).to_json(),
            r#"{"A": "1", "B": " x=y"}"#
        );
        assert_eq!(dropped, vec![(3, "FOO".to_owned())]);
    }

    #[test]
    fn regions() {
        for ok in [
            "us-east-1",
            "us-gov-west-1",
            "cn-north-1",
            "ap-southeast-2",
            "il-central-1",
        ] {
            assert!(is_region(ok), "{ok}");
        }
        for bad in [
            "us-east",
            "US-east-1",
            "useast1",
            "us-east-1a",
            "u-east-1",
            "us--1",
            "",
        ] {
            assert!(!is_region(bad), "{bad}");
        }
    }

    /// The pattern as first written: split into parts, then checked.
    fn is_region_by_parts(name: &str) -> bool {
        let parts: Vec<&str> = name.split('-').collect();
        if !(3..=4).contains(&parts.len()) || name.len() > 32 {
            return false;
        }
        let (first, middle, last) = (parts[0], &parts[1..parts.len() - 1], parts[parts.len() - 1]);
        let lower = |p: &str| p.bytes().all(|c| c.is_ascii_lowercase());
        first.len() == 2
            && lower(first)
            && middle.iter().all(|p| !p.is_empty() && lower(p))
            && !last.is_empty()
            && last.len() <= 2
            && last.bytes().all(|c| c.is_ascii_digit())
    }

    #[test]
    fn regions_agree_with_the_pattern_on_every_short_name() {
        // Every string of up to 7 characters over an alphabet that reaches
        // each branch, and padded ones around the length limit.
        let alphabet = ['a', 'b', 'A', '1', '-', '\u{e9}'];
        let mut names = vec![String::new()];
        for _ in 0..7 {
            let longer: Vec<String> = names
                .iter()
                .filter(|n| n.chars().count() == names.last().map_or(0, |l| l.chars().count()))
                .flat_map(|n| alphabet.iter().map(move |c| format!("{n}{c}")))
                .collect();
            names.extend(longer);
        }
        for pad in 25..=35 {
            names.push(format!("us-{}-1", "a".repeat(pad - 5)));
            names.push(format!("us-{}-b-12", "a".repeat(pad - 8)));
        }
        for name in &names {
            assert_eq!(is_region(name), is_region_by_parts(name), "{name:?}");
        }
    }

    #[test]
    fn env_names() {
        assert!(is_env_name("HF_TOKEN"));
        assert!(is_env_name("_x1"));
        assert!(!is_env_name("1X"));
        assert!(!is_env_name("A-B"));
        assert!(!is_env_name(""));
    }
}
