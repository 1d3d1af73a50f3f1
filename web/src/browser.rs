//! What the pages ask of the browser besides the views they render: the
//! clipboard, where the focus goes (and the view with it), and the tab's
//! sessionStorage.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Puts `text` on the clipboard; whether the browser allowed it.
pub async fn copy(text: &str) -> bool {
    let written = window().navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(written).await.is_ok()
}

/// The first element `selector` matches (`#id` for one by its id).
pub fn element(selector: &str) -> Option<web_sys::HtmlElement> {
    document()
        .query_selector(selector)
        .ok()
        .flatten()
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
}

/// Moves the focus to the first element `selector` matches, if the page
/// has one.
pub fn focus(selector: &str) {
    if let Some(el) = element(selector) {
        let _ = el.focus();
    }
}

/// Moves the focus to `el` without scrolling the page.
fn focus_unscrolled(el: &web_sys::HtmlElement) {
    let options = web_sys::FocusOptions::new();
    options.set_prevent_scroll(true);
    let _ = el.focus_with_options(&options);
}

/// Moves the focus to the element `selector` matches without scrolling the
/// page (it is in view already: a panel fixed to the window).
pub fn focus_in_place(selector: &str) {
    if let Some(el) = element(selector) {
        focus_unscrolled(&el);
    }
}

/// Scrolls the element of id `id` to the middle of the window and moves
/// the focus to it (it takes focus: `tabindex="-1"`).
pub fn bring_into_view(id: &str) {
    if let Some(el) = document()
        .get_element_by_id(id)
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Center);
        el.scroll_into_view_with_scroll_into_view_options(&options);
        focus_unscrolled(&el);
    }
}

/// This tab's sessionStorage (what it keeps lasts as long as the tab).
pub fn session_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}
