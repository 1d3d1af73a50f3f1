//! A list the API answers a page at a time (`{"items": [...], "next":
//! cursor}`), read by a task into signals (an Action per list type costs
//! the console more): the History tab's and the audit view's.

use gco_spec::json::Value;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;

/// A page's items and the cursor of the next, read from an answer's body.
pub type PageOf<T> = fn(&Value) -> Result<(Vec<T>, Option<String>), String>;

/// What has been read of the list, and how the reading goes.
pub struct Pages<T: Send + Sync + 'static> {
    pub items: RwSignal<Vec<T>>,
    /// The cursor of the page after the last one read.
    pub next: RwSignal<Option<String>>,
    /// Why the last read failed (the server's words).
    pub error: RwSignal<Option<String>>,
    /// Whether a first page has been answered.
    pub read: RwSignal<bool>,
    pub busy: RwSignal<bool>,
}

impl<T: Send + Sync + 'static> Clone for Pages<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Send + Sync + 'static> Copy for Pages<T> {}

impl<T: Send + Sync + 'static> Pages<T> {
    pub fn new() -> Pages<T> {
        Pages {
            items: RwSignal::new(Vec::new()),
            next: RwSignal::new(None),
            error: RwSignal::new(None),
            read: RwSignal::new(false),
            busy: RwSignal::new(false),
        }
    }

    /// Reads `url`, the page after cursor `after` (the first page
    /// without, which replaces the list); an older page goes only onto the
    /// list it continues.
    pub fn fetch(self, url: String, after: Option<String>, page_of: PageOf<T>) {
        self.busy.set(true);
        spawn_local(async move {
            let page = api::get(&url).await.and_then(|r| {
                if r.ok() {
                    page_of(&r.body)
                } else {
                    Err(r.summary())
                }
            });
            let _ = self.busy.try_set(false);
            let _ = self.read.try_set(true);
            match page {
                Ok((items, more)) if after.is_none() || self.next.get_untracked() == after => {
                    let _ = self.error.try_set(None);
                    let _ = self.next.try_set(more);
                    let _ = self.items.try_update(|e| {
                        if after.is_none() {
                            e.clear();
                        }
                        e.extend(items);
                    });
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = self.error.try_set(Some(e));
                }
            }
        });
    }
}
