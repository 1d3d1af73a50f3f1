//! Apply: a reviewed change sent with the version it was computed from,
//! and what the answer does to the page. Done, the review closes on the
//! record as written; outdated (412), the review offers to redo it on the
//! current record; refused, the review closes and the form or the page
//! says why. A change a 401 stopped goes again once the user gives a token.

use gco_spec::Diagnostic;
use leptos::prelude::*;

use super::EndpointCtx;
use super::review::{Outdated, Pending, return_focus};
use crate::api::{self, Reply};

/// What became of a change sent.
#[derive(Clone, Debug, PartialEq)]
pub enum Applied {
    /// Done: the review's title.
    Done(String),
    /// Not applied, in the page's words (or the server's).
    Failed(String),
    /// Not applied until the user gives a token (401): the server's words.
    NeedsToken(String),
    /// The server refused it at a field of the form it came from.
    Refused(&'static str, Diagnostic),
    /// The endpoint changed since the review (412): the review says so.
    Outdated,
}

impl Applied {
    fn of(p: &Pending, answer: &Result<Reply, String>) -> Applied {
        let r = match answer {
            Ok(r) => r,
            Err(e) => return Applied::Failed(e.clone()),
        };
        match r.status {
            _ if r.ok() => Applied::Done(p.title.clone()),
            412 => Applied::Outdated,
            401 => Applied::NeedsToken(r.summary()),
            // The role it needs, in the server's words.
            403 => Applied::Failed(format!("Not applied: {}", r.summary())),
            _ => match r.diagnostics().into_iter().next() {
                Some(d) => Applied::Refused(p.form, d),
                None => Applied::Failed(r.summary()),
            },
        }
    }

    /// What the page says of it above the review: (done, text).
    pub fn outcome(&self) -> Option<(bool, String)> {
        match self {
            Applied::Done(title) => Some((true, format!("{title}: done."))),
            Applied::Failed(text) => Some((false, text.clone())),
            Applied::NeedsToken(why) => Some((
                false,
                format!("Not applied: {why}. Saving the token sends the change again."),
            )),
            Applied::Refused(..) | Applied::Outdated => None,
        }
    }
}

/// The page's Apply: the change sent last and the server's answer.
#[derive(Clone, Copy)]
pub struct Apply {
    /// Sends the change in `sent` to the endpoint it is given.
    action: Action<String, Result<Reply, String>>,
    pub busy: Memo<bool>,
    /// The change sent last.
    sent: RwSignal<Option<Pending>>,
}

impl Apply {
    /// For the endpoint's page, whose context the answers move on.
    pub fn new() -> Apply {
        let sent = RwSignal::new(None::<Pending>);
        let action = Action::new_local(move |name: &String| {
            let change =
                sent.with_untracked(|p| p.as_ref().map(|p| (p.act.request(name), p.etag.clone())));
            async move {
                let (request, etag) = change.ok_or("no change under review")?;
                let answer = api::send(&request, etag.as_deref()).await;
                // The page may be gone by now.
                if let Some(ctx) = use_context::<EndpointCtx>().filter(|c| !c.pending.is_disposed())
                {
                    move_on(&ctx, &answer);
                }
                answer
            }
        });
        Apply {
            action,
            busy: action.pending(),
            sent,
        }
    }

    /// Sends change `p` to endpoint `name`.
    pub fn send(self, name: String, p: Pending) {
        self.sent.set(Some(p));
        self.action.dispatch(name);
    }

    /// Forgets the last answer (a new review opens).
    pub fn clear(self) {
        self.action.clear();
    }

    /// What became of the change sent last, once its answer is in.
    pub fn applied(self) -> Option<Applied> {
        if self.busy.get() {
            return None;
        }
        self.action.value().with(|answer| {
            self.sent
                .with(|p| Some(Applied::of(p.as_ref()?, answer.as_ref()?)))
        })
    }
}

fn move_on(ctx: &EndpointCtx, answer: &Result<Reply, String>) {
    let Ok(r) = answer else { return };
    match r.status {
        _ if r.ok() => {
            ctx.pending.set(None);
            ctx.editing.set(false);
            // The notice of a change elsewhere was about the review the
            // outcome now replaces.
            ctx.changed_elsewhere.set(false);
            return_focus("#outcome");
            if let Some(w) = ctx.watcher.get_value() {
                w.seen(r.etag.clone());
            }
            ctx.take(r.clone());
        }
        412 => {
            ctx.pending.update(|open| {
                if let Some(open) = open {
                    open.stale = Some(Outdated::Refused);
                }
            });
            // What refused it, on the page and in the review's "Now".
            if let Some(w) = ctx.watcher.get_value() {
                w.refresh();
            }
        }
        // The prompt asks; the review stays for the change to go again.
        401 => {}
        // The roles held may have changed since the page asked.
        403 => {
            ctx.pending.set(None);
            crate::team::Session::get().ask_again();
            return_focus("#outcome");
        }
        status => {
            ctx.pending.set(None);
            // A conflict (a region change that lost to another change,
            // say) is about a record newer than the one on screen.
            if status == 409
                && let Some(w) = ctx.watcher.get_value()
            {
                w.refresh();
            }
        }
    }
}

/// Sends again, once the user gives a token, the change a 401 stopped,
/// while its review is open.
pub fn retry_after_sign_in(ctx: EndpointCtx) {
    Effect::new(move |first: Option<()>| {
        crate::auth::epoch();
        let stopped = untrack(|| matches!(ctx.apply.applied(), Some(Applied::NeedsToken(_))));
        if first.is_some()
            && stopped
            && let Some(p) = ctx.pending.get_untracked()
        {
            ctx.apply.send(ctx.name.get_value(), p);
        }
    });
}

#[cfg(test)]
mod tests {
    use gco_spec::Change;
    use gco_spec::json::parse;

    use super::super::review::Act;
    use super::*;

    fn answer(status: u16, body: &str) -> Result<Reply, String> {
        Ok(Reply {
            status,
            etag: None,
            body: parse(body).unwrap(),
            unreadable: None,
        })
    }

    #[test]
    fn each_answer_says_what_became_of_the_change() {
        let p = Pending {
            form: "lifecycle",
            title: "stop".into(),
            act: Act::Change(Change::Stop),
            lines: Vec::new(),
            notes: Vec::new(),
            etag: Some("\"v1\"".into()),
            stale: None,
            reloading: false,
        };
        let of = |status, body| Applied::of(&p, &answer(status, body));
        assert_eq!(of(200, "{}"), Applied::Done("stop".into()));
        assert_eq!(of(412, "{}"), Applied::Outdated);
        assert_eq!(
            of(401, r#"{"error": "no token"}"#),
            Applied::NeedsToken("no token".into())
        );
        assert_eq!(
            of(403, r#"{"error": "needs operator"}"#).outcome(),
            Some((false, "Not applied: needs operator".into()))
        );
        // The server's first diagnostic goes to the form's field.
        assert!(matches!(
            of(422, r#"{"error": "bad", "errors": [{"path": "replicas", "message": "too many"}]}"#),
            Applied::Refused("lifecycle", d) if d.path == "replicas" && d.message == "too many"
        ));
        assert_eq!(
            of(409, r#"{"error": "conflict"}"#),
            Applied::Failed("conflict".into())
        );
        assert_eq!(
            Applied::of(&p, &Err("offline".into())).outcome(),
            Some((false, "offline".into()))
        );
        assert_eq!(of(200, "{}").outcome(), Some((true, "stop: done.".into())));
        assert_eq!(of(412, "{}").outcome(), None);
    }
}
