//! The bearer token: asked for once, kept in sessionStorage (never in a
//! link), asked for again when the server answers 401.

use leptos::prelude::*;

const KEY: &str = "gco-console-token";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}

pub fn token() -> Option<String> {
    storage()?.get_item(KEY).ok()?.filter(|t| !t.is_empty())
}

pub fn set_token(t: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(KEY, t.trim());
    }
}

thread_local! {
    static PROMPT: std::cell::Cell<Option<RwSignal<bool>>> = const { std::cell::Cell::new(None) };
}

thread_local! {
    /// What to do once a token is saved: the action the 401 stopped.
    static RETRY: std::cell::RefCell<Option<Box<dyn FnOnce()>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` once the user saves a token (the request the server refused
/// for want of one, sent again), unless the prompt is cancelled.
pub fn retry_after_token(f: impl FnOnce() + 'static) {
    RETRY.with(|r| *r.borrow_mut() = Some(Box::new(f)));
}

pub fn install(signal: RwSignal<bool>) {
    PROMPT.with(|p| p.set(Some(signal)));
}

pub fn ask_again() {
    if let Some(s) = storage() {
        let _ = s.remove_item(KEY);
    }
    PROMPT.with(|p| {
        if let Some(s) = p.get() {
            s.set(true);
        }
    });
}

#[component]
pub fn TokenPrompt() -> impl IntoView {
    let open = RwSignal::new(false);
    install(open);
    let text = RwSignal::new(String::new());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        set_token(&text.get());
        text.set(String::new());
        open.set(false);
        if let Some(retry) = RETRY.with(|r| r.borrow_mut().take()) {
            retry();
        }
    };
    view! {
        <Show when=move || open.get()>
            <div class="modal" role="dialog" aria-modal="true" aria-labelledby="token-title">
                <form class="panel" on:submit=save>
                    <h2 id="token-title">"This server needs a token"</h2>
                    <p>"Changes need the bearer token configured on the server. It is kept for this tab only."</p>
                    <label for="token-input">"Token"</label>
                    <input id="token-input" type="password" autocomplete="off" autofocus
                        prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))/>
                    <div class="row">
                        <button type="submit" class="primary">"Save token"</button>
                        <button type="button" on:click=move |_| { RETRY.with(|r| r.borrow_mut().take()); open.set(false); }>"Cancel"</button>
                    </div>
                </form>
            </div>
        </Show>
    }
}
