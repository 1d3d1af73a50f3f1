//! Text to [`Value`], as `json.loads` reads it.

use super::lex::{Fail, Lexer, MAX_DEPTH, Syntax};
use super::{JsonError, Object, Value};

/// Parses one JSON document (surrounding whitespace allowed), as `json.loads`.
pub fn parse(text: &str) -> Result<Value, JsonError> {
    parse_limited(text, MAX_DEPTH)
}

/// [`parse`] with a lower nesting limit, for untrusted input such as request
/// bodies.
pub fn parse_limited(text: &str, max_depth: usize) -> Result<Value, JsonError> {
    let mut lx = Lexer::new(text);
    lx.max_depth = max_depth.min(MAX_DEPTH);
    let mut p = Parser {
        lx,
        pairs: Vec::with_capacity(32),
        items: Vec::with_capacity(8),
    };
    document(&mut p).map_err(|e| e.locate(text))
}

/// The lexer, and one stack each for the members of the objects and the
/// items of the lists being read: a container's members go on the stack
/// and move into a vector of exactly their number when it closes, instead
/// of a vector per container that grows (and moves) as it fills.
struct Parser<'t> {
    lx: Lexer<'t>,
    pairs: Vec<(Value, Value)>,
    items: Vec<Value>,
}

fn document(p: &mut Parser<'_>) -> Result<Value, Fail> {
    p.lx.skip_ws();
    let v = value(p, 0)?;
    let lx = &mut p.lx;
    lx.skip_ws();
    if lx.pos != lx.text.len() {
        return Err(lx.fail(Syntax::ExtraData));
    }
    Ok(v)
}

fn value(p: &mut Parser<'_>, depth: usize) -> Result<Value, Fail> {
    let lx = &mut p.lx;
    match lx.peek() {
        Some(b'"') => Ok(Value::Str(lx.string()?.decode())),
        Some(b'{') => object(p, depth + 1),
        Some(b'[') => list(p, depth + 1),
        Some(b'n') if lx.eat("null") => Ok(Value::Null),
        Some(b't') if lx.eat("true") => Ok(Value::Bool(true)),
        Some(b'f') if lx.eat("false") => Ok(Value::Bool(false)),
        Some(b'N') if lx.eat("NaN") => Ok(Value::Float(f64::NAN)),
        Some(b'I') if lx.eat("Infinity") => Ok(Value::Float(f64::INFINITY)),
        Some(b'-') if lx.eat("-Infinity") => Ok(Value::Float(f64::NEG_INFINITY)),
        _ => Ok(lx.number()?.value()),
    }
}

/// Enters the container whose opening bracket is at the lexer's position:
/// whether it closes at once with `close` (and is then read).
fn opens_empty(lx: &mut Lexer<'_>, depth: usize, close: u8) -> Result<bool, Fail> {
    lx.too_deep(depth)?;
    lx.pos += 1;
    lx.skip_ws();
    let empty = lx.peek() == Some(close);
    if empty {
        lx.pos += 1;
    }
    Ok(empty)
}

fn list(p: &mut Parser<'_>, depth: usize) -> Result<Value, Fail> {
    if opens_empty(&mut p.lx, depth, b']')? {
        return Ok(Value::List(Vec::new()));
    }
    let base = p.items.len();
    loop {
        p.lx.skip_ws();
        let item = value(p, depth)?;
        p.items.push(item);
        let lx = &mut p.lx;
        lx.skip_ws();
        match lx.peek() {
            Some(b',') => lx.pos += 1,
            Some(b']') => {
                lx.pos += 1;
                return Ok(Value::List(p.items.split_off(base)));
            }
            _ => return Err(lx.fail(Syntax::ExpectingComma)),
        }
    }
}

fn object(p: &mut Parser<'_>, depth: usize) -> Result<Value, Fail> {
    if opens_empty(&mut p.lx, depth, b'}')? {
        return Ok(Value::Object(Object::new()));
    }
    let base = p.pairs.len();
    loop {
        let lx = &mut p.lx;
        if lx.peek() != Some(b'"') {
            return Err(lx.fail(Syntax::ExpectingKey));
        }
        let key = lx.string()?.decode();
        lx.skip_ws();
        if lx.peek() != Some(b':') {
            return Err(lx.fail(Syntax::ExpectingColon));
        }
        lx.pos += 1;
        lx.skip_ws();
        let member = value(p, depth)?;
        p.pairs.push((Value::Str(key), member));
        let lx = &mut p.lx;
        lx.skip_ws();
        match lx.peek() {
            Some(b',') => {
                lx.pos += 1;
                lx.skip_ws();
            }
            Some(b'}') => {
                lx.pos += 1;
                let pairs = p.pairs.split_off(base);
                return Ok(Value::Object(Object::from_pairs(pairs)));
            }
            _ => return Err(lx.fail(Syntax::ExpectingComma)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(text: &str) -> String {
        parse(text).unwrap().repr()
    }

    #[test]
    fn numbers_as_python_reads_them() {
        assert_eq!(repr("-0"), "0");
        assert_eq!(repr("2.0"), "2.0");
        assert_eq!(repr("1E2"), "100.0");
        assert_eq!(repr("1e400"), "inf");
        assert_eq!(repr("-1e400"), "-inf");
        assert_eq!(repr("9223372036854775808"), "9223372036854775808");
        assert_eq!(
            repr("-1000000000000000000000000000000"),
            "-1000000000000000000000000000000"
        );
        assert_eq!(repr("[NaN, Infinity, -Infinity]"), "[nan, inf, -inf]");
        assert_eq!(repr("-0.0"), "-0.0");
    }

    #[test]
    fn duplicate_keys_last_wins_first_position() {
        assert_eq!(repr(r#"{"a": 1, "b": 2, "a": 3}"#), "{'a': 3, 'b': 2}");
    }

    #[test]
    fn strings_with_escapes_and_surrogates() {
        assert_eq!(repr(r#""\ud83d\ude00""#), "'\u{1F600}'");
        assert_eq!(repr(r#""\ud800""#), r"'\ud800'");
        assert_eq!(repr(r#""\ud800\u0041""#), r"'\ud800A'");
        assert_eq!(repr(r#""\u00e9\t\"'""#), r#"'é\t"\''"#);
    }

    #[test]
    fn rejects_what_python_rejects() {
        for bad in [
            "",
            "01",
            "1.",
            ".5",
            "1e",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "{'a':1}",
            "\"\t\"",
            "nul",
            "[1 2]",
            "\"\\x\"",
            "\"\\u12G4\"",
            "\u{feff}1",
            "1 2",
            "-",
            "-Inf",
            "{\"a\" 1}",
            "[",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&deep).unwrap_err().message, "Nesting too deep");
        assert!(parse_limited("[[[1]]]", 2).is_err());
        assert!(parse_limited("[[1]]", 2).is_ok());
        let hostile = "[".repeat(100_000);
        assert!(parse(&hostile).is_err());
    }

    #[test]
    fn error_positions_follow_python() {
        let e = parse("{\n  \"a\": }").unwrap_err();
        assert_eq!(e.to_string(), "Expecting value: line 2 column 8 (char 9)");
    }
}
