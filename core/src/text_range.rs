//! Places in a document's text, as editors and CI tools count them: lines
//! and columns from 1, columns in UTF-16 code units (JavaScript strings,
//! LSP's default, CodeMirror, Monaco), and byte offsets into the text as
//! given.

/// A point in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
pub struct Position {
    /// From 1; a line ends at `\n`, `\r\n` or a lone `\r`.
    pub line: usize,
    /// From 1, in UTF-16 code units from the line's start. A leading
    /// byte-order mark is no character: it is not counted.
    pub column: usize,
    /// Bytes (UTF-8) from the start of the text, byte-order mark included.
    pub offset: usize,
}

/// From `start` to `end` (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
pub struct TextRange {
    pub start: Position,
    pub end: Position,
}

const BOM: &str = "\u{feff}";

/// Positions in a text. Each is counted from the start of the text: the
/// few a check places cost less than an index of every line would cost the
/// package.
pub struct LineIndex<'t> {
    text: &'t str,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> LineIndex<'t> {
        LineIndex { text }
    }

    /// The position of a byte offset (at most the text's length, on a
    /// character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let b = self.text.as_bytes();
        let (mut line, mut start) = (1, 0);
        for (i, &c) in b[..offset].iter().enumerate() {
            if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
                line += 1;
                start = i + 1;
            }
        }
        if start == 0 && self.text.starts_with(BOM) {
            start = BOM.len().min(offset);
        }
        let column = self.text[start..offset]
            .chars()
            .map(char::len_utf16)
            .sum::<usize>();
        Position {
            line,
            column: column + 1,
            offset,
        }
    }

    pub fn range(&self, start: usize, end: usize) -> TextRange {
        let first = self.position(start);
        // Most ranges end on the line they start on: counted from the start
        // rather than from the text's beginning again.
        let within = &self.text[start..end];
        let end = if within.contains(['\n', '\r']) {
            self.position(end)
        } else {
            let units = within.chars().map(char::len_utf16).sum::<usize>();
            Position {
                column: first.column + units,
                offset: end,
                ..first
            }
        };
        TextRange { start: first, end }
    }

    /// The character at `offset` (nothing at the end of the text).
    pub fn char_range(&self, offset: usize) -> TextRange {
        let width = self.text[offset..].chars().next().map_or(0, char::len_utf8);
        self.range(offset, offset + width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, offset: usize) -> (usize, usize) {
        let p = LineIndex::new(text).position(offset);
        (p.line, p.column)
    }

    #[test]
    fn counts_lines_and_utf16_columns() {
        let text = "{\r\n\t\"😀中\": 1,\r\"b\": 2\n}";
        let one = text.find('1').unwrap();
        // Tab 1, quote 1, emoji 2, CJK 1, quote, colon, space: column 9.
        assert_eq!(at(text, one), (2, 9));
        assert_eq!(at(text, text.find('b').unwrap()), (3, 2));
        assert_eq!(at(text, text.len() - 1), (4, 1));
        assert_eq!(at(text, 0), (1, 1));
    }

    #[test]
    fn a_byte_order_mark_is_no_column() {
        let text = "\u{feff}{\"a\": 1}";
        assert_eq!(at(text, 3), (1, 1));
        assert_eq!(at(text, text.find('1').unwrap()), (1, 7));
        assert_eq!(at(text, 0), (1, 1));
    }
}
