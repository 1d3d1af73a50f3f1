//! Shareable deploy links in the browser: the state is compressed
//! (deflate-raw, by the browser's CompressionStream) and put in the URL
//! fragment in the core's link format ([`gco_spec::share`]), which caps
//! sizes and reads what a link holds only as JSON.

use gco_spec::json::Value;
use gco_spec::share::{self, MAX_STATE_BYTES};
use wasm_bindgen::prelude::*;

pub use gco_spec::share::PREFIX;

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

/// The fragment for a state.
pub async fn encode(state: &Value) -> Result<String, String> {
    let bytes = deflate(&state.to_json())
        .await
        .map_err(|_| "this browser cannot compress links".to_owned())?;
    share::link_of_compressed(&js_sys::Uint8Array::new(&bytes).to_vec()).map_err(|e| match e {
        share::LinkError::TooLong { chars } => format!(
            "the editor state is too large for a link ({chars} characters, at most {})",
            share::MAX_LINK_CHARS
        ),
        other => other.to_string(),
    })
}

/// The state in a fragment, or why the link cannot be used.
pub async fn decode(fragment: &str) -> Result<Value, String> {
    let bytes = share::compressed_of_link(fragment).map_err(|e| e.to_string())?;
    let text = inflate(&bytes, MAX_STATE_BYTES)
        .await
        .map_err(|_| "this link is damaged or too large to open".to_owned())?
        .as_string()
        .ok_or("this link is damaged")?;
    share::state_of_json(&text).map_err(|e| e.to_string())
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
