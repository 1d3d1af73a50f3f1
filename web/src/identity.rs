//! What a 401 asks for, by the server's `--auth` (`auth.rs` holds the
//! sign-in state): the token prompt, the way to the sign-in, or a reload.

use gco_api::AuthMode;
use leptos::prelude::*;

use crate::auth::{Auth, here, set_token, sign_in_href};
use crate::settings::Settings;

/// What a 401 asks for, by the server's mode: the token prompt, the way to
/// the sign-in, or a reload. Mounted once, at the app's root.
#[component]
pub fn Identity() -> impl IntoView {
    let a = Auth::get();
    let mode = Settings::get().auth;
    // Until the server's mode is known (its config needs no identity),
    // a 401 waits.
    Effect::new(move |_| {
        if a.needed.with(Option::is_none) {
            return;
        }
        match mode.get() {
            None | Some(AuthMode::Alb) => {}
            Some(AuthMode::Oidc) => a.sign_in(),
            Some(AuthMode::Token | AuthMode::None) => {
                if !a.forgot.get_untracked() {
                    a.prompt.set(true);
                }
            }
        }
    });
    // `autofocus` works once per page: each opening puts the focus in the box.
    Effect::new(move |_| {
        if a.prompt.get() {
            request_animation_frame(|| crate::browser::focus("#token-input"));
        }
    });
    let text = RwSignal::new(String::new());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        set_token(&text.get());
        text.set(String::new());
        a.refused.set(None);
        a.forgot.set(false);
        a.prompt.set(false);
        a.needed.set(None);
        a.epoch.update(|e| *e += 1);
    };
    // The load balancer's sign-in is gone, or the console's did not take:
    // said once, with the way out.
    let banner = move || {
        let why = a.needed.get()?;
        if a.looped.get() {
            Some((
                format!("Signing in did not take: the server still answers {why}."),
                sign_in_href(&here()),
                "Sign in again",
            ))
        } else if mode.get() == Some(AuthMode::Alb) {
            Some((
                format!(
                    "The load balancer no longer vouches for you ({why}): reload the page to sign in again."
                ),
                here(),
                "Reload",
            ))
        } else {
            None
        }
    };
    view! {
        <Show when=move || a.prompt.get()>
            <div class="modal" role="dialog" aria-modal="true" aria-labelledby="token-title">
                <form class="panel" on:submit=save>
                    <h2 id="token-title">"This server needs a token"</h2>
                    {move || a.refused.get().map(|why| view! {
                        <p class="error" role="alert" id="token-refused">
                            {format!("The server refused the token you gave ({why}). Check it and enter it again.")}
                        </p>
                    })}
                    <p>"Reading and changing endpoints need a bearer token this server knows (yours, or its token file's). It is kept for this tab only."</p>
                    <label for="token-input">"Token"</label>
                    <input id="token-input" type="password" autocomplete="off" autofocus
                        prop:value=move || text.get() on:input=move |ev| text.set(event_target_value(&ev))/>
                    <div class="row">
                        <button type="submit" class="primary">"Save token"</button>
                        <button type="button" on:click=move |_| a.prompt.set(false)>"Cancel"</button>
                    </div>
                </form>
            </div>
        </Show>
        {move || banner().map(|(text, href, link)| {
            let go = href.clone();
            view! {
                <p class="banner error" role="alert">{text}" "
                    <a href=href on:click=move |ev: leptos::ev::MouseEvent| {
                        ev.prevent_default();
                        a.leave_for(&go);
                    }>{link}</a>
                </p>
            }
        })}
    }
}
