//! While a new endpoint's name is typed, whether an endpoint of that name
//! exists (`GET /api/endpoints/{name}`, a moment after the last keystroke):
//! the editor says so at the name at once, with the words a deploy of it
//! would get, rather than after Deploy.

use gco_api::route;
use gco_spec::json::Value;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::state::Editor;
use crate::{api, paths};

/// How long typing pauses before the name is asked about.
const PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// Follows the name in `ed`, keeping `ed.taken` to what the server says.
pub fn follow(ed: Editor) {
    let asked = StoredValue::new(0u32);
    Effect::new(move |_| {
        let name = ed.state.with(|s| {
            paths::get(s, &["endpoint_name"])
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        let ticket = asked.get_value() + 1;
        asked.set_value(ticket);
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return;
        };
        set_timeout(
            move || {
                if asked.try_get_value() != Some(ticket) {
                    return;
                }
                spawn_local(async move {
                    let path = route::fill(route::ENDPOINT, &[(route::NAME_PARAMETER, &name)]);
                    let Ok(reply) = api::get(&path).await else {
                        return;
                    };
                    // A later keystroke asks again; only the latest answers.
                    if asked.try_get_value() != Some(ticket) {
                        return;
                    }
                    match reply.status {
                        200 => {
                            let _ = ed.taken.try_set(Some(name));
                        }
                        404 => {
                            let _ = ed.taken.try_set(None);
                        }
                        _ => {}
                    }
                });
            },
            PAUSE,
        );
    });
}
