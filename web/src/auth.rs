//! Signing in, by the server's `--auth` (`GET /api/config`'s `auth`). Every
//! request carries the bearer token when the tab holds one; any 401 asks
//! for an identity again, as the mode says:
//! - `token` (and `none`, for an older server with a token file): the
//!   token is asked for and kept in sessionStorage (never in a link); once
//!   it is saved, a deploy or change the 401 stopped goes again (each
//!   follows [`epoch`]);
//! - `oidc`: the console signs in itself, so the browser goes to
//!   `/auth/sign-in?next=<this page>`;
//! - `alb`: the load balancer signs in; the page asks to be reloaded.
//!
//! While an identity is wanted, the pages stop asking the server (their
//! pollers would only be refused); once the user gives one, everything
//! that depends on [`epoch`] asks again.
//!
//! Before the browser leaves for a sign-in (a session that ended, "Sign in
//! again now", the load balancer's reload), the pages keep what the user
//! has open ([`keep_before_leaving`]), and put it back on their
//! return. What a 401 shows (the prompt, the banners) is `identity.rs`'s.

use gco_api::route::{SIGN_IN, encode_segment};
use leptos::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

const KEY: &str = "gco-console-token";
/// When this tab last went to the sign-in page (ms since the epoch).
const SIGN_IN_AT: &str = "gco-console-sign-in-at";
/// A 401 this soon after a sign-in is not sent to sign in again: the
/// session did not take (a cookie the browser refused, say), and another
/// round would loop.
const SIGN_IN_LOOP_MS: u64 = 30_000;

use crate::browser::session_storage as storage;

pub fn token() -> Option<String> {
    storage()?.get_item(KEY).ok()?.filter(|t| !t.is_empty())
}

pub fn set_token(t: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(KEY, t.trim());
    }
    TOKEN_GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Counts the tokens the user gave this page: a request notes the count
/// it went out under ([`token_generation`]), so that its 401 is not taken
/// for one to a token given since.
static TOKEN_GENERATION: AtomicU32 = AtomicU32::new(0);

pub fn token_generation() -> u32 {
    TOKEN_GENERATION.load(Ordering::Relaxed)
}

/// The app's sign-in state: created and provided as context once, at the
/// app's root ([`install`]), before anything that asks the server; read
/// by [`Auth::get`] where a page is built, and kept by what asks later.
#[derive(Clone, Copy)]
pub struct Auth {
    /// The server answered 401 (its reason), until an identity is given.
    pub needed: RwSignal<Option<String>>,
    /// The token prompt is open.
    pub prompt: RwSignal<bool>,
    /// Counts the identities given; pages read it to ask again.
    pub epoch: RwSignal<u32>,
    /// A sign-in that came back refused: not sent round again.
    pub looped: RwSignal<bool>,
    /// The server refused the token the user gave (its words).
    pub refused: RwSignal<Option<String>>,
    /// The user forgot the token: the prompt waits to be asked for.
    pub forgot: RwSignal<bool>,
    /// The browser is on its way to the sign-in page.
    leaving: RwSignal<bool>,
}

/// Creates the sign-in state and provides it; once, at the app's root,
/// before anything that asks the server.
pub fn install() {
    let auth = Auth {
        needed: RwSignal::new(None),
        prompt: RwSignal::new(false),
        epoch: RwSignal::new(0),
        looped: RwSignal::new(false),
        refused: RwSignal::new(None),
        forgot: RwSignal::new(false),
        leaving: RwSignal::new(false),
    };
    provide_context(auth);
    // For the app's life: the root is never cleaned up.
    let _ = window_event_listener_untyped(UNAUTHORIZED, move |ev| {
        let why = js_sys::Reflect::get(&ev, &REASON.into()).ok();
        auth.unauthorized(why.and_then(|w| w.as_string()).unwrap_or_default());
    });
}

/// The event the window gets on a 401, with the server's reason as its
/// `reason`.
const UNAUTHORIZED: &str = "gco-console-unauthorized";
const REASON: &str = "reason";

/// The server answered 401 (`why`) to a request sent under token
/// generation `sent`: the sign-in state asks for an identity. (An event,
/// as what asks the server may run with no reactive owner to find the
/// state by: a poll, a click's task.)
///
/// A 401 to a request sent before the user gave a token speaks of one the
/// tab no longer holds: it neither throws the new one away nor opens the
/// prompt again.
pub fn unauthorized(why: &str, sent: u32) {
    if sent != token_generation() {
        return;
    }
    if let Ok(ev) = web_sys::Event::new(UNAUTHORIZED) {
        let _ = js_sys::Reflect::set(&ev, &REASON.into(), &why.into());
        let _ = window().dispatch_event(&ev);
    }
}

/// The event the window gets as the browser leaves for a sign-in: what is
/// kept before it goes runs on it, at once.
const LEAVING: &str = "gco-console-leaving";

/// Has `keep` run before the browser leaves for a sign-in, until the
/// reactive owner it is called under (a page) is cleaned up.
pub fn keep_before_leaving(keep: impl Fn() + 'static) {
    let listener = window_event_listener_untyped(LEAVING, move |_| keep());
    on_cleanup(move || listener.remove());
}

/// A reactive read that changes each time the user gives an identity.
pub fn epoch() -> u32 {
    use_context::<Auth>().map_or(0, |a| a.epoch.get())
}

impl Auth {
    /// The state the app's root provides.
    pub fn get() -> Auth {
        expect_context::<Auth>()
    }

    /// Goes to `href` (a sign-in, or a reload the load balancer signs in),
    /// keeping what is open first: every page keeps its open work.
    pub fn leave_for(self, href: &str) {
        if let Ok(leaving) = web_sys::Event::new(LEAVING) {
            let _ = window().dispatch_event(&leaving);
        }
        self.leaving.set(true);
        let _ = window().location().assign(href);
    }

    /// The user signs out: the page is leaving, and the 401s its last polls
    /// get once the session cookie is gone must not send it to sign in again
    /// (which would take over from the sign-out's own way, to the provider).
    pub fn signing_out(self) {
        self.leaving.set(true);
    }

    /// "Sign in again now": a new session before this one ends (the provider
    /// still knows the user, so it asks nothing), back on this page with what
    /// was open.
    pub fn renew(self) {
        if let Some(s) = storage() {
            let _ = s.set_item(SIGN_IN_AT, &(js_sys::Date::now() as u64).to_string());
        }
        self.leave_for(&sign_in_href(&here()));
    }

    /// The server answered 401 (`why`): forget the token it refused (and say
    /// so at the prompt), and ask.
    fn unauthorized(self, why: String) {
        let held = token().is_some();
        if let Some(s) = storage() {
            let _ = s.remove_item(KEY);
        }
        if held {
            let _ = self.refused.try_set(Some(why.clone()));
        }
        let _ = self.needed.try_set(Some(why));
    }

    /// "Forget token": the tab no longer holds one; the pages stop asking the
    /// server until the user enters one again.
    pub fn forget_token(self) {
        if let Some(s) = storage() {
            let _ = s.remove_item(KEY);
        }
        self.refused.set(None);
        self.forgot.set(true);
        self.needed.set(Some("the token was forgotten".to_owned()));
    }

    /// Whether the console waits for an identity (pages do not poll meanwhile).
    pub fn waiting(self) -> bool {
        self.needed.with_untracked(Option::is_some)
    }

    /// Opens the token prompt (the header's "Enter token").
    pub fn ask_for_token(self) {
        self.forgot.set(false);
        self.prompt.set(true);
    }

    /// Goes to the OpenID sign-in, unless this tab has just come back from
    /// one (then it says so instead of looping).
    pub fn sign_in(self) {
        if self.leaving.get_untracked() {
            return;
        }
        // Whole milliseconds: Rust's float text would add 15 KB to the wasm.
        let now = js_sys::Date::now() as u64;
        let last = storage()
            .and_then(|s| s.get_item(SIGN_IN_AT).ok().flatten())
            .and_then(|t| t.parse::<u64>().ok());
        if last.is_some_and(|t| now.saturating_sub(t) < SIGN_IN_LOOP_MS) {
            self.looped.set(true);
            return;
        }
        if let Some(s) = storage() {
            let _ = s.set_item(SIGN_IN_AT, &now.to_string());
        }
        self.leave_for(&sign_in_href(&here()));
    }
}

/// The user signed in (`GET /api/me` answered): a later 401 may send the
/// browser to sign in again.
pub fn signed_in() {
    if let Some(s) = storage() {
        let _ = s.remove_item(SIGN_IN_AT);
    }
}

/// `/auth/sign-in?next=<path and query>`: the sign-in that comes back to
/// this page.
pub fn sign_in_href(path_and_query: &str) -> String {
    format!("{SIGN_IN}?next={}", encode_segment(path_and_query))
}

/// This page's path and query.
pub fn here() -> String {
    let l = window().location();
    format!(
        "{}{}",
        l.pathname().unwrap_or_default(),
        l.search().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sign_in_comes_back_to_the_page_and_its_query() {
        assert_eq!(
            sign_in_href("/endpoints/pd-1?tab=history"),
            "/auth/sign-in?next=%2Fendpoints%2Fpd-1%3Ftab%3Dhistory"
        );
        assert_eq!(sign_in_href("/"), "/auth/sign-in?next=%2F");
    }
}
