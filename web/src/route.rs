//! Pages by URL path, with the History API (the backend serves index.html
//! for every console path).

use leptos::prelude::*;
use wasm_bindgen::JsValue;

#[derive(Clone, Debug, PartialEq)]
pub enum Page {
    List,
    New,
    Endpoint(String),
    /// A path that is no page: said so, not shown as the list.
    NotFound(String),
}

impl Page {
    pub fn from_path(path: &str) -> Page {
        let path = path.trim_end_matches('/');
        if path.is_empty() || path == "/endpoints" {
            Page::List
        } else if path == "/new" {
            Page::New
        } else if let Some(name) = path.strip_prefix("/endpoints/") {
            let name = js_sys::decode_uri_component(name)
                .ok()
                .and_then(|s| s.as_string())
                .unwrap_or_default();
            if name.is_empty() {
                Page::List
            } else {
                Page::Endpoint(name)
            }
        } else {
            Page::NotFound(path.to_owned())
        }
    }

    pub fn href(&self) -> String {
        match self {
            Page::List | Page::NotFound(_) => "/".into(),
            Page::New => "/new".into(),
            Page::Endpoint(name) => format!("/endpoints/{}", crate::api::segment(name)),
        }
    }
}

fn current() -> Page {
    let path = web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default();
    Page::from_path(&path)
}

thread_local! {
    // The app's one page signal, reachable from event handlers and tasks,
    // which run outside the component tree.
    static PAGE: std::cell::Cell<Option<RwSignal<Page>>> = const { std::cell::Cell::new(None) };
}

/// The current page, following `popstate`. Created once, by the app.
pub fn page_signal() -> RwSignal<Page> {
    if let Some(s) = PAGE.with(std::cell::Cell::get) {
        return s;
    }
    let page = RwSignal::new(current());
    PAGE.with(|p| p.set(Some(page)));
    let handle = window_event_listener(leptos::ev::popstate, move |_| page.set(current()));
    std::mem::forget(handle);
    page
}

pub fn navigate(page: Page) {
    if let Some(w) = web_sys::window()
        && let Ok(history) = w.history()
    {
        let _ = history.push_state_with_url(&JsValue::NULL, "", Some(&page.href()));
    }
    if let Some(s) = PAGE.with(std::cell::Cell::get) {
        s.set(page);
    }
    if let Some(w) = web_sys::window() {
        w.scroll_to_with_x_and_y(0.0, 0.0);
    }
}

/// A link that navigates without reloading.
#[component]
pub fn Link(to: Page, children: Children) -> impl IntoView {
    let href = to.href();
    view! {
        <a href=href on:click=move |ev: leptos::ev::MouseEvent| {
            if !(ev.ctrl_key() || ev.meta_key() || ev.shift_key()) {
                ev.prevent_default();
                navigate(to.clone());
            }
        }>{children()}</a>
    }
}
