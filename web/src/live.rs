//! Keeping an open page current: a conditional GET every few seconds
//! (`If-None-Match` with the last `ETag`, so an unchanged resource costs
//! the server a 304 and no body), one request at a time, none while the tab
//! is hidden, and one at once when it shows again. GCO's monitors write a
//! region's status about every 15 s, so a write shows within one interval.

use std::rc::Rc;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::{self, Condition, Reply};
use crate::auth::Auth;
use crate::time::Time;

/// Between two requests of one page: within the 5 s a monitor's write must
/// take to show, and above the 2 s a page may ask at most once in.
pub const INTERVAL: Duration = Duration::from_secs(3);

struct State {
    url: Box<dyn Fn() -> String>,
    changed: Rc<dyn Fn(Result<Reply, String>)>,
    /// The URL the version below belongs to.
    last_url: String,
    etag: Option<String>,
    /// When the request under way was sent (ms), if one is.
    in_flight: Option<f64>,
}

/// What a page holds of the resource it keeps current.
#[derive(Clone, Debug, PartialEq)]
pub enum Load<T> {
    Loading,
    /// No such resource (404): an endpoint that never was, or was purged.
    Missing,
    Failed(String),
    Ready(T),
}

impl<T> Load<T> {
    pub fn ready(&self) -> Option<&T> {
        match self {
            Load::Ready(t) => Some(t),
            _ => None,
        }
    }
}

/// A resource the page keeps current; it stops with the page.
#[derive(Clone, Copy)]
pub struct Watcher {
    state: StoredValue<State, LocalStorage>,
    /// Why the server cannot be reached (no answer, a network error, a 5xx),
    /// until it answers again.
    pub lost: RwSignal<Option<String>>,
    /// The server cannot read the endpoints table (since when, and when
    /// the copy it answers from was read), until an answer says otherwise.
    pub unreadable: RwSignal<Option<gco_api::StoreUnreadable>>,
    /// When the last answer the table's state did not mark came (a GCO
    /// timestamp): what the page shows is as read then, at the latest.
    read_at: RwSignal<Option<String>>,
    auth: Auth,
}

/// Between two requests while the server cannot read the endpoints table:
/// it tries the table again every second, and the page shows its return
/// within a second or two of it.
const WHILE_UNREADABLE: Duration = Duration::from_secs(1);

impl Watcher {
    /// Watches `url` (read at each request, so a page whose filters change
    /// is followed, its version then forgotten), calling `changed` with the
    /// first answer and each one that differs from the last (every 200, and
    /// errors). Asks at once, then every [`INTERVAL`].
    pub fn new(
        url: impl Fn() -> String + 'static,
        changed: impl Fn(Result<Reply, String>) + 'static,
    ) -> Watcher {
        let watcher = Watcher {
            state: StoredValue::new_local(State {
                url: Box::new(url),
                changed: Rc::new(changed),
                last_url: String::new(),
                etag: None,
                in_flight: None,
            }),
            lost: RwSignal::new(None),
            unreadable: RwSignal::new(None),
            read_at: RwSignal::new(None),
            auth: Auth::get(),
        };
        let every = set_interval_with_handle(move || watcher.poll(), INTERVAL).ok();
        let visible = window_event_listener(leptos::ev::visibilitychange, move |_| {
            if !document().hidden() {
                watcher.poll();
            }
        });
        // Asks again at once when the user signs in.
        Effect::new(move |first: Option<()>| {
            watcher.auth.epoch.get();
            if first.is_some() {
                watcher.refresh();
            }
        });
        on_cleanup(move || {
            if let Some(handle) = every {
                handle.clear();
            }
            visible.remove();
        });
        watcher.poll();
        watcher
    }

    /// Asks now, unless a request is under way or the tab is hidden.
    pub fn poll(self) {
        // A request that hangs is an outage too.
        let sent = self.state.try_with_value(|s| s.in_flight).flatten();
        if let Some(sent) = sent {
            let waited = (js_sys::Date::now() - sent) / 1000.0;
            if waited >= INTERVAL.as_secs_f64() {
                let _ = self
                    .lost
                    .try_set(Some(format!("no answer for {} s", waited as i64)));
            }
        }
        let Some((url, etag)) = self
            .state
            .try_update_value(|s| {
                // Without an identity every request is a 401: none until
                // the user gives one (then `epoch` asks at once).
                if s.in_flight.is_some() || document().hidden() || self.auth.waiting() {
                    return None;
                }
                let url = (s.url)();
                if s.last_url != url {
                    s.etag = None;
                    s.last_url = url.clone();
                }
                s.in_flight = Some(js_sys::Date::now());
                Some((url, s.etag.clone()))
            })
            .flatten()
        else {
            return;
        };
        spawn_local(async move {
            let condition = etag
                .as_deref()
                .map_or(Condition::None, Condition::IfNoneMatch);
            let reply = api::call(api::Method::GET, &url, None, condition).await;
            // A server that says it cannot read the table answered: the
            // connection is fine.
            let lost = match &reply {
                Err(e) => Some(e.clone()),
                Ok(r) if r.status >= 500 && r.unreadable.is_none() => Some(r.summary()),
                Ok(_) => None,
            };
            let _ = self.lost.try_set(lost);
            if let Ok(r) = &reply {
                let unreadable = r.unreadable.clone();
                if unreadable.is_some() {
                    set_timeout(move || self.poll(), WHILE_UNREADABLE);
                } else if r.status < 500 {
                    let now = (js_sys::Date::now() * 1000.0) as i64;
                    let _ = self
                        .read_at
                        .try_set(Some(gco_spec::time::format_timestamp(now)));
                }
                if r.status < 500 || unreadable.is_some() {
                    let _ = self.unreadable.try_set(unreadable);
                }
            }
            // `changed` runs outside the stored state: it may call back.
            let changed = self.state.try_update_value(|s| {
                s.in_flight = None;
                match &reply {
                    Ok(r) if r.unchanged() => None,
                    Ok(r) => {
                        s.etag = r.etag.clone().filter(|_| r.ok());
                        Some(Rc::clone(&s.changed))
                    }
                    Err(_) => Some(Rc::clone(&s.changed)),
                }
            });
            if let Some(Some(changed)) = changed {
                changed(reply);
            }
        });
    }

    /// The page got the resource at version `etag` another way (the answer
    /// to its own change): the next request asks past that version.
    pub fn seen(self, etag: Option<String>) {
        self.state.update_value(|s| s.etag = etag);
    }

    /// Forgets the version and asks now.
    pub fn refresh(self) {
        self.state.update_value(|s| s.etag = None);
        self.poll();
    }
}

/// The notice a page shows while its server cannot be reached: within one
/// interval of the outage, gone with the first answer.
#[component]
pub fn ConnectionNotice(watcher: Watcher) -> impl IntoView {
    move || {
        watcher.lost.get().map(|why| {
            view! {
                <p class="banner error connection-lost" role="alert">
                    {format!("Connection lost, retrying every {} s: {why}. What this page shows may be out of date.", INTERVAL.as_secs())}
                </p>
            }
        })
    }
}

/// The notice a page shows while the server answers from its last copy of
/// the endpoints table: since when the table cannot be read, and how old
/// what the page shows is. Not the monitors' fault, nor the connection's.
#[component]
pub fn StoreNotice(watcher: Watcher) -> impl IntoView {
    move || {
        watcher.unreadable.get().map(|u| {
            // The copy's read, or, with none, this page's last answer.
            let read = u.read.or_else(|| watcher.read_at.get_untracked()).unwrap_or_default();
            view! {
                <p class="banner error store-unreadable" role="alert">
                    "The endpoint store cannot be read since "<Time iso=u.since/>
                    ": this page shows the endpoint as it was read at "<Time iso=read/>
                    ". The console tries the store again every second; changes cannot be applied until it answers."
                </p>
            }
        })
    }
}
