//! Shareable deploy links: the editor state, compressed (deflate-raw, by the
//! browser's CompressionStream) and base64url-encoded, in the URL fragment.
//! A link is untrusted input: its size is capped before and after
//! decompression, and whatever it holds is only ever parsed as JSON.

use gco_spec::json::Value;
use wasm_bindgen::prelude::*;

/// Longest fragment accepted (characters after `#s=`).
pub const MAX_LINK_CHARS: usize = 16 * 1024;
/// Largest state a link may expand to (bytes of JSON).
pub const MAX_STATE_BYTES: usize = 64 * 1024;

pub const PREFIX: &str = "#s=";

#[wasm_bindgen(inline_js = r#"
export async function deflate(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
export async function inflate(bytes, max) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) { await reader.cancel(); throw new Error("too large"); }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return new TextDecoder("utf-8", { fatal: true }).decode(out);
}
"#)]
extern "C" {
    #[wasm_bindgen(catch)]
    async fn deflate(text: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    async fn inflate(bytes: &[u8], max: usize) -> Result<JsValue, JsValue>;
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

pub fn base64url_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 4);
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

pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The fragment for a state.
pub async fn encode(state: &Value) -> Result<String, String> {
    let bytes = deflate(&state.to_json())
        .await
        .map_err(|_| "this browser cannot compress links".to_owned())?;
    let bytes = js_sys::Uint8Array::new(&bytes).to_vec();
    let link = base64url_encode(&bytes);
    if link.len() > MAX_LINK_CHARS {
        return Err(format!(
            "the editor state is too large for a link ({} characters, at most {MAX_LINK_CHARS})",
            link.len()
        ));
    }
    Ok(format!("{PREFIX}{link}"))
}

/// The state in a fragment, or why the link cannot be used.
pub async fn decode(fragment: &str) -> Result<Value, String> {
    let data = fragment
        .strip_prefix(PREFIX)
        .ok_or("this link holds no editor state")?;
    if data.len() > MAX_LINK_CHARS {
        return Err(format!(
            "this link is too long ({} characters, at most {MAX_LINK_CHARS})",
            data.len()
        ));
    }
    let bytes = base64url_decode(data).ok_or("this link is damaged (not base64url)")?;
    let text = inflate(&bytes, MAX_STATE_BYTES)
        .await
        .map_err(|_| "this link is damaged or too large to open".to_owned())?
        .as_string()
        .ok_or("this link is damaged")?;
    match gco_spec::json::parse_limited(&text, 32) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("this link does not hold a deploy request".into()),
        Err(e) => Err(format!("this link is damaged (invalid JSON: {e})")),
    }
}

/// Reads the current page's fragment.
pub fn current_fragment() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Replaces the fragment without a new history entry.
pub fn set_fragment(fragment: &str) {
    if let Some(w) = web_sys::window()
        && let Ok(history) = w.history()
    {
        let path = w.location().pathname().unwrap_or_default();
        let _ =
            history.replace_state_with_url(&JsValue::NULL, "", Some(&format!("{path}{fragment}")));
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
    }
}
