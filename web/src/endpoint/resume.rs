//! What the user had open on an endpoint's page (the review pending, and
//! the actions' unsent edits) kept across a sign-in round trip: when the
//! session ends under the page, or the user renews it, the browser leaves
//! for the provider and comes back to a new page. Before it leaves, this
//! keeps them in the tab's sessionStorage (as the editor keeps its draft);
//! once the page is back and its record read, it puts them back, reviews
//! the change again on the record as it is now, and says so.

use gco_spec::json::{Object, Value};
use gco_spec::{Change, ChangeKind, Record};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::review::{Act, Pending};
use super::{EndpointCtx, ctx};
use crate::browser::session_storage;

/// Kept this long at most: a sign-in takes a minute, not an hour.
const KEPT_FOR_MS: f64 = 15.0 * 60.0 * 1000.0;

fn key(name: &str) -> String {
    format!("gco-console-open:{name}")
}

/// A core change as JSON: its name in the history and its arguments.
fn change_to_value(change: &Change) -> Value {
    let mut o = Object::new();
    o.insert("change", change.kind().as_str());
    let mut put = |k: &str, v: &Value| o.insert(k, v.clone());
    match change {
        Change::Scale { replicas } => put("replicas", replicas),
        Change::SetTopology { prefill, decode } => {
            put("prefill", prefill);
            put("decode", decode);
        }
        Change::ConfigureStore { store } => put("store", store),
        Change::UpdateImage { image, with_proxy } => {
            put("image", image);
            put("with_proxy", with_proxy);
        }
        Change::AddRegion { region } | Change::RemoveRegion { region } => put("region", region),
        Change::Delete {
            expected_owner_label,
            expected_lifecycle_id,
        } => {
            if let Some((k, v)) = expected_owner_label {
                put("owner_label", &Value::from(format!("{k}={v}")));
            }
            if let Some(id) = expected_lifecycle_id {
                put("lifecycle_id", &Value::str(id));
            }
        }
        Change::CanaryDeploy {
            image,
            weight,
            replicas,
        } => {
            put("image", image);
            if let Some(w) = weight {
                put("weight", w);
            }
            if let Some(r) = replicas {
                put("replicas", r);
            }
        }
        Change::Stop | Change::Start | Change::PromoteCanary | Change::RollbackCanary => {}
    }
    Value::Object(o)
}

/// [`change_to_value`] read back.
fn change_of_value(v: &Value) -> Option<Change> {
    let o = v.as_object()?;
    let arg = |k: &str| o.get(k).cloned();
    let text = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
    Some(match ChangeKind::parse(o.get("change")?.as_str()?)? {
        ChangeKind::Scale => Change::Scale {
            replicas: arg("replicas")?,
        },
        ChangeKind::SetTopology => Change::SetTopology {
            prefill: arg("prefill")?,
            decode: arg("decode")?,
        },
        ChangeKind::ConfigureStore => Change::ConfigureStore {
            store: arg("store")?,
        },
        ChangeKind::UpdateImage => Change::UpdateImage {
            image: arg("image")?,
            with_proxy: arg("with_proxy")?,
        },
        ChangeKind::AddRegion => Change::AddRegion {
            region: arg("region")?,
        },
        ChangeKind::RemoveRegion => Change::RemoveRegion {
            region: arg("region")?,
        },
        ChangeKind::Stop => Change::Stop,
        ChangeKind::Start => Change::Start,
        ChangeKind::Delete => Change::Delete {
            expected_owner_label: text("owner_label").and_then(|l| {
                let (k, v) = l.split_once('=')?;
                Some((k.to_owned(), v.to_owned()))
            }),
            expected_lifecycle_id: text("lifecycle_id"),
        },
        ChangeKind::CanaryDeploy => Change::CanaryDeploy {
            image: arg("image")?,
            weight: arg("weight"),
            replicas: arg("replicas"),
        },
        ChangeKind::PromoteCanary => Change::PromoteCanary,
        ChangeKind::RollbackCanary => Change::RollbackCanary,
    })
}

/// The review pending, as kept: its form, title and act.
fn review_to_value(p: &Pending) -> Value {
    let mut o = Object::new();
    o.insert("form", p.form);
    o.insert("title", p.title.as_str());
    match &p.act {
        Act::Change(change) => o.insert("act", change_to_value(change)),
        Act::Revert { to, after } => {
            o.insert("revert", to.as_str());
            o.insert("after", after.to_value());
        }
    }
    Value::Object(o)
}

/// [`review_to_value`] read back: (form, title, act).
fn review_of_value(v: &Value) -> Option<(String, String, Act)> {
    let o = v.as_object()?;
    let text = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
    let act = match text("revert") {
        Some(to) => Act::Revert {
            to,
            after: Box::new(Record::from_value(o.get("after")?).ok()?),
        },
        None => Act::Change(change_of_value(o.get("act")?)?),
    };
    Some((text("form")?, text("title")?, act))
}

/// The actions' controls of one kind (`input`, `select`) that have an id.
fn controls<T: JsCast>(kind: &str) -> Vec<T> {
    let Ok(found) = document().query_selector_all(&format!(".actions {kind}[id]")) else {
        return Vec::new();
    };
    (0..found.length())
        .filter_map(|i| found.item(i)?.dyn_into::<T>().ok())
        .collect()
}

fn inputs() -> Vec<web_sys::HtmlInputElement> {
    controls("input")
}

fn selects() -> Vec<web_sys::HtmlSelectElement> {
    controls("select")
}

/// What the user has open: the review, and the inputs while edited.
fn open_work(ctx: &EndpointCtx) -> Option<Value> {
    let review = ctx
        .pending
        .with_untracked(|p| p.as_ref().map(review_to_value));
    let mut fields = Object::new();
    if ctx.editing.get_untracked() {
        for input in inputs() {
            let value = if input.type_() == "checkbox" {
                Value::Bool(input.checked())
            } else {
                Value::from(input.value())
            };
            fields.insert(&input.id(), value);
        }
        for select in selects() {
            fields.insert(&select.id(), select.value());
        }
    }
    if review.is_none() && fields.is_empty() {
        return None;
    }
    let mut o = Object::new();
    o.insert("at", Value::from(js_sys::Date::now() as i64));
    if let Some(r) = review {
        o.insert("review", r);
    }
    o.insert("fields", Value::Object(fields));
    Some(Value::Object(o))
}

/// Puts the kept inputs back as if typed (the forms follow their inputs'
/// events): only those that differ from what the page shows.
fn put_back(fields: &Object) -> usize {
    let event = |name: &str| {
        web_sys::Event::new_with_event_init_dict(name, &{
            let init = web_sys::EventInit::new();
            init.set_bubbles(true);
            init
        })
    };
    let mut restored = 0;
    for input in inputs() {
        let Some(kept) = fields.get(&input.id()) else {
            continue;
        };
        let typed = if input.type_() == "checkbox" {
            let Value::Bool(on) = kept else { continue };
            if input.checked() == *on {
                continue;
            }
            input.set_checked(*on);
            "change"
        } else {
            let Some(text) = kept.as_str() else { continue };
            if input.value() == text {
                continue;
            }
            input.set_value(text);
            "input"
        };
        if let Ok(e) = event(typed) {
            let _ = input.dispatch_event(&e);
        }
        restored += 1;
    }
    for select in selects() {
        let Some(kept) = fields.get(&select.id()).and_then(Value::as_str) else {
            continue;
        };
        if select.value() != kept {
            select.set_value(kept);
            if let Ok(e) = event("change") {
                let _ = select.dispatch_event(&e);
            }
            restored += 1;
        }
    }
    restored
}

/// Keeps the page's open work before a sign-in, and puts it back after
/// one; the notice says what came back.
#[component]
pub fn Resume() -> impl IntoView {
    let ctx = ctx();
    let name = ctx.name.get_value();
    let kept_under = key(&name);
    crate::auth::keep_before_leaving(move || {
        let Some(s) = session_storage() else { return };
        let _ = match open_work(&ctx) {
            Some(work) => s.set_item(&kept_under, &work.to_json()),
            None => s.remove_item(&kept_under),
        };
    });
    let kept = session_storage().and_then(|s| {
        let text = s.get_item(&key(&name)).ok()??;
        let _ = s.remove_item(&key(&name));
        gco_spec::json::parse(&text).ok()
    });
    let fresh = kept.filter(|k| {
        crate::paths::get(k, &["at"])
            .and_then(Value::as_int)
            .and_then(|i| i.as_i64())
            .is_some_and(|at| js_sys::Date::now() - (at as f64) < KEPT_FOR_MS)
    });
    let notice = RwSignal::new(None::<String>);
    let pending = StoredValue::new(fresh);
    // Once the record is read (and the forms have followed it), the kept
    // work goes back on it.
    Effect::new(move |_| {
        if ctx.loaded().is_none() || pending.with_value(Option::is_none) {
            return;
        }
        let Some(work) = pending.get_value() else {
            return;
        };
        pending.set_value(None);
        request_animation_frame(move || {
            let fields = crate::paths::get(&work, &["fields"])
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let edits = put_back(&fields);
            if edits > 0 {
                ctx.editing.set(true);
            }
            let review = crate::paths::get(&work, &["review"]).and_then(review_of_value);
            let reviewed = review.as_ref().map(|(_, title, _)| title.clone());
            if let Some((form, title, act)) = review {
                // The review's form names where a refusal shows; one name
                // per restored page, so kept for the page's life.
                let form: &'static str = Box::leak(form.into_boxed_str());
                super::review::open(&ctx, form, &title, act);
            }
            let what = match (edits > 0, reviewed) {
                (true, Some(t)) => {
                    format!("your unsent edits and the review of \u{201c}{t}\u{201d}")
                }
                (false, Some(t)) => format!("the review of \u{201c}{t}\u{201d}"),
                (true, None) => "your unsent edits".to_owned(),
                (false, None) => return,
            };
            notice.set(Some(format!(
                "Restored after signing in again: {what}, as you left them. The review is computed again on the endpoint as it is now."
            )));
        });
    });
    move || {
        notice.get().map(|text| {
            view! {
                <p class="banner" role="status" id="restored-notice">{text}" "
                    <button type="button" class="link-button" on:click=move |_| notice.set(None)>"Dismiss"</button>
                </p>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_reads_back_as_kept() {
        let v = |t: &str| gco_spec::json::parse(t).unwrap();
        for change in [
            Change::Scale { replicas: v("6") },
            Change::SetTopology {
                prefill: v("2"),
                decode: v("\"3\""),
            },
            Change::ConfigureStore {
                store: v(r#"{"enabled": true, "global_segment_size": "4294967296"}"#),
            },
            Change::UpdateImage {
                image: v("\"vllm/vllm-openai:v1\""),
                with_proxy: Value::Bool(true),
            },
            Change::AddRegion {
                region: v("\"eu-west-1\""),
            },
            Change::RemoveRegion {
                region: v("\"us-east-1\""),
            },
            Change::Stop,
            Change::Start,
            Change::Delete {
                expected_owner_label: Some(("team".into(), "a=b".into())),
                expected_lifecycle_id: Some("l-1".into()),
            },
            Change::Delete {
                expected_owner_label: None,
                expected_lifecycle_id: None,
            },
            Change::CanaryDeploy {
                image: v("\"img:2\""),
                weight: Some(v("20")),
                replicas: None,
            },
            Change::PromoteCanary,
            Change::RollbackCanary,
        ] {
            let text = change_to_value(&change).to_json();
            let back = change_of_value(&gco_spec::json::parse(&text).unwrap());
            assert_eq!(back, Some(change), "{text}");
        }
        assert_eq!(change_of_value(&v(r#"{"change": "purge"}"#)), None);
    }
}
