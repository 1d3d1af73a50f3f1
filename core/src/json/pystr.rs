//! Python `str` values: Unicode code points, lone surrogates included.

use std::borrow::Cow;

/// A Python string held as WTF-8: UTF-8 that may also encode lone surrogate
/// code points (U+D800 to U+DFFF), which `json.loads("\"\\ud800\"")` yields
/// and Rust's `str` cannot hold. Text without surrogates is plain UTF-8.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct PyStr {
    bytes: Box<[u8]>,
    /// Whether `bytes` encodes a lone surrogate; when not, it is UTF-8.
    surrogates: bool,
}

impl PyStr {
    /// Builds from WTF-8 bytes produced by this crate's decoder.
    pub(crate) fn from_wtf8(bytes: Vec<u8>) -> PyStr {
        // Surrogates are the only 3-byte sequences ED A0..BF xx.
        let surrogates = bytes.windows(2).any(|w| w[0] == 0xED && w[1] >= 0xA0);
        PyStr {
            bytes: bytes.into_boxed_slice(),
            surrogates,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The text, unless it holds a lone surrogate.
    // The workspace's one allowed `unsafe` (unsafe_code is denied in
    // Cargo.toml): every name, key and message reads its text here, and a
    // checked `from_utf8` would scan every byte again.
    #[allow(unsafe_code)]
    pub fn as_str(&self) -> Option<&str> {
        if self.surrogates {
            return None;
        }
        // SAFETY: the bytes are WTF-8: every constructor copies a `str`
        // (`From`, the decoder's unescaped runs) or writes code points of at
        // most U+10FFFF with `push_code_point` (the decoder's `\u` escapes,
        // `one_code_point` of an existing string's). WTF-8 differs from
        // UTF-8 only in surrogates, which `from_wtf8` flagged (only a
        // surrogate's encoding starts ED A0..ED BF), so without one it is
        // UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(&self.bytes) })
    }

    /// The text with each lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        self.to_str_lossy().into_owned()
    }

    /// [`PyStr::to_string_lossy`], borrowed when there is no surrogate.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        match self.as_str() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(
                self.code_points()
                    .map(|cp| char::from_u32(cp).unwrap_or('\u{FFFD}'))
                    .collect(),
            ),
        }
    }

    pub fn eq_str(&self, other: &str) -> bool {
        &*self.bytes == other.as_bytes()
    }

    /// The code points, surrogates included.
    pub fn code_points(&self) -> CodePoints<'_> {
        CodePoints {
            bytes: &self.bytes,
            pos: 0,
        }
    }

    /// The code points of a WTF-8 tail of a `PyStr` (cut at a code point).
    pub(crate) fn code_points_of(bytes: &[u8]) -> CodePoints<'_> {
        CodePoints { bytes, pos: 0 }
    }
}

impl From<&str> for PyStr {
    fn from(s: &str) -> PyStr {
        PyStr {
            bytes: s.as_bytes().into(),
            surrogates: false,
        }
    }
}

impl From<String> for PyStr {
    fn from(s: String) -> PyStr {
        PyStr {
            bytes: s.into_bytes().into_boxed_slice(),
            surrogates: false,
        }
    }
}

/// Iterator over the code points of WTF-8 bytes.
pub struct CodePoints<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for CodePoints<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let b = &self.bytes[self.pos..];
        let first = *b.first()? as u32;
        let (cp, len) = if first < 0x80 {
            (first, 1)
        } else if first < 0xE0 {
            (((first & 0x1F) << 6) | (b[1] as u32 & 0x3F), 2)
        } else if first < 0xF0 {
            (
                ((first & 0x0F) << 12) | ((b[1] as u32 & 0x3F) << 6) | (b[2] as u32 & 0x3F),
                3,
            )
        } else {
            (
                ((first & 0x07) << 18)
                    | ((b[1] as u32 & 0x3F) << 12)
                    | ((b[2] as u32 & 0x3F) << 6)
                    | (b[3] as u32 & 0x3F),
                4,
            )
        };
        self.pos += len;
        Some(cp)
    }
}

/// Appends one code point (a surrogate too) as WTF-8.
pub(crate) fn push_code_point(out: &mut Vec<u8>, cp: u32) {
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
    } else if cp < 0x10000 {
        out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_without_surrogates_is_utf8() {
        let mut bytes = Vec::new();
        for cp in [0x41, 0xE9, 0xD7FF, 0xE000, 0xFFFF, 0x10FFFF] {
            push_code_point(&mut bytes, cp);
        }
        let s = PyStr::from_wtf8(bytes);
        assert_eq!(
            s.as_str(),
            Some("A\u{e9}\u{d7ff}\u{e000}\u{ffff}\u{10ffff}")
        );
    }

    #[test]
    fn keeps_lone_surrogates() {
        let mut bytes = b"a".to_vec();
        push_code_point(&mut bytes, 0xD800);
        push_code_point(&mut bytes, 0x1F600);
        let s = PyStr::from_wtf8(bytes);
        assert_eq!(s.as_str(), None);
        assert_eq!(
            s.code_points().collect::<Vec<_>>(),
            vec![0x61, 0xD800, 0x1F600]
        );
        assert_eq!(s.to_string_lossy(), "a\u{FFFD}\u{1F600}");
    }
}
