//! The editor's state in the address: where the editor starts (a link
//! opened on purpose, this tab's draft, or nothing), the share link that
//! follows the edits after a pause, and Copy link.

use gco_spec::json::Value;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::draft;
use super::state::Editor;
use crate::share;

/// How long edits wait before the URL follows them.
const LINK_THROTTLE: std::time::Duration = std::time::Duration::from_millis(400);

/// Where the editor starts: a link opened on purpose, else this tab's
/// draft (the link in the URL may be an older copy of it, written before
/// the user left), else an empty request.
enum Start {
    Link(String),
    Draft(Value),
    Empty,
}

fn start() -> Start {
    let fragment = share::current_fragment();
    let link = fragment.starts_with(share::PREFIX);
    match draft::load() {
        Some(d) if !link || draft::is_own_fragment(&fragment) => Start::Draft(d),
        _ if link => Start::Link(fragment),
        _ => Start::Empty,
    }
}

/// Puts the editor's starting state in `ed`: a restored draft says so in
/// `restored`, a link that cannot be opened in `banner`. The answer turns
/// true once the state is there (a link is read asynchronously).
pub fn open(
    ed: Editor,
    banner: RwSignal<Option<String>>,
    restored: RwSignal<Option<String>>,
) -> RwSignal<bool> {
    let ready = RwSignal::new(false);
    match start() {
        Start::Link(fragment) => spawn_local(async move {
            match share::decode(&fragment).await {
                Ok(v) => ed.replace(gco_spec::deploy::block_as_fields(v)),
                Err(e) => {
                    let _ = banner.try_set(Some(format!(
                        "This link could not be opened: {e}. The editor starts empty."
                    )));
                    share::set_fragment("");
                }
            }
            let _ = ready.try_set(true);
        }),
        Start::Draft(d) => {
            ed.replace(gco_spec::deploy::block_as_fields(d));
            restored.set(Some(draft::take_origin().unwrap_or_else(|| {
                "Restored the draft you were editing in this tab.".to_owned()
            })));
            ready.set(true);
        }
        Start::Empty => ready.set(true),
    }
    ready
}

/// The draft follows every edit at once; the link, once the state is
/// `ready`, after a pause. When the link cannot hold the state, `status`
/// says so.
pub fn follow(ed: Editor, ready: RwSignal<bool>, status: RwSignal<Option<String>>) {
    Effect::new(move |_| ed.state.with(draft::save));
    let generation = StoredValue::new(0u32);
    let router = crate::route::Router::get();
    Effect::new(move |_| {
        let state = ed.state.get();
        if !ready.get() {
            return;
        }
        generation.update_value(|g| *g += 1);
        let mine = generation.get_value();
        // Whether this state is still the one to follow: the editor may be
        // gone by now (Deploy opens the endpoint's page, before or while
        // the state is encoded), and its link must not land on that page.
        let current = move || {
            generation.try_get_value() == Some(mine) && router.is_on(&crate::route::Page::New)
        };
        set_timeout(
            move || {
                if !current() {
                    return;
                }
                spawn_local(async move {
                    if draft::is_empty(&state) {
                        share::set_fragment("");
                        return;
                    }
                    let encoded = share::encode(&state).await;
                    if !current() {
                        return;
                    }
                    match encoded {
                        Ok(f) => {
                            share::set_fragment(&f);
                            draft::note_fragment(&f);
                        }
                        // Never leave an older state in the URL: a reload
                        // would bring it back and drop these edits.
                        Err(e) => {
                            share::set_fragment("");
                            let _ = status.try_set(Some(format!(
                                "The address no longer follows the editor: {e}."
                            )));
                        }
                    }
                });
            },
            LINK_THROTTLE,
        );
    });
}

/// Puts the link to the state in the address and on the clipboard.
pub fn copy(ed: Editor, status: RwSignal<Option<String>>) {
    let state = ed.state.get_untracked();
    spawn_local(async move {
        let note = match share::encode(&state).await {
            Ok(f) => {
                share::set_fragment(&f);
                draft::note_fragment(&f);
                let href = window().location().href().unwrap_or_default();
                if crate::browser::copy(&href).await {
                    "Link copied: it holds this editor's state, never a token.".to_owned()
                } else {
                    "The browser did not allow copying; the address bar holds the link.".to_owned()
                }
            }
            Err(e) => e,
        };
        let _ = status.try_set(Some(note));
    });
}
