//! The format of shareable deploy links: `#s=` and then the editor state's
//! JSON, deflate-raw compressed and base64url-encoded, in the URL fragment.
//!
//! A link is untrusted input: its length is capped before decoding and the
//! state's size after decompression (the browser compresses and inflates;
//! the console passes [`MAX_STATE_BYTES`] to its inflater), and what it holds
//! is only ever parsed as JSON, under a tight nesting limit.

use std::fmt;

use crate::json::{JsonError, Value, parse_limited};

/// What starts a fragment that holds editor state.
pub const PREFIX: &str = "#s=";

/// Longest link payload accepted (characters after [`PREFIX`]): a full
/// deploy request compresses to well under 2 KiB, and URLs past a few tens of
/// KiB are cut by chat tools and proxies.
pub const MAX_LINK_CHARS: usize = 16 * 1024;

/// Largest state a link may expand to (bytes of JSON): bounds what a small
/// link can inflate to (a deflate bomb).
pub const MAX_STATE_BYTES: usize = 64 * 1024;

/// Deepest nesting a linked state may have: a deploy request is at most six
/// levels deep (`mooncake.autoscaling.decode.metrics[0].target`).
pub const MAX_STATE_DEPTH: usize = 32;

/// Why a link cannot be opened.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkError {
    NoState,
    TooLong { chars: usize },
    NotBase64,
    TooLarge { bytes: usize },
    NotARequest,
    InvalidJson(JsonError),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::NoState => f.write_str("this link holds no editor state"),
            LinkError::TooLong { chars } => {
                write!(
                    f,
                    "this link is too long ({chars} characters, at most {MAX_LINK_CHARS})"
                )
            }
            LinkError::NotBase64 => f.write_str("this link is damaged (not base64url)"),
            LinkError::TooLarge { bytes } => {
                write!(
                    f,
                    "this link expands to {bytes} bytes, at most {MAX_STATE_BYTES}"
                )
            }
            LinkError::NotARequest => f.write_str("this link does not hold a deploy request"),
            LinkError::InvalidJson(e) => write!(f, "this link is damaged (invalid JSON: {e})"),
        }
    }
}

impl std::error::Error for LinkError {}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding.
pub fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// The bytes of base64url text without padding; `None` for any other
/// character. Leftover bits of a truncated last group are dropped.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The fragment for compressed state, or why it cannot be a link.
pub fn link_of_compressed(bytes: &[u8]) -> Result<String, LinkError> {
    let payload = base64url_encode(bytes);
    if payload.len() > MAX_LINK_CHARS {
        return Err(LinkError::TooLong {
            chars: payload.len(),
        });
    }
    Ok(format!("{PREFIX}{payload}"))
}

/// The compressed state a fragment carries.
pub fn compressed_of_link(fragment: &str) -> Result<Vec<u8>, LinkError> {
    let payload = fragment.strip_prefix(PREFIX).ok_or(LinkError::NoState)?;
    if payload.len() > MAX_LINK_CHARS {
        return Err(LinkError::TooLong {
            chars: payload.len(),
        });
    }
    base64url_decode(payload).ok_or(LinkError::NotBase64)
}

/// The editor state in a link's decompressed JSON: an object, or why not.
pub fn state_of_json(text: &str) -> Result<Value, LinkError> {
    if text.len() > MAX_STATE_BYTES {
        return Err(LinkError::TooLarge { bytes: text.len() });
    }
    match parse_limited(text, MAX_STATE_DEPTH) {
        Ok(state @ Value::Object(_)) => Ok(state),
        Ok(_) => Err(LinkError::NotARequest),
        Err(e) => Err(LinkError::InvalidJson(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips() {
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(base64url_decode(&base64url_encode(&bytes)), Some(bytes));
        }
        assert_eq!(base64url_encode(b"hi?"), "aGk_");
        assert_eq!(base64url_decode("a+b"), None);
        assert_eq!(base64url_decode("a=="), None);
    }

    #[test]
    fn links_are_capped_and_checked() {
        assert_eq!(compressed_of_link("#x=abc"), Err(LinkError::NoState));
        let long = format!("{PREFIX}{}", "A".repeat(MAX_LINK_CHARS + 1));
        assert_eq!(
            compressed_of_link(&long),
            Err(LinkError::TooLong {
                chars: MAX_LINK_CHARS + 1
            })
        );
        assert_eq!(compressed_of_link("#s=a b"), Err(LinkError::NotBase64));
        let link = link_of_compressed(b"\x00\xffstate").unwrap();
        assert_eq!(compressed_of_link(&link).unwrap(), b"\x00\xffstate");
        assert!(link_of_compressed(&vec![7; MAX_LINK_CHARS]).is_err());
    }

    #[test]
    fn only_an_object_is_a_state() {
        assert!(state_of_json(r#"{"endpoint_name": "a"}"#).is_ok());
        assert_eq!(state_of_json("[1]"), Err(LinkError::NotARequest));
        assert!(matches!(state_of_json("{"), Err(LinkError::InvalidJson(_))));
        assert!(matches!(
            state_of_json(&"[".repeat(40)),
            Err(LinkError::InvalidJson(_))
        ));
        let big = format!(r#"{{"a": "{}"}}"#, "x".repeat(MAX_STATE_BYTES));
        assert!(matches!(
            state_of_json(&big),
            Err(LinkError::TooLarge { .. })
        ));
    }
}
