//! Deploy: the request sent as it stands, and the server's answer, which
//! opens the new endpoint's page or says why not, above the form and at
//! the fields.

use gco_api::Role;
use gco_spec::Diagnostic;
use gco_spec::json::Value;
use leptos::prelude::*;

use super::draft;
use super::state::Editor;
use crate::api::{Condition, Method, Reply};
use crate::route::{Page, Router};
use crate::share;

/// What the Deploy buttons do, as a role's refusal names it.
pub const DEPLOYING: &str = "Deploying";

/// The page's Deploy: what its buttons and Ctrl+Enter start, and its
/// answer.
#[derive(Clone, Copy)]
pub struct Deploy {
    action: Action<Value, Result<Reply, String>>,
    busy: Memo<bool>,
    /// The request sent last (the action forgets its input once answered).
    sent: StoredValue<Value>,
    /// Why the user may not deploy (their role), if so.
    pub refused: Memo<Option<String>>,
    /// The user tried to deploy and may not: said until the next try.
    held: RwSignal<bool>,
}

impl Deploy {
    /// Once deployed, the draft ends and the endpoint's page opens, with
    /// the focus on its title.
    pub fn new(router: Router) -> Deploy {
        let action = Action::new_local(move |request: &Value| {
            let request = request.clone();
            async move {
                let answer = crate::api::call(
                    Method::POST,
                    gco_api::route::ENDPOINTS,
                    Some(&request),
                    Condition::None,
                )
                .await;
                if let Ok(r) = &answer
                    && r.ok()
                {
                    draft::clear();
                    share::set_fragment("");
                    let name =
                        crate::paths::display(crate::paths::get(&r.body, &["endpoint_name"]));
                    router.navigate(Page::Endpoint(name));
                    request_animation_frame(|| crate::browser::focus("#endpoint-title"));
                }
                answer
            }
        });
        let session = crate::team::Session::get();
        Deploy {
            action,
            busy: action.pending(),
            sent: StoredValue::new(Value::Null),
            refused: Memo::new(move |_| session.refusal(DEPLOYING, Role::Operator)),
            held: RwSignal::new(false),
        }
    }

    /// Deploys `ed`'s state, unless it has errors, a deploy is under way,
    /// or the user's role may not (then the page says why).
    pub fn start(self, ed: Editor) {
        if ed.has_errors() || self.busy.get_untracked() {
            return;
        }
        let held = self.refused.with_untracked(Option::is_some);
        self.held.set(held);
        if held {
            self.action.clear();
            return;
        }
        let request = ed.state.get_untracked();
        self.sent.set_value(request.clone());
        self.action.dispatch(request);
    }

    /// Whether the buttons are off: errors, or a deploy under way.
    pub fn disabled(self, ed: Editor) -> bool {
        ed.has_errors() || self.busy.get()
    }

    /// The server's diagnostics of `request`: its answer's, when it is the
    /// request sent last.
    pub fn diagnostics_of(self, request: &Value) -> Vec<Diagnostic> {
        self.action.value().with(|answer| match answer {
            Some(Ok(r)) if self.sent.with_value(|sent| sent == request) => r.diagnostics(),
            _ => Vec::new(),
        })
    }

    /// A deploy a 401 stopped goes again once the user gives a token.
    pub fn retry_after_sign_in(self, ed: Editor) {
        Effect::new(move |first: Option<()>| {
            crate::auth::epoch();
            let stopped = self
                .action
                .value()
                .with_untracked(|a| matches!(a, Some(Ok(r)) if r.status == 401));
            if first.is_some() && stopped {
                self.start(ed);
            }
        });
    }

    /// Why the endpoint was not deployed, in words, once the answer is in.
    fn refusal(self) -> Option<String> {
        if self.busy.get() {
            return None;
        }
        if self.held.get() {
            return self.refused.get();
        }
        self.action.value().with(|answer| match answer.as_ref()? {
            Ok(r) if r.ok() => None,
            Ok(r) if r.status == 401 => Some(format!(
                "Not deployed: {}. Saving the token deploys again.",
                r.summary()
            )),
            Ok(r) => Some(format!("Not deployed: {}", r.summary())),
            Err(e) => Some(format!("Not deployed: {e}")),
        })
    }
}

/// The deploy under way, or why the last try did not deploy.
#[component]
pub fn DeployAnswer(deploy: Deploy) -> impl IntoView {
    view! {
        {move || deploy.refusal().map(|r| view! { <p class="banner error" role="alert">{r}</p> })}
        <Show when=move || deploy.busy.get()>
            <p class="banner" role="status">"Deploying…"</p>
        </Show>
    }
}
