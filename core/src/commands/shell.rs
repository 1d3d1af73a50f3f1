//! POSIX shell quoting, so a printed command runs with exactly its arguments.

use std::borrow::Cow;

/// Characters no POSIX shell treats specially anywhere in a word. `~` and
/// `#` are left out: they mean something at the start of one.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-+=:,./@%".contains(c)
}

/// `arg` as one shell word: unchanged when it is plain, otherwise in single
/// quotes, inside which only `'` itself needs care (close, escape, reopen).
pub fn quote(arg: &str) -> Cow<'_, str> {
    if !arg.is_empty() && arg.chars().all(is_plain) {
        return Cow::Borrowed(arg);
    }
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('\'');
    for c in arg.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Cow::Owned(out)
}

/// A command line from its arguments.
pub fn join<S: AsRef<str>>(args: &[S]) -> String {
    // A loop, not `[Cow<str>]::join`: each slice type `join` is used on
    // brings its own copy of it into the npm package (1.3 KB each).
    let mut line = String::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        line.push_str(&quote(arg.as_ref()));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(quote("us-east-1"), "us-east-1");
        assert_eq!(quote("KEY=va lue"), "'KEY=va lue'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote("~root"), "'~root'");
        assert_eq!(join(&["a b", "c"]), "'a b' c");
    }
}
