//! The GCO console: a Leptos (client-side rendered) app over `gco-spec`.

mod api;
mod audit;
mod auth;
mod browser;
mod editor;
mod endpoint;
mod identity;
mod list;
mod live;
mod pages;
mod paths;
mod preview;
mod region_state;
mod route;
mod settings;
mod share;
mod team;
mod time;
mod topology;

use leptos::prelude::*;

use route::{Link, Page, Router};

/// "New endpoint": from elsewhere it opens the editor (and this tab's
/// draft, if any); on the editor with a draft, it asks before discarding it.
/// Not offered to a user whose role may not deploy (the editor stays at
/// its address, to check and preview a request).
#[component]
fn NewEndpointLink() -> impl IntoView {
    let router = Router::get();
    let session = team::Session::get();
    view! {
        <a href=Page::New.href() hidden=move || !session.may(gco_api::Role::Operator) on:click=move |ev: leptos::ev::MouseEvent| {
            if ev.ctrl_key() || ev.meta_key() || ev.shift_key() {
                return;
            }
            ev.prevent_default();
            if router.is_on(&Page::New) && editor::has_draft() {
                let sure = window()
                    .confirm_with_message("Start a new endpoint? This discards the draft you are editing.")
                    .unwrap_or(false);
                if !sure {
                    return;
                }
                editor::discard_draft();
            }
            router.navigate(Page::New);
        }>"New endpoint"</a>
    }
}

#[component]
fn App() -> impl IntoView {
    time::provide_clock();
    let router = Router::provide();
    // The sign-in state first: the settings and the session follow it.
    auth::install();
    provide_context(settings::Settings::load());
    provide_context(team::Session::load());
    view! {
        <a class="skip" href="#main">"Skip to content"</a>
        <header class="top">
            <nav aria-label="Main">
                <Link to=Page::List><strong>"GCO console"</strong></Link>
                <Link to=Page::List>"Endpoints"</Link>
                <NewEndpointLink/>
                <Link to=Page::Audit>"History"</Link>
                <span class="identity"><team::WhoAmI/></span>
            </nav>
        </header>
        <team::Unrecorded/>
        <main id="main">
            <identity::Identity/>
            <team::SessionEnding/>
            {move || match router.page() {
                Page::List => view! { <list::ListPage/> }.into_any(),
                Page::New => view! { <editor::EditorPage/> }.into_any(),
                Page::Endpoint(name) => view! { <endpoint::EndpointPage name=name/> }.into_any(),
                Page::Audit => view! { <audit::AuditPage/> }.into_any(),
                Page::NotFound(path) => view! {
                    <div class="not-found">
                        <h1>"Page not found"</h1>
                        <p>"The console has no page at "<code>{path}</code>". "<Link to=Page::List>"All endpoints"</Link>" · "<Link to=Page::New>"New endpoint"</Link></p>
                    </div>
                }.into_any(),
            }}
        </main>
    }
}

fn main() {
    mount_to_body(App);
}
