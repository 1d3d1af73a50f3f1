//! What the pages ask of the browser besides the views they render: the
//! clipboard, where the focus goes, and the tab's sessionStorage.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Puts `text` on the clipboard; whether the browser allowed it.
pub async fn copy(text: &str) -> bool {
    let written = window().navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(written).await.is_ok()
}

/// Moves the focus to the first element `selector` matches (`#id` for one
/// by its id), if the page has one.
pub fn focus(selector: &str) {
    if let Some(el) = document()
        .query_selector(selector)
        .ok()
        .flatten()
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// This tab's sessionStorage (what it keeps lasts as long as the tab).
pub fn session_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}
