//! Pages by URL path, with the History API (the backend serves index.html
//! for every console path), and what a page reads of the URL's query.
//!
//! Not `leptos_router`: for four paths it costs the console more than its
//! whole 20 KB allowance (BENCHMARKS.md has the measurement).

use leptos::prelude::*;
use percent_encoding::percent_decode_str;
use wasm_bindgen::JsValue;

use gco_api::route::encode_segment;

#[derive(Clone, Debug, PartialEq)]
pub enum Page {
    List,
    New,
    Endpoint(String),
    /// The audit view: every endpoint's changes (`/history`).
    Audit,
    /// A path that is no page: said so, not shown as the list.
    NotFound(String),
}

impl Page {
    /// The page a URL path names (its segments percent-decoded).
    pub fn from_path(path: &str) -> Page {
        let path = path.trim_end_matches('/');
        if path.is_empty() || path == "/endpoints" {
            return Page::List;
        }
        if path == "/new" {
            return Page::New;
        }
        if path == "/history" {
            return Page::Audit;
        }
        let Some(segment) = path.strip_prefix("/endpoints/") else {
            return Page::NotFound(path.to_owned());
        };
        match percent_decode_str(segment).decode_utf8() {
            Ok(name) if name.is_empty() => Page::List,
            // One segment: an encoded `/` is part of the name, a bare one
            // is no page.
            Ok(name) if !segment.contains('/') => Page::Endpoint(name.into_owned()),
            _ => Page::NotFound(path.to_owned()),
        }
    }

    pub fn href(&self) -> String {
        match self {
            Page::List | Page::NotFound(_) => "/".into(),
            Page::New => "/new".into(),
            Page::Audit => "/history".into(),
            Page::Endpoint(name) => format!("/endpoints/{}", encode_segment(name)),
        }
    }
}

/// The value of `key` in a URL query (`?a=1&b=2`, with or without its
/// `?`), decoded as browsers encode forms (`+` is a space); `None` when
/// absent or not UTF-8.
pub fn query_value(search: &str, key: &str) -> Option<String> {
    let query = search.strip_prefix('?').unwrap_or(search);
    let decode = |s: &str| {
        let s = s.replace('+', " ");
        percent_decode_str(&s)
            .decode_utf8()
            .ok()
            .map(|s| s.into_owned())
    };
    query
        .split('&')
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .find(|(k, _)| decode(k).as_deref() == Some(key))
        .and_then(|(_, v)| decode(v))
}

/// The current URL's query (`?...`, or empty).
pub fn search() -> String {
    window().location().search().unwrap_or_default()
}

/// Replaces the current URL (`path` with any query) without a new history
/// entry or a page change: the URL follows what a page shows.
pub fn replace_url(path: &str) {
    if let Ok(history) = window().history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(path));
    }
}

/// The app's router: the page the address names. Provided by the app's
/// root; a component takes it with [`Router::get`] while it is set up
/// (event handlers and tasks run outside the component tree).
#[derive(Clone, Copy)]
pub struct Router {
    page: RwSignal<Page>,
}

impl Router {
    /// Creates the router at the app's root, following Back and Forward.
    pub fn provide() -> Router {
        let router = Router {
            page: RwSignal::new(current()),
        };
        let listener = window_event_listener(leptos::ev::popstate, move |_| {
            router.page.set(current());
        });
        on_cleanup(move || listener.remove());
        provide_context(router);
        router
    }

    pub fn get() -> Router {
        expect_context::<Router>()
    }

    /// The page shown (a reactive read).
    pub fn page(&self) -> Page {
        self.page.get()
    }

    pub fn is_on(&self, page: &Page) -> bool {
        self.page.with_untracked(|p| p == page)
    }

    /// Shows `page`, with a new history entry, from the top.
    pub fn navigate(&self, page: Page) {
        self.navigate_to(&page.href());
    }

    /// Shows the page at `url` (a path, with a query the page reads), with
    /// a new history entry, from the top.
    pub fn navigate_to(&self, url: &str) {
        if let Ok(history) = window().history() {
            let _ = history.push_state_with_url(&JsValue::NULL, "", Some(url));
        }
        let path = url.split('?').next().unwrap_or_default();
        let _ = self.page.try_set(Page::from_path(path));
        window().scroll_to_with_x_and_y(0.0, 0.0);
    }
}

fn current() -> Page {
    Page::from_path(&window().location().pathname().unwrap_or_default())
}

/// A link that navigates without reloading (a new tab or window, as the
/// browser does).
#[component]
pub fn Link(to: Page, children: Children) -> impl IntoView {
    let router = Router::get();
    let href = to.href();
    view! {
        <a href=href on:click=move |ev: leptos::ev::MouseEvent| {
            if !(ev.ctrl_key() || ev.meta_key() || ev.shift_key()) {
                ev.prevent_default();
                router.navigate(to.clone());
            }
        }>{children()}</a>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_page() {
        assert_eq!(Page::from_path(""), Page::List);
        assert_eq!(Page::from_path("/"), Page::List);
        assert_eq!(Page::from_path("/endpoints/"), Page::List);
        assert_eq!(Page::from_path("/new"), Page::New);
        assert_eq!(Page::from_path("/new/"), Page::New);
        assert_eq!(Page::from_path("/history"), Page::Audit);
        assert_eq!(
            Page::from_path("/endpoints/pd-1"),
            Page::Endpoint("pd-1".into())
        );
        assert_eq!(Page::from_path("/nope"), Page::NotFound("/nope".to_owned()));
        assert_eq!(
            Page::from_path("/endpoints/a/b"),
            Page::NotFound("/endpoints/a/b".to_owned())
        );
    }

    #[test]
    fn an_endpoint_name_is_percent_decoded() {
        assert_eq!(
            Page::from_path("/endpoints/a%2Fb%20c%C3%A9"),
            Page::Endpoint("a/b cé".into())
        );
        // Not UTF-8: no endpoint of any name.
        assert_eq!(
            Page::from_path("/endpoints/%FF"),
            Page::NotFound("/endpoints/%FF".to_owned())
        );
    }

    #[test]
    fn a_page_is_at_its_href() {
        for page in [
            Page::List,
            Page::New,
            Page::Audit,
            Page::Endpoint("chat".into()),
            Page::Endpoint("a/b ?#%é".into()),
        ] {
            assert_eq!(Page::from_path(&page.href()), page);
        }
        assert_eq!(Page::Endpoint("a/b".into()).href(), "/endpoints/a%2Fb");
        assert_eq!(Page::NotFound("/x".into()).href(), "/");
    }

    #[test]
    fn a_query_value_is_form_decoded() {
        assert_eq!(
            query_value("?tab=history", "tab").as_deref(),
            Some("history")
        );
        assert_eq!(
            query_value("q=a+b%26c&q=second", "q").as_deref(),
            Some("a b&c")
        );
        assert_eq!(query_value("?tab", "tab").as_deref(), Some(""));
        assert_eq!(query_value("?a%20b=1", "a b").as_deref(), Some("1"));
        assert_eq!(query_value("?q=%FF", "q"), None, "not UTF-8");
        assert_eq!(query_value("", "tab"), None);
        assert_eq!(query_value("?tabs=x", "tab"), None);
    }
}
