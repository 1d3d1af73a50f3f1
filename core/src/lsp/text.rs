//! An open document's text and the edits a client sends, in LSP's
//! positions: 0-based lines (ending at `\n`, `\r\n` or a lone `\r`) and
//! UTF-16 columns, as `text_range::LineIndex` counts them.
//!
//! Whatever a client sends is applied without a panic: a position past a
//! line's end is the line's end, past the last line the text's end, inside
//! a surrogate pair the character's start, and an edit whose end comes
//! before its start is empty.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};

use crate::text_range::LineIndex;

/// The byte offset of an LSP position in `text`, clamped as above.
pub fn offset_of(text: &str, position: Position) -> usize {
    let bytes = text.as_bytes();
    let mut line_start = 0;
    for _ in 0..position.line {
        match bytes[line_start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            Some(at) => {
                let end = line_start + at;
                line_start = end + 1 + usize::from(bytes[end..].starts_with(b"\r\n"));
            }
            None => return text.len(),
        }
    }
    // LineIndex counts no column for a leading byte-order mark.
    if line_start == 0 && text.starts_with('\u{feff}') {
        line_start = '\u{feff}'.len_utf8();
    }
    let mut units = 0;
    for (at, c) in text[line_start..].char_indices() {
        if c == '\n' || c == '\r' {
            return line_start + at;
        }
        units += c.len_utf16() as u32;
        if units > position.character {
            return line_start + at;
        }
    }
    text.len()
}

/// The LSP position of a byte offset (at most the text's length, on a
/// character boundary).
pub fn position_of(index: &LineIndex<'_>, offset: usize) -> Position {
    let p = index.position(offset);
    Position::new(to_u32(p.line - 1), to_u32(p.column - 1))
}

/// The LSP range of the bytes `start..end`.
pub fn range_of(index: &LineIndex<'_>, start: usize, end: usize) -> Range {
    Range::new(position_of(index, start), position_of(index, end))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Applies one change: a range replaced, or (no range) the whole text.
pub fn apply_change(text: &mut String, change: TextDocumentContentChangeEvent) {
    let Some(range) = change.range else {
        *text = change.text;
        return;
    };
    let start = offset_of(text, range.start);
    let end = offset_of(text, range.end).max(start);
    text.replace_range(start..end, &change.text);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, line: u32, character: u32) -> usize {
        offset_of(text, Position::new(line, character))
    }

    #[test]
    fn counts_utf16_columns_on_every_kind_of_line_end() {
        let text = "{\r\n\t\"😀中\": 1,\r\"b\": 2\n}";
        assert_eq!(at(text, 1, 8), text.find('1').unwrap());
        assert_eq!(at(text, 2, 1), text.find('b').unwrap());
        assert_eq!(at(text, 3, 0), text.len() - 1);
        let index = LineIndex::new(text);
        for offset in [0, text.find('1').unwrap(), text.find('b').unwrap()] {
            assert_eq!(offset_of(text, position_of(&index, offset)), offset);
        }
    }

    #[test]
    fn clamps_what_points_nowhere() {
        let text = "ab\n😀c";
        assert_eq!(at(text, 0, 99), 2, "past the line's end");
        assert_eq!(at(text, 9, 0), text.len(), "past the last line");
        assert_eq!(at(text, 1, 1), 3, "inside a surrogate pair");
        assert_eq!(at(text, 1, 2), 7);
        let mut edited = text.to_owned();
        apply_change(
            &mut edited,
            TextDocumentContentChangeEvent {
                range: Some(Range::new(Position::new(1, 2), Position::new(0, 1))),
                range_length: None,
                text: "X".into(),
            },
        );
        assert_eq!(edited, "ab\n😀Xc", "an end before its start is empty");
    }
}
