//! Where each value and key of a JSON text is: a tree of byte spans beside
//! the [`super::Value`] tree. Only callers that want places (a file check,
//! an editor) read it, in a second pass over text that already parsed, so
//! the plain parse pays nothing for them.

use super::PyStr;
use super::lex::{Fail, Lexer, Syntax};

/// A byte range of the text: `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A value's span and, for a container, its items or members.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Span,
    pub inner: Inner,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Inner {
    Scalar,
    List(Vec<Node>),
    /// Every member as written, duplicates included (the last one counts,
    /// as in Python's dict).
    Object(Vec<Member>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: PyStr,
    /// The key with its quotes.
    pub key_span: Span,
    pub value: Node,
}

/// The spans of a JSON document; `None` when it does not parse (the plain
/// parse says why).
pub fn spans(text: &str) -> Option<Node> {
    let mut lx = Lexer::new(text);
    lx.skip_ws();
    let node = node(&mut lx, 0).ok()?;
    lx.skip_ws();
    (lx.pos == text.len()).then_some(node)
}

fn node(lx: &mut Lexer<'_>, depth: usize) -> Result<Node, Fail> {
    let start = lx.pos;
    let inner = match lx.peek() {
        Some(b'"') => {
            lx.string()?;
            Inner::Scalar
        }
        Some(b'[') => list(lx, depth + 1)?,
        Some(b'{') => object(lx, depth + 1)?,
        _ => {
            let literal = ["null", "true", "false", "NaN", "Infinity", "-Infinity"]
                .into_iter()
                .any(|lit| lx.eat(lit));
            if !literal {
                lx.number()?;
            }
            Inner::Scalar
        }
    };
    Ok(Node {
        span: Span { start, end: lx.pos },
        inner,
    })
}

/// Steps past the separator after an item: whether the container closed.
fn next_or_close(lx: &mut Lexer<'_>, close: u8) -> Result<bool, Fail> {
    lx.skip_ws();
    match lx.peek() {
        Some(b',') => {
            lx.pos += 1;
            lx.skip_ws();
            Ok(false)
        }
        Some(c) if c == close => {
            lx.pos += 1;
            Ok(true)
        }
        _ => Err(lx.fail(Syntax::ExpectingComma)),
    }
}

/// Steps into a container: whether it is empty (and then read).
fn open(lx: &mut Lexer<'_>, depth: usize, close: u8) -> Result<bool, Fail> {
    lx.too_deep(depth)?;
    lx.pos += 1;
    lx.skip_ws();
    let empty = lx.peek() == Some(close);
    if empty {
        lx.pos += 1;
    }
    Ok(empty)
}

fn list(lx: &mut Lexer<'_>, depth: usize) -> Result<Inner, Fail> {
    let mut items = Vec::new();
    if !open(lx, depth, b']')? {
        loop {
            items.push(node(lx, depth)?);
            if next_or_close(lx, b']')? {
                break;
            }
        }
    }
    Ok(Inner::List(items))
}

fn object(lx: &mut Lexer<'_>, depth: usize) -> Result<Inner, Fail> {
    let mut members = Vec::new();
    if !open(lx, depth, b'}')? {
        loop {
            let key_start = lx.pos;
            if lx.peek() != Some(b'"') {
                return Err(lx.fail(Syntax::ExpectingKey));
            }
            let key = lx.string()?.decode();
            let key_span = Span {
                start: key_start,
                end: lx.pos,
            };
            lx.skip_ws();
            if lx.peek() != Some(b':') {
                return Err(lx.fail(Syntax::ExpectingColon));
            }
            lx.pos += 1;
            lx.skip_ws();
            let value = node(lx, depth)?;
            members.push(Member {
                key,
                key_span,
                value,
            });
            if next_or_close(lx, b'}')? {
                break;
            }
        }
    }
    Ok(Inner::Object(members))
}

/// What a diagnostic's path names in the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// The value the path names, or the deepest value on the way to it
    /// that exists (the object lacking a member).
    pub value: Span,
    /// The key of the member the path names, when it has one.
    pub key: Option<Span>,
    /// Whether the whole path was found.
    pub complete: bool,
}

impl Node {
    /// The value (and key) a dotted path names (`a.b[0].c`; `""` the
    /// document). A key holding `.` or `[` is matched as written: of the
    /// members whose key begins the rest of the path, the longest that
    /// leads to a complete match wins. Of duplicate keys the last counts.
    pub fn find(&self, path: &str) -> Found {
        let root = Found {
            value: self.span,
            key: None,
            complete: path.is_empty(),
        };
        if path.is_empty() {
            return root;
        }
        self.find_rest(path).map_or(root, |(found, _)| found)
    }

    /// The match for `rest` below this node, with how much of the path was
    /// left unmatched (`None`: not even one step).
    fn find_rest(&self, rest: &str) -> Option<(Found, usize)> {
        match &self.inner {
            Inner::List(items) => {
                let inside = rest.strip_prefix('[')?;
                let close = inside.find(']')?;
                let item = items.get(inside[..close].parse::<usize>().ok()?)?;
                Some(item.below(None, &inside[close + 1..]))
            }
            Inner::Object(members) => {
                let rest = rest.strip_prefix('.').unwrap_or(rest);
                let mut candidates: Vec<(&Member, usize)> = Vec::new();
                for m in members.iter().rev() {
                    let key = m.key.to_str_lossy();
                    let fits = rest
                        .strip_prefix(&*key)
                        .is_some_and(|after| after.is_empty() || after.starts_with(['.', '[']));
                    // Walking backwards, an earlier duplicate is ignored.
                    if fits && !candidates.iter().any(|(c, _)| c.key == m.key) {
                        candidates.push((m, key.len()));
                    }
                }
                candidates.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
                let mut best: Option<(Found, usize)> = None;
                for (m, len) in candidates {
                    let found = m.value.below(Some(m.key_span), &rest[len..]);
                    if found.0.complete {
                        return Some(found);
                    }
                    // Of partial matches, the one that got furthest.
                    if best.is_none_or(|(_, left)| found.1 < left) {
                        best = Some(found);
                    }
                }
                best
            }
            Inner::Scalar => None,
        }
    }

    /// This node reached (by `key`), then the rest of the path below it.
    fn below(&self, key: Option<Span>, rest: &str) -> (Found, usize) {
        let here = Found {
            value: self.span,
            key,
            complete: rest.is_empty(),
        };
        if rest.is_empty() {
            return (here, 0);
        }
        // A path going on past this node: the deepest node reached, and
        // not its key (the member named is missing, not this one).
        self.find_rest(rest)
            .unwrap_or((Found { key: None, ..here }, rest.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_at<'t>(text: &'t str, span: Span) -> &'t str {
        &text[span.start..span.end]
    }

    #[test]
    fn finds_values_keys_and_the_object_lacking_a_member() {
        let text = "{\"a\": {\"b\": [1, {\"c\": \"x\"}]}, \"a.b\": true, \"d\": 1, \"d\": 22}";
        let root = spans(text).unwrap();
        let at = |path: &str| {
            let f = root.find(path);
            (
                text_at(text, f.value),
                f.key.map(|k| text_at(text, k)),
                f.complete,
            )
        };
        assert_eq!(at("a.b[1].c"), ("\"x\"", Some("\"c\""), true));
        assert_eq!(at("a.b[0]"), ("1", None, true));
        assert_eq!(at("a.b"), ("true", Some("\"a.b\""), true));
        assert_eq!(at("d"), ("22", Some("\"d\""), true));
        assert_eq!(at("a.b[1].missing"), ("{\"c\": \"x\"}", None, false));
        assert_eq!(at("a.b[1].c[0]"), ("\"x\"", None, false));
        assert_eq!(at("a.x"), ("{\"b\": [1, {\"c\": \"x\"}]}", None, false));
        assert_eq!(at(""), (text, None, true));
        assert_eq!(at("zz").0, text);
    }

    #[test]
    fn no_spans_for_text_that_does_not_parse() {
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "1 2", "\u{feff}{}"] {
            assert_eq!(spans(bad), None, "{bad:?}");
        }
    }
}
