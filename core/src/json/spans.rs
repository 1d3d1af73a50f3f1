//! Where a value or key of a JSON text is, by the dotted path a diagnostic
//! names. Read only when a caller wants places (a file check, an editor),
//! in a second pass over text that already parsed, so the plain parse pays
//! nothing for them; and as a scan that skips what the path does not name,
//! without building a tree, which keeps the package small.

use super::PyStr;
use super::lex::Lexer;

/// A byte range of the text: `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// What a path names in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// The value the path names, or the deepest value on the way to it
    /// that exists (the object lacking a member).
    pub value: Span,
    /// The key (with its quotes) of the member the path names, when the
    /// whole path was found and names a member.
    pub key: Option<Span>,
    /// Whether the whole path was found.
    pub complete: bool,
}

/// The value (and key) a dotted path names (`a.b[0].c`; `""` the whole
/// document) in `text`, which must be JSON that [`super::parse`] accepts
/// (on other text the answer is some span of it, never a panic). A key
/// holding `.` or `[` is matched as written: of the members whose key
/// begins the rest of the path, the first that leads to a complete match
/// wins.
/// Of duplicate keys the last counts, as in Python's dict.
pub fn find(text: &str, path: &str) -> Found {
    let start = skip_ws(text.as_bytes(), 0);
    below(text, start, None, path).0
}

/// The value at `start` (reached by `key`), then the rest of the path
/// below it; with how much of the path was left unmatched.
fn below(text: &str, start: usize, key: Option<Span>, rest: &str) -> (Found, usize) {
    let b = text.as_bytes();
    let value = Span {
        start,
        end: value_end(b, start),
    };
    if rest.is_empty() {
        let found = Found {
            value,
            key,
            complete: true,
        };
        return (found, 0);
    }
    let inside = match b.get(start) {
        Some(b'[') => item(text, start, rest),
        Some(b'{') => member(text, start, rest),
        _ => None,
    };
    // A path going on past this value: the deepest value reached, and not
    // its key (the member named is missing, not this one).
    inside.unwrap_or((
        Found {
            value,
            key: None,
            complete: false,
        },
        rest.len(),
    ))
}

/// `rest` (`[i]…`) inside the list at `open`.
fn item(text: &str, open: usize, rest: &str) -> Option<(Found, usize)> {
    let b = text.as_bytes();
    let inside = rest.strip_prefix('[')?;
    let close = inside.find(']')?;
    let index = inside[..close].bytes().try_fold(0usize, |n, c| {
        let digit = (c as char).to_digit(10)? as usize;
        n.checked_mul(10)?.checked_add(digit)
    })?;
    let mut i = skip_ws(b, open + 1);
    for _ in 0..index {
        if matches!(b.get(i), Some(b']') | None) {
            return None;
        }
        i = next(b, value_end(b, i));
    }
    if matches!(b.get(i), Some(b']') | None) {
        return None;
    }
    Some(below(text, i, None, &inside[close + 1..]))
}

/// `rest` (`.key…` or `key…`) inside the object at `open`.
fn member(text: &str, open: usize, rest: &str) -> Option<(Found, usize)> {
    let b = text.as_bytes();
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    // The members whose key begins `rest`, the last of each key: the key,
    // its span and where its value starts.
    let mut fitting: Vec<(PyStr, Span, usize)> = Vec::new();
    let mut i = skip_ws(b, open + 1);
    while b.get(i) == Some(&b'"') {
        let mut lexer = Lexer::new(text);
        lexer.pos = i;
        let Ok(raw) = lexer.string() else {
            return None;
        };
        let key_span = Span {
            start: i,
            end: lexer.pos,
        };
        // Past the colon to the value.
        i = skip_ws(b, skip_ws(b, key_span.end) + 1);
        // Most keys are written without escapes: those that cannot begin
        // the path are passed over without decoding them.
        if !raw.escaped && !rest.starts_with(raw.raw) {
            i = next(b, value_end(b, i));
            continue;
        }
        let key = raw.decode();
        if fits(&key, rest) {
            // Of duplicate keys the last counts.
            match fitting.iter_mut().find(|(k, ..)| *k == key) {
                Some(slot) => *slot = (key, key_span, i),
                None => fitting.push((key, key_span, i)),
            }
        }
        i = next(b, value_end(b, i));
    }
    let mut best: Option<(Found, usize)> = None;
    for (key, key_span, value) in &fitting {
        let after = &rest[key.to_str_lossy().len()..];
        let found = below(text, *value, Some(*key_span), after);
        if found.0.complete {
            return Some(found);
        }
        if best.is_none_or(|(_, left)| found.1 < left) {
            best = Some(found);
        }
    }
    best
}

/// Whether a member named `key` is the next step of `rest`.
fn fits(key: &PyStr, rest: &str) -> bool {
    rest.strip_prefix(&*key.to_str_lossy())
        .is_some_and(|after| after.is_empty() || after.starts_with(['.', '[']))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Past the comma after an item or member, to what follows.
fn next(b: &[u8], end: usize) -> usize {
    let i = skip_ws(b, end);
    if b.get(i) == Some(&b',') {
        skip_ws(b, i + 1)
    } else {
        i
    }
}

/// The end of the string whose opening quote is at `open`.
fn string_end(b: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the value at `start`: a string, a container (brackets counted
/// outside strings) or a scalar (up to the next delimiter).
fn value_end(b: &[u8], start: usize) -> usize {
    match b.get(start) {
        Some(b'"') => string_end(b, start),
        Some(b'[' | b'{') => {
            let mut depth = 0usize;
            let mut i = start;
            while let Some(&c) = b.get(i) {
                match c {
                    b'"' => {
                        i = string_end(b, i);
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            b.len()
        }
        _ => {
            let mut i = start;
            while b
                .get(i)
                .is_some_and(|c| !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                i += 1;
            }
            i
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_values_keys_and_the_object_lacking_a_member() {
        let text =
            "{\"a\": {\"b\": [1, {\"c\": \"x\\\"]\"}]}, \"a.b\": true, \"d\": 1, \"d\" : -2.5e3 }";
        let at = |path: &str| {
            let f = find(text, path);
            (
                &text[f.value.start..f.value.end],
                f.key.map(|k| &text[k.start..k.end]),
                f.complete,
            )
        };
        assert_eq!(at("a.b[1].c"), ("\"x\\\"]\"", Some("\"c\""), true));
        assert_eq!(at("a.b[0]"), ("1", None, true));
        // Ambiguous: `a` then `b`, the first member that leads there.
        assert_eq!(at("a.b").1, Some("\"b\""));
        assert_eq!(at("a.b[1]").0, "{\"c\": \"x\\\"]\"}");
        assert_eq!(at("d"), ("-2.5e3", Some("\"d\""), true));
        assert_eq!(at("a.b[1].missing"), ("{\"c\": \"x\\\"]\"}", None, false));
        assert_eq!(at("a.b[1].c[0]"), ("\"x\\\"]\"", None, false));
        assert_eq!(
            at("a.x"),
            ("{\"b\": [1, {\"c\": \"x\\\"]\"}]}", None, false)
        );
        assert_eq!(at(""), (text, None, true));
        assert_eq!(at("zz").0, text);
        assert_eq!(find("[]", "[0]").value, Span { start: 0, end: 2 });
    }

    #[test]
    fn text_that_does_not_parse_gets_some_span_and_no_panic() {
        for bad in [
            "",
            "{",
            "[1,",
            "{\"a\" 1}",
            "\"",
            "{\"a\":",
            "]",
            "[[[",
            "{\"a\\",
        ] {
            for path in ["", "a", "a.b", "[0]", "[9].x"] {
                let f = find(bad, path);
                assert!(
                    f.value.start <= f.value.end && f.value.end <= bad.len(),
                    "{bad:?} {path}"
                );
            }
        }
    }
}
