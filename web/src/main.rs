//! The GCO console: a Leptos (client-side rendered) app over `gco-spec`.

mod api;
mod auth;
mod editor;
mod endpoint;
mod list;
mod live;
mod paths;
mod preview;
mod route;
mod share;
mod topology;

use leptos::prelude::*;

use route::{Link, Page, page_signal};

#[component]
fn App() -> impl IntoView {
    let page = page_signal();
    view! {
        <a class="skip" href="#main">"Skip to content"</a>
        <header class="top">
            <nav aria-label="Main">
                <Link to=Page::List><strong>"GCO console"</strong></Link>
                <Link to=Page::List>"Endpoints"</Link>
                <Link to=Page::New>"New endpoint"</Link>
            </nav>
        </header>
        <main id="main">
            {move || match page.get() {
                Page::List => view! { <list::ListPage/> }.into_any(),
                Page::New => view! { <editor::EditorPage/> }.into_any(),
                Page::Endpoint(name) => view! { <endpoint::EndpointPage name=name/> }.into_any(),
            }}
        </main>
        <auth::TokenPrompt/>
    }
}

fn main() {
    mount_to_body(App);
}
