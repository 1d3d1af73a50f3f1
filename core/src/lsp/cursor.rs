//! Where the cursor is in a JSON text that is being typed, and so may not
//! parse: the member path it is at, and whether it is at a key or a value.
//! Hover and completion read it; the diagnostics' ranges come from the
//! core's own (`document::check_document_source`), on text that parses.
//!
//! A tolerant scan: a flat list of tokens (an unterminated string ends at
//! its line's end), then a stack of open containers replayed up to the
//! cursor. It never fails and never recurses, whatever the text.

/// One step of a member path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A token the cursor is in or touches, which an edit replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Byte offsets in the text.
    pub start: usize,
    pub end: usize,
    /// A string's decoded text (without quotes), or a bare word's.
    pub text: String,
    /// The text is a string with its quotes (a bare word has none).
    pub quoted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Where a member's name goes: `path` is the object's.
    Key {
        /// The key typed so far, when the cursor is in one.
        word: Option<Word>,
        /// Whether a `:` follows the key already.
        colon_follows: bool,
    },
    /// Where a value goes: `path` is the member's.
    Value { word: Option<Word> },
    /// Between a value and the `,` or end after it.
    Nowhere,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    pub path: Vec<Step>,
    pub place: Place,
    /// The members the cursor's object already has (for `Place::Key`).
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open(bool),
    Close,
    Colon,
    Comma,
    Str { text: String, closed: bool },
    Bare(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let tok = match c {
            '{' | '[' => Tok::Open(c == '{'),
            '}' | ']' => Tok::Close,
            ':' => Tok::Colon,
            ',' => Tok::Comma,
            '"' => {
                let (text, closed) = string(&mut chars);
                Tok::Str { text, closed }
            }
            c if c.is_whitespace() => continue,
            c => {
                let mut word = String::from(c);
                while let Some(&(_, c)) = chars.peek() {
                    if c.is_whitespace() || "{}[]:,\"".contains(c) {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                Tok::Bare(word)
            }
        };
        let end = chars.peek().map_or(text.len(), |&(at, _)| at);
        out.push(Token { tok, start, end });
    }
    out
}

/// A string's text after its opening quote, decoded as far as it goes, and
/// whether its closing quote came before the line's end.
fn string(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> (String, bool) {
    let mut text = String::new();
    while let Some(&(_, c)) = chars.peek() {
        if c == '\n' || c == '\r' {
            return (text, false);
        }
        chars.next();
        match c {
            '"' => return (text, true),
            '\\' => match chars.next_if(|&(_, c)| c != '\n' && c != '\r') {
                Some((_, 'n')) => text.push('\n'),
                Some((_, 't')) => text.push('\t'),
                Some((_, 'r')) => text.push('\r'),
                Some((_, 'b')) => text.push('\u{8}'),
                Some((_, 'f')) => text.push('\u{c}'),
                Some((_, 'u')) => {
                    let mut code = 0u32;
                    let mut digits = 0;
                    while digits < 4
                        && let Some((_, d)) = chars.next_if(|(_, d)| d.is_ascii_hexdigit())
                    {
                        code = code * 16 + d.to_digit(16).unwrap_or(0);
                        digits += 1;
                    }
                    text.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                }
                Some((_, other)) => text.push(other),
                None => {}
            },
            c => text.push(c),
        }
    }
    (text, false)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Key,
    Colon,
    Value,
    /// A value was read: a `,` or the container's end comes next.
    Next,
}

#[derive(Debug)]
struct Frame {
    object: bool,
    expect: Expect,
    /// The member being read (objects) or the item's index (lists).
    key: Option<String>,
    index: usize,
    keys: Vec<String>,
}

impl Frame {
    fn new(object: bool) -> Frame {
        Frame {
            object,
            expect: if object { Expect::Key } else { Expect::Value },
            key: None,
            index: 0,
            keys: Vec::new(),
        }
    }

    fn at_key(&self) -> bool {
        self.object && matches!(self.expect, Expect::Key | Expect::Next)
    }
}

/// The open containers, replayed token by token. The document's root is a
/// list of one item.
struct Replay {
    stack: Vec<Frame>,
}

impl Replay {
    fn new() -> Replay {
        Replay {
            stack: vec![Frame::new(false)],
        }
    }

    fn top(&mut self) -> &mut Frame {
        if self.stack.is_empty() {
            self.stack.push(Frame::new(false));
        }
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    /// Takes one token; a container that closes is given back.
    fn step(&mut self, tok: &Tok) -> Option<Frame> {
        // The root never closes: a stray `}` is typing in progress.
        if matches!(tok, Tok::Close) {
            return (self.stack.len() > 1).then(|| self.stack.pop()).flatten();
        }
        let top = self.top();
        match tok {
            Tok::Open(object) => {
                top.expect = Expect::Next;
                self.stack.push(Frame::new(*object));
            }
            Tok::Close => {}
            Tok::Colon if top.object => top.expect = Expect::Value,
            Tok::Colon => {}
            Tok::Comma if top.object => {
                top.expect = Expect::Key;
                top.key = None;
            }
            Tok::Comma => {
                top.index += 1;
                top.expect = Expect::Value;
            }
            Tok::Str { text, .. } if top.at_key() => {
                top.key = Some(text.clone());
                top.keys.push(text.clone());
                top.expect = Expect::Colon;
            }
            Tok::Str { .. } | Tok::Bare(_) => top.expect = Expect::Next,
        }
        None
    }

    /// The path to the innermost container; with its current member or
    /// item too when `member`.
    fn path(&self, member: bool) -> Vec<Step> {
        let last = self.stack.len().saturating_sub(1);
        self.stack
            .iter()
            .enumerate()
            // The root list is no step of any path.
            .skip(1)
            .filter(|(at, _)| member || *at < last)
            .filter_map(|(_, f)| match (f.object, &f.key) {
                (true, Some(key)) => Some(Step::Key(key.clone())),
                (true, None) => None,
                (false, _) => Some(Step::Index(f.index)),
            })
            .collect()
    }
}

/// Whether the cursor at `offset` is in `token` (at its end too, for one
/// that is still being typed).
fn touches(token: &Token, offset: usize) -> bool {
    match &token.tok {
        Tok::Str { closed: true, .. } => token.start < offset && offset < token.end,
        Tok::Str { closed: false, .. } => token.start < offset && offset <= token.end,
        Tok::Bare(_) => token.start <= offset && offset <= token.end,
        _ => false,
    }
}

/// The context of the cursor at byte `offset` of `text`.
pub fn context(text: &str, offset: usize) -> Context {
    let tokens = tokens(text);
    let mut replay = Replay::new();
    let mut word_at = None;
    for (at, token) in tokens.iter().enumerate() {
        if touches(token, offset) {
            word_at = Some(at);
            break;
        }
        if token.start >= offset {
            break;
        }
        replay.step(&token.tok);
    }
    let word = word_at.map(|at| {
        let token = &tokens[at];
        let (text, quoted) = match &token.tok {
            Tok::Str { text, .. } => (text.clone(), true),
            Tok::Bare(text) => (text.clone(), false),
            _ => unreachable!("only words touch the cursor"),
        };
        Word {
            start: token.start,
            end: token.end,
            text,
            quoted,
        }
    });
    let depth = replay.stack.len();
    let top = replay.top();
    let place = match (top.object, top.expect, &word) {
        (true, Expect::Key, _) | (true, Expect::Next, Some(_)) => {
            let after = word_at.map_or(0, |at| at + 1);
            let colon_follows = word.is_some()
                && tokens
                    .get(after)
                    .is_some_and(|t| matches!(t.tok, Tok::Colon));
            Place::Key {
                word,
                colon_follows,
            }
        }
        (_, Expect::Value, _) | (false, Expect::Next, Some(_)) => Place::Value { word },
        _ => Place::Nowhere,
    };
    let path = replay.path(matches!(place, Place::Value { .. }));
    let keys = match place {
        Place::Key { .. } => {
            let after = word_at.map_or(0, |at| at + 1);
            object_keys(&mut replay, depth, &tokens[after..], offset)
        }
        _ => Vec::new(),
    };
    Context { path, place, keys }
}

/// Every key of the object at stack depth `depth`, those after the cursor
/// too: the replay goes on until that object closes.
fn object_keys(replay: &mut Replay, depth: usize, after: &[Token], offset: usize) -> Vec<String> {
    for token in after.iter().filter(|t| t.start >= offset) {
        if let Some(closed) = replay.step(&token.tok)
            && replay.stack.len() < depth
        {
            return closed.keys;
        }
    }
    replay
        .stack
        .get(depth - 1)
        .map(|f| f.keys.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context at the `|` in `marked`.
    fn at(marked: &str) -> Context {
        let offset = marked.find('|').unwrap();
        context(&marked.replace('|', ""), offset)
    }

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn a_key_being_typed_in_a_nested_object() {
        let c = at(r#"{"mooncake": {"mode": "both", "sto|"#);
        assert_eq!(c.path, [key("mooncake")]);
        let Place::Key {
            word: Some(word),
            colon_follows,
        } = &c.place
        else {
            panic!("{c:?}")
        };
        assert_eq!(word.text, "sto");
        assert!(!colon_follows);
        assert_eq!(c.keys, ["mode"]);
    }

    #[test]
    fn an_empty_place_for_a_key_sees_the_keys_after_it() {
        let c = at("{\"a\": 1, | \"b\": {\"c\": 2}, \"d\": 3}");
        assert_eq!(
            c.place,
            Place::Key {
                word: None,
                colon_follows: false
            }
        );
        assert!(c.path.is_empty());
        assert_eq!(c.keys, ["a", "b", "d"]);
    }

    #[test]
    fn a_value_in_a_list_in_an_object() {
        let c = at(r#"{"x": {"target_regions": ["us-east-1", "eu-|"]}}"#);
        assert_eq!(c.path, [key("x"), key("target_regions"), Step::Index(1)]);
        assert!(
            matches!(c.place, Place::Value { word: Some(Word { ref text, .. }) } if text == "eu-")
        );
    }

    #[test]
    fn after_a_colon_is_a_value() {
        let c = at(r#"{"mooncake": {"mode": |}}"#);
        assert_eq!(c.path, [key("mooncake"), key("mode")]);
        assert_eq!(c.place, Place::Value { word: None });
        let c = at("{\"mooncake_mode\": \"di|\"}");
        assert_eq!(c.path, [key("mooncake_mode")]);
    }

    #[test]
    fn a_key_with_its_colon_and_escapes() {
        let c = at(r#"{"a\u0062|c": 1}"#);
        let Place::Key {
            word: Some(word),
            colon_follows: true,
        } = &c.place
        else {
            panic!("{c:?}")
        };
        assert_eq!(word.text, "abc");
    }

    #[test]
    fn stray_closers_and_odd_text_do_not_confuse_it() {
        let c = at("}}]] {\"a\": [1, {\"b\": |");
        assert_eq!(c.path, [key("a"), Step::Index(1), key("b")]);
        assert_eq!(at("|").place, Place::Value { word: None });
        assert_eq!(at("\"abc|").path, []);
        assert_eq!(at(r#"{"a": 1 |}"#).place, Place::Nowhere);
    }
}
